"""``Timer``: ``timeit.Timer`` made aware of PyTorch (a warm-up run, a fixed number of threads, the blocks of
runs PyTorch measures in), returning ``Measurement`` objects."""
import enum
import textwrap
import timeit as _timeit_module

import numpy as np

from .... import accelerator
from . import common

__all__ = ["Timer", "timer", "Language"]


def timer():
    """The clock: ``timeit.default_timer``, after waiting for an accelerator's queued work (if there is one)."""
    if accelerator.is_available():
        accelerator.synchronize()
    return _timeit_module.default_timer()


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


def _trimmed(code):
    """The code dedented, without a first empty line or trailing blanks (how the report shows it)."""
    code = textwrap.dedent(code)
    return (code[1:] if code and code[0] == "\n" else code).rstrip()


class Timer:
    """Times ``stmt`` (run after ``setup``, with ``globals``; ``torch`` is always there) on ``num_threads``
    threads. ``label``, ``sub_label``, ``description`` and ``env`` only name the measurement."""

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=timer, globals=None, label=None,
                 sub_label=None, description=None, env=None, num_threads=1, language=Language.PYTHON):
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if language in (Language.CPP, "cpp", "c++"):
            raise NotImplementedError("gradiente times Python statements only: there is no C++ to compile")
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError(f"Invalid language `{language}`.")
        if global_setup:
            raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely this code can simply be "
                             "moved to `setup`.")
        import gradiente  # the package itself, which the statement knows as ``torch``
        self._globals = dict(globals or {})
        self._globals.setdefault("torch", gradiente)
        self._language = Language.PYTHON
        stmt, setup = _trimmed(stmt), _trimmed(setup)
        self._timer = _timeit_module.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = common.TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup, label=label,
                                          sub_label=sub_label, description=description, env=env,
                                          num_threads=num_threads)

    def _timeit(self, number):
        # never zero: the statistics divide by it
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number=1000000):
        """``stmt`` run ``number`` times after a warm-up of a hundredth as many (at least 2): one block."""
        with common.set_torch_threads(self._task_spec.num_threads):
            self._timeit(number=max(int(number // 100), 2))
            return common.Measurement(number_per_run=number, raw_times=[self._timeit(number=number)],
                                      task_spec=self._task_spec)

    def repeat(self, repeat=-1, number=-1):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _measurement_loop(self, number, stop, min_run_time, max_run_time=None, callback=None):
        """Blocks of ``number`` runs until ``min_run_time`` has passed and ``stop(times)`` agrees, or until
        ``max_run_time`` has passed."""
        total, can_stop, times = 0.0, False, []
        with common.set_torch_threads(self._task_spec.num_threads):
            while total < min_run_time or not can_stop:
                spent = self._timeit(number)
                times.append(spent)
                total += spent
                if callback:
                    callback(number, spent)
                can_stop = stop(times)
                if max_run_time and total > max_run_time:
                    break
        return times

    def _block_size(self, min_run_time):
        """Runs per block: grown tenfold until the timer's own overhead is below 1e-4 of a block and a block
        takes a thousandth of ``min_run_time`` (or all of it)."""
        with common.set_torch_threads(self._task_spec.num_threads):
            overhead = float(np.median([self._timeit(0) for _ in range(5)]))
            number = 1
            while True:
                taken = self._timeit(number)
                if overhead / taken <= 1e-4 and taken >= min_run_time / 1000:
                    break
                if taken > min_run_time or number * 10 > 2147483647:
                    break
                number *= 10
        return number

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Blocks of runs, each large enough that timing it costs little, until ``min_run_time`` has passed."""
        number = self._block_size(min_run_time)
        times = self._measurement_loop(number, lambda times: True, min_run_time, callback=callback)
        return common.Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0, callback=None):
        """Like ``blocked_autorange``, but going on (up to ``max_run_time``) until there are more than three
        blocks and their interquartile range is below ``threshold`` of their median."""
        number = self._block_size(min_run_time=0.05)

        def settled(times):
            return len(times) > 3 and common.Measurement(
                number_per_run=number, raw_times=times, task_spec=self._task_spec).meets_confidence(threshold)

        times = self._measurement_loop(number, settled, min_run_time, max_run_time, callback=callback)
        return common.Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)
