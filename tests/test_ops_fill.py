"""The ops of ops/fill.py: filling and copying in place (zero_, fill_ with a number or a 0-d tensor, the
out-of-place fill, copy_). From the op table, on a non-leaf: float64 gradcheck on contiguous and strided inputs,
and differential tests against PyTorch (forward, backward with a non-trivial upstream gradient, grad_fn names)
in float32 and float64. Then PyTorch's errors, and the details the table cannot express: integer targets,
leaves under no_grad, dtype conversion, the gradient of a tensor fill value."""
import pytest
from harness import UNARY, OpSpec, check_same_error_first_line, spec_tests

import gradiente

torch = pytest.importorskip("torch")

SPECS = [
    # in-place fills and copies on a non-leaf
    OpSpec("zero_", lambda lib, x: (x * 2).zero_(), UNARY),
    OpSpec("fill_number", lambda lib, x: (x * 2).fill_(1.5), UNARY),
    OpSpec("fill_tensor", lambda lib, x, v: (x * 2).fill_(v), [((3,), ()), ((2, 3), ())]),
    OpSpec("fill", lambda lib, x: lib.fill(x, 1.5), UNARY),
    OpSpec("fill_with_tensor", lambda lib, x, v: lib.fill(x, v), [((2, 3), ())]),
    OpSpec("copy_", lambda lib, x, s: (x * 2).copy_(s), [((3,), (3,)), ((2, 3), (3,)), ((2, 3), ())]),
    OpSpec("copy_into_constant", lambda lib, x, s: (x * 2).copy_(s), [((2, 3), (2, 1))], grad_inputs=(1,)),
]


test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


@pytest.mark.parametrize("call", [
    lambda lib: lib.zeros(2).fill_(lib.ones(2)),
    lambda lib: lib.zeros(2).copy_(lib.ones(3)),
    lambda lib: lib.zeros(3).copy_(lib.ones(2, 3)),
], ids=lambda f: f.__code__.co_firstlineno)
def test_error_first_lines_match_torch(call):
    check_same_error_first_line(call)


# --- details the table cannot express ------------------------------------------------------------------

def test_zero_and_fill_work_without_grad():
    g = gradiente.ones(2, 3)
    assert g.zero_() is g and g.tolist() == [[0.0] * 3] * 2 and g._version == 1
    assert gradiente.zeros(2, dtype=gradiente.int64).fill_(2.7).tolist() == [2, 2]
    assert gradiente.zeros(2, dtype=gradiente.int64).copy_(gradiente.tensor([1.7, -2.2])).tolist() == [1, -2]


def test_fill_and_copy_of_a_leaf_under_no_grad():
    w = gradiente.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        w.fill_(1.0)
    with gradiente.no_grad():
        w.copy_(gradiente.tensor([1.0, 2.0, 3.0]))
        w.clamp_(max=2.5)
    assert w.tolist() == [1.0, 2.0, 2.5] and w.grad_fn is None and w.requires_grad


def test_copy_converts_dtype_and_sends_the_gradient_back_in_the_source_dtype():
    results = []
    for lib in (gradiente, torch):
        src = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        dst = lib.zeros(2, 3) * 1
        dst.copy_(src)
        (dst * lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).sum().backward()
        results.append((str(dst.dtype).split(".")[-1], type(dst.grad_fn).__name__, src.grad.tolist(),
                        str(src.grad.dtype).split(".")[-1]))
    assert results[0] == results[1]


def test_fill_with_tensor_value_sends_the_summed_gradient():
    for lib in (gradiente, torch):
        x, v = lib.ones(2, 2, requires_grad=True), lib.tensor(3.0, requires_grad=True)
        y = (x * 1).fill_(v)
        (y * lib.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
        assert v.grad.item() == 10.0 and x.grad.tolist() == [[0.0, 0.0], [0.0, 0.0]]
        assert len(y.grad_fn.next_functions) == 2


@pytest.mark.parametrize("value", [1.5, 2, True])
def test_copy_from_a_python_number(value):
    """Issue 13, found by tools/random_programs.py: ``y.copy_(1.5)`` raised AttributeError; PyTorch reads the
    number as a 0-d tensor (into int64 targets too, truncated)."""
    for dtype in ("float32", "int64"):
        ours, theirs = (lib.zeros(2, 3, dtype=getattr(lib, dtype)).copy_(value) for lib in (gradiente, torch))
        assert ours.tolist() == theirs.tolist() and str(ours.dtype)[-5:] == str(theirs.dtype)[-5:]


def test_copy_from_a_string_is_torchs_type_error():
    check_same_error_first_line(lambda lib: lib.zeros(2).copy_("a"))


def test_changed_copy_result_is_named_as_pytorch_names_it():
    """Issue 13, found by tools/random_programs.py: PyTorch's version-check message names a copy_ result by its
    node's C++ name, ``torch::autograd::CopyBackwards`` (no ``Backward0`` to strip)."""
    def scenario(lib):
        x = lib.tensor(2.0, requires_grad=True)
        c = lib.zeros(())
        c.copy_(x * 1)
        z = c * x
        c.copy_(x * 3)
        z.backward()
    check_same_error_first_line(scenario)
    assert gradiente.zeros(()).copy_(gradiente.ones((), requires_grad=True)).grad_fn.name() == \
        torch.zeros(()).copy_(torch.ones((), requires_grad=True)).grad_fn.name()
