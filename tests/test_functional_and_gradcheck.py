"""``autograd.functional`` and ``gradcheck`` as PyTorch's own tests pin them down: the errors for non-tensor
inputs and outputs and for a bad ``v``, ``strict=True`` at each step, ``vectorize=True``, ``create_graph``;
gradcheck's messages (Jacobian mismatch, nondeterminism, undefined output gradients, no differentiable outputs),
``raise_exception=False``, and ``torch.autograd.gradcheck`` as a module and a function."""
import importlib
import warnings

import numpy as np
import pytest
import torch as real_torch

import gradiente


def outcome(scenario, lib):
    try:
        return ("returned", scenario(lib))
    except Exception as error:  # the exception itself is what is compared
        return ("raised", type(error).__name__, str(error).replace("<class 'gradiente.", "<class 'torch."))


def on_both(scenario):
    ours, theirs = outcome(scenario, gradiente), outcome(scenario, real_torch)
    assert ours == theirs
    return ours


def rounded(value):
    """Tensors (nested in tuples) as lists of rounded floats, to compare across the two libraries."""
    if isinstance(value, (tuple, list)):
        return [rounded(v) for v in value]
    return np.round(np.asarray(value.detach().tolist(), dtype=float), 10).tolist()


def F(lib):
    return lib.autograd.functional


X = np.array([[0.3, -1.2, 0.7], [1.5, 0.2, -0.4]])
Y = np.array([0.9, -0.6, 0.1])


# --- errors for what is passed in and returned ---------------------------------------------------------------

@pytest.mark.parametrize("api", ["vjp", "jvp", "vhp", "hvp", "jacobian", "hessian"])
def test_non_tensor_inputs_are_a_type_error(api):
    def scenario(lib):
        return getattr(F(lib), api)(lambda x: x.sum(), (lib.ones(2), 3))

    assert on_both(scenario)[1] == "TypeError"


@pytest.mark.parametrize("api", ["vjp", "jvp", "jacobian"])
def test_non_tensor_outputs_are_a_type_error(api):
    def scenario(lib):
        x = lib.ones(2)
        v = lib.ones(2) if api != "jacobian" else None
        args = (v,) if v is not None else ()
        return getattr(F(lib), api)(lambda x: (x * 2, "label"), x, *args)

    assert on_both(scenario)[1] == "TypeError"


@pytest.mark.parametrize("api, v", [("vjp", (2,)), ("jvp", (2,)), ("vhp", (4,)), ("hvp", (4,)), ("vjp", None),
                                    ("jvp", None)])
def test_a_bad_v_is_refused(api, v):
    def scenario(lib):
        func = (lambda x: x * 2) if api in ("vjp", "jvp") else (lambda x: (x ** 3).sum())
        vec = None if v is None else lib.ones(*v)
        return getattr(F(lib), api)(func, lib.ones(3), vec)

    assert on_both(scenario)[0] == "raised"


@pytest.mark.parametrize("api", ["vhp", "hvp", "hessian"])
def test_second_order_apis_want_a_single_scalar(api):
    def scenario(lib):
        x = lib.ones(3)
        args = (x,) if api == "hessian" else (x, lib.ones(3))
        return getattr(F(lib), api)(lambda x: x * 2, *args)

    assert on_both(scenario)[0] == "raised"


# --- strict mode ---------------------------------------------------------------------------------------------

def _strict_case(lib, case, scalar):
    """The function and inputs of one strict-mode case; ``scalar`` for the APIs that want a scalar function."""
    x, y = lib.tensor(Y), lib.tensor(Y)
    if case == "output_not_differentiable":
        return (lambda a: lib.ones(3).sum()) if scalar else (lambda a: lib.ones(3)), x
    if case == "output_independent_of_an_input":
        return (lambda a, b: (a * 2).sum()) if scalar else (lambda a, b: a * 2), (x, y)
    # linear: first derivatives are constants, so second derivatives do not depend on the inputs
    return (lambda a, b: (a * 2).sum() + b.sum()) if scalar else (lambda a, b: a * 2 + b), (x, y)


@pytest.mark.parametrize("api", ["vjp", "jvp", "jacobian", "vhp", "hvp", "hessian"])
@pytest.mark.parametrize("case", ["output_not_differentiable", "output_independent_of_an_input", "linear"])
def test_strict_mode_errors(api, case):
    def scenario(lib):
        func, inputs = _strict_case(lib, case, api in ("vhp", "hvp", "hessian"))
        args = ()
        if api == "vjp":
            out = func(*inputs) if isinstance(inputs, tuple) else func(inputs)
            args = (lib.ones_like(out),)
        elif api in ("jvp", "vhp", "hvp"):
            args = (tuple(lib.ones(3) for _ in inputs) if isinstance(inputs, tuple) else lib.ones(3),)
        return rounded(getattr(F(lib), api)(func, inputs, *args, strict=True))

    on_both(scenario)


def test_strict_and_vectorize_together_are_refused():
    on_both(lambda lib: F(lib).jacobian(lambda x: x * 2, lib.ones(2), strict=True, vectorize=True))


# --- values ------------------------------------------------------------------------------------------------

def test_values_of_every_api_agree_with_pytorch():
    def scenario(lib):
        x, y = lib.tensor(X), lib.tensor(Y)

        def f(a, b):
            return (a.sin() * b).sum(1), a.exp().mean()

        def scalar(a, b):
            return (a.exp() * b).sum() + (b ** 3).sum()

        return [
            rounded(F(lib).vjp(f, (x, y), (lib.ones(2), lib.tensor(2.0)))),
            rounded(F(lib).jvp(f, (x, y), (lib.ones(2, 3), lib.ones(3)))),
            rounded(F(lib).jacobian(f, (x, y))),
            rounded(F(lib).jacobian(f, (x, y), vectorize=True)),
            rounded(F(lib).jacobian(lambda a: a.exp(), y)),
            rounded(F(lib).hessian(scalar, (x, y))),
            rounded(F(lib).hessian(lambda b: (b ** 3).sum().view(1, 1), y, vectorize=True)),
            rounded(F(lib).vhp(scalar, (x, y), (lib.ones(2, 3), lib.ones(3)))),
            rounded(F(lib).hvp(scalar, (x, y), (lib.ones(2, 3), lib.ones(3)))),
            rounded(F(lib).hvp(lambda b: b.exp().sum(), lib.tensor(0.5))),
        ]

    on_both(scenario)


def test_create_graph_results_can_be_differentiated_again():
    def scenario(lib):
        x = lib.tensor(Y, requires_grad=True)
        v = lib.ones(3, requires_grad=True)
        out, hv = F(lib).hvp(lambda b: (b.narrow(0, 0, 2).exp()).sum(), x, v, create_graph=True)
        jac = F(lib).jacobian(lambda b: b ** 3, x, create_graph=True)
        total = hv.sum() + jac.sum()
        gx, gv = lib.autograd.grad(total, (x, v))
        return out.grad_fn is not None, hv.grad_fn is not None, rounded((gx, gv))

    on_both(scenario)


def test_grad_of_an_output_and_an_output_computed_from_it():
    # the engine must run a root that another root leads to after it (autograd.functional relies on it)
    def scenario(lib):
        a = lib.tensor(Y, requires_grad=True)
        y = a.exp()
        z = y * 3
        return rounded(lib.autograd.grad((y, z), a, (lib.ones(3), lib.ones(3))))

    on_both(scenario)


# --- gradcheck -----------------------------------------------------------------------------------------------

def test_gradcheck_is_a_module_and_a_function():
    module = importlib.import_module("gradiente.autograd.gradcheck")
    assert issubclass(module.GradcheckError, RuntimeError)
    x = gradiente.tensor(Y, requires_grad=True)
    assert gradiente.autograd.gradcheck(lambda t: t.sin(), (x,))
    assert module(lambda t: t.sin(), (x,))      # called as the module, as an alias importer may leave it
    assert module.gradcheck is gradiente.autograd.gradcheck or callable(gradiente.autograd.gradcheck)


def _hooked_clone(x):
    y = x.clone()
    y.register_hook(lambda g: g + 1e-2)
    return y


def test_gradcheck_reports_a_jacobian_mismatch():
    def scenario(lib):
        x = lib.ones(2, 2, dtype=lib.float64, requires_grad=True)
        quiet = lib.autograd.gradcheck(_hooked_clone, (x,), raise_exception=False)
        try:
            lib.autograd.gradcheck(_hooked_clone, (x,))
        except RuntimeError as error:
            return quiet, type(error).__name__, str(error).split("\n")[0]

    result = on_both(scenario)
    assert result[1] == (False, "GradcheckError", "Jacobian mismatch for output 0 with respect to input 0,")


def test_gradcheck_mismatch_message_prints_both_jacobians():
    def scenario(lib):
        x = lib.ones(2, dtype=lib.float64, requires_grad=True)
        return lib.autograd.gradcheck(_hooked_clone, (x,))

    assert "\nanalytical:tensor([[1.0100, 0.0100]," in on_both(scenario)[2]


def test_gradcheck_does_not_swallow_other_errors():
    def scenario(lib):
        def broken(x):
            raise RuntimeError("not a gradcheck error")

        return lib.autograd.gradcheck(broken, (lib.ones(2, dtype=lib.float64, requires_grad=True),),
                                      raise_exception=False)

    on_both(scenario)


def _nondeterministic(lib):
    class Jittery(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, jitter=0.0):
            ctx.jitter = jitter
            return x

        @staticmethod
        def backward(ctx, g):
            return Jittery.apply(g, ctx.jitter) * (1 + lib.rand_like(g) * ctx.jitter), None

    return Jittery


@pytest.mark.parametrize("jitter, tol", [(0.0, 0.0), (1e-6, 0.0), (1e-6, 1e-5)])
def test_gradcheck_detects_nondeterministic_backward(jitter, tol):
    def scenario(lib):
        Jittery = _nondeterministic(lib)
        x = lib.tensor(X, requires_grad=True)
        return lib.autograd.gradcheck(lambda t: Jittery.apply(t, jitter), (x,), nondet_tol=tol)

    result = on_both(scenario)
    if jitter and not tol:
        assert result[2].startswith("Backward is not reentrant")


def test_gradgradcheck_detects_nondeterministic_double_backward():
    def scenario(lib):
        Jittery = _nondeterministic(lib)
        x = lib.tensor(X, requires_grad=True)
        return lib.autograd.gradgradcheck(lambda t: Jittery.apply(t, 1e-12), (x,))

    assert on_both(scenario)[2].startswith("Backward is not reentrant")


def test_gradcheck_undefined_output_gradient():
    def scenario(lib):
        def fn(x):
            y = x.clone()
            y.register_hook(lambda g: (_ for _ in ()).throw(RuntimeError("undefined")) if g is None else None)
            return y

        x = lib.ones(1, dtype=lib.float64, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            quiet = lib.autograd.gradcheck(fn, (x,), raise_exception=False)
            skipped = lib.autograd.gradcheck(fn, (x,), check_undefined_grad=False)
        return quiet, skipped, [str(w.message).split(",")[0] for w in caught]

    on_both(scenario)


def test_gradcheck_with_no_differentiable_outputs():
    def scenario(lib):
        x = lib.ones(1, dtype=lib.float64, requires_grad=True)
        empty = lib.autograd.gradcheck(lambda t: (), (x,))
        detached = lib.autograd.gradcheck(lambda t: t.detach() * 2, (x,), raise_exception=False)
        constant = lib.autograd.gradcheck(lambda t: lib.ones(1), (x,))
        return empty, detached, constant

    on_both(scenario)


@pytest.mark.parametrize("case", ["no_input_requires_grad", "float32_input", "neither_mode"])
def test_gradcheck_argument_checks(case):
    def scenario(lib):
        x = lib.tensor(Y, requires_grad=case != "no_input_requires_grad",
                       dtype=lib.float32 if case == "float32_input" else lib.float64)
        kwargs = {"check_backward_ad": False} if case == "neither_mode" else {}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = lib.autograd.gradcheck(lambda t: t * 2, (x,), atol=1e-2, **kwargs)
        return result, [str(w.message) for w in caught]

    on_both(scenario)


def test_gradcheck_forward_ad_and_batched_grad_flags():
    def scenario(lib):
        x = lib.tensor(Y, requires_grad=True)
        return (lib.autograd.gradcheck(lambda t: t.sin() * t, (x,), check_forward_ad=True),
                lib.autograd.gradcheck(lambda t: t.exp(), (x,), check_batched_grad=False, fast_mode=True),
                lib.autograd.gradgradcheck(lambda t: (t ** 3).sum(), (x,)))

    on_both(scenario)


def test_gradcheck_accepts_empty_inputs_and_refuses_overlapping_ones():
    def scenario(lib):
        empty = lib.zeros(2, 0, dtype=lib.float64, requires_grad=True)
        ok = lib.autograd.gradcheck(lambda t: t * 2, (empty,))
        overlapping = lib.ones(1, dtype=lib.float64).expand(3).requires_grad_()
        try:
            lib.autograd.gradcheck(lambda t: t * 2, (overlapping,))
        except RuntimeError as error:
            return ok, str(error)

    assert "stride 0" in on_both(scenario)[1][1]


def test_gradgradcheck_draws_its_grad_outputs_as_torch_does():
    """gradgradcheck's random grad_outputs come from the global generator (torch.testing.make_tensor on [-1, 1)):
    the numbers drawn after it, and the Jacobians its failure message prints, are PyTorch's (the double-backward
    tutorial's gradgradcheck of a Function whose backward is not differentiable)."""
    def run(lib):
        class NotTwiceDifferentiable(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.doubled = 2 * x
                return x * x

            @staticmethod
            def backward(ctx, grad):
                return grad * ctx.doubled
        lib.manual_seed(0)
        x = lib.rand(2, 2, dtype=lib.float64, requires_grad=True)
        lib.autograd.gradgradcheck(lambda t: (t ** 3).sum(0), x)
        after = lib.rand(3).tolist()
        try:
            lib.autograd.gradgradcheck(NotTwiceDifferentiable.apply, x, gen_non_contig_grad_outputs=True)
        except Exception as error:      # the exception itself is what is compared
            return after, type(error).__name__, str(error).replace("gradiente.", "torch.")
        return after, None
    assert run(gradiente) == run(real_torch)
