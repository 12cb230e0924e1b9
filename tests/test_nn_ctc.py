"""The CTC loss (``F.ctc_loss``, ``torch.ctc_loss``, ``nn.CTCLoss``) against PyTorch: values and gradients for every
reduction, ``zero_infinity``, padded and concatenated targets, lengths as tensors and as tuples, unbatched input,
infinite losses, node names, float64 gradcheck (through ``log_softmax``, where PyTorch's gradient formula is the true
one), the missing second derivative, and the error messages."""
import numpy as np
import pytest
from harness import OpSpec, check_same_error, spec_tests

import gradiente

torch = pytest.importorskip("torch")

T, N, C = 7, 4, 5
PADDED = [[2, 2, 3], [1, 4, 0], [3, 0, 0], [0, 0, 0]]
INPUT_LENGTHS, TARGET_LENGTHS = [7, 6, 5, 3], [3, 2, 1, 0]


def F(lib):
    return lib.nn.functional


def _ctc(reduction="mean", zero_infinity=False, normalise=True, lengths=tuple):
    """The loss of x (T, N, C) as an op: through log_softmax (the usual call, and the one where PyTorch's gradient
    is the gradient) or on x itself."""
    def fn(lib, x):
        lp = x.log_softmax(2) if normalise else x
        il, tl = (lib.tensor(INPUT_LENGTHS), lib.tensor(TARGET_LENGTHS)) if lengths is not tuple else (
            tuple(INPUT_LENGTHS), tuple(TARGET_LENGTHS))
        return F(lib).ctc_loss(lp, lib.tensor(PADDED), il, tl, reduction=reduction, zero_infinity=zero_infinity)
    return fn


_NO_SECOND = {"xfail": {"gradgradcheck": "PyTorch defines no derivative of _ctc_loss_backward"}}
SPECS = [
    OpSpec(f"ctc_loss_{reduction}", _ctc(reduction), [((T, N, C),)], extra=_NO_SECOND)
    for reduction in ("none", "mean", "sum")
] + [
    OpSpec("ctc_loss_zero_infinity", _ctc("sum", True, lengths=list), [((T, N, C),)], extra=_NO_SECOND),
    # on log probabilities as given: PyTorch's gradient is not the true one there (exp(lp) more), so only the
    # comparison with PyTorch runs
    OpSpec("ctc_loss_raw_log_probs", _ctc("none", normalise=False), [((T, N, C),)], domain=(-3.0, -0.1),
           gradcheck=False),
]

test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


def _both(call, x, grad_seed=1):
    """``call(lib, lp)`` in both libraries on lp = log_softmax(x) as a leaf: (loss, gradient) pairs after a
    backward with a non-trivial upstream gradient."""
    results = []
    for lib in (gradiente, torch):
        lp = lib.tensor(x).log_softmax(-1).detach().requires_grad_()
        out = call(lib, lp)
        up = np.random.RandomState(grad_seed).uniform(0.5, 1.5, tuple(out.shape))
        out.backward(lib.tensor(up))
        results.append((out, lp.grad))
    return results


def _assert_same(results):
    (ours, our_grad), (theirs, their_grad) = results
    assert ours.dtype == getattr(gradiente, str(theirs.dtype).split(".")[-1])
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-6, atol=1e-12)
    np.testing.assert_array_equal(np.isnan(our_grad.numpy()), np.isnan(their_grad.numpy()))
    np.testing.assert_allclose(our_grad.numpy(), their_grad.numpy(), rtol=1e-6, atol=1e-9)


X = np.random.RandomState(0).randn(T, N, C)
CONCATENATED = [2, 2, 3, 1, 4, 3]


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("zero_infinity", [False, True])
@pytest.mark.parametrize("form", ["padded_tensors", "padded_tuples", "concatenated", "int32"])
def test_values_and_gradients_match_torch(reduction, zero_infinity, form):
    def call(lib, lp):
        targets = lib.tensor(CONCATENATED if form == "concatenated" else PADDED,
                             dtype=lib.int32 if form == "int32" else lib.int64)
        if form in ("padded_tuples", "concatenated"):
            il, tl = tuple(INPUT_LENGTHS), tuple(TARGET_LENGTHS)
        else:
            dtype = lib.int32 if form == "int32" else lib.int64
            il, tl = lib.tensor(INPUT_LENGTHS, dtype=dtype), lib.tensor(TARGET_LENGTHS, dtype=dtype)
        return F(lib).ctc_loss(lp, targets, il, tl, blank=0, reduction=reduction, zero_infinity=zero_infinity)
    _assert_same(_both(call, X))


@pytest.mark.parametrize("zero_infinity", [False, True])
def test_infinite_losses_and_their_gradients_match_torch(zero_infinity):
    # repeated labels need a blank between them: 3 frames cannot hold [1, 1, 1]; no frames cannot hold a label
    targets, il, tl = [[1, 1, 1], [1, 2, 1], [2, 2, 2], [1, 2, 3]], (3, 0, 5, 7), (3, 3, 3, 3)

    def call(lib, lp):
        return F(lib).ctc_loss(lp, lib.tensor(targets), il, tl, reduction="none", zero_infinity=zero_infinity)
    results = _both(call, X)
    assert np.isinf(results[1][0].detach().numpy()).sum() == (0 if zero_infinity else 2)
    _assert_same(results)


def test_blank_elsewhere_empty_targets_and_zero_lengths_match_torch():
    def call(lib, lp):
        return F(lib).ctc_loss(lp, lib.tensor([[0, 1, 3], [2, 0, 0], [1, 1, 1], [3, 3, 0]]), (7, 0, 0, 6),
                               (3, 1, 0, 2), blank=4, reduction="none")
    _assert_same(_both(call, X))


@pytest.mark.parametrize("reduction", ["none", "mean"])
@pytest.mark.parametrize("lengths", ["tensors", "tuples"])
def test_unbatched_input_matches_torch(reduction, lengths):
    def call(lib, lp):
        il, tl = (lib.tensor(6), lib.tensor(2)) if lengths == "tensors" else ((6,), (2,))
        return F(lib).ctc_loss(lp, lib.tensor([3, 1]), il, tl, reduction=reduction)
    _assert_same(_both(call, X[:, 0]))


def test_float32_matches_torch():
    results = []
    for lib in (gradiente, torch):
        lp = lib.tensor(X, dtype=lib.float32).log_softmax(2).detach().requires_grad_()
        out = F(lib).ctc_loss(lp, lib.tensor(PADDED), INPUT_LENGTHS, TARGET_LENGTHS)
        out.backward()
        results.append((out, lp.grad))
    assert results[0][0].dtype == gradiente.float32 and results[0][1].dtype == gradiente.float32
    np.testing.assert_allclose(results[0][0].detach().numpy(), results[1][0].detach().numpy(), rtol=1e-5)
    np.testing.assert_allclose(results[0][1].numpy(), results[1][1].numpy(), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_top_level_ctc_loss_takes_the_reduction_code(reduction):
    def call(lib, lp):
        return lib.ctc_loss(lp, lib.tensor(PADDED), INPUT_LENGTHS, TARGET_LENGTHS, 0, reduction, False)
    _assert_same(_both(call, X))


@pytest.mark.parametrize("kwargs", [{}, {"blank": 2, "reduction": "sum", "zero_infinity": True}])
def test_module_matches_torch(kwargs):
    modules = [lib.nn.CTCLoss(**kwargs) for lib in (gradiente, torch)]
    assert repr(modules[0]) == repr(modules[1])
    assert modules[0].blank == modules[1].blank and modules[0].zero_infinity == modules[1].zero_infinity
    assert modules[0].reduction == modules[1].reduction
    assert list(modules[0].state_dict()) == list(modules[1].state_dict()) == []

    def call(lib, lp):
        module = modules[0] if lib is gradiente else modules[1]
        return module(lp, lib.tensor([[1, 3, 1], [4, 4, 0], [3, 0, 0], [1, 0, 0]]), lib.tensor(INPUT_LENGTHS),
                      lib.tensor([3, 2, 1, 1]))
    _assert_same(_both(call, X))


def test_second_derivative_raises_as_in_torch():
    messages = []
    for lib in (gradiente, torch):
        lp = lib.tensor(X).log_softmax(2).detach().requires_grad_()
        loss = F(lib).ctc_loss(lp, lib.tensor(PADDED), INPUT_LENGTHS, TARGET_LENGTHS)
        (grad,) = lib.autograd.grad(loss, lp, create_graph=True)
        assert grad.grad_fn.name() == "torch::autograd::NotImplemented"
        with pytest.raises(RuntimeError) as error:
            grad.sum().backward()
        messages.append(str(error.value))
    assert messages[0] == messages[1]


def _lp(lib, dtype=None):
    return lib.tensor(X, dtype=dtype or lib.float64).log_softmax(2)


@pytest.mark.parametrize("call", [
    lambda lib: F(lib).ctc_loss(_lp(lib), lib.tensor(PADDED), lib.tensor([7.0, 6, 5, 3]), lib.tensor(TARGET_LENGTHS)),
    lambda lib: F(lib).ctc_loss(_lp(lib), lib.tensor(PADDED), lib.tensor(INPUT_LENGTHS), lib.tensor([3.0, 2, 1, 0])),
    lambda lib: F(lib).ctc_loss(_lp(lib), lib.tensor(PADDED), INPUT_LENGTHS, TARGET_LENGTHS, blank=5),
    lambda lib: F(lib).ctc_loss(_lp(lib), lib.tensor(PADDED), INPUT_LENGTHS, TARGET_LENGTHS, blank=-1),
    lambda lib: F(lib).ctc_loss(_lp(lib), lib.tensor(PADDED), (7, 6, 5), TARGET_LENGTHS),
    lambda lib: F(lib).ctc_loss(_lp(lib), lib.tensor(PADDED), INPUT_LENGTHS, (3, 2, 1)),
    lambda lib: F(lib).ctc_loss(_lp(lib), lib.tensor(PADDED), (8, 6, 5, 3), TARGET_LENGTHS),
    lambda lib: F(lib).ctc_loss(_lp(lib), lib.tensor(PADDED), (-1, 6, 5, 3), TARGET_LENGTHS),
    lambda lib: F(lib).ctc_loss(_lp(lib), lib.tensor(PADDED), INPUT_LENGTHS, (4, 2, 1, 0)),
    lambda lib: F(lib).ctc_loss(_lp(lib), lib.tensor(PADDED), INPUT_LENGTHS, (-1, 2, 1, 0)),
    lambda lib: F(lib).ctc_loss(_lp(lib), lib.tensor(PADDED[:3]), INPUT_LENGTHS, TARGET_LENGTHS),
    lambda lib: F(lib).ctc_loss(_lp(lib), lib.tensor(CONCATENATED[:5]), INPUT_LENGTHS, TARGET_LENGTHS),
    lambda lib: F(lib).ctc_loss(_lp(lib), lib.tensor([PADDED]), INPUT_LENGTHS, TARGET_LENGTHS),
    lambda lib: F(lib).ctc_loss(_lp(lib).long(), lib.tensor(PADDED), INPUT_LENGTHS, TARGET_LENGTHS),
    lambda lib: F(lib).ctc_loss(_lp(lib, lib.float16), lib.tensor(PADDED), INPUT_LENGTHS, TARGET_LENGTHS),
    lambda lib: F(lib).ctc_loss(_lp(lib)[None], lib.tensor(PADDED), INPUT_LENGTHS, TARGET_LENGTHS),
    lambda lib: F(lib).ctc_loss(_lp(lib), lib.tensor(PADDED), INPUT_LENGTHS, TARGET_LENGTHS, reduction="average"),
], ids=["float_input_lengths", "float_target_lengths", "blank_too_big", "blank_negative", "input_lengths_size",
        "target_lengths_size", "input_length_too_long", "input_length_negative", "target_length_too_long",
        "target_length_negative", "too_few_target_rows", "concatenated_too_short", "targets_3d", "integer_input",
        "half_input", "input_4d", "bad_reduction"])
def test_errors_match_torch(call):
    check_same_error(call)


def test_mixed_length_kinds_raise_type_error_as_in_torch():
    for lib in (gradiente, torch):
        with pytest.raises(TypeError, match="ctc_loss\\(\\) received an invalid combination of arguments"):
            F(lib).ctc_loss(_lp(lib), lib.tensor(PADDED), lib.tensor(INPUT_LENGTHS), tuple(TARGET_LENGTHS))
