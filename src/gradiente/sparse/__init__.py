"""``torch.sparse``: products, sums and softmaxes of sparse COO tensors (products of CSR and CSC ones too), and the
invariant-check switch.

A sparse COO tensor keeps index and value arrays (``core/sparse_tensor.py``); the ops live in
``ops/sparse_coo.py``. Gradients reach the dense operands and the values, as PyTorch's do.
"""
from ..ops import sparse_coo as _ops
from ..ops.sparse_compressed import sparse_addmm as addmm  # COO or compressed mat1
from ..ops.sparse_compressed import sparse_mm as mm
from ..ops.sparse_coo import sparse_log_softmax as log_softmax
from ..ops.sparse_coo import sparse_softmax as softmax
from ..ops.sparse_coo import sparse_sum as sum
from ._gradcheck import as_sparse_gradcheck  # issue 16

__all__ = ["addmm", "check_sparse_tensor_invariants", "log_softmax", "mm", "softmax", "sum", "as_sparse_gradcheck"]


class check_sparse_tensor_invariants:
    """Check the indices of every sparse tensor made while it is active (a context manager or decorator), or
    for the whole program with ``enable()``/``disable()``: a negative index or one beyond ``size`` raises
    PyTorch's RuntimeError. Off by default, as in PyTorch, which warns once, at the first sparse tensor made while
    the switch was never set."""

    @staticmethod
    def is_enabled():
        """Whether sparse_coo_tensor checks indices when not told otherwise."""
        return _ops.invariant_checks["enabled"]

    @staticmethod
    def enable():
        """Check indices from now on."""
        _ops.invariant_checks.update(enabled=True, explicit=True)

    @staticmethod
    def disable():
        """Stop checking indices."""
        _ops.invariant_checks.update(enabled=False, explicit=True)

    def __init__(self, enable=True):
        self.state = enable
        self.saved_state = None

    def __enter__(self):
        if self.saved_state is not None:
            raise RuntimeError("This context manager instance is already activated. Use a different context "
                               "manager instance for context nesting.")
        self.saved_state = self.is_enabled()
        _ops.invariant_checks.update(enabled=self.state, explicit=True)

    def __exit__(self, kind, value, traceback):
        _ops.invariant_checks["enabled"] = self.saved_state
        self.saved_state = None

    def __call__(self, function):
        def checked(*args, **kwargs):
            with check_sparse_tensor_invariants(self.state):
                return function(*args, **kwargs)
        return checked
