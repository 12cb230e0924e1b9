"""Printing: gradiente's repr against real PyTorch's, character for character.

A deterministic corpus of arrays (random shapes, dtypes, magnitudes and special values, plus hand-picked
edge cases) is built once; each case is turned into a tensor by both libraries from the same NumPy
array, printed under the same print options, and the two strings compared after mapping the module name
(``gradiente.float64`` -> ``torch.float64``).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest

import gradiente
from gradiente.core.printing import tensor_repr

torch = pytest.importorskip("torch")


class Case(NamedTuple):
    id: str
    array: np.ndarray
    options: dict | None = None  # set_printoptions arguments, plus "default_dtype" for set_default_dtype
    grad: str | None = None      # None, "leaf" (requires_grad=True) or a key of GRAD_OPS


# ops that exist in both libraries and produce a grad_fn; each is exact or nearly so in float arithmetic
GRAD_OPS = {
    "add": lambda x: x + x,
    "sub": lambda x: x - 1.5,
    "mul": lambda x: x * 3,
    "div": lambda x: x / 4,
    "neg": lambda x: -x,
    "sum": lambda x: x.sum(),
    "mean": lambda x: x.mean(),
    "exp": lambda x: (x / 1e9).exp(),
}

FLOAT_DTYPES = [np.float16, np.float32, np.float64]
INT_DTYPES = [np.uint8, np.int8, np.int16, np.int32, np.int64]

OPTION_SETS = [
    {"precision": 0}, {"precision": 1}, {"precision": 2}, {"precision": 6}, {"precision": 8},
    {"sci_mode": True}, {"sci_mode": False}, {"precision": 2, "sci_mode": True},
    {"linewidth": 20}, {"linewidth": 40}, {"linewidth": 120},
    {"threshold": 5}, {"threshold": 10, "edgeitems": 1}, {"threshold": 20, "edgeitems": 0},
    {"edgeitems": 0}, {"edgeitems": 5, "threshold": 50},
    {"profile": "short"}, {"profile": "full"},
    {"default_dtype": "float64"},
]

# shapes above the default threshold of 1000 elements, so that summarization kicks in
LARGE_SHAPES = [(1001,), (2000,), (40, 30), (3, 400), (11, 11, 11), (2, 3, 200), (1, 1200), (1200, 1), (6, 7, 8, 9)]


# --- generating values ---------------------------------------------------------------------------------

def _random_shape(rs):
    ndim = rs.choice([0, 1, 1, 2, 2, 2, 3, 3, 4])
    low = 0 if rs.rand() < 0.08 else 1      # sometimes an empty dimension
    return tuple(int(n) for n in rs.randint(low, 7, size=ndim))


def _random_floats(rs, shape, dtype):
    kind = rs.choice(["uniform", "positive", "integral", "wide", "small_ints", "zeros"])
    scale = 10.0 ** rs.uniform(-10, 10)
    if kind == "uniform":
        values = rs.uniform(-1, 1, shape) * scale
    elif kind == "positive":
        values = rs.uniform(0, 1, shape) * scale
    elif kind == "integral":
        values = np.round(rs.uniform(-1, 1, shape) * 10.0 ** rs.uniform(0, 10))
    elif kind == "wide":
        values = rs.choice([-1.0, 1.0], size=shape) * 10.0 ** rs.uniform(-10, 10, shape)
    elif kind == "small_ints":
        values = rs.randint(-10, 11, size=shape).astype(np.float64)
    else:
        values = np.zeros(shape)
    values = np.asarray(values, dtype=np.float64)
    if values.size and rs.rand() < 0.3:
        mask = rs.random_sample(shape) < 0.2
        values[mask] = rs.choice([np.nan, np.inf, -np.inf, -0.0, 0.0], size=int(mask.sum()))
    with np.errstate(over="ignore"):            # float16 overflowing to inf is one of the cases wanted
        return values.astype(dtype)


def _random_ints(rs, shape, dtype):
    info = np.iinfo(dtype)
    if rs.rand() < 0.5:
        low, high = max(info.min, -100), min(info.max, 100)
    else:
        low, high = info.min, info.max
    return rs.randint(low, high, size=shape, dtype=dtype)


def _random_array(rs, shape):
    family = rs.choice(["float", "float", "float", "int", "bool", "complex"])
    if family == "float":
        return _random_floats(rs, shape, FLOAT_DTYPES[rs.randint(3)])
    if family == "int":
        return _random_ints(rs, shape, INT_DTYPES[rs.randint(5)])
    if family == "bool":
        return np.asarray(rs.random_sample(shape) < rs.choice([0.0, 0.5, 1.0]))
    dtype = np.complex64 if rs.rand() < 0.5 else np.complex128
    real, imag = _random_floats(rs, shape, np.float64), _random_floats(rs, shape, np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(real + 1j * imag).astype(dtype)


def _random_cases():
    rs = np.random.RandomState(1234)
    cases = []
    for i in range(220):
        cases.append(Case(f"random{i}", _random_array(rs, _random_shape(rs))))
    for i, shape in enumerate(LARGE_SHAPES * 3):
        cases.append(Case(f"large{i}-{shape}", _random_array(rs, shape)))
    for i in range(len(OPTION_SETS) * 3):
        options = OPTION_SETS[i % len(OPTION_SETS)]
        shape = LARGE_SHAPES[rs.randint(len(LARGE_SHAPES))] if rs.rand() < 0.3 else _random_shape(rs)
        cases.append(Case(f"options{i}-{options}", _random_array(rs, shape), options))
    grad_kinds = ["leaf", "leaf", *GRAD_OPS]
    for i in range(len(grad_kinds) * 4):
        kind = grad_kinds[i % len(grad_kinds)]
        shape = _random_shape(rs)
        dtype = [np.float32, np.float64][rs.randint(2)]
        if kind == "leaf" and rs.rand() < 0.3:
            dtype = np.float16
        cases.append(Case(f"grad{i}-{kind}", _random_floats(rs, shape, dtype), grad=kind))
    return cases


def _f(values, dtype=np.float32):
    return np.array(values, dtype=dtype)


HAND_CASES = [
    # empty tensors: the size is shown unless it is (0,), the dtype unless it is the default float
    Case("empty", _f([])),
    Case("empty-0x3", np.zeros((0, 3), np.float32)),
    Case("empty-2x0x4-int", np.zeros((2, 0, 4), np.int64)),
    Case("empty-bool", np.zeros(0, bool)),
    Case("empty-f64", np.zeros(0)),
    Case("empty-requires-grad", np.zeros((0, 2), np.float32), grad="leaf"),
    Case("empty-edgeitems0", np.zeros((3, 0), np.float32), {"edgeitems": 0}),
    # 0-d tensors
    Case("scalar", _f(3.0)), Case("scalar-neg-zero", _f(-0.0)), Case("scalar-nan", _f(np.nan)),
    Case("scalar-inf", _f(-np.inf)), Case("scalar-tiny", _f(1e-10)), Case("scalar-big", _f(123456789.0)),
    Case("scalar-int", np.array(5)), Case("scalar-bool", np.array(True)), Case("scalar-half", _f(0.1, np.float16)),
    Case("scalar-int8", np.array(-7, np.int8)), Case("scalar-complex", np.array(1 - 2j, np.complex64)),
    # the style boundaries: ratio 1000, max 1e8, min 1e-4
    Case("neg-zero", _f([-0.0, 1.0])), Case("zero-nan", _f([0.0, np.nan])), Case("all-nan", _f([np.nan, np.nan])),
    Case("infs", _f([np.inf, -np.inf, 0.0])), Case("inf-and-fraction", _f([np.inf, 1.5, -2.25])),
    Case("max-1e8", _f([1e8, 1.0], np.float64)), Case("above-1e8", _f([100000001.0, 1.0], np.float64)),
    Case("ratio-1000", _f([1.0, 1000.0])), Case("ratio-1001", _f([1.0, 1001.0])),
    Case("min-1e-4", _f([1e-4, 0.05], np.float64)), Case("below-1e-4", _f([9.9999e-5, 0.05], np.float64)),
    Case("round-up-width", _f([9.99995, 1.5], np.float64)),
    Case("halves-precision0", _f([0.5, 1.5, 2.5]), {"precision": 0}),
    Case("three-digit-exponents", _f([1e300, 1e-300, -1e-300, 5.0], np.float64)),
    Case("int-mode-sci", _f([1e10, -3.0, 0.0])),
    # integers and bools
    Case("int64-extremes", np.array([-2**63, 2**63 - 1, 0])), Case("uint8-range", np.array([0, 255, 7], np.uint8)),
    Case("bools", np.array([[True, False], [False, True]])), Case("all-true", np.ones(4, bool)),
    # float16 extremes
    Case("half-extremes", _f([65504.0, -65504.0, 6e-8, 1.0], np.float16)),
    # complex: each part has its own formatter
    Case("complex", np.array([1 + 2j, -1 - 0j, 3.5j, np.nan + 1j], np.complex64)),
    Case("complex128", np.array([[1e-5 + 2j, 1e5 - 1j]], np.complex128)),
    # wrapping at linewidth, and suffixes that do not fit on the last line
    Case("wrap", np.linspace(-1, 1, 30).astype(np.float32)),
    Case("wrap-suffix", np.linspace(-1, 1, 15), grad="leaf"),
    Case("long-suffix", np.arange(16.0).reshape(2, 8), grad="leaf"),
    Case("summarize-edge0-1d", np.arange(2000.0), {"edgeitems": 0}),
    Case("summarize-edge0-2d", np.arange(2000).reshape(40, 50), {"edgeitems": 0}),
    Case("default-f64-float32", _f([1.5, 2.0]), {"default_dtype": "float64"}),
    Case("default-f64-complex64", np.array([1 + 1j], np.complex64), {"default_dtype": "float64"}),
    Case("default-f64-empty-int", np.zeros(0, np.int64), {"default_dtype": "float64"}),
]

CORPUS = _random_cases() + HAND_CASES


# --- running -------------------------------------------------------------------------------------------

@pytest.fixture(autouse=True)
def default_options():
    yield
    for lib in (gradiente, torch):
        lib.set_printoptions(profile="default")
        lib.set_default_dtype(lib.float32)


def _apply(options):
    options = dict(options or {})
    default_dtype = options.pop("default_dtype", None)
    for lib in (gradiente, torch):
        lib.set_printoptions(**options)
        if default_dtype is not None:
            lib.set_default_dtype(getattr(lib, default_dtype))


def _pair(case):
    ours, theirs = gradiente.tensor(case.array), torch.from_numpy(case.array.copy())
    if case.grad is not None:
        ours.requires_grad_()
        theirs.requires_grad_()
        if case.grad != "leaf":
            ours, theirs = GRAD_OPS[case.grad](ours), GRAD_OPS[case.grad](theirs)
    return ours, theirs


def _same(ours, theirs):
    return repr(ours).replace("gradiente.", "torch.") == repr(theirs)


def test_corpus_is_large_enough():
    assert len(CORPUS) >= 300


@pytest.mark.parametrize("case", CORPUS, ids=[c.id for c in CORPUS])
def test_repr_matches_torch(case):
    _apply(case.options)
    ours, theirs = _pair(case)
    assert repr(ours).replace("gradiente.", "torch.") == repr(theirs)
    assert str(ours) == repr(ours)


def test_parameter_prints_containing_line():
    class Parameter(gradiente.Tensor):      # stands in for nn.Parameter, which prints by its class name
        pass

    array = np.array([[1.0, -2.5], [3.0, 4.0]], np.float32)
    ours = Parameter._make(array, requires_grad=True)
    theirs = torch.nn.Parameter(torch.from_numpy(array.copy()))
    assert _same(ours, theirs)


def test_parameter_subclass_prints_both_names():
    class Parameter(gradiente.Tensor):
        pass

    class MyParam(Parameter):
        pass

    array = np.array([1.0, 2.0], np.float32)
    ours = MyParam._make(array, requires_grad=True)
    theirs = type("MyParam", (torch.nn.Parameter,), {})(torch.from_numpy(array.copy()))
    assert _same(ours, theirs)


def test_subclass_prints_its_class_name():
    class MyTensor(gradiente.Tensor):
        pass

    array = np.array([1.0, 2.0], np.float32)
    ours = MyTensor._make(array)
    theirs = torch.from_numpy(array.copy()).as_subclass(type("MyTensor", (torch.Tensor,), {}))
    assert _same(ours, theirs)


def test_tensor_contents_replaces_the_values():
    array = np.arange(3.0)
    ours, theirs = gradiente.tensor(array), torch.from_numpy(array.copy())
    assert tensor_repr(ours, tensor_contents="[...]").replace("gradiente.", "torch.") == \
        theirs.__repr__(tensor_contents="[...]")


def test_get_printoptions_and_context_manager():
    assert gradiente.core.printing.get_printoptions() == torch._tensor_str.get_printoptions()
    with gradiente.core.printing.printoptions(precision=2, sci_mode=True), torch._tensor_str.printoptions(
            precision=2, sci_mode=True):
        assert gradiente.core.printing.get_printoptions() == torch._tensor_str.get_printoptions()
        assert _same(gradiente.tensor([1.23456]), torch.tensor([1.23456]))
    assert gradiente.core.printing.get_printoptions() == torch._tensor_str.get_printoptions()
    assert _same(gradiente.tensor([1.23456]), torch.tensor([1.23456]))


def test_set_printoptions_resets_sci_mode_like_torch():
    for lib in (gradiente, torch):
        lib.set_printoptions(sci_mode=True)
        lib.set_printoptions(precision=3)
    assert _same(gradiente.tensor([1.5, 2.0]), torch.tensor([1.5, 2.0]))


def test_grad_fn_suffix_is_the_class_name_as_torch_prints_it():
    # Nodes whose name() is a C++ name (CopySlices, NotImplemented) still print their class name.
    reprs = []
    for lib in (gradiente, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 1
        y[0] = 5
        reprs.append((repr(y), repr(lib.floor_divide(x, 2)), y.grad_fn.name()))
    assert reprs[0] == reprs[1]
