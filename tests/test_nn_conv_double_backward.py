"""Second (and higher) derivatives through convolutions, against finite differences and PyTorch.

A convolution out = F(x, w) + b is bilinear in (x, w). Under ``create_graph=True`` its first derivatives
dx = Ax(grad, w), dw = Aw(x, grad), db = Σ grad are recorded as the outputs of one node, PyTorch's
``ConvolutionBackwardBackward0`` with edges to (grad, x, w), and that node's rule is the three maps again. Checked
here: gradgradcheck of every convolution with each of its geometry arguments, differentiated through the input
only, the weight only or both, with and without bias; the first derivatives, their grad_fn and edges, and the
second derivatives by every input and by the upstream gradient against PyTorch's in float32 and float64; a WGAN-GP
gradient penalty and a Hessian-vector product of a small convolutional net, equal to PyTorch's for the same
weights; third derivatives.

Pooling (max, average, adaptive, 1-D and 2-D) is linear in its input once its windows and maxima are fixed, and
records PyTorch's ``<Pool>BackwardBackward0`` the same way: gradgradcheck, and its derivatives against PyTorch's.
"""
import numpy as np
import pytest
from harness import OpSpec, backward_of, spec_tests
from test_nn_double_backward import first_derivatives

import gradiente

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:Using padding=.same. with even kernel")


def F(lib):
    return lib.nn.functional


# name: (function, input shape, weight shape, bias shape, keyword arguments)
CASES = {
    "conv1d": ("conv1d", (2, 3, 7), (4, 3, 3), (4,), {}),
    "conv1d_stride_dilation_groups": ("conv1d", (2, 4, 9), (6, 2, 2), (6,), {"stride": 2, "dilation": 2, "groups": 2}),
    "conv2d": ("conv2d", (2, 2, 5, 4), (3, 2, 2, 3), (3,), {}),
    "conv2d_stride_padding": ("conv2d", (1, 2, 6, 5), (3, 2, 3, 2), (3,), {"stride": (2, 1), "padding": (1, 2)}),
    "conv2d_same": ("conv2d", (2, 2, 4, 5), (2, 2, 3, 2), (2,), {"padding": "same", "dilation": (1, 2)}),
    "conv2d_dilation_groups": ("conv2d", (1, 4, 6, 6), (4, 2, 2, 2), (4,), {"dilation": 2, "groups": 2}),
    "conv3d": ("conv3d", (1, 2, 4, 3, 4), (2, 1, 2, 2, 3), (2,), {"stride": (1, 2, 1), "padding": 1, "groups": 2}),
    "conv_transpose1d": ("conv_transpose1d", (2, 4, 4), (4, 3, 3), (6,),
                         {"stride": 3, "padding": 1, "output_padding": 2, "groups": 2}),
    "conv_transpose2d": ("conv_transpose2d", (1, 2, 3, 4), (2, 3, 2, 3), (3,),
                         {"stride": (2, 3), "padding": (1, 0), "output_padding": (1, 2)}),
    "conv_transpose2d_groups_dilation": ("conv_transpose2d", (2, 4, 3, 3), (4, 1, 2, 2), (2,),
                                         {"stride": 2, "output_padding": 1, "groups": 2, "dilation": (2, 1)}),
}
WRT = {"x": (0,), "w": (1,), "x_w": (0, 1)}


def _inputs(lib, name, bias, wrt, dtype="float64", seed=0):
    """The case's input, weight and (if ``bias``) bias in ``lib``; those at the positions ``wrt`` require grad (and
    the bias with them)."""
    _, *shapes, _ = CASES[name]
    rng = np.random.RandomState(seed)
    arrays = [rng.uniform(-1, 1, shape).astype(dtype) for shape in shapes[:3 if bias else 2]]
    return [lib.from_numpy(a).requires_grad_(i in wrt or i == 2) for i, a in enumerate(arrays)]


def _conv(lib, name):
    fn, *_, kwargs = CASES[name]
    return lambda *tensors: getattr(F(lib), fn)(*tensors, **kwargs)


@pytest.mark.parametrize("bias", [False, True], ids=["no_bias", "bias"])
@pytest.mark.parametrize("wrt", list(WRT))
@pytest.mark.parametrize("name", list(CASES))
def test_gradgradcheck(name, wrt, bias):
    inputs = _inputs(gradiente, name, bias, WRT[wrt])
    assert gradiente.autograd.gradgradcheck(_conv(gradiente, name), inputs)


def _second_derivatives(lib, name, bias, wrt, dtype):
    """The first derivatives by the inputs that require grad (create_graph, upstream gradient ``v`` requiring
    grad), their grad_fn with its edges' names, and the derivatives of a random combination of them by every input
    that requires grad and by ``v``."""
    inputs = _inputs(lib, name, bias, WRT[wrt], dtype)
    needed = [t for t in inputs if t.requires_grad]
    out = _conv(lib, name)(*inputs)
    rng = np.random.RandomState(3)
    v = lib.from_numpy(rng.uniform(-1, 1, tuple(out.shape)).astype(dtype)).requires_grad_()
    firsts = lib.autograd.grad(out, needed, v, create_graph=True)
    names = [(type(g.grad_fn).__name__, [None if n is None else type(n).__name__ for n, _ in g.grad_fn.next_functions])
             for g in firsts]
    total = sum((g * lib.from_numpy(rng.uniform(-1, 1, tuple(g.shape)).astype(dtype))).sum() for g in firsts)
    seconds = lib.autograd.grad(total, [*needed, v], allow_unused=True)
    return [g.detach().numpy() for g in firsts], names, [None if s is None else s.numpy() for s in seconds]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bias", [False, True], ids=["no_bias", "bias"])
@pytest.mark.parametrize("wrt", list(WRT))
@pytest.mark.parametrize("name", list(CASES))
def test_second_derivatives_as_torch(name, wrt, bias, dtype):
    ours_first, ours_names, ours = _second_derivatives(gradiente, name, bias, wrt, dtype)
    theirs_first, theirs_names, theirs = _second_derivatives(torch, name, bias, wrt, dtype)
    rtol, atol = (1e-5, 1e-5) if dtype == "float32" else (1e-10, 1e-12)
    assert ours_names == theirs_names
    assert all(node == "ConvolutionBackwardBackward0" for node, _ in ours_names)
    for a, b in zip(ours_first, theirs_first):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert (a is None) == (b is None), f"second derivative {i}: {a is None=} but {b is None=}"
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=rtol * 10, atol=atol * 10, err_msg=f"second derivative {i}")


def test_first_derivatives_under_create_graph_are_the_plain_ones():
    """Recording the first derivatives changes nothing in them: the same arrays as an ordinary backward, bit for
    bit."""
    inputs = _inputs(gradiente, "conv2d_dilation_groups", True, (0, 1), "float32")
    out = _conv(gradiente, "conv2d_dilation_groups")(*inputs)
    v = gradiente.from_numpy(np.random.RandomState(3).uniform(-1, 1, tuple(out.shape)).astype("float32"))
    plain = gradiente.autograd.grad(out, inputs, v, retain_graph=True)
    recorded = gradiente.autograd.grad(out, inputs, v, create_graph=True)
    for a, b in zip(plain, recorded):
        assert a.numpy().tobytes() == b.detach().numpy().tobytes()


@pytest.mark.parametrize("name", ["conv2d_stride_padding", "conv2d_same"])
def test_third_derivatives_as_torch(name):
    """Each derivative of the recorded maps is recorded again: the third derivatives by the input and the weight."""
    results = []
    for lib in (torch, gradiente):
        x, w, b = _inputs(lib, name, True, (0, 1))
        out = _conv(lib, name)(x, w, b)
        dx, dw, _ = lib.autograd.grad((out * out).sum(), (x, w, b), create_graph=True)
        second = lib.autograd.grad((dx * dx).sum() + (dw * dw).sum(), (x, w), create_graph=True)
        results.append([t.numpy() for t in lib.autograd.grad(sum((s ** 2).sum() for s in second), (x, w))])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-10)


@pytest.mark.parametrize("name", ["conv_transpose1d", "conv_transpose2d_groups_dilation"])
def test_third_derivatives_of_transposed_convolutions_numerically(name):
    """gradgradcheck of the first derivatives (as a function of x, w and the upstream gradient). PyTorch 2.13
    cannot give these with an output_padding: its third backward raises "output_padding is not supported for
    non-transposed convolutions"."""
    x, w = _inputs(gradiente, name, False, (0, 1))
    conv = _conv(gradiente, name)
    v = gradiente.from_numpy(np.random.RandomState(3).uniform(-1, 1, tuple(conv(x, w).shape))).requires_grad_()

    def first_derivatives(x, w, v):
        with gradiente.enable_grad():
            return gradiente.autograd.grad(conv(x, w), (x, w), v, create_graph=True)
    assert gradiente.autograd.gradgradcheck(first_derivatives, (x, w, v))


# --- programs that need second derivatives --------------------------------------------------------------------------

def _critic(lib):
    """A small DCGAN-style critic with PyTorch's initial weights (float64)."""
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(
        torch.nn.Conv2d(1, 4, 3, stride=2, padding=1), torch.nn.LeakyReLU(0.2),
        torch.nn.Conv2d(4, 6, 3, stride=2, padding=1, groups=2), torch.nn.LeakyReLU(0.2),
        torch.nn.Flatten(), torch.nn.Linear(6 * 2 * 2, 1)).double()
    if lib is torch:
        return theirs
    nn = gradiente.nn
    ours = nn.Sequential(nn.Conv2d(1, 4, 3, stride=2, padding=1), nn.LeakyReLU(0.2),
                         nn.Conv2d(4, 6, 3, stride=2, padding=1, groups=2), nn.LeakyReLU(0.2),
                         nn.Flatten(), nn.Linear(6 * 2 * 2, 1)).double()
    ours.load_state_dict({k: gradiente.from_numpy(v.detach().numpy().copy()) for k, v in theirs.state_dict().items()})
    return ours


def _gradient_penalty(lib):
    """WGAN-GP: the critic's loss on real and fake images plus 10·(‖∇ critic(interpolates)‖ - 1)², then the loss's
    gradient by every weight."""
    critic = _critic(lib)
    rng = np.random.RandomState(1)
    real, fake = (lib.from_numpy(rng.standard_normal((5, 1, 7, 7))) for _ in range(2))
    alpha = lib.from_numpy(rng.uniform(0, 1, (5, 1, 1, 1)))
    mixed = (alpha * real + (1 - alpha) * fake).requires_grad_()
    score = critic(mixed)
    (slopes,) = lib.autograd.grad(score, mixed, lib.ones_like(score), create_graph=True)
    penalty = ((slopes.flatten(1).norm(2, dim=1) - 1) ** 2).mean()
    loss = critic(fake).mean() - critic(real).mean() + 10 * penalty
    loss.backward()
    return [loss.item(), penalty.item()] + [p.grad.numpy() for p in critic.parameters()]


def test_wgan_gradient_penalty_as_torch():
    ours, theirs = _gradient_penalty(gradiente), _gradient_penalty(torch)
    assert len(ours) == len(theirs) == 2 + 6
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def _hessian_vector_product(lib):
    """The Hessian of a conv net's loss by its two convolution weights, times a vector (``autograd.functional.hvp``),
    and the same product from two calls of ``autograd.grad``."""
    critic = _critic(lib)
    rng = np.random.RandomState(2)
    images = lib.from_numpy(rng.standard_normal((3, 1, 7, 7)))
    target = lib.from_numpy(rng.standard_normal((3, 1)))
    first, second = critic[0], critic[2]
    weights = (first.weight.detach(), second.weight.detach())
    vector = tuple(lib.from_numpy(rng.standard_normal(tuple(w.shape))) for w in weights)

    def loss(w1, w2):
        h = F(lib).leaky_relu(F(lib).conv2d(images, w1, first.bias, stride=2, padding=1), 0.2)
        h = F(lib).leaky_relu(F(lib).conv2d(h, w2, second.bias, stride=2, padding=1, groups=2), 0.2)
        return ((critic[5](h.flatten(1)) - target) ** 2).sum() + (h ** 3).sum()

    _, hvp = lib.autograd.functional.hvp(loss, weights, vector)
    params = [w.clone().requires_grad_() for w in weights]
    grads = lib.autograd.grad(loss(*params), params, create_graph=True)
    by_hand = lib.autograd.grad(sum((g * v).sum() for g, v in zip(grads, vector)), params)
    return [t.numpy() for t in hvp], [t.numpy() for t in by_hand]


def test_hessian_vector_product_as_torch():
    (ours, ours_by_hand), (theirs, _) = _hessian_vector_product(gradiente), _hessian_vector_product(torch)
    for a, b, c in zip(ours, ours_by_hand, theirs):
        assert np.any(a)
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(a, c, rtol=1e-10, atol=1e-12)


def test_input_changed_in_place_is_caught_as_in_torch():
    """The node keeps the input as PyTorch's does (a double backward reads it): changing it in place before the
    backward is PyTorch's error, not a silently stale derivative."""
    for lib in (torch, gradiente):
        x = lib.ones(1, 2, 5, 5)
        w = lib.ones(3, 2, 2, 2, requires_grad=True)
        y = F(lib).conv2d(x, w)
        x.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


# --- pooling: linear in the input once its windows and maxima are fixed ------------------------------------------

POOLS = {
    "max_pool2d": (lambda lib, x: F(lib).max_pool2d(x, 2), (2, 3, 6, 5)),
    "max_pool2d_overlapping": (lambda lib, x: F(lib).max_pool2d(x, 3, stride=1, padding=1, dilation=(1, 2)),
                               (2, 2, 5, 7)),
    "max_pool2d_ceil_unbatched": (lambda lib, x: F(lib).max_pool2d(x, 2, stride=2, ceil_mode=True), (2, 5, 5)),
    "max_pool1d": (lambda lib, x: F(lib).max_pool1d(x, 3, stride=2, padding=1), (2, 3, 8)),
    "avg_pool2d": (lambda lib, x: F(lib).avg_pool2d(x, 3, stride=2, padding=1), (2, 3, 6, 5)),
    "avg_pool2d_exclude_pad_ceil": (lambda lib, x: F(lib).avg_pool2d(x, 2, padding=1, ceil_mode=True,
                                                                     count_include_pad=False), (1, 2, 5, 4)),
    "avg_pool2d_divisor_unbatched": (lambda lib, x: F(lib).avg_pool2d(x, (2, 3), divisor_override=4), (2, 4, 6)),
    "avg_pool1d": (lambda lib, x: F(lib).avg_pool1d(x, 3, stride=1, padding=1), (2, 3, 7)),
    "adaptive_avg_pool2d": (lambda lib, x: F(lib).adaptive_avg_pool2d(x, (3, 2)), (2, 3, 7, 5)),
    "adaptive_avg_pool1d_unbatched": (lambda lib, x: F(lib).adaptive_avg_pool1d(x, 4), (3, 9)),
    "adaptive_max_pool2d": (lambda lib, x: F(lib).adaptive_max_pool2d(x, (3, 4)), (2, 2, 7, 9)),
    "adaptive_max_pool1d": (lambda lib, x: F(lib).adaptive_max_pool1d(x, 4), (2, 3, 9)),
}


def _pool_input(lib, name, dtype="float64"):
    # distinct values: no ties between the elements of a window, where max pooling is not differentiable
    values = np.random.RandomState(0).permutation(np.prod(POOLS[name][1])).reshape(POOLS[name][1]) / 10 - 1
    return lib.from_numpy(values.astype(dtype)).requires_grad_()


@pytest.mark.parametrize("name", list(POOLS))
def test_pooling_gradgradcheck(name):
    assert gradiente.autograd.gradgradcheck(lambda x: POOLS[name][0](gradiente, x), [_pool_input(gradiente, name)])


def _pool_derivatives(lib, name, dtype):
    """The input gradient (create_graph) and the name and edges of the pooling's node under it, then
    the derivatives of a random combination ``<u, dx>`` of it by the input (zeros: A does not depend on x) and by
    ``v`` (A u, recorded as the pooling again), and the derivative of ``‖A u‖²`` by ``u``."""
    x = _pool_input(lib, name, dtype)
    out = POOLS[name][0](lib, x)
    rng = np.random.RandomState(3)
    v = lib.from_numpy(rng.uniform(-1, 1, tuple(out.shape)).astype(dtype)).requires_grad_()
    (dx,) = lib.autograd.grad(out, x, v, create_graph=True)
    node = dx.grad_fn
    while not type(node).__name__.endswith("BackwardBackward0"):
        node = node.next_functions[0][0]
    names = [type(node).__name__, [None if n is None else type(n).__name__ for n, _ in node.next_functions]]
    u = lib.from_numpy(rng.uniform(-1, 1, tuple(dx.shape)).astype(dtype)).requires_grad_()
    by_x, by_v = lib.autograd.grad((dx * u).sum(), (x, v), create_graph=True)
    (third,) = lib.autograd.grad((by_v ** 2).sum(), u)
    return [dx.detach().numpy(), by_x.detach().numpy(), by_v.detach().numpy(), third.numpy()], names


# --- the first derivatives as ops of their own, for the harness (and tests/test_node_coverage.py) ----------------

def _conv_spec(name, pick, bias=True):
    """The first derivatives of case ``name`` by x, w (and b), the ``pick``-th first, as an op of
    (x, w, [b,] v)."""
    _, x, w, b, _ = CASES[name]
    shapes = (x, w, b) if bias else (x, w)
    v = tuple(_conv(torch, name)(*(torch.zeros(s) for s in shapes)).shape)
    return OpSpec(f"{name}_d{'xwb'[pick]}", first_derivatives(lambda lib, *t: _conv(lib, name)(*t), pick),
                  [shapes + (v,)])


def _pool_spec(name):
    op, x = POOLS[name]
    v = tuple(op(torch, torch.zeros(x)).shape)
    return OpSpec(f"{name}_backward", backward_of(op), [(x, v)], make_inputs=lambda rng, s: [
        rng.permutation(np.prod(s[0])).reshape(s[0]) / 10 - 1, rng.uniform(-1, 1, s[1])])


SPECS = [_conv_spec("conv2d_stride_padding", 0), _conv_spec("conv2d_stride_padding", 1),
         _conv_spec("conv2d_stride_padding", 2), _conv_spec("conv1d_stride_dilation_groups", 1, bias=False),
         _conv_spec("conv3d", 0), _conv_spec("conv_transpose2d", 1), _conv_spec("conv_transpose1d", 0)]
# 2-D pools: a 1-D one's gradient passes squeeze and unsqueeze, whose rules record other nodes than PyTorch's
SPECS += [_pool_spec(name) for name in POOLS if "1d" not in name]

test_spec_gradcheck, test_spec_against_torch, test_spec_gradgradcheck = spec_tests(SPECS)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(POOLS))
def test_pooling_second_derivatives_as_torch(name, dtype):
    ours, ours_names = _pool_derivatives(gradiente, name, dtype)
    theirs, theirs_names = _pool_derivatives(torch, name, dtype)
    # a 1-D pool's gradient passes the rules of its squeeze and unsqueeze, which gradiente records as ViewBackward0
    # where PyTorch records UnsqueezeBackward0 and SqueezeBackward1 (views.py's rules, not pooling's): there the
    # pooling's node and its edge to the input are compared
    compared = slice(None) if "1d" not in name else slice(1, None)
    assert ours_names[0] == theirs_names[0]
    assert ours_names[1][compared] == theirs_names[1][compared]
    assert not np.any(ours[1])
    rtol, atol = (1e-5, 1e-6) if dtype == "float32" else (1e-12, 1e-14)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
