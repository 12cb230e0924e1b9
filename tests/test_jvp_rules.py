"""The forward-mode rules (``Node.jvp``), driven directly: record an op on inputs that require grad, then run the
``jvp`` of each node of its graph on tangent arrays, in the order the nodes were recorded, and compare the
output's tangent with

* the central finite difference (f(x + h·t) - f(x - h·t)) / 2h, in float64;
* PyTorch's forward mode (``torch.func.jvp``) on the same inputs and tangents, in float32 and float64.

Every row of the elementwise tables (``unary``, ``special``) is a case by itself; the
hand-written rules (arithmetic, reductions, views, products, linear maps) are cases below. A node without a
forward-mode rule raises PyTorch's error, word for word.
"""
import numpy as np
import pytest

import gradiente
from gradiente.core.dtype import FROM_NUMPY
from gradiente.core.node import AccumulateGrad, Node
from gradiente.core.rules import numpy_ops, tensor_ops
from gradiente.ops import special, unary

torch = pytest.importorskip("torch")
torch_jvp = torch.func.jvp

DTYPES = ("float32", "float64")


def forward_mode(out, leaf_tangents, ops=numpy_ops):
    """The tangent of ``out`` given the tangents of its leaves (``{id(leaf): tangent}``; a leaf not named has
    none): each node's ``jvp`` in the order the nodes were recorded, its inputs' tangents first broadcast and
    cast to the inputs' shapes and dtypes (the step Node.jvp's contract leaves to the forward-mode engine)."""
    nodes, stack = {}, [out.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or isinstance(node, AccumulateGrad) or id(node) in nodes:
            continue
        nodes[id(node)] = node
        stack.extend(n for n, _ in node.next_functions)
    tangents = {}
    for node in sorted(nodes.values(), key=lambda n: n._seq):
        inputs = []
        for (previous, _), meta in zip(node.next_functions, node._input_meta):
            if previous is None:
                tangent = None
            elif isinstance(previous, AccumulateGrad):
                tangent = leaf_tangents.get(id(previous.variable))
            else:
                tangent = tangents[id(previous)]
            inputs.append(None if tangent is None else _fit(ops, tangent, *meta))
        has_tangent = any(t is not None for t in inputs)
        tangents[id(node)] = node.jvp(ops, *inputs) if has_tangent else None
    result = tangents[id(out.grad_fn)]
    return None if result is None else _fit(ops, result, out._data.shape, out._data.dtype)


def _fit(ops, tangent, shape, np_dtype):
    if ops.recording:
        return tangent.expand(shape).to(FROM_NUMPY[np.dtype(np_dtype)])
    return np.broadcast_to(tangent, shape).astype(np_dtype)


def _declared(cls, key):
    """Whether a node class states the field: a class attribute, or an annotation somewhere in its classes."""
    return hasattr(cls, key) or any(key in vars(c).get("__annotations__", {}) for c in cls.__mro__)


# --- the cases ------------------------------------------------------------------------------------------------

class Case:
    """``fn(lib, *tensors)`` called the same way on gradiente and on torch; ``shapes`` one tuple of input shapes
    per run; ``node``: the name of ``out.grad_fn`` (the rule under test); ``tangents``: which inputs have one;
    ``finite_differences``: False where the result is not float64 (a cast), so a difference quotient says little."""

    def __init__(self, name, fn, shapes, node, domain=(-2.0, 2.0), tangents=None, make=None, rtol32=2e-4,
                 finite_differences=True):
        self.name, self.fn, self.shapes, self.node = name, fn, shapes, node
        self.domain, self.tangents, self.make, self.rtol32 = domain, tangents, make, rtol32
        self.finite_differences = finite_differences

    def __str__(self):
        return self.name

    def arrays(self, shapes, seed):
        rng = np.random.RandomState(seed)
        if self.make is not None:
            return self.make(rng, shapes)
        return [rng.uniform(*self.domain, size=s) for s in shapes]


def _module_lib(module):
    """How a table's functions are reached in each library: ``torch.special.erfcx``, ``torch.exp``."""
    if module is special:
        return lambda lib: lib.special
    return lambda lib: lib


#: rows whose function is defined on part of the line only
DOMAINS = {
    "log": (0.5, 2.0), "log2": (0.5, 2.0), "log10": (0.5, 2.0), "log1p": (-0.5, 2.0), "sqrt": (0.5, 2.0),
    "rsqrt": (0.5, 2.0), "asin": (-0.9, 0.9), "acos": (-0.9, 0.9), "atanh": (-0.9, 0.9), "acosh": (1.2, 3.0),
    "erfinv": (-0.9, 0.9), "lgamma": (0.5, 3.0), "digamma": (0.5, 3.0), "ndtri": (0.05, 0.95), "entr": (0.2, 2.0),
}


def _row_case(module, name):
    where = _module_lib(module)
    node = type(module.TABLE.functions[name](gradiente.ones(1, requires_grad=True)).grad_fn).__name__
    return Case(f"{module.__name__.rsplit('.', 1)[-1]}.{name}", lambda lib, x: getattr(where(lib), name)(x),
                [((3,),), ((2, 3),), ((),)], node, domain=DOMAINS.get(name, (-2.0, 2.0)))


TABLE_CASES = [_row_case(m, name) for m in (unary, special) for name in m.TABLE.functions]

BCAST = [((3,), (3,)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2, 3))]
ONE = [((3,),), ((2, 3),), ((),)]
MATRIX = [((2, 3),), ((4, 1),)]


def _away_from_zero(rng, shapes):
    return [rng.uniform(0.5, 2.0, size=s) * rng.choice([-1, 1], size=s) for s in shapes]


def _positive_then_any(rng, shapes):
    return [rng.uniform(0.5, 2.0, size=shapes[0])] + [rng.uniform(-2, 2, size=s) for s in shapes[1:]]


def _seeded_rrelu(lib, x):
    lib.manual_seed(7)
    return lib.nn.functional.rrelu(x, training=True)


HAND_WRITTEN = [
    # arithmetic
    Case("add", lambda lib, x, y: x + y, BCAST, "AddBackward0"),
    Case("add_x_only", lambda lib, x, y: x + y, BCAST, "AddBackward0", tangents=(0,)),
    Case("add_y_only", lambda lib, x, y: x + y, BCAST, "AddBackward0", tangents=(1,)),
    Case("add_number", lambda lib, x: x + 1.5, ONE, "AddBackward0"),
    Case("sub", lambda lib, x, y: x - y, BCAST, "SubBackward0"),
    Case("sub_y_only", lambda lib, x, y: lib.sub(x, y), BCAST, "SubBackward0", tangents=(1,)),
    Case("rsub", lambda lib, x: 2.0 - x, ONE, "RsubBackward1"),
    Case("rsub_alpha", lambda lib, x: lib.rsub(x, 2.0, alpha=3), ONE, "RsubBackward1"),
    Case("mul", lambda lib, x, y: x * y, BCAST, "MulBackward0"),
    Case("mul_x_only", lambda lib, x, y: x * y, BCAST, "MulBackward0", tangents=(0,)),
    Case("mul_y_only", lambda lib, x, y: x * y, BCAST, "MulBackward0", tangents=(1,)),
    Case("mul_number", lambda lib, x: x * 2.5, ONE, "MulBackward0"),
    Case("div", lambda lib, x, y: x / y, BCAST, "DivBackward0", make=_away_from_zero),
    Case("div_y_only", lambda lib, x, y: x / y, BCAST, "DivBackward0", tangents=(1,), make=_away_from_zero),
    Case("reciprocal", lambda lib, x: lib.reciprocal(x), ONE, "ReciprocalBackward0", make=_away_from_zero),
    Case("neg", lambda lib, x: -x, ONE, "NegBackward0"),
    Case("pow_int", lambda lib, x: x ** 3, ONE, "PowBackward0"),
    Case("pow_real", lambda lib, x: x ** 2.5, ONE, "PowBackward0", domain=(0.5, 2.0)),
    Case("pow_zero", lambda lib, x: x ** 0, ONE, "PowBackward0"),
    Case("pow_tensor", lambda lib, x, y: x ** y, BCAST, "PowBackward1", make=_positive_then_any),
    Case("pow_tensor_y_only", lambda lib, x, y: lib.pow(x, y), BCAST, "PowBackward1", tangents=(1,),
         make=_positive_then_any),
    Case("pow_number_base", lambda lib, x: lib.pow(2.5, x), ONE, "PowBackward2"),
    Case("to", lambda lib, x: x.to(lib.float64 if x.dtype == lib.float32 else lib.float32), ONE, "ToCopyBackward0",
         finite_differences=False),
    # reductions
    Case("sum", lambda lib, x: x.sum(), [((2, 3),), ((),)], "SumBackward0"),
    Case("sum_dim", lambda lib, x: x.sum(1), [((2, 3),), ((2, 3, 4),)], "SumBackward1"),
    Case("sum_dims_keepdim", lambda lib, x: x.sum((0, 2), keepdim=True), [((2, 3, 4),)], "SumBackward1"),
    Case("sum_dtype", lambda lib, x: x.sum(dtype=lib.float64), [((2, 3),)], "SumBackward0"),
    Case("mean", lambda lib, x: x.mean(), [((2, 3),), ((),)], "MeanBackward0"),
    Case("mean_dim", lambda lib, x: x.mean(-1), [((2, 3),), ((2, 3, 4),)], "MeanBackward1"),
    Case("mean_dims_keepdim", lambda lib, x: x.mean((0, 1), keepdim=True), [((2, 3, 4),)], "MeanBackward1"),
    # views
    Case("view", lambda lib, x: x.view(3, 2), MATRIX[:1], "ViewBackward0"),
    Case("reshape", lambda lib, x: x.reshape(-1), MATRIX, "ViewBackward0"),
    Case("reshape_alias", lambda lib, x: x.t().reshape(x.shape[1], x.shape[0]), MATRIX[:1], "ReshapeAliasBackward0"),
    Case("reshape_copy", lambda lib, x: x.t().reshape(-1), MATRIX[:1], "UnsafeViewBackward0"),
    Case("flatten", lambda lib, x: x.flatten(), [((2, 3, 4),)], "ViewBackward0"),
    Case("permute", lambda lib, x: x.permute(2, 0, 1), [((2, 3, 4),)], "PermuteBackward0"),
    Case("T", lambda lib, x: x.T, MATRIX, "PermuteBackward0"),
    Case("transpose", lambda lib, x: x.transpose(0, 2), [((2, 3, 4),)], "TransposeBackward0"),
    Case("transpose_same", lambda lib, x: x.transpose(1, 1), [((2, 3),)], "TransposeBackward0"),
    Case("mT", lambda lib, x: x.mT, [((2, 3, 4),)], "TransposeBackward0"),
    Case("t", lambda lib, x: x.t(), MATRIX, "TBackward0"),
    Case("expand", lambda lib, x: x.expand(2, 3, 4), [((3, 1),), ((4,),)], "ExpandBackward0"),
    Case("squeeze", lambda lib, x: x.squeeze(), [((2, 1, 3, 1),)], "SqueezeBackward0"),
    Case("squeeze_dim", lambda lib, x: x.squeeze(1), [((2, 1, 3),)], "SqueezeBackward1"),
    Case("squeeze_dims", lambda lib, x: x.squeeze((1, 3)), [((2, 1, 3, 1),)], "SqueezeBackward2"),
    Case("unsqueeze", lambda lib, x: x.unsqueeze(-1), MATRIX, "UnsqueezeBackward0"),
    Case("slice", lambda lib, x: x[:, 1:3], [((2, 4),)], "SliceBackward0"),
    Case("select", lambda lib, x: x[1], [((3, 2),), ((3,),)], "SelectBackward0"),
    Case("alias", lambda lib, x: x[...], MATRIX[:1], "AliasBackward0"),
    Case("clone", lambda lib, x: x.clone(), MATRIX[:1], "CloneBackward0"),
    # products (matmul as PyTorch composes it: dot, mv, mm, folded mm, expand + bmm)
    Case("mm", lambda lib, x, y: lib.mm(x, y), [((2, 3), (3, 4))], "MmBackward0"),
    Case("mm_y_only", lambda lib, x, y: x @ y, [((2, 3), (3, 4))], "MmBackward0", tangents=(1,)),
    Case("matmul_folded", lambda lib, x, y: x @ y, [((2, 2, 3), (3, 4))], "UnsafeViewBackward0"),
    Case("matmul_batched", lambda lib, x, y: x @ y, [((2, 2, 3), (1, 3, 4))], "UnsafeViewBackward0"),
    Case("matmul_matrix_batch", lambda lib, x, y: x @ y, [((2, 3), (5, 3, 2))], "CloneBackward0"),
    Case("bmm", lambda lib, x, y: lib.bmm(x, y), [((2, 2, 3), (2, 3, 4))], "BmmBackward0"),
    Case("mv", lambda lib, x, y: x @ y, [((2, 3), (3,))], "MvBackward0"),
    Case("vector_matrix", lambda lib, x, y: x @ y, [((3,), (3, 2))], "SqueezeBackward4"),
    Case("dot", lambda lib, x, y: x @ y, [((3,), (3,))], "DotBackward0"),
    Case("addmm", lambda lib, b, x, y: lib.addmm(b, x, y, beta=0.5, alpha=2.0), [((4,), (2, 3), (3, 4))],
         "AddmmBackward0"),
    Case("addmm_bias_only", lambda lib, b, x, y: lib.addmm(b, x, y), [((2, 4), (2, 3), (3, 4))], "AddmmBackward0",
         tangents=(0,)),
    Case("baddbmm", lambda lib, b, x, y: lib.baddbmm(b, x, y, alpha=0.5), [((2, 1, 4), (2, 2, 3), (2, 3, 4))],
         "BaddbmmBackward0"),
    Case("linear", lambda lib, x, w, b: lib.nn.functional.linear(x, w, b), [((2, 3), (4, 3), (4,))],
         "AddmmBackward0"),
    # ops linear in their input (linear_maps), and rrelu
    Case("interpolate_bilinear", lambda lib, x: lib.nn.functional.interpolate(x, scale_factor=2, mode="bilinear"),
         [((1, 2, 3, 2),)], "UpsampleBilinear2DBackward0"),
    Case("interpolate_nearest", lambda lib, x: lib.nn.functional.interpolate(x, size=5), [((1, 2, 3),)],
         "UpsampleNearest1DBackward0"),
    Case("interpolate_bicubic_aa",
         lambda lib, x: lib.nn.functional.interpolate(x, size=(2, 3), mode="bicubic", antialias=True),
         [((1, 1, 5, 6),)], "UpsampleBicubic2DAaBackward0"),
    Case("interpolate_area_3d", lambda lib, x: lib.nn.functional.interpolate(x, size=(2, 2, 3), mode="area"),
         [((1, 2, 3, 3, 4),)], "AdaptiveAvgPool3DBackward0"),
    Case("pixel_shuffle", lambda lib, x: lib.nn.functional.pixel_shuffle(x, 2), [((1, 8, 2, 3),)],
         "PixelShuffleBackward0"),
    Case("pixel_unshuffle", lambda lib, x: lib.nn.functional.pixel_unshuffle(x, 2), [((1, 2, 4, 6),)],
         "PixelUnshuffleBackward0"),
    Case("unfold", lambda lib, x: lib.nn.functional.unfold(x, 2, padding=1), [((1, 2, 3, 4),)], "Im2ColBackward0"),
    Case("fold", lambda lib, x: lib.nn.functional.fold(x, (3, 4), 2), [((1, 8, 6),)], "Col2ImBackward0"),
    Case("rrelu_eval", lambda lib, x: lib.nn.functional.rrelu(x), ONE, "RreluWithNoiseBackward0"),
    Case("rrelu_training", _seeded_rrelu, ONE, "RreluWithNoiseBackward0"),
    # PyTorch has no forward-mode formula for the in-place form: it is compared with the out-of-place one
    Case("rrelu_", lambda lib, x: lib.nn.functional.rrelu(x * 1, inplace=lib is gradiente), ONE,
         "RreluWithNoiseBackward1"),
    # hand-written elementwise rules beside the tables
    Case("round", lambda lib, x: lib.round(x), ONE, "RoundBackward0"),
    Case("round_decimals", lambda lib, x: lib.round(x, decimals=1), ONE, "RoundBackward1"),
    Case("logit", lambda lib, x: lib.logit(x), ONE, "LogitBackward0", domain=(0.1, 0.9)),
    Case("logit_eps", lambda lib, x: lib.logit(x, eps=0.2), ONE, "LogitBackward0", domain=(0.0, 1.0)),
    Case("polygamma", lambda lib, x: lib.polygamma(2, x), ONE, "PolygammaBackward0", domain=(0.5, 3.0)),
    Case("mvlgamma", lambda lib, x: lib.mvlgamma(x, 3), ONE, "MvlgammaBackward0", domain=(1.5, 4.0)),
    Case("nan_to_num", lambda lib, x: lib.nan_to_num(x), ONE, "NanToNumBackward0"),
    Case("logaddexp", lambda lib, x, y: lib.logaddexp(x, y), BCAST, "LogaddexpBackward0"),
    Case("logaddexp2_x_only", lambda lib, x, y: lib.logaddexp2(x, y), BCAST, "Logaddexp2Backward0", tangents=(0,)),
    Case("nextafter", lambda lib, x, y: lib.nextafter(x, y), BCAST[:2], "NextafterBackward0"),
    Case("nextafter_y_only", lambda lib, x, y: lib.nextafter(x, y), BCAST[:2], "NextafterBackward0", tangents=(1,)),
    Case("copysign", lambda lib, x, y: lib.copysign(x, y), BCAST[:2], "CopysignBackward0"),
    Case("copysign_number", lambda lib, x: lib.copysign(x, -1.0), ONE, "CopysignBackward1"),
    Case("ldexp", lambda lib, x, y: lib.ldexp(x, y), BCAST[:2], "LdexpBackward0"),
    Case("frexp", lambda lib, x: lib.frexp(x)[0], ONE, "FrexpBackward0"),
]

CASES = TABLE_CASES + HAND_WRITTEN


def _leaves(case, arrays, dtype, lib):
    """The inputs as tensors of ``lib``; those with a tangent require grad (gradiente records through them)."""
    with_tangent = range(len(arrays)) if case.tangents is None else case.tangents
    return [lib.tensor(a.astype(dtype), requires_grad=lib is gradiente and i in with_tangent)
            for i, a in enumerate(arrays)], list(with_tangent)


def _tangents(arrays, with_tangent, seed):
    rng = np.random.RandomState(seed + 1000)
    return {i: rng.uniform(-1.5, 1.5, size=arrays[i].shape) for i in with_tangent}


def _runs(case):
    for k, shapes in enumerate(case.shapes):
        yield shapes, 17 * k + len(case.name)


def _our_tangent(case, arrays, tangents, dtype, ops=numpy_ops):
    inputs, with_tangent = _leaves(case, arrays, dtype, gradiente)
    out = case.fn(gradiente, *inputs)
    assert out.grad_fn is not None and out.grad_fn.name() == case.node
    leaf_tangents = {id(inputs[i]): _as(ops, tangents[i].astype(dtype)) for i in with_tangent}
    return forward_mode(out, leaf_tangents, ops)


def _as(ops, array):
    return gradiente.from_numpy(array) if ops.recording else array


@pytest.mark.parametrize("case", [c for c in CASES if c.finite_differences], ids=str)
def test_jvp_against_finite_differences(case):
    """float64: the tangent from the rules equals (f(x + h·t) - f(x - h·t)) / 2h."""
    h = 1e-6
    for shapes, seed in _runs(case):
        arrays = case.arrays(shapes, seed)
        _, with_tangent = _leaves(case, arrays, "float64", gradiente)
        tangents = _tangents(arrays, with_tangent, seed)
        ours = _our_tangent(case, arrays, tangents, "float64")

        def f(step, arrays=arrays, tangents=tangents):
            moved = [a + step * tangents[i] if i in tangents else a for i, a in enumerate(arrays)]
            with gradiente.no_grad():
                return case.fn(gradiente, *[gradiente.tensor(a) for a in moved]).numpy().astype(np.float64)
        expected = (f(h) - f(-h)) / (2 * h)
        np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-6, err_msg=f"{case} {shapes}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_jvp_against_torch(case, dtype):
    """The tangent from the rules equals ``torch.func.jvp`` on the same inputs and tangents, in its dtype."""
    for shapes, seed in _runs(case):
        arrays = case.arrays(shapes, seed)
        _, with_tangent = _leaves(case, arrays, dtype, gradiente)
        tangents = _tangents(arrays, with_tangent, seed)
        ours = _our_tangent(case, arrays, tangents, dtype)
        fixed, _ = _leaves(case, arrays, dtype, torch)

        def f(*moving, fixed=fixed, with_tangent=with_tangent):
            inputs = list(fixed)
            for i, t in zip(with_tangent, moving):
                inputs[i] = t
            return case.fn(torch, *inputs)
        primals = tuple(fixed[i] for i in with_tangent)
        torch_tangents = tuple(torch.tensor(tangents[i].astype(dtype)) for i in with_tangent)
        value, expected = torch_jvp(f, primals, torch_tangents)
        # the tangent has the output's dtype (PyTorch's may be wider: a 0-d float32 tensor plus a number gets a
        # float64 tangent) and shape
        assert ours.dtype == value.numpy().dtype and ours.shape == tuple(expected.shape)
        # float64: the special functions' own approximations differ from PyTorch's by ~1e-10
        rtol, atol = (case.rtol32, 1e-5) if dtype == "float32" else (1e-8, 1e-12)
        expected = expected.numpy(force=True)       # force: PyTorch gives sgn's zero tangent as a ZeroTensor
        np.testing.assert_allclose(ours, expected, rtol=rtol, atol=atol, err_msg=f"{case} {shapes}")


@pytest.mark.parametrize("case", CASES, ids=str)
def test_jvp_on_recorded_tensors(case):
    """The same rules on gradiente Tensors (the ``create_graph`` namespace) give the same tangent, recorded."""
    shapes, seed = next(_runs(case))
    arrays = case.arrays(shapes, seed)
    _, with_tangent = _leaves(case, arrays, "float64", gradiente)
    tangents = _tangents(arrays, with_tangent, seed)
    on_arrays = _our_tangent(case, arrays, tangents, "float64")
    on_tensors = _our_tangent(case, arrays, tangents, "float64", ops=tensor_ops)
    assert isinstance(on_tensors, gradiente.Tensor)
    np.testing.assert_allclose(on_tensors.detach().numpy(), on_arrays, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_rules_read_declared_fields(case):
    """Every field a node of the graph was given by ``record`` is declared by its class."""
    shapes, seed = next(_runs(case))
    inputs, _ = _leaves(case, case.arrays(shapes, seed), "float64", gradiente)
    stack, seen = [case.fn(gradiente, *inputs).grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or isinstance(node, AccumulateGrad) or id(node) in seen:
            continue
        seen.add(id(node))
        undeclared = [key for key in vars(node) if not _declared(type(node), key)]
        assert not undeclared, f"{node.name()} has undeclared fields {undeclared}"
        stack.extend(n for n, _ in node.next_functions)


# --- the adjoint nodes of linear maps (recorded under create_graph): their tangent is the adjoint map ----------

ADJOINTS = [
    ("interpolate_bilinear", lambda lib, x: lib.nn.functional.interpolate(x, scale_factor=2, mode="bilinear"),
     (1, 2, 3, 2), "UpsampleBilinear2DBackwardBackward0"),
    ("unfold", lambda lib, x: lib.nn.functional.unfold(x, 2), (1, 2, 3, 4), "Col2ImBackward0"),
    ("rrelu", lambda lib, x: lib.nn.functional.rrelu(x), (2, 3), "RreluWithNoiseBackwardBackward0"),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("name", "fn", "shape", "node"), ADJOINTS, ids=[a[0] for a in ADJOINTS])
def test_jvp_of_adjoint_node(name, fn, shape, node, dtype):
    """The gradient's own node (its input the upstream gradient g) has the tangent Aᵀ·g', which is PyTorch's
    vector-Jacobian product of the op at g'."""
    rng = np.random.RandomState(3)
    x = gradiente.tensor(rng.uniform(-2, 2, size=shape).astype(dtype), requires_grad=True)
    out = fn(gradiente, x)
    g = gradiente.tensor(rng.uniform(-1, 1, size=out.shape).astype(dtype), requires_grad=True)
    (dx,) = gradiente.autograd.grad(out, x, g, create_graph=True)
    assert dx.grad_fn.name() == node
    g_t = rng.uniform(-1, 1, size=out.shape).astype(dtype)
    ours = forward_mode(dx, {id(g): g_t})
    _, vjp = torch.func.vjp(lambda a: fn(torch, a), torch.tensor(x.detach().numpy()))
    (expected,) = vjp(torch.tensor(g_t))
    np.testing.assert_allclose(ours, expected.numpy(), rtol=1e-5 if dtype == "float32" else 1e-12, atol=1e-6)


# --- nodes without a forward-mode rule ------------------------------------------------------------------------

def _torch_error(fn, *inputs):
    with pytest.raises(NotImplementedError) as info:
        torch_jvp(fn, inputs, tuple(torch.ones_like(t) for t in inputs))
    return str(info.value)


def _our_error(out, n_inputs):
    with pytest.raises(NotImplementedError) as info:
        out.grad_fn.jvp(numpy_ops, *[np.ones(out.shape)] * n_inputs)
    return str(info.value)


def test_no_formula_raises_pytorchs_error():
    """zeta's derivative in q exists, its forward-mode formula does not (in PyTorch either): the default
    ``Node.jvp`` raises PyTorch's message, naming the op as PyTorch does."""
    x = np.array([2.5, 3.0, 4.0])
    q = np.array([0.5, 1.0, 2.0])
    ours = _our_error(gradiente.special.zeta(gradiente.tensor(x), gradiente.tensor(q, requires_grad=True)), 2)
    theirs = _torch_error(lambda b: torch.special.zeta(torch.tensor(x), b), torch.tensor(q))
    assert ours == theirs
    assert ours.startswith("Trying to use forward AD with special_zeta that does not support it because it has not "
                           "been implemented yet.")


@pytest.mark.parametrize(("name", "fn"), [
    ("heaviside", lambda lib, x: lib.heaviside(x, x)),
    ("floor_divide", lambda lib, x: lib.floor_divide(x, 2.0)),
])
def test_not_differentiable_raises_pytorchs_error(name, fn):
    """Ops PyTorch defines no derivative for say so in forward mode too, in PyTorch's words."""
    x = np.array([-1.5, 0.0, 2.5])
    out = fn(gradiente, gradiente.tensor(x, requires_grad=True))
    ours = _our_error(out, len(out.grad_fn.next_functions))
    assert ours == _torch_error(lambda a: fn(torch, a), torch.tensor(x))
    assert ours == f"Trying to use forward AD with aten::{name} that does not support it."


def test_node_without_rule_names_its_op():
    """A node class with no ``jvp`` of its own: the op's name is read from the node's (``aten_name`` overrides)."""
    class NativeLayerNormBackward0(Node):
        pass

    class CdistBackward0(Node):
        aten_name = "_cdist_forward"

    with pytest.raises(NotImplementedError, match=r"^Trying to use forward AD with native_layer_norm that does not"):
        NativeLayerNormBackward0().jvp(numpy_ops, np.ones(2))
    with pytest.raises(NotImplementedError, match=r"^Trying to use forward AD with _cdist_forward that does not"):
        CdistBackward0().jvp(numpy_ops, np.ones(2))
