"""Forward mode with a batched tangent (issue 11): inside vmap, ``make_dual`` of a plain primal and a batched tangent,
as PyTorch's batched forward AD and ``gradcheck(check_batched_forward_grad=True)`` use it.

Each program runs under both libraries' ``_vmap`` on the same float64 arrays; the tangents, the identities PyTorch
promises (which tangent is the one handed in, which is a view of which) and the errors must agree. Then gradcheck's
batched forward check, in float64, on functions whose forward rules batch in different ways.
"""
import numpy as np
import pytest

import gradiente
import gradiente.autograd.forward_ad as fwad

torch = pytest.importorskip("torch")
import torch.autograd.forward_ad as torch_fwad  # noqa: E402


def _ad(lib):
    return fwad if lib is gradiente else torch_fwad


def _vmapped_jvp(lib, fn, primal, tangents):
    """The tangent of ``fn(lib, dual)`` for each row of ``tangents`` (one batched pass through ``_vmap``)."""
    ad = _ad(lib)
    x = lib.tensor(primal)

    def jvp(t):
        with ad.dual_level():
            out = fn(lib, ad.make_dual(x, t))
            return ad.unpack_dual(out).tangent
    return lib._vmap_internals._vmap(jvp)(lib.tensor(tangents)).numpy()


PROGRAMS = {
    "elementwise": lambda lib, x: lib.sin(x) * x + x.exp(),
    "reduction over a dim": lambda lib, x: (x * x).sum(1),
    "matmul with a plain weight": lambda lib, x: x @ lib.ones(4, 2, dtype=lib.float64),
    "views": lambda lib, x: x.t().reshape(-1)[1:5],
    "softmax and layer_norm": lambda lib, x: lib.nn.functional.layer_norm(lib.softmax(x, 1), (4,)),
    "an in-place op on a copy": lambda lib, x: lib.nn.functional.leaky_relu(x.clone(), inplace=True),
    "a rule read off its backward (matrix_exp)": lambda lib, x: lib.linalg.matrix_exp(x[:, :3]),
    "indexing": lambda lib, x: x[[0, 2, 2]] * x[:, 1:2],
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_batched_tangents_match_torch_and_the_loop(name):
    rng = np.random.RandomState(0)
    primal, tangents = rng.uniform(-1, 1, (3, 4)), rng.standard_normal((5, 3, 4))
    fn = PROGRAMS[name]
    ours = _vmapped_jvp(gradiente, fn, primal, tangents)
    np.testing.assert_allclose(ours, _vmapped_jvp(torch, fn, primal, tangents), rtol=1e-10, atol=1e-12)
    # and what one tangent at a time gives
    loop = [_vmapped_jvp(gradiente, fn, primal, t[None])[0] for t in tangents]
    np.testing.assert_allclose(ours, np.stack(loop), rtol=1e-12, atol=1e-14)


def _identities(lib, primal_of, view_of):
    """Which tangents are which after ``view.copy_(dual)`` inside ``_vmap`` (PyTorch's three layout tests)."""
    ad = _ad(lib)
    primal, base = primal_of(lib), lib.zeros(2, 2)
    view = view_of(base)
    given = lib.zeros(3, 2, 2)

    def jvp(t):
        with ad.dual_level():
            x = ad.make_dual(primal, t)
            view.copy_(x)
            return ad.unpack_dual(x)[1], ad.unpack_dual(view)[1], ad.unpack_dual(view._base)[1]
    x_t, view_t, base_t = lib._vmap_internals._vmap(jvp)(given)
    return (x_t is given, view_t is base_t, view_t._base is base_t, view_t._is_view(),
            (view_t.numpy() == np.broadcast_to(np.zeros((2, 2)), view_t.shape)).all())


@pytest.mark.parametrize("layout", ["same layout", "transposed view"])
def test_in_place_copy_into_a_view_shares_tangents_as_torch(layout):
    view_of = (lambda b: b.view_as(b)) if layout == "same layout" else (lambda b: b.t())
    assert _identities(gradiente, lambda lib: lib.zeros(2, 2), view_of) == \
        _identities(torch, lambda lib: lib.zeros(2, 2), view_of)


def test_a_tangent_laid_out_otherwise_is_copied_into_the_primals_layout():
    for lib in (gradiente, torch):
        ad = _ad(lib)
        primal, given = lib.zeros(2, 2).t(), lib.arange(8.0).reshape(2, 2, 2)

        def jvp(t, ad=ad, primal=primal):
            with ad.dual_level():
                return ad.unpack_dual(ad.make_dual(primal, t))[1]
        out = lib._vmap_internals._vmap(jvp)(given)
        assert out is not given
        assert out.numpy().tolist() == given.numpy().tolist()


def _storage_check(lib):
    """PyTorch's test: a primal whose storage is larger than itself keeps a batched tangent uncopied, and an
    ``as_strided`` reaching past an example's elements is refused."""
    ad = _ad(lib)
    primal = lib.tensor([1.0, 2.0, 3.0, 4.0, 5.0])[:4].detach()
    given = lib.arange(40.0).reshape(10, 4)
    seen = {}

    def jvp(t):
        with ad.dual_level():
            dual = ad.make_dual(primal, t)
            seen["same"] = ad.unpack_dual(dual)[1] is t
            with pytest.raises(RuntimeError) as refused:
                dual.as_strided((5,), (1,), 0)
            seen["message"] = str(refused.value)
            return ad.unpack_dual(dual.as_strided((2,), (2,), 1))[1]
    out = lib._vmap_internals._vmap(jvp)(given)
    return seen["same"], seen["message"], out.numpy().tolist()


def test_storage_size_is_not_compared_and_as_strided_stays_in_each_example():
    assert _storage_check(gradiente) == _storage_check(torch)


def test_as_strided_under_vmap_matches_torch():
    rng = np.random.RandomState(1)
    x = rng.standard_normal((4, 6))
    ours = gradiente.func.vmap(lambda r: r.as_strided((2, 2), (1, 3), 1))(gradiente.tensor(x))
    theirs = torch.func.vmap(lambda r: r.as_strided((2, 2), (1, 3), 1))(torch.tensor(x))
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_the_old_vmap_refuses_random_ops_with_its_own_message():
    messages = []
    for lib in (gradiente, torch):
        with pytest.raises(RuntimeError) as refused:
            lib._vmap_internals._vmap(lambda t, lib=lib: lib.randn_like(t))(lib.zeros(3, 2))
        messages.append(str(refused.value))
    assert messages[0] == messages[1]


def test_a_tangent_of_another_size_is_refused_as_torch_does():
    messages = []
    for lib in (gradiente, torch):
        ad = _ad(lib)

        def jvp(t, ad=ad, lib=lib):
            with ad.dual_level():
                return ad.unpack_dual(ad.make_dual(lib.zeros(3), t))[1]
        with pytest.raises(RuntimeError) as refused:
            lib._vmap_internals._vmap(jvp)(lib.zeros(2, 4))
        messages.append(str(refused.value))
    assert messages[0] == messages[1]


# --- gradcheck's batched forward check -------------------------------------------------------------------------

CHECKED = {
    "sin": (lambda lib: lib.sin, [(3, 4)]),
    "add": (lambda lib: lib.add, [(3, 4), (3, 4)]),
    "matmul": (lambda lib: lib.matmul, [(3, 4), (4, 2)]),
    "layer_norm": (lambda lib: (lambda x: lib.nn.functional.layer_norm(x, (4,))), [(3, 4)]),
    "logcumsumexp": (lambda lib: (lambda x: lib.logcumsumexp(x, 1)), [(3, 4)]),
    "two outputs, one input unused": (lambda lib: (lambda a, b: (a.clone(), a + 1)), [(2,), (2,)]),
}


@pytest.mark.parametrize("name", CHECKED)
def test_gradcheck_batched_forward_grad_passes_as_in_torch(name):
    make, shapes = CHECKED[name]
    rng = np.random.RandomState(2)
    arrays = [rng.uniform(-1, 1, s) for s in shapes]
    for lib in (gradiente, torch):
        inputs = tuple(lib.tensor(a, requires_grad=True) for a in arrays)
        assert lib.autograd.gradcheck(make(lib), inputs, check_forward_ad=True, check_backward_ad=False,
                                      check_undefined_grad=False, check_batched_forward_grad=True)


def _random_jvp_function(lib):
    class Doubling(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

        @staticmethod
        def jvp(ctx, t):
            lib.randn_like(t)
            return t * 2
    return Doubling.apply


def test_gradcheck_reports_a_jvp_that_vmap_cannot_run_as_torch_does():
    messages = []
    for lib in (gradiente, torch):
        x = lib.tensor([0.5, -0.25], dtype=lib.float64, requires_grad=True)
        with pytest.raises(RuntimeError) as failed:
            lib.autograd.gradcheck(_random_jvp_function(lib), (x,), check_forward_ad=True,
                                   check_batched_forward_grad=True)
        assert type(failed.value).__name__ == "GradcheckError"
        messages.append(str(failed.value))
    assert messages[0] == messages[1]


def test_gradcheck_counts_the_undefined_tangent_runs_as_torch():
    """Forward mode's undefined-tangent check runs a custom jvp twice per input (a zero tangent, and none)."""
    calls = {}

    def copying(lib):
        class Copy(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x.clone(), y.clone()

            @staticmethod
            def jvp(ctx, x_t, y_t):
                calls[lib.__name__] = calls.get(lib.__name__, 0) + 1
                return x_t, y_t
        return Copy.apply

    for lib in (gradiente, torch):
        x, y = (lib.tensor([0.3], dtype=lib.float64, requires_grad=True) for _ in range(2))
        lib.autograd.gradcheck(copying(lib), (x, y), check_forward_ad=True, check_backward_ad=False,
                               check_batched_grad=False, check_batched_forward_grad=False)
    assert calls == {"gradiente": 6, "torch": 6}


def test_the_batched_programs_pass_gradcheck_in_float64():
    """Each program's derivative, checked numerically (forward and backward) with gradiente's gradcheck."""
    x = gradiente.tensor(np.random.RandomState(3).uniform(-1, 1, (3, 4)), requires_grad=True)
    for name, fn in PROGRAMS.items():
        assert gradiente.autograd.gradcheck(lambda x, fn=fn: fn(gradiente, x), (x,), check_forward_ad=True,
                                            check_batched_forward_grad=True), name


@pytest.mark.parametrize("op", ["igamma", "igammac"])
def test_ops_without_a_forward_formula_in_torch_refuse_forward_mode_as_torch(op):
    """PyTorch defines no forward-mode rule for the incomplete gamma functions: a dual in either argument raises
    its NotImplementedError (its own test uses igamma as the example of an op without one)."""
    messages = []
    for lib in (gradiente, torch):
        ad = _ad(lib)
        a, x = lib.tensor([0.5, 1.5], dtype=lib.float64), lib.tensor([0.7, 2.0], dtype=lib.float64)
        with ad.dual_level():
            for args in ((ad.make_dual(a, lib.ones(2, dtype=lib.float64)), x),
                         (a, ad.make_dual(x, lib.ones(2, dtype=lib.float64)))):
                with pytest.raises(NotImplementedError) as refused:
                    getattr(lib, op)(*args)
                messages.append(str(refused.value))
    assert messages[:2] == messages[2:]
