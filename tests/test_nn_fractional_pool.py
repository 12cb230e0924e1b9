"""Fractional max pooling (``F.fractional_max_pool2d/3d``, their ``_with_indices`` forms, ``nn.FractionalMaxPool2d/3d``)
against PyTorch: with ``_random_samples`` given, outputs and indices exactly PyTorch's (float32 and float64, ties and
nans included); without, the same windows as PyTorch's for the same seed; ``output_ratio``; gradients and node names
(also under ``create_graph``), float64 gradcheck and gradgradcheck (the op-spec table); module reprs, buffers, and
the error messages."""
import numpy as np
import pytest
from harness import OpSpec, backward_of, check_same_error, spec_tests

import gradiente

torch = pytest.importorskip("torch")

RNG = np.random.RandomState(0)
SAMPLES_2D = RNG.uniform(size=(2, 3, 2))
SAMPLES_3D = RNG.uniform(size=(2, 2, 3))


def F(lib):
    return lib.nn.functional


def _pool(dims, kernel, output_size=None, output_ratio=None, samples=None):
    """The pool as an op of x, its samples in x's dtype (the first rows of ``samples`` when x is unbatched)."""
    def fn(lib, x):
        s = lib.tensor(samples if x.dim() == dims + 2 else samples[:1], dtype=x.dtype)
        pool = getattr(F(lib), f"fractional_max_pool{dims}d")
        return pool(x, kernel, output_size=output_size, output_ratio=output_ratio, _random_samples=s)
    return fn


SPECS = [
    OpSpec("fractional_max_pool2d", _pool(2, 3, (4, 5), samples=SAMPLES_2D), [((2, 3, 9, 8),)]),
    OpSpec("fractional_max_pool2d_rect", _pool(2, (2, 3), (6, 4), samples=SAMPLES_2D), [((2, 3, 9, 8),)]),
    OpSpec("fractional_max_pool2d_ratio", _pool(2, 2, output_ratio=(0.5, 0.7), samples=SAMPLES_2D),
           [((2, 3, 10, 10),), ((3, 10, 10),)]),
    OpSpec("fractional_max_pool3d", _pool(3, (2, 3, 2), (2, 3, 3), samples=SAMPLES_3D), [((1, 2, 5, 6, 5),)]),
    OpSpec("fractional_max_pool3d_ratio", _pool(3, 2, output_ratio=0.6, samples=SAMPLES_3D),
           [((1, 2, 5, 4, 5),), ((2, 4, 5, 4),)]),
]
# the gradients under create_graph, as ops of (x, upstream gradient): FractionalMaxPool2DBackwardBackward0 and 3D
SPECS += [
    OpSpec("fractional_max_pool2d_backward", backward_of(_pool(2, 2, (4, 4), samples=SAMPLES_2D)),
           [((2, 3, 7, 6), (2, 3, 4, 4))]),
    OpSpec("fractional_max_pool3d_backward", backward_of(_pool(3, 2, (2, 2, 2), samples=SAMPLES_3D)),
           [((1, 2, 4, 5, 4), (1, 2, 2, 2, 2))]),
]

test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


def _both(call, x, dtype):
    """``call(lib, x)`` -> (output, indices) in both libraries, then a backward with a non-trivial upstream gradient:
    [(output, indices, x.grad, grad_fn name)] for gradiente and PyTorch."""
    results = []
    for lib in (gradiente, torch):
        xt = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
        out, indices = call(lib, xt)
        up = np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape))
        out.backward(lib.tensor(up, dtype=getattr(lib, dtype)))
        results.append((out.detach().numpy(), indices.numpy(), xt.grad.numpy(), out.grad_fn.name(), indices.dtype))
    return results


def _assert_same(results, exact_grad):
    (out, idx, grad, name, idx_dtype), (t_out, t_idx, t_grad, t_name, t_idx_dtype) = results
    np.testing.assert_array_equal(out, t_out)
    np.testing.assert_array_equal(idx, t_idx)
    assert idx_dtype == gradiente.int64 and t_idx_dtype == torch.int64
    assert name == t_name
    if exact_grad:
        np.testing.assert_array_equal(grad, t_grad)
    else:   # float32 sums where windows overlap, in another order: within an ulp
        np.testing.assert_allclose(grad, t_grad, rtol=1e-6, atol=1e-6)


CASES_2D = [((2, 3, 9, 8), 3, (4, 5)), ((2, 3, 51, 37), (3, 2), (17, 30)), ((3, 9, 8), 2, (5, 5)),
            ((2, 3, 12, 11), 1, (12, 11)), ((2, 3, 12, 11), 4, (1, 1)), ((2, 3, 40, 33), (5, 7), (9, 26))]
CASES_3D = [((2, 2, 7, 8, 9), (2, 3, 2), (3, 4, 5)), ((1, 2, 17, 31, 12), (3, 3, 3), (5, 12, 7)),
            ((2, 7, 8, 9), 2, (5, 4, 3))]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,kernel,output_size", CASES_2D + CASES_3D)
@pytest.mark.parametrize("values", ["normal", "ties"])
def test_given_samples_give_torchs_outputs_and_indices(shape, kernel, output_size, dtype, values):
    rng = np.random.RandomState(1)
    dims = len(output_size)
    x = rng.randn(*shape) if values == "normal" else rng.randint(0, 3, shape).astype(np.float64)
    batch = shape[0] if len(shape) == dims + 2 else 1
    samples = rng.uniform(size=(batch, shape[-dims - 1], dims))

    def call(lib, xt):
        pool = getattr(F(lib), f"fractional_max_pool{dims}d_with_indices")
        return pool(xt, kernel, output_size, _random_samples=lib.tensor(samples, dtype=xt.dtype))
    _assert_same(_both(call, x, dtype), exact_grad=dtype == "float64")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("dims", [2, 3])
def test_drawn_samples_match_torchs_for_the_same_seed(dims, dtype):
    shape = (3, 4, 11, 10) if dims == 2 else (2, 3, 9, 8, 10)
    x = np.random.RandomState(2).randn(*shape)

    def call(lib, xt):
        lib.manual_seed(7)
        pool = getattr(F(lib), f"fractional_max_pool{dims}d")
        return pool(xt, 2, output_ratio=(0.5,) * dims, return_indices=True)
    results = _both(call, x, dtype)
    _assert_same(results, exact_grad=True)
    # and the draws consumed the generator as PyTorch's did
    np.testing.assert_array_equal(gradiente.rand(3).numpy(), torch.rand(3).numpy())


def test_nan_and_infinity_windows_match_torch():
    x = np.random.RandomState(3).randn(1, 2, 8, 8)
    x[0, 0, 1, 1] = x[0, 0, 2, 3] = np.nan
    x[0, 1, :4, :4] = -np.inf

    def call(lib, xt):
        return F(lib).fractional_max_pool2d(xt, 3, (4, 4), return_indices=True,
                                            _random_samples=lib.tensor(SAMPLES_2D[:1, :2], dtype=xt.dtype))
    (out, idx, *_), (t_out, t_idx, *_) = _both(call, x, "float64")
    np.testing.assert_array_equal(out, t_out)
    np.testing.assert_array_equal(idx, t_idx)


@pytest.mark.parametrize("dims", [2, 3])
def test_indices_unpool_back_as_in_torch(dims):
    x = np.random.RandomState(4).randn(*((1, 2) + (8,) * dims))
    outs = []
    for lib in (gradiente, torch):
        pool = getattr(F(lib), f"fractional_max_pool{dims}d")
        out, idx = pool(lib.tensor(x), 2, (4,) * dims, return_indices=True,
                        _random_samples=lib.tensor(np.full((1, 2, dims), 0.3)))
        outs.append(getattr(F(lib), f"max_unpool{dims}d")(out, idx, 2, output_size=(8,) * dims).numpy())
    np.testing.assert_array_equal(outs[0], outs[1])


@pytest.mark.parametrize("make", [
    lambda nn: nn.FractionalMaxPool2d(3, output_size=(4, 5)),
    lambda nn: nn.FractionalMaxPool2d((2, 3), output_ratio=0.5, return_indices=True),
    lambda nn: nn.FractionalMaxPool3d(2, output_ratio=(0.5, 0.6, 0.7)),
    lambda nn: nn.FractionalMaxPool3d((2, 1, 2), output_size=3, return_indices=True),
], ids=["2d_size", "2d_ratio_indices", "3d_ratio", "3d_size_indices"])
def test_modules_match_torch(make):
    outs = []
    for lib in (gradiente, torch):
        module = make(lib.nn)
        x = lib.tensor(np.random.RandomState(5).randn(*((2, 3, 9, 8) if "2d" in type(module).__name__.lower()
                                                          else (2, 3, 7, 8, 9))))
        lib.manual_seed(11)
        outs.append((module, module(x)))
    (ours, our_out), (theirs, their_out) = outs
    assert repr(ours) == repr(theirs)
    for attribute in ("kernel_size", "output_size", "output_ratio", "return_indices"):
        assert getattr(ours, attribute) == getattr(theirs, attribute)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == []
    pairs = zip(our_out, their_out) if theirs.return_indices else [(our_out, their_out)]
    for a, b in pairs:
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_module_samples_are_a_buffer_as_in_torch():
    samples = np.random.RandomState(6).uniform(size=(2, 3, 2))
    modules = [lib.nn.FractionalMaxPool2d(2, output_size=4, _random_samples=lib.tensor(samples))
               for lib in (gradiente, torch)]
    assert list(modules[0].state_dict()) == list(modules[1].state_dict()) == ["_random_samples"]
    x = np.random.RandomState(7).randn(2, 3, 9, 9)
    np.testing.assert_array_equal(modules[0](gradiente.tensor(x)).numpy(), modules[1](torch.tensor(x)).numpy())


def _x(lib, *shape, dtype=None):
    return lib.zeros(*shape, dtype=dtype or lib.float32)


@pytest.mark.parametrize("call", [
    lambda lib: F(lib).fractional_max_pool2d(_x(lib, 2, 3, 9, 8), 3),
    lambda lib: F(lib).fractional_max_pool2d(_x(lib, 2, 3, 9, 8), 3, output_ratio=0.5),
    lambda lib: F(lib).fractional_max_pool2d(_x(lib, 2, 3, 9, 8), 3, output_ratio=(0.5, 0.5, 0.5)),
    lambda lib: F(lib).fractional_max_pool3d(_x(lib, 2, 3, 9, 8, 7), 3),
    lambda lib: F(lib).fractional_max_pool2d(_x(lib, 2, 3, 9, 8), 3, output_size=8),
    lambda lib: F(lib).fractional_max_pool2d(_x(lib, 2, 3, 9, 8), 3, output_size=(5, 7)),
    lambda lib: F(lib).fractional_max_pool2d(_x(lib, 1, 2, 3, 9, 8), 3, 4, _random_samples=_x(lib, 2, 3, 2)),
    lambda lib: F(lib).fractional_max_pool2d(_x(lib, 9, 8), 3, output_size=4),
    lambda lib: F(lib).fractional_max_pool2d(_x(lib, 2, 0, 9, 8), 3, 4, _random_samples=_x(lib, 2, 3, 2)),
    lambda lib: F(lib).fractional_max_pool2d(_x(lib, 2, 3, 9, 8), 3, 4, _random_samples=_x(lib, 1, 3, 2)),
    lambda lib: F(lib).fractional_max_pool2d(_x(lib, 2, 3, 9, 8), 3, 4, _random_samples=_x(lib, 2, 2, 2)),
    lambda lib: F(lib).fractional_max_pool2d(_x(lib, 2, 3, 9, 8), 3, 4, _random_samples=_x(lib, 2, 3, 3)),
    lambda lib: F(lib).fractional_max_pool2d(_x(lib, 2, 3, 9, 8), 3, 4, _random_samples=_x(lib, 3, 2)),
    lambda lib: F(lib).fractional_max_pool2d(_x(lib, 2, 3, 9, 8), 3, 4,
                                             _random_samples=_x(lib, 2, 3, 2, dtype=lib.float64)),
    lambda lib: F(lib).fractional_max_pool2d(_x(lib, 2, 3, 9, 8), (3, 3, 3), 4),
    lambda lib: F(lib).fractional_max_pool2d(_x(lib, 2, 3, 9, 8), 3, (4, 4, 4)),
    lambda lib: F(lib).fractional_max_pool3d(_x(lib, 2, 3, 7, 8, 9), 2, (7, 4, 5)),
    lambda lib: F(lib).fractional_max_pool3d(_x(lib, 2, 3, 7, 8, 9), 2, (3, 8, 5)),
    lambda lib: F(lib).fractional_max_pool3d(_x(lib, 2, 3, 7, 8, 9), 2, (3, 4, 9)),
    lambda lib: F(lib).fractional_max_pool3d(_x(lib, 2, 3, 0, 8, 9), 2, (3, 4, 5), _random_samples=_x(lib, 2, 3, 3)),
    lambda lib: F(lib).fractional_max_pool3d(_x(lib, 2, 3, 7, 8, 9), 2, (3, 4, 5), _random_samples=_x(lib, 2, 1, 3)),
    lambda lib: lib.nn.FractionalMaxPool2d(2),
    lambda lib: lib.nn.FractionalMaxPool2d(2, 3, 0.5),
    lambda lib: lib.nn.FractionalMaxPool2d(2, output_ratio=1.5),
    lambda lib: lib.nn.FractionalMaxPool3d(0, output_ratio=0.5),
    lambda lib: lib.nn.FractionalMaxPool3d((2, 0, 1), output_ratio=0.5),
    lambda lib: lib.nn.FractionalMaxPool3d(2, output_ratio=(0.5, 0.5, 1)),
], ids=["2d_no_size", "2d_float_ratio", "2d_three_ratios", "3d_no_size", "pool_too_high", "pool_too_wide",
        "5d_input", "2d_input", "empty_channels", "samples_batch", "samples_channels", "samples_last_dim",
        "samples_2d", "samples_dtype", "kernel_three", "output_three", "3d_too_long", "3d_too_high", "3d_too_wide",
        "3d_empty", "3d_samples_channels", "module_no_size", "module_both", "module_ratio", "module3d_kernel",
        "module3d_kernel_tuple", "module3d_ratio"])
def test_errors_match_torch(call):
    check_same_error(call)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_16_bit_floats_match_torch(dtype):
    # the window starts are computed in the input's own dtype, rounding where PyTorch's kernel rounds
    rng = np.random.RandomState(8)
    x, samples = rng.randn(2, 3, 21, 17), rng.uniform(size=(2, 3, 2))
    results = []
    for lib in (gradiente, torch):
        xt = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
        out, indices = F(lib).fractional_max_pool2d(xt, 3, output_size=(9, 7), return_indices=True,
                                                    _random_samples=lib.tensor(samples, dtype=xt.dtype))
        out.sum().backward()
        results.append((out.detach().float().numpy(), indices.numpy(), xt.grad.float().numpy(), str(out.dtype)))
    for ours, theirs in zip(results[0][:3], results[1][:3]):
        np.testing.assert_array_equal(ours, theirs)
    assert results[0][3].split(".")[-1] == results[1][3].split(".")[-1] == dtype
