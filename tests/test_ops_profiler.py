"""torch.ops.profiler's two ops: the range they open and close is an event of the profiler session, as PyTorch's."""
import torch as real_torch

import gradiente


def _events(lib):
    x = lib.ones(3)
    with lib.autograd.profiler.profile() as prof:
        handle = lib.ops.profiler._record_function_enter("my_range")
        (x * 2).sum()
        lib.ops.profiler._record_function_exit(handle)
    return sorted({e.name for e in prof.function_events} & {"my_range", "aten::mul", "aten::sum"})


def test_range_is_an_event_as_in_pytorch():
    assert _events(gradiente) == _events(real_torch) == ["aten::mul", "aten::sum", "my_range"]


def test_without_a_session_nothing_is_recorded():
    handle = gradiente.ops.profiler._record_function_enter("outside")
    gradiente.ops.profiler._record_function_exit(handle)
    with gradiente.autograd.profiler.profile() as prof:
        pass
    assert [e.name for e in prof.function_events] == []
