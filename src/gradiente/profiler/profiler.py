"""``torch.profiler.profile`` and its schedule: which steps of a training loop are recorded, and what is done
with each recorded cycle.

A loop calls ``prof.step()`` once per iteration; the schedule turns the step number into an action::

    schedule(wait=1, warmup=1, active=2)    step 0: NONE   1: WARMUP   2: RECORD   3: RECORD_AND_SAVE   4: NONE ...

Recording starts with the first RECORD step and ends after RECORD_AND_SAVE, which hands the profiler to
``on_trace_ready`` (``tensorboard_trace_handler(dir)`` writes the cycle's trace there). Without a schedule every step
is recorded, from entering the profiler to leaving it. Each recorded cycle is one ``autograd.profiler.profile``
(``prof.profiler``), and with a schedule each step is a ``ProfilerStep#N`` range, as in PyTorch.
"""
import enum
import gzip
import os
import shutil
import socket
import tempfile
import time
import warnings

from ..autograd import profiler as _autograd_profiler

__all__ = ["profile", "schedule", "supported_activities", "tensorboard_trace_handler", "ProfilerAction",
           "ProfilerActivity"]


class ProfilerActivity(enum.Enum):
    """What a profiler traces. gradiente computes on the CPU only, so ``CPU`` is the one activity it supports; a
    device activity is accepted and, as on a PyTorch build without that device, nothing is traced for it."""
    CPU = 0
    XPU = 1
    CUDA = 2
    HPU = 3
    MTIA = 4
    PrivateUse1 = 5

    def __int__(self):
        return self.value


def supported_activities():
    """The activities this build can trace: the CPU."""
    return {ProfilerActivity.CPU}


def _parse_activities(activities):
    """``activities``: ProfilerActivity members, or dicts from a member to the names of what to collect of it."""
    parsed, filters = set(), {}
    for item in activities:
        if isinstance(item, ProfilerActivity):
            if item in parsed:
                raise ValueError(f"Activity {item} specified more than once")
            parsed.add(item)
        elif isinstance(item, dict):
            for key, value in item.items():
                if key in parsed:
                    raise ValueError(f"Activity {key} specified more than once")
                parsed.add(key)
                filters[key] = set(value)
        else:
            raise TypeError(f"Expected ProfilerActivity or dict, got {type(item)}")
    return parsed, filters


class _Once:
    """Warnings given once per process, as PyTorch's ``_warn_once``."""
    cleared_events = False


class _KinetoProfile:
    """One recording at a time, started and stopped by hand (``start``, ``stop``); ``profile`` adds the schedule."""

    def __init__(self, *, activities=None, record_shapes=False, profile_memory=False, with_stack=False,
                 with_flops=False, with_modules=False, experimental_config=None, execution_trace_observer=None,
                 acc_events=False, custom_trace_id_callback=None, post_processing_timeout_s=None):
        if activities is not None:
            self.activities, self.activity_filters = _parse_activities(activities)
        else:
            self.activities, self.activity_filters = supported_activities(), {}
        for flag, what in ((profile_memory, "profile_memory"), (with_flops, "with_flops"), (with_stack, "with_stack")):
            if flag:
                raise NotImplementedError(f"gradiente's profiler times ops; it does not measure what {what}=True "
                                          "asks for")
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.experimental_config = experimental_config
        self.execution_trace_observer = execution_trace_observer
        self.acc_events = acc_events
        self.custom_trace_id_callback = custom_trace_id_callback
        self.post_processing_timeout_s = post_processing_timeout_s
        self.profiler = None
        self.use_device = None
        for activity, device in ((ProfilerActivity.CUDA, "cuda"), (ProfilerActivity.XPU, "xpu"),
                                 (ProfilerActivity.MTIA, "mtia"), (ProfilerActivity.HPU, "hpu")):
            if activity in self.activities:
                self.use_device = device
                break
        self._trace_metadata: dict = {}

    def start(self):
        self.prepare_trace()
        self.start_trace()

    def stop(self):
        self.stop_trace()

    def prepare_trace(self):
        if self.profiler is not None and not self.acc_events and not _Once.cleared_events:
            _Once.cleared_events = True
            warnings.warn("Warning: Profiler clears events at the end of each cycle. Only events from the current "
                          "cycle will be reported. To keep events across cycles, set acc_events=True.", stacklevel=2)
        if self.profiler is None or not self.acc_events:
            self.profiler = _autograd_profiler.profile(
                use_cpu=ProfilerActivity.CPU in self.activities, use_device=self.use_device,
                record_shapes=self.record_shapes, with_modules=self.with_modules, use_kineto=True,
                acc_events=self.acc_events, custom_trace_id_callback=self.custom_trace_id_callback,
                post_processing_timeout_s=self.post_processing_timeout_s)
        self.profiler._prepare_trace()

    def start_trace(self):
        if self.execution_trace_observer:
            self.execution_trace_observer.start()
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before starting trace")
        self.profiler._start_trace()
        for flag, key in ((self.record_shapes, "record_shapes"), (self.with_modules, "with_modules")):
            if flag:
                self.add_metadata_json(key, "1")

    def stop_trace(self):
        if self.execution_trace_observer:
            self.execution_trace_observer.stop()
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before stopping trace")
        self.profiler.__exit__(None, None, None)

    def export_chrome_trace(self, path, use_python_export=False):
        """Write the last recorded cycle as a Chrome trace (JSON; gzipped when ``path`` ends in ``.gz``)."""
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before exporting chrome trace")
        self.profiler._trace_metadata = dict(self._trace_metadata)
        if not str(path).endswith(".gz"):
            return self.profiler.export_chrome_trace(path)
        with tempfile.TemporaryDirectory() as folder:
            plain = os.path.join(folder, "trace.json")
            self.profiler.export_chrome_trace(plain)
            with open(plain, "rb") as source, gzip.open(path, "wb") as target:
                shutil.copyfileobj(source, target)
        return None

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        """The events of the last recorded cycle summed per name (see ``EventList.key_averages``)."""
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before getting key averages")
        return self.profiler.key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def events(self):
        """The events of the last recorded cycle, one ``FunctionEvent`` per op call, node or range."""
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before accessing events")
        return self.profiler.function_events

    def add_metadata(self, key, value):
        """A string ``value`` for ``key`` in the trace's top level."""
        self._trace_metadata[key] = value

    def add_metadata_json(self, key, value):
        """``value``, a JSON text, for ``key`` in the trace's top level."""
        import json
        self._trace_metadata[key] = json.loads(value)


class ProfilerAction(enum.Enum):
    """What the schedule asks of a step."""
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """A schedule for ``profile``: skip ``skip_first`` steps, then cycles of ``wait`` steps doing nothing, ``warmup``
    steps and ``active`` recorded steps (the last one RECORD_AND_SAVE), ``repeat`` times (0: for ever). With
    ``skip_first_wait`` the first cycle starts without its wait."""
    def schedule_fn(step):
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        cycle = wait + warmup + active
        if repeat > 0 and step / cycle >= repeat:
            return ProfilerAction.NONE
        in_cycle = step % cycle
        if in_cycle < wait:
            return ProfilerAction.NONE
        if in_cycle < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if in_cycle < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} "
                             f"(need >= 0), active={active} (need > 0), repeat={repeat} (need >= 0), "
                             f"skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)
    return schedule_fn


def _record_every_step(_step):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False, use_python_export=False):
    """An ``on_trace_ready`` that writes each cycle's trace into ``dir_name`` as
    ``{worker_name}.{time in ns}.pt.trace.json`` (``worker_name``: host and process id by default)."""
    def handler_fn(prof):
        nonlocal worker_name
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as e:
                raise RuntimeError("Can't create directory: " + dir_name) from e
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{worker_name}.{time.time_ns()}.pt.trace.json" + (".gz" if use_gzip else "")
        prof.export_chrome_trace(os.path.join(dir_name, file_name), use_python_export=use_python_export)
    return handler_fn


# For each (action of the previous step, action of this one): what the profiler does, in order. None stands for
# leaving the profiler. A warmup ends with a start and a stop in PyTorch too (it collects nothing).
_TRANSITIONS = {
    (ProfilerAction.NONE, ProfilerAction.WARMUP): ("prepare_trace",),
    (ProfilerAction.NONE, ProfilerAction.RECORD): ("prepare_trace", "start_trace"),
    (ProfilerAction.NONE, ProfilerAction.RECORD_AND_SAVE): ("prepare_trace", "start_trace"),
    (ProfilerAction.WARMUP, ProfilerAction.NONE): ("warn:WARMUP", "start_trace", "stop_trace"),
    (ProfilerAction.WARMUP, ProfilerAction.RECORD): ("start_trace",),
    (ProfilerAction.WARMUP, ProfilerAction.RECORD_AND_SAVE): ("start_trace",),
    (ProfilerAction.RECORD, ProfilerAction.NONE): ("warn:RECORD", "stop_trace"),
    (ProfilerAction.RECORD, ProfilerAction.WARMUP): ("warn:RECORD", "stop_trace"),
    (ProfilerAction.RECORD_AND_SAVE, ProfilerAction.NONE): ("stop_trace", "_trace_ready"),
    (ProfilerAction.RECORD_AND_SAVE, ProfilerAction.WARMUP): ("stop_trace", "_trace_ready", "prepare_trace"),
    (ProfilerAction.RECORD_AND_SAVE, ProfilerAction.RECORD): ("stop_trace", "_trace_ready", "prepare_trace",
                                                              "start_trace"),
    (ProfilerAction.RECORD_AND_SAVE, ProfilerAction.RECORD_AND_SAVE): ("stop_trace", "_trace_ready", "prepare_trace",
                                                                       "start_trace"),
    (ProfilerAction.WARMUP, None): ("start_trace", "stop_trace"),
    (ProfilerAction.RECORD, None): ("stop_trace", "_trace_ready"),
    (ProfilerAction.RECORD_AND_SAVE, None): ("stop_trace", "_trace_ready"),
}


class profile(_KinetoProfile):
    """The profiler: ``with profile(activities=[ProfilerActivity.CPU]) as prof: ...``, then
    ``prof.key_averages().table()``, ``prof.events()`` or ``prof.export_chrome_trace(path)``. With ``schedule``,
    only the steps it selects are recorded (``prof.step()`` after each); ``on_trace_ready(prof)`` is called when a
    cycle is complete. ``record_shapes=True`` keeps the ops' input shapes."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False, use_cuda=None,
                 custom_trace_id_callback=None, post_processing_timeout_s=None):
        chosen = set(_parse_activities(activities)[0]) if activities is not None else supported_activities()
        if use_cuda is not None:
            warnings.warn("`use_cuda` is deprecated, use `activities` argument instead", FutureWarning, stacklevel=2)
            if use_cuda:
                chosen.add(ProfilerActivity.CUDA)
            else:
                chosen.discard(ProfilerActivity.CUDA)
        if not chosen:
            raise AssertionError("No valid profiler activities found")
        super().__init__(activities=activities, record_shapes=record_shapes, profile_memory=profile_memory,
                         with_stack=with_stack, with_flops=with_flops, with_modules=with_modules,
                         experimental_config=experimental_config, execution_trace_observer=execution_trace_observer,
                         acc_events=acc_events, custom_trace_id_callback=custom_trace_id_callback,
                         post_processing_timeout_s=post_processing_timeout_s)
        self.schedule = schedule if schedule else _record_every_step
        self.record_steps = bool(schedule)          # with a schedule, each step is a ProfilerStep#N range
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.step_rec_fn = None
        self.current_action = self._action_at(0)

    def _action_at(self, step):
        action = self.schedule(step)
        if action == ProfilerAction.DEVICE_STOPPED:
            raise ValueError("ProfilerAction.DEVICE_STOPPED is set internally by the profiler and must not be "
                             "returned by a user-provided schedule")
        return action

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.stop()
        return False

    def start(self):
        self._transit_action(ProfilerAction.NONE, self.current_action)
        if self.record_steps:
            self.step_rec_fn = _autograd_profiler.record_function(f"ProfilerStep#{self.step_num}")
            self.step_rec_fn.__enter__()

    def stop(self):
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        self._transit_action(self.current_action, None)

    def step(self):
        """The next step begins: do what the schedule says of it."""
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        previous = self.current_action
        action = self._action_at(self.step_num + 1)
        self.step_num += 1
        self.current_action = action
        self._transit_action(previous, action)
        if self.record_steps:
            self.step_rec_fn = _autograd_profiler.record_function(f"ProfilerStep#{self.step_num}")
            self.step_rec_fn.__enter__()

    def _trace_ready(self):
        if self.on_trace_ready:
            self.on_trace_ready(self)

    def _transit_action(self, previous, current):
        for action in _TRANSITIONS.get((previous, current), ()):
            if action.startswith("warn:"):
                warnings.warn(f"Incorrect schedule: {action[5:]} followed by {current.name}", stacklevel=3)
            else:
                getattr(self, action)()

    def get_trace_id(self):
        """The id of the current cycle's trace (None before the first)."""
        return None if self.profiler is None else self.profiler.trace_id
