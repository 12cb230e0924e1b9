"""``nn.utils.prune`` (``nn/utils/prune.py``) against PyTorch: the same masks for the same seed (the random
methods draw as PyTorch's do), the same parameters, buffers and hooks, and the same refusals."""
import re

import numpy as np
import pytest
import torch
import torch.nn.utils.prune as torch_prune

import gradiente
from gradiente.nn.utils import prune

LIBS = ((gradiente, prune), (torch, torch_prune))


def _layers(lib):
    lib.manual_seed(0)
    return lib.nn.Conv2d(2, 4, 3), lib.nn.Linear(5, 6)


def _state(module):
    """What pruning changed on a module: its parameter and buffer names and values, and its hooks' classes."""
    return ([(n, p.detach().numpy().copy()) for n, p in module.named_parameters()],
            [(n, b.numpy().copy()) for n, b in module.named_buffers()],
            [type(h).__name__ for h in module._forward_pre_hooks.values()])


def _assert_same_state(ours, theirs):
    for (o_params, o_bufs, o_hooks), (t_params, t_bufs, t_hooks) in zip(ours, theirs, strict=True):
        assert o_hooks == t_hooks
        for (on, ov), (tn, tv) in zip(o_params + o_bufs, t_params + t_bufs, strict=True):
            assert on == tn
            np.testing.assert_array_equal(ov, tv)


PRUNINGS = {
    "random_unstructured": lambda p, conv, lin: [p.random_unstructured(conv, "weight", amount=0.3),
                                                  p.random_unstructured(lin, "bias", amount=2)],
    "l1_unstructured": lambda p, conv, lin: [p.l1_unstructured(conv, "bias", amount=3),
                                              p.l1_unstructured(lin, "weight", amount=0.5)],
    "ln_structured": lambda p, conv, lin: [p.ln_structured(conv, "weight", amount=0.5, n=2, dim=0),
                                            p.ln_structured(lin, "weight", amount=2, n=1, dim=-1)],
    "random_structured": lambda p, conv, lin: [p.random_structured(conv, "weight", amount=0.5, dim=1),
                                                p.random_structured(lin, "weight", amount=1, dim=0)],
    "iterated": lambda p, conv, lin: [p.random_unstructured(conv, "weight", amount=0.3),
                                      p.ln_structured(conv, "weight", amount=0.5, n=2, dim=0),
                                      p.l1_unstructured(conv, "weight", amount=4),
                                      p.identity(lin, "weight"), p.l1_unstructured(lin, "weight", amount=0.25)],
    "custom_and_removed": lambda p, conv, lin: [
        p.custom_from_mask(lin, "bias", mask=(lin.bias > 0).float()), p.l1_unstructured(conv, "weight", amount=9),
        p.remove(conv, "weight")],
    "global": lambda p, conv, lin: [p.global_unstructured(((conv, "weight"), (lin, "weight"), (lin, "bias")),
                                                          pruning_method=p.L1Unstructured, amount=0.4)],
}


@pytest.mark.parametrize("name", list(PRUNINGS))
def test_pruning_gives_torchs_masks_parameters_and_hooks(name):
    def run(lib, p):
        conv, lin = _layers(lib)
        PRUNINGS[name](p, conv, lin)
        x = lib.randn(2, 2, 5, 5)
        out = conv(x).sum() + lin(lib.randn(3, 5)).sum()
        out.backward()
        grads = [prm.grad.numpy().copy() for m in (conv, lin) for prm in m.parameters()]
        return [_state(conv), _state(lin)], grads, p.is_pruned(conv), p.is_pruned(lin)

    (ours, our_grads, *our_flags), (theirs, their_grads, *their_flags) = (run(*lib) for lib in LIBS)
    _assert_same_state(ours, theirs)
    assert our_flags == their_flags
    for o, t in zip(our_grads, their_grads, strict=True):
        np.testing.assert_allclose(o, t, rtol=1e-5, atol=1e-6)


def test_the_container_holds_the_history_and_prints_as_torchs():
    def history(lib, p):
        conv, _ = _layers(lib)
        p.random_unstructured(conv, "weight", amount=0.3)
        p.l1_unstructured(conv, "bias", amount=1)
        p.ln_structured(conv, "weight", amount=0.5, n=2, dim=0)
        hook = next(h for h in conv._forward_pre_hooks.values() if h._tensor_name == "weight")
        printed = re.sub(r" at 0x[0-9a-f]+", "", repr(list(hook))).replace("gradiente.", "torch.")
        return type(hook).__name__, len(hook), type(hook[0]).__name__, printed, list(conv.state_dict())
    assert history(*LIBS[0]) == history(*LIBS[1])


def test_a_pruning_method_prunes_a_bare_tensor():
    def pruned(lib, p):
        lib.manual_seed(3)
        t = lib.randn(4, 5)
        return [p.L1Unstructured(amount=0.5).prune(t).numpy(),
                p.RandomStructured(amount=2, dim=1).prune(t, importance_scores=t.abs()).numpy(),
                p.LnStructured(amount=1, n=float("inf"), dim=0).prune(t).numpy()]
    for o, t in zip(pruned(*LIBS[0]), pruned(*LIBS[1]), strict=True):
        np.testing.assert_array_equal(o, t)


@pytest.mark.parametrize("call", [
    lambda lib, p, conv: p.l1_unstructured(conv, "weight", amount=1.5),
    lambda lib, p, conv: p.l1_unstructured(conv, "weight", amount=-1),
    lambda lib, p, conv: p.l1_unstructured(conv, "weight", amount="half"),
    lambda lib, p, conv: p.l1_unstructured(conv, "bias", amount=5),
    lambda lib, p, conv: p.ln_structured(conv, "bias", amount=1, n=2, dim=0),
    lambda lib, p, conv: p.ln_structured(conv, "weight", amount=1, n=2, dim=4),
    lambda lib, p, conv: p.remove(conv, "weight"),
    lambda lib, p, conv: p.l1_unstructured(conv, "weight", amount=1, importance_scores=lib.ones(3)),
    lambda lib, p, conv: p.global_unstructured(((conv, "weight"),), pruning_method=p.RandomStructured, amount=1),
    lambda lib, p, conv: p.global_unstructured(((conv, "weight"),), p.L1Unstructured, importance_scores=[], amount=1),
], ids=lambda call: "")
def test_pruning_refuses_as_torch(call):
    def outcome(lib, p):
        conv, _ = _layers(lib)
        try:
            call(lib, p, conv)
        except Exception as error:      # the exception itself is what is compared
            text = re.sub(r"Size\(\[([0-9, ]*)\]\)", r"Size([\1])", str(error)).replace("gradiente.", "torch.")
            return type(error).__name__, text, [n for n, _ in conv.named_parameters()]
        return None
    theirs = outcome(*LIBS[1])
    assert theirs is not None and outcome(*LIBS[0]) == theirs
