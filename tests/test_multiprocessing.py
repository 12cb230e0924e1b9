"""gradiente.multiprocessing: shared memory across fork and spawn, spawn's error reports against PyTorch's, and a
small hogwild training. Children are few and short, for a 2-core machine."""
import re
from multiprocessing.reduction import ForkingPickler

import mp_workers
import pytest
import torch
import torch.multiprocessing as torch_mp

import gradiente
import gradiente.multiprocessing as mp

fork = mp.get_context("fork")


def test_the_standard_library_api_is_there():
    assert sorted(mp.__all__) == sorted(torch_mp.__all__)
    for name in ("get_context", "Queue", "Pool", "set_start_method", "get_start_method", "cpu_count", "Event"):
        assert getattr(mp, name) is getattr(torch_mp, name)


def test_sharing_strategies_match_torch():
    assert mp.get_all_sharing_strategies() == torch_mp.get_all_sharing_strategies()
    assert mp.get_sharing_strategy() == torch_mp.get_sharing_strategy()
    messages = []
    for lib in (mp, torch_mp):
        with pytest.raises(AssertionError) as info:
            lib.set_sharing_strategy("telepathy")
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_share_memory_keeps_the_tensor_and_its_views():
    x = gradiente.arange(6.0).reshape(2, 3)
    column, transposed, data = x[:, 1], x.t(), x.data
    assert x.share_memory_() is x
    x[0, 1] = 100.0
    assert column.tolist() == [100.0, 4.0] and transposed[1].tolist() == [100.0, 4.0] and data[0, 1].item() == 100
    assert column.is_shared() and x.is_shared() and not gradiente.zeros(2).is_shared()


def test_a_forked_child_and_the_parent_see_each_others_writes():
    model = gradiente.nn.Linear(3, 2)
    weight = model.weight
    assert model.share_memory() is model and model.weight is weight and model.bias.is_shared()
    child = fork.Process(target=mp_workers.add_to_weight, args=(model, 1.0))
    before = model.weight.detach().clone()
    child.start()
    child.join()
    assert child.exitcode == 0
    assert gradiente.equal(model.weight.detach(), before + 1.0)
    # and the other way: the parent writes after the child started
    event, queue = fork.Event(), fork.SimpleQueue()
    child = fork.Process(target=mp_workers.report_after, args=(event, queue, model.bias))
    child.start()
    with gradiente.no_grad():
        model.bias.fill_(5.0)
    event.set()
    assert queue.get() == [5.0, 5.0]
    child.join()


def test_a_tensor_sent_through_a_queue_is_shared_not_copied():
    queue, event, answers = fork.Queue(), fork.Event(), fork.SimpleQueue()
    t = gradiente.zeros(3)
    queue.put(t)                  # sending moves t into shared memory
    received = queue.get(timeout=10)
    assert received is not t
    child = fork.Process(target=mp_workers.report_after, args=(event, answers, t[1:]))
    child.start()
    received[2] = 7.0             # the received tensor maps the memory that t and the child see
    event.set()
    assert answers.get() == [0.0, 7.0] and t.tolist() == [0.0, 0.0, 7.0] and received.is_shared()
    child.join()


def test_a_spawned_child_gets_the_shared_parameters():
    model = gradiente.nn.Linear(2, 2).share_memory()
    before = model.weight.detach().clone()
    child = mp.get_context("spawn").Process(target=mp_workers.add_to_weight, args=(model, 2.0))
    child.start()
    child.join()
    assert child.exitcode == 0
    assert gradiente.equal(model.weight.detach(), before + 2.0)


def test_non_leaf_tensors_are_refused_as_torch_refuses_them():
    messages = []
    for lib in (gradiente, torch):
        x = lib.ones(2, requires_grad=True) * 2
        with pytest.raises(RuntimeError) as info:
            ForkingPickler.dumps(x)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def _without_wrap_frame(message):
    # the first frame is each library's own _wrap, in its own file
    return re.sub(r'File "[^"]+", line \d+, in _wrap', "File <spawn.py>, in _wrap", message)


def test_a_childs_exception_comes_back_as_torch_reports_it():
    # both children fail; which one is reported first is a race, in either library: each report must name the child
    # its error_index gives, and the two reports must agree but for that child's rank
    reports = []
    for lib in (mp, torch_mp):
        with pytest.raises(lib.ProcessRaisedException) as info:
            lib.start_processes(mp_workers.fail, nprocs=2, start_method="fork")
        rank = info.value.error_index
        report = _without_wrap_frame(str(info.value))
        assert rank in (0, 1)
        assert report.startswith(f"\n\n-- Process {rank} terminated") and f"ValueError: rank {rank} failed" in report
        reports.append(report.replace(f"Process {rank} ", "Process R ").replace(f"rank {rank} ", "rank R "))
    assert reports[0] == reports[1]


def test_spawn_reports_a_childs_exception():
    with pytest.raises(mp.ProcessRaisedException) as info:
        mp.spawn(mp_workers.fail, nprocs=1)
    assert str(info.value).startswith("\n\n-- Process 0 terminated with the following error:\nTraceback")
    assert str(info.value).endswith("ValueError: rank 0 failed\n") and info.value.error_index == 0


def test_an_exit_code_comes_back_as_torch_reports_it():
    messages = []
    for lib in (mp, torch_mp):
        with pytest.raises(lib.ProcessExitedException) as info:
            lib.start_processes(mp_workers.exit_with_code, start_method="fork")
        messages.append((str(info.value), info.value.exit_code))
    assert messages[0] == messages[1] == ("process 0 terminated with exit code 3", 3)


def test_spawn_with_another_start_method_warns_as_torch_does():
    with pytest.warns(FutureWarning, match="only supports start_method=spawn"):
        context = mp.spawn(mp_workers.add_to_weight, args=(0.0,), nprocs=0, join=False, start_method="fork")
    assert context.join() is True


def test_hogwild_training_converges():
    gradiente.manual_seed(0)
    inputs = gradiente.randn(64, 3)
    targets = inputs @ gradiente.tensor([[1.0], [-2.0], [0.5]]) + 0.3
    model = gradiente.nn.Linear(3, 1).share_memory()
    with gradiente.no_grad():
        start_loss = ((model(inputs) - targets) ** 2).mean().item()
    workers = [fork.Process(target=mp_workers.hogwild_train, args=(rank, model, inputs, targets, 150))
               for rank in range(2)]
    for p in workers:
        p.start()
    for p in workers:
        p.join()
    assert [p.exitcode for p in workers] == [0, 0]
    with gradiente.no_grad():
        end_loss = ((model(inputs) - targets) ** 2).mean().item()
    assert end_loss < 1e-3 < start_loss
