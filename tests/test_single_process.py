"""What single-process scripts import around autograd: ``torch.distributed``, ``nn.DataParallel`` and
``DistributedDataParallel``, ``DistributedSampler``, ``torch.onnx``, ``torch.compile``, ``nn.attention`` and
``__version__``, compared with the installed PyTorch where gradiente answers as it does."""
import pytest
import torch
from harness import on_both
from packaging.version import Version, parse

import gradiente

NOT_INITIALIZED = ("raised", "ValueError", "Default process group has not been initialized, please make sure to "
                                           "call init_process_group.")


# --- torch.distributed -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda lib: lib.distributed.is_initialized(), lambda lib: lib.distributed.is_torchelastic_launched(),
    lambda lib: lib.distributed.is_nccl_available(), lambda lib: lib.distributed.is_mpi_available(),
    lambda lib: lib.distributed.get_rank(), lambda lib: lib.distributed.get_world_size(),
    lambda lib: lib.distributed.get_backend(), lambda lib: lib.distributed.barrier(),
    lambda lib: lib.distributed.all_reduce(lib.ones(1)), lambda lib: lib.distributed.broadcast(lib.ones(1), 0),
    lambda lib: lib.distributed.destroy_process_group(), lambda lib: repr(lib.distributed.ReduceOp.SUM),
    lambda lib: [repr(lib.distributed.ReduceOp.AVG), repr(lib.distributed.ReduceOp.MAX)],
    lambda lib: lib.nn.parallel.DistributedDataParallel(lib.nn.Linear(2, 1)),
])
def test_distributed_without_a_process_group_as_in_pytorch(call):
    on_both(call)


def test_distributed_says_gradiente_runs_in_one_process():
    """PyTorch's Linux builds can start process groups (is_available() True, gloo); gradiente cannot."""
    assert not gradiente.distributed.is_available() and not gradiente.distributed.is_gloo_available()
    with pytest.raises(RuntimeError, match=r"gradiente runs in one process.*state_dict.*PyTorch"):
        gradiente.distributed.init_process_group("gloo", rank=0, world_size=1)


def test_the_usual_ddp_guard_takes_the_single_process_path():
    for lib in (gradiente, torch):
        ddp = lib.distributed.is_available() and lib.distributed.is_initialized()
        assert not ddp


# --- DataParallel --------------------------------------------------------------------------------------------

def test_data_parallel_without_gpus_wraps_and_calls_the_module_as_pytorch_does():
    def scenario(lib):
        lib.manual_seed(0)
        model = lib.nn.Linear(3, 2)
        wrapped = lib.nn.DataParallel(model, device_ids=[0, 1])
        out = wrapped(lib.ones(4, 3))
        out.sum().backward()
        return (repr(wrapped), list(wrapped.state_dict()), wrapped.device_ids, wrapped.module is model,
                out.tolist(), model.weight.grad.tolist(), lib.nn.parallel.DataParallel is lib.nn.DataParallel)
    on_both(scenario)


# --- DistributedSampler ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("size", [0, 1, 7, 10, 12, 100])
@pytest.mark.parametrize("replicas", [1, 3, 4])
@pytest.mark.parametrize("shuffle", [True, False])
@pytest.mark.parametrize("drop_last", [True, False])
def test_distributed_sampler_gives_pytorchs_indices(size, replicas, shuffle, drop_last):
    def scenario(lib):
        shares = []
        for rank in range(replicas):
            sampler = lib.utils.data.distributed.DistributedSampler(
                range(size), num_replicas=replicas, rank=rank, shuffle=shuffle, seed=5, drop_last=drop_last)
            epochs = []
            for epoch in range(3):
                sampler.set_epoch(epoch)
                epochs.append(list(sampler))
            shares.append((len(sampler), sampler.total_size, epochs))
        return shares
    on_both(scenario)


@pytest.mark.parametrize("rank", [-1, 3])
def test_distributed_sampler_refuses_a_rank_outside_the_replicas(rank):
    on_both(lambda lib: lib.utils.data.DistributedSampler(range(4), num_replicas=3, rank=rank))


def test_distributed_sampler_feeds_a_data_loader():
    def scenario(lib):
        data = lib.utils.data.TensorDataset(lib.arange(10.0))
        sampler = lib.utils.data.distributed.DistributedSampler(data, num_replicas=2, rank=1, seed=3)
        return [batch[0].tolist() for batch in lib.utils.data.DataLoader(data, batch_size=2, sampler=sampler)]
    on_both(scenario)


def test_distributed_sampler_without_replicas_needs_a_process_group():
    with pytest.raises(RuntimeError, match="Requires distributed package to be available"):
        gradiente.utils.data.distributed.DistributedSampler(range(4))


# --- torch.onnx, torch.compile ----------------------------------------------------------------------------------

def test_onnx_export_explains_and_model_code_sees_no_export():
    on_both(lambda lib: lib.onnx.is_in_onnx_export())
    with pytest.raises(RuntimeError, match=r"cannot export to ONNX.*torch.onnx.export"):
        gradiente.onnx.export(gradiente.nn.Linear(2, 1), (gradiente.ones(1, 2),), "model.onnx")


def _double(x):
    return x * 2


@pytest.mark.parametrize("compile_it", [
    lambda lib, f: lib.compile(f), lambda lib, f: lib.compile(mode="reduce-overhead")(f),
    lambda lib, f: lib.compile(f, fullgraph=True, dynamic=False, backend="eager"),
    lambda lib, f: lib.compile(f, options={"trace.enabled": False}), lambda lib, f: lib.compile(f, disable=True),
])
def test_compile_gives_a_function_that_computes_the_same(compile_it):
    on_both(lambda lib: (compile_it(lib, _double).__name__, compile_it(lib, _double)(lib.ones(2)).tolist()))


@pytest.mark.parametrize("call", [
    lambda lib: lib.compile(_double, mode="foo"),
    lambda lib: lib.compile(_double, mode="default", options={"a": 1}),
    lambda lib: lib.compile(1),
    lambda lib: lib.compiler.is_compiling(),
    lambda lib: lib.compile(_double, disable=True) is _double,
])
def test_compile_checks_its_arguments_as_pytorch_does(call):
    on_both(call)


def test_a_compiled_module_is_an_optimized_module_as_in_pytorch():
    def scenario(lib):
        lib.manual_seed(0)
        model = lib.nn.Linear(2, 1)
        compiled = lib.compile(model)
        compiled.eval()
        return (repr(compiled), type(compiled).__name__, list(compiled.state_dict()), compiled.in_features,
                compiled._orig_mod is model, compiled.weight is model.weight, model.training,
                compiled(lib.ones(1, 2)).tolist())
    on_both(scenario)


@pytest.mark.parametrize("disable", [False, True])
def test_compiling_turns_the_distributions_checks_off_for_the_process_as_in_pytorch(disable):
    """PyTorch's compiler switches the distributions' argument checks off when it wraps a model (an invalid scale
    then raises nothing); ``disable=True`` wraps nothing. (conftest.py turns them back on after the test.)"""
    def scenario(lib):
        lib.compile(lib.nn.Linear(2, 1), disable=disable)
        try:
            lib.distributions.Normal(lib.tensor([0.0]), lib.tensor([-1.0]))
        except ValueError:
            return "checked"
        return "not checked"
    on_both(scenario)


def test_dynamo_config_keeps_the_switches_scripts_set_and_refuses_unknown_ones():
    def scenario(lib):
        import importlib
        dynamo = importlib.import_module(f"{lib.__name__}._dynamo")
        before = (dynamo.config.suppress_errors, dynamo.config.cache_size_limit, dynamo.config.optimize_ddp)
        dynamo.config.suppress_errors = True
        try:
            after = dynamo.config.suppress_errors
        finally:
            dynamo.config.suppress_errors = before[0]
        dynamo.reset()
        return before, after, dynamo.is_compiling(), lib._dynamo is dynamo
    on_both(scenario)
    for lib in (gradiente, torch):
        with pytest.raises(AttributeError, match=r"^torch._dynamo.config.no_such_flag does not exist$"):
            lib._dynamo.config.no_such_flag = 1
        with pytest.raises(AttributeError, match=r"^torch._dynamo.config.no_such_flag does not exist$"):
            _ = lib._dynamo.config.no_such_flag


# --- nn.attention ----------------------------------------------------------------------------------------------

def test_sdpa_kernel_sets_and_restores_the_switches_as_in_pytorch():
    def scenario(lib):
        attention, cuda = lib.nn.attention, lib.backends.cuda
        members = attention.SDPBackend.__members__.items()
        seen = [[(name, int(b)) for name, b in members], repr(attention.SDPBackend.MATH)]
        with attention.sdpa_kernel(attention.SDPBackend.MATH) as entered:
            q = lib.ones(1, 2, 2)
            seen += [entered, cuda.flash_sdp_enabled(), cuda.math_sdp_enabled(),
                     lib.nn.functional.scaled_dot_product_attention(q, q, q).tolist()]
        with attention.sdpa_kernel([attention.SDPBackend.FLASH_ATTENTION, attention.SDPBackend.CUDNN_ATTENTION]):
            seen += [cuda.flash_sdp_enabled(), cuda.math_sdp_enabled(), cuda.cudnn_sdp_enabled()]
        seen += [cuda.flash_sdp_enabled(), cuda.math_sdp_enabled()]
        return seen
    on_both(scenario)


def test_sdpa_kernel_refuses_what_is_not_a_backend_as_pytorch_does():
    on_both(lambda lib: lib.nn.attention.sdpa_kernel("math").__enter__())


# --- __version__ ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("test", [
    lambda v: v >= "2.0", lambda v: v > "2.2", lambda v: v < "3", lambda v: v >= "2.13.0", lambda v: v > "2.13.0",
    lambda v: v <= "2.13", lambda v: v == "2.13.0", lambda v: v >= (2, 1), lambda v: v < (2, 13, 1),
    lambda v: parse(v) >= Version("2.1"), lambda v: parse(v).release, lambda v: v.split(".")[:2],
    lambda v: isinstance(v, str), lambda v: v.startswith("2."),
])
def test_version_tests_answer_as_pytorch_2_13s(test):
    on_both(lambda lib: test(lib.__version__))


def test_version_names_gradiente_and_its_own_release():
    assert gradiente.__version__ == "2.13.0+gradiente.0.1.0"
    assert gradiente.version.gradiente == "0.1.0"
    on_both(lambda lib: (lib.version.cuda, lib.version.hip))
