"""Selective activation checkpointing (issue 16): PyTorch's tutorial policies give the same policy calls, the same
gradients and the same number of recomputed ops as in PyTorch; the op handles of ``gradiente.ops.aten``."""
import functools

import numpy as np
import pytest
import torch
import torch.utils.checkpoint as tc
from torch.utils._python_dispatch import TorchDispatchMode

import gradiente as g
import gradiente.utils.checkpoint as gc
from gradiente.autograd import gradcheck


class _CountMm(TorchDispatchMode):
    """PyTorch's ops as its dispatcher runs them, to count the recomputed ones."""

    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


def _tutorial_fn(lib):
    def fn(x, y):
        return lib.sigmoid(lib.matmul(lib.matmul(x, y), y)) * y
    return fn


def _policy(lib, module, calls, save):
    def policy_fn(ctx, op, *args, **kwargs):
        calls.append((str(op), ctx.is_recompute))
        return module.CheckpointPolicy.MUST_SAVE if op in save(lib) else module.CheckpointPolicy.PREFER_RECOMPUTE
    return policy_fn


def _data():
    rng = np.random.default_rng(0)
    return rng.standard_normal((6, 6)), rng.standard_normal((6, 6))


def _run_torch(fn, context_fn):
    a, b = _data()
    x, y = (torch.tensor(v, requires_grad=True) for v in (a, b))
    out = tc.checkpoint(fn, x, y, use_reentrant=False, context_fn=context_fn)
    with _CountMm() as mode:
        out.sum().backward()
    return out, x.grad, y.grad, mode.ops


def _run_gradiente(fn, context_fn):
    a, b = _data()
    x, y = (g.tensor(v, requires_grad=True) for v in (a, b))
    out = gc.checkpoint(fn, x, y, use_reentrant=False, context_fn=context_fn)
    with g.profiler.profile() as prof:
        out.sum().backward()
    ran = [e.name for e in prof.events() if e.name in ("aten::matmul", "aten::mm", "aten::sigmoid", "aten::mul")]
    return out, x.grad, y.grad, ran


@pytest.mark.parametrize("save", [lambda lib: (lib.ops.aten.mm.default,), lambda lib: (), lambda lib: (
    lib.ops.aten.mm.default, lib.ops.aten.sigmoid.default)], ids=["mm", "nothing", "mm-and-sigmoid"])
def test_tutorial_policy_calls_gradients_and_recomputed_mms_match_torch(save):
    t_calls, g_calls = [], []
    t_out, t_xg, t_yg, t_ops = _run_torch(_tutorial_fn(torch), functools.partial(
        tc.create_selective_checkpoint_contexts, _policy(torch, tc, t_calls, save)))
    g_out, g_xg, g_yg, g_ops = _run_gradiente(_tutorial_fn(g), functools.partial(
        gc.create_selective_checkpoint_contexts, _policy(g, gc, g_calls, save)))
    assert g_calls == t_calls
    assert g_out.grad_fn.name() == t_out.grad_fn.name()
    np.testing.assert_allclose(g_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(g_xg.numpy(), t_xg.numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(g_yg.numpy(), t_yg.numpy(), rtol=1e-12, atol=1e-14)
    # the matrix products run again in the backward only where the policy did not save them: PyTorch's aten.mm
    # are gradiente's calls of matmul (each one aten.mm here)
    t_recomputed_mm = t_ops.count("aten.mm.default") - 4          # the four mms of MmBackward0's two rules
    assert g_ops.count("aten::matmul") == t_recomputed_mm
    assert g_ops.count("aten::sigmoid") == t_ops.count("aten.sigmoid.default")


def test_list_of_ops_is_the_must_save_policy():
    _, t_xg, t_yg, t_ops = _run_torch(_tutorial_fn(torch), functools.partial(
        tc.create_selective_checkpoint_contexts, [torch.ops.aten.mm.default]))
    _, g_xg, g_yg, g_ops = _run_gradiente(_tutorial_fn(g), functools.partial(
        gc.create_selective_checkpoint_contexts, [g.ops.aten.mm.default]))
    np.testing.assert_allclose(g_xg.numpy(), t_xg.numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(g_yg.numpy(), t_yg.numpy(), rtol=1e-12, atol=1e-14)
    assert g_ops.count("aten::matmul") == t_ops.count("aten.mm.default") - 4 == 0


def test_linear_layers_with_a_bool_policy_match_torch():
    """nn.Linear's ops as PyTorch names them (t, addmm), the older bool answers, and an MLP's gradients."""
    def build(lib):
        lib.manual_seed(0)
        return lib.nn.Sequential(lib.nn.Linear(5, 7), lib.nn.ReLU(), lib.nn.Linear(7, 3)).double()
    tm, gm = build(torch), build(g)
    for tp, gp in zip(tm.parameters(), gm.parameters()):
        gp.data = g.tensor(tp.detach().numpy().copy())
    a = np.random.default_rng(1).standard_normal((4, 5))
    results = []
    for lib, module, model in ((torch, tc, tm), (g, gc, gm)):
        seen = []

        def policy_fn(ctx, op, *args, seen=seen, lib=lib, **kwargs):
            seen.append(str(op))
            return op == lib.ops.aten.addmm.default
        x = lib.tensor(a, requires_grad=True)
        out = module.checkpoint(model, x, use_reentrant=False,
                                context_fn=functools.partial(module.create_selective_checkpoint_contexts, policy_fn))
        (out ** 2).sum().backward()
        results.append((seen, x.grad.numpy(), [p.grad.numpy() for p in model.parameters()]))
    (t_seen, t_xg, t_pg), (g_seen, g_xg, g_pg) = results
    assert g_seen == t_seen
    np.testing.assert_allclose(g_xg, t_xg, rtol=1e-12, atol=1e-14)
    for gp, tp in zip(g_pg, t_pg):
        np.testing.assert_allclose(gp, tp, rtol=1e-12, atol=1e-14)


def test_saved_random_op_is_not_redrawn():
    """A saved dropout keeps its mask even without preserve_rng_state, where a recomputed one would redraw it."""
    def fn(x):
        return g.nn.functional.dropout(x, 0.5, training=True).mm(x)
    a = np.random.default_rng(2).standard_normal((5, 5))
    x = g.tensor(a, requires_grad=True)
    ref = g.tensor(a, requires_grad=True)
    g.manual_seed(3)
    fn(ref).sum().backward()
    g.manual_seed(3)
    out = gc.checkpoint(fn, x, use_reentrant=False, preserve_rng_state=False,
                        context_fn=functools.partial(gc.create_selective_checkpoint_contexts,
                                                     lambda ctx, op, *args: gc.CheckpointPolicy.MUST_SAVE))
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), ref.grad.numpy(), rtol=1e-14)


def test_gradients_equal_those_without_checkpointing_and_gradcheck():
    """Selective checkpointing adds no derivative of its own: the gradients are those of the plain function,
    whose derivative gradcheck checks (gradcheck's repeated backward passes over one output are what SAC forbids,
    in PyTorch as here, so it checks the function itself)."""
    a, b = _data()
    x, y = (g.tensor(v, requires_grad=True) for v in (a, b))
    out = gc.checkpoint(_tutorial_fn(g), x, y, use_reentrant=False, context_fn=functools.partial(
        gc.create_selective_checkpoint_contexts, [g.ops.aten.mm.default]))
    expected = g.autograd.grad(_tutorial_fn(g)(x, y).sum(), (x, y))
    got = g.autograd.grad(out.sum(), (x, y))
    for e, r in zip(expected, got):
        np.testing.assert_allclose(r.numpy(), e.numpy(), rtol=1e-13, atol=1e-15)
    small = (g.tensor(a[:3, :3], requires_grad=True), g.tensor(b[:3, :3], requires_grad=True))
    assert gradcheck(_tutorial_fn(g), small)


def test_backward_twice_raises_as_torch():
    msgs = []
    for lib, module in ((torch, tc), (g, gc)):
        x = lib.ones(3, 3, dtype=lib.float64, requires_grad=True)
        context_fn = functools.partial(module.create_selective_checkpoint_contexts, [lib.ops.aten.mm.default])
        out = module.checkpoint(lambda x, lib=lib: lib.sin(lib.mm(x, x)), x, use_reentrant=False,
                                context_fn=context_fn)
        out.sum().backward(retain_graph=True)
        with pytest.raises(RuntimeError) as info:
            out.sum().backward()
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


def test_mutated_cache_entry_raises_as_torch():
    msgs = []
    for lib, module in ((torch, tc), (g, gc)):
        x = lib.ones(3, 3, dtype=lib.float64, requires_grad=True)
        kept = []

        def fn(x, lib=lib, kept=kept):
            product = lib.mm(x, x)
            kept.append(product)
            return lib.sin(product)
        out = module.checkpoint(fn, x, use_reentrant=False, context_fn=functools.partial(
            module.create_selective_checkpoint_contexts, [lib.ops.aten.mm.default]))
        with lib.no_grad():
            kept[0].add_(1)       # the cached tensor shares the product's version counter
        with pytest.raises(RuntimeError) as info:
            out.sum().backward()
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


def test_argument_errors_match_torch():
    for bad in (3, [torch.ops.aten.mm]):
        with pytest.raises((TypeError, ValueError)) as t_info:
            tc.create_selective_checkpoint_contexts(bad)
        g_bad = 3 if bad == 3 else [g.ops.aten.mm]
        with pytest.raises(t_info.type) as g_info:
            gc.create_selective_checkpoint_contexts(g_bad)
        assert str(g_info.value).replace("gradiente.ops.aten", "torch._ops.aten") .split(" of type")[0] == \
            str(t_info.value).split(" of type")[0]


def _two_libs_run(build_fn, policy_for, a):
    """Run ``build_fn(lib, module)`` checkpointed with ``policy_for(lib, module, calls)`` in torch and gradiente;
    their policy calls and the input's gradients."""
    results = []
    for lib, module in ((torch, tc), (g, gc)):
        calls = []
        x = lib.tensor(a, requires_grad=True)
        context_fn = functools.partial(module.create_selective_checkpoint_contexts, policy_for(lib, module, calls))
        out = module.checkpoint(build_fn(lib, module, context_fn), x, use_reentrant=False, context_fn=context_fn)
        out.sum().backward()
        results.append((calls, x.grad.numpy()))
    return results


def test_an_op_of_several_results_is_kept_as_its_named_tuple():
    """torch.max(x, 1) returns (values, indices); kept, the recomputation hands back the same named tuple."""
    def build(lib, module, context_fn):
        def fn(x):
            best = lib.max(x.exp(), 1)
            return best.values * best.indices
        return fn

    def policy_for(lib, module, calls):
        def policy(ctx, op, *args, **kwargs):
            calls.append(str(op))
            return module.CheckpointPolicy.MUST_SAVE if op == lib.ops.aten.max.dim else \
                module.CheckpointPolicy.PREFER_RECOMPUTE
        return policy
    (t_calls, t_grad), (g_calls, g_grad) = _two_libs_run(build, policy_for, np.random.default_rng(4).random((3, 4)))
    assert g_calls == t_calls
    np.testing.assert_allclose(g_grad, t_grad, rtol=1e-13)


def test_nested_selective_checkpoints_match_torch():
    """The gradients are torch's. An intended difference: an op of the inner region is asked about by the inner
    policy only, where PyTorch asks each enclosing region's policy as well, so torch's calls hold gradiente's in
    order, with the enclosing region's repeats besides."""
    def build(lib, module, context_fn):
        def inner(x):
            return lib.mm(x, x).tanh()

        def fn(x):
            return module.checkpoint(inner, lib.mm(x, x.t()), use_reentrant=False, context_fn=context_fn).sin()
        return fn

    def policy_for(lib, module, calls):
        def policy(ctx, op, *args, **kwargs):
            calls.append(str(op))
            return op == lib.ops.aten.mm.default
        return policy
    (t_calls, t_grad), (g_calls, g_grad) = _two_libs_run(build, policy_for, np.random.default_rng(5).random((3, 3)))
    remaining = iter(t_calls)
    assert all(call in remaining for call in g_calls)          # gradiente's calls, in order, among torch's
    assert len(t_calls) - len(g_calls) == 2                    # the enclosing policy's asks about mm and tanh
    np.testing.assert_allclose(g_grad, t_grad, rtol=1e-13)


def test_attention_block_policy_calls_and_gradients_match_torch():
    """A small transformer block (layer norm, attention by matmul and softmax, GELU MLP) saving its matrix
    products: every op the policy is asked about, in order, and every gradient, as in PyTorch."""
    def block(lib):
        fn = lib.nn.functional

        class Block(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.ln, self.qkv, self.out = lib.nn.LayerNorm(8), lib.nn.Linear(8, 24), lib.nn.Linear(8, 8)
                self.mlp = lib.nn.Sequential(lib.nn.Linear(8, 16), lib.nn.GELU(), lib.nn.Linear(16, 8))

            def forward(self, x):
                q, k, v = self.qkv(self.ln(x)).chunk(3, -1)
                x = x + self.out(fn.softmax(q @ k.transpose(-2, -1) / 8 ** 0.5, -1) @ v)
                return x + self.mlp(x)
        return Block().double()

    results = []
    for lib, module in ((torch, tc), (g, gc)):
        model, rng, calls = block(lib), np.random.default_rng(0), []
        for p in model.parameters():
            p.data = lib.tensor(rng.standard_normal(tuple(p.shape)))
        x = lib.tensor(rng.standard_normal((2, 5, 8)), requires_grad=True)

        def policy(ctx, op, *args, calls=calls, lib=lib, module=module, **kwargs):
            calls.append(str(op))
            saved = (lib.ops.aten.mm.default, lib.ops.aten.addmm.default, lib.ops.aten.bmm.default)
            return module.CheckpointPolicy.MUST_SAVE if op in saved else module.CheckpointPolicy.PREFER_RECOMPUTE
        out = module.checkpoint(model, x, use_reentrant=False,
                                context_fn=functools.partial(module.create_selective_checkpoint_contexts, policy))
        out.sum().backward()
        results.append((calls, [x.grad.numpy()] + [p.grad.numpy() for p in model.parameters()]))
    (t_calls, t_grads), (g_calls, g_grads) = results
    assert g_calls == t_calls
    for ours, theirs in zip(g_grads, t_grads):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-10)
