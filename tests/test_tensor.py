"""``Tensor.__format__`` (``core/tensor.py``) against PyTorch's: a 0-d tensor formats as its number, with or
without a format spec; any other tensor, or a Parameter, only with an empty spec, and otherwise raises PyTorch's
error."""
import pytest
from harness import check_same_error

import gradiente

torch = pytest.importorskip("torch")


# --- Tensor.__format__ --------------------------------------------------------------------------------------------

FORMATS = [
    lambda lib: f"{lib.tensor(0.5):.2f}",
    lambda lib: f"{lib.tensor(0.5)}",
    lambda lib: f"{lib.tensor(0.1)}",                      # the float32 value as a Python float
    lambda lib: f"{lib.tensor(0.1, dtype=lib.float64):.3e}",
    lambda lib: f"{lib.tensor(3)}|{lib.tensor(7):>4}|{lib.tensor(255):x}",
    lambda lib: f"{lib.tensor(True)}",
    lambda lib: f"{lib.tensor(2.5, requires_grad=True)}",
    lambda lib: f"{lib.tensor(2.5, requires_grad=True) * 2:.1f}",
    lambda lib: format(lib.tensor(1.5), "") + format(lib.tensor(1.5), "08.3f"),
    lambda lib: f"{lib.tensor([1.0, 2.0])}",
    lambda lib: f"{lib.ones(2, 2, requires_grad=True)}",
    lambda lib: f"{lib.nn.Parameter(lib.tensor(0.5))}",
    lambda lib: f"{lib.tensor([0.5])}",
]


@pytest.mark.parametrize("case", range(len(FORMATS)))
def test_format_matches_torch(case):
    assert FORMATS[case](gradiente).replace("gradiente", "torch") == FORMATS[case](torch)


FORMAT_ERRORS = [
    lambda lib: f"{lib.tensor([1.0, 2.0]):.2f}",
    lambda lib: f"{lib.tensor([0.5]):.2f}",
    lambda lib: f"{lib.nn.Parameter(lib.tensor(0.5)):.2f}",
    lambda lib: f"{lib.tensor(3.5):d}",
]


@pytest.mark.parametrize("case", range(len(FORMAT_ERRORS)))
def test_format_errors_match_torch(case):
    check_same_error(FORMAT_ERRORS[case])


def test_numpy_of_a_tensor_that_requires_grad_under_no_grad():
    for lib in (gradiente, torch):
        x = lib.ones(2, requires_grad=True)
        with lib.no_grad():
            assert x.numpy().tolist() == [1.0, 1.0]
    check_same_error(lambda lib: lib.ones(2, requires_grad=True).numpy())


def test_data_assignment_and_deletion_refused_as_in_pytorch():
    def set_int_data(lib):
        x = lib.ones(2, requires_grad=True)
        x.data = lib.tensor([1, 2])
    check_same_error(set_int_data)
    for lib in (gradiente, torch):
        x = lib.ones(2, requires_grad=True)
        x.data = lib.zeros(2)
        assert x.tolist() == [0.0, 0.0]
        with pytest.raises(TypeError):
            x.data = None
        for name in ("data", "requires_grad", "_grad_fn", "_backward_hooks"):
            with pytest.raises(RuntimeError):
                delattr(x, name)
        del x.grad
        assert x.grad is None
