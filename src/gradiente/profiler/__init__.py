"""``torch.profiler``: where the time of a program goes, op by op, with PyTorch's ``profile``, ``schedule`` and
``record_function``.

    import gradiente as torch
    from gradiente.profiler import ProfilerActivity, profile, record_function

    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
    x = torch.randn(128, 32)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        with record_function("model_inference"):
            model(x).sum().backward()
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))
    prof.export_chrome_trace("trace.json")      # open it in chrome://tracing or https://ui.perfetto.dev

The recording itself is ``gradiente.autograd.profiler.profile``'s (its docstring tells how ops are timed).
"""
from ..autograd.profiler import record_function
from ..autograd.profiler_util import DeviceType
from .profiler import (
    ProfilerAction,
    ProfilerActivity,
    profile,
    schedule,
    supported_activities,
    tensorboard_trace_handler,
)

__all__ = ["profile", "schedule", "supported_activities", "tensorboard_trace_handler", "ProfilerAction",
           "ProfilerActivity", "DeviceType", "record_function"]
