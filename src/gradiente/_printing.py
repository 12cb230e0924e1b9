"""Placeholder printing (replaced by the PyTorch-identical formatter)."""
import numpy as np

_opts = {}


def set_printoptions(**kwargs):
    _opts.update(kwargs)


def tensor_repr(t):
    s = "tensor(" + np.array2string(t._data, separator=", ", prefix="tensor(")
    if t.grad_fn is not None:
        s += f", grad_fn=<{t.grad_fn.name()}>"
    elif t._requires_grad:
        s += ", requires_grad=True"
    return s + ")"
