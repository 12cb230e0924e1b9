"""Ops PyTorch gives no derivative record PyTorch's ``NotImplemented`` node (one class in gradiente), and backward
through it raises PyTorch's error word for word, naming the op."""
import pytest

import gradiente

torch = pytest.importorskip("torch")

CALLS = [
    ("floor_divide", lambda lib, x: lib.floor_divide(x, 2)),
    ("bincount", lambda lib, x: lib.bincount(lib.tensor([0, 1, 1]), weights=x)),
    ("histogram", lambda lib, x: lib.histogram(x, 3)[0]),
    ("native_channel_shuffle", lambda lib, x: lib.native_channel_shuffle(x.reshape(1, 3, 1), 3)),
    ("binomial", lambda lib, x: lib.binomial(lib.tensor([3.0, 4.0, 5.0]), x.sigmoid())),
    ("_sample_dirichlet", lambda lib, x: lib._sample_dirichlet(x.exp())),
    ("heaviside", lambda lib, x: lib.heaviside(x, lib.tensor([0.5]))),
]


@pytest.mark.parametrize("op,call", CALLS, ids=[op for op, _ in CALLS])
def test_backward_through_an_op_without_derivative_raises_as_torch(op, call):
    seen = []
    for lib in (torch, gradiente):
        x = lib.tensor([1.5, -2.5, 3.0], requires_grad=True)
        y = call(lib, x)
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
        seen.append((type(y.grad_fn).__name__, y.grad_fn.name(), str(info.value)))
    assert seen[1] == seen[0] == ("NotImplemented", "torch::autograd::NotImplemented",
                                  f"derivative for aten::{op} is not implemented")
