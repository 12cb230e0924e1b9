"""``warn``: ``warnings.warn`` that names the user's line, with gradiente's wrapper frames left out of ``stacklevel``.

A warning PyTorch raises from its C++ core names the Python line that called the op, so an op's warning here names
its caller's line (``stacklevel=2`` from the op, or more from a helper). Between the caller and the op there may be
wrappers PyTorch does not have: the sparse check around every public function (``sparse_dispatch.guard``) and the
entry of the ops that PyTorch's autocast lists (``ops/autocast.autocast_entry``). They register their code here,
and ``warn`` does not count their frames, so the warning lands where it would without them. (In the core, below
the ops, because the core's own functions, ``torch.tensor`` among them, are behind the same wrappers.)
"""
import sys
import warnings
from types import FrameType

#: code objects of the frames ``stacklevel`` does not count (registered by ``autocast`` and ``sparse_dispatch``)
SKIPPED_CODE: set = set()

#: the modules that stand where PyTorch's C++ stands: a warning of theirs names the first line outside them
_CORE_MODULES = ("gradiente.core.", "gradiente.ops.")
_CORE_WRAPPERS = frozenset({"gradiente", "gradiente.sparse_dispatch", "gradiente.numpy_names",
                            "gradiente.tensor_methods"})


def warn(message, category=None, stacklevel=1):
    """``warnings.warn(message, category, stacklevel)``, not counting the frames of ``SKIPPED_CODE``."""
    frame: FrameType | None = sys._getframe(1)      # the caller of warn: stacklevel 1
    remaining, skipped = stacklevel - 1, 0
    while remaining > 0 and frame is not None:
        frame = frame.f_back
        if frame is not None and frame.f_code in SKIPPED_CODE:
            skipped += 1
        else:
            remaining -= 1
    warnings.warn(message, category, stacklevel=stacklevel + 1 + skipped)


def warn_at_caller(message, category=None):
    """``warnings.warn`` naming the first line outside the core and the ops, and the wrappers around them: where a
    warning of PyTorch's C++ lands (the Python line that called into it, a user's or ``nn``'s), however many of
    gradiente's own frames the call went through (``torch.tensor(t)`` and ``t.new_tensor(t)`` take different
    paths to the same warning)."""
    frame: FrameType | None = sys._getframe(1)
    level = 2       # (stacklevel 1 is this function, 2 its caller)
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if not (module.startswith(_CORE_MODULES) or module in _CORE_WRAPPERS):
            break
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)
