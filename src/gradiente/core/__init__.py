"""The core, the lowest floor: what a tensor is and how its history is recorded and walked backward.

``dtype``/``size``/``tensor`` (the data model, ``printing`` its repr, ``creation`` and ``random`` how tensors are
made), ``node`` (backward nodes, saved values, hooks), ``grad_mode`` (no_grad and friends), ``record`` (how an
op enters the graph), ``inplace`` (in-place changes and views), ``engine`` (the backward walk), ``backward``
(``backward``/``grad``, the ways into it) and ``rules`` (the namespace derivative rules compute with). The core
imports nothing from the floors above (docs/architecture.md).
"""
