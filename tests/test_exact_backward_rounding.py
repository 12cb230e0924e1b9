"""Backward kernels that round as PyTorch's do, to the last bit, and their second-derivative nodes.

PyTorch's CPU kernel for tanh's derivative computes ``grad * (1 - y*y)`` with ``1 - y*y`` as one fused
multiply-add, and sigmoid's as ``(grad * (1 - y)) * y``; any other rounding changes the last bit of about a third
of the gradients. It shows when a learner checks a gradient derived by hand for exact equality, as the makemore
lecture "Becoming a backprop ninja" does (``torch.all(dt == t.grad)``): PyTorch prints ``exact: False`` for
``hpreact``, and so must gradiente. Under ``create_graph`` each derivative is one node, TanhBackwardBackward0 or
SigmoidBackwardBackward0, as in PyTorch.
"""
from fractions import Fraction

import numpy as np
import pytest
from harness import OpSpec, backward_of, spec_tests

import gradiente
from gradiente.core.fused import fma, one_minus_square

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["tanh", "sigmoid"])
def test_the_backward_kernel_rounds_as_pytorchs(name, dtype):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(50_000).astype(dtype) * 2
    grad = rng.standard_normal(50_000).astype(dtype)
    ours = gradiente.tensor(x, requires_grad=True)
    out = getattr(ours, name)()
    out.backward(gradiente.tensor(grad))
    # PyTorch's kernel applied to gradiente's own output: the same formula, the same rounding
    reference = getattr(torch.ops.aten, f"{name}_backward")(torch.tensor(grad), torch.tensor(out.detach().numpy()))
    assert np.array_equal(ours.grad.numpy(), reference.numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_multiply_add_rounds_once(dtype):
    # (1 + 2⁻ᵏ)² - 1 = 2⁻ᵏ⁺¹ + 2⁻²ᵏ: the last term is lost if the product is rounded before the sum
    k = 12 if dtype is np.float32 else 27
    a = np.array([1 + 2.0 ** -k], dtype)
    assert fma(a, a, dtype(-1), dtype)[0] == 2.0 ** (1 - k) + 2.0 ** (-2 * k)
    assert (a * a - 1)[0] == 2.0 ** (1 - k)


def test_one_minus_square_of_a_0d_float32_tie():
    """Seed 170619: 1 - y² of a 0-d float32 y (tanh's output) that lands on a float32 tie in float64 goes to fma's
    tie step, which wrote into the NumPy scalar that a sum of 0-d arrays is (TypeError)."""
    y = np.float32(0.73205566)
    assert (np.float64(1.0 - np.float64(y) ** 2).view(np.uint64) & 0x1FFFFFFF) == 0x10000000     # a tie indeed
    reference = torch.ops.aten.tanh_backward(torch.tensor(1.0), torch.tensor(y)).item()
    assert one_minus_square(np.array(y)) == reference
    assert one_minus_square(np.array([y]))[0] == reference


def test_float64_fused_multiply_add_is_correctly_rounded():
    rng = np.random.default_rng(0)
    x, y, z = (rng.standard_normal(500) * 10.0 ** rng.integers(-5, 5, 500) for _ in range(3))
    # the exact value as a fraction, rounded once to the nearest double by float()
    exact = [float(Fraction(p) * Fraction(q) + Fraction(r)) for p, q, r in zip(x, y, z)]
    assert np.array_equal(fma(x, y, z), np.array(exact))


def test_backprop_by_hand_is_exact_where_pytorchs_is():
    rows = []
    for lib in (torch, gradiente):
        g = lib.Generator().manual_seed(2147483647)
        pre = lib.randn(32, 64, generator=g, requires_grad=True)
        h = lib.tanh(pre)
        dh = lib.randn(32, 64, generator=g)
        (h * dh).sum().backward()
        by_hand = (1.0 - h ** 2) * dh
        rows.append((lib.all(by_hand == pre.grad).item(), lib.allclose(by_hand, pre.grad)))
    assert rows[0] == rows[1] == (False, True)


@pytest.mark.parametrize("name", ["tanh", "sigmoid"])
def test_create_graph_records_pytorchs_node_with_the_same_values(name):
    x = gradiente.tensor([0.3, -1.2, 2.0], requires_grad=True)
    tx = torch.tensor(x.detach().numpy(), requires_grad=True)
    v = [0.5, 1.5, -2.0]
    first, = gradiente.autograd.grad(getattr(x, name)(), x, gradiente.tensor(v), create_graph=True)
    plain, = gradiente.autograd.grad(getattr(x, name)(), x, gradiente.tensor(v))
    t_first, = torch.autograd.grad(getattr(tx, name)(), tx, torch.tensor(v), create_graph=True)
    assert first.grad_fn.name() == t_first.grad_fn.name() == f"{name.capitalize()}BackwardBackward0"
    assert [type(n).__name__ if n else None for n, _ in first.grad_fn.next_functions] == \
           [type(n).__name__ if n else None for n, _ in t_first.grad_fn.next_functions]
    assert np.array_equal(first.detach().numpy(), plain.numpy())      # create_graph changes no bit
    second, = gradiente.autograd.grad(first.sum(), x)
    t_second, = torch.autograd.grad(t_first.sum(), tx)
    np.testing.assert_allclose(second.numpy(), t_second.numpy(), rtol=1e-6)


def _double_backward_spec(name):
    return OpSpec(f"{name}_backward", backward_of(lambda lib, x: getattr(lib, name)(x)), [((3, 4), (3, 4))],
                  dtypes=("float64", "float32"))


SPECS = [_double_backward_spec("tanh"), _double_backward_spec("sigmoid")]
test_spec_gradcheck, test_spec_against_torch, test_spec_gradgradcheck = spec_tests(SPECS)
