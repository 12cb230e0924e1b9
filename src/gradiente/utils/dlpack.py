"""``torch.utils.dlpack``: tensors exchanged with other array libraries through DLPack, sharing memory."""
from ..core.creation import from_dlpack

__all__ = ["from_dlpack", "to_dlpack"]


def to_dlpack(tensor):
    """A DLPack capsule of ``tensor``'s memory (for libraries that take capsules rather than ``__dlpack__``)."""
    return tensor.__dlpack__()
