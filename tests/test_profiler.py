"""The profiler (``torch.profiler``, ``torch.autograd.profiler``), against real PyTorch: the events a small program
records (ops, backward nodes, ``record_function`` ranges) and their names, how they nest and add up, the table's
layout, the Chrome trace, schedules, and that leaving the profiler puts every op back as it was. Timings are
never compared, only their consistency."""
import json
import re
import sys
import types
import warnings

import pytest
import torch as reference

import gradiente
from gradiente.core import profiling

LIBS = [reference, gradiente]


def _program(lib):
    """A small training step: a matmul, an activation, a linear layer, arithmetic, a loss and its backward."""
    lib.manual_seed(0)
    x = lib.randn(8, 4, requires_grad=True)
    w = lib.randn(4, 3, requires_grad=True)
    linear = lib.nn.Linear(3, 2)
    return lambda: (lib.nn.functional.relu(x @ w).sum(), linear(lib.relu(x @ w)).mul(2).add(1).sum().backward())


def _profiled(lib, fn, **kwargs):
    with lib.profiler.profile(activities=[lib.profiler.ProfilerActivity.CPU], **kwargs) as prof:
        fn()
    return prof


def _top_level(events):
    return [e.name for e in events if e.cpu_parent is None]


# --- what is recorded -------------------------------------------------------------------------------------------

def test_the_programs_top_level_events_are_pytorchs():
    names = {}
    for lib in LIBS:
        prof = _profiled(lib, _program(lib))
        # PyTorch's engine makes the implicit gradient of backward() with an op of its own (aten::ones_like)
        names[lib] = [n for n in _top_level(prof.events()) if n != "aten::ones_like"]
    assert names[gradiente] == names[reference]


@pytest.mark.parametrize("case", ["matmul", "linear", "operators", "reductions", "creation", "losses"])
def test_top_level_op_names_match_pytorch(case):
    def program(lib):
        x = lib.ones(4, 3)
        idx = lib.tensor([0, 2])
        target = lib.tensor([0, 1, 2, 0])
        linear = lib.nn.Linear(3, 2)
        functional = lib.nn.functional
        return {
            "matmul": lambda: (x @ x.t(), lib.matmul(x, x.t()), x @ lib.ones(3)),
            "linear": lambda: linear(x),
            "operators": lambda: (x - 1, 1 - x, 1 / x, x / 2, x ** 2, -x, x[0], x[:, 1], x[idx], x.multiply(x),
                                  abs(x), x == x.clone(), x < 0, x.reshape(12), x.view(12)),
            "reductions": lambda: (x.sum(), x.sum(dim=0), x.mean(), x.max(), x.argmax(dim=1), lib.cat([x, x])),
            "creation": lambda: (lib.zeros(3), lib.arange(3), lib.ones(2).exp_(), x.clone(), x.to(lib.float64)),
            "losses": lambda: (functional.softmax(x, 1), functional.log_softmax(x, 1), functional.relu(x),
                               functional.cross_entropy(x, target), lib.sigmoid(x)),
        }[case]
    found = {}
    for lib in LIBS:
        fn = program(lib)                       # the inputs are made before profiling starts
        found[lib] = _top_level(_profiled(lib, fn).events())
    assert found[gradiente] == found[reference]


def test_ops_nest_as_in_pytorch():
    """An op calling another op by name shows it inside: matmul around mm, linear around t and addmm."""
    for lib in LIBS:
        x, linear = lib.ones(4, 3), lib.nn.Linear(3, 2)
        prof = _profiled(lib, lambda x=x, linear=linear: (x @ x.t(), linear(x)))
        children = {e.name: [c.name for c in e.cpu_children] for e in prof.events() if e.cpu_parent is None}
        assert children["aten::matmul"] == ["aten::mm"]
        assert children["aten::linear"] == ["aten::t", "aten::addmm"]


def test_backward_nodes_are_wrapped_in_evaluate_function_events():
    for lib in LIBS:
        x = lib.randn(3, 4, requires_grad=True)
        w = lib.randn(4, 2, requires_grad=True)
        prof = _profiled(lib, lambda x=x, w=w: (x @ w).sum().backward())
        backward = [(e.name, e.cpu_parent.name if e.cpu_parent else None) for e in prof.events()
                    if "Backward" in e.name or "AccumulateGrad" in e.name]
        assert backward == [
            ("autograd::engine::evaluate_function: SumBackward0", None),
            ("SumBackward0", "autograd::engine::evaluate_function: SumBackward0"),
            ("autograd::engine::evaluate_function: MmBackward0", None),
            ("MmBackward0", "autograd::engine::evaluate_function: MmBackward0"),
        ] + [("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", None),
             ("torch::autograd::AccumulateGrad",
              "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad")] * 2
        nodes = [e for e in prof.events() if e.name in ("SumBackward0", "MmBackward0")]
        assert all(e.scope == 1 and e.sequence_nr >= 0 for e in nodes)     # RecordScope.BACKWARD_FUNCTION


def test_record_function_labels_a_block_and_a_function():
    for lib in LIBS:
        @lib.profiler.record_function("decorated")
        def double(t):
            return t * 2

        x = lib.ones(3)
        with lib.profiler.profile() as prof:
            with lib.profiler.record_function("block"):
                y = x.exp()
            double(y)
        events = {e.name: e for e in prof.events()}
        assert [c.name for c in events["block"].cpu_children] == ["aten::exp"]
        assert [c.name for c in events["decorated"].cpu_children] == ["aten::mul"]
        assert events["block"].is_user_annotation and events["block"].scope == 7


def test_record_function_outside_a_profiler_records_nothing_and_passes_exceptions():
    for lib in LIBS:
        with lib.autograd.profiler.record_function("nobody listens"):
            pass
        with (pytest.raises(ValueError, match="boom"), lib.profiler.profile() as prof,
              lib.profiler.record_function("failing")):
            raise ValueError("boom")
        assert [e.name for e in prof.events()] == ["failing"]


def test_optimizer_steps_are_ranges_named_as_pytorch_names_them():
    for lib in LIBS:
        linear = lib.nn.Linear(3, 2)
        optimizer = lib.optim.SGD(linear.parameters(), lr=0.1)
        linear(lib.ones(1, 3)).sum().backward()
        prof = _profiled(lib, lambda optimizer=optimizer: (optimizer.step(), optimizer.zero_grad()))
        assert _top_level(prof.events()) == ["Optimizer.step#SGD.step", "Optimizer.zero_grad#SGD.zero_grad"]


def test_record_shapes_keeps_input_shapes():
    for lib in LIBS:
        x, w = lib.ones(5, 4), lib.ones(4, 3)
        prof = _profiled(lib, lambda lib=lib, x=x, w=w: lib.mm(x, w), record_shapes=True)
        (event,) = [e for e in prof.events() if e.name == "aten::mm"]
        assert event.input_shapes == [[5, 4], [4, 3]]
        (average,) = [a for a in prof.key_averages(group_by_input_shape=True) if a.key == "aten::mm"]
        assert average.input_shapes == [[5, 4], [4, 3]]
        assert "Input Shapes" in prof.key_averages(group_by_input_shape=True).table()


# --- times: consistent, never compared ----------------------------------------------------------------------------

def test_self_times_are_the_totals_less_the_children_and_add_up():
    prof = _profiled(gradiente, _program(gradiente))
    events = prof.events()
    for event in events:
        assert 0 <= event.self_cpu_time_total <= event.cpu_time_total
        assert event.self_cpu_time_total == pytest.approx(
            event.cpu_time_total - sum(c.cpu_time_total for c in event.cpu_children))
        for child in event.cpu_children:
            assert event.time_range.start <= child.time_range.start <= child.time_range.end <= event.time_range.end
    top = sum(e.cpu_time_total for e in events if e.cpu_parent is None)
    assert prof.key_averages().self_cpu_time_total == pytest.approx(top)
    assert events.self_cpu_time_total == pytest.approx(top)


def test_key_averages_sum_the_calls_of_each_name():
    x = gradiente.ones(3)
    prof = _profiled(gradiente, lambda: [x.exp() for _ in range(5)])
    (average,) = prof.key_averages()
    calls = [e for e in prof.events() if e.name == "aten::exp"]
    assert (average.key, average.count) == ("aten::exp", 5)
    assert average.cpu_time_total == pytest.approx(sum(e.cpu_time_total for e in calls))
    assert average.cpu_time == pytest.approx(average.cpu_time_total / 5)
    assert prof.profiler.total_average().count == 5


# --- the table ----------------------------------------------------------------------------------------------------

_TIME = r"\d+\.\d{3}(us|ms|s)"
_ROW = re.compile(rf"^ *\S.*  +(\d+\.\d\d%|NaN)  +{_TIME}  +(\d+\.\d\d%|NaN)  +{_TIME}  +{_TIME}  +\d+  $")


def _shape(table):
    """What must not differ: the rules, the header, each row's pattern, the footer, and the column widths."""
    lines = table.split("\n")
    assert lines[-1] == ""
    rule, header, rule2, *rows, rule3, footer, _ = lines
    assert rule == rule2 == rule3 and set(rule) <= {"-", " "}
    assert all(_ROW.match(row) for row in rows), rows
    assert re.fullmatch(rf"Self CPU time total: {_TIME}", footer)
    widths = [len(run) for run in rule.split("  ") if run]
    assert all(len(row) == len(rule) for row in [header, *rows])
    return header, widths[1:], len(rows)


@pytest.mark.parametrize("sort_by", [None, "cpu_time_total", "self_cpu_time_total", "count", "cpu_time"])
def test_table_layout_is_pytorchs(sort_by):
    shapes = {}
    for lib in LIBS:
        prof = _profiled(lib, _program(lib))
        table = prof.key_averages().table(sort_by=sort_by, row_limit=5)
        shapes[lib] = _shape(table)
        averages = prof.key_averages()
        if sort_by is not None:
            values = [getattr(a, sort_by) for a in sorted(averages, key=lambda a: getattr(a, sort_by), reverse=True)]
            shown = [float(line.split()[-1]) if sort_by == "count" else None for line in table.split("\n")[3:8]]
            assert sort_by != "count" or shown == values[:5]
    assert shapes[gradiente][0] == shapes[reference][0]         # the header, to the space
    assert shapes[gradiente][1] == shapes[reference][1] == [12] * 6
    assert shapes[gradiente][2] == shapes[reference][2] == 5    # row_limit


def test_table_name_column_is_as_wide_as_the_longest_name_up_to_55():
    x = gradiente.ones(2)
    prof = _profiled(gradiente, lambda: x.exp())  # noqa: PLW0108 - x.exp looked up while the profiler records
    assert prof.key_averages().table().split("\n")[0].startswith("-" * len("aten::exp    ") + "  ")
    prof = _profiled(gradiente, _program(gradiente))
    table = prof.key_averages().table(row_limit=-1)
    assert table.split("\n")[0].startswith("-" * 55 + "  ")
    assert "autograd::engine::evaluate_function: torch::autograd..." in table   # cut at 52, as PyTorch cuts it


def test_table_options_and_errors_match_pytorch():
    for lib in LIBS:
        prof = _profiled(lib, lambda lib=lib: lib.ones(2).exp())
        averages = prof.key_averages()
        with pytest.raises(AttributeError, match="'FunctionEventAvg' object has no attribute 'bogus'"):
            averages.table(sort_by="bogus")
        assert averages.table(row_limit=0).count("\n") == 5
        assert re.search(r"Self CPU time total: \d+\.\d{3}ms", averages.table(time_unit="ms"))
        assert "This report only display top-level ops statistics" in averages.table(top_level_events_only=True)
        assert str(averages) == averages.table()


def test_time_formats_are_pytorchs():
    from torch.autograd.profiler_util import _format_memory as memory
    from torch.autograd.profiler_util import _format_time as time
    from torch.autograd.profiler_util import _format_time_share as share

    from gradiente.autograd.profiler_util import _format_memory, _format_time, _format_time_share
    for us in (0.0, 17.577, 999.9994, 1000.0, 121227.0, 2_500_000.0):
        assert _format_time(us) == time(us)
    assert _format_time_share(1.0, 3.0) == share(1.0, 3.0)
    for nbytes in (0, 12, 2048, 3 * 1024 ** 2, -5 * 1024 ** 3):
        assert _format_memory(nbytes) == memory(nbytes)


# --- traces and schedules -----------------------------------------------------------------------------------------

def test_chrome_trace_is_json_with_the_events(tmp_path):
    for lib in LIBS:
        prof = _profiled(lib, _program(lib), record_shapes=True)
        path = tmp_path / f"{lib.__name__}.json"
        prof.export_chrome_trace(str(path))
        trace = json.loads(path.read_text())
        complete = [e for e in trace["traceEvents"] if e["ph"] == "X"]
        assert {"ph", "cat", "name", "pid", "tid", "ts", "dur", "args"} <= set(complete[0])
        names = {e["name"] for e in complete}
        assert {"aten::matmul", "aten::mm", "aten::linear", "autograd::engine::evaluate_function: MmBackward0",
                "MmBackward0", "torch::autograd::AccumulateGrad"} <= names
        assert {e["cat"] for e in complete} >= {"cpu_op"}
        assert trace["schemaVersion"] == 1 and trace["traceName"] == str(path)


def test_event_list_chrome_trace_is_a_json_list(tmp_path):
    x = gradiente.ones(2)
    prof = _profiled(gradiente, lambda: x.exp())  # noqa: PLW0108 - x.exp looked up while the profiler records
    path = tmp_path / "events.json"
    prof.events().export_chrome_trace(str(path))
    (event,) = json.loads(path.read_text())
    assert (event["name"], event["ph"], event["pid"]) == ("aten::exp", "X", "CPU functions")


def test_schedule_actions_are_pytorchs():
    for arguments in ({"wait": 1, "warmup": 1, "active": 2}, {"wait": 0, "warmup": 1, "active": 1, "repeat": 2},
                      {"wait": 2, "warmup": 1, "active": 3, "skip_first": 3, "skip_first_wait": 1}):
        mine, theirs = gradiente.profiler.schedule(**arguments), reference.profiler.schedule(**arguments)
        assert [mine(s).name for s in range(20)] == [theirs(s).name for s in range(20)]
    for lib in LIBS:
        with pytest.raises(AssertionError, match="Invalid profiler schedule arguments"):
            lib.profiler.schedule(wait=0, warmup=0, active=0)
        with pytest.warns(UserWarning, match="Profiler won't be using warmup"):
            lib.profiler.schedule(wait=0, warmup=0, active=1)


def test_a_scheduled_profile_records_the_active_steps_and_hands_each_cycle_over(tmp_path):
    steps = {}
    for lib in LIBS:
        ready = []
        x = lib.ones(2)
        with lib.profiler.profile(schedule=lib.profiler.schedule(wait=1, warmup=1, active=2, repeat=1),
                                  on_trace_ready=lambda p, ready=ready: ready.append(_top_level(p.events()))) as prof:
            for _ in range(6):
                x.exp()
                prof.step()
        steps[lib] = ready
    # each step a range; in the events (and the table) all steps have one name, "ProfilerStep*"
    assert steps[gradiente] == steps[reference] == [["ProfilerStep*", "ProfilerStep*"]]


def test_tensorboard_trace_handler_writes_a_trace_per_cycle(tmp_path):
    x = gradiente.ones(2)
    handler = gradiente.profiler.tensorboard_trace_handler(str(tmp_path / "logs"), worker_name="worker")
    with gradiente.profiler.profile(schedule=gradiente.profiler.schedule(wait=0, warmup=1, active=1, repeat=2),
                                    on_trace_ready=handler) as prof:
        for _ in range(4):
            x.exp()
            prof.step()
    files = sorted((tmp_path / "logs").iterdir())
    assert len(files) == 2 and all(re.fullmatch(r"worker\.\d+\.pt\.trace\.json", f.name) for f in files)
    steps = [[e["name"] for e in json.loads(f.read_text())["traceEvents"] if e["name"].startswith("Profiler")]
             for f in files]
    assert steps == [["ProfilerStep#1"], ["ProfilerStep#3"]]       # the trace keeps each step's number


# --- on, off, and back as it was ----------------------------------------------------------------------------------

def _namespaces():
    return {name: dict(vars(module)) for name, module in list(sys.modules.items())
            if module is not None and (name == "gradiente" or name.startswith("gradiente."))}


def _same(before):
    return all(vars(sys.modules[name]).get(key) is value for name, names in before.items()
               for key, value in names.items())


def test_leaving_the_profiler_puts_every_op_back():
    import gradiente.nn.functional
    methods, namespaces = dict(vars(gradiente.Tensor)), _namespaces()
    with gradiente.profiler.profile():
        assert gradiente.Tensor.add is not methods["add"] and gradiente.mm is not namespaces["gradiente"]["mm"]
        assert gradiente.Tensor.add is gradiente.add            # aliases stay one object while swapped
        gradiente.ones(2).add(1)
    assert all(vars(gradiente.Tensor)[name] is value for name, value in methods.items())
    assert _same(namespaces)
    assert profiling.state.session is None


def test_an_exception_inside_the_profiler_puts_every_op_back():
    methods, namespaces = dict(vars(gradiente.Tensor)), _namespaces()
    with pytest.raises(RuntimeError), gradiente.autograd.profiler.profile():
        gradiente.mm(gradiente.ones(2, 3), gradiente.ones(2, 3))       # shapes that cannot be multiplied
    assert all(vars(gradiente.Tensor)[name] is value for name, value in methods.items())
    assert _same(namespaces)
    assert profiling.state.session is None


def test_wrappers_keep_the_ops_names_docs_and_signatures():
    import inspect
    original = gradiente.mm
    with gradiente.profiler.profile():
        assert gradiente.mm is not original and gradiente.mm.__wrapped__ is original
        assert (gradiente.mm.__name__, gradiente.mm.__doc__) == (original.__name__, original.__doc__)
        assert inspect.signature(gradiente.Tensor.add) == inspect.signature(gradiente.ops.arithmetic.add)


def test_nothing_is_recorded_when_disabled_or_after_leaving():
    for lib in LIBS:
        x = lib.ones(2)
        with lib.autograd.profiler.profile(enabled=False) as prof:
            x.exp()
        assert prof is None
        with lib.profiler.profile() as prof:
            pass
        x.exp()
        assert list(prof.events()) == []


def test_backward_walks_take_the_plain_loop_when_no_profiler_records(monkeypatch):
    made = []
    original = profiling.TimedSteps.__init__

    def spy(self, *args):
        made.append(1)
        original(self, *args)
    monkeypatch.setattr(profiling.TimedSteps, "__init__", spy)
    x = gradiente.ones(2, requires_grad=True)
    (x * 2).sum().backward()
    assert made == []
    with gradiente.profiler.profile():
        (x * 2).sum().backward()
    assert made == [1]


def test_a_profile_is_not_reentrant_and_a_nested_one_takes_over():
    for lib in LIBS:
        prof = lib.autograd.profiler.profile()
        with prof, pytest.raises(RuntimeError, match="Profiler context manager is not reentrant"):
            prof.__enter__()
        x = lib.ones(2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.profiler.profile() as outer:
                x.exp()
                with lib.profiler.profile() as inner:
                    x.log()
                x.sin()
        assert [e.name for e in outer.events()] == []
        assert [e.name for e in inner.events()] == ["aten::log"]
    assert profiling.state.session is None


def test_activities_and_device_options_as_on_a_cpu_only_pytorch():
    for lib in LIBS:
        activity = lib.profiler.ProfilerActivity
        assert lib.profiler.supported_activities() == {activity.CPU}
        assert repr(activity.CPU) == "<ProfilerActivity.CPU: 0>" and str(activity.CPU) == "ProfilerActivity.CPU"
        with (pytest.warns(UserWarning, match="CUDA is not available, disabling CUDA profiling"),
              lib.profiler.profile(activities=[activity.CPU, activity.CUDA]) as prof):
            lib.ones(2).exp()
        assert "aten::exp" in _top_level(prof.events())
        with pytest.raises(AssertionError, match="No valid profiler activities found"):
            lib.profiler.profile(activities=[])
        with pytest.raises(ValueError, match="specified more than once"):
            lib.profiler.profile(activities=[activity.CPU, activity.CPU])
        with pytest.warns(FutureWarning, match="The attribute `use_cuda` will be deprecated soon"):
            lib.autograd.profiler.profile(use_cuda=True)
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"), \
                lib.autograd.profiler.emit_nvtx():
            pass
    assert {m: int(v) for m, v in gradiente.profiler.ProfilerActivity.__members__.items()} == {
        m: int(v) for m, v in reference.profiler.ProfilerActivity.__members__.items()}


def test_what_is_not_measured_is_refused():
    for flag in ("profile_memory", "with_flops", "with_stack"):
        with pytest.raises(NotImplementedError, match=flag):
            gradiente.profiler.profile(**{flag: True})
        with pytest.raises(NotImplementedError, match=flag):
            gradiente.autograd.profiler.profile(**{flag: True})


def test_a_profile_before_entering_is_unfinished_and_empty():
    for lib in LIBS:
        prof = lib.autograd.profiler.profile()
        assert repr(prof) == "<unfinished torch.autograd.profile>"
        assert list(prof.key_averages()) == []


def test_results_are_pytorchs_types():
    prof = _profiled(gradiente, lambda: gradiente.ones(2).exp())
    from gradiente.autograd.profiler_util import EventList, FunctionEvent, FunctionEventAvg
    assert isinstance(prof.events(), EventList) and isinstance(prof.events()[0], FunctionEvent)
    assert isinstance(prof.key_averages()[0], FunctionEventAvg)
    assert gradiente.autograd.DeviceType.CPU == 0 and prof.events()[0].device_type == gradiente.profiler.DeviceType.CPU
    assert re.fullmatch(r"<FunctionEventAvg key=aten::ones self_cpu_time=\S+ cpu_time=\S+  self_cuda_time=0.000us "
                        r"cuda_time=0.000us input_shapes= cpu_memory_usage=0 cuda_memory_usage=0>",
                        repr(prof.key_averages()[0]))


def test_importing_gradiente_does_not_load_the_profiler():
    import subprocess
    code = ("import sys, gradiente; print(any(m.startswith(('gradiente.profiler', 'gradiente.autograd.profiler'))"
            " for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
    assert isinstance(gradiente.profiler, types.ModuleType)
