import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

import pytest

import gradiente


@pytest.fixture(autouse=True)
def _gradientes_warning_filter():
    """pytest restores the warning filters around each test and around collection, which drops the filter that
    ``import gradiente`` installs (NumPy's floating-point RuntimeWarnings raised inside gradiente are silenced, as
    PyTorch computes the same inf or nan silently). Each test gets it back, so it sees what a user sees."""
    gradiente._silence_numpy_float_warnings()


@pytest.fixture(autouse=True)
def _distribution_checks_restored():
    """``torch.compile`` turns the distributions' argument checks off for the whole process (PyTorch's dynamo does,
    and gradiente's compile with it): each test starts with them as a fresh process has them."""
    yield
    for name in ("gradiente.distributions", "torch.distributions"):
        distributions = sys.modules.get(name)
        if distributions is not None:
            distributions.Distribution.set_default_validate_args(__debug__)


@pytest.fixture
def torch_on_one_thread():
    """PyTorch on one thread for the test: with more, its kernels split rows and products among threads and add
    the partial sums in an order that depends on how many there are. (``pytestmark =
    pytest.mark.usefixtures("torch_on_one_thread")`` in a module that compares rounding with PyTorch's.)"""
    import torch
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
