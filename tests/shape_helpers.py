"""Helpers that several op test files share (test_ops_joining.py, test_ops_rearranging.py, test_ops_scattering.py,
test_ops_statistics.py, test_ops_reductions.py, test_ops_indexing.py): running a call in both libraries and
comparing the tensors it gives, dtype and shape included. Not a test module: pytest collects nothing here."""
import numpy as np
import pytest

import gradiente

torch = pytest.importorskip("torch")


def both(fn):
    """``fn(lib)`` for gradiente and for PyTorch."""
    return fn(gradiente), fn(torch)


def same_tensor(g, t):
    """The same dtype, shape and values (exactly)."""
    assert str(g.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert tuple(g.shape) == tuple(t.shape)
    np.testing.assert_array_equal(g.numpy(), t.numpy())
