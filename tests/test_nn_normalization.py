"""Named regression tests for ops/nn/normalization.py (layer_norm, batch_norm, group_norm, instance_norm) against
PyTorch: what the layer tests of test_nn_layers.py do not reach (in-place changes around the op, dtype checks)."""
import warnings

import numpy as np
import pytest
from harness import assert_same_tensors, both, both_outcomes, on_both, outcome

import gradiente

torch = pytest.importorskip("torch")


def _input(lib):
    return lib.from_numpy(np.linspace(-1.0, 2.0, 24).reshape(2, 3, 4) ** 2).requires_grad_()


@pytest.mark.parametrize("op", [
    lambda F, x: F.layer_norm(x, (4,)),
    lambda F, x: F.layer_norm(x, (3, 4)),
    lambda F, x: F.batch_norm(x, None, None, training=True),
    lambda F, x: F.group_norm(x, 3),
    lambda F, x: F.instance_norm(x),
], ids=["layer_norm", "layer_norm_2d", "batch_norm", "group_norm", "instance_norm"])
def test_output_changed_in_place_keeps_the_gradient(op):
    """Without weight and bias the output is the normalized input itself: an in-place change of it must not
    reach the values the node keeps for its backward."""
    def run(lib):
        x = _input(lib)
        y = op(lib.nn.functional, x)
        y.mul_(2)
        gx, = lib.autograd.grad((y * lib.arange(24.0, dtype=lib.float64).reshape(2, 3, 4)).sum(), x,
                                create_graph=True)
        return gx, lib.autograd.grad((gx * gx).sum(), x)[0]
    assert_same_tensors(*both(run), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("op", [
    lambda F, x: F.layer_norm(x, (4,)),
    lambda F, x: F.instance_norm(x),
    lambda F, x: F.group_norm(x, 1),
], ids=["layer_norm", "instance_norm", "group_norm"])
def test_input_changed_in_place_is_caught(op):
    def run(lib):
        y = _input(lib) * 1
        out = op(lib.nn.functional, y)
        y.mul_(2)
        with pytest.raises(RuntimeError) as err:
            out.pow(2).sum().backward()
        return str(err.value)
    g, t = both(run)
    assert g == t


_DTYPES = {"h": "float16", "f": "float32", "d": "float64", None: None}
_MIXED = [(i, w, b) for i in "hfd" for w in "hfd" + "-" for b in "hfd" + "-" if i not in (w + b).replace("-", "")
          or len(set((w + b).replace("-", ""))) > 1]


@pytest.mark.parametrize("dtypes", ["".join(c) for c in _MIXED])
def test_layer_norm_parameters_of_another_dtype(dtypes):
    """PyTorch's CPU rule: weight and bias share the input's dtype, or are float32 for a float16 input."""
    def run(lib):
        def ones(kind, *shape):
            return None if kind == "-" else lib.ones(*shape, dtype=getattr(lib, _DTYPES[kind]))
        i, w, b = dtypes
        return lib.nn.functional.layer_norm(ones(i, 2, 4), (4,), ones(w, 4), ones(b, 4)) * 1
    g, t = both_outcomes(run)
    if t[1] is not None:
        assert g[1] == t[1]
    else:
        assert_same_tensors(g[0], t[0])


@pytest.mark.parametrize("dtype,tol", [(np.float32, 2e-5), (np.float64, 1e-12)])
@pytest.mark.parametrize("op", ["layer_norm", "group_norm"])
def test_blas_reductions_match_torch_at_training_sizes(op, dtype, tol):
    """Layer and group norm reduce rows with ``rows @ ones`` and ``einsum`` (normalization.py's reductions): the
    values and all three gradients agree with PyTorch's at the sizes the bench measures."""
    rng = np.random.RandomState(0)
    shape = (512, 128) if op == "layer_norm" else (4, 64, 16, 16)
    channels = shape[-1] if op == "layer_norm" else shape[1]
    arrays = [(rng.standard_normal(shape) * 3 + 1).astype(dtype), rng.standard_normal(channels).astype(dtype),
              rng.standard_normal(channels).astype(dtype)]
    upstream = rng.standard_normal(shape).astype(dtype)
    results = []
    for lib in (gradiente, torch):
        x, w, b = (lib.tensor(a, requires_grad=True) for a in arrays)
        F = lib.nn.functional
        y = F.layer_norm(x, (channels,), w, b) if op == "layer_norm" else F.group_norm(x, 8, w, b)
        y.backward(lib.from_numpy(upstream))
        results.append([y.detach().numpy(), x.grad.numpy(), w.grad.numpy(), b.grad.numpy()])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol * 10)


@pytest.mark.parametrize("norm", ["layer_norm", "layer_norm_overflowing", "group_norm", "layer_norm_float32_weight"])
def test_half_precision_normalizes_in_float32_as_pytorch(norm):
    """float16 input: the statistics and x̂ in float32, the result rounded once, so it is PyTorch's bit for bit
    (the squares of [300, 1, 2] overflow float16)."""
    def scenario(lib):
        rng = np.random.RandomState(0)
        x = lib.from_numpy((rng.randn(2, 4, 6) * 30 + 100).astype(np.float16))
        if norm == "layer_norm":
            y = lib.nn.functional.layer_norm(x, (6,))
        elif norm == "layer_norm_overflowing":
            y = lib.nn.functional.layer_norm(lib.tensor([[300.0, 1.0, 2.0]], dtype=lib.float16), (3,))
        elif norm == "group_norm":
            y = lib.nn.functional.group_norm(x, 2)
        else:
            y = lib.nn.functional.layer_norm(x, (6,), lib.linspace(0.5, 2, 6), lib.linspace(-1, 1, 6))
        return str(y.dtype).split(".")[-1], y.tolist()

    on_both(scenario)


@pytest.mark.parametrize("call", [
    lambda F, lib: F.group_norm(lib.ones(1, 1, 1), 1),
    lambda F, lib: F.group_norm(lib.ones(1, 3, 1), 2),          # checked before divisibility, as PyTorch
    lambda F, lib: F.group_norm(lib.ones(4), 2),
    lambda F, lib: F.batch_norm(lib.ones(1, 2, 1), None, None, training=True),
    lambda F, lib: F.batch_norm(lib.ones(1, 1, 0), None, None, training=True).shape,
], ids=["group_one_value", "group_indivisible", "group_1d", "batch_one_value", "batch_empty"])
def test_one_value_per_channel_in_training(call):
    """Issue 13, found by tools/random_programs.py: group_norm normalized a single value to 0 where PyTorch's
    F._verify_batch_size refuses; batch_norm refused an empty batch, which PyTorch accepts. (batch_norm's message
    prints the input's Size, ``gradiente.Size`` here.)"""
    ours, theirs = (outcome(lambda lib: call(lib.nn.functional, lib), lib) for lib in (gradiente, torch))
    assert ours[:2] == theirs[:2]
    assert str(ours[-1]).replace("gradiente.", "torch.") == str(theirs[-1])


def test_layer_norm_with_weight_of_a_transposed_input_is_contiguous():
    """Issue 13, found by tools/random_programs.py: the affine step kept a transposed input's layout."""
    values = np.random.RandomState(0).standard_normal((4, 3, 2))
    ours, theirs = (lib.nn.functional.layer_norm(lib.from_numpy(values).permute(2, 1, 0), (4,),
                                                 lib.ones(4, dtype=lib.float64), lib.zeros(4, dtype=lib.float64))
                    for lib in (gradiente, torch))
    assert ours.stride() == theirs.stride()
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10)


@pytest.mark.parametrize("affine", [False, True])
@pytest.mark.parametrize("training", [False, True])
def test_batch_norm_of_an_empty_batch_is_a_clone(affine, training):
    """Issue 13, found by tools/random_programs.py: PyTorch's batch_norm of an empty input returns a clone
    (CloneBackward0; times weight[0] plus bias[0] with parameters); gradiente divided by zero channels."""
    def scenario(lib):
        x = lib.ones(0, 2, 3, requires_grad=True)
        w, b = (lib.tensor([2.0, 3.0], requires_grad=True), lib.tensor([1.0, 0.0])) if affine else (None, None)
        out = lib.nn.functional.batch_norm(x, lib.zeros(2), lib.ones(2), w, b, training=training)
        return tuple(out.shape), type(out.grad_fn).__name__
    on_both(scenario)


def test_group_norm_of_an_empty_input_under_create_graph():
    """Issue 13, found by tools/random_programs.py: the composed (create_graph) rule divided by the zero elements
    of each group (ZeroDivisionError); PyTorch gives empty gradients."""
    def scenario(lib):
        x = lib.ones(1, 2, 0, requires_grad=True)
        (g,) = lib.autograd.grad(lib.nn.functional.group_norm(x * 2, 1), x, lib.ones(1, 2, 0), create_graph=True)
        return tuple(g.shape), g.requires_grad
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        on_both(scenario)


@pytest.mark.parametrize("shape,groups", [((0, 1, 2), 1), ((0, 4), 2), ((0, 2, 3, 2), 2)])
def test_group_norm_of_an_empty_batch(shape, groups):
    """Seed 130827: NumPy cannot infer the -1 of ``reshape(0, groups, -1)`` (ValueError), forward and backward;
    PyTorch returns empty results and a weight gradient of zeros, under create_graph too."""
    def scenario(lib):
        x = lib.ones(shape, dtype=lib.float64, requires_grad=True)
        w = lib.ones(shape[1], dtype=lib.float64, requires_grad=True)
        out = lib.nn.functional.group_norm(x * 1, groups, w)
        gx, gw = lib.autograd.grad(out.sum(), (x, w), create_graph=True)
        second = lib.autograd.grad(gw.sum(), w, allow_unused=True)[0]
        return (tuple(out.shape), type(out.grad_fn).__name__, tuple(gx.shape), gw.tolist(),
                None if second is None else second.tolist())
    on_both(scenario)


@pytest.mark.parametrize("sizes,training", [
    ((4, 4, None, None), False), ((3, 4, None, None), False), ((3, 3, 4, None), False), ((3, 3, None, 4), False),
    ((4, 4, None, None), True), ((None, None, 4, None), True), ((None, None, 4, 5), True),
    ((None, None, None, 5), True),
])
def test_batch_norm_refuses_per_channel_tensors_of_another_size(sizes, training):
    # a BatchNorm1d(4) handed (4, 3) input: PyTorch names the first per-channel tensor whose size is not C
    def call(lib):
        tensors = [None if n is None else lib.ones(n) for n in sizes]
        return lib.nn.functional.batch_norm(lib.randn(4, 3), *tensors, training=training)
    assert on_both(call)[0] == "raised"


def test_batch_norm_of_an_empty_input_checks_no_channel_sizes():
    assert on_both(lambda lib: tuple(lib.nn.functional.batch_norm(lib.randn(0, 3), lib.zeros(4), lib.ones(4)).shape)) \
        == ("returned", (0, 3))


@pytest.mark.parametrize("shape", [(1, 4, 4), (4, 5, 7), (2, 3, 4, 4), (16, 8, 10)])
def test_batch_norm_of_a_small_input_gives_torchs_digits(shape):
    """Every channel of a small input is computed in PyTorch's steps, so a printed normalized tensor, and the
    models tutorial's normed_tensor.mean() of a (1, 4, 4) one (rounding noise around zero), match PyTorch's."""
    def normalized(lib):
        lib.manual_seed(1)
        x = lib.rand(*shape) * 20 + 5
        layer = lib.nn.BatchNorm1d(shape[1]) if len(shape) == 3 else lib.nn.BatchNorm2d(shape[1])
        y = layer(x)
        return y.detach().numpy(), y.mean().item()
    (ours, our_mean), (theirs, their_mean) = normalized(gradiente), normalized(torch)
    np.testing.assert_array_equal(ours, theirs)
    if shape == (1, 4, 4):      # (over more elements the mean's own summation order differs from PyTorch's)
        assert our_mean == their_mean
