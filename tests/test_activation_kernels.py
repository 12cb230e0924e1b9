"""ELU, SELU, CELU, softplus and Mish in float32 as PyTorch's CPU kernels compute them: Sleef's ``expm1``, ``exp``,
``log1p`` and ``tanh`` on the vectors of PyTorch's loop, the C library's (``core/c_fdlibm.py``) on each run's last
elements, the kernels' own products and fused multiply-adds. Forward and backward compared with torch 2.13 element
by element, on arrays with and without a scalar tail, and the C library's functions with the machine's libm."""
import ctypes
import ctypes.util

import numpy as np
import pytest
import torch

import gradiente
from gradiente.core import c_fdlibm

pytestmark = pytest.mark.usefixtures("torch_on_one_thread")

_SHAPES = [(7,), (33,), (8, 64), (4, 5, 7), (1000,)]
_FUNCTIONS = [("elu", {}), ("elu", {"alpha": 0.5}), ("selu", {}), ("celu", {"alpha": 1.3}), ("softplus", {}),
              ("softplus", {"beta": 2.0, "threshold": 10.0}), ("mish", {})]


@pytest.mark.parametrize("name, kwargs", _FUNCTIONS)
@pytest.mark.parametrize("shape", _SHAPES)
def test_forward_and_backward_equal_pytorchs(name, kwargs, shape):
    rng = np.random.default_rng(len(shape) + shape[-1])
    x = (rng.standard_normal(shape) * 3).astype(np.float32)
    grad = rng.standard_normal(shape).astype(np.float32)
    results = []
    for lib in (torch, gradiente):
        xt = lib.tensor(x, requires_grad=True)
        y = getattr(lib.nn.functional, name)(xt, **kwargs)
        y.backward(lib.tensor(grad))
        results.append((y.detach().numpy(), xt.grad.numpy()))
    (y_t, dx_t), (y_g, dx_g) = results
    assert np.array_equal(y_g, y_t)
    assert np.array_equal(dx_g, dx_t)


@pytest.mark.parametrize("name", ["elu", "selu", "celu"])
def test_the_in_place_forms_equal_pytorchs(name):
    x = (np.random.default_rng(5).standard_normal(77) * 3).astype(np.float32)
    grad = np.random.default_rng(6).standard_normal(77).astype(np.float32)
    results = []
    for lib in (torch, gradiente):
        xt = lib.tensor(x, requires_grad=True)
        y = getattr(lib.nn.functional, name)(xt * 1, inplace=True)
        y.backward(lib.tensor(grad))
        results.append((y.detach().numpy(), xt.grad.numpy()))
    assert np.array_equal(results[1][0], results[0][0])
    assert np.array_equal(results[1][1], results[0][1])


def _libm(*names):
    found = ctypes.util.find_library("m")
    if found is None:
        pytest.skip("no C math library to compare with")
    libm = ctypes.CDLL(found)
    for function in names:
        getattr(libm, function).restype = ctypes.c_float
        getattr(libm, function).argtypes = [ctypes.c_float]
    return libm


@pytest.mark.parametrize("name", ["expm1f", "log1pf"])
def test_the_c_librarys_functions(name):
    rng = np.random.default_rng(len(name))
    x = np.concatenate([rng.uniform(-1, 3, 20_000), np.exp(rng.uniform(-40, 80, 20_000)), -rng.random(10_000),
                        rng.uniform(-100, 90, 10_000), rng.standard_normal(5000) * 1e-4,
                        [0, -0.0, -1, -1.5, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 88.72, 88.73, -18.72, 4e17]])
    x = x.astype(np.float32)
    libm = _libm(name)
    theirs = np.array([getattr(libm, name)(float(v)) for v in x], np.float32)
    ours = getattr(c_fdlibm, "c_" + name)(x)
    numbers = ~np.isnan(theirs)
    assert np.array_equal(ours.view(np.uint32)[numbers], theirs.view(np.uint32)[numbers])
    assert np.isnan(ours[~numbers]).all()
