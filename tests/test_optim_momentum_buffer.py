"""SGD's momentum buffer stored as a row of a two-row matrix (``optim/_kernels.py``, issue 14): the step stays
bit-identical to PyTorch's, the buffer is an ordinary tensor to ``state_dict``, ``save`` and real ``torch.load``,
and a buffer made any other way (loaded, assigned) takes the general path with the same result."""
import numpy as np
import pytest

import gradiente
from gradiente.optim import _kernels

torch = pytest.importorskip("torch")

SHAPE = (80, 64)          # 5,120 elements: above the size from which the two-row matrix is used


def _trajectory(lib, steps=4, nesterov=False, dampening=0.0, reload_state=False):
    rng = np.random.RandomState(0)
    p = lib.tensor(rng.standard_normal(SHAPE).astype(np.float32), requires_grad=True)
    opt = lib.optim.SGD([p], lr=0.0123, momentum=0.9, dampening=dampening, nesterov=nesterov)
    for step in range(steps):
        p.grad = lib.tensor(rng.standard_normal(SHAPE).astype(np.float32))
        opt.step()
        if reload_state and step == 1:
            opt.load_state_dict(opt.state_dict())
    return p.detach().numpy().copy(), opt.state[p]["momentum_buffer"].numpy().copy(), opt


@pytest.mark.parametrize("options", [{}, {"dampening": 0.1}, {"nesterov": True}, {"reload_state": True}],
                         ids=["plain", "dampening", "nesterov", "reloaded"])
def test_sgd_momentum_is_bit_identical_to_torch(options):
    ours, theirs = _trajectory(gradiente, **options), _trajectory(torch, **options)
    assert np.array_equal(ours[0], theirs[0])
    assert np.array_equal(ours[1], theirs[1])


def test_the_buffer_lives_in_a_two_row_matrix_and_saves_as_its_values_alone(tmp_path):
    _, buffer, opt = _trajectory(gradiente)
    (p,) = opt.param_groups[0]["params"]
    stored = opt.state[p]["momentum_buffer"]
    if _kernels._blas_fuses():          # (elsewhere the buffer is a plain copy, and the step the float64 path)
        assert stored._data.base is not None and stored._data.base.shape == (2, stored.numel())
    assert stored.is_contiguous() and tuple(stored.stride()) == (64, 1)
    path = tmp_path / "sgd.pt"
    gradiente.save(opt.state_dict(), path)
    loaded = torch.load(path)
    assert loaded["state"][0]["momentum_buffer"].untyped_storage().nbytes() == stored.numel() * 4
    assert np.array_equal(loaded["state"][0]["momentum_buffer"].numpy(), buffer)


def test_small_or_non_float32_buffers_are_plain_copies():
    small = np.ones(10, np.float32)
    assert _kernels.new_momentum_buffer(small).base is None
    wide = np.ones(5000, np.float64)
    assert _kernels.new_momentum_buffer(wide).base is None
