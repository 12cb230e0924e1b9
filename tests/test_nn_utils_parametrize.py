"""nn.utils.parametrize and parametrizations (orthogonal, weight_norm, spectral_norm), the hook-based
weight_norm/spectral_norm, get_total_norm/clip_grads_with_norm_, fusion, memory format, skip_init and
stateless, against PyTorch: the same seed and inputs in both libraries, then values, gradients, reprs,
grad_fn names, state_dict keys and error messages compared; gradcheck in float64 for the new derivative
(``_weight_norm``)."""
import warnings

import numpy as np
import pytest
from harness import OpSpec

import gradiente

torch = pytest.importorskip("torch")

LIBS = (gradiente, torch)


def close(a, b, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol, atol=atol)


def check_same_error(fn):
    """``fn(lib)`` raises in PyTorch; gradiente raises the same type with the same message, where its module
    name stands for ``torch`` (``gradiente.Size([3, 2])``, ``gradiente.float64``)."""
    with pytest.raises(Exception) as expected:
        fn(torch)
    with pytest.raises(type(expected.value)) as got:
        fn(gradiente)
    assert str(got.value).replace("gradiente.", "torch.") == str(expected.value)


def both(fn):
    """``fn(lib)`` for gradiente then torch, each after ``manual_seed(0)``, with deprecation warnings muted."""
    out = []
    for lib in LIBS:
        lib.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out.append(fn(lib))
    return out


class Symmetric:
    """Built per library: ``X.triu() + X.triu(1).T``, with a right_inverse (upper triangle)."""

    @staticmethod
    def make(lib):
        class Sym(lib.nn.Module):
            def forward(self, X):
                return X.triu() + X.triu(1).transpose(-1, -2)

            def right_inverse(self, A):
                return A.triu()
        return Sym()


def make_split(lib):
    """A parametrization over two originals: right_inverse returns (A, B), forward adds them."""
    class Split(lib.nn.Module):
        def forward(self, A, B):
            return A + B

        def right_inverse(self, X):
            return X * 0.25, X * 0.75
    return Split()


def make_double(lib):
    class Double(lib.nn.Module):
        def forward(self, X):
            return 2 * X
    return Double()


# --- parametrize -------------------------------------------------------------------------------------------------

def test_register_parametrization_repr_keys_values_and_grads():
    def run(lib):
        m = lib.nn.Linear(3, 3)
        lib.nn.utils.parametrize.register_parametrization(m, "weight", Symmetric.make(lib))
        x = lib.randn(2, 3)
        m(x).pow(2).sum().backward()
        orig = m.parametrizations.weight.original
        return (repr(m), list(m.state_dict()), type(m).__name__, m.weight, orig.grad, m.bias.grad,
                type(m.parametrizations.weight).__name__, m.weight.grad_fn.name(),
                lib.nn.utils.parametrize.type_before_parametrizations(m).__name__,
                [n for n, _ in m.named_parameters()])
    g, t = both(run)
    assert g[0] == t[0]
    assert g[1] == t[1] == ["bias", "parametrizations.weight.original"]
    assert g[2] == t[2] == "ParametrizedLinear"
    for i in (3, 4, 5):
        close(g[i], t[i])
    assert g[6] == t[6] == "ParametrizationList"
    assert g[7] == t[7]
    assert g[8] == t[8] == "Linear"
    assert g[9] == t[9]


def test_is_parametrized_and_chaining_two_parametrizations():
    def run(lib):
        P = lib.nn.utils.parametrize
        m = lib.nn.Linear(3, 3)
        before = (P.is_parametrized(m), P.is_parametrized(m, "weight"))
        P.register_parametrization(m, "weight", Symmetric.make(lib))
        P.register_parametrization(m, "weight", make_double(lib))
        after = (P.is_parametrized(m), P.is_parametrized(m, "weight"), P.is_parametrized(m, "bias"))
        return before, after, repr(m), m.weight, len(m.parametrizations.weight)
    g, t = both(run)
    assert g[:3] == t[:3]
    close(g[3], t[3])
    assert g[4] == t[4] == 2


def test_assignment_calls_right_inverse():
    def run(lib):
        m = lib.nn.Linear(3, 3)
        lib.nn.utils.parametrize.register_parametrization(m, "weight", Symmetric.make(lib))
        original = m.parametrizations.weight.original
        with lib.no_grad():
            m.weight = lib.arange(9.0).reshape(3, 3)
        return m.weight, original is m.parametrizations.weight.original, original
    g, t = both(run)
    close(g[0], t[0])
    close(g[2], t[2])
    assert g[1] and t[1]


def test_right_inverse_with_several_originals():
    def run(lib):
        m = lib.nn.Linear(2, 3)
        lib.nn.utils.parametrize.register_parametrization(m, "weight", make_split(lib))
        m(lib.ones(1, 2)).sum().backward()
        pl = m.parametrizations.weight
        return (list(m.state_dict()), pl.ntensors, pl.is_tensor, pl.original0, pl.original1, pl.original0.grad,
                m.weight)
    g, t = both(run)
    assert g[0] == t[0] == ["bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]
    assert g[1:3] == t[1:3]
    for i in (3, 4, 5, 6):
        close(g[i], t[i])


@pytest.mark.parametrize("leave", [True, False])
def test_remove_parametrizations(leave):
    def run(lib):
        P = lib.nn.utils.parametrize
        m = lib.nn.Linear(3, 3)
        P.register_parametrization(m, "weight", Symmetric.make(lib))
        original = m.parametrizations.weight.original
        P.remove_parametrizations(m, "weight", leave_parametrized=leave)
        return (type(m).__name__, repr(m), list(m.state_dict()), m.weight, m.weight is original,
                type(m.weight).__name__, hasattr(m, "parametrizations"))
    g, t = both(run)
    assert g[0] == t[0] == "Linear"
    assert g[1:3] == t[1:3]
    close(g[3], t[3])
    assert g[4:] == t[4:]


def test_remove_leaves_several_originals_only_parametrized():
    def run(lib):
        P = lib.nn.utils.parametrize
        m = lib.nn.Linear(2, 3)
        P.register_parametrization(m, "weight", make_split(lib))
        P.remove_parametrizations(m, "weight", leave_parametrized=False)
    check_same_error(run)

    def run_leave(lib):
        lib.manual_seed(0)
        P = lib.nn.utils.parametrize
        m = lib.nn.Linear(2, 3)
        P.register_parametrization(m, "weight", make_split(lib))
        P.remove_parametrizations(m, "weight")
        return m.weight, type(m.weight).__name__, m.weight.requires_grad
    g, t = run_leave(gradiente), run_leave(torch)
    close(g[0], t[0])
    assert g[1:] == t[1:]


def test_cached_computes_once():
    def run(lib):
        P = lib.nn.utils.parametrize
        calls = []

        class Counting(lib.nn.Module):
            def forward(self, X):
                calls.append(1)
                return X * 3

        m = lib.nn.Linear(2, 2)
        P.register_parametrization(m, "weight", Counting())
        n_register = len(calls)
        with P.cached():
            a = m.weight
            b = m.weight
            same = a is b
        c = m.weight
        return len(calls) - n_register, same, c is a
    g, t = both(run)
    assert g == t == (2, True, False)


def test_unsafe_allows_a_new_shape_and_checks_otherwise():
    def make_flat(lib):
        class Flat(lib.nn.Module):
            def forward(self, X):
                return X.reshape(-1)
        return Flat()

    def run_safe(lib):
        lib.nn.utils.parametrize.register_parametrization(lib.nn.Linear(2, 3), "weight", make_flat(lib))
    check_same_error(run_safe)

    def run_unsafe(lib):
        m = lib.nn.Linear(2, 3)
        lib.nn.utils.parametrize.register_parametrization(m, "weight", make_flat(lib), unsafe=True)
        return m.weight.shape, m.parametrizations.weight.unsafe
    g, t = both(run_unsafe)
    assert tuple(g[0]) == tuple(t[0]) and g[1] == t[1]

    def make_to_double(lib):
        class ToDouble(lib.nn.Module):
            def forward(self, X):
                return X.double()
        return ToDouble()

    def run_dtype(lib):
        lib.nn.utils.parametrize.register_parametrization(lib.nn.Linear(2, 3), "weight", make_to_double(lib))
    check_same_error(run_dtype)

    def run_chain_shape(lib):
        m = lib.nn.Linear(3, 3)
        lib.nn.utils.parametrize.register_parametrization(m, "weight", Symmetric.make(lib))
        lib.nn.utils.parametrize.register_parametrization(m, "weight", make_flat(lib))
    check_same_error(run_chain_shape)


def test_errors_match_torch():
    check_same_error(lambda lib: lib.nn.utils.parametrize.register_parametrization(
        lib.nn.Linear(2, 2), "nope", make_double(lib)))
    check_same_error(lambda lib: lib.nn.utils.parametrize.remove_parametrizations(lib.nn.Linear(2, 2), "weight"))
    check_same_error(lambda lib: lib.nn.utils.parametrize.ParametrizationList([], lib.ones(2)))

    def assign_without_right_inverse(lib):
        m = lib.nn.Linear(2, 2)
        lib.nn.utils.parametrize.register_parametrization(m, "weight", make_double(lib))
        m.weight = lib.ones(2, 2)
    check_same_error(assign_without_right_inverse)

    def pickle_parametrized(lib):
        m = lib.nn.Linear(2, 2)
        lib.nn.utils.parametrize.register_parametrization(m, "weight", make_double(lib))
        m.__getstate__()
    check_same_error(pickle_parametrized)


def test_deepcopy_and_transfer_parametrizations():
    import copy

    def run(lib):
        P = lib.nn.utils.parametrize
        a = lib.nn.Linear(3, 3)
        P.register_parametrization(a, "weight", Symmetric.make(lib))
        c = copy.deepcopy(a)
        b = lib.nn.Linear(3, 3)
        P.transfer_parametrizations_and_params(a, b)
        return (type(c).__name__, c.weight, b.weight, P.is_parametrized(b, "weight"),
                b.parametrizations.weight.original is a.parametrizations.weight.original, list(b.state_dict()))
    g, t = both(run)
    assert g[0] == t[0]
    close(g[1], t[1])
    close(g[2], t[2])
    assert g[3:] == t[3:]


def test_parametrized_state_dict_loads_in_torch():
    def run(lib):
        m = lib.nn.Linear(3, 3)
        lib.nn.utils.parametrize.register_parametrization(m, "weight", Symmetric.make(lib))
        return m
    g, t = both(run)
    with torch.no_grad():
        t.parametrizations.weight.original.zero_()
    t.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in g.state_dict().items()})
    close(g.weight, t.weight)
    assert g.load_state_dict(g.state_dict()) is not None


# --- parametrizations ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,mapping", [((3, 3), None), ((5, 3), None), ((3, 5), None), ((4, 4), "cayley"),
                                           ((5, 3), "cayley"), ((4, 4), "householder"), ((5, 3), "matrix_exp")])
def test_orthogonal_matches_torch(shape, mapping):
    def run(lib):
        m = lib.nn.Linear(shape[1], shape[0])
        lib.nn.utils.parametrizations.orthogonal(m, orthogonal_map=mapping)
        w = m.weight
        x = lib.randn(2, shape[1])
        m(x).pow(2).sum().backward()
        return (w, m.parametrizations.weight.original.grad, repr(m), list(m.state_dict()), w.grad_fn.name(),
                m.parametrizations.weight[0].base)
    g, t = both(run)
    close(g[0], t[0], rtol=1e-4, atol=1e-5)
    close(g[1], t[1], rtol=1e-3, atol=1e-4)
    assert g[2:5] == t[2:5]
    close(g[5], t[5], rtol=1e-4, atol=1e-5)
    w = g[0].detach().numpy()
    gram = w @ w.T if shape[0] <= shape[1] else w.T @ w
    np.testing.assert_allclose(gram, np.eye(min(shape)), atol=1e-5)


def test_orthogonal_without_trivialization_and_assignment():
    def run(lib):
        m = lib.nn.Linear(3, 5)
        lib.nn.utils.parametrizations.orthogonal(m, orthogonal_map="householder", use_trivialization=False)
        first = m.weight.detach().clone()
        q = lib.linalg.qr(lib.randn(5, 3)).Q
        with lib.no_grad():
            m.weight = q
        return first, m.weight, hasattr(m.parametrizations.weight[0], "base")
    g, t = both(run)
    close(g[0], t[0], rtol=1e-4, atol=1e-5)
    close(g[1].abs(), t[1].abs(), rtol=1e-4, atol=1e-5)
    assert g[2] == t[2] is False


def test_orthogonal_errors():
    check_same_error(lambda lib: lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3), name="bias"))
    check_same_error(lambda lib: lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3), orthogonal_map="x"))
    check_same_error(lambda lib: lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3), name="nope"))

    def assign_exp_no_base(lib):
        m = lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3), use_trivialization=False)
        m.weight = lib.eye(3)
    check_same_error(assign_exp_no_base)


@pytest.mark.parametrize("dim", [0, 1, None])
def test_parametrizations_weight_norm(dim):
    def run(lib):
        m = lib.nn.Linear(4, 3)
        lib.nn.utils.parametrizations.weight_norm(m, dim=dim)
        m(lib.randn(2, 4)).pow(2).sum().backward()
        pl = m.parametrizations.weight
        return (m.weight, pl.original0, pl.original0.grad, pl.original1.grad, repr(m), list(m.state_dict()),
                m.weight.grad_fn.name(), tuple(pl.original0.shape))
    g, t = both(run)
    for i in range(4):
        close(g[i], t[i])
    assert g[4:] == t[4:]


def test_weight_norm_loads_an_old_style_state_dict():
    def run(lib):
        old = lib.nn.utils.weight_norm(lib.nn.Linear(4, 3))
        new = lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(4, 3))
        new.load_state_dict(old.state_dict())
        return new.weight, old.weight
    g, t = both(run)
    close(g[0], t[0])
    close(g[0], g[1])


@pytest.mark.parametrize("make", [lambda lib: lib.nn.Linear(5, 3), lambda lib: lib.nn.Conv2d(2, 4, 3),
                                  lambda lib: lib.nn.ConvTranspose2d(2, 4, 3)])
def test_parametrizations_spectral_norm_same_power_iteration(make):
    def run(lib):
        m = make(lib)
        lib.nn.utils.parametrizations.spectral_norm(m)
        sn = m.parametrizations.weight[0]
        u0, v0 = sn._u.clone(), sn._v.clone()
        w = m.weight
        w.sum().backward()
        m.eval()
        w_eval = m.weight
        return (u0, v0, sn._u, sn._v, w, m.parametrizations.weight.original.grad, w_eval, list(m.state_dict()),
                repr(m), w.grad_fn.name())
    g, t = both(run)
    for i in range(7):
        close(g[i], t[i], rtol=1e-4, atol=1e-5)
    assert g[7:] == t[7:]


def test_spectral_norm_errors_and_vector():
    check_same_error(lambda lib: lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(3, 3), n_power_iterations=0))
    check_same_error(lambda lib: lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(3, 3), dim=2))
    check_same_error(lambda lib: lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(3, 3), name="x"))
    g, t = both(lambda lib: lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(3, 3), name="bias").bias)
    close(g, t)


# --- the hook-based weight_norm and spectral_norm ------------------------------------------------------------------

@pytest.mark.parametrize("dim", [0, 1, None])
def test_hook_weight_norm(dim):
    def run(lib):
        m = lib.nn.utils.weight_norm(lib.nn.Linear(4, 3), dim=dim)
        y = m(lib.randn(2, 4))
        y.pow(2).sum().backward()
        names = [n for n, _ in m.named_parameters()]
        g_grad, v_grad = m.weight_g.grad, m.weight_v.grad
        out = (m.weight, g_grad, v_grad, names, list(m.state_dict()), m.weight.grad_fn.name(), repr(m))
        lib.nn.utils.remove_weight_norm(m)
        return out + (m.weight, [n for n, _ in m.named_parameters()], type(m.weight).__name__)
    g, t = both(run)
    for i in range(3):
        close(g[i], t[i])
    assert g[3:7] == t[3:7]
    close(g[7], t[7])
    assert g[8:] == t[8:]


def test_hook_weight_norm_warns_and_errors():
    for lib in LIBS:
        with pytest.warns(FutureWarning, match="is deprecated in favor of"):
            lib.nn.utils.weight_norm(lib.nn.Linear(2, 2))

    def twice(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib.nn.utils.weight_norm(lib.nn.utils.weight_norm(lib.nn.Linear(2, 2)))
    check_same_error(twice)
    check_same_error(lambda lib: lib.nn.utils.remove_weight_norm(lib.nn.Linear(2, 2)))


@pytest.mark.parametrize("make", [lambda lib: lib.nn.Linear(5, 3), lambda lib: lib.nn.Conv1d(2, 4, 3)])
def test_hook_spectral_norm_same_numbers(make):
    def run(lib):
        m = lib.nn.utils.spectral_norm(make(lib), n_power_iterations=2)
        u0 = m.weight_u.clone()
        x = lib.randn(2, 5) if isinstance(m, lib.nn.Linear) else lib.randn(1, 2, 6)
        m(x).pow(2).sum().backward()
        sd = m.state_dict()
        out = (u0, m.weight_u, m.weight_v, m.weight, m.weight_orig.grad, list(sd),
               sd._metadata[""].get("spectral_norm"), m.weight.grad_fn.name(), repr(m))
        lib.nn.utils.remove_spectral_norm(m)
        return out + (m.weight, list(m.state_dict()))
    g, t = both(run)
    for i in range(5):
        close(g[i], t[i], rtol=1e-4, atol=1e-6)
    assert g[5:9] == t[5:9]
    close(g[9], t[9], rtol=1e-4, atol=1e-6)
    assert g[10] == t[10]


def test_hook_spectral_norm_errors():
    check_same_error(lambda lib: lib.nn.utils.spectral_norm(lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2))))
    check_same_error(lambda lib: lib.nn.utils.remove_spectral_norm(lib.nn.Linear(2, 2)))
    check_same_error(lambda lib: lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2, bias=False), name="bias"))
    check_same_error(lambda lib: lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2), n_power_iterations=0))


# --- the new derivative: _weight_norm ------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,dim", [((3, 4), 0), ((3, 4), 1), ((2, 3, 4), 1), ((3, 4), -1), ((5,), 0)])
def test_weight_norm_op_gradcheck_and_torch(shape, dim):
    from gradiente.ops.nn.weight_norm import _weight_norm, norm_except_dim

    rng = np.random.default_rng(0)
    v_np = rng.standard_normal(shape)
    g_shape = () if dim == -1 else tuple(s if i == dim else 1 for i, s in enumerate(shape))
    g_np = rng.standard_normal(g_shape) + 2.0
    v = gradiente.tensor(v_np, requires_grad=True)
    g = gradiente.tensor(g_np, requires_grad=True)
    assert gradiente.autograd.gradcheck(lambda a, b: _weight_norm(a, b, dim), (v, g), check_forward_ad=True)
    assert gradiente.autograd.gradgradcheck(lambda a, b: _weight_norm(a, b, dim), (v, g))
    tv = torch.tensor(v_np, requires_grad=True)
    tg = torch.tensor(g_np, requires_grad=True)
    out, tout = _weight_norm(v, g, dim), torch._weight_norm(tv, tg, dim)
    close(out, tout, rtol=1e-12, atol=1e-12)
    assert out.grad_fn.name() == tout.grad_fn.name()
    close(norm_except_dim(v, 2, dim), torch.norm_except_dim(tv, 2, dim), rtol=1e-12)
    w = torch.tensor(rng.standard_normal(shape))
    out.backward(gradiente.tensor(w.numpy()))
    tout.backward(w)
    close(v.grad, tv.grad, rtol=1e-10, atol=1e-12)
    close(g.grad, tg.grad, rtol=1e-10, atol=1e-12)


# --- clipping in two halves ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("norm_type", [2.0, 1, float("inf"), 3.5])
def test_get_total_norm_and_clip_grads_with_norm(norm_type):
    def run(lib):
        ps = [lib.randn(3, 4, requires_grad=True), lib.randn(5, requires_grad=True)]
        for p in ps:
            p.grad = lib.randn(p.shape) * 3
        total = lib.nn.utils.get_total_norm([p.grad for p in ps], norm_type)
        lib.nn.utils.clip_grads_with_norm_(ps, 1.0, total)
        return total, ps[0].grad, ps[1].grad, lib.nn.utils.get_total_norm([]), lib.nn.utils.get_total_norm(ps[0])
    g, t = both(run)
    for a, b in zip(g, t):
        close(a, b, rtol=1e-6)
        assert str(a.dtype)[-7:] == str(b.dtype)[-7:]


def test_get_total_norm_nonfinite_error():
    check_same_error(lambda lib: lib.nn.utils.get_total_norm([lib.tensor([float("inf"), 1.0])],
                                                             error_if_nonfinite=True))


# --- fusion, memory format, skip_init, stateless --------------------------------------------------------------------

@pytest.mark.parametrize("make", [lambda lib: (lib.nn.Conv2d(3, 4, 3), lib.nn.BatchNorm2d(4), False),
                                  lambda lib: (lib.nn.Conv2d(3, 4, 3, bias=False), lib.nn.BatchNorm2d(4), False),
                                  lambda lib: (lib.nn.ConvTranspose2d(3, 4, 3), lib.nn.BatchNorm2d(4), True)])
def test_fuse_conv_bn_eval(make):
    def run(lib):
        conv, bn, transpose = make(lib)
        bn.train()
        bn(conv(lib.randn(4, 3, 6, 6)))
        conv.eval()
        bn.eval()
        with lib.no_grad():
            bn.weight.uniform_(0.5, 1.5)
        fused = lib.nn.utils.fuse_conv_bn_eval(conv, bn, transpose=transpose)
        x = lib.randn(2, 3, 5, 5)
        return fused(x), bn(conv(x)), type(fused.weight).__name__, fused.weight.requires_grad, repr(fused)
    g, t = both(run)
    close(g[0], t[0], rtol=1e-4, atol=1e-5)
    close(g[0], g[1], rtol=1e-4, atol=1e-5)
    assert g[2:] == t[2:]


def test_fuse_linear_bn_eval_and_errors():
    def run(lib):
        lin, bn = lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4)
        bn(lin(lib.randn(8, 3)))
        lin.eval()
        bn.eval()
        fused = lib.nn.utils.fuse_linear_bn_eval(lin, bn)
        x = lib.randn(2, 3)
        w, b = lib.nn.utils.fuse_linear_bn_weights(lin.weight, None, bn.running_mean, bn.running_var, bn.eps,
                                                   bn.weight, bn.bias)
        return fused(x), bn(lin(x)), w, b
    g, t = both(run)
    for a, b in zip(g, t):
        close(a, b, rtol=1e-5)
    check_same_error(lambda lib: lib.nn.utils.fuse_linear_bn_eval(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4)))

    def mismatch(lib):
        lin, bn = lib.nn.Linear(3, 4).eval(), lib.nn.BatchNorm1d(5).eval()
        lib.nn.utils.fuse_linear_bn_eval(lin, bn)
    check_same_error(mismatch)
    check_same_error(lambda lib: lib.nn.utils.fuse_conv_bn_eval(lib.nn.Conv2d(3, 4, 3), lib.nn.BatchNorm2d(4)))


def test_fuse_conv_bn_weights_defaults():
    def run(lib):
        w = lib.randn(4, 3, 2, 2)
        rm, rv = lib.randn(4), lib.rand(4) + 0.5
        return lib.nn.utils.fuse_conv_bn_weights(w, None, rm, rv, 1e-5, None, None)
    g, t = both(run)
    for a, b in zip(g, t):
        close(a, b)
        assert type(a).__name__ == type(b).__name__ == "Parameter"


@pytest.mark.parametrize("dims", [2, 3])
def test_convert_conv_weight_memory_format_keeps_values_and_parameters(dims):
    def run(lib):
        conv = lib.nn.Conv2d if dims == 2 else lib.nn.Conv3d
        net = lib.nn.Sequential(conv(3, 4, 2), lib.nn.Sequential(conv(4, 2, 1)), lib.nn.Linear(2, 2))
        weights = [net[0].weight, net[1][0].weight]
        before = [w.detach().clone() for w in weights]
        fmt = getattr(lib, "channels_last" if dims == 2 else "channels_last_3d", "channels_last")
        convert = (lib.nn.utils.convert_conv2d_weight_memory_format if dims == 2
                   else lib.nn.utils.convert_conv3d_weight_memory_format)
        assert convert(net, fmt) is net
        return before, [net[0].weight, net[1][0].weight], [a is b for a, b in zip(weights, [net[0].weight,
                                                                                           net[1][0].weight])], \
            [w.stride() for w in weights]
    g, t = both(run)
    assert g[3] == t[3]
    for a, b, c in zip(g[0], t[0], g[1]):
        close(a, b)
        close(c, a)
    assert g[2] == t[2] == [True, True]


def test_skip_init():
    def run(lib):
        m = lib.nn.utils.skip_init(lib.nn.Linear, 5, 3)
        return repr(m), tuple(m.weight.shape), m.weight.dtype is lib.float32, type(m).__name__
    g, t = both(run)
    assert g == t
    check_same_error(lambda lib: lib.nn.utils.skip_init(int))
    check_same_error(lambda lib: lib.nn.utils.skip_init(type("NoDevice", (lib.nn.Module,), {
        "__init__": lambda self, n: lib.nn.Module.__init__(self)}), 2))


@pytest.mark.filterwarnings("ignore:`torch.nn.utils.stateless.functional_call` is deprecated:FutureWarning")
def test_stateless_functional_call_warns_and_matches():
    def run(lib):
        m = lib.nn.Linear(3, 2)
        params = {"weight": lib.ones(2, 3), "bias": lib.zeros(2)}
        x = lib.randn(4, 3)
        with pytest.warns(FutureWarning, match="stateless.functional_call` is deprecated"):
            out = lib.nn.utils.stateless.functional_call(m, params, (x,))
        return out, m.weight
    g, t = [], []
    for lib, acc in ((gradiente, g), (torch, t)):
        lib.manual_seed(0)
        acc.extend(run(lib))
    close(g[0], t[0])
    close(g[1], t[1])
    check_same_error(lambda lib: lib.nn.utils.stateless.functional_call(lib.nn.Linear(3, 2), {"x": lib.ones(1)},
                                                                        (lib.ones(1, 3),), strict=True))


def test_stateless_shares_func_functional_call():
    import sys

    from gradiente.nn.utils import stateless
    assert stateless._functional_call is sys.modules["gradiente.func.functional_call"].functional_call


# --- gradients through the composed parametrizations, float64 ------------------------------------------------------

@pytest.mark.parametrize("shape,mapping", [((4, 4), "matrix_exp"), ((4, 3), "cayley"), ((4, 3), "householder"),
                                           ((2, 5), "householder"), ((2, 3, 3), "cayley")])
def test_orthogonal_forward_gradcheck(shape, mapping):
    from gradiente.nn.utils.parametrizations import _OrthMaps, _Orthogonal
    x = gradiente.tensor(np.random.default_rng(1).standard_normal(shape) * 0.5, requires_grad=True)
    orth = _Orthogonal(x.detach(), getattr(_OrthMaps, mapping), use_trivialization=False)
    assert gradiente.autograd.gradcheck(orth, (x,))


def test_spectral_norm_forward_gradcheck_in_eval():
    m = gradiente.nn.Linear(4, 3).double()
    gradiente.nn.utils.parametrizations.spectral_norm(m)
    sn = m.parametrizations.weight[0].eval()
    w = gradiente.tensor(np.random.default_rng(2).standard_normal((3, 4)), requires_grad=True)
    assert gradiente.autograd.gradcheck(sn, (w,))


def test_torch_weight_norm_checkpoint_loads_here():
    t = torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(4, 3))
    g = gradiente.nn.utils.parametrizations.weight_norm(gradiente.nn.Linear(4, 3))
    g.load_state_dict({k: gradiente.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    x = np.random.default_rng(3).standard_normal((2, 4)).astype(np.float32)
    close(g(gradiente.tensor(x)), t(torch.tensor(x)))


#: the weight-norm primitive (``torch._weight_norm``, node WeightNormInterfaceBackward0 for the first or last dim)
#: in the shared op table: values, node names, gradients against torch, gradcheck and the engine's checks
WEIGHT_NORM_SPECS = [
    OpSpec("weight_norm_interface_dim0", lambda lib, v, g: lib._weight_norm(v, g, 0), [((3, 4), (3, 1)),
                                                                                        ((2, 3, 4), (2, 1, 1))]),
    OpSpec("weight_norm_interface_last", lambda lib, v, g: lib._weight_norm(v, g, 1), [((3, 4), (1, 4))]),
    OpSpec("weight_norm_whole", lambda lib, v, g: lib._weight_norm(v, g, -1), [((3, 4), ())]),
]
