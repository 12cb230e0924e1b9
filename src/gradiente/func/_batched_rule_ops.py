"""Derivative rules run on batched values: the rule namespace for a batched tangent or a batched gradient.

Inside ``vmap``, ``make_dual(x, t)`` with a plain primal ``x`` and a batched tangent ``t`` (what
``gradcheck(check_batched_forward_grad=True)`` does, and PyTorch's batched forward AD) gives a plain dual tensor
whose tangent is a ``BatchedTensor``. The ops on the dual run once, on the plain primal, and each op's ``jvp``
rule must then compute a batched tangent from plain saved values and batched input tangents. The rules are
written once, against ``core.rules.RuleOps``; ``BatchedRuleOps`` below is that namespace with every name routed
through vmap's dispatch (``_dispatch.dispatch``), so that a rule's ``ops.sum(t, 1)`` or ``ops.matmul(t, w)``
runs as one call of the plain op on the physical tangent, by the op's batching rule, or per example where the
op has none. Arithmetic operators and Tensor methods in a rule (``t * y``, ``t.sum_to_size(s)``) dispatch by
themselves, being BatchedTensor methods.

Reverse mode uses it the same way: ``autograd.grad`` inside ``vmap`` with batched ``grad_outputs`` over a graph
recorded outside (PyTorch's ``is_grads_batched=True`` and gradcheck's batched-gradient check) runs each node's
backward rule once, on the batched gradient (``core.backward.grad_of_batched``).

The core cannot import this floor, so ``install`` hands the namespace down to ``core.rules`` once, when
``gradiente.func`` is imported (a batched value exists only inside a vmap, so always after that).
"""
import numpy as np

from ..core import grad_mode, rules
from ..core.creation import zeros
from ..core.dtype import FROM_NUMPY
from ..core.tensor import Tensor
from ..ops import selection, tensor_rules
from . import _dispatch
from ._batched_tensor import _INPLACE_ERROR, _NOT_AN_ARRAY, BatchedTensor, expand_to, levels_of, physical, wrap

__all__ = ["BatchedRuleOps", "install"]


def _own_helper(fn):
    """Whether ``fn`` is one of TensorOps' own helpers (mostly written with Tensor methods, which dispatch by
    themselves) rather than an op function, which must go through vmap's dispatch."""
    return getattr(fn, "__module__", None) == tensor_rules.__name__


def _cannot_batch(error):
    """Whether ``error`` is a plain op reaching for a batched value's array (see ``_batched_tensor.py``; inside
    a rule run for an in-place op, the message is the in-place one)."""
    return str(error) in (_NOT_AN_ARRAY, _INPLACE_ERROR)


def _per_example(fn, args, kwargs):
    return _dispatch.fallback(fn, args, kwargs, _dispatch.batch_levels(args, kwargs))


def _routed(fn):
    if not _own_helper(fn):
        return lambda *args, **kwargs: _dispatch.dispatch(fn, args, kwargs)

    def helper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except RuntimeError as error:      # a helper that calls a plain op: per example
            if not _cannot_batch(error):
                raise
            try:
                return _per_example(fn, args, kwargs)
            except ValueError:              # results that are not tensors (``raw``): the rule runs per example
                raise error from None
    return helper


class BatchedRuleOps:
    """``TensorOps`` with each op dispatched by vmap (see the module docstring); recorded like TensorOps."""

    recording = True

    def __init__(self, tensor_ops):
        for name in dir(type(tensor_ops)):
            if name.startswith("_") or name == "recording":
                continue
            value = getattr(tensor_ops, name)
            if callable(value):
                setattr(self, name, _routed(value))
        self.fix_meta = self._fix_meta
        self.mask, self.select = self._mask, self._select

    @staticmethod
    def _mask(condition, x):
        """``TensorOps.mask`` (``x`` where ``condition``, else 0) through ``where``'s batching rule."""
        zero = zeros((), dtype=x.dtype)
        return _dispatch.dispatch(selection.where, (tensor_rules._condition(condition), x, zero), {})

    @staticmethod
    def _select(condition, x, y):
        return _dispatch.dispatch(selection.where, (tensor_rules._condition(condition), x, y), {})

    @staticmethod
    def _fix_meta(grad, shape, np_dtype):
        """``TensorOps.fix_meta`` for a value that may be batched: summed or expanded to ``shape`` (logical),
        cast to ``np_dtype`` (a complex value for a real tensor: its real part)."""
        if tuple(grad.shape) != tuple(shape):
            grad = grad.sum_to_size(shape) if grad.dim() >= len(shape) else grad.expand(shape)
        have = BatchedRuleOps.array_dtype(grad)
        if have != np_dtype:
            if have.kind == "c" and np.dtype(np_dtype).kind != "c":
                grad = grad.real
            grad = grad.to(FROM_NUMPY[np.dtype(np_dtype)])
        return grad

    def apply_rule(self, node, grads):
        """``node``'s backward rule on batched gradients; a rule that reaches for arrays runs per example."""
        try:
            return node.backward(self, *grads)
        except RuntimeError as error:
            # (a rule written on arrays only refuses any recorded namespace; per example it gets arrays)
            if not (_cannot_batch(error) or str(error).startswith("gradiente computes the backward of ")):
                raise
        recording = grad_mode.state.enabled       # the walk's create_graph
        plain = rules.namespace(recording)

        def one_example(*gs):
            found = node.backward(plain, *[g if g is None or recording else g._data for g in gs])
            found = found if found.__class__ is tuple else (found,)
            return tuple(r if r is None or recording else Tensor._make(np.asarray(r)) for r in found)
        return _per_example(one_example, tuple(grads), {})

    def apply_jvp(self, node, tangents):
        """``node``'s forward rule on batched tangents; a rule that reaches for arrays runs per example."""
        try:
            return node.jvp(self, *tangents)
        except RuntimeError as error:
            if not _cannot_batch(error):
                raise
        plain = rules.namespace(True)
        return _per_example(lambda *ts: node.jvp(plain, *ts), tuple(tangents), {})

    @staticmethod
    def per_example(fn, values):
        """``fn(*values)`` once per example of the innermost level of the batched ``values``, results stacked
        (the loop for a rule that cannot run on batched values)."""
        return _dispatch.fallback(fn, tuple(values), {}, _dispatch.batch_levels(values, {}))

    # --- what the core asks of a value that may be batched ----------------------------------------------
    cannot_batch = staticmethod(_cannot_batch)

    @staticmethod
    def is_batched(x):
        return x.__class__ is BatchedTensor

    @staticmethod
    def array_dtype(x):
        """The NumPy dtype of ``x``'s values (a batched value's: its physical array's)."""
        return physical(x)._data.dtype

    @staticmethod
    def physical(x):
        return physical(x)

    @staticmethod
    def as_physical_of(value, like):
        """``value`` (batched or plain, of ``like``'s logical shape) as a physical tensor laid out as ``like``'s
        is: ``like``'s batch dims in front (expanded where ``value`` lacks them)."""
        return expand_to(value, levels_of(like), like.dim())

    @staticmethod
    def with_levels_of(value, like):
        """The physical tensor ``value`` seen as batched at ``like``'s levels."""
        return wrap(value, levels_of(like))


def install():
    """Hand the namespace down to forward mode (once, when ``gradiente.func`` is imported)."""
    rules.use_batched_ops(BatchedRuleOps(rules.namespace(True)))
