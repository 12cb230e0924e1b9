"""The remaining small torch and Tensor names of issue 16, against PyTorch 2.13: the ``*_copy`` functions of alias,
detach and the sparse parts, ``from_file``, the deprecated ``resize``/``resize_as``, ``as_subclass``,
``grad_dtype``, shared memory and storage types, ``to_sparse_coo``, and the device and generator helpers.
Differentiable ones get a float64 gradcheck and PyTorch's gradients and node. (``slice_inverse``,
``hash_tensor`` and ``fill_diagonal_`` have test files named after their ops modules.)"""
import functools
import os
import warnings

import numpy as np
import pytest
from harness import OpSpec, assert_same, check_same_error, spec_tests

import gradiente
from gradiente.autograd import gradcheck

torch = pytest.importorskip("torch")


def text(value):
    """What ``print`` shows, with PyTorch's module name."""
    return str(value).replace("gradiente.", "torch.")


def node_name(t):
    return type(t.grad_fn).__name__


def leaf(lib, shape=(3, 4), seed=0):
    values = np.random.default_rng(seed).standard_normal(shape)
    return lib.tensor(values, dtype=lib.float64, requires_grad=True)


def same_forward_and_backward(fn, shape=(3, 4)):
    """``fn(lib, x)``: the same values and node in both libraries, and the same gradient for a non-trivial
    upstream gradient."""
    results = []
    for lib in (gradiente, torch):
        x = leaf(lib, shape)
        out = fn(lib, x)
        upstream = lib.tensor(np.arange(1.0, out.numel() + 1).reshape(tuple(out.shape)), dtype=lib.float64)
        out.backward(upstream)
        results.append((out.detach().numpy().copy(), node_name(out), x.grad.numpy().copy()))
    (ov, on, og), (tv, tn, tg) = results
    np.testing.assert_allclose(ov, tv)
    assert on == tn
    np.testing.assert_allclose(og, tg)


# --- the *_copy functions ------------------------------------------------------------------------------------

SPECS = [OpSpec("alias_copy", lambda lib, x: lib.alias_copy(x * 2), [((3, 4),), ((),)])]
test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


def test_alias_copy_is_a_copy():
    x = leaf(gradiente)
    out = gradiente.alias_copy(x)
    assert out._base is None and out.data_ptr() != x.data_ptr()
    assert gradcheck(gradiente.alias_copy, (x,))


def test_detach_copy_is_recorded_without_a_derivative_as_in_torch():
    ours, theirs = gradiente.detach_copy(leaf(gradiente)), torch.detach_copy(leaf(torch))
    assert text(ours) == str(theirs)
    assert ours.requires_grad == theirs.requires_grad and node_name(ours) == node_name(theirs) == "NotImplemented"
    check_same_error(lambda lib: lib.detach_copy(leaf(lib)).sum().backward())
    assert text(gradiente.detach_copy(gradiente.ones(2))) == str(torch.detach_copy(torch.ones(2)))


@pytest.mark.parametrize("name", ["indices_copy", "values_copy"])
def test_sparse_part_copies_raise_as_torch(name):
    # (PyTorch's message goes on to list the backends that have a kernel; gradiente's stops after the first two
    # sentences, as every one of its "Could not run" errors does)
    errors = []
    for lib in (gradiente, torch):
        with pytest.raises(NotImplementedError) as caught:
            getattr(lib, name)(lib.tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse())
        errors.append(str(caught.value))
    assert errors[1].startswith(errors[0])
    check_same_error(lambda lib: getattr(lib, name)(lib.ones(2, 2)))


# --- from_file, shared memory, storage types ----------------------------------------------------------------

def test_from_file_matches_torch(tmp_path):
    path = str(tmp_path / "values.bin")
    np.arange(6, dtype=np.float32).tofile(path)
    assert_same(lambda lib: lib.from_file(path, size=6))
    assert_same(lambda lib: lib.from_file(path, size=3, dtype=lib.float64))
    assert_same(lambda lib: lib.from_file(path))
    assert_same(lambda lib: lib.from_file(path, False, 100))
    assert_same(lambda lib: lib.from_file(str(tmp_path / "absent.bin"), False, 2))
    assert_same(lambda lib: lib.from_file(path, size=2, requires_grad=True).requires_grad)
    assert_same(lambda lib: lib.from_file(path, size=2, dtype=lib.int64, requires_grad=True))
    for lib in (gradiente, torch):                   # private: changes stay in the tensor
        t = lib.from_file(path, False, 4)
        t[0] = 9
        np.testing.assert_array_equal(np.fromfile(path, dtype=np.float32), np.arange(6))
    for lib, value in ((gradiente, 7), (torch, 9)):  # shared: changes reach the file
        t = lib.from_file(path, True, 4)
        t[0] = value
        assert np.fromfile(path, dtype=np.float32)[0] == value and t.is_shared()
    for lib in (gradiente, torch):                   # shared: a new file is made, of the tensor's size
        name = str(tmp_path / f"new_{lib.__name__}.bin")
        assert lib.from_file(name, True, 3).tolist() == [0.0, 0.0, 0.0] and os.path.getsize(name) == 12


def test_share_memory_and_is_shared_match_torch():
    for lib in (gradiente, torch):
        x = lib.zeros(3)
        view = x[1:]
        assert not x.is_shared() and x.share_memory_() is x
        assert x.is_shared() and view.is_shared() and not lib.zeros(3).is_shared()


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "uint8", "complex64"])
def test_storage_type_matches_torch(dtype):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ours = gradiente.zeros(2, dtype=getattr(gradiente, dtype)).storage_type()
    theirs = torch.zeros(2, dtype=getattr(torch, dtype)).storage_type()
    assert ours.__name__ == theirs.__name__ and "TypedStorage is deprecated" in str(caught[0].message)


# --- resize, resize_as, as_strided_, resize_as_ --------------------------------------------------------------

def test_resize_and_resize_as_match_torch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_forward_and_backward(lambda lib, x: x.resize(4, 3))
        same_forward_and_backward(lambda lib, x: x.t().resize(12))
        same_forward_and_backward(lambda lib, x: x.resize_as(lib.zeros(2, 6)))
        assert gradcheck(lambda t: t.resize(6, 2), (leaf(gradiente),))
        check_same_error(lambda lib: lib.zeros(2, 3).resize((3, 2)))
        check_same_error(lambda lib: lib.zeros(2).resize(4))
    for name, call in (("resize", lambda lib: lib.zeros(2, 3).resize(6)),
                       ("resize_as", lambda lib: lib.zeros(2, 3).resize_as(lib.zeros(6)))):
        with pytest.warns(UserWarning, match=f"non-inplace {name} is deprecated"):
            call(gradiente)


def test_torch_level_in_place_resizes_match_torch():
    assert_same(lambda lib: lib.as_strided_(lib.arange(6.0), (2, 2), (1, 2)))
    assert_same(lambda lib: lib.as_strided_(lib.arange(6.0), (2, 2), (1, 2), 1))
    assert_same(lambda lib: lib.resize_as_(lib.arange(6.0), lib.zeros(2, 3)))
    assert_same(lambda lib: lib.resize_as_(lib.arange(6.0), lib.zeros(2)))


# --- as_subclass, name, grad_dtype, to_sparse_coo ------------------------------------------------------------

def test_as_subclass_matches_torch():
    shown = []
    for lib in (gradiente, torch):
        class Mine(lib.Tensor):
            pass
        x = leaf(lib, (2, 2))
        out = x.as_subclass(Mine)
        assert type(out) is Mine and out.data_ptr() == x.data_ptr()
        shown.append((text(out), node_name(out)))
        (out * 2).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 2), 2.0))
    assert shown[0] == shown[1]
    check_same_error(lambda lib: lib.ones(2).as_subclass(int))


def test_name_is_none():
    assert gradiente.ones(2).name is None and torch.ones(2).name is None


def test_grad_dtype_matches_torch():
    def scenario(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        seen = [str(x.grad_dtype)]
        x.grad_dtype = lib.float64
        (x * 2).sum().backward()
        seen.append((str(x.grad_dtype), str(x.grad.dtype), x.grad.tolist()))
        x.grad_dtype = None
        x.grad = None
        (x * 3).sum().backward()
        seen.append((x.grad_dtype, str(x.grad.dtype)))
        x.grad = lib.ones(2, dtype=lib.float64)
        seen.append(str(x.grad.dtype))
        return text(seen)
    assert scenario(gradiente) == scenario(torch)
    check_same_error(lambda lib: (lib.ones(2, requires_grad=True) * 2).grad_dtype)

    def set_on_non_leaf(lib):
        (lib.ones(2, requires_grad=True) * 2).grad_dtype = lib.float64

    def set_an_int(lib):
        lib.ones(2, requires_grad=True).grad_dtype = 3

    def assign_other_dtype(lib):
        x = lib.ones(2, requires_grad=True)
        x.grad_dtype = lib.float64
        x.grad = lib.ones(2)
    for scenario_ in (set_on_non_leaf, set_an_int, assign_other_dtype):
        check_same_error(scenario_)


def test_grad_dtype_under_create_graph():
    for lib in (gradiente, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.grad_dtype = lib.float64
        (x ** 2).sum().backward(create_graph=True)
        assert str(x.grad.dtype).endswith("float64") and x.grad.tolist() == [2.0, 4.0]


def test_to_sparse_coo_matches_torch():
    assert text(gradiente.eye(2).to_sparse_coo()) == str(torch.eye(2).to_sparse_coo())
    same_forward_and_backward(lambda lib, x: x.to_sparse_coo().to_dense())
    assert gradcheck(lambda t: t.to_sparse_coo().to_dense(), (leaf(gradiente, (2, 3)),))


# --- device and generator helpers ----------------------------------------------------------------------------

def test_device_modules_and_helpers_match_torch():
    for device in (None, "cpu", "cuda", "cuda:0", "mps"):
        ours, theirs = gradiente.get_device_module(device), torch.get_device_module(device)
        assert ours.__name__.split(".")[-1] == theirs.__name__.split(".")[-1]
    assert gradiente.get_device_module(gradiente.device("cpu")) is gradiente.cpu
    check_same_error(lambda lib: lib.get_device_module("foo"))
    check_same_error(lambda lib: lib.get_device_module(3))
    assert gradiente.is_distributed(gradiente.ones(2)) is torch.is_distributed(torch.ones(2)) is False
    assert gradiente.thread_safe_generator() is None and torch.thread_safe_generator() is None


# --- the gradient layout contract and enforce_grad_layout_policy ---------------------------------------------

LAYOUT_CASES = [
    ("permuted_leaf", lambda lib: lib.empty(2, 3, 4).permute(2, 0, 1), lambda lib, p: (p * 2).sum()),
    ("transposed_leaf", lambda lib: lib.randn(3, 4).t(), lambda lib, q: (q.t() * 2).t().sum()),
    ("transposed_leaf_plain_grad", lambda lib: lib.randn(3, 4).t(), lambda lib, q: (q * 2).sum()),
    ("sliced_leaf", lambda lib: lib.randn(4, 6)[:, ::2], lambda lib, s: (s * 3).sum()),
    ("contiguous_leaf_transposed_grad", lambda lib: lib.randn(4, 3), lambda lib, c: (c.t() * 2).t().sum()),
    ("matmul_weight", lambda lib: lib.randn(3, 5),
     lambda lib, w: (lib.ones(2, 3, dtype=w.dtype) @ w).sum()),
]


@pytest.mark.parametrize("enforce", [True, False])
@pytest.mark.parametrize("name,make,loss", LAYOUT_CASES, ids=[c[0] for c in LAYOUT_CASES])
def test_gradient_layout_matches_torch(name, make, loss, enforce):
    seen = []
    for lib in (gradiente, torch):
        lib.manual_seed(0)
        leaf_ = make(lib).requires_grad_()
        with lib.autograd.enforce_grad_layout_policy(enforce):
            loss(lib, leaf_).backward()
        seen.append((leaf_.grad.stride(), leaf_.grad.tolist()))
    assert seen[0] == seen[1]


def test_enforce_grad_layout_policy_takes_effect_when_called_and_as_a_decorator():
    from gradiente.core import grad_layout
    policy = gradiente.autograd.enforce_grad_layout_policy(False)
    assert not grad_layout.is_enforced()
    with policy:
        pass
    assert grad_layout.is_enforced()

    @gradiente.autograd.enforce_grad_layout_policy(False)
    def inside():
        return grad_layout.is_enforced()
    assert grad_layout.is_enforced() and not inside() and grad_layout.is_enforced()


# --- torch.sparse.as_sparse_gradcheck ------------------------------------------------------------------------

SPARSE_FUNCTIONS = [
    ("to_dense", lambda lib, s, d: s.to_dense() * 2),
    ("sparse_mm", lambda lib, s, d: lib.sparse.mm(s, d)),
    ("mm", lambda lib, s, d: lib.mm(s, d)),
    ("scaled_sparse_output", lambda lib, s, d: s * 3),
    ("sparse_sum", lambda lib, s, d: lib.sparse.sum(s, 0)),
]


@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("name,fn", SPARSE_FUNCTIONS, ids=[f[0] for f in SPARSE_FUNCTIONS])
def test_as_sparse_gradcheck_agrees_with_torch(name, fn, masked):
    outcomes = []
    for lib in (gradiente, torch):
        check = lib.sparse.as_sparse_gradcheck(lib.autograd.gradcheck)
        s = lib.tensor([[0.0, 1.0], [2.0, 3.0]], dtype=lib.float64).to_sparse_coo().requires_grad_(True)
        d = lib.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], dtype=lib.float64, requires_grad=True)
        outcomes.append(check(functools.partial(fn, lib), (s, d), masked=masked))
    assert outcomes == [True, True]


def test_as_sparse_gradcheck_catches_a_wrong_gradient_of_a_sparse_input():
    class WrongScale(gradiente.autograd.Function):
        @staticmethod
        def forward(ctx, values):
            return values * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 3

    def fn(s):
        return gradiente.sparse_coo_tensor(s._indices(), WrongScale.apply(s._values()), s.shape).to_dense()
    s = gradiente.tensor([[0.0, 1.0], [2.0, 3.0]], dtype=gradiente.float64).to_sparse_coo().requires_grad_(True)
    check = gradiente.sparse.as_sparse_gradcheck(gradiente.autograd.gradcheck)
    assert check(fn, (s,), masked=True, raise_exception=False) is False
