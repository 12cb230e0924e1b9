"""``gradiente.explain(y)``: the backward pass of ``y`` told step by step with the chain rule.

For each node, in the order the engine runs them: the operation, its local derivative as a formula,
the gradient that arrives, and what is passed to each input (for elementwise ops: upstream × local
derivative = gradient passed on); where gradients from several paths meet they are shown being summed;
it ends with each leaf's ``.grad``. The numbers are the engine's own, recorded while it runs (see
``record``), so they equal what ``backward()`` computes to the last bit.

    >>> explain(y)                  # in a notebook: Markdown with LaTeX; print(...) for plain text
    >>> explain(y, lang="es")       # en español

This module is itself callable: ``gradiente.explain(y)`` and ``gradiente.explain.explain(y)`` are the same.
"""
import sys
import types

from ..core.tensor import Tensor
from ..viz.names import Names, caller_frame
from .html import to_html
from .record import GraphFreedError, record_backward
from .render import to_markdown, to_text
from .steps import build_step
from .symbols import expression
from .why_no_grad import Diagnosis, why_no_grad

__all__ = ["Diagnosis", "Explanation", "explain", "record_backward", "why_no_grad"]


def explain(output, gradient=None, *, params=None, lang="en", accumulate=None, retain_graph=None, max_steps=200,
            max_elems=8):
    """Run the backward pass of ``output`` and explain it step by step; returns an ``Explanation``
    (plain text with ``print``/``str``, Markdown and LaTeX in a notebook or with ``.to_markdown()``).

    ``gradient``: as in ``output.backward(gradient)`` (needed when ``output`` is not a scalar).
    ``params``: names for leaves (a dict, a module, or ``named_parameters()`` pairs); leaves it does not
    name are named after the caller's variables. ``lang``: ``"en"`` or ``"es"``.

    ``accumulate``: True runs ``output.backward(gradient)`` itself, filling the leaves' ``.grad`` exactly
    as that call would ("instead of backward()"); False repeats the pass without touching any ``.grad``
    ("after backward()", which needs the graph kept with ``retain_graph=True``, unless no node saved
    anything). None (default) picks False when some leaf of the graph already has a ``.grad``, else True.

    ``max_steps``: longer passes show their first and last steps only; tensors of more than
    ``max_elems`` elements are summarized (shape, mean, min, max).
    """
    return _explain(caller_frame(1), output, gradient, params=params, lang=lang, accumulate=accumulate,
                    retain_graph=retain_graph, max_steps=max_steps, max_elems=max_elems)


def _explain(frame, output, gradient=None, *, params=None, lang="en", accumulate=None, retain_graph=None,
             max_steps=200, max_elems=8):
    from .messages import words
    words(lang)
    if not isinstance(output, Tensor):
        raise TypeError(f"explain() expects a Tensor, got {type(output).__name__}")
    names = _WalkNames(params, frame, output, lang)
    names.remember_constants(output)            # before the pass frees what the nodes saved
    leaves = _leaves(output)
    if accumulate is None:
        accumulate = not any(t.grad is not None for t in leaves)
    if accumulate:
        names.previous_grads = {id(t): t.grad._data.copy() for t in leaves if t.grad is not None}
    head, tail = _window(max_steps)
    try:
        record = record_backward(output, gradient, accumulate=accumulate, retain_graph=retain_graph,
                                 local_derivatives=lambda index, total: index < head or index >= total - tail)
    except GraphFreedError as error:
        raise GraphFreedError(f"{error} {words(lang)['freed']}") from None
    return Explanation(record, names, lang, max_steps, max_elems, gradient is not None)


def _window(max_steps):
    """How many steps to show from the start and from the end of the pass."""
    if max_steps is None:
        return float("inf"), 0
    head = max(max_steps // 2, 1)
    return head, max(max_steps - head, 1)


class Explanation:
    """A recorded backward pass, ready to be read. ``steps``: one ``Step`` per node in the order run
    (built on first use: a 100,000-node pass only builds the steps it shows); ``grads``:
    ``{leaf name: gradient array}``; ``record``: the raw ``BackwardRecord``. Local derivatives are
    computed only for the steps within ``max_steps``."""

    def __init__(self, record, names, lang, max_steps, max_elems, gradient_given):
        self.record = record
        self.names = names
        self.lang = lang
        self.max_steps = max_steps
        self.max_elems = max_elems
        self.gradient_given = gradient_given
        self.output_name = names.output_name
        self._steps = {}
        self._numbers = None
        self.results = [(t, names.leaf(t), record.leaf[id(t)], names.previous_grads.get(id(t)))
                        for t in record.leaves if id(t) in record.leaf]
        self.grads = {name: grad for _, name, grad, _ in self.results}

    @property
    def steps(self):
        return [self.step(i) for i in range(len(self.record.order))]

    def step(self, index):
        """The ``Step`` for the ``index``-th node the engine ran (0-based)."""
        step = self._steps.get(index)
        if step is None:
            step = self._steps[index] = build_step(self.record, index, self.names)
        return step

    def step_number(self, node):
        """The 1-based step at which ``node`` ran, or None."""
        if self._numbers is None:
            self._numbers = {n: i + 1 for i, n in enumerate(self.record.order)}
        return self._numbers.get(node)

    def window(self):
        head, tail = _window(self.max_steps)
        return min(head, len(self.record.order)), tail

    def to_text(self, lang=None):
        return to_text(self, lang or self.lang)

    def to_markdown(self, lang=None):
        return to_markdown(self, lang or self.lang)

    def __str__(self):
        return self.to_text()

    def __repr__(self):
        return self.to_text()

    def _repr_markdown_(self):
        return self.to_markdown()

    def to_html(self, lang=None):
        """The walkthrough as self-contained HTML: a table, the notes, the results and the graph as SVG."""
        return to_html(self, lang or self.lang)

    def _repr_html_(self):
        return self.to_html()


_DEEPEST = 6       # how many ops deep an intermediate's name may spell out its expression
_LONGEST = 40      # and how long it may be


class _WalkNames:
    """Names for the walkthrough: leaves (params, then the caller's variables, then "leaf 1"...), the
    node outputs the caller holds in variables, and the output itself ("y" when unnamed)."""

    def __init__(self, params, frame, output, lang="en"):
        self.lang = lang
        self._names = Names(params, frame, auto=True)
        self._numbered = {}
        self._expressions = {}
        self._constants = {}
        self.output_name = self._names.of_tensor(output) or _find_name(frame, output) or "y"
        self.previous_grads = {}

    def leaf(self, tensor):
        name = self._names.of_tensor(tensor)
        if name:
            return name
        if id(tensor) not in self._numbered:
            self._numbered[id(tensor)] = f"leaf{len(self._numbered) + 1}"
        return self._numbered[id(tensor)]

    def node(self, node):
        return self._names.of_node(node)

    def value(self, node, depth=0):
        """How the value ``node`` feeds forward is called: a leaf's name, a variable the caller holds, or
        the expression that made it; ``c`` for a constant (no node)."""
        if node is None:
            return "c"
        if hasattr(node, "variable"):
            return self.leaf(node.variable)
        return self.node(node) or self.expression(node, depth) or type(node).__name__

    def inputs(self, node, depth=0):
        """The names of ``node``'s inputs, in order; a tensor that needs no gradient (it has no node) is named
        after the caller's variable when the node saved that very tensor (``x`` in ``w * x``), else ``c``."""
        names = [self.value(nxt, depth) for nxt, _ in node.next_functions]
        constant = self._constants.get(node)
        if constant and names.count("c") == 1:
            names[names.index("c")] = constant
        return names

    def remember_constants(self, output):
        """For each node with an input that needs no gradient, the name of the tensor it saved for that
        input, if the caller holds it in a variable (read now: the backward pass frees saved values)."""
        from ..viz.saved import saved_attributes
        from ..viz.walk import reachable
        if output.grad_fn is None:
            return
        for node in reachable([output.grad_fn]):
            if all(nxt is not None for nxt, _ in node.next_functions):
                continue
            try:
                saved = [v for _, v in saved_attributes(node) if isinstance(v, Tensor) and not v.requires_grad]
            except Exception:  # a node whose saved values cannot be read is named without them
                continue
            named = [self._names.of_tensor(v) for v in saved]
            if len(named) == 1 and named[0]:
                self._constants[node] = named[0]

    def expression(self, node, depth=0):
        """The expression ``node`` computes from its inputs' names (``w·x + b``), or None if unknown."""
        if id(node) not in self._expressions:
            if depth > _DEEPEST:                    # a deep graph is named by class, not a page-long formula
                return None
            self._expressions[id(node)] = None      # a guard while the inputs are named
            text = expression(node, self.inputs(node, depth + 1))
            self._expressions[id(node)] = text if text is None or len(text) <= _LONGEST else None
        return self._expressions[id(node)]


def _find_name(frame, tensor):
    for scope in (frame.f_locals, frame.f_globals):
        for name, value in scope.items():
            if value is tensor and not name.startswith("_"):
                return name
    return None


def _leaves(output):
    from ..viz.walk import reachable
    if output.grad_fn is None:
        return [output] if output.requires_grad else []
    return [n.variable for n in reachable([output.grad_fn]) if hasattr(n, "variable")]


class _CallableModule(types.ModuleType):
    """Lets ``gradiente.explain(y)`` call the function even where ``gradiente.explain`` is this module."""

    def __call__(self, *args, **kwargs):
        return _explain(caller_frame(1), *args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
