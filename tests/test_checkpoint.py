"""``utils.checkpoint``: both implementations give the gradients of the plain computation, recompute as often
as PyTorch does, restore the generator for random ops, and raise PyTorch's warnings and errors."""
import gc
import warnings
import weakref

import numpy as np
import pytest
import torch as ref

import gradiente as torch


def ck(lib):
    return lib.utils.checkpoint


def block(lib, x, w):
    """A small layer with a saved intermediate of each kind: inputs, results, a number."""
    return (x @ w).tanh().exp() * 0.5


def inputs(lib):
    x = lib.tensor(np.linspace(-1, 1, 12).reshape(3, 4), dtype=lib.float64, requires_grad=True)
    w = lib.tensor(np.linspace(0.5, -0.5, 8).reshape(4, 2), dtype=lib.float64, requires_grad=True)
    return x, w


@pytest.mark.parametrize("reentrant", [False, True])
def test_gradients_equal_those_without_checkpoint_and_pytorchs(reentrant):
    def run(lib, checkpointed):
        x, w = inputs(lib)
        fn = (lambda a, b: ck(lib).checkpoint(block, lib, a, b, use_reentrant=reentrant)) if checkpointed \
            else (lambda a, b: block(lib, a, b))
        fn(x, w).sum().backward()
        return x.grad.numpy(), w.grad.numpy()
    plain = run(torch, False)
    for ours, theirs in zip(run(torch, True), run(ref, True)):
        np.testing.assert_allclose(ours, theirs)
    for ours, expected in zip(run(torch, True), plain):
        np.testing.assert_allclose(ours, expected)


@pytest.mark.parametrize("reentrant", [False, True])
def test_the_function_runs_again_in_backward_only(reentrant):
    def run(lib):
        calls = [0]

        def fn(a):
            calls[0] += 1
            return a.sin().exp()
        x, _ = inputs(lib)
        y = ck(lib).checkpoint(fn, x, use_reentrant=reentrant)
        after_forward = calls[0]
        y.sum().backward()
        return after_forward, calls[0]
    assert run(torch) == run(ref) == (1, 2)


def test_reading_a_saved_value_recomputes_each_time_until_backward_frees_it():
    def run(lib):
        calls = [0]

        def fn(a):
            calls[0] += 1
            return (a * a).exp()
        y = ck(lib).checkpoint(fn, inputs(lib)[0], use_reentrant=False)
        for _ in range(2):
            assert y.grad_fn._saved_result.shape == y.shape
        y.sum().backward()
        with pytest.raises(RuntimeError, match="after they have already been freed"):
            print(y.grad_fn._saved_result)
        return calls[0]
    assert run(torch) == run(ref) == 4


@pytest.mark.parametrize("reentrant", [False, True])
def test_dropout_recomputes_with_the_same_random_numbers(reentrant):
    x = torch.ones(200, requires_grad=True)
    torch.manual_seed(0)
    y = torch.utils.checkpoint.checkpoint(lambda a: torch.nn.functional.dropout(a, 0.5), x,
                                          use_reentrant=reentrant)
    y.sum().backward()
    kept = (y != 0).float() * 2
    assert torch.equal(x.grad, kept)


def test_checkpoint_sequential_matches_the_plain_model_and_pytorch():
    def run(lib, segments):
        lib.manual_seed(3)
        model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Linear(8, 8), lib.nn.ReLU(),
                                  lib.nn.Linear(8, 2))
        for p in model.parameters():
            p.data = lib.tensor(np.linspace(-0.3, 0.3, p.numel()).reshape(tuple(p.shape)), dtype=lib.float32)
        x = lib.tensor(np.linspace(-1, 1, 12).reshape(3, 4), dtype=lib.float32, requires_grad=True)
        out = ck(lib).checkpoint_sequential(model, segments, x, use_reentrant=False) if segments else model(x)
        out.sum().backward()
        return [x.grad.numpy()] + [p.grad.numpy() for p in model.parameters()]
    for ours, plain, theirs in zip(run(torch, 2), run(torch, 0), run(ref, 2)):
        np.testing.assert_allclose(ours, plain, rtol=1e-6)
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-7)


def test_nested_checkpoints_and_grad_inside_match():
    def run(lib):
        def c(fn):
            return lambda *a: ck(lib).checkpoint(fn, *a, use_reentrant=False)

        def f(a):
            return a.sin().exp().sin()
        x = lib.tensor([0.3, -0.7], dtype=lib.float64, requires_grad=True)
        y = c(lambda a: c(f)(a) * a)(x)
        g, = lib.autograd.grad(y.sum(), x, create_graph=True)
        g.sum().backward()
        return g.detach().numpy(), x.grad.numpy()
    for ours, theirs in zip(run(torch), run(ref)):
        np.testing.assert_allclose(ours, theirs)


def _grad_of(lib, fn):
    def wrapper(x):
        with lib.enable_grad():
            g, = lib.autograd.grad(fn(x), inputs=(x,), create_graph=True)
        return g
    return wrapper


@pytest.mark.parametrize("early_stop", [True, False])
def test_grad_inside_a_checkpoint_with_and_without_early_stop(early_stop):
    # without early stop, the backward inside the checkpointed function recomputes while the forward is still
    # running, and that recomputation saves more than the forward has so far: allowed, as in PyTorch
    def run(lib):
        def c(fn):
            return lambda *a: ck(lib).checkpoint(fn, *a, use_reentrant=False)

        def f(a):
            return a.sin().exp().sin()
        x = lib.tensor(0.3, dtype=lib.float64, requires_grad=True)
        with ck(lib).set_checkpoint_early_stop(early_stop):
            return [_grad_of(lib, c(_grad_of(lib, f)))(x).item(),
                    _grad_of(lib, c(_grad_of(lib, c(f))))(x).item()]
    np.testing.assert_allclose(run(torch), run(ref))


def test_a_checkpointed_graph_is_freed_without_the_garbage_collector():
    # a detached tensor (what the checkpoint's recomputation keeps) must not hold the graph it came from
    def c(fn):
        return lambda *a: torch.utils.checkpoint.checkpoint(fn, *a, use_reentrant=False)

    def f(a):
        return a.sin().exp().sin()

    class Tag:
        pass

    def scope():
        a = torch.randn((), requires_grad=True)
        out = _grad_of(torch, c(f))(a)
        tags, todo, seen = [], [out.grad_fn], set()
        while todo:
            node = todo.pop()
            if node is None or node in seen:
                continue
            seen.add(node)
            tag = Tag()
            node.metadata["tag"] = tag
            tags.append(weakref.ref(tag))
            todo.extend(n for n, _ in node.next_functions)
        return tags

    collecting = gc.isenabled()
    gc.disable()
    try:
        tags = scope()
        assert tags and all(t() is None for t in tags)
    finally:
        if collecting:
            gc.enable()


def test_a_backward_pass_recomputes_once_and_a_nested_one_for_itself():
    # a second read of a saved value in the same backward pass is refused; a backward started from a hook in
    # the middle of another recomputes for itself
    def run(lib):
        reads = []

        class Twice(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                _x, = ctx.saved_tensors
                try:
                    reads.append(len(ctx.saved_tensors))
                except RuntimeError as e:
                    reads.append(type(e).__name__)
                return grad * 2

        def fn(a):
            x = a.sin().cos()
            return x, Twice.apply(x.sin())

        a = lib.tensor(1.0, requires_grad=True)
        x, out = ck(lib).checkpoint(fn, a, use_reentrant=False)
        out.grad_fn.register_hook(lambda *_: x.backward(retain_graph=True))
        out.backward(retain_graph=True)
        return reads, a.grad.item()

    ours, theirs = run(torch), run(ref)
    assert ours[0] == theirs[0] == ["CheckpointError"]
    # (sin and cos of float32 numbers: PyTorch's vector math library rounds one in twenty differently)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)


def test_non_tensor_arguments_keywords_and_outputs():
    def run(lib):
        a, b = (lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in (2.0, 3.0))
        out, one, text = ck(lib).checkpoint(lambda k, x, blah=None: ((k * x * blah.exp()).sin(), 1, "abc"), 3, a,
                                            blah=b, use_reentrant=False)
        grads = lib.autograd.grad(out, (a, b))
        return [g.item() for g in grads], one, text
    (g1, *rest1), (g2, *rest2) = run(torch), run(ref)
    assert g1 == pytest.approx(g2) and rest1 == rest2 == [1, "abc"]


def test_warnings_and_errors_about_the_arguments_match_pytorch():
    def no_use_reentrant(lib):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            ck(lib).checkpoint(lambda a: a.sin(), inputs(lib)[0])
            ck(lib).checkpoint_sequential([lambda a: a.sin()] * 2, 2, inputs(lib)[0])
        return [str(w.message) for w in seen]
    assert no_use_reentrant(torch) == no_use_reentrant(ref)

    cases = [
        lambda lib: ck(lib).checkpoint(lambda a: a, inputs(lib)[0], use_reentrant=True, debug=True),
        lambda lib: ck(lib).checkpoint(lambda a: a, inputs(lib)[0], use_reentrant=True, extra=1),
        lambda lib: ck(lib).checkpoint(lambda a: a.sin(), inputs(lib)[0], use_reentrant=False,
                                       determinism_check="maybe"),
        lambda lib: ck(lib).checkpoint_sequential([lambda a: a], 1, inputs(lib)[0], use_reentrant=False, extra=1),
    ]
    for case in cases:
        with pytest.raises(ValueError) as ours:
            case(torch)
        with pytest.raises(ValueError) as theirs:
            case(ref)
        assert str(ours.value) == str(theirs.value)


def test_a_recomputation_that_saves_differently_is_caught():
    def run(lib, early_stop):
        runs = [0]

        def fn(a):
            runs[0] += 1
            if runs[0] == 1:
                return a.sin().exp()
            return a.sin().exp().sin()
        with ck(lib).set_checkpoint_early_stop(early_stop):
            y = ck(lib).checkpoint(fn, inputs(lib)[0], use_reentrant=False)
        y.sum().backward()

    for lib in (torch, ref):
        run(lib, True)          # stops once what backward needs is back: no error
        with pytest.raises(RuntimeError, match="trying to save more tensors during recomputation"):
            run(lib, False)


def test_context_fn_runs_forward_and_recomputation_in_their_contexts():
    import contextlib

    def run(lib):
        entered = []

        @contextlib.contextmanager
        def mark(name):
            entered.append(name)
            yield
        y = ck(lib).checkpoint(lambda a: a.sin(), inputs(lib)[0], use_reentrant=False,
                               context_fn=lambda: (mark("forward"), mark("recompute")))
        y.sum().backward()
        return entered
    assert run(torch) == run(ref) == ["forward", "recompute"]


def test_a_100000_op_checkpointed_chain_needs_no_deep_stack():
    def chain(a):
        for _ in range(100_000):
            a = a * 1.0
        return a
    x = torch.tensor([2.0], requires_grad=True)
    torch.utils.checkpoint.checkpoint(chain, x, use_reentrant=False).sum().backward()
    assert x.grad.item() == 1.0
