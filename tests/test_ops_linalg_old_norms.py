"""``nuclear_norm``, ``frobenius_norm`` and ``native_norm`` (``ops/linalg_old_norms.py``), the torch-level norms
PyTorch keeps for old programs, against PyTorch: values, gradients and grad_fn names (table-driven, with float64
gradchecks), the overloads of their arguments, the deprecation warnings, and the errors."""
import warnings

import numpy as np
import pytest
from harness import OpSpec, check_same_error, spec_tests

import gradiente
from gradiente.ops import linalg_old_norms

torch = pytest.importorskip("torch")
# the deprecation warnings are checked once, below
pytestmark = pytest.mark.filterwarnings("ignore:.*_norm is deprecated and it is just left for JIT compatibility")

SPECS = [
    OpSpec("frobenius_norm", lambda lib, x: lib.frobenius_norm(x, (0, 1)), [((3, 4),), ((2, 3, 4),)]),
    OpSpec("frobenius_norm_one_dim", lambda lib, x: lib.frobenius_norm(x, 1, True), [((2, 3),)]),
    OpSpec("frobenius_norm_all", lambda lib, x: lib.frobenius_norm(x, ()), [((2, 3),)]),
    OpSpec("frobenius_norm_negative_dims", lambda lib, x: lib.frobenius_norm(x, [-1, 0], keepdim=True),
           [((2, 3, 2),)]),
    OpSpec("nuclear_norm", lambda lib, x: lib.nuclear_norm(x), [((3, 4),), ((2, 3, 3),)]),
    OpSpec("nuclear_norm_keepdim", lambda lib, x: lib.nuclear_norm(x, True), [((2, 4, 3),)]),
    OpSpec("nuclear_norm_dims", lambda lib, x: lib.nuclear_norm(x, (0, 2), keepdim=True), [((3, 2, 4),)]),
]

test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


def test_frobenius_norm_of_zeros_has_a_zero_gradient_and_complex_and_bfloat16_inputs():
    for lib in (gradiente, torch):
        x = lib.zeros(3, 4, requires_grad=True)
        lib.frobenius_norm(x, (0, 1)).backward()
        assert not x.grad.any()
    z = np.random.default_rng(0).standard_normal((2, 3)) + 1j * np.random.default_rng(1).standard_normal((2, 3))
    ours, theirs = gradiente.tensor(z, requires_grad=True), torch.tensor(z, requires_grad=True)
    out, t_out = gradiente.frobenius_norm(ours, (0, 1)), torch.frobenius_norm(theirs, (0, 1))
    assert out.dtype == gradiente.float64 and type(out.grad_fn).__name__ == type(t_out.grad_fn).__name__
    out.backward()
    t_out.backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12)
    half = gradiente.frobenius_norm(gradiente.ones(2, 3, dtype=gradiente.bfloat16), (0, 1))
    assert half.dtype == gradiente.bfloat16
    assert float(half) == float(torch.frobenius_norm(torch.ones(2, 3, dtype=torch.bfloat16), (0, 1)))


def test_deprecation_warnings_are_torchs_once(monkeypatch):
    monkeypatch.setattr(linalg_old_norms, "_warned", set())
    for name, call in (("nuclear_norm", lambda lib: lib.nuclear_norm(lib.ones(2, 2))),
                       ("frobenius_norm", lambda lib: lib.frobenius_norm(lib.ones(2, 2), (0, 1)))):
        with warnings.catch_warnings(record=True) as ours:
            warnings.simplefilter("always")
            call(gradiente)
            call(gradiente)
        assert len(ours) == 1 and ours[0].category is UserWarning
        assert str(ours[0].message).startswith(f"at::{name} is deprecated and it is just left for JIT compatibility.")
        assert "Please use `linalg." in str(ours[0].message)


def test_native_norm_of_sparse_tensors_matches_torch():
    dense = np.random.default_rng(3).standard_normal((3, 4)) * (np.arange(12).reshape(3, 4) % 3 > 0)
    for p, dim in ((2, None), (1, None), (3, [0, 1]), (None, []), (float("inf"), None), (0, None)):
        args = (p,) if dim is None else (p, dim, False, None)
        ours = gradiente.native_norm(gradiente.tensor(dense).to_sparse(), *args)
        theirs = torch.native_norm(torch.tensor(dense).to_sparse(), *args)
        assert ours.dtype == gradiente.float64 and ours.shape == ()
        np.testing.assert_allclose(float(ours), float(theirs), rtol=1e-12)


ERRORS = [
    ("nuclear_norm_1d", lambda lib: lib.nuclear_norm(lib.ones(3))),
    ("nuclear_norm_int", lambda lib: lib.nuclear_norm(lib.ones(3, 3, dtype=lib.int32))),
    ("nuclear_norm_one_int_dim", lambda lib: lib.nuclear_norm(lib.ones(3, 3), 0)),
    ("nuclear_norm_one_dim", lambda lib: lib.nuclear_norm(lib.ones(2, 3, 4), dim=(1,))),
    ("nuclear_norm_dim_range", lambda lib: lib.nuclear_norm(lib.ones(2, 3), (0, 5))),
    ("frobenius_norm_three_dims", lambda lib: lib.frobenius_norm(lib.ones(2, 3, 4), (0, 1, 2))),
    ("frobenius_norm_int", lambda lib: lib.frobenius_norm(lib.ones(3, 4, dtype=lib.int32), (0, 1))),
    ("frobenius_norm_repeated", lambda lib: lib.frobenius_norm(lib.ones(2, 3), (0, 0))),
    ("frobenius_norm_dim_range", lambda lib: lib.frobenius_norm(lib.ones(2, 3), (0, 5))),
    ("native_norm_keepdim", lambda lib: lib.native_norm(lib.ones(2, 3).to_sparse(), 2, [0, 1], True, None)),
    ("native_norm_partial", lambda lib: lib.native_norm(lib.ones(2, 3).to_sparse(), 2, [0], False, None)),
    ("native_norm_dtype", lambda lib: lib.native_norm(lib.ones(2, 3).to_sparse(), 2, [0, 1], False, lib.float64)),
]


@pytest.mark.parametrize("name,fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name, fn):
    check_same_error(fn)


def test_native_norm_refuses_a_dense_tensor_as_torch():
    for lib in (gradiente, torch):
        with pytest.raises(NotImplementedError) as error:
            lib.native_norm(lib.ones(2, 3))
        assert str(error.value).startswith("Could not run 'aten::native_norm' with arguments from the 'CPU' backend.")
