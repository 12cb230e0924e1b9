"""``torch._C._autograd``'s names that Python code reads: the saved-tensor handle type and the switch state of
saved-tensor hooks."""
from ..core.node import SavedTensor, saved_hooks

__all__ = ["SavedTensor", "_saved_tensors_hooks_is_enabled", "_unsafe_set_version_counter"]


def _saved_tensors_hooks_is_enabled():
    """False inside ``autograd.graph.disable_saved_tensors_hooks``."""
    return saved_hooks.disabled is None


def _unsafe_set_version_counter(tensors, versions):
    """Set each tensor's version counter (PyTorch's escape hatch for code that knows a change is harmless)."""
    tensors, versions = tuple(tensors), tuple(versions)
    if len(tensors) != len(versions):
        raise RuntimeError(f"tensors_len={len(tensors)}, versions_len={len(versions)}")
    for tensor, version in zip(tensors, versions):
        if version < 0:
            raise RuntimeError(f"Cannot set a version_counter to a value below 0: {version}")
        tensor._version_box[0] = version
