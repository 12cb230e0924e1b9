"""Creation functions, dtype inference and promotion, Size, conversions: against PyTorch."""
import warnings

import numpy as np
import pytest
from harness import LAYOUT_IDS, NON_CONTIGUOUS_LAYOUTS, check_same_error, check_strides_match_torch, on_both, plain

import gradiente

torch = pytest.importorskip("torch")


def same(g, t):
    assert str(g.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (g.dtype, t.dtype)
    assert tuple(g.shape) == tuple(t.shape)
    np.testing.assert_array_equal(g.numpy(), t.numpy())


CREATIONS = [
    "tensor([2, 3])", "tensor([2., 3])", "tensor([True, False])", "tensor([[1, 2], [3, 4]])", "tensor(3)",
    "tensor(3.5)", "tensor([])", "tensor([[]])", "tensor([1.5], dtype=L.int64)", "tensor([True, 1])",
    "zeros(2, 3)", "zeros((2, 3))", "zeros([2, 3], dtype=L.int32)", "ones(4)", "ones(2, 2, dtype=L.float64)",
    "full((2, 3), 7)", "full((2,), 1.5)", "full((2,), True)", "empty(0)", "eye(3)", "eye(2, 4)",
    "arange(5)", "arange(1, 6)", "arange(0, 1, 0.1)", "arange(5, dtype=L.float32)", "arange(10, 0, -3)",
    "arange(0.5, 3)", "linspace(0, 1, 5)", "linspace(-3, 7, 11)", "linspace(0, 1, 7, dtype=L.float64)",
    "linspace(0, 10, 1)", "linspace(0, 10, 0)", "linspace(0.1, 0.9, 33)", "logspace(0, 3, 4)",
    "zeros_like(L.ones(2, 3))", "ones_like(L.ones(2, dtype=L.int64))",
    "full_like(L.ones(3), 2.5)", "FloatTensor([1, 2])", "LongTensor([1.7, 2])", "DoubleTensor(2, 3).zero_()",
    "Tensor([1, 2])", "Tensor()", "linspace(-1, 1, 50, dtype=L.float64)", "linspace(0, 10, 7, dtype=L.int64)",
    "tensor([[1., 2.], [3., 4.]]).t()", "from_numpy(np.arange(6.).reshape(2, 3))",
    "as_tensor([1, 2, 3])", "tensor(np.float64(1.5))", "tensor([np.float64(1.5)])", "tensor(np.arange(3))",
]


def names_of(module):
    """A module's names as ``from module import *`` would see them (gradiente makes most functions on first use, so
    ``vars(gradiente)`` holds only those made so far)."""
    return {name: getattr(module, name) for name in dir(module)}


@pytest.mark.parametrize("expr", CREATIONS)
def test_creation_matches_torch(expr):
    same(eval(expr, {"L": gradiente, "np": np, **names_of(gradiente)}),
         eval(expr, {"L": torch, "np": np, **vars(torch)}))


def test_logspace_close_to_torch():
    # PyTorch's vectorized pow differs from NumPy's by 1-3 ulp in some places: equal to float rounding only.
    for args in [(-1.3, 2.1, 9), (-2, 2, 9, 2.0), (0, 5, 50)]:
        np.testing.assert_allclose(gradiente.logspace(*args).numpy(), torch.logspace(*args).numpy(), rtol=1e-6)


def test_linspace_bit_exact_on_random_ranges():
    rng = np.random.RandomState(1)
    for _ in range(100):
        start, end = rng.uniform(-100, 100, 2)
        steps = int(rng.randint(2, 300))
        same(gradiente.linspace(start, end, steps), torch.linspace(start, end, steps))
        # float64: the fused multiply-add is emulated in long double, which can round twice (1 ulp, rarely)
        np.testing.assert_allclose(gradiente.linspace(start, end, steps, dtype=gradiente.float64).numpy(),
                                   torch.linspace(start, end, steps, dtype=torch.float64).numpy(), rtol=3e-16, atol=0)


ERRORS = [
    "tensor([[1, 2], [3]])", "tensor([1, 'a'])", "zeros(-1)", "ones(2, -1)", "full((-1,), 2.)", "eye(-1)",
    "arange(0, 5, -1)", "arange(0, 5, 0)", "tensor([1, 2], dtype='float')", "tensor([1, 2], requires_grad=True)",
    "ones(2, dtype='float')",
]


@pytest.mark.parametrize("expr", ERRORS)
def test_bad_input_errors_match_torch(expr):
    with pytest.raises(Exception) as want:
        eval(expr, {"np": np, **vars(torch)})
    with pytest.raises(type(want.value)) as got:
        eval(expr, {"np": np, **names_of(gradiente)})
    assert str(got.value) == str(want.value)


PROMOTIONS = [
    ("int64", 1.5), ("int64", 2), ("float32", 2.5), ("bool", 1), ("bool", 1.0), ("uint8", 300 - 44),
    ("int32", True), ("float16", 1.0), ("float64", 1),
]


@pytest.mark.parametrize("dtype,scalar", PROMOTIONS)
def test_tensor_scalar_promotion(dtype, scalar):
    a = np.array([1, 2, 3]).astype(dtype)
    same(gradiente.from_numpy(a.copy()) * scalar, torch.from_numpy(a.copy()) * scalar)


PAIRS = [("float32", (3,), "float64", ()), ("int64", (3,), "float32", ()), ("int32", (3,), "int64", (3,)),
         ("uint8", (3,), "int8", (3,)), ("float16", (3,), "float32", (3,)), ("bool", (3,), "int32", ()),
         ("int64", (), "float64", ()), ("float32", (3,), "float64", (3,)), ("int16", (3,), "float16", ())]


@pytest.mark.parametrize("d1,s1,d2,s2", PAIRS)
def test_tensor_tensor_promotion(d1, s1, d2, s2):
    a, b = np.ones(s1, dtype=d1), np.full(s2, 2, dtype=d2)
    same(gradiente.from_numpy(a.copy()) + gradiente.from_numpy(b.copy()), torch.from_numpy(a) + torch.from_numpy(b))
    assert str(gradiente.promote_types(getattr(gradiente, d1), getattr(gradiente, d2))).split(".")[-1] == \
        str(torch.promote_types(getattr(torch, d1), getattr(torch, d2))).split(".")[-1]


def test_int_division_gives_default_float():
    same(gradiente.tensor([1, 2]) / gradiente.tensor([2, 4]), torch.tensor([1, 2]) / torch.tensor([2, 4]))


def test_set_default_dtype():
    try:
        gradiente.set_default_dtype(gradiente.float64)
        assert gradiente.tensor([1.5]).dtype is gradiente.float64
        assert (gradiente.tensor([1, 2]) * 0.5).dtype is gradiente.float64
    finally:
        gradiente.set_default_dtype(gradiente.float32)
    assert gradiente.get_default_dtype() is gradiente.float32


def test_size_and_dtype_reprs():
    assert repr(gradiente.ones(2, 3).shape) == "gradiente.Size([2, 3])"
    assert gradiente.ones(2, 3).size() == (2, 3) and gradiente.ones(2, 3).size(-1) == 3
    assert gradiente.Size([2, 3]).numel() == 6
    assert repr(gradiente.float32) == "gradiente.float32"
    assert gradiente.float is gradiente.float32 and gradiente.long is gradiente.int64
    assert gradiente.double is gradiente.float64 and gradiente.half is gradiente.float16


def test_conversions_and_queries():
    x = gradiente.tensor([[1.5, 2.5], [3.5, 4.5]])
    assert x.dim() == 2 and x.numel() == 4 and len(x) == 2 and x.ndim == 2
    assert x.long().dtype is gradiente.int64 and x.double().dtype is gradiente.float64
    assert x.to(gradiente.int32).dtype is gradiente.int32 and x.to(x) is x
    assert x.type() == "torch.FloatTensor" and x.type(gradiente.float64).dtype is gradiente.float64
    assert x.tolist() == [[1.5, 2.5], [3.5, 4.5]]
    assert gradiente.tensor(2.5).item() == 2.5 and float(gradiente.tensor([3.0])) == 3.0
    assert [3, 4, 5][gradiente.tensor(1)] == 4
    assert bool(gradiente.tensor([1])) and x.is_floating_point() and not x.long().is_floating_point()
    assert str(x.device) == "cpu" and x.is_contiguous() and np.asarray(x).shape == (2, 2)
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value is ambiguous"):
        bool(x)
    with pytest.raises(RuntimeError, match="a Tensor with 4 elements cannot be converted to Scalar"):
        x.item()


def test_from_numpy_shares_memory():
    a = np.zeros(3)
    t = gradiente.from_numpy(a)
    a[0] = 5
    assert t[0].item() == 5.0


def test_a_requested_dtype_converts_each_python_number_once():
    # 0.7 must become the double nearest 0.7, not the float32 nearest 0.7 widened (a silent loss of digits);
    # float16 rounds from the double once.
    for lib in (gradiente, torch):
        assert lib.tensor([0.7], dtype=lib.float64).item() == 0.7
        assert lib.tensor(0.7, dtype=lib.float64).item() == 0.7
        assert lib.as_tensor([[0.1, 2]], dtype=lib.float64).tolist() == [[0.1, 2.0]]
        assert lib.DoubleTensor([0.7]).item() == 0.7
        assert lib.tensor([1e-46], dtype=lib.float64).item() == 1e-46
    assert gradiente.tensor([0.1], dtype=gradiente.float16).item() == torch.tensor([0.1], dtype=torch.float16).item()
    assert gradiente.tensor([0.7]).double().item() == torch.tensor([0.7]).double().item()


def test_like_functions_keep_a_dense_inputs_memory_layout():
    # PyTorch's preserve_format: a transposed input gives a transposed result (dropout's noise is drawn in
    # memory order, so the layout decides which elements are dropped); a strided or expanded one gives C order.
    for make in (lambda lib: lib.zeros(2, 3).t(), lambda lib: lib.zeros(2, 3, 4).permute(2, 0, 1),
                 lambda lib: lib.zeros(2, 4)[:, ::2], lambda lib: lib.zeros(3, 1).expand(3, 2)):
        strides = [tuple(fn(make(lib)).stride()) for lib in (gradiente, torch)
                   for fn in (lambda t, lib=lib: lib.empty_like(t), lambda t, lib=lib: lib.zeros_like(t),
                              lambda t, lib=lib: lib.full_like(t, 2.0))]
        assert strides[:3] == strides[3:]


_NOT_SIZES = {
    "zeros_float_first": lambda lib: lib.zeros(2.9, 2),
    "ones_float": lambda lib: lib.ones(2.5),
    "empty_float": lambda lib: lib.empty(2.5),
    "ones_float_in_tuple": lambda lib: lib.ones((2.0, 3)),
    "zeros_float_later": lambda lib: lib.zeros(2, 3, 2.0),
    "zeros_float_later_in_tuple": lambda lib: lib.zeros((2, 2.0)),
    "zeros_str": lambda lib: lib.zeros("2"),
    "zeros_str_first": lambda lib: lib.zeros("2", 2),
    "zeros_none": lambda lib: lib.zeros(None),
    "zeros_bool": lambda lib: lib.zeros(True),
    "zeros_bool_first_in_list": lambda lib: lib.zeros([True, 2]),
    "full_float": lambda lib: lib.full((2.5,), 1.0),
    "full_float_later": lambda lib: lib.full((2, 2.0), 1.0),
    "randn_float": lambda lib: lib.randn(2.5),
    "rand_float_later": lambda lib: lib.rand(2, 2.0),
    "linear_float": lambda lib: lib.nn.Linear(3.5, 2),
    "linear_str": lambda lib: lib.nn.Linear(3, "2"),
}


@pytest.mark.parametrize("name", list(_NOT_SIZES))
def test_sizes_that_are_not_integers_raise_torchs_type_error(name):
    """A float or str size is refused with PyTorch's message, never truncated (zeros(2.9) made 2 elements)."""
    check_same_error(_NOT_SIZES[name])


@pytest.mark.parametrize("size", [(2, True), (np.int64(2), 3), ([2, 3],)], ids=["bool_later", "numpy_int", "list"])
def test_integer_like_sizes_are_accepted_as_in_torch(size):
    assert tuple(gradiente.zeros(*size).shape) == tuple(torch.zeros(*size).shape)


@pytest.mark.parametrize("layout", NON_CONTIGUOUS_LAYOUTS, ids=LAYOUT_IDS)
@pytest.mark.parametrize("make", [lambda lib, x: lib.zeros_like(x), lambda lib, x: lib.empty_like(x),
                                  lambda lib, x: lib.ones_like(x, dtype=lib.float64)],
                         ids=["zeros_like", "empty_like", "ones_like_dtype"])
def test_like_functions_preserve_the_layout_as_torch(make, layout):
    check_strides_match_torch(lambda lib, x: make(lib, layout(x)))


@pytest.mark.parametrize("case", ["two_vectors", "float64", "int32_and_int", "float_and_int", "nested", "zero_dim",
                                  "one_by_one", "requires_grad"])
def test_tensor_of_a_sequence_holding_tensors_reads_each_as_a_number(case):
    def scenario(lib):
        data = {
            "two_vectors": lambda: [lib.ones(2), lib.ones(2)],
            "float64": lambda: [lib.tensor(1.0, dtype=lib.float64)],
            "int32_and_int": lambda: [lib.tensor(1, dtype=lib.int32), 2],
            "float_and_int": lambda: [lib.tensor(1.5), 2],
            "nested": lambda: [[lib.ones(1)], [lib.ones(1) * 2]],
            "zero_dim": lambda: [lib.ones(())],
            "one_by_one": lambda: [lib.ones(1, 1)],
            "requires_grad": lambda: [lib.ones(1, requires_grad=True) * 3, lib.ones((), requires_grad=True)],
        }[case]()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t = lib.tensor(data)
        # (PyTorch's message ends with where in its C++ it was raised)
        return plain(t), str(t.dtype).split(".")[-1], t.requires_grad, [str(w.message).split(" (Triggered")[0]
                                                                         for w in caught]

    on_both(scenario)


def test_from_numpy_refuses_negative_strides():
    def scenario(lib):
        return lib.from_numpy(np.arange(3.0)[::-1])

    assert on_both(scenario)[0] == "raised"
