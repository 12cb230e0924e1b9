"""Mixins for distributions centred on a location ``loc``: what Normal, Laplace and MultivariateNormal share.

Each mixin is listed before the distribution's base class (``class Normal(_LocScale, ExponentialFamily)``), so
that its properties take the place of ``Distribution``'s abstract ones and its ``__init__`` hands on to the
base's. ``expand`` stays in each class: PyTorch's names the class itself, so that a subclass with its own
``__init__`` must write its own ``expand``.
"""

class _SymmetricAboutLoc:
    """A unimodal distribution symmetric about ``loc``: its mean and its mode are both ``loc``."""

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc


class _LocScale(_SymmetricAboutLoc):
    """A location-scale family: ``loc`` and ``scale`` (numbers or tensors) broadcast together into the batch
    shape; the class's ``arg_constraints`` checks them."""

    def __init__(self, loc, scale, validate_args=None):
        batch_shape = self._set_broadcast_params(loc=loc, scale=scale)
        super().__init__(batch_shape, validate_args=validate_args)
