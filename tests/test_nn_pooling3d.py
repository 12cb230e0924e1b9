"""Issue 16's new ops and layers against PyTorch: 3-D pooling (max, average, adaptive, with indices), power-average
pooling (lp_pool1d/2d/3d), conv_transpose3d, and the layers over them (MaxPool3d, AvgPool3d, AdaptiveAvgPool3d,
AdaptiveMaxPool3d, LPPool1d/2d/3d, ConvTranspose3d, BatchNorm3d, InstanceNorm3d): values, gradients, node names,
float64 gradcheck and gradgradcheck (the op-spec table), indices, reprs and error messages."""
import numpy as np
import pytest
from harness import OpSpec, backward_of, check_same_error, spec_tests

import gradiente

torch = pytest.importorskip("torch")


def F(lib):
    return lib.nn.functional


def _positive(rng, shapes):
    """Inputs away from zero, where x^p and its root are smooth."""
    return [rng.uniform(0.5, 2.0, size=s) for s in shapes]


SPECS = [
    OpSpec("avg_pool3d", lambda lib, x: F(lib).avg_pool3d(x, 2), [((2, 3, 4, 4, 4),), ((3, 4, 5, 6),)]),
    OpSpec("avg_pool3d_padded_ceil", lambda lib, x: F(lib).avg_pool3d(x, (3, 2, 3), (2, 1, 2), 1, ceil_mode=True,
                                                                       count_include_pad=False),
           [((1, 2, 5, 4, 6),)]),
    OpSpec("avg_pool3d_divisor", lambda lib, x: F(lib).avg_pool3d(x, 2, 1, divisor_override=3),
           [((1, 2, 3, 3, 4),)]),
    OpSpec("max_pool3d", lambda lib, x: F(lib).max_pool3d(x, 2), [((2, 3, 4, 4, 4),), ((2, 5, 4, 6),)]),
    OpSpec("max_pool3d_overlapping", lambda lib, x: F(lib).max_pool3d(x, 3, 1, 1, dilation=(1, 2, 1)),
           [((1, 2, 4, 6, 5),)]),
    OpSpec("max_pool3d_ceil", lambda lib, x: F(lib).max_pool3d(x, (2, 3, 2), 2, ceil_mode=True),
           [((1, 2, 5, 7, 5),)]),
    OpSpec("adaptive_avg_pool3d", lambda lib, x: F(lib).adaptive_avg_pool3d(x, (2, 3, 4)),
           [((2, 3, 5, 6, 7),), ((2, 5, 4, 6),)]),
    OpSpec("adaptive_avg_pool3d_none", lambda lib, x: F(lib).adaptive_avg_pool3d(x, (None, 2, 3)),
           [((1, 2, 3, 5, 7),)]),
    OpSpec("adaptive_avg_pool3d_one", lambda lib, x: F(lib).adaptive_avg_pool3d(x, 1), [((2, 3, 3, 4, 5),)]),
    OpSpec("adaptive_max_pool3d", lambda lib, x: F(lib).adaptive_max_pool3d(x, (2, 4, 3)),
           [((2, 3, 5, 6, 7),), ((2, 5, 4, 6),)]),
    OpSpec("lp_pool1d", lambda lib, x: F(lib).lp_pool1d(x, 2, 3, 2), [((2, 3, 9),)], make_inputs=_positive),
    OpSpec("lp_pool2d", lambda lib, x: F(lib).lp_pool2d(x, 1.5, (2, 3)), [((2, 3, 4, 6),)], make_inputs=_positive),
    OpSpec("lp_pool3d", lambda lib, x: F(lib).lp_pool3d(x, 3, 2, ceil_mode=True), [((1, 2, 5, 4, 4),)],
           make_inputs=_positive),
    OpSpec("lp_pool2d_inf", lambda lib, x: F(lib).lp_pool2d(x, float("inf"), 2), [((1, 2, 4, 4),)]),
    OpSpec("conv_transpose3d", lambda lib, x, w, b: F(lib).conv_transpose3d(x, w, b, stride=2, padding=1,
                                                                            output_padding=1),
           [((2, 4, 3, 2, 3), (4, 3, 2, 3, 2), (3,))]),
    OpSpec("conv_transpose3d_groups", lambda lib, x, w: F(lib).conv_transpose3d(x, w, groups=2, dilation=(1, 2, 1)),
           [((4, 2, 3, 3), (4, 1, 2, 2, 2))]),
]

# the gradients of the pools under create_graph, as ops of (x, upstream gradient): their nodes are the pools'
# ``<Pool>BackwardBackward0`` (named and computed as PyTorch's), the pool's map applied again
_X = (1, 2, 4, 5, 4)
SPECS += [
    OpSpec(f"{name}_backward", backward_of(op), [(_X, v)])
    for name, op, v in [
        ("avg_pool3d", lambda lib, x: F(lib).avg_pool3d(x, 2, 1, 1), (1, 2, 5, 6, 5)),
        ("max_pool3d", lambda lib, x: F(lib).max_pool3d(x, 2, 1), (1, 2, 3, 4, 3)),
        ("adaptive_avg_pool3d", lambda lib, x: F(lib).adaptive_avg_pool3d(x, (2, 3, 3)), (1, 2, 2, 3, 3)),
        ("adaptive_max_pool3d", lambda lib, x: F(lib).adaptive_max_pool3d(x, (3, 2, 3)), (1, 2, 3, 2, 3)),
    ]
]



def _pool_then_unpool(**unpool_args):
    """max_unpool3d of a max pool's values and indices: gradients reach x through both nodes."""
    def fn(lib, x):
        values, indices = F(lib).max_pool3d(x, 2, 2, return_indices=True)
        return F(lib).max_unpool3d(values * 2, indices, 2, 2, **unpool_args)
    return fn


SPECS += [
    OpSpec("max_unpool3d", _pool_then_unpool(), [((2, 3, 4, 4, 6),), ((2, 4, 6, 4),)]),
    OpSpec("max_unpool3d_output_size", _pool_then_unpool(output_size=(5, 4, 7)), [((1, 2, 5, 4, 7),)]),
]

test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


@pytest.mark.parametrize("call", [
    lambda lib, x: F(lib).max_pool3d(x, (2, 3, 2), (1, 2, 1), 1, ceil_mode=True, return_indices=True),
    lambda lib, x: F(lib).max_pool3d_with_indices(x, 2),
    lambda lib, x: F(lib).adaptive_max_pool3d(x, (3, 2, 4), return_indices=True),
    lambda lib, x: F(lib).adaptive_max_pool3d_with_indices(x[0], 3),
], ids=["max_pool3d", "max_pool3d_with_indices", "adaptive_max_pool3d", "adaptive_max_pool3d_unbatched"])
def test_indices_match_torch(call):
    # integer-valued input with ties: the first maximum of each window wins in both
    x = np.random.RandomState(0).randint(0, 4, size=(2, 3, 5, 6, 7)).astype(np.float64)
    ours, theirs = call(gradiente, gradiente.tensor(x)), call(torch, torch.tensor(x))
    np.testing.assert_array_equal(ours[0].numpy(), theirs[0].numpy())
    np.testing.assert_array_equal(ours[1].numpy(), theirs[1].numpy())
    assert ours[1].dtype == gradiente.int64


def test_max_pool3d_nan_wins_as_in_torch():
    x = np.random.RandomState(1).randn(1, 1, 4, 4, 4)
    x[0, 0, 1, 2, 3] = np.nan
    ours = F(gradiente).max_pool3d(gradiente.tensor(x), 2, return_indices=True)
    theirs = F(torch).max_pool3d(torch.tensor(x), 2, return_indices=True)
    np.testing.assert_array_equal(ours[0].numpy(), theirs[0].numpy())
    np.testing.assert_array_equal(ours[1].numpy(), theirs[1].numpy())


@pytest.mark.parametrize("call", [
    lambda lib: F(lib).avg_pool3d(lib.zeros(3, 4, 4), 2),
    lambda lib: F(lib).max_pool3d(lib.zeros(3, 4, 4), 2),
    lambda lib: F(lib).max_pool3d(lib.zeros(1, 1, 4, 4, 4), 4, padding=3),
    lambda lib: F(lib).avg_pool3d(lib.zeros(1, 1, 2, 2, 2), 3),
    lambda lib: F(lib).avg_pool3d(lib.zeros(1, 1, 2, 5, 5), 3, padding=1),
    lambda lib: F(lib).max_pool3d(lib.zeros(1, 1, 2, 2, 2), 3),
    lambda lib: F(lib).adaptive_avg_pool3d(lib.zeros(3, 4, 4), 2),
    lambda lib: F(lib).adaptive_max_pool3d(lib.zeros(3, 4, 4), 2),
    lambda lib: F(lib).adaptive_max_pool3d(lib.zeros(1, 2, 3, 4, dtype=lib.int64), 2),
    lambda lib: F(lib).max_unpool3d(lib.zeros(2, 2, 2), lib.zeros(2, 2, 2, dtype=lib.int64), 2),
    lambda lib: F(lib).max_unpool3d(lib.zeros(1, 2, 2, 2), lib.zeros(1, 2, 2, 2, dtype=lib.int32), 2),
    lambda lib: F(lib).max_unpool3d(lib.zeros(1, 2, 2, 2), lib.zeros(1, 2, 2, 1, dtype=lib.int64), 2),
    lambda lib: F(lib).max_unpool3d(lib.zeros(1, 2, 2, 2), lib.arange(8).reshape(1, 2, 2, 2) * 20, 2),
    lambda lib: F(lib).max_unpool3d(lib.zeros(1, 2, 2, 2), lib.zeros(1, 2, 2, 2, dtype=lib.int64), 2,
                                    output_size=(9, 4, 4)),
], ids=["avg_rank", "max_rank", "pad_too_large", "avg_kernel_too_large",
        "avg_kernel_too_large_padded", "max_output_too_small", "adaptive_avg_rank", "adaptive_max_rank",
        "adaptive_max_int", "unpool_rank", "unpool_int32", "unpool_shapes", "unpool_index",
        "unpool_size"])
def test_errors_match_torch(call):
    check_same_error(call)


LAYERS = [
    ("MaxPool3d", lambda nn: nn.MaxPool3d(2, 1, 1, ceil_mode=True), (2, 3, 4, 5, 4)),
    ("MaxPool3d_indices", lambda nn: nn.MaxPool3d((2, 3, 2), return_indices=True), (3, 4, 6, 4)),
    ("AvgPool3d", lambda nn: nn.AvgPool3d(2, padding=1, count_include_pad=False), (2, 3, 4, 5, 4)),
    ("AdaptiveAvgPool3d", lambda nn: nn.AdaptiveAvgPool3d((2, None, 3)), (2, 3, 4, 5, 6)),
    ("AdaptiveMaxPool3d", lambda nn: nn.AdaptiveMaxPool3d(2, return_indices=True), (2, 3, 4, 5, 6)),
    ("LPPool1d", lambda nn: nn.LPPool1d(2, 3), (2, 3, 9)),
    ("LPPool2d", lambda nn: nn.LPPool2d(3, (2, 2), stride=1), (2, 3, 4, 5)),
    ("LPPool3d", lambda nn: nn.LPPool3d(2, 2, ceil_mode=True), (1, 2, 5, 4, 4)),
    ("ConvTranspose3d", lambda nn: nn.ConvTranspose3d(4, 2, (2, 3, 2), stride=2, padding=(0, 1, 0)), (2, 4, 2, 3, 2)),
    ("BatchNorm3d", lambda nn: nn.BatchNorm3d(3), (2, 3, 2, 3, 4)),
    ("InstanceNorm3d", lambda nn: nn.InstanceNorm3d(3, affine=True, track_running_stats=True), (2, 3, 2, 3, 4)),
    ("InstanceNorm3d_unbatched", lambda nn: nn.InstanceNorm3d(3), (3, 2, 3, 4)),
]


@pytest.mark.parametrize("make,shape", [pytest.param(m, s, id=n) for n, m, s in LAYERS])
def test_layer_matches_torch(make, shape):
    torch.manual_seed(0)
    theirs = make(torch.nn).double()
    ours = make(gradiente.nn).double()
    ours.load_state_dict({k: gradiente.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    assert repr(ours) == repr(theirs)
    x = np.random.RandomState(3).uniform(0.2, 2.0, size=shape)
    tx, gx = torch.tensor(x, requires_grad=True), gradiente.tensor(x, requires_grad=True)
    t_out, g_out = theirs(tx), ours(gx)
    if isinstance(t_out, tuple):
        np.testing.assert_array_equal(g_out[1].numpy(), t_out[1].numpy())
        t_out, g_out = t_out[0], g_out[0]
    np.testing.assert_allclose(g_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-10, atol=1e-12)
    assert g_out.grad_fn.name() == t_out.grad_fn.name()
    upstream = np.random.RandomState(4).uniform(0.5, 1.5, size=tuple(t_out.shape))
    t_out.backward(torch.tensor(upstream))
    g_out.backward(gradiente.tensor(upstream))
    np.testing.assert_allclose(gx.grad.numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-12)
    for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-9, atol=1e-12, err_msg=name)
    for (name, b), (_, c) in zip(ours.named_buffers(), theirs.named_buffers()):
        np.testing.assert_allclose(b.numpy(), c.numpy(), rtol=1e-10, atol=1e-12, err_msg=name)


def test_batchnorm3d_rejects_4d_input_as_torch():
    check_same_error(lambda lib: lib.nn.BatchNorm3d(3)(lib.zeros(2, 3, 4, 4)))


def test_new_names_exist_as_in_torch():
    for name in ["MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d", "AdaptiveMaxPool3d", "LPPool1d", "LPPool2d",
                 "LPPool3d", "ConvTranspose3d", "BatchNorm3d", "InstanceNorm3d"]:
        assert name in gradiente.nn.modules.__all__ and hasattr(torch.nn, name)
    for name in ["avg_pool3d", "max_pool3d", "max_pool3d_with_indices", "adaptive_avg_pool3d", "adaptive_max_pool3d",
                 "adaptive_max_pool3d_with_indices", "lp_pool1d", "lp_pool2d", "lp_pool3d", "conv_transpose3d"]:
        assert callable(getattr(gradiente.nn.functional, name)) and hasattr(torch.nn.functional, name)


def test_max_unpool3d_layer_matches_torch():
    x = np.random.RandomState(5).randn(2, 3, 4, 4, 4)
    outs = []
    for lib in (torch, gradiente):
        pool, unpool = lib.nn.MaxPool3d(2, return_indices=True), lib.nn.MaxUnpool3d(2)
        t = lib.tensor(x, requires_grad=True)
        out = unpool(*pool(t), output_size=(2, 3, 5, 4, 5))
        out.sum().backward()
        outs.append((repr(unpool), out.detach().numpy(), t.grad.numpy(), out.grad_fn.name()))
    assert outs[0][0] == outs[1][0] and outs[0][3] == outs[1][3]
    np.testing.assert_array_equal(outs[1][1], outs[0][1])
    np.testing.assert_array_equal(outs[1][2], outs[0][2])
