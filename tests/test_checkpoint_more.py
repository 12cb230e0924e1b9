"""The device-state and selective-checkpointing names of torch.utils.checkpoint, against torch's on the CPU:
what matches (enum values, device states of CPU tensors, GraphExecGroup nesting) and the intended absence
(create_selective_checkpoint_contexts checks its argument as torch does; the rest is test_checkpoint_selective.py)."""

import numpy as np
import pytest
import torch
import torch.utils.checkpoint as tc

import gradiente
import gradiente.utils.checkpoint as gc


def test_checkpoint_policy_members_match_torch():
    assert [(m.name, m.value) for m in gc.CheckpointPolicy] == [(m.name, m.value) for m in tc.CheckpointPolicy]
    ctx, ref = gc.SelectiveCheckpointContext(is_recompute=False), tc.SelectiveCheckpointContext(is_recompute=False)
    assert (ctx.is_recompute, ctx.op_output) == (ref.is_recompute, ref.op_output)
    assert isinstance(gc.SAC_IGNORED_OPS, frozenset)


def test_device_states_of_cpu_tensors_match_torch():
    assert gc.get_device_states(gradiente.ones(2), 3) == tc.get_device_states(torch.ones(2), 3) == ([], [])
    assert gc.DefaultDeviceType.get_device_type() == tc.DefaultDeviceType.get_device_type() == "cpu"
    assert gc.set_device_states([], []) is None and tc.set_device_states([], []) is None
    with pytest.raises(RuntimeError, match="no 'cuda' devices"):
        gc.set_device_states([0], [gradiente.zeros(1)], device_type="cuda")


def test_device_type_can_be_set_and_reset():
    try:
        gc.DefaultDeviceType.set_device_type("meta")
        assert gc.DefaultDeviceType.get_device_type() == "meta"
        assert gc.set_device_states([0], [gradiente.zeros(1)]) is None  # meta has no states, as in PyTorch
    finally:
        gc.DefaultDeviceType.set_device_type("cpu")


def test_graph_exec_group_refuses_nesting_like_torch():
    def nested(module):
        with module.GraphExecGroup() as group:
            assert module.GraphExecGroup._get_current_group() is group
            with pytest.raises(RuntimeError, match="GraphExecGroup contexts cannot be nested"), \
                    module.GraphExecGroup():
                pass
        assert module.GraphExecGroup._get_current_group() is None
    nested(gc)
    nested(tc)


def test_graph_exec_group_backward_through_a_checkpoint_matches_torch():
    values = np.linspace(-1.0, 1.0, 4)
    grads = []
    for lib, module in ((gradiente, gc), (torch, tc)):
        x = lib.tensor(values, requires_grad=True)
        with module.GraphExecGroup():
            y = module.checkpoint(lambda t, lib=lib: lib.sin(t) * t, x, use_reentrant=False)
            y.sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


def test_selective_checkpointing_checks_its_argument_as_torch():
    """(Selective checkpointing itself: tests/test_checkpoint_selective.py.)"""
    with pytest.raises(TypeError) as ours:
        gc.create_selective_checkpoint_contexts(3)
    with pytest.raises(TypeError) as theirs:
        tc.create_selective_checkpoint_contexts(3)
    assert str(ours.value) == str(theirs.value)
