"""The op-spec harness: one table row per op drives the gradient tests.

A row (``OpSpec``) names the op, calls it the same way in gradiente and in PyTorch (``fn(lib, *inputs)``
with ``lib`` the module), and gives input shapes (broadcasting ones included) and a domain. From a table,
``spec_tests`` makes the tests a test module binds at top level:

* ``test_gradcheck``: float64 finite differences against gradiente's backward (``autograd.gradcheck``);
* ``test_against_torch``: forward values, backward with a non-trivial upstream gradient, and the
  ``grad_fn`` name, against real PyTorch on the same inputs, in each of the spec's dtypes;
* ``test_gradgradcheck``: second derivatives (the rules run on recorded tensors under ``create_graph``);
* each case runs on contiguous inputs and on strided ones, made by slicing a larger array (both libraries
  see the same strided data), unless the spec says ``extra={"contiguous_only": True}``;
* ``extra={"xfail": {"against_torch": reason}}`` (keys ``gradcheck``, ``against_torch``, ``gradgradcheck``)
  marks those tests of the spec as a known bug: ``xfail(strict=True)``, so the fix must drop the mark.

``backward_of(op)`` makes an op of an op's backward, for a row that checks a double-backward node.
"""
import importlib
import pathlib
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

import gradiente

try:
    import torch
except ImportError:  # pragma: no cover - the reference is optional for gradcheck-only runs
    torch = None


@dataclass
class OpSpec:
    name: str
    fn: Callable                                  # fn(lib, *tensors) -> tensor (or tuple; first is checked)
    shapes: Sequence[tuple[tuple, ...]]           # one tuple of input shapes per case
    domain: tuple[float, float] = (-2.0, 2.0)
    grad_inputs: Optional[Sequence[int]] = None   # which inputs require grad (default: all)
    make_inputs: Optional[Callable] = None        # make_inputs(rng, shapes) -> list of ndarrays (overrides domain)
    gradcheck: bool = True
    torch_grad: bool = True
    rtol32: float = 1e-5
    atol32: float = 1e-5
    check_name: bool = True
    dtypes: tuple[str, ...] = ("float32", "float64")
    extra: dict = field(default_factory=dict)

    def __str__(self):
        return self.name


def all_op_specs(skip=()):
    """``(module name, spec)`` for each OpSpec a test module of this folder holds at top level, alone or in a
    list or tuple, each spec once; modules named in ``skip`` are not imported."""
    specs = {}
    for path in sorted(pathlib.Path(__file__).parent.glob("test_*.py")):
        if path.stem in skip or "OpSpec(" not in path.read_text():
            continue
        module = importlib.import_module(path.stem)
        for value in vars(module).values():
            for item in value if isinstance(value, (list, tuple)) else (value,):
                if isinstance(item, OpSpec):
                    specs.setdefault(id(item), (path.stem, item))
    return list(specs.values())


def make_arrays(spec, shapes, seed, dtype="float64"):
    rng = np.random.RandomState(seed)
    if spec.make_inputs is not None:
        arrays = spec.make_inputs(rng, shapes)
    else:
        lo, hi = spec.domain
        arrays = [rng.uniform(lo, hi, size=s) for s in shapes]
    return [a.astype(dtype) if a.dtype.kind == "f" else a for a in arrays]


def non_contiguous(array):
    """The same values in a strided (non-contiguous) array, when the shape allows one."""
    if array.ndim == 0 or array.size < 2:
        return array
    big = np.zeros(array.shape[:-1] + (array.shape[-1] * 2,), dtype=array.dtype)
    big[..., ::2] = array
    view = big[..., ::2]
    assert not view.flags.c_contiguous
    return view


def make_tensors(lib, spec, shapes, seed=0, dtype="float64", contiguous=True):
    """The inputs of one case as ``lib`` tensors over fresh arrays (strided unless ``contiguous``); the
    floating-point inputs the spec differentiates require grad. The same seed gives both libraries the
    same values."""
    arrays = make_arrays(spec, shapes, seed, dtype)
    if not contiguous:
        arrays = [non_contiguous(a) for a in arrays]
    wanted = spec.grad_inputs if spec.grad_inputs is not None else range(len(arrays))
    return [lib.from_numpy(a).requires_grad_() if i in wanted and a.dtype.kind == "f" else lib.from_numpy(a)
            for i, a in enumerate(arrays)]


def _first(out):
    return out[0] if isinstance(out, (tuple, list)) else out


def _ours(spec):
    """The spec's op in gradiente as a function of its inputs, returning the (first) output."""
    def fn(*xs):
        return _first(spec.fn(gradiente, *xs))
    return fn


def check_gradcheck(spec, shapes, seed=0, contiguous=True):
    inputs = make_tensors(gradiente, spec, shapes, seed, contiguous=contiguous)
    assert gradiente.autograd.gradcheck(_ours(spec), inputs, eps=1e-6, atol=1e-5, rtol=1e-3)


def check_gradgradcheck(spec, shapes, seed=2):
    inputs = make_tensors(gradiente, spec, shapes, seed)
    assert gradiente.autograd.gradgradcheck(_ours(spec), inputs)


def check_against_torch(spec, shapes, dtype, seed=0, contiguous=True):
    assert torch is not None
    g_in = make_tensors(gradiente, spec, shapes, seed, dtype, contiguous)
    t_in = make_tensors(torch, spec, shapes, seed, dtype, contiguous)
    g_out, t_out = _first(spec.fn(gradiente, *g_in)), _first(spec.fn(torch, *t_in))
    rtol, atol = (spec.rtol32, spec.atol32) if dtype == "float32" else (1e-10, 1e-12)
    np.testing.assert_allclose(g_out.detach().numpy(), t_out.detach().numpy(), rtol=rtol, atol=atol,
                               err_msg=f"{spec.name}: forward differs")
    assert str(g_out.dtype).split(".")[-1] == str(t_out.dtype).split(".")[-1], f"{spec.name}: dtype differs"
    if not any(t.requires_grad for t in t_in) or not spec.torch_grad:
        return
    if spec.check_name:
        assert type(g_out.grad_fn).__name__ == type(t_out.grad_fn).__name__, \
            f"{spec.name}: grad_fn {type(g_out.grad_fn).__name__} != {type(t_out.grad_fn).__name__}"
    upstream = np.random.RandomState(seed + 1).uniform(0.5, 1.5, size=tuple(t_out.shape)).astype(dtype)
    g_out.backward(gradiente.from_numpy(upstream.copy()))
    t_out.backward(torch.from_numpy(upstream.copy()))
    for i, (g, t) in enumerate(zip(g_in, t_in)):
        if t.grad is None:
            assert g.grad is None or not np.any(g.grad.numpy()), f"{spec.name}: unexpected grad for input {i}"
            continue
        assert g.grad is not None, f"{spec.name}: missing grad for input {i}"
        # force: PyTorch gives some zero gradients (sgn's of real inputs) as a ZeroTensor, which numpy() refuses
        np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(force=True), rtol=rtol * 10, atol=atol * 10,
                                   err_msg=f"{spec.name}: grad of input {i} differs")


def backward_of(op):
    """The backward of ``op(lib, x)`` as an op of its own: ``fn(lib, x, v)`` is the vector-Jacobian product
    v·∂op/∂x, computed with ``create_graph=True`` as a gradient penalty computes it, so that its ``grad_fn`` is
    the op's double-backward node (``UpsampleNearest2DBackwardBackward0``, ``SliceBackwardBackward0``)."""
    def fn(lib, x, v):
        with lib.enable_grad():     # gradcheck's numerical pass runs under no_grad; the gradient needs a graph
            return lib.autograd.grad(op(lib, x), x, v, create_graph=True)[0]
    return fn


def _marks(spec, test):
    import pytest
    reason = spec.extra.get("xfail", {}).get(test)
    return [pytest.mark.xfail(strict=True, reason=reason)] if reason else []


def cases(specs, by_dtype=False, test=None):
    """pytest parameters: (spec, shapes) for every spec and each of its shape cases; with ``by_dtype``,
    (spec, shapes, dtype) for each of the spec's dtypes too. ``test`` names the test they are for, to mark the
    cases a spec marks as a known bug there."""
    import pytest
    params = []
    for s in specs:
        marks = _marks(s, test)
        for k, sh in enumerate(s.shapes):
            case = f"{s.name}-{'x'.join(str(d) for d in sh[0]) or 'scalar'}-{k}"
            if by_dtype:
                params += [pytest.param(s, sh, dtype, id=f"{case}-{dtype}", marks=marks) for dtype in s.dtypes]
            else:
                params.append(pytest.param(s, sh, id=case, marks=marks))
    return params


def spec_tests(specs):
    """The table-driven tests of an op-spec table, for a test module to bind at top level::

        test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)

    ``test_gradcheck`` and ``test_gradgradcheck`` cover the specs with ``gradcheck=True`` (the second
    derivatives on each spec's last shape case); ``test_against_torch`` covers every spec, the strided
    run on other values (seed 1)."""
    import pytest
    checked = [s for s in specs if s.gradcheck]

    def strided(spec):
        return not spec.extra.get("contiguous_only")

    @pytest.mark.parametrize("spec,shapes", cases(checked, test="gradcheck"))
    def test_gradcheck(spec, shapes):
        check_gradcheck(spec, shapes)
        if strided(spec):
            check_gradcheck(spec, shapes, contiguous=False)

    @pytest.mark.parametrize("spec,shapes,dtype", cases(specs, by_dtype=True, test="against_torch"))
    def test_against_torch(spec, shapes, dtype):
        pytest.importorskip("torch")
        check_against_torch(spec, shapes, dtype)
        if strided(spec):
            check_against_torch(spec, shapes, dtype, seed=1, contiguous=False)

    @pytest.mark.parametrize("spec", [pytest.param(s, id=str(s), marks=_marks(s, "gradgradcheck")) for s in checked])
    def test_gradgradcheck(spec):
        check_gradgradcheck(spec, spec.shapes[-1])

    return test_gradcheck, test_against_torch, test_gradgradcheck


def check_same_error(fn):
    """``fn(lib)`` raises in PyTorch; gradiente must raise the same exception type with the same message."""
    import pytest
    assert torch is not None
    with pytest.raises(Exception) as expected:
        fn(torch)
    with pytest.raises(type(expected.value)) as got:
        fn(gradiente)
    assert str(got.value) == str(expected.value)


# --- shared by the test files of the elementwise ops (unary, selection, binary_math, comparison, fill, special,
# arithmetic) -------------------------------------------------------------------------------------------------

#: shape cases: one input (a vector, a matrix, a scalar), and two inputs that broadcast against each other
UNARY = [((3,),), ((2, 3),), ((),)]
BCAST = [((3,), (3,)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2, 3)), ((4, 1, 3), (2, 1))]
POSITIVE = (0.5, 2.0)


def both_outcomes(fn):
    """``fn(lib)`` in both libraries: (result, None) or (None, (exception type name, message))."""
    out = []
    for lib in (gradiente, torch):
        try:
            out.append((fn(lib), None))
        except Exception as e:  # the point is to compare whatever each raises
            out.append((None, (type(e).__name__, str(e).split("\n")[0])))
    return out


def assert_same(fn):
    """Same values and dtype (or the same error type and message) in gradiente and PyTorch."""
    (g, g_err), (t, t_err) = both_outcomes(fn)
    assert g_err == t_err
    if t_err is None:
        if isinstance(t, torch.Tensor):
            assert str(g.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
            assert tuple(g.shape) == tuple(t.shape)
            if t.dtype.is_floating_point:   # transcendental functions may differ in the last bit
                np.testing.assert_allclose(np.asarray(g._data), t.numpy(), rtol=1e-6, atol=0)
            else:
                np.testing.assert_array_equal(np.asarray(g._data), t.numpy())
        else:
            assert g == t


def check_same_error_first_line(call):
    """``call(lib)`` raises in both libraries: the same exception type and the same first line of the message
    (where PyTorch's says "long int", gradiente's says "Long")."""
    (_, g_err), (_, t_err) = both_outcomes(call)
    assert t_err is not None and g_err is not None
    assert g_err[0] == t_err[0], (g_err, t_err)
    assert g_err[1] == t_err[1].replace("long int", "Long"), (g_err, t_err)


def operand(lib, name):
    """A small tensor of each dtype family, by letter (``OPERANDS``): int64, int32, uint8, bool, float32 with a
    nan, float64, and a float32 column with an infinity."""
    return {"i": lib.tensor([3, -1, 0, 2]), "h": lib.tensor([3, 1, 0, -2], dtype=lib.int32),
            "u": lib.tensor([3, 1, 0, 200], dtype=lib.uint8), "b": lib.tensor([True, False, False, True]),
            "f": lib.tensor([3.0, -1.5, 0.0, float("nan")]), "d": lib.tensor([3.0, 1.0, 0.0, 2.5], dtype=lib.float64),
            "F": lib.tensor([[1.5], [float("inf")]])}[name]


OPERANDS = ["i", "h", "u", "b", "f", "d", "F"]


def assert_same_values(ours, theirs, rtol, atol=0.0):
    """Equal nan and infinity patterns (signed), finite values within tolerance, the same dtype."""
    a, b = ours.detach().numpy().astype(np.float64), theirs.detach().numpy().astype(np.float64)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
    np.testing.assert_array_equal(a[np.isinf(b)], b[np.isinf(b)])
    finite = np.isfinite(b)
    np.testing.assert_allclose(a[finite], b[finite], rtol=rtol, atol=atol)


def check_inplace_form_matches_torch(name, args):
    """``x.<name>(*args)`` (an in-place method) returns x with PyTorch's values; on a non-leaf it records the
    out-of-place op's node, whose gradient is PyTorch's."""
    values = np.array([0.3, 0.7, 1.9, 2.5])
    ours, theirs = gradiente.from_numpy(values.copy()), torch.from_numpy(values.copy())
    assert getattr(ours, name)(*args) is ours
    getattr(theirs, name)(*args)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-13)
    # recorded in place: the node is the out-of-place op's
    x = gradiente.tensor(values, requires_grad=True)
    t = torch.tensor(values, requires_grad=True)
    y, u = x * 1, t * 1
    getattr(y, name)(*args)
    getattr(u, name)(*args)
    assert type(y.grad_fn).__name__ == type(u.grad_fn).__name__
    y.sum().backward()
    u.sum().backward()
    # digamma's and polygamma's gradients use PyTorch's trigamma, good to 2e-9 (test_trigamma_is_accurate)
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=2e-9)


def check_in_place_chain(chain):
    """``chain(lib, y)`` applies in-place forms to ``y = x * 1`` (``x = zeros(3, 4)``, requiring grad) and returns
    the names of the nodes they record; then ``y.sum()`` is backpropagated. gradiente and PyTorch must record the
    same nodes, and give ``x`` the same gradient, or raise the same error."""
    outcomes = []
    for lib in (gradiente, torch):
        x = lib.zeros(3, 4, requires_grad=True)
        y = x * 1
        trail = chain(lib, y)
        try:
            y.sum().backward()
            outcomes.append((trail, x.grad.numpy()))
        except RuntimeError as error:
            outcomes.append((trail, str(error)))
    (ours_trail, ours), (theirs_trail, theirs) = outcomes
    assert ours_trail == theirs_trail
    if isinstance(theirs, str):
        assert ours == theirs
    else:
        np.testing.assert_allclose(ours, theirs, atol=1e-6)


def check_api_names_match_torch(functions):
    """Each name is a function of gradiente, and a Tensor method (and an in-place one, name + "_") exactly where
    it is one in PyTorch."""
    for name in functions:
        assert hasattr(gradiente, name), name
        assert hasattr(gradiente.Tensor, name) == hasattr(torch.Tensor, name), name
        assert hasattr(gradiente.Tensor, name + "_") == hasattr(torch.Tensor, name + "_"), name + "_"


def check_zero_dim_result_is_writable(op):
    """NumPy turns 0-d results into scalars; a tensor must still hold a (writable) array."""
    out = op(gradiente.tensor(0.5))
    assert type(out._data) is np.ndarray and out._data.flags.writeable
    out.zero_()


def both(fn):
    """``fn(lib)`` for gradiente and for PyTorch."""
    return fn(gradiente), fn(torch)


def same_tensor(g, t):
    """The same dtype, shape and values (exactly)."""
    assert str(g.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert tuple(g.shape) == tuple(t.shape)
    np.testing.assert_array_equal(g.numpy(), t.numpy())


def both_quietly(fn):
    """``fn`` run on gradiente and on PyTorch, with warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(gradiente), fn(torch)


def assert_same_tensors(ours, theirs, rtol=1e-6, atol=0.0):
    """Equal values (NaN where NaN), the same dtype and shape, tensor by tensor."""
    if isinstance(theirs, (tuple, list)):
        assert isinstance(ours, (tuple, list)) and len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            assert_same_tensors(o, t, rtol, atol)
        return
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.is_conj() == theirs.is_conj() and ours.is_neg() == theirs.is_neg()
    ours, theirs = (t.detach().resolve_conj().resolve_neg().numpy() for t in (ours, theirs))
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol, equal_nan=True)


def check_strides_match_torch(fn):
    """``fn(lib, x)`` on a (3, 4) float32 ``x``: the result has PyTorch's shape and strides (a later ``view`` or
    in-place write depends on them)."""
    results = []
    for lib in (gradiente, torch):
        out = fn(lib, lib.arange(12.0).reshape(3, 4))
        results.append((tuple(out.shape), out.stride(), out.is_contiguous()))
    assert results[0] == results[1]


def outcome(scenario, lib):
    """What ``scenario(lib)`` did: its result as plain Python data, or the exception's type name and message."""
    try:
        return ("returned", scenario(lib))
    except Exception as error:  # the exception itself is what is compared
        return ("raised", type(error).__name__, str(error))


def on_both(scenario):
    """``scenario`` run on gradiente and on PyTorch: the same result, or the same exception and message."""
    ours, theirs = outcome(scenario, gradiente), outcome(scenario, torch)
    assert ours == theirs
    return ours


def plain(t):
    """A tensor (or None) as a nested list, to compare across the two libraries."""
    return None if t is None else t.detach().tolist()


def error_of(fn):
    """``(exception type name, message)`` of what ``fn()`` raises, or None."""
    try:
        fn()
    except Exception as e:  # the exception itself is what is compared
        return type(e).__name__, str(e)
    return None


def grad_fn_name(t):
    """The class name of ``t.grad_fn``, or None for a tensor without one."""
    return type(t.grad_fn).__name__ if t.grad_fn is not None else None


def overlap_outcome(call):
    """``call(lib, y)`` on ``y = arange(6.)``: the error's type and message, or y's values after the call."""
    def run(lib):
        y = lib.arange(6.0)
        try:
            call(lib, y)
        except RuntimeError as e:
            return "RuntimeError", str(e)
        return y.tolist()
    return run


#: tensors laid out otherwise than contiguously, each made from a (3, 4) matrix (ids: LAYOUT_IDS)
NON_CONTIGUOUS_LAYOUTS = [
    lambda x: x.t(),
    lambda x: x[:, ::2],
    lambda x: x.reshape(2, 3, 2).permute(1, 2, 0),
    lambda x: x.reshape(2, 3, 2)[:, ::2].transpose(1, 2),
    lambda x: x[:, :1].expand(3, 5),
]
LAYOUT_IDS = ["transposed", "strided", "permuted", "strided_transposed", "expanded"]



def random_windows(lib, data, length, batch):
    """``batch`` random windows of ``length`` tokens of ``data`` and the tokens that follow each (the targets), as
    karpathy's ``get_batch`` draws a language model's batch."""
    starts = lib.randint(len(data) - length - 1, (batch,))
    return (lib.stack([data[i:i + length] for i in starts]), lib.stack([data[i + 1:i + length + 1] for i in starts]))


def gpt_block_class(lib, layer_norm, mlp_activation):
    """nanoGPT's transformer block in ``lib``: pre-norm causal flash attention (``c_attn``, ``c_proj``) and an MLP,
    each added to the residual. ``layer_norm(channels)`` makes its norms, ``mlp_activation()`` the MLP's
    activation module."""
    nn, F = lib.nn, lib.nn.functional

    class Block(nn.Module):
        def __init__(self, channels, heads):
            super().__init__()
            self.ln_1, self.ln_2 = layer_norm(channels), layer_norm(channels)
            self.c_attn, self.c_proj = nn.Linear(channels, 3 * channels), nn.Linear(channels, channels)
            self.c_fc, self.mlp_proj = nn.Linear(channels, 4 * channels), nn.Linear(4 * channels, channels)
            self.activation = mlp_activation()
            self.heads = heads

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.c_attn(self.ln_1(x)).split(c, dim=2)
            q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.c_proj(y.transpose(1, 2).contiguous().view(b, t, c))
            return x + self.mlp_proj(self.activation(self.c_fc(self.ln_2(x))))
    return Block
