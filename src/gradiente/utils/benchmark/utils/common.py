"""What a timing holds and how it prints: ``TaskSpec`` (the statement and its labels) and ``Measurement`` (the
times of a ``Timer`` run, its statistics and PyTorch's report), with the small helpers that format times."""
import collections
import contextlib
import dataclasses
import math
import textwrap

import numpy as np

from ...._config import get_num_threads, set_num_threads

__all__ = ["TaskSpec", "Measurement", "select_unit", "unit_to_english", "trim_sigfig", "ordered_unique",
           "set_torch_threads"]

#: the most significant figures ``significant_figures`` claims, and the narrowest confidence interval it assumes
_MOST_FIGURES = 4
_NARROWEST_INTERVAL = 25e-9
#: interquartile range over median above which a measurement warns that it is noisy, and grossly so
_NOISY = 0.1
_VERY_NOISY = 0.25


@dataclasses.dataclass(init=True, repr=False, eq=True, frozen=True)
class TaskSpec:
    """The statement a ``Timer`` runs and the labels it reports it under (everything but the globals)."""
    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self):
        """The label (or the one-line statement), with the sub-label after a colon; a statement of several
        lines is shown indented under ``stmt:``."""
        suffix = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + suffix
        if "\n" not in self.stmt:
            return self.stmt + suffix
        named = f" ({self.sub_label})" if self.sub_label else ""
        return f"stmt:{named}\n{textwrap.indent(self.stmt, '  ')}"

    def setup_str(self):
        if not self.setup or self.setup == "pass":
            return ""
        if "\n" in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f"setup: {self.setup}"

    def summarize(self):
        """The lines that name the task in a measurement's report (a section of several lines ends blank)."""
        sections = [s for s in (self.title, self.description or "", self.setup_str()) if s]
        return "\n".join(s + "\n" if "\n" in s else s for s in sections)


_TASK_FIELDS = tuple(f.name for f in dataclasses.fields(TaskSpec))


def _quantile(ordered, q):
    """The ``q`` quantile, interpolated linearly between the two nearest of the ``ordered`` times."""
    return float(np.quantile(np.asarray(ordered, dtype=np.float64), q))


@dataclasses.dataclass(init=True, repr=False)
class Measurement:
    """The times of one ``Timer`` run: ``raw_times`` holds one total per block of ``number_per_run`` runs."""
    number_per_run: int
    raw_times: list
    task_spec: TaskSpec
    metadata: dict | None = None

    def __post_init__(self):
        self._sorted_times = ()
        self._warnings = ()
        self._median = self._mean = self._p25 = self._p75 = -1.0

    def __getattr__(self, name):
        # the task's fields read through the measurement: m.stmt, m.label ...
        if name in _TASK_FIELDS:
            return getattr(self.task_spec, name)
        return super().__getattribute__(name)

    @property
    def times(self):
        """The time of one run, per block (each block's total over its number of runs)."""
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self):
        self._compute_statistics()
        return self._median

    @property
    def mean(self):
        self._compute_statistics()
        return self._mean

    @property
    def iqr(self):
        self._compute_statistics()
        return self._p75 - self._p25

    @property
    def significant_figures(self):
        """How many figures of the median the spread of the middle half of the times supports (1 to 4)."""
        self._compute_statistics()
        n = len(self._sorted_times)
        middle = self._sorted_times[n // 4:math.ceil(3 * n / 4)]
        spread = float(np.std(np.asarray(middle, dtype=np.float32)))
        interval = max(1.645 * spread / math.sqrt(len(middle)), _NARROWEST_INTERVAL)
        return min(max(math.floor(math.log10(self._median / interval)), 1), _MOST_FIGURES)

    @property
    def has_warnings(self):
        self._compute_statistics()
        return bool(self._warnings)

    def _compute_statistics(self):
        """The median, mean and quartiles, computed once, and the warning a wide spread earns."""
        if not self.raw_times or self._sorted_times:
            return
        self._sorted_times = tuple(sorted(self.times))
        self._median = _quantile(self._sorted_times, 0.5)
        self._mean = float(np.mean(self._sorted_times))
        self._p25 = _quantile(self._sorted_times, 0.25)
        self._p75 = _quantile(self._sorted_times, 0.75)
        if not self.meets_confidence(_VERY_NOISY):
            reason = "This suggests significant environmental influence."
        elif not self.meets_confidence(_NOISY):
            reason = "This could indicate system fluctuation."
        else:
            return
        share = self.iqr / self.median * 100
        self._warnings += (f"  WARNING: Interquartile range is {share:.1f}% of the median measurement.\n"
                           f"           {reason}",)

    def meets_confidence(self, threshold=_NOISY):
        return self.iqr / self.median < threshold

    @property
    def title(self):
        return self.task_spec.title

    @property
    def as_row_name(self):
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self):
        """PyTorch's report: the object, the task, the median (with the quartiles from four blocks on), the
        counts, and any warning."""
        self._compute_statistics()
        n = len(self._sorted_times)
        unit, scale = select_unit(self._median)
        lines = [object.__repr__(self), self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{self._median / scale:.2f} {unit}"]
        if n >= 4:
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} ({self._p25 / scale:.2f} to "
                         f"{self._p75 / scale:.2f})")
        threads = self.task_spec.num_threads
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
                     f"{'per measurement,' if n > 1 else ','} {threads} thread{'s' if threads > 1 else ''}")
        lines.append("\n".join(self._warnings))
        return "\n".join(lines).strip()

    @staticmethod
    def merge(measurements):
        """One measurement per task from replicates: every time, as a block of one run (metadata dropped)."""
        by_task = collections.defaultdict(list)
        for m in measurements:
            by_task[m.task_spec].extend(m.times)
        return [Measurement(number_per_run=1, raw_times=times, task_spec=task, metadata=None)
                for task, times in by_task.items()]


def select_unit(t):
    """The unit (ns, us, ms or s) that shows ``t`` seconds with one to three digits before the point, and its
    size in seconds."""
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(math.floor(math.log10(t)) // 3, "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[unit]


def unit_to_english(u):
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x, n):
    """``x`` rounded to ``n`` significant figures (3.14159, 2 -> 3.1)."""
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    scale = 10 ** (math.ceil(math.log10(abs(x))) - n)
    return float(np.round(np.float32(x / scale)) * scale)


def ordered_unique(elements):
    """The distinct elements, in the order they first come."""
    return list(dict.fromkeys(elements))


@contextlib.contextmanager
def set_torch_threads(n):
    """Run the block with ``n`` threads, then restore the number before."""
    before = get_num_threads()
    try:
        set_num_threads(n)
        yield
    finally:
        set_num_threads(before)
