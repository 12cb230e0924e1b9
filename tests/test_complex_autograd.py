"""Autograd through complex numbers, against PyTorch: the gradient of a real loss L of complex z is
dL/d(Re z) + i·dL/d(Im z) (PyTorch's conjugate Wirtinger convention), a real input that meets complex numbers
gets the real part, and forward mode carries complex tangents.

Each op of ``OPS`` runs in both libraries on the same complex inputs (and a real one), with a complex upstream
gradient: the gradients must agree in dtype and value, in complex128 and complex64; then gradcheck (backward and
forward mode) in complex128, and forward-mode tangents against PyTorch's. The rest pins down the edges:
refusals, casts, copies, views changed in place, gradcheck's messages.
"""
import re
import warnings

import numpy as np
import pytest

import gradiente

torch = pytest.importorskip("torch")

_rng = np.random.RandomState(0)
A = _rng.randn(3, 3) + 1j * _rng.randn(3, 3)
B = _rng.randn(3, 3) + 1j * _rng.randn(3, 3)
R = _rng.rand(3, 3) + 0.5       # a real input, kept positive (log, sqrt, powers)

# name -> fn(lib, a, b, r): a, b complex 3x3, r real 3x3
OPS = {
    "add": lambda lib, a, b, r: a + b * 2,
    "sub": lambda lib, a, b, r: a - b,
    "mul": lambda lib, a, b, r: a * b,
    "mul_real_tensor": lambda lib, a, b, r: a * r,
    "mul_complex_number": lambda lib, a, b, r: a * (1 - 2j),
    "div": lambda lib, a, b, r: a / b,
    "real_over_complex": lambda lib, a, b, r: r / a,
    "neg": lambda lib, a, b, r: -a,
    "reciprocal": lambda lib, a, b, r: a.reciprocal(),
    "pow_number": lambda lib, a, b, r: a ** 3,
    "pow_complex_number": lambda lib, a, b, r: a ** (0.5 + 1j),
    "pow_tensor": lambda lib, a, b, r: a ** b,
    "real_base_complex_exponent": lambda lib, a, b, r: (-r) ** a,
    "number_base": lambda lib, a, b, r: 2 ** a,
    "negative_number_base": lambda lib, a, b, r: (-1.5) ** a,
    "exp": lambda lib, a, b, r: a.exp(),
    "log": lambda lib, a, b, r: a.log(),
    "sin": lambda lib, a, b, r: a.sin(),
    "cos": lambda lib, a, b, r: a.cos(),
    "tanh": lambda lib, a, b, r: a.tanh(),
    "sqrt": lambda lib, a, b, r: a.sqrt(),
    "sigmoid": lambda lib, a, b, r: a.sigmoid(),
    "abs": lambda lib, a, b, r: a.abs() * r,
    "sgn": lambda lib, a, b, r: a.sgn(),
    "angle": lambda lib, a, b, r: a.angle(),
    "conj": lambda lib, a, b, r: a.conj() * b,
    "real_imag": lambda lib, a, b, r: a.real * b.imag,
    "view_as_real": lambda lib, a, b, r: lib.view_as_real(a * b) * r[..., None],
    "view_as_complex": lambda lib, a, b, r: lib.view_as_complex(lib.stack([r, r * r], -1)) * a,
    "complex": lambda lib, a, b, r: lib.complex(r, r * 3) * a,
    "polar": lambda lib, a, b, r: lib.polar(r, r * 2) * a,
    "to_complex": lambda lib, a, b, r: r.to(lib.complex128 if a.dtype == lib.complex128 else lib.complex64) * a,
    "sum": lambda lib, a, b, r: (a * b).sum(0),
    "mean": lambda lib, a, b, r: (a * a).mean(),
    "prod": lambda lib, a, b, r: a.prod(1),
    "cumsum": lambda lib, a, b, r: (a * b).cumsum(0),
    "cumprod": lambda lib, a, b, r: a.cumprod(1),
    "matmul": lambda lib, a, b, r: a @ b,
    "matmul_real": lambda lib, a, b, r: a @ r.to(a.dtype),
    "bmm": lambda lib, a, b, r: lib.bmm(a[None], b[None]),
    "mv": lambda lib, a, b, r: lib.mv(a, b[0]),
    "dot": lambda lib, a, b, r: lib.dot(a[0], b[1]),
    "vdot": lambda lib, a, b, r: lib.vdot(a[0], b[1]),
    "einsum": lambda lib, a, b, r: lib.einsum("ij,jk->ik", a, b),
    "trace": lambda lib, a, b, r: (a * b).trace(),
    "views": lambda lib, a, b, r: a.t().reshape(9)[2:].unsqueeze(0).expand(2, 7) * b.flatten()[:7],
    "indexing": lambda lib, a, b, r: a[[0, 2]] * b[1] + a[:, 1:].sum(),
    "cat_stack": lambda lib, a, b, r: lib.cat([a, b]) * lib.stack([b, a]).reshape(6, 3),
    "where": lambda lib, a, b, r: lib.where(r > 1, a, b * b),
    "masked_fill": lambda lib, a, b, r: (a * b).masked_fill(r > 1, 2.0),
    "addcmul": lambda lib, a, b, r: lib.addcmul(a, a, b, value=0.5),
    "lerp": lambda lib, a, b, r: lib.lerp(a, b, 0.3),
    "abs_of_product": lambda lib, a, b, r: (a * b).abs().sum(),
}


def _run(lib, name, dtype, seed=1):
    cdtype, rdtype = (lib.complex128, lib.float64) if dtype == "complex128" else (lib.complex64, lib.float32)
    a = lib.tensor(A, dtype=cdtype, requires_grad=True)
    b = lib.tensor(B, dtype=cdtype, requires_grad=True)
    r = lib.tensor(R, dtype=rdtype, requires_grad=True)
    out = OPS[name](lib, a, b, r)
    rng = np.random.RandomState(seed)
    upstream = rng.randn(*out.shape) + (1j * rng.randn(*out.shape) if out.is_complex() else 0)
    out.backward(lib.tensor(upstream, dtype=out.dtype))
    return out, [None if t.grad is None else t.grad.resolve_conj().numpy().copy() for t in (a, b, r)]


@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
@pytest.mark.parametrize("name", list(OPS))
def test_gradients_match_torch(name, dtype):
    ours, our_grads = _run(gradiente, name, dtype)
    theirs, their_grads = _run(torch, name, dtype)
    if name != "einsum":        # PyTorch's einsum decomposes into views and bmm; gradiente's is one node
        assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
    rtol, atol = (1e-10, 1e-12) if dtype == "complex128" else (2e-5, 2e-5)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().resolve_conj().numpy(), rtol=rtol, atol=atol)
    for mine, expected in zip(our_grads, their_grads):
        assert (mine is None) == (expected is None)
        if expected is not None:
            assert mine.dtype == expected.dtype
            np.testing.assert_allclose(mine, expected, rtol=rtol, atol=atol)


# ops whose derivative is smooth at these inputs, for finite differences (abs and angle are, away from 0)
GRADCHECKED = [n for n in OPS if n not in ("where", "masked_fill")]


def _gradcheck_inputs():
    return (gradiente.tensor(A, requires_grad=True), gradiente.tensor(B, requires_grad=True),
            gradiente.tensor(R, requires_grad=True))


@pytest.mark.parametrize("name", GRADCHECKED)
def test_gradcheck_backward_and_forward_mode(name):
    # PyTorch's pow tangent keeps only the real part of a real base's term (see arithmetic._real_base_share), which
    # finite differences do not: as in PyTorch, forward mode is checked there against PyTorch alone
    forward = name != "real_base_complex_exponent"
    assert gradiente.autograd.gradcheck(lambda a, b, r: OPS[name](gradiente, a, b, r), _gradcheck_inputs(),
                                        check_forward_ad=forward)


@pytest.mark.parametrize("name", ["mul", "div", "exp", "abs", "sgn", "angle", "pow_tensor", "matmul", "vdot",
                                  "view_as_real", "polar", "to_complex", "cumprod"])
def test_gradgradcheck(name):
    assert gradiente.autograd.gradgradcheck(lambda a, b, r: OPS[name](gradiente, a, b, r), _gradcheck_inputs())


def _tangents(lib, name):
    fw = lib.autograd.forward_ad
    rng = np.random.RandomState(3)
    with fw.dual_level():
        duals = [fw.make_dual(lib.tensor(p), lib.tensor(rng.randn(*p.shape) + (1j * rng.randn(*p.shape)
                                                                              if np.iscomplexobj(p) else 0)))
                 for p in (A, B, R)]
        return fw.unpack_dual(OPS[name](lib, *duals)).tangent.resolve_conj().numpy().copy()


@pytest.mark.parametrize("name", list(OPS))
def test_forward_mode_matches_torch(name):
    np.testing.assert_allclose(_tangents(gradiente, name), _tangents(torch, name), rtol=1e-10, atol=1e-12)


# --- the edges ---------------------------------------------------------------------------------------------

def _error(fn, lib):
    with pytest.raises(Exception) as info:
        fn(lib)
    return type(info.value), str(info.value).split(" (Triggered")[0]


def test_complex_output_needs_a_gradient_and_takes_a_complex_one():
    def implicit(lib):
        (lib.tensor([1.0], requires_grad=True) * 0.5j).sum().backward()
    ours, theirs = _error(implicit, gradiente), _error(implicit, torch)
    assert ours[0] is theirs[0] and ours[1].startswith("grad can be implicitly created only for real scalar outputs")
    grads = []
    for lib in (gradiente, torch):
        x = lib.tensor([1.0, -2.0], dtype=lib.float64, requires_grad=True)
        (x * (2 + 1j)).backward(lib.tensor([1 - 1j, 3j]))
        grads.append(x.grad.numpy())
    assert grads[0].dtype == np.float64    # a real leaf keeps the real part of its complex gradient
    np.testing.assert_array_equal(*grads)


def test_copy_and_cast_between_real_and_complex():
    for make in (lambda lib, r: lib.empty(3, 2, dtype=lib.complex128).copy_(r), lambda lib, r: r.to(lib.complex128)):
        grads = []
        for lib in (gradiente, torch):
            r = lib.tensor(R[:, :2], requires_grad=True)
            out = make(lib, r).sum()
            assert out.dtype == lib.complex128
            (out * (1 + 2j)).abs().backward()
            grads.append(r.grad.numpy())
        np.testing.assert_allclose(*grads, rtol=1e-14)
    for lib in (gradiente, torch):      # complex to real drops the imaginary part, with PyTorch's warning
        z = lib.tensor(A, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            z.to(lib.float64).sum().backward()
        assert any("Casting complex values to real discards the imaginary part" in str(w.message) for w in caught)
        np.testing.assert_array_equal(z.grad.numpy(), np.ones((3, 3), complex))


def test_rules_written_for_real_numbers_only_are_refused():
    x = gradiente.tensor([1 + 1j, 2 - 1j], requires_grad=True)
    with pytest.raises(NotImplementedError, match="through AcoshBackward0 yet"):
        x.acosh().abs().sum().backward()


def test_abs_of_a_complex_scalar_is_real():
    for lib in (gradiente, torch):
        z = lib.tensor(3 + 4j, requires_grad=True)
        out = z.abs()
        assert out.dtype == lib.float32 and out.item() == 5.0
        out.backward()
        assert z.grad.item() == pytest.approx(0.6 + 0.8j)


@pytest.mark.parametrize("program", [
    lambda lib, x: lib.view_as_real(lib.view_as_complex(x.clone())).mul_(2),
    lambda lib, x: lib.view_as_complex(x.clone()).reshape(4).mul_(1 + 1j),
    lambda lib, x: lib.view_as_real(lib.view_as_complex(x.clone()).reshape(2, 2)).transpose(0, 1).add_(1),
    lambda lib, x: lib.view_as_complex(x.clone())[1].mul_(lib.view_as_complex(x)[0]),
])
def test_in_place_changes_through_views_of_another_dtype(program):
    """view_as_real of a complex base and view_as_complex of a real one, changed in place: the base's gradient
    keeps real and imaginary parts apart."""
    data = np.random.RandomState(4).randn(2, 2, 2)
    grads = []
    for lib in (gradiente, torch):
        x = lib.tensor(data, requires_grad=True)
        out = program(lib, x)
        base = out._base
        (lib.view_as_real(base) if base.is_complex() else base).pow(2).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(*grads, rtol=1e-12)


def test_gradcheck_names_the_part_of_a_complex_number_that_mismatched():
    def wrong(x):       # a hook adds to the gradient: the analytical Jacobian is off
        y = x.clone()
        y.register_hook(lambda g: g + 1e-2)
        return y
    for make, part in ((lambda lib: lib.ones(2, dtype=lib.complex128, requires_grad=True), "complex outputs"),
                       (lambda lib: lib.ones(2, dtype=lib.float64, requires_grad=True), None)):
        messages = []
        for lib in (gradiente, torch):
            with pytest.raises(RuntimeError) as info:
                lib.autograd.gradcheck(wrong, (make(lib),))
            messages.append(str(info.value).splitlines()[0])
        assert messages[0] == messages[1]
        assert (part in messages[0]) if part else "While considering" not in messages[0]
    assert messages[0] == "Jacobian mismatch for output 0 with respect to input 0,"

    def bad_tangent(x):
        fw = gradiente.autograd.forward_ad
        if fw._current_level >= 0:
            primal, tangent = fw.unpack_dual(x)
            x = fw.make_dual(primal, tangent * 1.1)
        return x * 2
    z = gradiente.ones(2, dtype=gradiente.complex128, requires_grad=True)
    with pytest.raises(RuntimeError, match=re.escape("While considering the imaginary part of complex inputs only, "
                                                     "Jacobian computed with forward mode mismatch")):
        gradiente.autograd.gradcheck(bad_tangent, (z,), check_forward_ad=True, check_backward_ad=False)


def test_make_dual_copies_a_tangent_whose_conjugate_or_negative_bit_differs():
    fw = gradiente.autograd.forward_ad
    x, t = gradiente.tensor([1 + 2j, -1j]), gradiente.tensor([0.5j, 2 + 0j])
    with fw.dual_level():
        assert fw.unpack_dual(fw.make_dual(x, t)).tangent is t
        conj_t = t.conj()
        assert fw.unpack_dual(fw.make_dual(x.conj(), conj_t)).tangent is conj_t
        copied = fw.unpack_dual(fw.make_dual(x, conj_t)).tangent
        assert copied is not conj_t and not copied.is_conj() and copied.tolist() == conj_t.tolist()
        negated = fw.unpack_dual(fw.make_dual(x._neg_view(), t)).tangent
        assert negated is not t and negated.is_neg()
    for lib in (gradiente, torch):
        y = lib.tensor([1 + 2j], requires_grad=True)
        n = y._neg_view()
        assert n.is_neg() and type(n.grad_fn).__name__ == "NegViewBackward0" and not n._neg_view().is_neg()
