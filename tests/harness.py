"""The op-spec harness: one table row per op drives the gradient tests.

A row (``OpSpec``) names the op, calls it the same way in gradiente and in PyTorch (``fn(lib, *inputs)``
with ``lib`` the module), and gives input shapes (broadcasting ones included) and a domain. From it:

* ``check_gradcheck``: float64 finite differences against gradiente's backward (``autograd.gradcheck``);
* ``check_against_torch``: forward values, backward with a non-trivial upstream gradient, and the
  ``grad_fn`` name, against real PyTorch on the same inputs, in float32 and float64;
* non-contiguous inputs are made by slicing a larger array (both libraries see the same strided data).
"""
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence, Tuple

import numpy as np

import gradiente

try:
    import torch
except ImportError:  # pragma: no cover - the reference is optional for gradcheck-only runs
    torch = None


@dataclass
class OpSpec:
    name: str
    fn: Callable                                  # fn(lib, *tensors) -> tensor (or tuple; first is checked)
    shapes: Sequence[Tuple[tuple, ...]]           # one tuple of input shapes per case
    domain: Tuple[float, float] = (-2.0, 2.0)
    grad_inputs: Optional[Sequence[int]] = None   # which inputs require grad (default: all)
    make_inputs: Optional[Callable] = None        # make_inputs(rng, shapes) -> list of ndarrays (overrides domain)
    gradcheck: bool = True
    torch_grad: bool = True
    rtol32: float = 1e-5
    atol32: float = 1e-5
    check_name: bool = True
    dtypes: Tuple[str, ...] = ("float32", "float64")
    extra: dict = field(default_factory=dict)

    def __str__(self):
        return self.name


def make_arrays(spec, shapes, seed, dtype="float64"):
    rng = np.random.RandomState(seed)
    if spec.make_inputs is not None:
        arrays = spec.make_inputs(rng, shapes)
    else:
        lo, hi = spec.domain
        arrays = [rng.uniform(lo, hi, size=s) for s in shapes]
    return [a.astype(dtype) if a.dtype.kind == "f" else a for a in arrays]


def non_contiguous(array):
    """The same values in a strided (non-contiguous) array, when the shape allows one."""
    if array.ndim == 0 or array.size < 2:
        return array
    big = np.zeros(array.shape[:-1] + (array.shape[-1] * 2,), dtype=array.dtype)
    big[..., ::2] = array
    view = big[..., ::2]
    assert not view.flags.c_contiguous
    return view


def _grad_flags(spec, arrays):
    idx = spec.grad_inputs if spec.grad_inputs is not None else range(len(arrays))
    return [i in idx and a.dtype.kind == "f" for i, a in enumerate(arrays)]


def _first(out):
    return out[0] if isinstance(out, (tuple, list)) else out


def check_gradcheck(spec, shapes, seed=0, contiguous=True):
    arrays = make_arrays(spec, shapes, seed)
    if not contiguous:
        arrays = [non_contiguous(a) for a in arrays]
    flags = _grad_flags(spec, arrays)
    inputs = [gradiente.from_numpy(a).requires_grad_(f) if f else gradiente.from_numpy(a)
              for a, f in zip(arrays, flags)]

    def fn(*xs):
        return _first(spec.fn(gradiente, *xs))

    assert gradiente.autograd.gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3)


def check_against_torch(spec, shapes, dtype, seed=0, contiguous=True):
    assert torch is not None
    arrays = make_arrays(spec, shapes, seed, dtype)
    if not contiguous:
        arrays = [non_contiguous(a) for a in arrays]
    flags = _grad_flags(spec, arrays)
    g_in = [gradiente.from_numpy(a.copy()).requires_grad_(f) if f else gradiente.from_numpy(a.copy())
            for a, f in zip(arrays, flags)]
    t_in = [torch.from_numpy(a.copy()).requires_grad_(f) if f else torch.from_numpy(a.copy())
            for a, f in zip(arrays, flags)]
    g_out, t_out = _first(spec.fn(gradiente, *g_in)), _first(spec.fn(torch, *t_in))
    rtol, atol = (spec.rtol32, spec.atol32) if dtype == "float32" else (1e-10, 1e-12)
    np.testing.assert_allclose(g_out.detach().numpy(), t_out.detach().numpy(), rtol=rtol, atol=atol,
                               err_msg=f"{spec.name}: forward differs")
    assert str(g_out.dtype).split(".")[-1] == str(t_out.dtype).split(".")[-1], f"{spec.name}: dtype differs"
    if not any(flags) or not spec.torch_grad:
        return
    if spec.check_name:
        assert type(g_out.grad_fn).__name__ == type(t_out.grad_fn).__name__, \
            f"{spec.name}: grad_fn {type(g_out.grad_fn).__name__} != {type(t_out.grad_fn).__name__}"
    upstream = np.random.RandomState(seed + 1).uniform(0.5, 1.5, size=tuple(t_out.shape)).astype(dtype)
    g_out.backward(gradiente.from_numpy(upstream.copy()))
    t_out.backward(torch.from_numpy(upstream.copy()))
    for i, (g, t) in enumerate(zip(g_in, t_in)):
        if t.grad is None:
            assert g.grad is None or not np.any(g.grad.numpy()), f"{spec.name}: unexpected grad for input {i}"
            continue
        assert g.grad is not None, f"{spec.name}: missing grad for input {i}"
        np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=rtol * 10, atol=atol * 10,
                                   err_msg=f"{spec.name}: grad of input {i} differs")


def cases(specs):
    """pytest parameters: (spec, shapes) for every spec and each of its shape cases."""
    import pytest
    return [pytest.param(s, sh, id=f"{s.name}-{'x'.join(str(d) for d in sh[0]) or 'scalar'}-{k}")
            for s in specs for k, sh in enumerate(s.shapes)]


def check_same_error(fn):
    """``fn(lib)`` raises in PyTorch; gradiente must raise the same exception type with the same message."""
    import pytest
    assert torch is not None
    with pytest.raises(Exception) as expected:
        fn(torch)
    with pytest.raises(type(expected.value)) as got:
        fn(gradiente)
    assert str(got.value) == str(expected.value)
