"""``warn``: ``warnings.warn`` for the ops, with the autocast entries' frames left out of ``stacklevel``.

An op's warning names the line that called it (``stacklevel=2`` from the op, or more from a helper), as PyTorch's
warnings name the user's line. The ops that PyTorch's autocast lists are reached through an entry function
(``autocast.autocast_entry``), one more frame between the op and its caller; ``warn`` does not count such frames,
so the warning lands where it would without them.
"""
import sys
import warnings

#: code objects of the frames ``stacklevel`` does not count (registered by ``autocast``)
SKIPPED_CODE: set = set()


def warn(message, category=None, stacklevel=1):
    frame = sys._getframe(1)            # the caller of warn: stacklevel 1
    remaining, skipped = stacklevel - 1, 0
    while remaining > 0 and frame is not None:
        frame = frame.f_back
        if frame is not None and frame.f_code in SKIPPED_CODE:
            skipped += 1
        else:
            remaining -= 1
    warnings.warn(message, category, stacklevel=stacklevel + 1 + skipped)
