"""What hooks and custom Functions may hand back to the engine, the order hooks run in, and grad modes used as
decorators, each checked against real PyTorch: the same results, or the same exception type and message."""
import asyncio
import warnings

import numpy as np
import pytest
import torch as reference

import gradiente

LIBS = [reference, gradiente]
IDS = ["torch", "gradiente"]


def outcome(run):
    """``run``'s result as plain data, or the exception it raised as (type name, message)."""
    try:
        result = run()
    except Exception as error:      # the point is to compare what each library raises
        return type(error).__name__, str(error)
    if isinstance(result, (reference.Tensor, gradiente.Tensor)):
        return result.dtype.__repr__().split(".")[-1], result.detach().numpy().tolist()
    return result


def same_outcome(scenario):
    """Run ``scenario(lib)`` on both libraries; they must agree. Returns gradiente's outcome."""
    ours, theirs = (outcome(lambda lib=lib: scenario(lib)) for lib in (gradiente, reference))
    assert ours == theirs
    return ours


# --- a custom Function's backward: PyTorch's validate_outputs ----------------------------------------------

def _function_returning(lib, make_grad, input_shape=(3,), dtype="float32"):
    class Returns(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return make_grad(lib)

    x = lib.ones(input_shape, dtype=getattr(lib, dtype), requires_grad=True)
    Returns.apply(x).sum().backward()
    return x.grad


@pytest.mark.parametrize("grad_shape, input_shape", [((2,), (3,)), ((1,), (3,)), ((), (3,)), ((10,), (5, 5)),
                                                     ((3, 2), (2, 3))])
def test_function_gradient_of_a_wrong_shape_is_refused(grad_shape, input_shape):
    result = same_outcome(lambda lib: _function_returning(lib, lambda lib: lib.ones(grad_shape), input_shape))
    assert result == ("RuntimeError", f"Function ReturnsBackward returned an invalid gradient at index 0 - got "
                                      f"{list(grad_shape)} but expected shape compatible with {list(input_shape)}")


@pytest.mark.parametrize("grad_shape", [(2, 3), (4, 1, 3)])
def test_function_gradient_that_broadcasts_the_input_is_summed_down(grad_shape):
    def make(lib):
        return lib.arange(float(np.prod(grad_shape))).reshape(grad_shape)
    result = same_outcome(lambda lib: _function_returning(lib, make))
    assert result[0] == "float32" and len(result[1]) == 3


@pytest.mark.parametrize("grad_dtype", ["float64", "float16", "int64"])
def test_function_gradient_of_another_real_dtype_is_cast(grad_dtype):
    result = same_outcome(lambda lib: _function_returning(lib, lambda lib: lib.ones(3, dtype=getattr(lib, grad_dtype))))
    assert result == ("float32", [1.0, 1.0, 1.0])


def test_function_complex_gradient_for_a_real_input_is_refused():
    result = same_outcome(lambda lib: _function_returning(lib, lambda lib: lib.ones(3, dtype=lib.complex64)))
    assert result[0] == "RuntimeError" and "input_is_complex == grad_is_complex" in result[1]


# --- tensor hooks --------------------------------------------------------------------------------------------

def _named_hook(grad):
    return grad[:2]


class _HookWithoutName:
    def __call__(self, grad):
        return grad[:2]


REPLACEMENTS = {
    "shape": lambda lib: (lambda g: g[:2]),
    "broadcastable": lambda lib: (lambda g: g[:1]),
    "dtype": lambda lib: (lambda g: g.double()),
    "int": lambda lib: (lambda g: g.long()),
    "number": lambda lib: (lambda g: 3.0),
    "list": lambda lib: (lambda g: [1.0, 2.0, 3.0]),
    "named": lambda lib: _named_hook,
    "nameless": lambda lib: _HookWithoutName(),
    "fine": lambda lib: (lambda g: g * 10),
}


@pytest.mark.parametrize("on", ["leaf", "non-leaf"])
@pytest.mark.parametrize("kind", list(REPLACEMENTS))
def test_tensor_hook_replacement_must_keep_dtype_and_size(kind, on):
    def scenario(lib):
        x = lib.ones(3, requires_grad=True)
        y = x * 2
        (x if on == "leaf" else y).register_hook(REPLACEMENTS[kind](lib))
        y.sum().backward()
        return x.grad
    result = same_outcome(scenario)
    assert (result[0] == "float32") == (kind == "fine")


def test_tensor_hook_of_an_output_that_got_no_gradient_sees_none():
    def scenario(lib):
        seen = []
        x = lib.ones(3, requires_grad=True)
        parts = x.unbind()
        parts[0].register_hook(lambda g: seen.append(None if g is None else g.tolist()))
        parts[0].backward()
        parts[1].backward()
        return seen, x.grad.tolist()
    assert same_outcome(scenario) == ([1.0, None], [1.0, 1.0, 0.0])


def test_tensor_hook_may_not_replace_a_missing_gradient():
    def scenario(lib):
        x = lib.ones(3, requires_grad=True)
        parts = x.unbind()
        parts[0].register_hook(lambda g: lib.ones(()))
        parts[1].backward()
    assert same_outcome(scenario) == ("RuntimeError", "can't replace a None gradient with a non-None value")


# --- node hooks ------------------------------------------------------------------------------------------------

PRE_HOOK_RESULTS = {
    "tensor, not a tuple": lambda lib: lib.ones(3),
    "list": lambda lib: [lib.ones(3)],
    "too many": lambda lib: (lib.ones(3), lib.ones(3)),
    "shape": lambda lib: (lib.ones(2),),
    "dtype": lambda lib: (lib.ones(3, dtype=lib.float64),),
    "number": lambda lib: (3.0,),
    "fine": lambda lib: (lib.full((3,), 5.0),),
}


@pytest.mark.parametrize("kind", list(PRE_HOOK_RESULTS))
def test_node_pre_hook_result_is_checked(kind):
    def scenario(lib):
        x = lib.ones(3, requires_grad=True)
        y = x * 2
        y.grad_fn.register_prehook(lambda grads: PRE_HOOK_RESULTS[kind](lib))
        y.sum().backward()
        return x.grad
    result = same_outcome(scenario)
    assert (result == ("float32", [10.0] * 3)) == (kind == "fine")


POST_HOOK_RESULTS = {
    "one for two": lambda lib: (lib.ones(3),),
    "three for two": lambda lib: (lib.ones(3), None, None),
    "None replaced": lambda lib: (lib.ones(3), lib.ones(3)),
    "shape": lambda lib: (lib.ones(1), None),
    "dtype": lambda lib: (lib.ones(3, dtype=lib.float64), None),
    "fine": lambda lib: (lib.full((3,), 7.0), None),
}


@pytest.mark.parametrize("kind", list(POST_HOOK_RESULTS))
def test_node_post_hook_result_is_checked(kind):
    def scenario(lib):
        x = lib.ones(3, requires_grad=True)
        y = x * 2           # the number's gradient slot is None, as the hook sees it
        y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: POST_HOOK_RESULTS[kind](lib))
        y.sum().backward()
        return x.grad
    result = same_outcome(scenario)
    assert (result == ("float32", [7.0] * 3)) == (kind == "fine")


def test_node_post_hook_sees_none_for_an_input_that_needs_no_gradient():
    def scenario(lib):
        seen = []
        x = lib.ones(3, requires_grad=True)
        y = x * lib.ones(3)
        y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: seen.append([g is None for g in grad_inputs]))
        y.sum().backward()
        return seen
    assert same_outcome(scenario) == [[False, True]]


def test_post_accumulate_grad_hook_must_return_none():
    def scenario(lib):
        x = lib.ones(2, requires_grad=True)
        x.register_post_accumulate_grad_hook(lambda t: t.grad)
        x.sum().backward()
    assert same_outcome(scenario) == ("RuntimeError", "Tensor post accumulate grad hooks should return None.")


def test_second_backward_through_freed_saved_values_raises():
    def scenario(lib):
        x = lib.ones(2, requires_grad=True)
        y = (x * x).sum()
        y.backward()
        y.backward()
    result = same_outcome(scenario)
    assert result[0] == "RuntimeError" and result[1].startswith("Trying to backward through the graph a second time")


# --- the order hooks run in ------------------------------------------------------------------------------------

def _logged_hooks(lib):
    """a -> b = a.clone(), with tensor hooks (1, multiply by 3) and node pre-hooks (2, multiply by 2) on both."""
    log = []

    def tensor_hook(g):
        log.append(1)
        return g * 3

    def node_pre_hook(grads):
        log.append(2)
        return tuple(g * 2 for g in grads)

    a = lib.tensor(1.0, requires_grad=True)
    b = a.clone()
    b.grad_fn.register_prehook(node_pre_hook)
    b.register_hook(tensor_hook)
    b.grad_fn.register_prehook(node_pre_hook)
    accumulate = b.grad_fn.next_functions[0][0]
    a.register_hook(tensor_hook)
    accumulate.register_prehook(node_pre_hook)
    a.register_hook(tensor_hook)
    return log, a, b


def test_tensor_hooks_run_before_node_pre_hooks():
    def scenario(lib):
        log, a, b = _logged_hooks(lib)
        b.sum().backward()
        return log, a.grad.item()
    assert same_outcome(scenario) == ([1, 2, 2, 1, 1, 2], 3 * 4 * 9 * 2)


def test_grad_runs_tensor_hooks_of_a_captured_leaf_but_not_its_node_hooks():
    def scenario(lib):
        log, a, b = _logged_hooks(lib)
        (ga,) = lib.autograd.grad(b.sum(), inputs=(a,))
        return log, ga.item(), a.grad
    assert same_outcome(scenario) == ([1, 2, 2, 1, 1], 3 * 4 * 9, None)


def test_backward_with_a_non_leaf_input_runs_its_node_and_retains_its_grad():
    def scenario(lib):
        log, a, b = _logged_hooks(lib)
        b.sum().backward(inputs=(b,))
        return log, b.grad.item(), b.retains_grad, a.grad
    # retain_grad sees the tensor hooks' work, not the node pre-hooks' (they come after it)
    assert same_outcome(scenario) == ([1, 2, 2], 3.0, True, None)


def test_backward_with_a_leaf_input_runs_its_post_accumulate_hooks():
    def scenario(lib):
        seen = []
        x = lib.ones(2, requires_grad=True)
        w = lib.ones(2, requires_grad=True)
        x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
        (x * w * 3).sum().backward(inputs=(x,))
        return seen, w.grad
    assert same_outcome(scenario) == ([[3.0, 3.0]], None)


def test_grad_counts_hooks_as_pytorch_does():
    def scenario(lib):
        counts = {"tensor": 0, "pre": 0, "post": 0}

        def count(kind):
            def hook(*args):
                counts[kind] += 1
            return hook

        a = lib.tensor(1.0, requires_grad=True)
        b = a * 2
        c = b * 2
        a.register_hook(count("tensor"))
        b.register_hook(count("tensor"))
        accumulate = b.grad_fn.next_functions[0][0]
        for node in (accumulate, b.grad_fn):
            node.register_hook(count("post"))
            node.register_prehook(count("pre"))
        runs = []
        for call in (lambda: lib.autograd.grad(c, inputs=(b,), retain_graph=True),
                     lambda: lib.autograd.grad(c, inputs=(a, b), retain_graph=True),
                     lambda: c.backward(retain_graph=True)):
            call()
            runs.append(dict(counts))
            counts.update(tensor=0, pre=0, post=0)
        return runs
    assert same_outcome(scenario) == [{"tensor": 1, "pre": 0, "post": 0}, {"tensor": 2, "pre": 1, "post": 1},
                                      {"tensor": 2, "pre": 2, "post": 2}]


# --- grad modes as decorators ------------------------------------------------------------------------------------

@pytest.mark.parametrize("lib", LIBS, ids=IDS)
@pytest.mark.parametrize("mode, inside", [("no_grad", False), ("enable_grad", True)])
def test_decorated_generator_has_the_mode_only_in_its_own_steps(lib, mode, inside):
    seen_inside, seen_outside = [], []

    @getattr(lib, mode)()
    def generator():
        received = None
        for i in range(3):
            seen_inside.append(lib.is_grad_enabled())
            received = yield (i, received)
        seen_inside.append(lib.is_grad_enabled())
        return "done"

    with lib.set_grad_enabled(not inside):
        steps = generator()
        first = next(steps)
        seen_outside.append(lib.is_grad_enabled())
        second = steps.send("hello")
        seen_outside.append(lib.is_grad_enabled())
        third = next(steps)
        with pytest.raises(StopIteration) as stop:
            next(steps)
    assert (first, second, third) == ((0, None), (1, "hello"), (2, None))
    assert stop.value.value == "done"
    assert seen_inside == [inside] * 4
    assert seen_outside == [not inside] * 2


@pytest.mark.parametrize("lib", LIBS, ids=IDS)
def test_decorated_generator_handles_thrown_exceptions_and_close_in_its_mode(lib):
    events = []

    class Recoverable(Exception):
        pass

    @lib.no_grad()
    def generator():
        while True:
            try:
                yield lib.is_grad_enabled()
            except Recoverable:
                events.append(("recovered", lib.is_grad_enabled()))
            except GeneratorExit:
                events.append(("closed", lib.is_grad_enabled()))
                raise

    with lib.enable_grad():
        steps = generator()
        assert next(steps) is False
        assert steps.throw(Recoverable) is False
        assert lib.is_grad_enabled()
        steps.close()
        assert lib.is_grad_enabled()
    assert events == [("recovered", False), ("closed", False)]


@pytest.mark.parametrize("lib", LIBS, ids=IDS)
def test_error_escaping_a_decorated_generator_leaves_the_callers_mode(lib):
    class Fatal(Exception):
        pass

    @lib.no_grad()
    def generator():
        try:
            yield 1
        except Fatal:
            raise ValueError("escaped") from None

    with lib.enable_grad():
        steps = generator()
        next(steps)
        with pytest.raises(ValueError, match="escaped"):
            steps.throw(Fatal)
        assert lib.is_grad_enabled()


def test_decorated_async_function_has_the_mode_only_while_its_coroutine_is_made():
    def scenario(lib):
        @lib.no_grad()
        async def coroutine():
            return lib.is_grad_enabled()
        with lib.enable_grad():
            return asyncio.run(coroutine())
    assert same_outcome(scenario) is True


def test_decorating_a_class_warns_and_wraps_its_constructor():
    def scenario(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")

            @lib.no_grad()
            class Made:
                def __init__(self):
                    self.grad_enabled = lib.is_grad_enabled()
        return [w.category.__name__ for w in caught], Made().grad_enabled, isinstance(Made, type)
    assert same_outcome(scenario) == (["FutureWarning"], False, False)


def test_set_multithreading_enabled_is_a_per_thread_switch_and_context_manager():
    import threading

    def scenario(lib):
        autograd = lib.autograd
        states = [autograd.is_multithreading_enabled()]
        with autograd.set_multithreading_enabled(False):
            states.append(autograd.is_multithreading_enabled())
            other = []
            thread = threading.Thread(target=lambda: other.append(autograd.is_multithreading_enabled()))
            thread.start()
            thread.join()
            states += other
        states.append(autograd.is_multithreading_enabled())
        autograd.set_multithreading_enabled(False)
        states.append(autograd.is_multithreading_enabled())
        autograd.set_multithreading_enabled(True)
        x = lib.ones(2, requires_grad=True)
        with autograd.set_multithreading_enabled(False):
            (x * 3).sum().backward()
        return states, x.grad.tolist()
    assert same_outcome(scenario) == ([True, False, True, True, False], [3.0, 3.0])
