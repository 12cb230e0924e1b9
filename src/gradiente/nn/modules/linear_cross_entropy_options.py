"""``LinearCrossEntropyOptions``: the settings of PyTorch's chunked ``linear_cross_entropy``, checked as PyTorch checks
them. gradiente computes every call on the reference path, so the options change nothing but the warning for
calls that PyTorch's chunked path cannot serve (``ops/nn/linear_cross_entropy.py``)."""
import dataclasses
import sys

from ...core import dtype as dt

__all__ = ["LinearCrossEntropyOptions"]

_ACC_POLICIES = {"auto", "accurate", "balanced", "compact"}
# PyTorch's class has slots; dataclasses make them from Python 3.10 (the package still imports on 3.9)
_SLOTS = {"slots": True} if sys.version_info >= (3, 10) else {}


@dataclasses.dataclass(frozen=True, **_SLOTS)
class LinearCrossEntropyOptions:
    """How PyTorch's chunked ``linear_cross_entropy`` splits the batch: ``allow_retain_graph`` (a second backward),
    ``batch_chunk_size`` (a positive int, or None), ``chunking_method`` (None, ``"auto"``, ``"aspect_ratio"`` or
    ``"aspect_ratio:<factor>"``), ``acc_policy`` (``"auto"``, ``"accurate"``, ``"balanced"``, ``"compact"``) and
    ``acc_dtype`` (None or a floating dtype). Difference from PyTorch: the options are validated and kept, but
    gradiente has no chunked kernel, so they do not change how the loss is computed."""

    allow_retain_graph: bool = False
    batch_chunk_size: "int | None" = None
    chunking_method: "str | None" = "auto"
    acc_policy: str = "auto"
    acc_dtype: "dt.dtype | None" = None

    def __post_init__(self):
        if self.acc_policy not in _ACC_POLICIES:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = self.chunking_method.partition(":")
            factor = factor if sep else "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        if not (self.batch_chunk_size is None
                or (isinstance(self.batch_chunk_size, int) and self.batch_chunk_size > 0)):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {self.batch_chunk_size!r}")
        if self.acc_dtype is not None and self.acc_dtype not in (dt.float16, dt.bfloat16, dt.float32, dt.float64):
            raise ValueError("acc_dtype must be one of {None, torch.float16, torch.bfloat16, torch.float32, "
                             f"torch.float64}}, got {self.acc_dtype!r}. Pass acc_dtype=None to let the op pick "
                             "automatically.")
