"""Forward-mode AD (``gradiente.autograd.forward_ad``) against PyTorch's own, on the same inputs and tangents.

Each case runs one program twice, once with each library: the primals and tangents are the same float64 arrays,
the program makes dual tensors, runs, and unpacks; the primal and the tangent of the result must agree. Then what a
table cannot say: a small MLP's directional derivative against central differences, the levels and their errors,
views and in-place changes of dual tensors, and forward-over-reverse (a Hessian-vector product).
"""
import numpy as np
import pytest

import gradiente
import gradiente.autograd.forward_ad as fwad

torch = pytest.importorskip("torch")
import torch.autograd.forward_ad as torch_fwad  # noqa: E402
from harness import on_both, plain  # noqa: E402


def _fwad(lib):
    return fwad if lib is gradiente else torch_fwad


def run_dual(lib, fn, primals, tangents):
    """``fn(lib, *duals)`` inside a dual level; its (primal, tangent) as arrays (the tangent None if it has none)."""
    ad = _fwad(lib)
    with ad.dual_level():
        duals = [ad.make_dual(lib.tensor(p), lib.tensor(t)) if t is not None else lib.tensor(p)
                 for p, t in zip(primals, tangents)]
        out = fn(lib, *duals)
        primal, tangent = ad.unpack_dual(out)
        return (primal.detach().numpy().copy(),
                None if tangent is None else tangent.detach().numpy().copy())


def check_against_torch(fn, shapes, tangents=None, seed=0, domain=(-2.0, 2.0)):
    rng = np.random.RandomState(seed)
    primals = [rng.uniform(*domain, size=s) for s in shapes]
    given = [rng.standard_normal(s) for s in shapes]
    if tangents is not None:
        given = [t if i in tangents else None for i, t in enumerate(given)]
    ours = run_dual(gradiente, fn, primals, given)
    theirs = run_dual(torch, fn, primals, given)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-10, atol=1e-12)
    assert (ours[1] is None) == (theirs[1] is None)
    if ours[1] is not None:
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-9, atol=1e-11)


def F(lib):
    return lib.nn.functional


PROGRAMS = {
    # elementwise, and binary ops that broadcast
    "exp_sin": (lambda lib, x: lib.sin(x.exp()) * x, [(3, 4)]),
    "tanh_sigmoid": (lambda lib, x: lib.tanh(x) + lib.sigmoid(x) ** 2, [(5,)]),
    "add_broadcast": (lambda lib, x, y: x + y, [(2, 3), (3,)]),
    "mul_broadcast": (lambda lib, x, y: x * y - y / (x * x + 1), [(4, 1), (1, 3)]),
    "div_number": (lambda lib, x: 2.5 / (x * x + 1) - x * 3, [(3,)]),
    "only_second_input": (lambda lib, x, y: x * y + x.exp(), [(2, 3), (2, 3)]),
    "pow": (lambda lib, x, y: (x * x + 1) ** y, [(3,), (3,)]),
    # reductions
    "sum_dim": (lambda lib, x: x.sum(dim=1), [(3, 4)]),
    "mean_keepdim": (lambda lib, x: (x * x).mean(dim=0, keepdim=True), [(3, 4)]),
    "sum_all": (lambda lib, x: (x.exp() * x).sum(), [(2, 3, 2)]),
    # products
    "matmul": (lambda lib, x, y: x @ y, [(3, 4), (4, 2)]),
    "matmul_batched": (lambda lib, x, y: lib.matmul(x, y), [(2, 3, 4), (4, 5)]),
    "matvec": (lambda lib, x, y: x @ y, [(3, 4), (4,)]),
    # views and indexing
    "reshape_transpose": (lambda lib, x: x.reshape(4, 3).t() * 2, [(3, 4)]),
    "permute_unsqueeze": (lambda lib, x: x.permute(2, 0, 1).unsqueeze(1).exp(), [(2, 3, 4)]),
    "slice_select": (lambda lib, x: x[1:, ::2] + x[0, 1], [(3, 4)]),
    "advanced_index": (lambda lib, x: x[lib.tensor([2, 0, 2])] * x[:, lib.tensor([1, 0])].sum(), [(3, 2)]),
    "cat_stack": (lambda lib, x, y: lib.stack([lib.cat([x, y], 0), lib.cat([y, x], 0)], 1), [(2, 3), (2, 3)]),
    "split_unbind": (lambda lib, x: x.split(2, dim=1)[1] * x.unbind(0)[0][:2], [(3, 4)]),
    "where": (lambda lib, x, y: lib.where(x > 0, x * y, y.exp()), [(3, 3), (3, 3)]),
    # softmax and nn.functional
    "softmax": (lambda lib, x: lib.softmax(x, dim=1), [(3, 5)]),
    "log_softmax": (lambda lib, x: F(lib).log_softmax(x, dim=-1), [(4, 3)]),
    "linear": (lambda lib, x, w, b: F(lib).linear(x, w, b), [(5, 3), (2, 3), (2,)]),
    "mse_loss": (lambda lib, x, y: F(lib).mse_loss(x, y), [(4, 3), (4, 3)]),
    "mse_loss_none": (lambda lib, x, y: F(lib).mse_loss(x, y, reduction="none"), [(4, 3), (4, 3)]),
    "activations": (lambda lib, x: F(lib).gelu(x) + F(lib).silu(x) + F(lib).softplus(x) + F(lib).elu(x), [(6,)]),
    "relu_clamp": (lambda lib, x: F(lib).relu(x) * x.clamp(-0.5, 0.5) + F(lib).leaky_relu(x, 0.1), [(7,)]),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_against_torch(name):
    fn, shapes = PROGRAMS[name]
    check_against_torch(fn, shapes)


@pytest.mark.parametrize("tangents", [(0,), (1,)])
def test_tangent_on_one_input_of_two(tangents):
    check_against_torch(lambda lib, x, w: F(lib).linear(x, w).tanh(), [(4, 3), (2, 3)], tangents=tangents)


def _mlp(lib, params, x):
    w1, b1, w2, b2 = params
    h = lib.tanh(x @ w1.T + b1)
    return (h @ w2.T + b2).sum()


def test_mlp_directional_derivative_matches_central_differences():
    rng = np.random.RandomState(3)
    shapes = [(8, 4), (8,), (3, 8), (3,)]
    params = [rng.standard_normal(s) * 0.5 for s in shapes]
    directions = [rng.standard_normal(s) for s in shapes]
    x = gradiente.tensor(rng.standard_normal((5, 4)))
    with fwad.dual_level():
        duals = [fwad.make_dual(gradiente.tensor(p), gradiente.tensor(v)) for p, v in zip(params, directions)]
        derivative = fwad.unpack_dual(_mlp(gradiente, duals, x)).tangent.item()
    h = 1e-6
    plus = _mlp(gradiente, [gradiente.tensor(p + h * v) for p, v in zip(params, directions)], x).item()
    minus = _mlp(gradiente, [gradiente.tensor(p - h * v) for p, v in zip(params, directions)], x).item()
    assert derivative == pytest.approx((plus - minus) / (2 * h), rel=1e-6)


# --- the results of an op on a dual tensor ------------------------------------------------------------------

def test_outputs_do_not_require_grad_when_no_input_does():
    with fwad.dual_level():
        d = fwad.make_dual(gradiente.ones(3, dtype=gradiente.float64), gradiente.ones(3, dtype=gradiente.float64))
        y = d.exp()
        assert not y.requires_grad and y.grad_fn is None
        assert fwad.unpack_dual(y).tangent is not None


def test_integer_results_carry_no_tangent():
    with fwad.dual_level():
        d = fwad.make_dual(gradiente.randn(4, dtype=gradiente.float64), gradiente.randn(4, dtype=gradiente.float64))
        assert fwad.unpack_dual(d.argmax()).tangent is None
        assert fwad.unpack_dual(d > 0).tangent is None
        assert fwad.unpack_dual(d.long()).tangent is None


def test_tangents_are_deleted_on_leaving_the_level():
    with fwad.dual_level():
        d = fwad.make_dual(gradiente.ones(2), gradiente.ones(2))
        y = d * 2
    assert fwad.unpack_dual(d).tangent is None and fwad.unpack_dual(y).tangent is None
    with fwad.dual_level() as level:
        assert level == 0 and fwad.unpack_dual(y).tangent is None


def test_forward_mode_works_under_no_grad():
    x = gradiente.tensor([0.5, -1.0], dtype=gradiente.float64, requires_grad=True)
    with fwad.dual_level(), gradiente.no_grad():
        y = fwad.make_dual(x, gradiente.ones(2, dtype=gradiente.float64)).sin()
        assert y.grad_fn is None
        np.testing.assert_allclose(fwad.unpack_dual(y).tangent.numpy(), np.cos([0.5, -1.0]))


def test_unpacked_primal_is_a_view_without_the_tangent():
    x = gradiente.zeros(3, dtype=gradiente.float64)
    v = gradiente.ones(3, dtype=gradiente.float64)
    with fwad.dual_level():
        d = fwad.make_dual(x, v)
        primal, tangent = fwad.unpack_dual(d)
        assert tangent is v
        assert fwad.unpack_dual(primal).tangent is None
        primal.add_(1)                          # shares memory with x and d
        assert x.tolist() == [1.0, 1.0, 1.0] and d.tolist() == [1.0, 1.0, 1.0]


def test_unpack_dual_returns_a_named_tuple_outside_any_level():
    t = gradiente.ones(2)
    unpacked = fwad.unpack_dual(t)
    assert isinstance(unpacked, fwad.UnpackedDualTensor) and unpacked.primal is t and unpacked.tangent is None


def test_repr_shows_the_tangent_as_torch_does():
    def text(lib):
        ad = _fwad(lib)
        with ad.dual_level():
            return repr(ad.make_dual(lib.tensor([1.0, 2.0]), lib.tensor([0.5, 0.25])))
    assert text(gradiente) == text(torch)


# --- views and in-place changes -------------------------------------------------------------------------------

def _inplace_program(lib):
    ad = _fwad(lib)
    with ad.dual_level():
        d = ad.make_dual(lib.tensor([1.0, -2.0, 3.0], dtype=lib.float64),
                         lib.tensor([0.5, 1.0, -1.0], dtype=lib.float64))
        piece = d[:2]
        d.mul_(d.exp())                         # the view made before sees the new tangent
        results = [ad.unpack_dual(piece).tangent.tolist(), ad.unpack_dual(d).tangent.tolist()]
        plain = lib.zeros(2, 3, dtype=lib.float64)
        row = plain[1]
        late = plain[0]                         # a view made before its base had a tangent
        row.copy_(d)                            # the base gets one: zero outside the row
        results += [ad.unpack_dual(plain).tangent.tolist(), ad.unpack_dual(late).tangent.tolist()]
        w = lib.ones(3, dtype=lib.float64)
        w.add_(d.exp())                         # a tensor without a tangent gets one in place
        results.append(ad.unpack_dual(w).tangent.tolist())
        q = lib.zeros(4, dtype=lib.float64)
        q[1:] = d                               # setitem through a view of q
        results.append(ad.unpack_dual(q).tangent.tolist())
        d.zero_()
        results.append(ad.unpack_dual(piece).tangent.tolist())
        return results


def test_views_and_in_place_changes_match_torch():
    ours, theirs = _inplace_program(gradiente), _inplace_program(torch)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b)


def test_a_views_tangent_is_the_view_of_the_tangent():
    with fwad.dual_level():
        v = gradiente.zeros(2, 3, dtype=gradiente.float64)
        d = fwad.make_dual(gradiente.ones(2, 3, dtype=gradiente.float64), v)
        view = d.t()
        view.mul_(1.0)                          # the tangent is written in place ...
        fwad.unpack_dual(d).tangent.add_(1.0)   # ... and a change of the base's tangent reaches the view's
        assert fwad.unpack_dual(view).tangent.tolist() == [[1.0, 1.0]] * 3


# --- levels and errors ------------------------------------------------------------------------------------------

def _error(fn):
    try:
        fn()
    except Exception as e:
        return type(e).__name__, str(e).replace("gradiente.", "torch.")     # each names its own dtypes
    return None


def _error_cases(lib):
    ad = _fwad(lib)
    x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)
    results = [_error(lambda: ad.make_dual(x, x))]                     # no level
    with ad.dual_level():
        d = ad.make_dual(x, lib.ones(3, dtype=lib.float64))
        results += [
            _error(lambda: ad.make_dual(x, lib.ones(4, dtype=lib.float64))),
            _error(lambda: ad.make_dual(x, lib.ones(1, dtype=lib.float64))),
            _error(lambda: ad.make_dual(lib.tensor([1, 2, 3]), x)),
            _error(lambda: ad.make_dual(x, lib.tensor([1, 2, 3]))),
            _error(lambda: ad.make_dual(d, x)),
            _error(lambda: ad.make_dual(x, x, level=2)),
            _error(lambda: ad.unpack_dual(d, level=1)),
            _error(lambda: ad.exit_dual_level(level=1)),
            _error(ad.enter_dual_level),
        ]
    results.append(_error(ad.exit_dual_level))
    return results


def test_errors_match_torch():
    assert _error_cases(gradiente) == _error_cases(torch)


def test_levels_nest_only_as_pytorch_allows():
    """PyTorch 2.13 has one dual level at a time: a second ``dual_level`` inside the first raises; one after another
    is fine, and each starts at level 0 again."""
    for lib in (gradiente, torch):
        ad = _fwad(lib)
        with ad.dual_level() as outer, pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
            ad.enter_dual_level()
        with ad.dual_level() as again:
            assert outer == again == 0
        assert ad._current_level == -1


def test_an_op_without_a_forward_rule_raises_torchs_error():
    def message(lib):
        ad = _fwad(lib)
        with ad.dual_level():
            x = ad.make_dual(lib.tensor([1.5, 2.0], dtype=lib.float64), lib.ones(2, dtype=lib.float64))
            return _error(lambda: lib.special.zeta(x, x))
    assert message(gradiente) == message(torch)


# --- forward over reverse -----------------------------------------------------------------------------------------

def _hvp(lib, x0, v, fn):
    ad = _fwad(lib)
    x = lib.tensor(x0, requires_grad=True)
    with ad.dual_level():
        d = ad.make_dual(x, lib.tensor(v))
        (g,) = lib.autograd.grad(fn(lib, d), d, create_graph=True)
        return ad.unpack_dual(g).tangent.detach().numpy().copy()


@pytest.mark.parametrize("fn", [
    lambda lib, x: (x.exp() * x.sin()).sum(),
    lambda lib, x: (lib.softmax(x.reshape(2, 3), dim=1) ** 2).sum() + (x @ x) * x.tanh().sum(),
    lambda lib, x: F(lib).mse_loss(F(lib).linear(x.reshape(3, 2), x.reshape(3, 2)).tanh(),
                                   x.reshape(3, 2) @ x.reshape(2, 3)),
], ids=["exp_sin", "softmax_matmul", "linear_mse"])
def test_forward_over_reverse_gives_torchs_hessian_vector_product(fn):
    rng = np.random.RandomState(5)
    x0, v = rng.standard_normal(6), rng.standard_normal(6)
    np.testing.assert_allclose(_hvp(gradiente, x0, v, fn), _hvp(torch, x0, v, fn), rtol=1e-9, atol=1e-11)


def test_a_differentiable_tangent_is_recorded():
    """A tangent that requires grad gives a tangent with a history: reverse mode through a jvp."""
    def grad_of_jvp(lib):
        ad = _fwad(lib)
        v = lib.tensor([1.0, -1.0], dtype=lib.float64, requires_grad=True)
        with ad.dual_level():
            d = ad.make_dual(lib.tensor([0.3, 0.7], dtype=lib.float64), v)
            out = ad.unpack_dual((d.sin() * d).sum()).tangent
            assert out.requires_grad
            (g,) = lib.autograd.grad(out, v)
        return g.numpy()
    np.testing.assert_allclose(grad_of_jvp(gradiente), grad_of_jvp(torch))


# --- make_dual's layout rule, out= and tangents of tangents --------------------------------------------------

def test_a_tangent_is_laid_out_as_its_primal_so_as_strided_reads_both_alike():
    def scenario(lib):
        fw = lib.autograd.forward_ad
        primal = lib.arange(5.0)[:4].detach()
        tangent = lib.arange(10.0, 14.0)
        with fw.dual_level():
            dual = fw.make_dual(primal, tangent)
            unpacked = fw.unpack_dual(dual).tangent
            unpacked *= 2               # a copy: the caller's tangent is not changed
            wide = fw.unpack_dual(dual.as_strided((5,), (1,), 0))
            return plain(tangent), plain(wide.primal), plain(wide.tangent)

    assert on_both(scenario)[1] == ([10.0, 11.0, 12.0, 13.0], [0.0, 1.0, 2.0, 3.0, 4.0],
                                    [20.0, 22.0, 24.0, 26.0, 0.0])


def test_a_tangent_already_laid_out_as_its_primal_is_kept():
    def scenario(lib):
        fw = lib.autograd.forward_ad
        a = lib.tensor([1.0]).as_strided((0,), (1,), 1)
        b = lib.tensor([1.0]).as_strided((0,), (1,), 1)
        x, t = lib.ones(3), lib.ones(3)
        with fw.dual_level():
            return fw.unpack_dual(fw.make_dual(a, b)).tangent is b, fw.unpack_dual(fw.make_dual(x, t)).tangent is t

    assert on_both(scenario)[1] == (True, True)


def test_a_tangent_with_its_own_tangent_is_refused():
    def scenario(lib):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            dual = fw.make_dual(lib.rand(2), lib.rand(2))
            fw.make_dual(lib.rand(2), dual)

    assert on_both(scenario)[0] == "raised"


@pytest.mark.parametrize("call", ["dual_out", "dual_input", "unary", "binary_math"])
def test_out_variants_refuse_forward_ad(call):
    def scenario(lib):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            dual = fw.make_dual(lib.rand(2), lib.rand(2))
            plain_tensor = lib.rand(2)
            if call == "dual_out":
                lib.add(plain_tensor, plain_tensor, out=dual)
            elif call == "dual_input":
                lib.mul(dual, plain_tensor, out=plain_tensor)
            elif call == "unary":
                lib.sin(dual, out=plain_tensor)
            else:
                lib.hypot(dual, plain_tensor, out=plain_tensor)

    assert on_both(scenario)[0] == "raised"


def test_detach_in_place_drops_the_tangent_too():
    def scenario(lib):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            dual = fw.make_dual(lib.ones(2), lib.ones(2)).clone()
            dual.detach_()
            return fw.unpack_dual(dual * 2).tangent

    assert on_both(scenario)[1] is None
