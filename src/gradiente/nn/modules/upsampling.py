"""``torch.nn.modules.upsampling``: ``Upsample`` and its two fixed forms under the module name PyTorch gives them (they
are defined in ``resampling.py``), so that code naming ``torch.nn.modules.upsampling.Upsample`` (a checkpoint's
``safe_globals``) finds them."""
from .resampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]
