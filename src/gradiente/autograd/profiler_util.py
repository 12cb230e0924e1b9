"""What a profiler hands back: events (``FunctionEvent``), their averages per name (``FunctionEventAvg``), the list
of either (``EventList``) and its ``table()``, laid out as PyTorch lays it out, column for column.

An event is one range of wall time: an op (``aten::mm``), a node of the backward pass (``MmBackward0`` inside
``autograd::engine::evaluate_function: MmBackward0``) or a ``record_function`` label. Its *total* time is its
whole range; its *self* time is what is left once the ranges inside it (its ``cpu_children``) are taken out, so
the self times of all events add up to the time the profiled code spent in them, each microsecond counted once.
Who is inside whom is read off the ranges afterwards, as PyTorch does: a range nests in the smallest one that
holds it, on the same thread.

Times are in microseconds, as in PyTorch (``cpu_time_total``, ``self_cpu_time_total``, ``cpu_time``: the average
per call), and printed with PyTorch's units: ``17.577us``, ``121.227ms``, ``1.500s``.
"""
import enum
import itertools
import json
import math
from collections import defaultdict
from operator import attrgetter

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "Interval", "DeviceType", "FormattedTimesMixin"]


class DeviceType(enum.IntEnum):
    """Where an event ran (PyTorch's ``torch.autograd.DeviceType``; gradiente runs everything on the CPU)."""
    CPU = 0
    CUDA = 1
    MKLDNN = 2
    OPENGL = 3
    OPENCL = 4
    IDEEP = 5
    HIP = 6
    FPGA = 7
    MAIA = 8
    XLA = 9
    Vulkan = 10
    Metal = 11
    XPU = 12
    MPS = 13
    Meta = 14
    HPU = 15
    VE = 16
    Lazy = 17
    IPU = 18
    MTIA = 19
    PrivateUse1 = 20

    def __str__(self):
        return f"DeviceType.{self.name}"


# --- PyTorch's formats --------------------------------------------------------------------------------------------

def _format_time(time_us):
    """``17.577us``, ``121.227ms``, ``1.500s``: three decimals in the largest unit the time reaches."""
    if time_us >= 1_000_000:
        return f"{time_us / 1_000_000:.3f}s"
    if time_us >= 1000:
        return f"{time_us / 1000:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_in(time_us, unit):
    """``table(time_unit=...)``: every time in one unit ("s", "ms" or "us"); None keeps each in its own."""
    if unit == "s":
        return f"{time_us / 1_000_000:.3f}s"
    if unit == "ms":
        return f"{time_us / 1000:.3f}ms"
    if unit == "us":
        return f"{time_us:.3f}us"
    return _format_time(time_us)


def _format_time_share(time_us, total_us):
    if total_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_us:.2f}%"


def _format_memory(nbytes):
    """``12 B``, ``1.50 KB``, ``3.00 MB``, ``1.00 GB`` (powers of 1024)."""
    for size, unit in ((1024 ** 3, "GB"), (1024 ** 2, "MB"), (1024, "KB")):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


class FormattedTimesMixin:
    """The averages per call and the ``*_str`` forms of an event's times (it has ``*_time_total`` and ``count``)."""

    cpu_time_str = property(lambda self: _format_time(self.cpu_time))
    device_time_str = property(lambda self: _format_time(self.device_time))
    cpu_time_total_str = property(lambda self: _format_time(self.cpu_time_total))
    device_time_total_str = property(lambda self: _format_time(self.device_time_total))
    self_cpu_time_total_str = property(lambda self: _format_time(self.self_cpu_time_total))
    self_device_time_total_str = property(lambda self: _format_time(self.self_device_time_total))

    # (count and the totals are the subclass's: attributes of an average, properties of an event)
    @property
    def cpu_time(self):
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count  # type: ignore[attr-defined]

    @property
    def device_time(self):
        return 0.0 if self.count == 0 else self.device_time_total / self.count  # type: ignore[attr-defined]


class Interval:
    """A range of time, ``start`` and ``end`` in microseconds since the profiler started."""

    def __init__(self, start, end):
        self.start = start
        self.end = end

    def elapsed_us(self):
        return self.end - self.start


# --- one event ----------------------------------------------------------------------------------------------------

class FunctionEvent(FormattedTimesMixin):
    """One recorded range: its ``name``, ``time_range``, ``thread``, the events directly inside it
    (``cpu_children``) and the one it is directly inside (``cpu_parent``)."""

    def __init__(self, id, name, thread, start_us, end_us, fwd_thread=None, input_shapes=None, stack=None, scope=0,
                 use_device=None, cpu_memory_usage=0, device_memory_usage=0, is_async=False, is_remote=False,
                 sequence_nr=-1, node_id=-1, device_type=DeviceType.CPU, device_index=0, is_legacy=False,
                 flops=None, trace_name=None, overload_name=None, is_user_annotation=False):
        self.id = id
        self.node_id = node_id
        self.name = name
        self.overload_name = overload_name
        self.trace_name = name if trace_name is None else trace_name
        self.time_range = Interval(start_us, end_us)
        self.thread = thread
        self.fwd_thread = fwd_thread
        self.kernels: list = []
        self.count = 1
        self.cpu_children: list = []
        self.cpu_parent = None
        self.input_shapes = input_shapes
        self.stack = stack
        self.scope = scope
        self.use_device = use_device
        self.cpu_memory_usage = cpu_memory_usage
        self.device_memory_usage = device_memory_usage
        self.is_async = is_async
        self.is_remote = is_remote
        self.sequence_nr = sequence_nr
        self.device_type = device_type
        self.device_index = device_index
        self.is_legacy = is_legacy
        self.flops = flops
        self.is_user_annotation = is_user_annotation
        self.self_cpu_percent = -1
        self.total_cpu_percent = -1
        self.total_device_percent = -1

    def append_cpu_child(self, child):
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent):
        self.cpu_parent = parent

    @property
    def key(self):
        return self.name

    @property
    def cpu_time_total(self):
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self):
        if self.is_async:
            return 0
        return self.cpu_time_total - sum(child.cpu_time_total for child in self.cpu_children)

    @property
    def self_cpu_memory_usage(self):
        if self.is_async:
            return 0
        return self.cpu_memory_usage - sum(child.cpu_memory_usage for child in self.cpu_children)

    @property
    def device_time_total(self):
        return 0        # no device: gradiente runs on the CPU

    self_device_time_total = device_time_total

    @property
    def self_device_memory_usage(self):
        return 0

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} overload_name={self.overload_name} "
                f"device_type={self.device_type} node_id={self.node_id} cpu_time={self.cpu_time_str} "
                f"start_us={self.time_range.start} end_us={self.time_range.end} "
                f"cpu_children={[child.id for child in self.cpu_children]} {self.use_device}_time="
                f"{self.device_time_str} name={self.name} thread={self.thread} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage} {self.use_device}_memory_usage="
                f"{self.device_memory_usage} is_async={self.is_async} is_remote={self.is_remote} "
                f"seq_nr={self.sequence_nr} is_legacy={self.is_legacy}>")


class FunctionEventAvg(FormattedTimesMixin):
    """The events of one key (a name; with ``group_by_input_shape``, a name and input shapes) summed: times,
    memory and ``count``; ``cpu_time`` is then the average per call."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.node_id = 0
        self.is_async = False
        self.is_remote = False
        self.use_device = None
        self.cpu_time_total = 0
        self.device_time_total = 0
        self.self_cpu_time_total = 0
        self.self_device_time_total = 0
        self.input_shapes = None
        self.overload_name = None
        self.stack = None
        self.scope = None
        self.cpu_memory_usage = 0
        self.device_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.self_device_memory_usage = 0
        self.cpu_children = None
        self.cpu_parent = None
        self.device_type = DeviceType.CPU
        self.is_legacy = False
        self.is_user_annotation = False
        self.flops = 0

    def add(self, other):
        if self.key is None:        # the first event of the key gives what does not add up
            self.key = other.key
            self.node_id = other.node_id
            self.is_async = other.is_async
            self.is_remote = other.is_remote
            self.cpu_parent = other.cpu_parent
            self.cpu_children = other.cpu_children
            self.overload_name = other.overload_name
            self.input_shapes = other.input_shapes
            self.stack = other.stack
            self.scope = other.scope
            self.device_type = other.device_type
            self.is_legacy = other.is_legacy
            self.use_device = other.use_device
            self.is_user_annotation = other.is_user_annotation
        if not isinstance(other, (FunctionEvent, FunctionEventAvg)):
            raise AssertionError("Expected other to be a FunctionEvent or FunctionEventAvg")
        if other.key != self.key:
            raise AssertionError(f"Expected keys to match, but got {other.key} vs {self.key}")
        self.cpu_time_total += other.cpu_time_total
        self.device_time_total += other.device_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.self_device_time_total += other.self_device_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.device_memory_usage += other.device_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.self_device_memory_usage += other.self_device_memory_usage
        self.count += other.count
        if other.flops is not None:
            self.flops = (self.flops or 0) + other.flops
        return self

    def __iadd__(self, other):
        return self.add(other)

    def __repr__(self):
        device = "cuda" if not self.use_device else self.use_device
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
                f"cpu_time={self.cpu_time_str}  self_{device}_time={self.self_device_time_total_str} "
                f"{device}_time={self.device_time_str} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage} {device}_memory_usage={self.device_memory_usage}>")


# --- the list -----------------------------------------------------------------------------------------------------

class EventList(list):
    """A list of events (``prof.events()``) or of their averages (``prof.key_averages()``), with ``table()``."""

    def __init__(self, *args, use_device=None, profile_memory=False, with_flops=False):
        super().__init__(*args)
        self._use_device = use_device
        self._profile_memory = profile_memory
        self._with_flops = with_flops
        self._tree_built = False

    def _build_tree(self):
        self._populate_cpu_children()
        self._remove_dup_nodes()
        self._tree_built = True

    def __str__(self):
        return self.table()

    def _populate_cpu_children(self):
        """Nest each event in the innermost event of its thread whose range holds it: sorted by start (the longer
        first where two start together), the events still open form a stack, innermost on top."""
        by_thread = sorted((e for e in self if not e.is_async), key=attrgetter("thread"))
        for _, events in itertools.groupby(by_thread, key=lambda e: (e.thread, e.node_id)):
            open_events: list = []
            for event in sorted(events, key=lambda e: (e.time_range.start, -e.time_range.end)):
                while open_events:
                    parent = open_events[-1]
                    if event.time_range.start >= parent.time_range.end or event.time_range.end > parent.time_range.end:
                        open_events.pop()       # it ended before this one, or this one outlasts it
                    else:
                        parent.append_cpu_child(event)
                        event.set_cpu_parent(parent)
                        break
                open_events.append(event)

    def _remove_dup_nodes(self):
        """An event that is its parent's only child and has its name is the same call seen twice: merged into
        the parent (PyTorch's rule)."""
        while True:
            duplicates = {i for i, e in enumerate(self) if e.cpu_parent is not None and e.cpu_parent.name == e.name
                          and len(e.cpu_parent.cpu_children) == 1}
            if not duplicates:
                return
            for i in duplicates:
                event = self[i]
                event.cpu_parent.cpu_children = event.cpu_children
                for child in event.cpu_children:
                    child.cpu_parent = event.cpu_parent
            kept = [e for i, e in enumerate(self) if i not in duplicates]
            self.clear()
            self.extend(kept)

    @property
    def self_cpu_time_total(self):
        return sum(event.self_cpu_time_total for event in self)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        """The events as PyTorch's table. ``sort_by``: an attribute, largest first (``cpu_time_total``,
        ``self_cpu_time_total``, ``cpu_time``, ``count``, ``cpu_memory_usage``, ``self_cpu_memory_usage``, ...);
        ``row_limit``: at most that many rows (-1: all); ``top_level_events_only``: only events inside no other;
        ``time_unit``: "s", "ms" or "us" for every time."""
        return _build_table(self, sort_by=sort_by, header=header, row_limit=row_limit,
                            max_src_column_width=max_src_column_width, max_name_column_width=max_name_column_width,
                            max_shapes_column_width=max_shapes_column_width, with_flops=self._with_flops,
                            profile_memory=self._profile_memory, top_level_events_only=top_level_events_only,
                            time_unit=time_unit)

    def export_chrome_trace(self, path):
        """Write the events as a Chrome trace (a JSON list of complete events, ``"ph": "X"``), to open in
        ``chrome://tracing`` or https://ui.perfetto.dev."""
        trace = [{"name": e.trace_name, "ph": "X", "ts": e.time_range.start, "dur": e.time_range.elapsed_us(),
                  "tid": e.thread, "pid": "CPU functions", "args": {}}
                 for e in self if e.trace_name is not None]
        with open(path, "w") as f:
            json.dump(trace, f)

    def key_averages(self, group_by_input_shapes=False, group_by_stack_n=0, group_by_overload_name=False):
        """The events summed per name (and per input shapes with ``group_by_input_shapes``), in the order each
        name first appears: a list of ``FunctionEventAvg``."""
        if not self._tree_built:
            raise AssertionError("Expected tree to be built before calling key_averages")
        stats: dict = defaultdict(FunctionEventAvg)
        for event in self:
            key = [str(event.key), str(event.node_id), str(event.device_type), str(event.is_legacy),
                   str(event.is_user_annotation)]
            if group_by_overload_name:
                key.append(str(event.overload_name))
            if group_by_input_shapes:
                key.append(str(event.input_shapes))
            if group_by_stack_n > 0:
                key += (event.stack or [])[:group_by_stack_n]
            stats[tuple(key)].add(event)
        averages = EventList(stats.values(), use_device=self._use_device, profile_memory=self._profile_memory,
                             with_flops=self._with_flops)
        for average in averages:
            average.stack = (average.stack or [])[:group_by_stack_n]
            if not group_by_input_shapes:
                average.input_shapes = ""
            if not group_by_overload_name:
                average.overload_name = ""
        return averages

    def total_average(self):
        """Every event summed into one ``FunctionEventAvg`` keyed "Total"."""
        total = FunctionEventAvg()
        for event in self:
            total += event
            total.key = None
        total.key = "Total"
        return total


# --- the table ----------------------------------------------------------------------------------------------------

_COLUMN_WIDTH = 12
_SPACING = 2


def _build_table(events, sort_by=None, header=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
                 max_shapes_column_width=80, with_flops=False, profile_memory=False, top_level_events_only=False,
                 time_unit=None):
    """PyTorch's table: a name column as wide as the longest name (at most ``max_name_column_width``), columns of
    12 characters right-aligned, two spaces after each, dashed rules above and below the header and at the end,
    then the sum of the self times."""
    if len(events) == 0:
        return ""
    if sort_by is not None:
        attribute = sort_by.replace("cuda", "device").replace("xpu", "device").replace("privateuse1", "device")
        events = EventList(sorted(events, key=lambda e: getattr(e, attribute), reverse=True),
                           use_device=events._use_device, profile_memory=profile_memory, with_flops=with_flops)
    has_input_shapes = any(e.input_shapes is not None and len(e.input_shapes) > 0 for e in events)
    has_overload_names = any(e.overload_name is not None and len(e.overload_name) > 0 for e in events)
    stacks = [e.stack for e in events if e.stack]

    name_width = max(len(e.key) for e in events) + 4
    if max_name_column_width is not None:
        name_width = min(name_width, max_name_column_width)
    headers = ["Name"] + (["Overload Name"] if has_overload_names else [])
    headers += ["Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
    headers.append("# of Calls")
    append_node_id = any(e.node_id != -1 for e in events)
    if append_node_id:
        headers.append("Node ID")
    widths = [name_width] * (1 + has_overload_names) + [_COLUMN_WIDTH] * (len(headers) - 1 - has_overload_names)
    aligns = [">"] * len(widths)
    if has_input_shapes:
        headers.append("Input Shapes")
        shapes_width = max(len(str(e.input_shapes)) for e in events) + 4
        if max_shapes_column_width is not None:
            shapes_width = min(shapes_width, max_shapes_column_width)
        widths.append(shapes_width)
        aligns.append(">")
    if stacks:
        headers.append("Source Location")
        src_width = max(len(entry) for stack in stacks for entry in stack) + 4
        if max_src_column_width is not None:
            src_width = min(src_width, max_src_column_width)
        widths.append(src_width)
        aligns.append("<")
    flops_scale = None
    if with_flops:
        positive = [e.flops for e in events if e.flops and e.flops > 0]
        if positive:
            flops_scale, flops_header = _flops_unit(min(positive))
            headers.append(f"Total {flops_header}")
            widths.append(_COLUMN_WIDTH)
            aligns.append(">")

    row_format = "".join("{: " + align + str(width) + "}" + " " * _SPACING for align, width in zip(aligns, widths))
    rule = "".join("-" * width + " " * _SPACING for width in widths)
    line_length = sum(width + _SPACING for width in widths) - _SPACING
    total_self = sum(e.self_cpu_time_total for e in events)

    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    if top_level_events_only:
        lines += ["=" * line_length, "This report only display top-level ops statistics"]
    lines += [rule, row_format.format(*headers), rule]
    shown = 0
    for event in events:
        if shown == row_limit:
            break
        if top_level_events_only and event.cpu_parent is not None:
            continue
        shown += 1
        name = event.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        event.self_cpu_percent = _format_time_share(event.self_cpu_time_total, total_self)
        event.total_cpu_percent = _format_time_share(event.cpu_time_total, total_self) if not event.is_async else 0
        row = [name]
        if has_overload_names:
            overload = event.overload_name
            if max_name_column_width is not None and len(overload) >= max_name_column_width - 3:
                overload = overload[:max_name_column_width - 3] + "..."
            row.append(overload)
        row += [event.self_cpu_percent, _format_time_in(event.self_cpu_time_total, time_unit),
                event.total_cpu_percent, _format_time_in(event.cpu_time_total, time_unit),
                _format_time_in(event.cpu_time, time_unit)]
        if profile_memory:
            row += [_format_memory(event.cpu_memory_usage), _format_memory(event.self_cpu_memory_usage)]
        row.append(event.count)
        if append_node_id:
            row.append(event.node_id)
        if has_input_shapes:
            row.append(str(event.input_shapes)[:shapes_width])
        if stacks:
            row.append(_trim_path(event.stack[0], src_width) if event.stack else "")
        if flops_scale is not None:
            row.append("--" if not event.flops or event.flops <= 0 else f"{event.flops * flops_scale:8.3f}")
        lines.append(row_format.format(*row))
        if stacks:
            blank = [""] * (len(headers) - 1)
            for entry in (event.stack or [])[1:]:
                lines.append(row_format.format(*blank, _trim_path(entry, src_width)))
            lines.append(row_format.format(*blank, ""))
    lines += [rule, f"Self CPU time total: {_format_time_in(total_self, time_unit)}"]
    return "".join(line + "\n" for line in lines)


def _trim_path(path, width):
    """A source location too long for its column keeps its end, marked with "..."."""
    if len(path) > width:
        path = path[len(path) - width:]
        if len(path) > 3:
            path = "..." + path[3:]
    return path


def _flops_unit(flops):
    units = ["FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs"]
    power = int(max(0, min(math.log10(flops) / 3, len(units) - 1)))
    return 10 ** (-3.0 * power), units[power]
