"""``torch.nn.modules.pixelshuffle``: ``PixelShuffle`` and ``PixelUnshuffle`` under the module name PyTorch gives them
(they are defined in ``resampling.py``), so that code naming ``torch.nn.modules.pixelshuffle.PixelShuffle`` (a
checkpoint's ``safe_globals``) finds them."""
from .resampling import PixelShuffle, PixelUnshuffle

__all__ = ["PixelShuffle", "PixelUnshuffle"]
