"""Names for the tensors of a graph: given by the user (``params``), taken from a module's
``named_parameters()``, or found among the caller's variables.

``Names.tensors`` maps ``id(tensor)`` to a name (torchviz's ``params`` mapping); ``Names.nodes`` maps a
backward node to the name of a caller's variable whose ``grad_fn`` it is (``z = x + 1`` names the
``AddBackward0``) and ``Names.node_tensors`` to that tensor (its forward value). The tensors are kept
alive while the names are in use, so an id cannot be reused.
"""
import sys
import weakref

from ..core.tensor import Tensor

__all__ = ["Names", "caller_frame", "named_tensors", "remembered_name"]


def named_tensors(params):
    """``params`` as ``[(name, tensor), ...]``: a dict, a module (anything with ``named_parameters``), or
    an iterable of pairs such as ``model.named_parameters()``."""
    if params is None:
        return []
    if hasattr(params, "named_parameters"):
        return list(params.named_parameters())
    if hasattr(params, "items"):
        return list(params.items())
    return list(params)


def caller_frame(depth):
    """The frame ``depth`` calls above the caller of this function (1 = the caller's caller)."""
    return sys._getframe(depth + 1)


#: names once given through ``params=`` (to ``make_dot``, ``to_text`` or ``explain``), by ``id(tensor)``: a later
#: drawing or walkthrough of the same tensors names them the same way without being told again. Weak, so a
#: name never keeps a tensor alive, and forgotten with its tensor (before its id can be reused).
_remembered = {}


def _remember(name, tensor):
    key = id(tensor)
    _remembered[key] = (name, weakref.ref(tensor, lambda _, key=key: _remembered.pop(key, None)))


def remembered_name(tensor):
    """The name last given to ``tensor`` through ``params=``, or None."""
    entry = _remembered.get(id(tensor))
    return entry[0] if entry is not None and entry[1]() is tensor else None


class Names:
    """Names from ``params``; with a ``frame``, the values of the caller's non-leaf tensors, and with
    ``auto=True`` also names from the caller's variables wherever ``params`` gives none."""

    def __init__(self, params=None, frame=None, auto=False):
        self._alive = []
        self.tensors = {}
        self.nodes = {}
        self.node_tensors = {}
        for name, tensor in named_tensors(params):
            if not isinstance(tensor, Tensor):
                raise TypeError(f"params must map names to Tensors; {name!r} is a {type(tensor).__name__}")
            self._add_tensor(name, tensor)
            _remember(name, tensor)
        if frame is not None:
            for name, value in _visible_variables(frame):
                if isinstance(value, Tensor):
                    if value.grad_fn is None:
                        if auto:
                            self._add_tensor(name, value, overwrite=False)
                    elif value.grad_fn not in self.node_tensors:
                        self.node_tensors[value.grad_fn] = value
                        if auto:
                            self.nodes[value.grad_fn] = name
                            self._add_tensor(name, value, overwrite=False)
                elif auto and hasattr(value, "named_parameters") and callable(value.named_parameters):
                    try:
                        pairs = list(value.named_parameters())
                    except TypeError:   # a class, not a module instance: named_parameters needs self
                        pairs = []
                    for sub, tensor in pairs:
                        if isinstance(tensor, Tensor):
                            self._add_tensor(f"{name}.{sub}", tensor, overwrite=False)

    def _add_tensor(self, name, tensor, overwrite=True):
        if overwrite or id(tensor) not in self.tensors:
            # a name the user gave once (``params=``) wins over one guessed from a variable
            self.tensors[id(tensor)] = name if overwrite else remembered_name(tensor) or name
            self._alive.append(tensor)

    def of_tensor(self, tensor, default=""):
        name = self.tensors.get(id(tensor))
        if name is None:
            name = remembered_name(tensor)
        return default if name is None else name

    def of_node(self, node, default=None):
        return self.nodes.get(node, default)


def _visible_variables(frame):
    """The caller's local variables, then its globals (a notebook's variables are globals), skipping
    private names; the first binding of a tensor wins."""
    seen = set()
    for scope in (frame.f_locals, frame.f_globals if frame.f_globals is not frame.f_locals else {}):
        for name, value in list(scope.items()):
            if name.startswith("_") or name in seen:
                continue
            seen.add(name)
            yield name, value
