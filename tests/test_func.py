"""gradiente.func against torch.func (PyTorch 2.13, float64, the same functions and inputs): each transform,
their compositions, argnums and has_aux, functional_call, and PyTorch's error messages; then programs after
PyTorch's tutorials on Jacobians/Hessians and on neural tangent kernels (looping where they vmap)."""
import numpy as np
import pytest
import torch

import gradiente

RNG = np.random.default_rng(11)
X = RNG.standard_normal(4)
Y = RNG.standard_normal((3, 4))
V = RNG.standard_normal(4)


def as_lib(lib, a):
    return lib.tensor(a, dtype=lib.float64)


def numpy_tree(value):
    if isinstance(value, (tuple, list)):
        return [numpy_tree(v) for v in value]
    if isinstance(value, dict):
        return {k: numpy_tree(v) for k, v in value.items()}
    return value.detach().numpy()


def assert_same(ours, theirs):
    ours, theirs = numpy_tree(ours), numpy_tree(theirs)
    assert_same_trees(ours, theirs)


def assert_same_trees(a, b):
    if isinstance(b, list):
        assert isinstance(a, list) and len(a) == len(b)
        for x, y in zip(a, b):
            assert_same_trees(x, y)
    elif isinstance(b, dict):
        assert a.keys() == b.keys()
        for k in b:
            assert_same_trees(a[k], b[k])
    else:
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def applied(result, *args):
    """``(output, fn(*args), rest...)`` for a transform that returns ``(output, fn, ...)``."""
    return (result[0], result[1](*args), *result[2:])


def scalar(lib):
    return lambda x, y: (lib.sin(x) * (y @ x).exp().sum()).sum() + (x ** 3).sum()


def vector(lib):
    return lambda x: lib.tanh(x) * x.exp() + x.roll(1) * x


CASES = {
    "grad": lambda L: L.func.grad(scalar(L))(as_lib(L, X), as_lib(L, Y)),
    "grad argnums=1": lambda L: L.func.grad(scalar(L), argnums=1)(as_lib(L, X), as_lib(L, Y)),
    "grad argnums=(0, 1)": lambda L: L.func.grad(scalar(L), argnums=(0, 1))(as_lib(L, X), as_lib(L, Y)),
    "grad argnums=-1": lambda L: L.func.grad(scalar(L), argnums=-1)(as_lib(L, X), as_lib(L, Y)),
    "grad_and_value": lambda L: L.func.grad_and_value(scalar(L))(as_lib(L, X), as_lib(L, Y)),
    "grad of a dict": lambda L: L.func.grad(lambda p: (p["a"] * p["b"].cos()).sum())(
        {"a": as_lib(L, X), "b": as_lib(L, V)}),
    "vjp": lambda L: applied(L.func.vjp(vector(L), as_lib(L, X)), as_lib(L, V)),
    "jvp": lambda L: L.func.jvp(vector(L), (as_lib(L, X),), (as_lib(L, V),)),
    "jvp two inputs": lambda L: L.func.jvp(lambda x, y: y @ x.sin(), (as_lib(L, X), as_lib(L, Y)),
                                           (as_lib(L, V), as_lib(L, Y) * 2)),
    "linearize": lambda L: applied(L.func.linearize(vector(L), as_lib(L, X)), as_lib(L, V)),
    "jacrev": lambda L: L.func.jacrev(vector(L))(as_lib(L, X)),
    "jacfwd": lambda L: L.func.jacfwd(vector(L))(as_lib(L, X)),
    "jacrev argnums=(0, 1)": lambda L: L.func.jacrev(lambda x, y: y @ x.sin(), argnums=(0, 1))(
        as_lib(L, X), as_lib(L, Y)),
    "jacfwd argnums=(0, 1)": lambda L: L.func.jacfwd(lambda x, y: y @ x.sin(), argnums=(0, 1))(
        as_lib(L, X), as_lib(L, Y)),
    "jacrev of two outputs": lambda L: L.func.jacrev(lambda x: (x.sin(), x.sum()))(as_lib(L, X)),
    "jacfwd of two outputs": lambda L: L.func.jacfwd(lambda x: (x.sin(), x.sum()))(as_lib(L, X)),
    "hessian": lambda L: L.func.hessian(scalar(L))(as_lib(L, X), as_lib(L, Y)),
    "hessian argnums=(0, 1)": lambda L: L.func.hessian(scalar(L), argnums=(0, 1))(as_lib(L, X), as_lib(L, Y)),
    "grad of grad": lambda L: L.func.grad(lambda x: L.func.grad(scalar(L))(x, as_lib(L, Y)).sin().sum())(
        as_lib(L, X)),
    "jacrev of jacrev": lambda L: L.func.jacrev(L.func.jacrev(vector(L)))(as_lib(L, X)),
    "jacfwd of jacfwd": lambda L: L.func.jacfwd(L.func.jacfwd(vector(L)))(as_lib(L, X)),
    "jacrev of jacfwd": lambda L: L.func.jacrev(L.func.jacfwd(vector(L)))(as_lib(L, X)),
    "jvp of grad": lambda L: L.func.jvp(L.func.grad(lambda x: scalar(L)(x, as_lib(L, Y))), (as_lib(L, X),),
                                        (as_lib(L, V),)),
    "jvp of jvp": lambda L: L.func.jvp(lambda x: L.func.jvp(vector(L), (x,), (x.cos(),))[1], (as_lib(L, X),),
                                       (as_lib(L, V),)),
    "grad of jvp": lambda L: L.func.grad(lambda x: L.func.jvp(vector(L), (x,), (as_lib(L, V),))[1].sum())(
        as_lib(L, X)),
    "grad closing over a variable": lambda L: L.func.grad(
        lambda y: L.func.grad(lambda x: (x * y).sin().sum())(as_lib(L, X)).sum())(as_lib(L, V)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_transform_matches_torch_func(name):
    assert_same(CASES[name](gradiente), CASES[name](torch))


@pytest.mark.parametrize("name", ["grad", "jacrev", "jvp", "hessian", "jacfwd of jacfwd"])
def test_results_do_not_require_grad_when_nothing_outside_differentiates(name):
    ours = CASES[name](gradiente)
    leaves = ours if isinstance(ours, tuple) else (ours,)
    assert not any(t.requires_grad for t in leaves)


def test_a_result_stays_differentiable_for_a_caller_graph():
    for lib in (gradiente, torch):
        x = lib.tensor(X, requires_grad=True)
        g = lib.func.grad(lambda x: (x.sin() ** 2).sum())(x)
        assert g.requires_grad
        (second,) = lib.autograd.grad(g.sum(), x)
        if lib is gradiente:
            ours = second
    assert_same(ours, second)


def test_has_aux():
    def f(lib):
        return lambda x: ((x ** 2).sum(), {"mean": x.mean()})

    def vf(lib):
        return lambda x: (x.sin(), x.cos())

    for build in (lambda L: L.func.grad(f(L), has_aux=True)(as_lib(L, X)),
                  lambda L: L.func.grad_and_value(f(L), has_aux=True)(as_lib(L, X)),
                  lambda L: L.func.jacrev(vf(L), has_aux=True)(as_lib(L, X)),
                  lambda L: L.func.jacfwd(vf(L), has_aux=True)(as_lib(L, X)),
                  lambda L: L.func.jvp(vf(L), (as_lib(L, X),), (as_lib(L, V),), has_aux=True),
                  lambda L: applied(L.func.vjp(vf(L), as_lib(L, X), has_aux=True), as_lib(L, V))):
        assert_same(build(gradiente), build(torch))


def message(lib, call):
    with pytest.raises(Exception) as info:
        call(lib)
    return type(info.value).__name__, str(info.value).replace("gradiente.", "torch.")


ERRORS = {
    "grad of a vector": lambda L: L.func.grad(lambda x: x * 2)(as_lib(L, X)),
    "grad of a non-tensor": lambda L: L.func.grad(lambda x: 3.0)(as_lib(L, X)),
    "argnum out of range": lambda L: L.func.grad(scalar(L), argnums=2)(as_lib(L, X), as_lib(L, Y)),
    "argnum not an int": lambda L: L.func.grad(scalar(L), argnums=(0, "1"))(as_lib(L, X), as_lib(L, Y)),
    "argnums repeated": lambda L: L.func.grad(scalar(L), argnums=(0, 0))(as_lib(L, X), as_lib(L, Y)),
    "argnums empty": lambda L: L.func.grad(scalar(L), argnums=())(as_lib(L, X), as_lib(L, Y)),
    "argnums a list": lambda L: L.func.grad(scalar(L), argnums=[0])(as_lib(L, X), as_lib(L, Y)),
    "has_aux not a pair": lambda L: L.func.grad(lambda x: x.sum(), has_aux=True)(as_lib(L, X)),
    "vjp has_aux not a pair": lambda L: L.func.vjp(lambda x: x, as_lib(L, X), has_aux=True),
    "jvp has_aux not a pair": lambda L: L.func.jvp(lambda x: x, (as_lib(L, X),), (as_lib(L, X),), has_aux=True),
    "jvp primals not a tuple": lambda L: L.func.jvp(lambda x: x, as_lib(L, X), as_lib(L, X)),
    "jvp strict": lambda L: L.func.jvp(lambda x: as_lib(L, V) * 1, (as_lib(L, X),), (as_lib(L, X),), strict=True),
    "jvp non-tensor output": lambda L: L.func.jvp(lambda x: 1.0, (as_lib(L, X),), (as_lib(L, X),)),
    "vjp integer output": lambda L: L.func.vjp(lambda x: (x > 0).long(), as_lib(L, X)),
    "jacrev complex input": lambda L: L.func.jacrev(lambda x: x)(L.zeros(2, dtype=L.complex128)),
    "jacrev chunk_size 0": lambda L: L.func.jacrev(lambda x: x, chunk_size=0),
    "stack no models": lambda L: L.func.stack_module_state([]),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_are_pytorchs(name):
    assert message(gradiente, ERRORS[name]) == message(torch, ERRORS[name])


# --- functional_call ----------------------------------------------------------------------------------------

def small_net(lib):
    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.Tanh(), lib.nn.Linear(3, 2), lib.nn.BatchNorm1d(2))
    return net.double()


def functional_calls(lib):
    net = small_net(lib)
    params = {k: as_lib(lib, np.full(tuple(v.shape), 0.1) + np.arange(v.numel()).reshape(tuple(v.shape)) * 0.01)
              for k, v in net.named_parameters()}
    buffers = {k: v.clone() for k, v in net.named_buffers()}
    x = as_lib(lib, Y)
    out = lib.func.functional_call(net, (params, buffers), (x,))
    out_dict = lib.func.functional_call(net, {**params, **buffers}, x)
    net.eval()          # a training-mode BatchNorm would update buffers that a transform captures
    grads = lib.func.grad(lambda p: lib.func.functional_call(net, (p, buffers), (x,)).pow(2).sum())(params)
    return out, out_dict, grads, dict(net.named_parameters())["0.weight"]


def test_functional_call_with_given_parameters_and_buffers():
    assert_same(functional_calls(gradiente), functional_calls(torch))      # the last: the module's own, back


def tied_calls(lib):
    net = lib.nn.Sequential(lib.nn.Linear(2, 2, bias=False), lib.nn.Linear(2, 2, bias=False)).double()
    net[1].weight = net[0].weight
    w = as_lib(lib, np.eye(2) * 2)
    x = as_lib(lib, np.ones((1, 2)))
    tied = lib.func.functional_call(net, {"0.weight": w}, (x,))
    untied = lib.func.functional_call(net, {"0.weight": w}, (x,), tie_weights=False)
    two_values = message(lib, lambda L: L.func.functional_call(net, {"0.weight": w, "1.weight": w * 2}, (x,)))
    unexpected = message(lib, lambda L: L.func.functional_call(net, {"0.weight": w, "x": w}, (x,), strict=True))
    return (tied, untied), two_values, unexpected


def test_functional_call_strict_and_tied_weights():
    ours, theirs = tied_calls(gradiente), tied_calls(torch)
    assert_same(ours[0], theirs[0])
    assert ours[1] == theirs[1]
    assert ours[2][0] == "RuntimeError" and "Unexpected key(s): 'x'." in ours[2][1]


def test_stack_module_state():
    results = []
    for lib in (gradiente, torch):
        lib.manual_seed(0)
        models = [lib.nn.Linear(3, 2).double() for _ in range(3)]
        params, buffers = lib.func.stack_module_state(models)
        assert all(p.is_leaf and p.requires_grad for p in params.values()) and buffers == {}
        results.append(params)
    assert_same(results[0], results[1])


# --- programs after PyTorch's tutorials --------------------------------------------------------------------

def jacobians_tutorial(lib):
    """"Jacobians, Hessians, hvp, vhp, and more": jacrev, jacfwd and hessian of a small function, then an hvp
    by forward-over-reverse."""
    lib.manual_seed(0)
    D = 8
    weight = lib.randn(D, D, dtype=lib.float64)
    bias = lib.randn(D, dtype=lib.float64)
    x = lib.randn(D, dtype=lib.float64)

    def predict(weight, bias, x):
        return lib.nn.functional.linear(x, weight, bias).tanh()

    lines = []
    jac = lib.func.jacrev(predict, argnums=2)(weight, bias, x)
    lines.append(f"jacrev {tuple(jac.shape)} {[round(v, 10) for v in jac[0].tolist()]}")
    jac_fwd = lib.func.jacfwd(predict, argnums=2)(weight, bias, x)
    lines.append(f"same {bool(lib.allclose(jac, jac_fwd))}")
    ft_jac_weight, ft_jac_bias = lib.func.jacrev(predict, argnums=(0, 1))(weight, bias, x)
    lines.append(f"weight {tuple(ft_jac_weight.shape)} bias {tuple(ft_jac_bias.shape)} {ft_jac_bias.diagonal()}")
    hess = lib.func.hessian(lambda x: predict(weight, bias, x).sum())(x)
    lines.append(f"hessian {hess}")
    hess_rr = lib.func.jacrev(lib.func.jacrev(lambda x: predict(weight, bias, x).sum()))(x)
    lines.append(f"same {bool(lib.allclose(hess, hess_rr))}")

    def hvp(f, primals, tangents):
        return lib.func.jvp(lib.func.grad(f), primals, tangents)[1]

    tangent = lib.randn(D, dtype=lib.float64)
    lines.append(f"hvp {hvp(lambda x: x.sin().sum(), (x,), (tangent,))}")
    return "\n".join(lines)


def ntk_tutorial(lib):
    """"Neural tangent kernels": the empirical NTK of a small MLP at two batches, by Jacobian contraction and by
    NTK-vector products, with functional_call, jacrev and vjp/jvp, one example at a time instead of vmap."""
    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.Linear(3, 5), lib.nn.Tanh(), lib.nn.Linear(5, 2)).double()
    params = {k: v.detach() for k, v in net.named_parameters()}
    x1 = lib.randn(4, 3, dtype=lib.float64)
    x2 = lib.randn(3, 3, dtype=lib.float64)

    def fnet_single(params, x):
        return lib.func.functional_call(net, params, (x.unsqueeze(0),)).squeeze(0)

    def jacobians(xs):
        per_example = [lib.func.jacrev(fnet_single)(params, x) for x in xs]
        return {k: lib.stack([j[k] for j in per_example]) for k in params}

    jac1, jac2 = jacobians(x1), jacobians(x2)
    parts = [lib.einsum("Naf,Mbf->NMab", jac1[k].flatten(2), jac2[k].flatten(2)) for k in params]
    ntk = lib.stack(parts).sum(0)
    lines = [f"ntk {tuple(ntk.shape)} {ntk.sum(dim=(2, 3))}"]

    def ntk_vps(x1, x2):
        rows = []
        for a in x1:
            row = []
            for b in x2:
                _, vjp_fn = lib.func.vjp(lambda p, b=b: fnet_single(p, b), params)

                def column(v, a=a, vjp_fn=vjp_fn):
                    return lib.func.jvp(lambda p: fnet_single(p, a), (params,), vjp_fn(v))[1]

                row.append(lib.stack([column(v) for v in lib.eye(2, dtype=lib.float64)], 1))
            rows.append(lib.stack(row))
        return lib.stack(rows)

    by_products = ntk_vps(x1, x2)
    lines.append(f"same {bool(lib.allclose(ntk, by_products))}")
    return "\n".join(lines)


@pytest.mark.parametrize("program", [jacobians_tutorial, ntk_tutorial])
def test_tutorial_prints_what_torch_prints(program):
    assert program(gradiente).replace("gradiente", "torch") == program(torch)
