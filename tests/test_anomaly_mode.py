"""Anomaly mode (``torch.autograd.detect_anomaly``), against real PyTorch: the switches and their warning, the
forward traceback shown when a node's backward fails (also for nodes made by another node's backward), the NaN
check and its message, and the in-place error's hint leading to it."""
import re
import threading
import warnings
import weakref

import numpy as np
import pytest
import torch as reference

import gradiente

LIBS = [reference, gradiente]


def _anomaly_warnings(caught):
    """The texts of the caught warnings that anomaly mode itself gave (not NumPy's floating-point ones)."""
    return [str(w.message) for w in caught if w.category is UserWarning]


def _headers(messages):
    """Each warning's first non-empty line: what the warning is about, without the traceback's frames."""
    return [next(line for line in m.splitlines() if line.strip()) for m in messages]


@pytest.fixture(autouse=True)
def _mode_off_after():
    yield
    for lib in LIBS:
        lib.set_anomaly_enabled(False)


@pytest.mark.parametrize("lib", LIBS, ids=["torch", "gradiente"])
def test_detect_anomaly_switches_the_mode_on_inside_and_warns_once_made(lib):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        manager = lib.autograd.detect_anomaly(check_nan=False)
    assert [str(w.message) for w in caught] == [
        "Anomaly Detection has been enabled. This mode will increase the runtime and should only be enabled for "
        "debugging."]
    assert caught[0].filename == __file__       # it points at the caller's line
    assert not lib.is_anomaly_enabled()
    with manager:
        assert lib.is_anomaly_enabled()
        assert not lib.is_anomaly_check_nan_enabled()
    assert not lib.is_anomaly_enabled()
    assert lib.is_anomaly_check_nan_enabled()


@pytest.mark.parametrize("lib", LIBS, ids=["torch", "gradiente"])
def test_set_detect_anomaly_acts_when_called_and_restores_as_a_context(lib):
    lib.autograd.set_detect_anomaly(True)
    assert lib.is_anomaly_enabled()
    with lib.autograd.set_detect_anomaly(False):
        assert not lib.is_anomaly_enabled()
    assert lib.is_anomaly_enabled()
    with lib.autograd.set_detect_anomaly(True, check_nan=False):
        assert not lib.is_anomaly_check_nan_enabled()
    assert lib.is_anomaly_check_nan_enabled()


def test_neither_switch_is_a_decorator_as_in_pytorch():
    messages = []
    for lib in LIBS:
        for make in (lambda lib=lib: lib.autograd.set_detect_anomaly(False), lib.autograd.detect_anomaly):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                manager = make()
            with pytest.raises(TypeError) as info:
                manager(lambda: None)
            messages.append(str(info.value))
    assert messages[:2] == messages[2:]


def _in_place_error(lib):
    a = lib.randn(5, requires_grad=True)
    d1 = a + 1
    d2 = d1 ** 2  # the line the traceback must show
    d1 += 1
    lib.autograd.grad(d2.sum(), a)


def test_failing_node_warns_with_the_forward_line_that_made_it():
    for lib in LIBS:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(RuntimeError) as info, lib.autograd.detect_anomaly():
                _in_place_error(lib)
        messages = _anomaly_warnings(caught)
        assert len(messages) == 2
        assert messages[1].startswith(
            "Error detected in PowBackward0. Traceback of forward call that caused the error:\n")
        assert "d2 = d1 ** 2  # the line the traceback must show" in messages[1]
        assert f'File "{__file__}"' in messages[1]
        pytorch_message, _, lines = str(info.value).partition("\n")
        assert pytorch_message.endswith(
            "Hint: the backtrace further above shows the operation that failed to compute its gradient. The "
            "variable in question was changed in there or anywhere later. Good luck!")
        if lib is gradiente:    # in anomaly mode gradiente adds the line that saved the value and where it changed
            assert "by PowBackward0" in lines and "d2 = d1 ** 2" in lines
            assert "in place by add_ (version 0 → 1):  d1 += 1" in lines
        else:
            assert lines == ""


def test_in_place_hint_leads_to_the_traceback():
    # outside the mode the error's hint names the switch; following it shows where the failing op was made
    with pytest.raises(RuntimeError, match=re.escape("with torch.autograd.set_detect_anomaly(True, check_nan=False)")):
        _in_place_error(gradiente)
    gradiente.autograd.set_detect_anomaly(True, check_nan=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="Good luck!"):
            _in_place_error(gradiente)
    (message,) = _anomaly_warnings(caught)
    assert "d2 = d1 ** 2" in message


def test_a_warning_turned_error_is_printed_and_the_real_error_raised(capsys):
    for lib in LIBS:
        with warnings.catch_warnings(record=True), lib.autograd.detect_anomaly():
            warnings.simplefilter("error")
            with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                _in_place_error(lib)
        assert "Error detected in PowBackward0" in capsys.readouterr().err


def _nan_outcome(lib, make_graph, check_nan=True):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with lib.autograd.detect_anomaly(check_nan=check_nan):
            try:
                make_graph(lib).backward()
            except RuntimeError as error:
                return str(error), _headers(_anomaly_warnings(caught))[1:]
    return None, _headers(_anomaly_warnings(caught))[1:]


def _sqrt_at_zero(lib):
    return (lib.tensor([0.0, 1.0], requires_grad=True).sqrt() * lib.tensor([0.0, 1.0])).sum()


def _pow_at_zero(lib):
    return (lib.tensor([0.0], requires_grad=True).pow(0.5) * 0).sum()


@pytest.mark.parametrize("make_graph", [_sqrt_at_zero, _pow_at_zero])
def test_nan_gradient_of_a_built_in_op_raises_pytorch_message(make_graph):
    ours, theirs = (_nan_outcome(lib, make_graph) for lib in (gradiente, reference))
    assert ours == theirs
    assert re.fullmatch(r"Function '\w+Backward0' returned nan values in its 0th output\.", ours[0])


def test_nan_check_off_lets_the_nan_through():
    for lib in LIBS:
        assert _nan_outcome(lib, _sqrt_at_zero, check_nan=False) == (None, [])


def _function_returning_nan(lib, index):
    class NanAt(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x + y

        @staticmethod
        def backward(ctx, grad):
            bad = grad * lib.tensor(float("nan"))
            return (bad, grad) if index == 0 else (grad, bad)
    return NanAt


@pytest.mark.parametrize("index", [0, 1])
def test_nan_index_is_the_input_position_of_a_custom_function(index):
    def graph(lib):
        fn = _function_returning_nan(lib, index)
        return fn.apply(lib.ones(3, requires_grad=True), lib.ones(3, requires_grad=True)).sum()
    ours, theirs = (_nan_outcome(lib, graph) for lib in (gradiente, reference))
    assert ours == theirs == (f"Function 'NanAtBackward' returned nan values in its {index}th output.",
                              ["Error detected in NanAtBackward. Traceback of forward call that caused the error:"])


def test_node_made_before_the_mode_has_no_forward_information():
    results = []
    for lib in LIBS:
        out = _sqrt_at_zero(lib)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(RuntimeError, match="returned nan values"), lib.autograd.detect_anomaly():
                out.backward()
        results.append(_anomaly_warnings(caught)[1].split(" (Triggered internally")[0])
    assert results[0] == results[1] == (
        "Error detected in SqrtBackward0. No forward pass information available. Enable detect anomaly during "
        "forward pass for more information.")


def _double_backward_through_functions(lib):
    """A Function whose backward applies a second one that gives NaN in its own backward: the failing node was
    made by the first one's backward, under create_graph."""
    class Outer(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sum(0, keepdim=True)

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return Inner.apply(grad.expand(3) * x)

    class Inner(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2.0

        @staticmethod
        def backward(ctx, grad):
            return grad * lib.tensor(float("nan"))

    x = lib.rand(3, requires_grad=True)
    out = Outer.apply(x)
    (gx,) = lib.autograd.grad(out, (x,), create_graph=True)
    return gx.sum()


def test_node_made_by_another_nodes_backward_shows_both_tracebacks():
    for lib in LIBS:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            nan_error = re.escape("Function 'InnerBackward' returned nan values in its 0th output.")
            with pytest.raises(RuntimeError, match=nan_error), lib.autograd.detect_anomaly():
                _double_backward_through_functions(lib).backward()
        messages = _anomaly_warnings(caught)[1:]
        assert _headers(messages) == [
            "Error detected in InnerBackward. Traceback of forward call that caused the error:",
            "Previous calculation was induced by OuterBackward. Traceback of forward call that induced the previous "
            "calculation:"]
        assert "return Inner.apply(grad.expand(3) * x)" in messages[0]
        assert messages[1].startswith("\n\n")
        assert "out = Outer.apply(x)" in messages[1]


def test_failure_inside_a_backward_called_from_a_backward_is_reported_at_both_levels():
    def run(lib):
        class Reentrant(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x.clone()

            @staticmethod
            def backward(ctx, grad):
                (x,) = ctx.saved_tensors
                with lib.enable_grad():
                    inner = x.detach().requires_grad_()
                    (inner.sqrt() * 0).sum().backward()
                return grad * inner.grad

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(RuntimeError) as info, lib.autograd.detect_anomaly():
                Reentrant.apply(lib.zeros(2, requires_grad=True)).sum().backward()
        return str(info.value), _headers(_anomaly_warnings(caught)[1:])
    ours, theirs = run(gradiente), run(reference)
    assert ours == theirs
    assert len(ours[1]) == 3


def test_metadata_holds_the_traceback_and_parent_without_keeping_nodes_alive():
    def make():
        x = gradiente.randn(2, 2, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with gradiente.autograd.detect_anomaly():
                t = x.exp()
                (g,) = gradiente.autograd.grad(t, x, gradiente.ones_like(t), create_graph=True)
        assert "t = x.exp()" in "".join(t.grad_fn.metadata["traceback_"])
        assert g.grad_fn.metadata["parent_"] is t.grad_fn      # made by ExpBackward0's rule

        class Token:
            pass
        token = Token()
        t.grad_fn.metadata["token"] = token
        return t, weakref.ref(token)

    t, ref = make()
    assert ref() is not None
    del t
    assert ref() is None


def test_mode_off_records_nothing():
    x = gradiente.ones(2, requires_grad=True)
    assert gradiente.is_anomaly_enabled() is False
    assert (x * 2).grad_fn.metadata == {}


def test_mode_is_global_not_per_thread():
    seen = []
    for lib in LIBS:
        lib.autograd.set_detect_anomaly(True)
        thread = threading.Thread(target=lambda lib=lib: seen.append(lib.is_anomaly_enabled()))
        thread.start()
        thread.join()
    assert seen == [True, True]


def test_gradients_unchanged_in_anomaly_mode():
    x = gradiente.tensor(np.linspace(0.1, 1.0, 6).reshape(2, 3), requires_grad=True)
    (x.exp() * x.log()).sum().backward()
    plain = x.grad.numpy().copy()
    x.grad = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with gradiente.autograd.detect_anomaly():
            (x.exp() * x.log()).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), plain)
