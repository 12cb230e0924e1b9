"""``biject_to`` and ``transform_to``: from a constraint to a transform whose codomain it is.

Both map an unconstrained tensor into a constrained set, so that an optimizer can work on unconstrained
numbers (``p = transform_to(constraints.positive)(u)``). ``biject_to(c)`` is a bijection with a log-det (for
HMC-style samplers that need the change of variables); ``transform_to(c)`` need not be one (``simplex`` gets
softmax rather than stick-breaking). Register more with ``registry.register(constraint_type)(factory)``.
"""
import numbers

from . import constraints, transforms

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """A table from constraint classes to factories ``constraint ↦ transform``."""

    def __init__(self):
        self._registry = {}
        super().__init__()

    def register(self, constraint, factory=None):
        """Register ``factory`` for ``constraint`` (a Constraint subclass or instance; an instance registers
        its class). Without ``factory``, a decorator."""
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint, constraints.Constraint):
            raise TypeError(f"Expected constraint to be either a Constraint subclass or instance, but got "
                            f"{constraint}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint):
        """The transform registered for ``constraint``'s class, built for that constraint."""
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(f"Cannot transform {type(constraint).__name__} constraints") from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _register_both(constraint, factory):
    biject_to.register(constraint, factory)
    transform_to.register(constraint, factory)


_register_both(constraints.real, lambda constraint: transforms.identity_transform)


def _independent(registry):
    def factory(constraint):
        result = registry(constraint.base_constraint)
        if constraint.reinterpreted_batch_ndims == 0:
            return result
        return transforms.IndependentTransform(result, constraint.reinterpreted_batch_ndims)
    return factory


biject_to.register(constraints.independent, _independent(biject_to))
transform_to.register(constraints.independent, _independent(transform_to))

# positive and nonnegative are instances of greater_than(0.) and greater_than_eq(0.): their transform is
# greater_than's exp-then-shift by 0, as PyTorch's (whose own ExpTransform registration for them is replaced).


def _greater_than(constraint):
    return transforms.ComposeTransform([transforms.ExpTransform(),
                                        transforms.AffineTransform(constraint.lower_bound, 1)])


def _less_than(constraint):
    return transforms.ComposeTransform([transforms.ExpTransform(),
                                        transforms.AffineTransform(constraint.upper_bound, -1)])


def _interval(constraint):
    # The unit interval gets a bare sigmoid, so that its transform is as simple (and as fast) as can be.
    lower_is_0 = isinstance(constraint.lower_bound, numbers.Number) and constraint.lower_bound == 0
    upper_is_1 = isinstance(constraint.upper_bound, numbers.Number) and constraint.upper_bound == 1
    if lower_is_0 and upper_is_1:
        return transforms.SigmoidTransform()
    loc = constraint.lower_bound
    scale = constraint.upper_bound - constraint.lower_bound
    return transforms.ComposeTransform([transforms.SigmoidTransform(), transforms.AffineTransform(loc, scale)])


for _constraint in (constraints.greater_than, constraints.greater_than_eq):
    _register_both(_constraint, _greater_than)
_register_both(constraints.less_than, _less_than)
for _constraint in (constraints.interval, constraints.half_open_interval):
    _register_both(_constraint, _interval)

biject_to.register(constraints.simplex, lambda constraint: transforms.StickBreakingTransform())
transform_to.register(constraints.simplex, lambda constraint: transforms.SoftmaxTransform())
transform_to.register(constraints.lower_cholesky, lambda constraint: transforms.LowerCholeskyTransform())
transform_to.register(constraints.positive_definite, lambda constraint: transforms.PositiveDefiniteTransform())
transform_to.register(constraints.positive_semidefinite, lambda constraint: transforms.PositiveDefiniteTransform())
_register_both(constraints.corr_cholesky, lambda constraint: transforms.CorrCholeskyTransform())


def _cat(registry):
    def factory(constraint):
        return transforms.CatTransform([registry(c) for c in constraint.cseq], constraint.dim, constraint.lengths)
    return factory


def _stack(registry):
    def factory(constraint):
        return transforms.StackTransform([registry(c) for c in constraint.cseq], constraint.dim)
    return factory


biject_to.register(constraints.cat, _cat(biject_to))
transform_to.register(constraints.cat, _cat(transform_to))
biject_to.register(constraints.stack, _stack(biject_to))
transform_to.register(constraints.stack, _stack(transform_to))
