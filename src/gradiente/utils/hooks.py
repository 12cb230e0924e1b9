"""``RemovableHandle``, as ``torch.utils.hooks``: the handle ``register_*_hook`` returns."""
import weakref

from ..core.node import RemovableHandle as _GraphHandle

__all__ = ["RemovableHandle"]


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

