"""Memory formats as PyTorch lays them out (the channels-last tutorial): ``to(memory_format=...)``, ``empty``'s
``memory_format``, a module's ``to(memory_format=...)``, and the ops whose result follows a channels-last input
(convolution, pooling, interpolation, cat), compared with torch stride for stride."""
import pytest

import gradiente

torch = pytest.importorskip("torch")


def _channels_last(lib):
    lib.manual_seed(0)
    return lib.randn(2, 3, 4, 4).contiguous(memory_format=lib.channels_last)


def _input_gradient(lib):
    x = _channels_last(lib).requires_grad_()
    lib.nn.Conv2d(3, 8, 3)(x).sum().backward()
    return x.grad


CASES = {
    "to": lambda lib: lib.randn(2, 3, 4, 4).to(memory_format=lib.channels_last),
    "to a dtype too": lambda lib: lib.randn(2, 3, 4, 4).to(lib.float64, memory_format=lib.channels_last),
    "to, already": lambda lib: _channels_last(lib).to(memory_format=lib.channels_last),
    "to contiguous": lambda lib: _channels_last(lib).to(memory_format=lib.contiguous_format),
    "empty": lambda lib: lib.empty(2, 3, 4, 4, memory_format=lib.channels_last),
    "empty 3d": lambda lib: lib.empty(2, 3, 2, 4, 4, memory_format=lib.channels_last_3d),
    "conv2d": lambda lib: lib.nn.Conv2d(3, 8, 3)(_channels_last(lib)),
    "conv2d 1x1": lambda lib: lib.nn.Conv2d(3, 8, 1)(_channels_last(lib)),
    "conv2d channels-last weight": lambda lib: lib.nn.Conv2d(3, 8, 3).to(memory_format=lib.channels_last)(
        lib.randn(2, 3, 5, 5)),
    "max_pool2d": lambda lib: lib.nn.functional.max_pool2d(_channels_last(lib), 2),
    "max_pool2d indices": lambda lib: lib.nn.functional.max_pool2d(_channels_last(lib), 2, return_indices=True)[1],
    "avg_pool2d": lambda lib: lib.nn.functional.avg_pool2d(_channels_last(lib), 2),
    "adaptive_avg_pool2d": lambda lib: lib.nn.functional.adaptive_avg_pool2d(_channels_last(lib), 2),
    "interpolate nearest": lambda lib: lib.nn.functional.interpolate(_channels_last(lib), scale_factor=2),
    "interpolate bilinear": lambda lib: lib.nn.functional.interpolate(_channels_last(lib), scale_factor=2,
                                                                      mode="bilinear"),
    "cat": lambda lib: lib.cat([_channels_last(lib), _channels_last(lib)], 1),
    "cat of mixed layouts": lambda lib: lib.cat([_channels_last(lib), lib.randn(2, 3, 4, 4)], 1),
    "module weight": lambda lib: lib.nn.Conv2d(3, 8, 3).to(memory_format=lib.channels_last).weight,
    "module bias": lambda lib: lib.nn.Conv2d(3, 8, 3).to(memory_format=lib.channels_last).bias,
    "batch_norm": lambda lib: lib.nn.BatchNorm2d(3)(_channels_last(lib)),
    "input gradient": _input_gradient,
}


def layout(lib, make):
    t = make(lib)
    return (tuple(t.shape), t.stride(), t.is_contiguous(), t.is_contiguous(memory_format=lib.channels_last))


@pytest.mark.parametrize("case", CASES)
def test_layout_is_pytorchs(case):
    assert layout(gradiente, CASES[case]) == layout(torch, CASES[case])


@pytest.mark.parametrize("call", [
    lambda lib: lib.randn(2, 3).to(memory_format=lib.channels_last),
    lambda lib: lib.empty(2, 3, memory_format=lib.channels_last),
    lambda lib: lib.empty(2, 3, 4, 4, memory_format=lib.preserve_format),
])
def test_errors_are_pytorchs(call):
    errors = []
    for lib in (gradiente, torch):
        with pytest.raises(RuntimeError) as caught:
            call(lib)
        errors.append(str(caught.value))
    assert errors[0] == errors[1]


def test_a_channels_last_copy_is_recorded_as_a_copy_and_the_same_tensor_is_returned_when_nothing_changes():
    for lib in (gradiente, torch):
        x = lib.randn(2, 3, 4, 4, requires_grad=True)
        y = x.to(memory_format=lib.channels_last)
        assert type(y.grad_fn).__name__ == "ToCopyBackward0"
        assert y.to(memory_format=lib.channels_last) is y and x.to(memory_format=lib.contiguous_format) is x
        y.sum().backward()
        assert x.grad.stride() == (48, 16, 4, 1)
