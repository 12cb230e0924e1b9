"""Names of PyTorch's public surface added for issue 16, each compared with real torch on the same inputs:
layouts and memory formats, ``torch.random``, the deprecated ``range`` and
``set_default_tensor_type``, the NumPy-named aliases, Tensor methods for in-place products and scans, older
linear-algebra names and memory questions."""
import pickle
import warnings

import numpy as np
import pytest

import gradiente
from gradiente.autograd import gradcheck

torch = pytest.importorskip("torch")
LIBS = (gradiente, torch)
A = np.arange(1.0, 7.0).reshape(2, 3) / 7


def _np(t):
    return t.detach().numpy()


def test_layouts_and_memory_formats():
    for lib in LIBS:
        assert lib.ones(2).layout is lib.strided
        assert isinstance(lib.strided, lib.layout) and isinstance(lib.channels_last, lib.memory_format)
    assert repr(gradiente.channels_last) == "gradiente.channels_last"      # as dtypes: the library's own name
    assert pickle.loads(pickle.dumps(gradiente.channels_last)) is gradiente.channels_last
    a = np.arange(24.0).reshape(1, 2, 3, 4)
    results = []
    for lib in LIBS:
        x = lib.tensor(a, requires_grad=True)
        y = x.contiguous(memory_format=lib.channels_last)
        z = x.clone(memory_format=lib.channels_last)
        (y * 2 + z).sum().backward()
        results.append((y.stride(), z.stride(), y.is_contiguous(), y.is_contiguous(memory_format=lib.channels_last),
                        y.contiguous(memory_format=lib.channels_last) is y, type(y.grad_fn).__name__,
                        _np(x.grad).tolist(), _np(y).tolist()))
        with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
            lib.ones(2, 3).contiguous(memory_format=lib.channels_last)
    assert results[0] == results[1]


def test_torch_random_forks_and_seeds_as_torch():
    drawn = []
    for lib in LIBS:
        lib.manual_seed(7)
        with lib.random.fork_rng():
            inside = lib.rand(3).tolist()
        after = lib.rand(3).tolist()
        lib.random.manual_seed(3)
        drawn.append((inside, after, lib.random.initial_seed(), lib.rand(2).tolist(),
                      bytes(lib.random.get_rng_state().numpy()), lib.random.thread_safe_generator()))
    assert drawn[0] == drawn[1]
    with gradiente.random.fork_rng(enabled=False):
        gradiente.rand(1)


def test_range_and_set_default_tensor_type_warn_as_torch():
    seen = []
    for lib in LIBS:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            values = [lib.range(1, 2, 0.5), lib.range(1, 4, dtype=lib.int64), lib.range(4, 1, -1.5)]
            with pytest.raises(TypeError, match='missing 1 required positional arguments: "end"'):
                lib.range(3)
            lib.set_default_tensor_type(lib.DoubleTensor)
            double = lib.get_default_dtype()
            lib.set_default_tensor_type("torch.FloatTensor")
        seen.append(([(v.tolist(), str(v.dtype).split(".")[1]) for v in values], str(double).split(".")[1],
                     [str(w.message).split(" (Triggered")[0] for w in caught]))
    assert seen[0] == seen[1]
    assert gradiente.get_default_dtype() is gradiente.float32


def test_numpy_named_aliases_and_in_place_forms():
    x = np.array([0.25, 0.5, 0.75])
    for name in ("absolute", "arccos", "arcsin", "arctan", "arcsinh", "arctanh"):
        ours, theirs = (getattr(lib, name)(lib.tensor(x)) for lib in LIBS)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
        a, b = (getattr(lib.tensor(x), name + "_")() for lib in LIBS)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
    m = np.arange(1.0, 7.0).reshape(2, 3)
    for name, extra in (("cumsum_", (1,)), ("cumprod_", (0,))):
        a, b = (getattr(lib.tensor(m), name)(*extra) for lib in LIBS)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    mats = [np.ones((2, 2)), np.arange(4.0).reshape(2, 2), np.arange(4.0).reshape(2, 2) + 1]
    vec = np.array([1.0, -1.0])
    for name, args in (("addmm_", (mats[1], mats[2])), ("addmv_", (mats[1], vec)), ("addr_", (vec, vec)),
                       ("baddbmm_", (mats[1][None], mats[2][None]))):
        outs = []
        for lib in LIBS:
            base = lib.tensor(mats[0][None] if name == "baddbmm_" else mats[0] if name != "addmv_" else vec)
            outs.append(getattr(base, name)(*(lib.tensor(a) for a in args), beta=0.5, alpha=2).numpy())
        np.testing.assert_array_equal(*outs)


def test_diagflat_adjoint_and_nonzero_static():
    seen = []
    for lib in LIBS:
        x = lib.tensor(A, requires_grad=True)
        d = lib.diagflat(x, 1)
        c = lib.tensor(A + 1j * A)
        adj = c.adjoint()
        d.sum().backward()
        seen.append((d.shape == (7, 7), type(d.grad_fn).__name__, type(d.grad_fn.next_functions[0][0]).__name__,
                     _np(x.grad).tolist(), adj.resolve_conj().numpy().tolist(), x.adjoint().shape == (3, 2),
                     lib.nonzero_static(lib.tensor([0, 1, 0, 2]), size=3).tolist(),
                     lib.nonzero_static(lib.tensor([[0, 1], [2, 0]]), size=1, fill_value=9).tolist()))
        with pytest.raises(RuntimeError, match=r"tensor.adjoint\(\) is only supported on matrices"):
            lib.adjoint(lib.ones(3))
    assert seen[0] == seen[1]
    assert gradcheck(lambda t: gradiente.diagflat(t, -1), (gradiente.tensor(A, requires_grad=True),))


def test_creation_by_strides_permutation_and_buffer():
    for lib in LIBS:
        assert lib.empty_strided((2, 3), (1, 2)).stride() == (1, 2)
        assert lib.empty_permuted((2, 3, 4), (0, 2, 1)).stride() == (12, 1, 3)
        assert lib.ones(2, 2).new_empty_strided((2, 2), (1, 2)).stride() == (1, 2)
    buffer = bytearray(b"\x01\x02\x03\x04")
    t = gradiente.frombuffer(buffer, dtype=gradiente.uint8, count=3, offset=1)
    t[0] = 9                                     # shares the buffer's memory, as torch's does
    assert buffer[1] == 9 and t.tolist() == [9, 3, 4]


def test_memory_questions_and_element_loops():
    seen = []
    for lib in LIBS:
        x = lib.tensor(A)
        t = lib.tensor([1.0, 2.0])
        t.apply_(lambda v: v * 3)
        t.map_(lib.tensor([1.0, 1.0]), lambda a, b: a + b)
        t.map2_(lib.tensor([1.0, 2.0]), lib.tensor([2.0, 2.0]), lambda a, b, c: a * b - c)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            volatile = x.volatile
        seen.append((x.dim_order(), x.t().dim_order(), x.is_set_to(x), x.is_set_to(x.clone()), t.tolist(),
                     x.cdouble().dtype == lib.complex128, x.cfloat().dtype == lib.complex64, x.is_nested,
                     x.is_distributed(), x.const_data_ptr() == x.data_ptr(), volatile, str(caught[0].message),
                     lib.get_device(x), lib.is_storage(x), lib.is_storage(x.untyped_storage())))
        with pytest.raises(RuntimeError, match=r"reinforce\(\) was removed"):
            x.reinforce(1)
        with pytest.raises(RuntimeError, match=r"deprecated since version 1\.9 and is now removed"):
            x.lstsq(x)
        p = lib.zeros(2)
        assert p.module_load(lib.ones(2)).tolist() == [1.0, 1.0] and p.tolist() == [1.0, 1.0]
    assert seen[0] == seen[1]


def test_older_linear_algebra_methods_match_torch():
    a = np.array([[4.0, 1.0], [1.0, 3.0]])
    b = np.array([[1.0], [2.0]])
    for name, args in (("cholesky", ()), ("matrix_exp", ()), ("qr", ()), ("svd", ()), ("lu", ()),
                       ("cholesky_inverse", ()), ("triangular_solve", (a,))):
        outs = []
        for lib in LIBS:
            result = getattr(lib.tensor(a), name)(*(lib.tensor(v) for v in args))
            parts = result if isinstance(result, tuple) else (result,)
            outs.append([np.abs(p.numpy()) for p in parts])        # factor signs may differ between LAPACKs
        for ours, theirs in zip(*outs):
            np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-9)
    ours, theirs = (lib.tensor(b).cholesky_solve(lib.tensor(a).cholesky()) for lib in LIBS)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-9)
    (ours_lu, ours_piv), (t_lu, t_piv) = (lib.tensor(a).lu() for lib in LIBS)
    ours, theirs = (lib.tensor(b).lu_solve(lu, piv) for lib, lu, piv in
                    ((gradiente, ours_lu, ours_piv), (torch, t_lu, t_piv)))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-9)
    ours, theirs = (lib.tensor(A).hardshrink(0.3) for lib in LIBS)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    ours, theirs = (lib.tensor(A - 0.5).prelu(lib.tensor([0.25], dtype=lib.float64)) for lib in LIBS)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy())


def test_small_names_kept_for_old_code_and_re_exports():
    for lib in LIBS:
        with pytest.raises(RuntimeError, match=r"torch.autograd.variable\(...\) is deprecated"):
            lib.autograd.variable(1)
        assert lib.nn.functional.Tensor is lib.Tensor and lib.fft.Tensor is lib.Tensor
    ours, theirs = gradiente.nn.functional, torch.nn.functional
    assert ours.GRID_SAMPLE_INTERPOLATION_MODES == theirs.GRID_SAMPLE_INTERPOLATION_MODES
    assert ours.GRID_SAMPLE_PADDING_MODES == theirs.GRID_SAMPLE_PADDING_MODES
