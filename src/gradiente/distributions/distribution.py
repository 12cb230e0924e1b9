"""``Distribution``: the base class of every distribution, as ``torch.distributions.Distribution``.

Shapes: a distribution holds a batch of independent distributions (``batch_shape``), each over events of
``event_shape`` (a Normal's event is a number, ``()``; a MultivariateNormal's a vector, ``(n,)``). A sample of
``sample_shape`` has shape ``sample_shape + batch_shape + event_shape``; ``log_prob(value)`` reduces away the
event dims and returns one number per sample and batch entry.

Validation (on by default, as in PyTorch unless Python runs with ``-O``): the constructor checks each
parameter against ``arg_constraints`` and ``log_prob``/``cdf`` check their value against ``support``, raising
PyTorch's ``ValueError`` messages. ``validate_args=False`` (or ``set_default_validate_args(False)``) skips it.
"""
import warnings

from .. import Size, Tensor, exp, no_grad
from . import constraints
from .utils import _format, _is_number, broadcast_all, lazy_property

__all__ = ["Distribution"]


class Distribution:
    """A probability distribution of ``batch_shape`` over events of ``event_shape``."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        """Turn validation on or off for distributions made without an explicit ``validate_args``."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_parameters()
        super().__init__()

    def _check_parameters(self):
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
            warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set `arg_constraints = {{}}` "
                          "or initialize the distribution with `validate_args=False` to turn off validation.",
                          stacklevel=3)
        for param, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue
            # The parameterization not given (logits of a distribution made from probs) is not computed to check.
            if param not in self.__dict__ and isinstance(getattr(type(self), param), lazy_property):
                continue
            value = getattr(self, param)
            if not constraint.check(value).all():
                raise ValueError(f"Expected parameter {param} ({type(value).__name__} of shape {tuple(value.shape)}) "
                                 f"of distribution {self!r} to satisfy the constraint {constraint!r}, but found "
                                 f"invalid values:\n{_format(value)}")

    def expand(self, batch_shape, _instance=None):
        """A distribution of ``batch_shape`` whose parameters are this one's, expanded (views, no copies, and no
        new validation)."""
        raise NotImplementedError

    def _expanded(self, new, batch_shape, event_shape=None):
        """Finish ``expand``: give ``new`` its shapes and this distribution's validation setting."""
        Distribution.__init__(new, batch_shape, self._event_shape if event_shape is None else event_shape,
                              validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _expand_params(self, cls, batch_shape, _instance, *names):
        """``expand`` for a distribution whose parameters ``names`` all have the batch shape."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = Size(batch_shape)
        for name in names:
            setattr(new, name, getattr(self, name).expand(batch_shape))
        return self._expanded(new, batch_shape)

    def _set_broadcast_params(self, **params):
        """Store the parameters broadcast together (numbers become tensors, see ``broadcast_all``); returns the
        batch shape: their common shape, or () when all were given as numbers."""
        tensors = broadcast_all(*params.values())
        for name, value in zip(params, tensors):
            setattr(self, name, value)
        return Size() if all(_is_number(v) for v in params.values()) else tensors[0].size()

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    @property
    def arg_constraints(self):
        """The constraint each parameter must satisfy, by name."""
        raise NotImplementedError

    @property
    def support(self):
        """The constraint that samples satisfy."""
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=()):
        """A sample of ``sample_shape + batch_shape + event_shape``, with no history (no gradient)."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        """A reparameterized sample: a differentiable function of the parameters and parameter-free noise, so
        gradients flow from the sample back to the parameters."""
        raise NotImplementedError

    def sample_n(self, n):
        """``sample((n,))``; deprecated in PyTorch, with the same warning here."""
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.", FutureWarning, stacklevel=2)
        return self.sample(Size((n,)))

    def log_prob(self, value):
        """The log of the density (or mass) at ``value``, one number per sample and batch entry."""
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        """All values of a discrete distribution along a new dim 0: ``(cardinality,) + batch_shape +
        event_shape`` (size-1 batch dims with ``expand=False``)."""
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return exp(self.entropy())

    def _extended_shape(self, sample_shape=()):
        """``sample_shape + batch_shape + event_shape``: the shape of a sample."""
        return Size(Size(sample_shape) + self._batch_shape + self._event_shape)

    def _validate_sample(self, value):
        """Check ``value`` for ``log_prob``/``cdf``: a tensor, whose rightmost dims are the event shape, that
        broadcasts with ``batch_shape + event_shape`` and lies in the support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_start = len(value.size()) - len(self._event_shape)
        if value.size()[event_start:] != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: {value.size()} vs "
                             f"{self._event_shape}.")
        actual, expected = value.size(), self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual), reversed(expected)):
            if 1 not in (i, j) and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {actual} vs {expected}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample validation. Please "
                          "initialize the distribution with `validate_args=False` to turn off validation.",
                          stacklevel=2)
            return
        if not support.check(value).all():
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be "
                             f"within the support ({support!r}) of the distribution {self!r}, but found invalid "
                             f"values:\n{_format(value)}")

    def _get_checked_instance(self, cls, _instance=None):
        """The empty instance that ``expand`` fills: ``_instance`` if given, else a new one of this type."""
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                                      "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self):
        names = [k for k in self.arg_constraints if k in self.__dict__]
        shown = ", ".join(f"{p}: {_shown(self.__dict__[p])}" for p in names)
        return f"{self.__class__.__name__}({shown})"


def _shown(param):
    """A parameter as a distribution's repr shows it: the tensor itself if it has one element, else its size."""
    return _format(param) if param.numel() == 1 else param.size()
