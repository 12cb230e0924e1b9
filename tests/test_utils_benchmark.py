"""``torch.utils.benchmark`` (``utils/benchmark/``): the measurements a Timer returns print, and compute their
statistics, as PyTorch's do. Times are given by hand here, so that the two libraries see the same numbers."""
import re

import pytest
import torch.utils.benchmark as torch_benchmark

import gradiente
from gradiente.utils import benchmark

LIBS = {"gradiente": benchmark, "torch": torch_benchmark}


def _printed(m):
    return re.sub(r" at 0x[0-9a-f]+", "", repr(m)).replace("gradiente.", "torch.")


TASKS = [{"stmt": "x + 1", "setup": "pass"},
         {"stmt": "y = x + 1\nz = y * 2", "setup": "x = torch.ones(3)\ny = 2", "label": "add", "sub_label": "small",
              "description": "n=3", "num_threads": 4},
         {"stmt": "y = x + 1\nz = y * 2", "setup": "x = torch.ones(3)", "sub_label": "s"},
         {"stmt": "f(x)", "setup": "x = 1", "label": "call", "env": "A"}]
TIMES = [[3.2e-4], [2.5e-3, 2.4e-3], [1.0e-6, 1.1e-6, 0.9e-6, 1.0e-6], [0.2, 0.3, 0.25, 0.9, 0.22],
         [5.0e-9, 5.1e-9, 5.0e-9, 5.0e-9, 5.2e-9, 5.0e-9], [12.0, 12.5, 11.0, 13.0]]


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("times", TIMES)
@pytest.mark.parametrize("number", [1, 100])
def test_a_measurement_prints_and_summarizes_as_torchs(task, times, number):
    ours, theirs = (lib.Measurement(number, list(times), lib.TaskSpec(**task)) for lib in LIBS.values())
    assert _printed(ours) == _printed(theirs)
    for name in ("median", "mean", "iqr", "times"):
        assert getattr(ours, name) == pytest.approx(getattr(theirs, name), rel=1e-12), name
    for name in ("has_warnings", "significant_figures", "title", "as_row_name", "stmt", "label"):
        assert getattr(ours, name) == getattr(theirs, name), name
    assert ours.meets_confidence(0.2) == theirs.meets_confidence(0.2)


def test_merging_replicates_keeps_every_time_per_task():
    def merged(lib):
        a, b = lib.TaskSpec("x", "pass"), lib.TaskSpec("y", "pass")
        ms = [lib.Measurement(10, [1.0, 2.0], a), lib.Measurement(5, [1.0], b), lib.Measurement(2, [3.0], a)]
        return [(m.stmt, m.number_per_run, m.times) for m in lib.Measurement.merge(ms)]
    assert merged(benchmark) == merged(torch_benchmark)


@pytest.mark.parametrize("t", [3e-10, 2.5e-8, 7e-6, 1e-3, 0.05, 2.0, 150.0])
def test_time_units_and_significant_figures(t):
    assert benchmark.select_unit(t) == torch_benchmark.select_unit(t)
    assert benchmark.trim_sigfig(t * 1.2345678, 3) == pytest.approx(torch_benchmark.trim_sigfig(t * 1.2345678, 3),
                                                                    rel=1e-7)
    assert benchmark.unit_to_english("us") == torch_benchmark.unit_to_english("us")
    assert benchmark.ordered_unique([3, 1, 3, 2, 1]) == torch_benchmark.ordered_unique([3, 1, 3, 2, 1])


def test_timer_runs_the_statement_with_its_setup_and_globals():
    seen = []
    timer = benchmark.Timer("seen.append(torch.ones(2).sum().item() + k)", setup="k = 1",
                            globals={"seen": seen}, label="sum")
    m = timer.timeit(10)
    # a warm-up of two runs (a hundredth of 10, at least 2), then the ten measured ones, each with gradiente
    assert seen == [3.0] * 12 and m.number_per_run == 10 and len(m.raw_times) == 1
    assert isinstance(m, benchmark.Measurement) and m.title == "sum"
    assert benchmark.Timer("x += 1", setup="x = 0").blocked_autorange(min_run_time=0.01).median > 0
    assert len(benchmark.Timer("pass").adaptive_autorange(min_run_time=0.01).raw_times) > 3


def test_timer_keeps_the_threads_it_found():
    before = gradiente.get_num_threads()
    benchmark.Timer("pass", num_threads=1).timeit(3)
    assert gradiente.get_num_threads() == before


@pytest.mark.parametrize("call", [
    lambda lib: lib.Timer(stmt=lambda: None),
    lambda lib: lib.Timer("pass", global_setup="#include <x>"),
    lambda lib: lib.Timer("pass", language="fortran"),
    lambda lib: lib.Timer("pass").repeat(),
    lambda lib: lib.Timer("pass").autorange(),
    lambda lib: lib.trim_sigfig(1.5, 2.5),
])
def test_timer_refuses_as_torch(call):
    with pytest.raises(Exception) as theirs:
        call(torch_benchmark)
    with pytest.raises(type(theirs.value)) as ours:
        call(benchmark)
    assert str(ours.value) == str(theirs.value)
