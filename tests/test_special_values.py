"""nan, inf and signed zeros through forward and backward, against PyTorch: where a program meets them it
must print what it prints under PyTorch, and never get a silently different gradient."""
import warnings

import numpy as np
import pytest

import gradiente

torch = pytest.importorskip("torch")

NAN, INF = float("nan"), float("inf")
# 32 values: a whole number of PyTorch's vectorized steps, whose answers at nan and at a shrinkage's edge can
# differ from its scalar loop's (which serves the last few elements of other lengths); gradiente gives the
# vectorized answers
VALUES = [-1.0, 0.0, NAN, 0.5, 2.0, INF, -INF, 6.0, -0.5, 0.7, 0.1, 20.0, -3.0, 3.0, 1.0, -2.0, 4.0, -6.0, 0.3, -0.1,
          -0.0, 7.0, -7.0, 0.49, -0.51, 2.9, -2.9, 5.9, 19.9, 20.1, -1e-30, 1e30]


def _activations(lib):
    F = lib.nn.functional
    return {
        "relu": lib.relu, "relu6": F.relu6, "hardtanh": F.hardtanh, "threshold": lambda x: F.threshold(x, 0.1, 20.0),
        "leaky_relu": F.leaky_relu, "hardsigmoid": F.hardsigmoid, "softshrink": F.softshrink,
        "hardshrink": F.hardshrink, "clamp": lambda x: x.clamp(-0.5, 0.7), "abs": lib.abs, "sign": lib.sign,
        "floor": lib.floor, "amax": lambda x: x.amax(), "amin": lambda x: x.reshape(4, 8).amin(1),
        "max": lambda x: x.max(), "hardswish": F.hardswish,
    }


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(_activations(gradiente)))
def test_values_and_gradients_at_special_inputs_match_torch(name, dtype):
    a = np.array(VALUES, dtype=dtype)
    upstream = np.linspace(-1.3, 1.7, len(VALUES)).astype(dtype)
    results = []
    for lib in (gradiente, torch):
        x = lib.tensor(a, requires_grad=True)
        y = _activations(lib)[name](x)
        y.backward(lib.tensor(upstream[:y.numel()].reshape(tuple(y.shape))))
        results.append((y.detach().numpy(), x.grad.numpy()))
    (g_y, g_grad), (t_y, t_grad) = results
    # what prints: nan where nan, and the sign of every other value, zeros included (a nan's sign bit
    # does not print, and PyTorch's kernels leave it either way)
    for ours, theirs in ((g_y, t_y), (g_grad, t_grad)):
        np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
        numbers = ~np.isnan(theirs)
        np.testing.assert_array_equal(np.signbit(ours)[numbers], np.signbit(theirs)[numbers])
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)


@pytest.mark.parametrize("op", ["floor", "ceil", "round", "trunc", "sign", "pow0", "div_floor"])
def test_zero_gradients_stop_nan_and_inf(op):
    # PyTorch's rule for these is zeros_like(grad): a nan or inf arriving from above does not pass.
    for lib in (gradiente, torch):
        x = lib.tensor([0.5, 1.5, -2.5], requires_grad=True)
        if op == "pow0":
            y = x ** 0
        elif op == "div_floor":
            y = lib.div(x, 2.0, rounding_mode="floor")
        else:
            y = getattr(lib, op)(x)
        y.backward(lib.tensor([NAN, INF, -1.0]))
        assert x.grad.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("op", ["fmod", "remainder", "pow", "floor_divide", "float_power"])
def test_shapes_that_do_not_broadcast_raise_pytorchs_error(op):
    messages = []
    for lib in (gradiente, torch):
        with pytest.raises(RuntimeError) as info:
            getattr(lib, op)(lib.ones(2, 3), lib.ones(3, 2))
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_fmod_node_names_follow_the_overload():
    for lib in (gradiente, torch):
        x = lib.tensor([1.0, 2.5], requires_grad=True)
        assert type(lib.fmod(x, 1.5).grad_fn).__name__ == "FmodBackward0"
        assert type(lib.fmod(x, lib.tensor(1.5)).grad_fn).__name__ == "FmodBackward1"


def test_roll_of_a_zero_dim_tensor_with_a_dim():
    for lib in (gradiente, torch):
        with pytest.raises(IndexError, match="Dimension specified as 0 but tensor has no dimensions"):
            lib.roll(lib.tensor(1.0), 1, 0)
        assert lib.roll(lib.tensor(1.0), 1).item() == 1.0


def test_floating_point_events_inside_gradiente_are_silent():
    # log(0), 0/0 and overflow give -inf, nan and inf silently, as in PyTorch, forward and backward;
    # the user's own NumPy code keeps its warnings.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gradiente._silence_numpy_float_warnings()     # what importing gradiente did (pytest resets filters)
        x = gradiente.tensor([0.0, -1.0, 1e30], requires_grad=True)
        y = x.log() + x / x + x.exp() * 0
        y.sum().backward()
        assert np.isnan(x.grad.numpy()).any()
        with pytest.raises(RuntimeWarning):
            np.log(np.zeros(1))
