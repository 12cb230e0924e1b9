"""Resampling against PyTorch: interpolate (every mode, with and without align_corners and antialias),
pixel_shuffle/unshuffle, unfold/fold, rrelu, affine_grid and grid_sample, and their layers.

The op table drives float64 gradcheck, the differential comparison with PyTorch (float32 and float64,
grad_fn names) and second derivatives. Then what a table cannot show: output sizes and values over many
size/scale/align_corners combinations, PyTorch's index rules for the nearest modes, its errors and
warnings word for word, rrelu's random slopes bit for bit, the names of the gradient's own nodes, and the
layers' reprs."""
import warnings

import numpy as np
import pytest
from harness import OpSpec, backward_of, spec_tests

import gradiente

torch = pytest.importorskip("torch")


def F(lib):
    return lib.nn.functional


def interp(**kwargs):
    return lambda lib, x: F(lib).interpolate(x, **kwargs)


def seeded_rrelu(lower, upper, inplace=False):
    """rrelu in training mode from a fixed seed, so that every call (gradcheck calls many) draws the same
    (``inplace``: on a copy of x, in place)."""
    def fn(lib, x):
        lib.manual_seed(0)
        return F(lib).rrelu(x * 1 if inplace else x, lower, upper, training=True, inplace=inplace)
    return fn


def quietly(fn):
    """``fn`` with its warnings silenced (tested on their own below)."""
    def call(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args)
    return call


def image_and_grid(rng, shapes):
    """An image, then sampling positions reaching a little past the border (so padding matters)."""
    return [rng.uniform(-2, 2, shapes[0]), rng.uniform(-1.25, 1.25, shapes[1])]


# --- the op table ---------------------------------------------------------------------------------------------

# Two double-backward nodes of PyTorch's also have an edge to x, which gets zeros (x.grad is zeros there, None here)
S1, S2, S3 = [((2, 3, 5),)], [((2, 2, 4, 5),)], [((1, 2, 3, 4, 3),)]

SPECS = [
    OpSpec("nearest1d_up", interp(scale_factor=2), S1),
    OpSpec("nearest1d_size", interp(size=3), S1),
    OpSpec("nearest2d_scale", interp(scale_factor=(1.5, 0.5)), S2),
    OpSpec("nearest2d_size", interp(size=(7, 3)), S2),
    OpSpec("nearest3d", interp(size=(4, 3, 5)), S3),
    OpSpec("nearest_exact1d", interp(size=8, mode="nearest-exact"), S1),
    OpSpec("nearest_exact2d", interp(scale_factor=1.7, mode="nearest-exact"), S2),
    OpSpec("nearest_exact3d", interp(size=(2, 5, 2), mode="nearest-exact"), S3),
    OpSpec("linear", interp(scale_factor=1.5, mode="linear"), S1),
    OpSpec("linear_corners", interp(size=9, mode="linear", align_corners=True), S1),
    OpSpec("linear_down", interp(size=3, mode="linear"), S1),
    OpSpec("bilinear", interp(size=(7, 3), mode="bilinear"), S2),
    OpSpec("bilinear_corners", interp(scale_factor=2, mode="bilinear", align_corners=True), S2),
    OpSpec("bilinear_recompute", interp(scale_factor=1.3, mode="bilinear", recompute_scale_factor=True), S2),
    OpSpec("bicubic", interp(size=(5, 7), mode="bicubic"), [((1, 2, 3, 4),)]),
    OpSpec("bicubic_corners", interp(size=(3, 7), mode="bicubic", align_corners=True), S2),
    OpSpec("trilinear", interp(scale_factor=1.5, mode="trilinear"), S3),
    OpSpec("trilinear_corners", interp(size=(2, 5, 4), mode="trilinear", align_corners=True), S3),
    OpSpec("bilinear_antialias", interp(size=(2, 3), mode="bilinear", antialias=True), [((1, 2, 7, 8),)]),
    OpSpec("bilinear_antialias_up", interp(size=(6, 9), mode="bilinear", antialias=True, align_corners=True), S2),
    OpSpec("bicubic_antialias", interp(scale_factor=0.4, mode="bicubic", antialias=True), [((1, 2, 9, 8),)]),
    OpSpec("lanczos", interp(size=(3, 7), mode="lanczos", antialias=True), [((1, 2, 8, 5),)]),
    OpSpec("area3d", interp(size=(2, 3, 2), mode="area"), S3),
    OpSpec("pixel_shuffle", lambda lib, x: F(lib).pixel_shuffle(x, 2), [((2, 8, 2, 3),), ((12, 2, 2),),
                                                                         ((2, 1, 4, 3, 2),)]),
    OpSpec("pixel_unshuffle", lambda lib, x: F(lib).pixel_unshuffle(x, 2), [((2, 2, 4, 6),), ((1, 2, 2),)]),
    OpSpec("unfold", lambda lib, x: F(lib).unfold(x, 2), [((2, 3, 4, 5),), ((3, 3, 4),)]),
    OpSpec("unfold_strided", lambda lib, x: F(lib).unfold(x, (2, 3), dilation=(2, 1), padding=(1, 2), stride=(1, 2)),
           [((2, 2, 5, 4),)]),
    OpSpec("fold", lambda lib, x: F(lib).fold(x, (3, 4), 2), [((2, 8, 6),), ((12, 6),)]),
    OpSpec("fold_strided", lambda lib, x: F(lib).fold(x, (5, 4), (2, 3), dilation=(2, 1), padding=1, stride=(2, 1)),
           [((1, 12, 12),)]),
    OpSpec("rrelu_eval", lambda lib, x: F(lib).rrelu(x), [((3, 4),), ((2, 3, 4),)]),
    OpSpec("rrelu_eval_bounds", lambda lib, x: F(lib).rrelu(x, 0.2, 0.6), [((5,),)]),
    OpSpec("rrelu_train", seeded_rrelu(1 / 8, 1 / 3), [((3, 4),), ((2, 3, 4),)]),
    OpSpec("rrelu_train_equal_bounds", seeded_rrelu(0.3, 0.3), [((3, 4),)]),
    OpSpec("rrelu_", lambda lib, x: F(lib).rrelu_(x * 1), [((3, 4),)]),
    OpSpec("rrelu_train_inplace", seeded_rrelu(0.1, 0.4, inplace=True), [((3, 4),)]),
    OpSpec("affine_grid", lambda lib, t: F(lib).affine_grid(t, [2, 3, 4, 5], align_corners=False), [((2, 2, 3),)]),
    OpSpec("affine_grid_unit_size", quietly(lambda lib, t: F(lib).affine_grid(t, (2, 1, 3, 1), align_corners=True)),
           [((2, 2, 3),)]),
    OpSpec("affine_grid_3d", lambda lib, t: F(lib).affine_grid(t, [1, 2, 2, 3, 4], align_corners=False),
           [((1, 3, 4),)]),
] + [
    # the gradients as ops of their own (inputs x and the upstream gradient): the double-backward nodes
    OpSpec(f"{name}_backward", backward_of(op), [(x, v)])
    for name, op, x, v in [
        ("nearest1d", interp(scale_factor=2), (2, 3, 5), (2, 3, 10)),
        ("nearest2d", interp(size=(7, 3)), (2, 2, 4, 5), (2, 2, 7, 3)),
        ("nearest3d", interp(size=(4, 3, 5)), (1, 2, 3, 4, 3), (1, 2, 4, 3, 5)),
        ("nearest_exact1d", interp(size=8, mode="nearest-exact"), (2, 3, 5), (2, 3, 8)),
        ("nearest_exact2d", interp(size=(3, 6), mode="nearest-exact"), (2, 2, 4, 5), (2, 2, 3, 6)),
        ("nearest_exact3d", interp(size=(2, 5, 2), mode="nearest-exact"), (1, 2, 3, 4, 3), (1, 2, 2, 5, 2)),
        ("linear", interp(size=7, mode="linear"), (2, 3, 5), (2, 3, 7)),
        ("bilinear", interp(size=(7, 3), mode="bilinear"), (2, 2, 4, 5), (2, 2, 7, 3)),
        ("bicubic", interp(size=(5, 7), mode="bicubic"), (1, 2, 3, 4), (1, 2, 5, 7)),
        ("trilinear", interp(size=(2, 5, 4), mode="trilinear"), (1, 2, 3, 4, 3), (1, 2, 2, 5, 4)),
        ("bilinear_antialias", interp(size=(2, 3), mode="bilinear", antialias=True), (1, 2, 7, 8), (1, 2, 2, 3)),
        ("bicubic_antialias", interp(size=(3, 3), mode="bicubic", antialias=True), (1, 2, 9, 8), (1, 2, 3, 3)),
        ("lanczos", interp(size=(3, 7), mode="lanczos", antialias=True), (1, 2, 8, 5), (1, 2, 3, 7)),
        ("area3d", interp(size=(2, 3, 2), mode="area"), (1, 2, 3, 4, 3), (1, 2, 2, 3, 2)),
        ("rrelu_eval", lambda lib, x: F(lib).rrelu(x), (3, 4), (3, 4)),
    ]
]

# Their gradients are computed on arrays only (in PyTorch too, for the adaptive pooling behind 'area'):
# no second derivatives.
FIRST_ORDER = [
    OpSpec("area1d", interp(size=3, mode="area"), S1),
    OpSpec("area2d", interp(scale_factor=0.7, mode="area"), S2),
] + [
    OpSpec(f"grid_sample_{mode}_{padding}_{corners}",
           lambda lib, x, g, mode=mode, padding=padding, corners=corners: F(lib).grid_sample(
               x, g, mode=mode, padding_mode=padding, align_corners=corners),
           [((1, 2, 3, 4, 2), (1, 2, 3, 2, 3)), ((2, 3, 4, 5), (2, 3, 6, 2))] if mode != "bicubic" else
           [((1, 2, 4, 4), (1, 2, 3, 2))],
           make_inputs=image_and_grid)
    for mode in ("bilinear", "nearest", "bicubic") for padding in ("zeros", "border", "reflection")
    for corners in (False, True)
]

test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)
test_gradcheck_first_order, test_against_torch_first_order, _ = spec_tests(FIRST_ORDER)


# --- interpolate: sizes and values over many combinations ------------------------------------------------------

def _both(fn, array):
    """``fn(lib, tensor)`` in both libraries on the same values; the outputs as arrays, or the exception."""
    results = []
    for lib in (torch, gradiente):
        try:
            results.append(fn(lib, lib.from_numpy(array.copy())).numpy())
        except Exception as e:          # compared below
            results.append(e)
    return results


def _assert_same(expected, got, exact=False, rtol=1e-5):
    if isinstance(expected, Exception):
        assert type(got) is type(expected) and str(got) == str(expected), (expected, got)
        return
    assert not isinstance(got, Exception), got
    assert got.shape == expected.shape and got.dtype == expected.dtype
    if exact:
        np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol)


SIZES = [1, 2, 3, 5, 8, 13]
SCALES = [0.3, 0.5, 0.99, 1.0, 1.05, 1.5, 2.0, 2.05, 1 / 3, 1.7320508]
LINEAR_MODES = [("linear", 1), ("bilinear", 2), ("bicubic", 2), ("trilinear", 3)]


def _shape(n, dims):
    """A batch of 2 x 2 channels, ``n`` along the first spatial axis and small sizes along the others."""
    return (2, 2, n) + (3, 2)[:dims - 1]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode,dims", LINEAR_MODES)
def test_interpolate_values_and_sizes(mode, dims, dtype):
    rng = np.random.RandomState(0)
    rtol = 2e-6 if dtype == "float32" else 1e-12
    for n in SIZES:
        x = rng.randn(*_shape(n, dims)).astype(dtype)
        for corners in (False, True):
            for m in SIZES:
                size = (m,) + x.shape[3:]
                _assert_same(*_both(interp(size=size, mode=mode, align_corners=corners), x), rtol=rtol)
            for s in SCALES:
                for recompute in (None, True):
                    fn = interp(scale_factor=(s,) + (1.0,) * (dims - 1), mode=mode, align_corners=corners,
                                recompute_scale_factor=recompute)
                    _assert_same(*_both(fn, x), rtol=rtol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
def test_nearest_index_rules(mode, dims, dtype):
    """The nearest modes pick exactly PyTorch's inputs: floor(i·s) or floor((i + 0.5)·s) in PyTorch's
    arithmetic, the 2-D kernel's i // 2 shortcut, and scale factors kept unless recomputed."""
    for n in [*SIZES, 31, 64]:
        x = np.arange(np.prod(_shape(n, dims)), dtype=dtype).reshape(_shape(n, dims))
        for m in [*SIZES, 31, 110]:
            _assert_same(*_both(interp(size=(m,) + x.shape[3:], mode=mode), x), exact=True)
        for s in [*SCALES, 2.5, 3.0]:
            for recompute in (None, True):
                fn = interp(scale_factor=(s,) + (1.0,) * (dims - 1), mode=mode, recompute_scale_factor=recompute)
                _assert_same(*_both(fn, x), exact=True)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "lanczos"])
def test_antialias_values(mode, dtype):
    rng = np.random.RandomState(1)
    rtol = 2e-6 if dtype == "float32" else 1e-12
    for n in [1, 2, 5, 13, 31]:
        x = rng.randn(1, 2, n, 5).astype(dtype)
        for m in [1, 2, 4, 7, 13, 31]:
            for corners in ((False, True) if mode != "lanczos" else (False,)):
                _assert_same(*_both(interp(size=(m, 3), mode=mode, antialias=True, align_corners=corners), x),
                             rtol=rtol)
        for s in (0.3, 0.5, 1.05, 2.5):
            _assert_same(*_both(interp(scale_factor=(s, 0.7), mode=mode, antialias=True), x), rtol=rtol)


def test_area_matches_adaptive_pooling():
    rng = np.random.RandomState(2)
    for shape, size in [((2, 3, 7), 3), ((1, 2, 5, 7), (2, 4)), ((1, 2, 5, 4, 6), (3, 2, 4)), ((1, 1, 4, 4, 4), 5)]:
        x = rng.randn(*shape)
        _assert_same(*_both(interp(size=size, mode="area"), x), rtol=1e-12)
        _assert_same(*_both(interp(scale_factor=0.6, mode="area"), x.astype(np.float32)))


def test_uint8_and_float16_images():
    rng = np.random.RandomState(3)
    image = rng.randint(0, 256, (1, 3, 5, 4)).astype(np.uint8)
    for mode in ("nearest", "nearest-exact"):
        _assert_same(*_both(interp(scale_factor=1.7, mode=mode), image), exact=True)
        _assert_same(*_both(interp(size=(2, 9), mode=mode), image), exact=True)
    half = rng.randn(1, 2, 5, 4).astype(np.float16)
    _assert_same(*_both(interp(size=(7, 3)), half), exact=True)
    _assert_same(*_both(interp(size=(7, 3), mode="bilinear"), half), rtol=1e-3)


def test_uint8_linear_modes_refused_with_advice():
    image = gradiente.zeros(1, 3, 4, 4, dtype=gradiente.uint8)
    with pytest.raises(NotImplementedError, match=r"\.float\(\)"):
        F(gradiente).interpolate(image, scale_factor=2, mode="bilinear")


EMPTY = [
    ("interpolate", lambda lib, x: F(lib).interpolate(x, scale_factor=2, mode="bicubic"), (0, 2, 3, 4)),
    ("unfold", lambda lib, x: F(lib).unfold(x, 2), (0, 2, 3, 4)),
    ("fold", lambda lib, x: F(lib).fold(x, (3, 3), 2), (0, 8, 4)),
    ("grid_sample_no_batch", lambda lib, x: F(lib).grid_sample(x, lib.zeros(0, 2, 2, 2), align_corners=False),
     (0, 2, 3, 4)),
    ("grid_sample_no_channels", lambda lib, x: F(lib).grid_sample(x, lib.zeros(2, 2, 2, 2), align_corners=False),
     (2, 0, 3, 4)),
]


@pytest.mark.parametrize("name,fn,shape", EMPTY, ids=[c[0] for c in EMPTY])
def test_empty_tensors(name, fn, shape):
    shapes = []
    for lib in (torch, gradiente):
        x = lib.zeros(*shape, requires_grad=True)
        out = fn(lib, x)
        out.sum().backward()
        shapes.append((tuple(out.shape), tuple(x.grad.shape)))
    assert shapes[0] == shapes[1]


@pytest.mark.parametrize("op,shape,expected", [("pixel_shuffle", (0, 8, 3, 4), (0, 2, 6, 8)),
                                               ("pixel_unshuffle", (0, 2, 4, 6), (0, 8, 2, 3))])
def test_empty_pixel_shuffles(op, shape, expected):
    """An empty batch is rearranged like any other, and its gradient is an empty one of the input's shape.
    (PyTorch 2.13 fails in both backward passes, and its pixel_unshuffle returns an empty input unchanged.)"""
    x = gradiente.zeros(*shape, requires_grad=True)
    out = getattr(F(gradiente), op)(x, 2)
    assert tuple(out.shape) == expected
    out.sum().backward()
    assert tuple(x.grad.shape) == shape
    with pytest.raises(RuntimeError):
        t = torch.zeros(*shape, requires_grad=True)
        getattr(F(torch), op)(t, 2).sum().backward()


# --- gradients where PyTorch's backward disagrees with its own forward ------------------------------------------

@pytest.mark.parametrize("mode,shape,scale", [("nearest", (1, 2, 5), 1.05), ("nearest", (1, 2, 5), 2.05),
                                              ("nearest", (1, 1, 3, 2, 2), (2.05, 1.0, 1.0)),
                                              ("bicubic", (1, 1, 5, 3), (1.05, 1.0))])
def test_gradient_is_the_forwards_where_pytorchs_is_not(mode, shape, scale):
    """With a scale factor that leaves an axis at (or at twice) its size, PyTorch's 1-D/3-D nearest and
    its bicubic backward use a shortcut its forward does not (its own gradcheck fails); gradiente
    differentiates the forward it computes, which is PyTorch's."""
    x = np.random.RandomState(4).randn(*shape)
    _assert_same(*_both(interp(scale_factor=scale, mode=mode), x), rtol=1e-12)
    t = torch.from_numpy(x).requires_grad_()
    assert not torch.autograd.gradcheck(lambda v: F(torch).interpolate(v, scale_factor=scale, mode=mode), (t,),
                                        raise_exception=False)
    g = gradiente.from_numpy(x).requires_grad_()
    assert gradiente.autograd.gradcheck(lambda v: F(gradiente).interpolate(v, scale_factor=scale, mode=mode), [g])


# --- second derivatives: the nodes of the gradient ---------------------------------------------------------------

SECOND_ORDER_NAMES = [
    ("nearest", lambda lib, x: F(lib).interpolate(x, scale_factor=2), (1, 2, 3, 4)),
    ("nearest_exact", lambda lib, x: F(lib).interpolate(x, size=5, mode="nearest-exact"), (1, 2, 3)),
    ("linear", lambda lib, x: F(lib).interpolate(x, size=5, mode="linear"), (1, 2, 3)),
    ("bilinear", lambda lib, x: F(lib).interpolate(x, size=(5, 2), mode="bilinear"), (1, 2, 3, 4)),
    ("bicubic", lambda lib, x: F(lib).interpolate(x, size=(5, 2), mode="bicubic"), (1, 2, 3, 4)),
    ("trilinear", lambda lib, x: F(lib).interpolate(x, size=(2, 5, 2), mode="trilinear"), (1, 2, 3, 4, 2)),
    ("antialias", lambda lib, x: F(lib).interpolate(x, size=(2, 2), mode="bicubic", antialias=True), (1, 2, 5, 4)),
    ("area3d", lambda lib, x: F(lib).interpolate(x, size=(2, 2, 2), mode="area"), (1, 2, 3, 4, 5)),
    ("pixel_shuffle", lambda lib, x: F(lib).pixel_shuffle(x, 2), (1, 8, 2, 3)),
    ("pixel_unshuffle", lambda lib, x: F(lib).pixel_unshuffle(x, 2), (1, 2, 4, 2)),
    ("unfold", lambda lib, x: F(lib).unfold(x, 2), (1, 2, 3, 3)),
    ("fold", lambda lib, x: F(lib).fold(x, (3, 3), 2), (1, 8, 4)),
    ("rrelu", lambda lib, x: F(lib).rrelu(x), (3, 4)),
]


@pytest.mark.parametrize("name,fn,shape", SECOND_ORDER_NAMES, ids=[c[0] for c in SECOND_ORDER_NAMES])
def test_the_gradients_nodes_are_pytorchs(name, fn, shape):
    names = []
    for lib in (torch, gradiente):
        x = lib.ones(*shape, dtype=lib.float64).requires_grad_()
        y = fn(lib, x)
        v = lib.ones(*y.shape, dtype=lib.float64).requires_grad_()
        (g,) = lib.autograd.grad(y, x, v, create_graph=True)
        names.append(type(g.grad_fn).__name__)
    assert names[0] == names[1]


def test_grid_sample_refuses_second_derivatives():
    x = gradiente.randn(1, 1, 3, 3, requires_grad=True)
    grid = gradiente.rand(1, 2, 2, 2, requires_grad=True)
    y = F(gradiente).grid_sample(x, grid, align_corners=False).sum()
    with pytest.raises(RuntimeError, match="arrays only"):
        gradiente.autograd.grad(y, grid, create_graph=True)


def test_second_backward_through_upsample_needs_no_retained_graph():
    """Like PyTorch's, the upsample nodes keep no tensors, so backward twice works (rrelu's does not)."""
    for lib in (torch, gradiente):
        x = lib.ones(1, 1, 2, 2, requires_grad=True)
        y = F(lib).interpolate(x, scale_factor=2).sum()
        y.backward()
        y.backward()
        assert x.grad.sum().item() == 32
        z = F(lib).rrelu(x).sum()
        z.backward()
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            z.backward()


# --- rrelu ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bounds", [(1 / 8, 1 / 3), (0.1, 0.9), (0.01, 0.02), (-0.5, 2.0)])
def test_rrelu_training_draws_pytorchs_slopes(bounds, dtype):
    x = np.random.RandomState(5).randn(7, 13).astype(dtype)
    upstream = np.random.RandomState(6).rand(13, 7).astype(dtype)
    results = []
    for lib in (torch, gradiente):
        lib.manual_seed(11)
        t = lib.from_numpy(x.copy()).t().requires_grad_()        # a transposed input: drawn in logical order
        out = F(lib).rrelu(t, *bounds, training=True)
        out.backward(lib.from_numpy(upstream.copy()))
        results.append((out.detach().numpy(), t.grad.numpy(), lib.rand(3).numpy()))
    for expected, got in zip(*results):
        np.testing.assert_array_equal(got, expected)


def test_rrelu_in_place_and_layer():
    x = np.random.RandomState(7).randn(4, 5).astype(np.float32)
    results = []
    for lib in (torch, gradiente):
        lib.manual_seed(3)
        leaf = lib.from_numpy(x.copy()).requires_grad_()
        y = leaf * 1
        F(lib).rrelu_(y, training=True)
        name = type(y.grad_fn).__name__
        y.sum().backward()
        layer = lib.nn.RReLU(0.2, 0.4)
        train_out = layer(lib.from_numpy(x.copy()))
        layer.eval()
        eval_out = layer(lib.from_numpy(x.copy()))
        results.append((name, y.detach().numpy(), leaf.grad.numpy(), train_out.numpy(), eval_out.numpy()))
    (t_name, *t_arrays), (g_name, *g_arrays) = results
    assert t_name == g_name == "RreluWithNoiseBackward1"
    for expected, got in zip(t_arrays, g_arrays):
        np.testing.assert_array_equal(got, expected)


# --- errors and warnings, word for word --------------------------------------------------------------------------

def _error(fn, lib):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn(lib)
        except Exception as e:          # compared by the caller
            return type(e), str(e).replace("torch.", "gradiente.")
    raise AssertionError("no error raised")


def x4(lib, shape=(1, 2, 5, 4), dtype=None):
    return lib.ones(*shape, dtype=dtype or lib.float32)


ERRORS = {
    "both": lambda lib: F(lib).interpolate(x4(lib), size=3, scale_factor=2),
    "neither": lambda lib: F(lib).interpolate(x4(lib)),
    "size_length": lambda lib: F(lib).interpolate(x4(lib), size=(3,)),
    "size_type": lambda lib: F(lib).interpolate(x4(lib), size=(3.0, 2)),
    "scale_length": lambda lib: F(lib).interpolate(x4(lib), scale_factor=(3.0,)),
    "recompute_with_size": lambda lib: F(lib).interpolate(x4(lib), size=3, recompute_scale_factor=True),
    "corners_nearest": lambda lib: F(lib).interpolate(x4(lib), size=3, align_corners=True),
    "corners_area": lambda lib: F(lib).interpolate(x4(lib), size=3, mode="area", align_corners=False),
    "antialias_nearest": lambda lib: F(lib).interpolate(x4(lib), size=3, antialias=True),
    "antialias_3d": lambda lib: F(lib).interpolate(x4(lib, (1, 2, 5)), size=3, mode="linear", antialias=True),
    "bad_mode": lambda lib: F(lib).interpolate(x4(lib), size=3, mode="foo"),
    "2d_input": lambda lib: F(lib).interpolate(x4(lib, (2, 3)), size=3),
    "6d_input": lambda lib: F(lib).interpolate(x4(lib, (1, 1, 1, 1, 1, 3)), size=3),
    "linear_4d": lambda lib: F(lib).interpolate(x4(lib), size=3, mode="linear"),
    "bilinear_3d": lambda lib: F(lib).interpolate(x4(lib, (1, 2, 5)), size=3, mode="bilinear"),
    "trilinear_4d": lambda lib: F(lib).interpolate(x4(lib), size=3, mode="trilinear"),
    "bicubic_5d": lambda lib: F(lib).interpolate(x4(lib, (1, 1, 2, 2, 2)), size=3, mode="bicubic"),
    "lanczos_no_antialias": lambda lib: F(lib).interpolate(x4(lib), size=3, mode="lanczos"),
    "lanczos_corners": lambda lib: F(lib).interpolate(x4(lib), size=3, mode="lanczos", antialias=True,
                                                      align_corners=True),
    "zero_out_1d": lambda lib: F(lib).interpolate(x4(lib, (1, 2, 5)), scale_factor=0.1, mode="linear"),
    "zero_out_2d": lambda lib: F(lib).interpolate(x4(lib), scale_factor=0.1, mode="bicubic"),
    "zero_out_3d": lambda lib: F(lib).interpolate(x4(lib, (1, 1, 3, 3, 3)), scale_factor=0.1),
    "negative_size": lambda lib: F(lib).interpolate(x4(lib), size=-1),
    "empty_input": lambda lib: F(lib).interpolate(x4(lib, (1, 2, 0, 4)), size=(3, 3)),
    "empty_channels": lambda lib: F(lib).interpolate(x4(lib, (1, 0, 3, 4)), size=(3, 3), mode="bilinear"),
    "long_nearest_1d": lambda lib: F(lib).interpolate(x4(lib, (1, 2, 3), lib.int64), size=3),
    "long_nearest_2d": lambda lib: F(lib).interpolate(x4(lib, dtype=lib.int64), size=3),
    "int_bilinear": lambda lib: F(lib).interpolate(x4(lib, dtype=lib.int32), size=3, mode="bilinear"),
    "uint8_linear": lambda lib: F(lib).interpolate(x4(lib, (1, 2, 3), lib.uint8), size=3, mode="linear"),
    "long_bicubic": lambda lib: F(lib).interpolate(x4(lib, dtype=lib.int64), size=3, mode="bicubic"),
    "long_antialias": lambda lib: F(lib).interpolate(x4(lib, dtype=lib.int64), size=3, mode="bilinear",
                                                     antialias=True),
    "half_antialias": lambda lib: F(lib).interpolate(x4(lib, dtype=lib.float16), size=3, mode="bilinear",
                                                     antialias=True),
    "long_area": lambda lib: F(lib).interpolate(x4(lib, dtype=lib.int64), size=3, mode="area"),
    "long_area_to_one": lambda lib: F(lib).interpolate(x4(lib, dtype=lib.int64), size=1, mode="area"),
    "long_area_3d": lambda lib: F(lib).interpolate(x4(lib, (1, 1, 2, 2, 2), lib.int64), size=3, mode="area"),
    "shuffle_2d": lambda lib: F(lib).pixel_shuffle(x4(lib, (8, 3)), 2),
    "shuffle_channels": lambda lib: F(lib).pixel_shuffle(x4(lib, (1, 5, 3, 3)), 2),
    "shuffle_zero": lambda lib: F(lib).pixel_shuffle(x4(lib), 0),
    "shuffle_float": lambda lib: F(lib).pixel_shuffle(x4(lib), 2.0),
    "unshuffle_2d": lambda lib: F(lib).pixel_unshuffle(x4(lib, (8, 3)), 2),
    "unshuffle_height": lambda lib: F(lib).pixel_unshuffle(x4(lib, (1, 5, 3, 4)), 2),
    "unshuffle_width": lambda lib: F(lib).pixel_unshuffle(x4(lib, (1, 5, 4, 3)), 2),
    "unshuffle_negative": lambda lib: F(lib).pixel_unshuffle(x4(lib), -1),
    "unfold_kernel": lambda lib: F(lib).unfold(x4(lib), (0, 2)),
    "unfold_stride": lambda lib: F(lib).unfold(x4(lib), 2, stride=(0, 1)),
    "unfold_dilation": lambda lib: F(lib).unfold(x4(lib), 2, dilation=(0, 1)),
    "unfold_padding": lambda lib: F(lib).unfold(x4(lib), 2, padding=(-1, 1)),
    "unfold_too_big": lambda lib: F(lib).unfold(x4(lib), 6),
    "unfold_dilated_too_big": lambda lib: F(lib).unfold(x4(lib), 2, dilation=4),
    "unfold_three_sizes": lambda lib: F(lib).unfold(x4(lib), (1, 2, 3)),
    "unfold_5d": lambda lib: F(lib).unfold(x4(lib, (1, 1, 2, 3, 3)), 2),
    "unfold_2d": lambda lib: F(lib).unfold(x4(lib, (3, 3)), 2),
    "unfold_1d": lambda lib: F(lib).unfold(x4(lib, (3,)), 2),
    "unfold_empty_channels": lambda lib: F(lib).unfold(x4(lib, (2, 0, 3, 3)), 2),
    "unfold_long": lambda lib: F(lib).unfold(x4(lib, dtype=lib.int64), 2),
    "fold_1d": lambda lib: F(lib).fold(x4(lib, (4,)), (3, 3), 2),
    "fold_4d": lambda lib: F(lib).fold(x4(lib, (1, 2, 12, 4)), (3, 3), 2),
    "fold_divisible": lambda lib: F(lib).fold(x4(lib, (2, 13, 4)), (3, 3), 2),
    "fold_blocks": lambda lib: F(lib).fold(x4(lib, (2, 12, 5)), (3, 3), 2),
    "fold_no_blocks": lambda lib: F(lib).fold(x4(lib, (1, 4, 1)), (1, 1), 2, stride=2),
    "fold_kernel": lambda lib: F(lib).fold(x4(lib, (2, 12, 4)), (3, 3), (0, 2)),
    "fold_stride": lambda lib: F(lib).fold(x4(lib, (2, 12, 4)), (3, 3), 2, stride=0),
    "fold_padding": lambda lib: F(lib).fold(x4(lib, (2, 12, 4)), (3, 3), 2, padding=-1),
    "fold_long": lambda lib: F(lib).fold(x4(lib, (2, 12, 4), lib.int64), (3, 3), 2),
    "rrelu_bounds": lambda lib: F(lib).rrelu(x4(lib), 0.5, 0.1, training=True),
    "rrelu_bounds_eval": lambda lib: F(lib).rrelu(x4(lib), 0.5, 0.1),
    "rrelu_long": lambda lib: F(lib).rrelu(x4(lib, dtype=lib.int64)),
    "rrelu_long_training": lambda lib: F(lib).rrelu(x4(lib, dtype=lib.int64), training=True),
    "rrelu_half_training": lambda lib: F(lib).rrelu(x4(lib, dtype=lib.float16), training=True),
    "affine_long": lambda lib: F(lib).affine_grid(x4(lib, (2, 2, 3), lib.int64), [2, 1, 4, 5], align_corners=False),
    "affine_shape_3d": lambda lib: F(lib).affine_grid(x4(lib, (2, 2, 3)), [2, 1, 4, 5, 3], align_corners=False),
    "affine_shape_2d": lambda lib: F(lib).affine_grid(x4(lib, (2, 3, 4)), [2, 1, 4, 5], align_corners=False),
    "affine_size": lambda lib: F(lib).affine_grid(x4(lib, (2, 2, 3)), [2, 1, 4], align_corners=False),
    "affine_size_tuple": lambda lib: F(lib).affine_grid(x4(lib, (2, 2, 3)), (2, 1, 4), align_corners=False),
    "affine_shape_tuple": lambda lib: F(lib).affine_grid(x4(lib, (2, 3, 4)), (2, 1, 4, 5), align_corners=False),
    "affine_empty": lambda lib: F(lib).affine_grid(x4(lib, (2, 2, 3)), [2, 1, 0, 5], align_corners=False),
    "affine_batch": lambda lib: F(lib).affine_grid(x4(lib, (2, 2, 3)), [3, 1, 4, 5], align_corners=False),
    "grid_mode": lambda lib: F(lib).grid_sample(x4(lib), x4(lib, (1, 2, 2, 2)), mode="foo", align_corners=False),
    "grid_padding": lambda lib: F(lib).grid_sample(x4(lib), x4(lib, (1, 2, 2, 2)), padding_mode="foo"),
    "grid_dtype": lambda lib: F(lib).grid_sample(x4(lib), x4(lib, (1, 2, 2, 2), lib.float64), align_corners=False),
    "grid_last": lambda lib: F(lib).grid_sample(x4(lib), x4(lib, (1, 2, 2, 3)), align_corners=False),
    "grid_batch": lambda lib: F(lib).grid_sample(x4(lib), x4(lib, (2, 2, 2, 2)), align_corners=False),
    "grid_dims": lambda lib: F(lib).grid_sample(x4(lib), x4(lib, (1, 2, 2)), align_corners=False),
    "grid_3d_input": lambda lib: F(lib).grid_sample(x4(lib, (1, 2, 5)), x4(lib, (1, 2, 1)), align_corners=False),
    "grid_empty": lambda lib: F(lib).grid_sample(x4(lib, (1, 2, 0, 4)), x4(lib, (1, 2, 2, 2)), align_corners=False),
    "grid_long": lambda lib: F(lib).grid_sample(x4(lib, dtype=lib.int64), x4(lib, (1, 2, 2, 2), lib.int64),
                                                align_corners=False),
    "grid_bicubic_5d": lambda lib: F(lib).grid_sample(x4(lib, (1, 1, 2, 2, 2)), x4(lib, (1, 2, 2, 2, 3)),
                                                      mode="bicubic", align_corners=False),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_are_pytorchs(name):
    assert _error(ERRORS[name], gradiente) == _error(ERRORS[name], torch)


def _warnings(fn, lib):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn(lib)
    assert all(w.filename == __file__ for w in caught), [w.filename for w in caught]
    return [(w.category, str(w.message)) for w in caught]


WARNINGS = {
    "upsample": lambda lib: F(lib).upsample(x4(lib), scale_factor=2),
    "upsample_nearest": lambda lib: F(lib).upsample_nearest(x4(lib), size=3),
    "upsample_bilinear": lambda lib: F(lib).upsample_bilinear(x4(lib), scale_factor=2),
    "affine_grid_default": lambda lib: F(lib).affine_grid(x4(lib, (1, 2, 3)), [1, 1, 2, 2]),
    "affine_grid_unit": lambda lib: F(lib).affine_grid(x4(lib, (1, 2, 3)), [1, 1, 1, 2], align_corners=True),
    "grid_sample_default": lambda lib: F(lib).grid_sample(x4(lib), x4(lib, (1, 2, 2, 2)) * 0),
}


@pytest.mark.parametrize("name", WARNINGS)
def test_warnings_are_pytorchs(name):
    expected = _warnings(WARNINGS[name], torch)
    assert expected
    assert _warnings(WARNINGS[name], gradiente) == expected


def test_deprecated_aliases_resample_as_interpolate():
    x = np.random.RandomState(8).randn(1, 2, 3, 4).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fn in (lambda lib, t: F(lib).upsample(t, size=(5, 7), mode="bicubic", align_corners=True),
                   lambda lib, t: F(lib).upsample_nearest(t, scale_factor=2),
                   lambda lib, t: F(lib).upsample_bilinear(t, size=(6, 2))):
            _assert_same(*_both(fn, x))


# --- unfold, fold, affine_grid, grid_sample: a few identities ---------------------------------------------------

def test_fold_of_unfold_counts_each_pixels_blocks():
    x = gradiente.rand(2, 3, 5, 6)
    kwargs = {"kernel_size": (2, 3), "padding": 1, "stride": (1, 2)}
    counts = F(gradiente).fold(F(gradiente).unfold(gradiente.ones(1, 1, 5, 6), **kwargs), (5, 6), **kwargs)
    back = F(gradiente).fold(F(gradiente).unfold(x, **kwargs), (5, 6), **kwargs)
    np.testing.assert_allclose(back.numpy(), (x * counts).numpy(), rtol=1e-6)


def test_unfold_output_owns_its_memory():
    x = gradiente.rand(1, 2, 3, 3)
    cols = F(gradiente).unfold(x, 1)
    cols.add_(1)
    np.testing.assert_allclose(cols.numpy().reshape(1, 2, 3, 3), x.numpy() + 1)


def test_identity_affine_grid_samples_the_input_back():
    x = np.random.RandomState(9).randn(2, 3, 4, 5).astype(np.float32)
    identity = np.tile(np.array([[[1.0, 0, 0], [0, 1, 0]]], dtype=np.float32), (2, 1, 1))
    for corners in (False, True):
        for lib in (torch, gradiente):
            grid = F(lib).affine_grid(lib.from_numpy(identity), [2, 3, 4, 5], align_corners=corners)
            out = F(lib).grid_sample(lib.from_numpy(x), grid, align_corners=corners)
            np.testing.assert_allclose(out.numpy(), x, atol=1e-6)


def test_grid_sample_nearest_rounds_halves_to_even():
    x = np.arange(5, dtype=np.float64).reshape(1, 1, 1, 5)
    # align_corners=True puts pixel i at -1 + i/2: these sit halfway between pixels
    grid = np.zeros((1, 1, 4, 2))
    grid[0, 0, :, 0] = [-0.75, -0.25, 0.25, 0.75]
    _assert_same(*_both(lambda lib, t: F(lib).grid_sample(t, lib.from_numpy(grid), mode="nearest",
                                                          align_corners=True), x), exact=True)


# --- layers ---------------------------------------------------------------------------------------------------------

LAYERS = [
    "Upsample(scale_factor=2)",
    "Upsample(size=(3, 4), mode='bilinear')",
    "Upsample(scale_factor=(2, 1.5), mode='bicubic', align_corners=True)",
    "Upsample(size=5)",
    "Upsample()",
    "UpsamplingNearest2d(scale_factor=2)",
    "UpsamplingBilinear2d(size=4)",
    "PixelShuffle(3)",
    "PixelUnshuffle(2)",
    "Unfold(2)",
    "Unfold((2, 3), dilation=2, padding=(1, 0), stride=2)",
    "Fold((4, 5), 2)",
    "Fold(output_size=4, kernel_size=(2, 3), stride=2)",
    "RReLU()",
    "RReLU(0.1, 0.3, inplace=True)",
    "Sequential(Upsample(scale_factor=2, mode='nearest'), PixelShuffle(2), RReLU())",
]


@pytest.mark.parametrize("expression", LAYERS)
def test_layer_reprs_are_pytorchs(expression):
    assert repr(eval(expression, vars(gradiente.nn))) == repr(eval(expression, vars(torch.nn)))


LAYER_CALLS = [
    ("Upsample(scale_factor=1.5, mode='bilinear')", (1, 2, 3, 4)),
    ("Upsample(size=(5, 2), mode='bicubic', align_corners=True, recompute_scale_factor=None)", (1, 2, 3, 4)),
    ("Upsample(scale_factor=2.5, recompute_scale_factor=True)", (1, 2, 5)),
    ("UpsamplingNearest2d(scale_factor=2)", (1, 2, 3, 4)),
    ("UpsamplingBilinear2d(size=(4, 7))", (1, 2, 3, 4)),
    ("PixelShuffle(2)", (1, 8, 2, 3)),
    ("PixelUnshuffle(2)", (1, 2, 4, 6)),
    ("Unfold((2, 3), padding=1)", (2, 2, 4, 4)),
    ("Fold((3, 4), 2)", (2, 8, 6)),
    ("RReLU(0.2, 0.4)", (3, 5)),
]


@pytest.mark.parametrize("expression,shape", LAYER_CALLS)
def test_layers_compute_as_pytorchs(expression, shape):
    x = np.random.RandomState(10).randn(*shape).astype(np.float32)
    results = []
    for lib in (torch, gradiente):
        lib.manual_seed(0)
        layer = eval(expression, vars(lib.nn))
        t = lib.from_numpy(x.copy()).requires_grad_()
        out = layer(t)
        out.backward(lib.ones(*out.shape))
        results.append((out.detach().numpy(), t.grad.numpy(), type(out.grad_fn).__name__))
    (t_out, t_grad, t_name), (g_out, g_grad, g_name) = results
    assert g_name == t_name
    np.testing.assert_allclose(g_out, t_out, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g_grad, t_grad, rtol=1e-5, atol=1e-5)


@pytest.mark.usefixtures("torch_on_one_thread")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [True, False])
def test_bilinear_grid_sample_rounds_as_pytorchs_vector_kernel(align_corners, padding_mode, dtype):
    """A spatial transformer's sampling: the output and both gradients bit for bit (GridSamplerKernel.cpp's order,
    grid_sampling.py's docstring), on grids that reach past the input's edges."""
    rng = np.random.default_rng(21)
    for n, c, h, w, out_h, out_w in [(2, 3, 7, 9, 5, 6), (1, 2, 16, 16, 13, 11), (3, 4, 5, 5, 8, 8)]:
        x = rng.standard_normal((n, c, h, w)).astype(dtype)
        grid = (rng.random((n, out_h, out_w, 2)) * 2.4 - 1.2).astype(dtype)
        upstream = rng.standard_normal((n, c, out_h, out_w)).astype(dtype)
        results = []
        for lib in (gradiente, torch):
            xt, gt = lib.tensor(x, requires_grad=True), lib.tensor(grid, requires_grad=True)
            out = lib.nn.functional.grid_sample(xt, gt, padding_mode=padding_mode, align_corners=align_corners)
            out.backward(lib.tensor(upstream))
            results.append([out.detach().numpy(), xt.grad.numpy(), gt.grad.numpy()])
        for name, ours, theirs in zip(("output", "input's gradient", "grid's gradient"), *results):
            np.testing.assert_array_equal(ours, theirs, err_msg=name)


@pytest.mark.usefixtures("torch_on_one_thread")
@pytest.mark.parametrize("mode, shape, grid_shape", [("nearest", (2, 3, 7, 9), (2, 5, 6, 2)),
                                                      ("nearest", (1, 2, 16, 16), (1, 13, 11, 2)),
                                                      ("bilinear", (2, 3, 5, 6, 7), (2, 4, 5, 3, 3))])
def test_nearest_and_volume_input_gradients_add_in_pytorchs_order(mode, shape, grid_shape):
    """The input's gradient of nearest sampling and of a volume's trilinear sampling: each output position's taps in
    turn, added in float32, as PyTorch's kernels scatter them (where windows share input pixels)."""
    rng = np.random.default_rng(22)
    x = rng.standard_normal(shape).astype("float32")
    grid = (rng.random(grid_shape) * 2.4 - 1.2).astype("float32")
    results = []
    for lib in (gradiente, torch):
        xt, gt = lib.tensor(x, requires_grad=True), lib.tensor(grid)
        out = lib.nn.functional.grid_sample(xt, gt, mode=mode, align_corners=False)
        out.backward(lib.tensor(np.linspace(-2, 2, out.numel(), dtype="float32").reshape(tuple(out.shape))))
        results.append(xt.grad.numpy())
    np.testing.assert_array_equal(*results)
