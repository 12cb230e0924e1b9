"""``torch.nn.modules.fold``: ``Fold`` and ``Unfold`` under the module name PyTorch gives them (they are defined in
``resampling.py``), so that code naming ``torch.nn.modules.fold.Fold`` (a checkpoint's ``safe_globals``) finds them."""
from .resampling import Fold, Unfold

__all__ = ["Fold", "Unfold"]
