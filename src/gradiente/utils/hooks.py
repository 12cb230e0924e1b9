"""``torch.utils.hooks``: ``RemovableHandle``, the handle ``register_*_hook`` returns, and the marks that tell
serialization which tensor hooks are not expected to be saved.

(PyTorch also exports ``BackwardHook`` here, the machinery of module backward hooks; gradiente keeps it beside
``nn.Module``, in ``nn/modules/_backward_hooks.py``, since it is built on ``autograd.Function``.)
"""
import warnings
import weakref

from ..core.node import RemovableHandle as _GraphHandle

__all__ = ["RemovableHandle", "unserializable_hook", "warn_if_has_hooks"]


class RemovableHandle(_GraphHandle):
    """``remove()`` takes the hook out of ``hooks_dict`` and of every ``extra_dict`` (the dicts that mark a hook
    as taking kwargs, always called, ...)."""

    def __init__(self, hooks_dict, *, extra_dict=None):
        super().__init__(hooks_dict)
        if extra_dict is None:
            extra_dict = []
        elif not isinstance(extra_dict, list):
            extra_dict = [extra_dict]
        self._extra = [weakref.ref(d) for d in extra_dict]

    def remove(self):
        super().remove()
        for ref in self._extra:
            d = ref()
            if d is not None:
                d.pop(self.id, None)



def unserializable_hook(f):
    """Mark ``f`` (a decorator) as a hook that is not meant to be serialized: ``warn_if_has_hooks`` stays quiet
    about it. Returns ``f``."""
    f.__torch_unserializable__ = True
    return f


def warn_if_has_hooks(tensor):
    """Warn, for each backward hook of ``tensor`` not marked ``unserializable_hook``, that saving the tensor
    will not save it."""
    hooks = tensor._backward_hooks
    if hooks:
        for hook in hooks.values():
            if not hasattr(hook, "__torch_unserializable__"):
                warnings.warn(f"backward hook {hook!r} on tensor will not be serialized.  If this is expected, you "
                              "can decorate the function with @torch.utils.hooks.unserializable_hook to suppress "
                              "this warning", stacklevel=2)
