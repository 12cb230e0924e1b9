"""Every convolution runs on one core (``ops.nn.convolution``) and records one node, ``ConvolutionBackward0``:
conv1d/2d/3d and conv_transpose1d/2d against PyTorch, each with all its geometry arguments, with only the input
or only the weight requiring grad (the node keeps a different operand for each), unbatched; their second
derivatives (gradgradcheck; tests/test_nn_conv_double_backward.py has the rest); and the argument checks, word for
word and in PyTorch's order."""
import pytest
from harness import OpSpec, check_same_error, spec_tests

import gradiente

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:Using padding=.same. with even kernel")


def F(lib):
    return lib.nn.functional


def conv(name, **kwargs):
    return lambda lib, *tensors: getattr(F(lib), name)(*tensors, **kwargs)


ALL_ARGS = {
    "conv1d": {"stride": 2, "padding": 1, "dilation": 2, "groups": 2},
    "conv2d": {"stride": (2, 1), "padding": (1, 2), "dilation": (1, 2), "groups": 2},
    "conv3d": {"stride": (1, 2, 1), "padding": (0, 1, 2), "dilation": (2, 1, 1), "groups": 2},
    "conv_transpose1d": {"stride": 3, "padding": 1, "output_padding": 2, "groups": 2},
    "conv_transpose2d": {"stride": (2, 3), "padding": (1, 0), "output_padding": (1, 2), "groups": 2,
                         "dilation": (1, 2)},
}
SHAPES = {          # input, weight, bias
    "conv1d": ((2, 4, 11), (6, 2, 3), (6,)),
    "conv2d": ((2, 4, 7, 6), (6, 2, 3, 2), (6,)),
    "conv3d": ((2, 4, 5, 6, 5), (4, 2, 2, 3, 2), (4,)),
    "conv_transpose1d": ((2, 4, 5), (4, 3, 4), (6,)),
    "conv_transpose2d": ((2, 4, 4, 3), (4, 1, 3, 2), (2,)),
}

SPECS = []
for name, kwargs in ALL_ARGS.items():
    x, w, b = SHAPES[name]
    SPECS += [
        OpSpec(f"{name}_all_args", conv(name, **kwargs), [(x, w, b)]),
        OpSpec(f"{name}_input_grad_only", conv(name, **kwargs), [(x, w, b)], grad_inputs=[0]),
        OpSpec(f"{name}_weight_grad_only", conv(name, **kwargs), [(x, w)], grad_inputs=[1]),
        # one group: a convolution's weight takes all the input's channels, a transposed one's already does
        OpSpec(f"{name}_unbatched", conv(name), [(x[1:], w if "transpose" in name else (w[0], w[1] * 2) + w[2:])]),
    ]
SPECS += [
    OpSpec("conv2d_same_even_kernel", conv("conv2d", padding="same", dilation=(1, 3)), [((2, 3, 6, 7), (2, 3, 4, 2))]),
    OpSpec("conv1d_valid", conv("conv1d", padding="valid"), [((2, 3, 6), (2, 3, 4))]),
    OpSpec("conv3d_same", conv("conv3d", padding="same"), [((1, 2, 4, 3, 5), (3, 2, 3, 2, 3))]),
]

test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


@pytest.mark.parametrize("name", list(ALL_ARGS))
def test_every_convolution_differentiates_twice_as_torch_records_it(name):
    """Under create_graph the first derivatives are the outputs of one ``ConvolutionBackwardBackward0`` whose
    edges lead to the upstream gradient, the input and the weight (the bias is not one of them)."""
    x, w, b = SHAPES[name]
    nodes = []
    for lib in (torch, gradiente):
        tensors = [lib.randn(*shape, dtype=lib.float64, requires_grad=True) for shape in (x, w, b)]
        out = getattr(F(lib), name)(*tensors, **ALL_ARGS[name])
        v = lib.randn(*out.shape, dtype=lib.float64, requires_grad=True)
        firsts = lib.autograd.grad(out, tensors, v, create_graph=True)
        nodes.append([(type(g.grad_fn).__name__, [type(n).__name__ for n, _ in g.grad_fn.next_functions])
                      for g in firsts])
        assert firsts[0].grad_fn is firsts[1].grad_fn is firsts[2].grad_fn
    assert nodes[0] == nodes[1]
    assert nodes[1][0] == ("ConvolutionBackwardBackward0", ["AccumulateGrad"] * 3)


def test_a_weight_modified_after_the_forward_pass_is_refused_as_in_torch():
    """The node keeps the weight whatever requires grad (as PyTorch does): changing it in place before
    backward is an error, not a silently wrong input gradient."""
    for lib in (torch, gradiente):
        x = lib.ones(1, 2, 5, 5, requires_grad=True)
        w = lib.ones(3, 2, 2, 2)
        y = F(lib).conv2d(x, w)
        w.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def _z(lib, *shape, dtype=None):
    return lib.zeros(*shape, dtype=dtype or lib.float32)


ERRORS = [
    # argument lists are counted against the weight's spatial dims, then negative values, then shapes
    lambda lib: F(lib).conv1d(_z(lib, 1, 2, 5), _z(lib, 3, 2)),
    lambda lib: F(lib).conv1d(_z(lib, 2, 5), _z(lib, 3, 2, 2, 2)),
    lambda lib: F(lib).conv2d(_z(lib, 1, 2, 5, 5), _z(lib, 3, 2, 2)),
    lambda lib: F(lib).conv2d(_z(lib, 2, 5, 5), _z(lib, 4, 2, 2, 2, 2)),
    lambda lib: F(lib).conv3d(_z(lib, 1, 2, 5, 5, 5), _z(lib, 3, 2, 2, 2)),
    lambda lib: F(lib).conv2d(_z(lib, 1, 2, 5, 5), _z(lib, 3, 2, 2, 2), stride=(1, 2, 3)),
    lambda lib: F(lib).conv3d(_z(lib, 1, 2, 5, 5, 5), _z(lib, 3, 2, 2, 2, 2), padding=(1, 2)),
    lambda lib: F(lib).conv_transpose2d(_z(lib, 1, 2, 5, 5), _z(lib, 2, 2, 2)),
    lambda lib: F(lib).conv_transpose1d(_z(lib, 1, 2, 5), _z(lib, 2, 2, 2, 2)),
    lambda lib: F(lib).conv2d(_z(lib, 1, 3, 5, 5), _z(lib, 4, 2, 2, 2), padding=-1),
    lambda lib: F(lib).conv2d(_z(lib, 1, 2, 5, 5), _z(lib, 4, 2, 2, 2), stride=0, dilation=-1),
    lambda lib: F(lib).conv2d(_z(lib, 1, 2, 5, 5), _z(lib, 4, 2, 2, 2), dilation=(-1, 1)),
    lambda lib: F(lib).conv2d(_z(lib, 1, 2, 5, 5), _z(lib, 4, 2, 2, 2), groups=0, padding=-1),
    lambda lib: F(lib).conv_transpose2d(_z(lib, 1, 2, 5, 5), _z(lib, 2, 3, 2, 2), output_padding=-1, stride=0),
    lambda lib: F(lib).conv2d(_z(lib, 1, 10, 5, 5), _z(lib, 2, 2, 2, 2), groups=5),
    lambda lib: F(lib).conv2d(_z(lib, 1, 4, 5, 5), _z(lib, 3, 2, 2, 2), groups=2),
    lambda lib: F(lib).conv3d(_z(lib, 1, 3, 5, 5, 5), _z(lib, 4, 2, 2, 2, 2), groups=2),
    lambda lib: F(lib).conv2d(_z(lib, 1, 2, 5, 5), _z(lib, 3, 2, 2, 2), _z(lib, 4)),
    lambda lib: F(lib).conv3d(_z(lib, 1, 2, 5, 5, 5), _z(lib, 3, 2, 2, 2, 2), _z(lib, 4)),
    lambda lib: F(lib).conv1d(_z(lib, 1, 2, 2), _z(lib, 3, 2, 4)),
    lambda lib: F(lib).conv3d(_z(lib, 1, 2, 2, 5, 5), _z(lib, 3, 2, 4, 2, 2)),
    lambda lib: F(lib).conv2d(_z(lib, 1, 2, 5, 5), _z(lib, 3, 2, 2), padding="same"),
    lambda lib: F(lib).conv2d(_z(lib, 1, 3, 5, 5), _z(lib, 4, 2, 2, 2), padding="same", stride=2),
    lambda lib: F(lib).conv2d(_z(lib, 1, 3, 5, 5), _z(lib, 4, 2, 2, 2), padding="bad"),
    lambda lib: F(lib).conv_transpose2d(_z(lib, 1, 2, 1, 1), _z(lib, 2, 3, 1, 1), padding=3),
    lambda lib: F(lib).conv_transpose2d(_z(lib, 2, 2, 5, 5), _z(lib, 2, 3, 2, 2), _z(lib, 4), output_padding=2),
    # dtypes last; a weight's message is worded after the CPU kernel PyTorch picks (oneDNN's or its own)
    lambda lib: F(lib).conv2d(_z(lib, 2, 2, 1, 1), _z(lib, 3, 2, 2, 2, dtype=lib.float64)),
    lambda lib: F(lib).conv2d(_z(lib, 1, 2, 5, 5), _z(lib, 3, 2, 2, 2), _z(lib, 3, dtype=lib.float64)),
    lambda lib: F(lib).conv2d(_z(lib, 1, 2, 5, 5), _z(lib, 3, 2, 2, 2, dtype=lib.float64)),
    lambda lib: F(lib).conv2d(_z(lib, 2, 2, 5, 5), _z(lib, 3, 2, 2, 2, dtype=lib.float64)),
    lambda lib: F(lib).conv2d(_z(lib, 1, 2, 9, 9), _z(lib, 3, 2, 5, 5, dtype=lib.float64)),
    lambda lib: F(lib).conv2d(_z(lib, 1, 2, 5, 5), _z(lib, 4, 1, 2, 2, dtype=lib.float64), groups=2),
    lambda lib: F(lib).conv2d(_z(lib, 1, 2, 5, 5, dtype=lib.float64), _z(lib, 3, 2, 2, 2)),
    lambda lib: F(lib).conv1d(_z(lib, 1, 2, 9), _z(lib, 3, 2, 5, dtype=lib.float64)),
    lambda lib: F(lib).conv3d(_z(lib, 1, 2, 5, 5, 5), _z(lib, 3, 2, 2, 2, 2, dtype=lib.float64)),
    lambda lib: F(lib).conv3d(_z(lib, 2, 2, 5, 5, 5), _z(lib, 3, 2, 2, 2, 2, dtype=lib.float64)),
    lambda lib: F(lib).conv_transpose2d(_z(lib, 1, 4, 5, 5), _z(lib, 4, 3, 3, 3, dtype=lib.float64)),
    lambda lib: F(lib).conv_transpose1d(_z(lib, 2, 4, 5), _z(lib, 4, 3, 2, dtype=lib.float64)),
]


@pytest.mark.parametrize("call", ERRORS)
def test_errors_worded_and_ordered_as_torch(call):
    check_same_error(call)


def test_an_empty_batch_convolves_to_an_empty_batch_as_in_torch():
    """An input of batch size 0 (seed 201859 of the random programs): PyTorch returns the empty result and zero
    gradients for the weight and bias; the im2col products reshaped with -1 raised NumPy's ValueError."""
    def run(lib):
        found = []
        for dims, groups in [(1, 1), (2, 1), (2, 2), (3, 1)]:
            x = lib.zeros((0, 2) + (4,) * dims, requires_grad=True)
            w = lib.ones((4, 2 // groups) + (2,) * dims, requires_grad=True)
            b = lib.ones(4, requires_grad=True)
            y = getattr(lib.nn.functional, f"conv{dims}d")(x, w, b, groups=groups)
            y.sum().backward()
            found.append((tuple(y.shape), tuple(x.grad.shape), w.grad.abs().sum().item(), b.grad.tolist()))
            found.append(tuple(getattr(lib.nn.functional, f"conv_transpose{dims}d")(lib.zeros((0, 4) + (3,) * dims),
                                                                                     w).shape))
        return found
    assert run(gradiente) == run(torch)
