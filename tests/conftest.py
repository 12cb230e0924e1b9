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
