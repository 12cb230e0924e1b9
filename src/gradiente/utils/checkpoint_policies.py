"""The names of ``torch.utils.checkpoint`` around device states and selective activation checkpointing (SAC):
``DefaultDeviceType``, ``get_device_states``/``set_device_states``, ``CheckpointPolicy``,
``SelectiveCheckpointContext``, ``create_selective_checkpoint_contexts``, ``SAC_IGNORED_OPS`` and
``GraphExecGroup``.

gradiente runs on the CPU only, so there are no device RNG states to stash: the CPU generator's state is what
``checkpoint(preserve_rng_state=True)`` already keeps.

``create_selective_checkpoint_contexts``, which puts the policies to work, is in ``checkpoint_selective.py``.
"""
import enum
import threading

__all__ = ["DefaultDeviceType", "get_device_states", "set_device_states", "CheckpointPolicy",
           "SelectiveCheckpointContext", "SAC_IGNORED_OPS",
           "GraphExecGroup"]

#: PyTorch's ATen ops that SAC never caches; gradiente has no ATen ops, so none
SAC_IGNORED_OPS = frozenset()


class DefaultDeviceType:
    """The device type whose RNG states checkpointing saves when no argument is on an accelerator: 'cpu' here
    (PyTorch's default is the current accelerator's type, and 'cpu' without one)."""

    _default_device_type = None

    @staticmethod
    def set_device_type(device="cuda"):
        """Set the default device type for checkpointing."""
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type():
        """The default device type for checkpointing ('cpu' unless set)."""
        if not DefaultDeviceType._default_device_type:
            DefaultDeviceType._default_device_type = "cpu"
        return DefaultDeviceType._default_device_type


def get_device_states(*args):
    """The ids and RNG states of the accelerator devices the tensors in ``args`` live on: ``([], [])`` always,
    since every gradiente tensor is on the CPU (whose generator checkpoint saves separately)."""
    return [], []


def set_device_states(devices, states, *, device_type=None):
    """Restore accelerator RNG states saved by ``get_device_states``: nothing to do for its empty lists. A
    non-empty list cannot come from gradiente and raises RuntimeError."""
    if device_type is None:
        device_type = DefaultDeviceType.get_device_type()
    if device_type == "meta" or not list(zip(devices, states)):
        return
    raise RuntimeError(f"set_device_states: gradiente has no {device_type!r} devices; only the CPU generator "
                       "has a state (gradiente.get_rng_state())")


class SelectiveCheckpointContext:
    """What a SAC policy function is given: ``is_recompute`` (False: the policy is asked in the forward only, as
    in PyTorch 2.13) and ``op_output``, the op's result."""

    def __init__(self, *, is_recompute, op_output=None):
        self.is_recompute = is_recompute
        self.op_output = op_output


class CheckpointPolicy(enum.Enum):
    """What a SAC policy says of an op's output: save it in the forward (``*_SAVE``), recompute it in the backward
    (``*_RECOMPUTE``) or save it offloaded to the CPU (``*_CPU_OFFLOAD``); ``MUST_`` may not be overridden."""

    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


_current_group = threading.local()


class GraphExecGroup:
    """A context manager grouping backward calls over one checkpointed graph. PyTorch's promise, that each
    checkpointed region is recomputed at most once within it, holds here without it: gradiente's checkpoint
    hands each saved value over once per recomputation. Entering one inside another raises, as in PyTorch."""

    def __enter__(self):
        current = getattr(_current_group, "group", None)
        if current is not None:
            raise RuntimeError(f"GraphExecGroup contexts cannot be nested. Already inside group {current}")
        _current_group.group = self
        return self

    def __exit__(self, *args):
        _current_group.group = None

    @classmethod
    def _get_current_group(cls):
        return getattr(_current_group, "group", None)
