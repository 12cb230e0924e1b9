"""Placeholder random module (replaced by the PyTorch-identical generator)."""
import numpy as np

from . import _dtype as dt
from ._tensor import Tensor, _size_args


class Generator:
    def __init__(self, device="cpu"):
        self._rs = np.random.RandomState(67280421310721 & 0xFFFFFFFF)

    def manual_seed(self, s):
        self._rs = np.random.RandomState(s & 0xFFFFFFFF)
        return self


default_generator = Generator()


def manual_seed(s):
    return default_generator.manual_seed(s)


def seed():
    return 0


def initial_seed():
    return 0


def get_rng_state():
    raise NotImplementedError


def set_rng_state(state):
    raise NotImplementedError


def rand(*size, dtype=None, requires_grad=False, generator=None, **kw):
    t = Tensor._make(default_generator._rs.random_sample(_size_args(size)).astype((dtype or dt.get_default_dtype())._np))
    return t.requires_grad_(requires_grad)


def randn(*size, dtype=None, requires_grad=False, generator=None, **kw):
    t = Tensor._make(default_generator._rs.standard_normal(_size_args(size)).astype((dtype or dt.get_default_dtype())._np))
    return t.requires_grad_(requires_grad)


rand_like = randn_like = randint = randint_like = randperm = normal = bernoulli = multinomial = None
