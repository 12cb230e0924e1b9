"""The data model's protocols (``core/tensor.py``) against PyTorch's: ``__format__`` (a 0-d tensor formats as its
number, with or without a format spec; any other tensor, or a Parameter, only with an empty spec, and otherwise
raises PyTorch's error), NumPy's ufuncs on tensors, and DLPack."""
import warnings

import numpy as np
import pytest
from harness import both, check_same_error, on_both

import gradiente

torch = pytest.importorskip("torch")


# --- Tensor.__format__ --------------------------------------------------------------------------------------------

FORMATS = [
    lambda lib: f"{lib.tensor(0.5):.2f}",
    lambda lib: f"{lib.tensor(0.5)}",
    lambda lib: f"{lib.tensor(0.1)}",                      # the float32 value as a Python float
    lambda lib: f"{lib.tensor(0.1, dtype=lib.float64):.3e}",
    lambda lib: f"{lib.tensor(3)}|{lib.tensor(7):>4}|{lib.tensor(255):x}",
    lambda lib: f"{lib.tensor(True)}",
    lambda lib: f"{lib.tensor(2.5, requires_grad=True)}",
    lambda lib: f"{lib.tensor(2.5, requires_grad=True) * 2:.1f}",
    lambda lib: format(lib.tensor(1.5), "") + format(lib.tensor(1.5), "08.3f"),
    lambda lib: f"{lib.tensor([1.0, 2.0])}",
    lambda lib: f"{lib.ones(2, 2, requires_grad=True)}",
    lambda lib: f"{lib.nn.Parameter(lib.tensor(0.5))}",
    lambda lib: f"{lib.tensor([0.5])}",
]


@pytest.mark.parametrize("case", range(len(FORMATS)))
def test_format_matches_torch(case):
    assert FORMATS[case](gradiente).replace("gradiente", "torch") == FORMATS[case](torch)


FORMAT_ERRORS = [
    lambda lib: f"{lib.tensor([1.0, 2.0]):.2f}",
    lambda lib: f"{lib.tensor([0.5]):.2f}",
    lambda lib: f"{lib.nn.Parameter(lib.tensor(0.5)):.2f}",
    lambda lib: f"{lib.tensor(3.5):d}",
]


@pytest.mark.parametrize("case", range(len(FORMAT_ERRORS)))
def test_format_errors_match_torch(case):
    check_same_error(FORMAT_ERRORS[case])


def test_numpy_of_a_tensor_that_requires_grad_under_no_grad():
    for lib in (gradiente, torch):
        x = lib.ones(2, requires_grad=True)
        with lib.no_grad():
            assert x.numpy().tolist() == [1.0, 1.0]
    check_same_error(lambda lib: lib.ones(2, requires_grad=True).numpy())


def test_data_assignment_and_deletion_refused_as_in_pytorch():
    def set_int_data(lib):
        x = lib.ones(2, requires_grad=True)
        x.data = lib.tensor([1, 2])
    check_same_error(set_int_data)
    for lib in (gradiente, torch):
        x = lib.ones(2, requires_grad=True)
        x.data = lib.zeros(2)
        assert x.tolist() == [0.0, 0.0]
        with pytest.raises(TypeError):
            x.data = None
        for name in ("data", "requires_grad", "_grad_fn", "_backward_hooks"):
            with pytest.raises(RuntimeError):
                delattr(x, name)
        del x.grad
        assert x.grad is None


@pytest.mark.parametrize("flag", ["yes", 1, 0, 1.0, None, np.bool_(True)], ids=repr)
def test_requires_grad_takes_only_a_bool(flag):
    def set_attribute(lib):
        lib.ones(2).requires_grad = flag

    def call_method(lib):
        lib.ones(2).requires_grad_(flag)
    for call in (set_attribute, call_method):
        with pytest.raises(Exception) as expected:
            call(torch)
        with pytest.raises(type(expected.value)) as got:
            call(gradiente)
        assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("convert", [np.asarray, np.array, np.sin, lambda t: np.asarray(t, dtype=np.float64)],
                         ids=["asarray", "array", "ufunc", "asarray_dtype"])
def test_numpy_refuses_a_tensor_that_requires_grad(convert):
    """NumPy reads a tensor through ``__array__``, which is ``numpy()``: refused while it requires grad, so the graph
    is never dropped silently."""
    messages = []
    for lib in (gradiente, torch):
        with pytest.raises(RuntimeError) as err:
            convert(lib.ones(3, requires_grad=True))
        messages.append(str(err.value))
        assert np.asarray(lib.ones(3, requires_grad=True).detach()).tolist() == [1.0, 1.0, 1.0]
    assert messages[0] == messages[1]


@pytest.mark.parametrize("make,value", [
    ("parameter", "int64"), ("leaf", "int64"), ("parameter", "bool"), ("plain", "int64"), ("leaf", "float64"),
])
def test_data_assignment_keeps_a_tensor_that_requires_grad_floating(make, value):
    def run(lib):
        x = {"parameter": lambda: lib.nn.Parameter(lib.ones(2)), "leaf": lambda: lib.ones(2, requires_grad=True),
             "plain": lambda: lib.ones(2)}[make]()
        try:
            x.data = lib.zeros(2, dtype=getattr(lib, value))
        except RuntimeError as e:
            return str(e)
        return str(x.dtype).split(".")[-1], x.requires_grad, x.tolist()
    ours, theirs = both(run)
    assert ours == theirs


@pytest.mark.parametrize("grad_dtype,out_dtype", [("long", "float32"), ("bool", "float32"), ("float64", "float32"),
                                                  ("int32", "float64"), ("complex64", "float32"),
                                                  ("float32", "complex64")])
def test_backward_casts_a_real_gradient_of_another_dtype(grad_dtype, out_dtype):
    """PyTorch casts the given gradient to the output's dtype; only real against complex is refused."""
    def run(lib):
        x = lib.ones(3, dtype=getattr(lib, out_dtype), requires_grad=True)
        try:
            (x * 2).backward(lib.ones(3, dtype=getattr(lib, grad_dtype)))
            via_grad, = lib.autograd.grad(x * 3, x, lib.ones(3, dtype=getattr(lib, grad_dtype)))
        except RuntimeError as e:
            return str(e).replace("gradiente.", "torch.")
        return x.grad.tolist(), str(x.grad.dtype).split(".")[-1], via_grad.tolist()
    ours, theirs = both(run)
    assert ours == theirs


@pytest.mark.parametrize("call", ["sin", "add", "sin_0d", "maximum", "sin_of_ints", "equal", "modf"])
def test_numpy_functions_on_tensors_give_tensors(call):
    """As with PyTorch (``__array_wrap__``): a NumPy ufunc applied to a tensor returns a tensor (a boolean
    result as uint8, PyTorch's choice); one that requires grad is refused."""
    def scenario(lib):
        t = lib.tensor([0.5, 2.0])
        with warnings.catch_warnings():     # PyTorch's __array_wrap__ has NumPy 1's signature: NumPy 2 warns
            warnings.simplefilter("ignore", DeprecationWarning)
            result = _numpy_call(call, lib, t)
        results = result if isinstance(result, tuple) else (result,)
        return [(type(r).__name__, str(r.dtype).split(".")[-1], r.tolist()) for r in results]

    on_both(scenario)


def _numpy_call(call, lib, t):
    return {"sin": lambda: np.sin(t), "add": lambda: np.add(t, 1), "sin_0d": lambda: np.sin(lib.tensor(0.5)),
            "maximum": lambda: np.maximum(t, 1.0), "sin_of_ints": lambda: np.sin(lib.arange(3)),
            "equal": lambda: np.equal(t, t), "modf": lambda: np.modf(t)}[call]()


def test_dlpack_shares_memory_both_ways():
    mine = gradiente.ones(3)
    theirs = torch.from_dlpack(mine)
    theirs[0] = 5.0
    assert mine.tolist() == [5.0, 1.0, 1.0]
    back = gradiente.from_dlpack(torch.arange(3.0))
    assert back.tolist() == [0.0, 1.0, 2.0] and back.dtype is gradiente.float32
    from_numpy = gradiente.from_dlpack(np.arange(2))
    assert from_numpy.dtype is gradiente.int64
    assert np.from_dlpack(mine).tolist() == [5.0, 1.0, 1.0]
    assert mine.__dlpack_device__() == (1, 0)
    with pytest.raises(BufferError, match=r"Can't export tensors that require gradient, use tensor\.detach\(\)"):
        gradiente.ones(2, requires_grad=True).__dlpack__()


def test_nbytes_itemsize_and_newaxis():
    def scenario(lib):
        x = lib.ones(3, 4, dtype=lib.float64)
        return (x.nbytes, x.itemsize, x[:, 0].nbytes, lib.ones(2, dtype=lib.int8).nbytes,
                tuple(x[:, lib.newaxis].shape))

    on_both(scenario)
