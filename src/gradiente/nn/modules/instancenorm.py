"""``InstanceNorm1d/2d/3d``: each channel of each sample normalized over its own spatial dims
(``F.instance_norm``), optionally with an affine map and running statistics (``_NormBase``)."""
import warnings

from .. import functional as F
from .batchnorm import _NormBase

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]


class _InstanceNorm(_NormBase):
    """Built on ``_NormBase`` beside ``_BatchNorm``, not on it, as in PyTorch: code that tells norm layers apart
    by class still can. No affine map and no running statistics by default."""

    _no_batch_dim = 0               # the rank of an unbatched input

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device=device, dtype=dtype,
                         bias=bias)

    def _check_input_dim(self, input):
        if input.dim() not in (self._no_batch_dim, self._no_batch_dim + 1):
            raise ValueError(f"expected {self._no_batch_dim}D or {self._no_batch_dim + 1}D input (got {input.dim()}D "
                             "input)")

    def _apply_instance_norm(self, input):
        # the batch statistics in training, or always when no running statistics are kept
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                               self.training or not self.track_running_stats,
                               self.momentum if self.momentum is not None else 0.0, self.eps)

    def forward(self, input):
        self._check_input_dim(input)
        feature_dim = input.dim() - self._no_batch_dim
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match num_features "
                                 f"({self.num_features}), but got: {input.shape[feature_dim]}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You can silence this "
                          "warning by not passing in num_features, which is not used because affine=False",
                          stacklevel=2)
        if input.dim() == self._no_batch_dim:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    """Normalizes each channel of each sample of ``(N, C, L)`` (or ``(C, L)``) input over its length."""
    _no_batch_dim = 2


class InstanceNorm2d(_InstanceNorm):
    """Normalizes each channel of each sample of ``(N, C, H, W)`` (or ``(C, H, W)``) input over its plane."""
    _no_batch_dim = 3


class InstanceNorm3d(_InstanceNorm):
    """Normalizes each channel of each sample of ``(N, C, D, H, W)`` (or ``(C, D, H, W)``) input over its volume."""
    _no_batch_dim = 4
