"""``torch.autograd.profiler``: ``profile``, which times every op and every node of the backward pass run inside it,
and ``record_function``, which labels a block of code in its results.

    import gradiente as torch
    x = torch.randn(64, 32, requires_grad=True)
    w = torch.randn(32, 16, requires_grad=True)
    with torch.autograd.profiler.profile() as prof:
        with torch.autograd.profiler.record_function("forward"):
            loss = torch.relu(x @ w).sum()
        loss.backward()
    print(prof.key_averages().table(sort_by="cpu_time_total"))

How it works, and why it costs nothing when off
-----------------------------------------------
While a profile is entered, the ops are timing wrappers (``autograd/_timed_ops.py`` swaps them in on ``Tensor``,
in ``gradiente``, ``nn.functional`` and the modules' globals, and puts the very same objects back on exit, an
exception included): each call appends one record, its name (PyTorch's: ``aten::mm``), start and end, to the
session of ``core/profiling.py``. The backward engine reads that session once per walk; when there is one, every
node runs through the engine's general step, timed (``autograd::engine::evaluate_function: MmBackward0`` around
``MmBackward0``, ``torch::autograd::AccumulateGrad`` at the leaves). With no profile entered, no wrapper exists and
the walk takes its plain loop: nothing is checked per op or per node.

On exit the records become ``FunctionEvent``s, nested by their time ranges (``profiler_util.py``), for ``events()``,
``key_averages()`` and ``table()`` as in PyTorch. One profile records at a time, as in PyTorch: one entered while
another records takes over, and the other ends with no events.

What is not measured: memory (``profile_memory``), FLOPs (``with_flops``) and source locations (``with_stack``)
are refused with a NotImplementedError; times are wall times of the Python calls, the ops' NumPy work included.
"""
import json
import os
import time
import warnings
from contextlib import ContextDecorator

from ..core import profiling
from . import _timed_ops
from .profiler_util import DeviceType, EventList, FunctionEvent, FunctionEventAvg

__all__ = ["profile", "record_function", "emit_nvtx", "EventList", "FunctionEvent", "FunctionEventAvg"]

_VALID_DEVICES = ("cuda", "xpu", "mtia", "hpu")


class profile:
    """Times every op and backward node run while entered (see the module's docstring). ``enabled=False`` makes it
    do nothing; ``record_shapes=True`` keeps each op's input shapes (``key_averages(group_by_input_shape=True)``).
    A CPU-only build has no device to time: ``use_cuda=True`` or ``use_device="cuda"`` warns and times the CPU."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False, use_kineto=False, use_cpu=True,
                 experimental_config=None, acc_events=False, custom_trace_id_callback=None,
                 post_processing_timeout_s=None, activity_filters=None):
        self.enabled = enabled
        if not enabled:
            return
        self.use_cuda = use_cuda
        if use_cuda:
            warnings.warn("The attribute `use_cuda` will be deprecated soon, please use ``use_device = 'cuda'`` "
                          "instead.", FutureWarning, stacklevel=2)
            use_device = "cuda"
        if use_device is not None:
            if use_device not in _VALID_DEVICES:
                warnings.warn(f"The {use_device} is not a valid device option.", stacklevel=2)
            elif use_device == "mtia":
                raise AssertionError("Legacy MTIA profiling is not supported. Requires use_kineto=True on MTIA "
                                     "devices.")
            else:
                warnings.warn(f"{use_device.upper()} is not available, disabling {use_device.upper()} profiling",
                              stacklevel=2)
                self.use_cuda = False
            use_device = None
        self.use_device = use_device
        if not use_cpu:
            if not use_kineto:
                raise AssertionError("Device-only events supported only with Kineto (use_kineto=True)")
            raise AssertionError("No activities specified for the profiler")
        for flag, what in ((profile_memory, "profile_memory"), (with_flops, "with_flops"),
                           (with_stack, "with_stack")):
            if flag:
                raise NotImplementedError(f"gradiente's profiler times ops; it does not measure what {what}=True "
                                          "asks for")
        if post_processing_timeout_s is not None and post_processing_timeout_s < 0:
            raise ValueError("post_processing_timeout_s must be non-negative")
        self.record_shapes = record_shapes
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules        # PyTorch records modules for TorchScript only: nothing in eager mode
        self.use_cpu = use_cpu
        self.acc_events = acc_events
        self.custom_trace_id_callback = custom_trace_id_callback
        self.trace_id = ""
        self.entered = False
        self._session = None
        self._function_events = None
        self._old_function_events = None
        self._needs_processing = False
        self._trace_metadata: dict = {}

    # --- recording --------------------------------------------------------------------------------------------

    def __enter__(self):
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self._prepare_trace()
        self._start_trace()
        return self

    def _prepare_trace(self):
        self.entered = True
        self.trace_id = (self.custom_trace_id_callback() if self.custom_trace_id_callback
                         else f"{int.from_bytes(os.urandom(16), 'big'):032X}")

    def _start_trace(self):
        self.entered = True
        _timed_ops.install()
        self._session = profiling.Session(self.record_shapes)
        profiling.begin(self._session)

    def __exit__(self, exc_type, exc_val, exc_tb):
        if not self.enabled:
            return False
        try:
            if self._session is not None:
                profiling.end(self._session)
        finally:
            if profiling.state.session is None:     # no profile records any more: the ops are put back
                _timed_ops.uninstall()
        if self._function_events and self.acc_events:
            self._old_function_events = self._function_events
        self._function_events = None
        self._needs_processing = True
        if self.acc_events:
            self._ensure_function_events()
        return False

    # --- results ----------------------------------------------------------------------------------------------

    def _ensure_function_events(self):
        if self._function_events is not None:
            return
        self._needs_processing = False
        session, self._session = self._session, None
        self._function_events = EventList(_events_of(session) if session is not None else [],
                                          use_device=self.use_device, profile_memory=self.profile_memory,
                                          with_flops=self.with_flops)
        self._function_events._build_tree()
        self._recorded = session
        if self._old_function_events and self.acc_events:
            self._function_events.extend(self._old_function_events)
            self._old_function_events = None

    @property
    def function_events(self):
        if self._function_events is None or self._needs_processing:
            self._ensure_function_events()
        return self._function_events

    def __repr__(self):
        if self._needs_processing:
            self._ensure_function_events()
        if self._function_events is None:
            return "<unfinished torch.autograd.profile>"
        return repr(self._function_events)

    def __str__(self):
        if self._needs_processing:
            self._ensure_function_events()
        if self._function_events is None:
            return "<unfinished torch.autograd.profile>"
        return str(self._function_events)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False):
        return self.function_events.table(sort_by=sort_by, row_limit=row_limit,
                                          max_src_column_width=max_src_column_width,
                                          max_name_column_width=max_name_column_width,
                                          max_shapes_column_width=max_shapes_column_width, header=header,
                                          top_level_events_only=top_level_events_only)

    table.__doc__ = EventList.table.__doc__

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        return self.function_events.key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    key_averages.__doc__ = EventList.key_averages.__doc__

    def total_average(self):
        return self.function_events.total_average()

    @property
    def self_cpu_time_total(self):
        """The sum of every event's self time: the time spent in the profiled ops and ranges, in microseconds."""
        return self.function_events.self_cpu_time_total

    def export_chrome_trace(self, path, metadata=None, use_python_export=False):
        """Write the trace as PyTorch's profiler writes it (a JSON object whose ``traceEvents`` are the events),
        to open in ``chrome://tracing`` or https://ui.perfetto.dev."""
        events = self.function_events
        session = getattr(self, "_recorded", None)
        write_chrome_trace(events, path, session.started_wall_ns if session is not None else time.time_ns(),
                           self.record_shapes, self.trace_id, {**self._trace_metadata, **(metadata or {})})


def _events_of(session):
    """The session's records as events, in order of their start (the enclosing one first where two start together);
    times in microseconds since the session started."""
    base = session.started_ns
    records = sorted(session.records, key=lambda r: (r[1], -r[2]))
    events = []
    for i, (name, start, end, thread, scope, seq, shapes) in enumerate(records, 1):
        # the steps of a schedule are one row of the table, "ProfilerStep*"; the trace keeps each step's own name
        shown = "ProfilerStep*" if name.startswith("ProfilerStep#") else name
        events.append(FunctionEvent(id=i, name=shown, trace_name=name, thread=thread, start_us=(start - base) / 1000,
                                    end_us=(end - base) / 1000, fwd_thread=thread if seq >= 0 else None,
                                    input_shapes=shapes if shapes is not None else [], stack=[], scope=scope,
                                    sequence_nr=seq, device_type=DeviceType.CPU, overload_name="",
                                    is_user_annotation=scope == profiling.USER))
    return events


def write_chrome_trace(events, path, base_wall_ns, record_shapes, trace_id="", metadata=None):
    """The Chrome trace of ``events``: PyTorch's layout (``schemaVersion``, ``traceEvents`` of complete events,
    ``"ph": "X"``, times in microseconds), with each event's category, ids and, if recorded, input shapes."""
    pid = os.getpid()
    base_us = base_wall_ns / 1000
    trace_events = [{"ph": "M", "name": "process_name", "ts": base_us, "pid": pid, "tid": 0,
                     "args": {"name": "python"}}]
    for event in events:
        args = {"External id": event.id}
        if event.sequence_nr >= 0:
            args["Sequence number"] = event.sequence_nr
        if record_shapes and event.input_shapes:
            args["Input Dims"] = event.input_shapes
        trace_events.append({"ph": "X", "cat": "user_annotation" if event.is_user_annotation else "cpu_op",
                             "name": event.trace_name, "pid": pid, "tid": event.thread,
                             "ts": base_us + event.time_range.start, "dur": event.time_range.elapsed_us(),
                             "args": args})
    trace = {"schemaVersion": 1, "deviceProperties": [], "trace_id": trace_id, "record_shapes": int(record_shapes),
             **(metadata or {}), "displayTimeUnit": "ms", "baseTimeNanoseconds": base_wall_ns,
             "traceEvents": trace_events, "traceName": str(path)}
    with open(path, "w") as f:
        json.dump(trace, f)


class record_function(ContextDecorator):
    """Labels a block (``with record_function("name"):``) or a function (``@record_function("name")``): while a
    profiler records, the block is one event of that name, around the ops run inside it. Otherwise nothing."""

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self.run_callbacks_on_exit = True
        self.record = None

    def __enter__(self):
        self.record = profiling.Range(self.name)
        self.record.__enter__()
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if not self.run_callbacks_on_exit:
            return None
        if self.record is None:
            raise AssertionError("Expected record to be set")
        self.record.__exit__(exc_type, exc_value, traceback)
        return None


class emit_nvtx:
    """NVIDIA's NVTX ranges need CUDA: refused as PyTorch refuses it without CUDA, once entered."""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled
        self.entered = False
        self.record_shapes = record_shapes

    def __enter__(self):
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError("NVTX annotation context manager is not reentrant")
        self.entered = True
        raise AssertionError("Torch not compiled with CUDA enabled")

    def __exit__(self, exc_type, exc_val, exc_tb):
        return False
