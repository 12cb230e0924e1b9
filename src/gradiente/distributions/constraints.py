"""Constraints: the set of values a parameter or a sample may take, as ``torch.distributions.constraints``.

A constraint's ``check(value)`` returns a bool tensor that says, for each event of ``value``, whether it lies in
the set; ``event_dim`` is how many rightmost dims make one event (a simplex checks whole vectors, so its
``event_dim`` is 1 and its check drops that dim). Distributions name the constraints of their parameters in
``arg_constraints`` and of their samples in ``support``; with validation on, they check both.

The public names are instances (``positive``, ``real``, ``simplex``...) or, for constraints with bounds, the
classes themselves (``interval(0, 1)``, ``greater_than(x)``), as in PyTorch.
"""

from .. import cat as _cat_tensors
from .. import full
from .. import stack as _stack_tensors
from ..core import dtype as _dtype
from ..core import dtype as dt
from ..ops import linalg
from .utils import _format

__all__ = ["Constraint", "MixtureSameFamilyConstraint", "boolean",
           "cat", "corr_cholesky", "dependent", "dependent_property", "greater_than",
           "greater_than_eq", "independent", "integer_interval", "interval", "half_open_interval", "is_dependent",
           "less_than", "lower_cholesky", "lower_triangular", "multinomial", "nonnegative", "nonnegative_integer",
           "one_hot", "positive", "positive_semidefinite", "positive_definite", "positive_integer", "real",
           "real_vector", "simplex", "square", "stack", "symmetric", "unit_interval"]


class Constraint:
    """A region of values. ``is_discrete``: whether it is a discrete set; ``event_dim``: the rightmost dims
    that form one event, which ``check`` reduces away."""

    is_discrete = False
    event_dim = 0

    def check(self, value):
        """A bool tensor of ``value.shape[:value.dim() - event_dim]``: True where the event is valid."""
        raise NotImplementedError

    def __repr__(self):
        return self.__class__.__name__[1:] + "()"


# --- constraints that depend on other parameters ----------------------------------------------------------

class _Dependent(Constraint):
    """A placeholder for a set that depends on other parameters (Uniform's support depends on low and high):
    it cannot be checked. ``is_discrete`` and ``event_dim`` may be given when they are known statically."""

    def __init__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        self._is_discrete = is_discrete
        self._event_dim = event_dim
        super().__init__()

    @property
    def is_discrete(self):
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self):
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        """``dependent(is_discrete=True, event_dim=1)``: a copy with those static attributes."""
        if is_discrete is NotImplemented:
            is_discrete = self._is_discrete
        if event_dim is NotImplemented:
            event_dim = self._event_dim
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, x):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint):
    """Whether ``constraint`` is a dependent one (which validation skips)."""
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A ``@property`` that reads as a dependent constraint on the class and as the computed constraint on an
    instance: ``Uniform.support`` is dependent, ``Uniform(0, 1).support`` is ``Interval(0, 1)``."""

    def __init__(self, fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        super().__init__(fn)
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    def __call__(self, fn):
        """``@dependent_property(is_discrete=True, event_dim=0)`` decorating ``fn``."""
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


# --- combinators ------------------------------------------------------------------------------------------

class _IndependentConstraint(Constraint):
    """``base_constraint`` over events of ``reinterpreted_batch_ndims`` more dims: an event is valid when all
    its entries are."""

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        if not isinstance(base_constraint, Constraint):
            raise AssertionError(f"base_constraint must be a Constraint, got {type(base_constraint).__name__}")
        if not isinstance(reinterpreted_batch_ndims, int):
            raise AssertionError(f"reinterpreted_batch_ndims must be an int, got "
                                 f"{type(reinterpreted_batch_ndims).__name__}")
        if reinterpreted_batch_ndims < 0:
            raise AssertionError(f"reinterpreted_batch_ndims must be >= 0, got {reinterpreted_batch_ndims}")
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__()

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        if result.dim() < self.reinterpreted_batch_ndims:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.dim()}")
        kept = result.dim() - self.reinterpreted_batch_ndims
        return result.reshape(result.shape[:kept] + (-1,)).all(-1)

    def __repr__(self):
        return f"{self.__class__.__name__[1:]}({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class _Pieces(Constraint):
    """Shared by ``cat`` and ``stack``: a sequence ``cseq`` of constraints for the pieces of a value along
    ``dim``; discrete if any piece is."""

    def __init__(self, cseq, dim=0):
        if not all(isinstance(c, Constraint) for c in cseq):
            raise AssertionError("All elements of cseq must be Constraint instances")
        self.cseq = list(cseq)
        self.dim = dim
        super().__init__()

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)


class _Cat(_Pieces):
    """Constraints ``cseq`` on consecutive slices of ``value`` along ``dim``, of sizes ``lengths`` (1 each by
    default), laid side by side as ``cat`` lays tensors."""

    def __init__(self, cseq, dim=0, lengths=None):
        super().__init__(cseq, dim)
        self.lengths = [1] * len(self.cseq) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.cseq):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match cseq ({len(self.cseq)})")

    @property
    def event_dim(self):
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        checks, start = [], 0
        for constraint, length in zip(self.cseq, self.lengths):
            checks.append(constraint.check(value.narrow(self.dim, start, length)))
            start += length
        return _cat_tensors(checks, self.dim)


class _Stack(_Pieces):
    """Constraints ``cseq`` on the slices ``value.select(dim, i)``, as ``stack`` lays tensors."""

    @property
    def event_dim(self):
        dim = max(c.event_dim for c in self.cseq)
        return dim + 1 if self.dim + dim < 0 else dim

    def check(self, value):
        slices = [value.select(self.dim, i) for i in range(value.size(self.dim))]
        return _stack_tensors([c.check(v) for v, c in zip(slices, self.cseq)], self.dim)


class MixtureSameFamilyConstraint(Constraint):
    """The support of a ``MixtureSameFamily``: ``base_constraint`` (the components') checked on the value with
    the mixture dim put back, valid where every component would accept it."""

    def __init__(self, base_constraint):
        if not isinstance(base_constraint, Constraint):
            raise AssertionError(f"base_constraint must be a Constraint, got {type(base_constraint).__name__}")
        self.base_constraint = base_constraint
        super().__init__()

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim

    def check(self, value):
        result = self.base_constraint.check(value.unsqueeze(-1 - self.event_dim))
        if value.dim() < self.event_dim:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.dim()}")
        kept = value.dim() - self.event_dim
        return result.reshape(result.shape[:kept] + (-1,)).all(-1)

    def __repr__(self):
        return f"{self.__class__.__name__}({self.base_constraint!r})"


# --- sets of numbers --------------------------------------------------------------------------------------

class _LowerBounded(Constraint):
    """Shared by the constraints with one bound, ``lower_bound``, printed as PyTorch prints them."""

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound
        super().__init__()

    def __repr__(self):
        return f"{self.__class__.__name__[1:]}(lower_bound={_format(self.lower_bound)})"


class _TwoBounded(Constraint):
    """Shared by the constraints with two bounds, ``lower_bound`` and ``upper_bound``."""

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound
        super().__init__()

    def __repr__(self):
        return (f"{self.__class__.__name__[1:]}(lower_bound={_format(self.lower_bound)}, "
                f"upper_bound={_format(self.upper_bound)})")


class _Boolean(Constraint):
    """{0, 1}."""

    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    """Vectors of zeros with a single one."""

    is_discrete = True
    event_dim = 1

    def check(self, value):
        is_boolean = (value == 0) | (value == 1)
        return is_boolean.all(-1) & value.sum(-1).eq(1)


class _IntegerInterval(_TwoBounded):
    """The integers in [lower_bound, upper_bound]."""

    is_discrete = True

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound) & (value <= self.upper_bound)


class _IntegerGreaterThan(_LowerBounded):
    """The integers in [lower_bound, inf)."""

    is_discrete = True

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound)


class _Real(Constraint):
    """The extended real line [-inf, inf]: everything but nan."""

    def check(self, value):
        return value == value  # noqa: PLR0124 (nan is the one value not equal to itself)


class _GreaterThan(_LowerBounded):
    """(lower_bound, inf]."""

    def check(self, value):
        return value > self.lower_bound


class _GreaterThanEq(_LowerBounded):
    """[lower_bound, inf)."""

    def check(self, value):
        return value >= self.lower_bound


class _LessThan(Constraint):
    """[-inf, upper_bound)."""

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value):
        return value < self.upper_bound

    def __repr__(self):
        return f"{self.__class__.__name__[1:]}(upper_bound={_format(self.upper_bound)})"


class _Interval(_TwoBounded):
    """[lower_bound, upper_bound]."""

    def check(self, value):
        return (value >= self.lower_bound) & (value <= self.upper_bound)


class _HalfOpenInterval(_TwoBounded):
    """[lower_bound, upper_bound)."""

    def check(self, value):
        return (value >= self.lower_bound) & (value < self.upper_bound)


class _Simplex(Constraint):
    """Vectors of non-negative entries that sum to 1 (to within 1e-6)."""

    event_dim = 1

    def check(self, value):
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _Multinomial(Constraint):
    """Non-negative vectors summing to at most ``upper_bound`` (PyTorch checks this weaker condition too)."""

    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, x):
        return (x >= 0).all(-1) & (x.sum(-1) <= self.upper_bound)


# --- sets of matrices -------------------------------------------------------------------------------------

def _all_over_matrix(mask):
    """True for the matrices (last two dims) of ``mask`` whose entries are all True."""
    return mask.reshape(mask.shape[:-2] + (-1,)).all(-1)


class _LowerTriangular(Constraint):
    """Square matrices with zeros above the diagonal."""

    event_dim = 2

    def check(self, value):
        return _all_over_matrix(value.tril() == value)


class _LowerCholesky(Constraint):
    """Lower-triangular matrices with a positive diagonal: the Cholesky factors."""

    event_dim = 2

    def check(self, value):
        positive_diagonal = (value.diagonal(dim1=-2, dim2=-1) > 0).all(-1)
        return _all_over_matrix(value.tril() == value) & positive_diagonal


class _CorrCholesky(Constraint):
    """Cholesky factors of correlation matrices: each row also has unit length (to within 10·n·eps)."""

    event_dim = 2

    def check(self, value):
        tolerance = float(dt.finfo_of(value._data.dtype).eps) * value.size(-1) * 10
        row_norm = linalg.norm(value.detach(), dim=-1)
        unit_rows = (row_norm - 1.0).abs().le(tolerance).all(-1)
        return _LowerCholesky().check(value) & unit_rows


class _Square(Constraint):
    """Square matrices."""

    event_dim = 2

    def check(self, value):
        return full(value.shape[:-2], value.shape[-2] == value.shape[-1], dtype=_dtype.bool)


class _Symmetric(_Square):
    """Symmetric matrices (to within an absolute 1e-6)."""

    def check(self, value):
        square = super().check(value)
        if not square.all():
            return square
        return value.isclose(value.mT, atol=1e-6).all(-2).all(-1)


class _PositiveSemidefinite(_Symmetric):
    """Symmetric matrices with non-negative eigenvalues."""

    def check(self, value):
        symmetric = super().check(value)
        if not symmetric.all():
            return symmetric
        return linalg.eigvalsh(value).ge(0).all(-1)


class _PositiveDefinite(_Symmetric):
    """Symmetric matrices that have a Cholesky factor."""

    def check(self, value):
        symmetric = super().check(value)
        if not symmetric.all():
            return symmetric
        return linalg.cholesky_ex(value).info.eq(0)


# --- the public names, as PyTorch spells them --------------------------------------------------------------

dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
multinomial = _Multinomial
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
cat = _Cat
stack = _Stack
