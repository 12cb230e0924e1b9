"""Devices as a CPU-only PyTorch has them: ``torch.device`` parsing and printing, every function that takes
``device=`` (one table: device arguments x functions), the default device, ``torch.cuda``, ``torch.accelerator``,
``torch.mps`` and ``torch.backends``, each compared with the installed PyTorch, which is a CPU-only build."""
import pickle
import warnings

import numpy as np
import pytest
import torch
from harness import on_both, outcome

import gradiente

assert not torch.cuda.is_available(), "these tests compare with a CPU-only build of PyTorch"


def _comparable(result):
    """An outcome with the parts of PyTorch's messages that describe its own build cut off: the list of
    backends a missing kernel has (PyTorch's registrations, file by file) and an internal assertion's source
    file. What stays is the exception's type and the message a user reads first."""
    if result[0] == "raised":
        kind, message = result[1], result[2]
        if message.startswith("Could not run"):
            message = message[:message.index("possible resolutions.")]
        if "grandfathered Caffe2 device type" in message:
            message = message[message.index("This is a grandfathered"):]
        # a missing module is named as the library's own: torch.hpu there, gradiente.hpu here
        message = message.replace("No module named 'gradiente.", "No module named 'torch.")
        return ("raised", kind, message)
    return result


def same_outcome(scenario, only_the_exception_type=False):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # 'mkldnn' as a device type warns, in both
        ours, theirs = outcome(scenario, gradiente), outcome(scenario, torch)
    if only_the_exception_type:
        assert ours[0] == theirs[0] == "raised" and ours[1] == theirs[1]
    else:
        assert _comparable(ours) == _comparable(theirs)
    return ours


# --- torch.device -------------------------------------------------------------------------------------------------

DEVICE_STRINGS = ["cpu", "cuda", "cuda:0", "cuda:1", "cuda:127", "mps", "meta", "xpu", "cpu:0", "cpu:1", "hip",
                  "xla", "lazy", "privateuseone", "mkldnn",
                  # refused: unknown type, bad index, spacing, case, empty
                  "foo", "a_b", "_", "CUDA", "cuda:-1", "cuda:x", "cuda:0:1", "cuda:", "", " cuda", "cuda: 0",
                  "cuda:01", "cpu:+1"]


@pytest.mark.parametrize("text", DEVICE_STRINGS)
def test_device_strings_parse_print_and_fail_as_in_pytorch(text):
    same_outcome(lambda lib: (repr(lib.device(text)), str(lib.device(text)), lib.device(text).type,
                              lib.device(text).index))


DEVICE_CALLS = {
    "type and index": lambda lib: lib.device("cuda", 0),
    "keywords": lambda lib: lib.device(type="cuda", index=1),
    "index keyword": lambda lib: lib.device("cuda", index=2),
    "index None": lambda lib: lib.device("cuda", None),
    "numpy index": lambda lib: lib.device("cuda", np.int64(2)),
    "index twice": lambda lib: lib.device("cuda:0", 0),
    "index twice, None": lambda lib: lib.device("cuda:0", None),
    "negative index": lambda lib: lib.device("cuda", -1),
    "cpu index": lambda lib: lib.device("cpu", 3),
    "bool index": lambda lib: lib.device("cuda", True),
    "str index": lambda lib: lib.device("cuda", "x"),
    "float index": lambda lib: lib.device("cuda", 1.0),
    "int": lambda lib: lib.device(0),
    "numpy int": lambda lib: lib.device(np.int64(2)),
    "negative int": lambda lib: lib.device(-1),
    "float": lambda lib: lib.device(1.0),
    "None": lambda lib: lib.device(None),
    "bool": lambda lib: lib.device(True),
    "nothing": lambda lib: lib.device(),
    "three arguments": lambda lib: lib.device("cuda", 1, 2),
    "unknown keyword": lambda lib: lib.device(x=1),
    "device and index": lambda lib: lib.device(lib.device("cuda"), 1),
    "copy": lambda lib: lib.device(lib.device("cuda:1")),
}


@pytest.mark.parametrize("name", DEVICE_CALLS)
def test_device_constructor_arguments_as_in_pytorch(name):
    same_outcome(lambda lib: repr(DEVICE_CALLS[name](lib)))


def test_device_equality_hash_order_and_pickling_as_in_pytorch():
    def relations(lib):
        d = lib.device
        return [d("cuda") == "cuda", d("cpu") == "cpu", d("cpu") != "cpu", d("cpu") == d("cpu"),
                d("cpu") == d("cpu", 0), d("cuda:0") == d("cuda"), d("cuda", 1) == d("cuda:1"),
                d("cpu") in [d("cpu")], lib.ones(1).device == d("cpu"), lib.ones(1).device == "cpu",
                isinstance(lib.ones(1).device, d), type(d("cpu")).__name__,
                len({d("cpu"), d("cpu"), d("cpu", 0), d("cuda")})]
    on_both(relations)
    same_outcome(lambda lib: lib.device("cuda", 0) < lib.device("cuda", 1))
    same_outcome(lambda lib: repr(pickle.loads(pickle.dumps(lib.device("cuda:1")))))
    same_outcome(lambda lib: repr(pickle.loads(pickle.dumps(lib.device("mps")))))
    same_outcome(lambda lib: setattr(lib.device("cpu"), "type", "cuda"))
    assert hash(gradiente.device("cuda", 1)) == hash(gradiente.device("cuda:1"))


def test_mkldnn_device_type_warns_as_in_pytorch():
    """(PyTorch gives this warning once per process, so only gradiente's is checked here.)"""
    with pytest.warns(UserWarning) as caught:
        gradiente.device("mkldnn")
    assert str(caught[0].message) == (
        "'mkldnn' is no longer used as device type. So torch.device('mkldnn') will be deprecated and removed in "
        "the future. Please use other valid device types instead.")


# --- every function that takes device= ---------------------------------------------------------------------------

def _module(lib, device):
    return lib.nn.Linear(2, 2, device=device)


FACTORIES = {
    "tensor": lambda lib, d: lib.tensor([1.0], device=d),
    "as_tensor": lambda lib, d: lib.as_tensor([1.0], device=d),
    "asarray": lambda lib, d: lib.asarray([1.0], device=d),
    "zeros": lambda lib, d: lib.zeros(2, device=d),
    "ones": lambda lib, d: lib.ones(2, device=d),
    "empty": lambda lib, d: lib.empty(2, device=d).shape,
    "full": lambda lib, d: lib.full((2,), 1.0, device=d),
    "scalar_tensor": lambda lib, d: lib.scalar_tensor(1.0, device=d),
    "arange": lambda lib, d: lib.arange(3, device=d),
    "linspace": lambda lib, d: lib.linspace(0, 1, 3, device=d),
    "logspace": lambda lib, d: lib.logspace(0, 1, 3, device=d),
    "eye": lambda lib, d: lib.eye(2, device=d),
    "randn": lambda lib, d: lib.randn(2, device=d).shape,
    "rand": lambda lib, d: lib.rand(2, device=d).shape,
    "randint": lambda lib, d: lib.randint(0, 3, (2,), device=d).shape,
    "randperm": lambda lib, d: lib.randperm(3, device=d).shape,
    "zeros_like": lambda lib, d: lib.zeros_like(lib.ones(2), device=d),
    "ones_like": lambda lib, d: lib.ones_like(lib.ones(2), device=d),
    "empty_like": lambda lib, d: lib.empty_like(lib.ones(2), device=d).shape,
    "full_like": lambda lib, d: lib.full_like(lib.ones(2), 3.0, device=d),
    "randn_like": lambda lib, d: lib.randn_like(lib.ones(2), device=d).shape,
    "rand_like": lambda lib, d: lib.rand_like(lib.ones(2), device=d).shape,
    "randint_like": lambda lib, d: lib.randint_like(lib.ones(2), 3, device=d).shape,
    "new_tensor": lambda lib, d: lib.ones(1).new_tensor([2.0], device=d),
    "new_zeros": lambda lib, d: lib.ones(1).new_zeros(2, device=d),
    "new_ones": lambda lib, d: lib.ones(1).new_ones(2, device=d),
    "new_full": lambda lib, d: lib.ones(1).new_full((2,), 4.0, device=d),
    "new_empty": lambda lib, d: lib.ones(1).new_empty(2, device=d).shape,
    "tril_indices": lambda lib, d: lib.tril_indices(3, 3, device=d),
    "triu_indices": lambda lib, d: lib.triu_indices(3, 3, device=d),
    "hann_window": lambda lib, d: lib.hann_window(3, device=d),
    "Tensor.to": lambda lib, d: lib.ones(2).to(d),
    "Tensor.to(device=)": lambda lib, d: lib.ones(2).to(device=d),
    "Tensor.to(device, dtype)": lambda lib, d: lib.ones(2).to(d, lib.float64),
    "nn.Linear(device=)": lambda lib, d: _module(lib, d).weight.shape,
    "nn.Conv1d(device=)": lambda lib, d: lib.nn.Conv1d(1, 1, 2, device=d).weight.shape,
    "nn.LayerNorm(device=)": lambda lib, d: lib.nn.LayerNorm(2, device=d).weight.shape,
    "nn.BatchNorm1d(device=)": lambda lib, d: lib.nn.BatchNorm1d(2, device=d).running_mean.shape,
    "nn.Embedding(device=)": lambda lib, d: lib.nn.Embedding(3, 2, device=d).weight.shape,
    "nn.LSTM(device=)": lambda lib, d: lib.nn.LSTM(2, 2, device=d).weight_ih_l0.shape,
    "nn.MultiheadAttention(device=)": lambda lib, d: lib.nn.MultiheadAttention(4, 2, device=d).in_proj_weight.shape,
    "Module.to": lambda lib, d: _module(lib, "cpu").to(d).weight.shape,
    "Module.to(device=)": lambda lib, d: _module(lib, "cpu").to(device=d, dtype=lib.float64).weight.dtype.is_complex,
    "parameterless Module.to": lambda lib, d: repr(lib.nn.ReLU().to(d)),
    "Generator": lambda lib, d: repr(lib.Generator(d).device),
}

DEVICES = {"cpu": "cpu", "cpu:0": "cpu:0", "cpu:1": "cpu:1", "device('cpu')": ("cpu",), "cuda": "cuda",
           "cuda:0": "cuda:0", "cuda:1": "cuda:1", "device('cuda')": ("cuda",), "device('cuda', 1)": ("cuda", 1),
           "mps": "mps", "xpu": "xpu", "hip": "hip", "mtia": "mtia", "lazy": "lazy", "vulkan": "vulkan",
           "opengl": "opengl", "hpu": "hpu", "meta": "meta", "0": 0, "-1": -1, "1.5": 1.5, "foo": "foo"}


def _device_argument(lib, spec):
    return lib.device(*spec) if isinstance(spec, tuple) else spec


@pytest.mark.parametrize("function", FACTORIES)
@pytest.mark.parametrize("device", DEVICES)
def test_device_argument_of_every_function_as_in_a_cpu_only_pytorch(function, device):
    def scenario(lib):
        result = FACTORIES[function](lib, _device_argument(lib, DEVICES[device]))
        return result.tolist() if isinstance(result, (gradiente.Tensor, torch.Tensor)) else tuple(result) \
            if isinstance(result, (gradiente.Size, torch.Size)) else result
    if function == "Generator" and device in ("0", "1.5"):
        pytest.skip("Generator(device) is a C++ signature in PyTorch: its messages differ in wording")
    if function.startswith(("Tensor.to", "Module.to", "parameterless")) and device == "1.5":
        pytest.skip("PyTorch reads a Python float given to to() as a dtype (float64); gradiente refuses it")
    gradiente.manual_seed(0)
    torch.manual_seed(0)
    # A device of a wrong type is PyTorch's TypeError, worded by its argument parser from each function's
    # overloads (which gradiente's Python signatures do not have): the type is compared, not the wording
    same_outcome(scenario, only_the_exception_type=device == "1.5")


def test_to_an_indexed_cpu_copies_as_in_pytorch():
    for lib in (gradiente, torch):
        x = lib.ones(2, requires_grad=True)
        assert x.to("cpu") is x and x.to(lib.device("cpu")) is x
        y = x.to("cpu:0")
        assert y is not x and type(y.grad_fn).__name__ == "ToCopyBackward0"


TENSOR_CALLS = {
    "cuda()": lambda lib: lib.ones(1).cuda(),
    "cuda(0)": lambda lib: lib.ones(1).cuda(0),
    "cuda('cuda:1')": lambda lib: lib.ones(1).cuda("cuda:1"),
    "cuda('cpu')": lambda lib: lib.ones(1).cuda("cpu"),
    "cuda() requiring grad": lambda lib: lib.ones(1, requires_grad=True).cuda(),
    "xpu()": lambda lib: lib.ones(1).xpu(),
    "cpu()": lambda lib: lib.ones(1).cpu().tolist(),
    "pin_memory()": lambda lib: lib.ones(1).pin_memory(),
    "flags": lambda lib: (lib.ones(1).is_pinned(), lib.ones(1).is_cpu, lib.ones(1).is_cuda, lib.ones(1).is_mps,
                          lib.ones(1).is_xpu, lib.ones(1).is_meta, lib.ones(1).get_device(), str(lib.ones(1).device)),
    "Module.cuda()": lambda lib: lib.nn.Linear(1, 1).cuda(),
    "Module.cuda(0)": lambda lib: lib.nn.Linear(1, 1).cuda(0),
    "Module.xpu()": lambda lib: lib.nn.Linear(1, 1).xpu(),
    "parameterless Module.cuda()": lambda lib: repr(lib.nn.ReLU().cuda()),
    "Module.cpu()": lambda lib: repr(lib.nn.Linear(1, 1).cpu()),
}


@pytest.mark.parametrize("name", TENSOR_CALLS)
def test_tensor_and_module_device_methods_as_in_pytorch(name):
    same_outcome(TENSOR_CALLS[name])


# --- the default device ---------------------------------------------------------------------------------------

DEFAULT_DEVICE_SCENARIOS = {
    "cuda, then zeros": ("cuda", lambda lib: lib.zeros(2)),
    "cuda, then tensor": ("cuda", lambda lib: lib.tensor(2.0)),
    "cuda, then from_numpy": ("cuda", lambda lib: lib.from_numpy(np.ones(2)).tolist()),
    "cuda, then zeros on the cpu": ("cuda", lambda lib: lib.zeros(2, device="cpu").tolist()),
    "cuda, then Linear": ("cuda", lambda lib: lib.nn.Linear(2, 2)),
    "cuda, read back": ("cuda", lambda lib: lib.get_default_device()),
    "mps, read back": ("mps", lambda lib: lib.get_default_device()),
    "cpu:1, read back": ("cpu:1", lambda lib: repr(lib.get_default_device())),
    "cpu:1, then zeros": ("cpu:1", lambda lib: repr(lib.zeros(1).device)),
    "device('cuda'), then randn": (("cuda",), lambda lib: lib.randn(2)),
    "foo": ("foo", lambda lib: None),
    "0": (0, lambda lib: None),
}


@pytest.mark.parametrize("name", DEFAULT_DEVICE_SCENARIOS)
def test_default_device_as_in_pytorch(name):
    device, then = DEFAULT_DEVICE_SCENARIOS[name]

    def scenario(lib):
        try:
            lib.set_default_device(_device_argument(lib, device))
            return then(lib)
        finally:
            lib.set_default_device(None)
    same_outcome(scenario)
    assert repr(gradiente.get_default_device()) == "device(type='cpu')"


def test_device_as_a_context_manager_sets_the_default_device_for_its_block():
    def scenario(lib):
        seen = []
        with lib.device("cuda"):
            seen.append(outcome(lambda lib: lib.zeros(2), lib))
            with lib.device("cpu") as inner:
                seen.append((repr(inner), lib.zeros(1).tolist()))
            seen.append(outcome(lambda lib: lib.get_default_device(), lib))
        seen.append(repr(lib.get_default_device()))
        seen.append(outcome(lambda lib: lib.device("cpu").__exit__(None, None, None), lib))
        return seen
    on_both(scenario)


# --- torch.cuda, torch.accelerator, torch.mps ---------------------------------------------------------------------

CUDA_CALLS = ["is_available", "device_count", "is_initialized", "is_bf16_supported", "is_tf32_supported",
              "get_arch_list", "get_gencode_flags", "seed", "seed_all", "empty_cache", "memory_allocated",
              "max_memory_allocated", "memory_reserved", "max_memory_reserved", "memory_cached", "max_memory_cached",
              "memory_stats", "memory_stats_as_nested_dict", "get_rng_state_all", "init", "current_device",
              "synchronize", "get_device_name", "get_device_capability", "get_device_properties", "current_stream",
              "default_stream", "get_rng_state", "initial_seed", "ipc_collect", "mem_get_info",
              "get_per_process_memory_fraction", "get_sync_debug_mode", "Stream", "Event"]


@pytest.mark.parametrize("name", CUDA_CALLS)
def test_cuda_function_without_arguments_as_in_a_cpu_only_pytorch(name):
    same_outcome(lambda lib: getattr(lib.cuda, name)())


CUDA_CALLS_WITH_ARGUMENTS = {
    "manual_seed": lambda c, lib: c.manual_seed(1),
    "manual_seed_all": lambda c, lib: c.manual_seed_all(1),
    "manual_seed of a string": lambda c, lib: c.manual_seed("a"),
    "set_device('cpu')": lambda c, lib: c.set_device("cpu"),
    "set_device(-1)": lambda c, lib: c.set_device(-1),
    "set_device('cuda')": lambda c, lib: c.set_device("cuda"),
    "set_rng_state": lambda c, lib: c.set_rng_state(lib.ones(1)),
    "set_rng_state_all": lambda c, lib: c.set_rng_state_all([]),
    "memory_allocated(0)": lambda c, lib: c.memory_allocated(0),
    "get_device_name(0)": lambda c, lib: c.get_device_name(0),
    "get_device_properties(0)": lambda c, lib: c.get_device_properties(0),
    "synchronize(0)": lambda c, lib: c.synchronize(0),
    "with device(0)": lambda c, lib: c.device(0).__enter__(),
    "with device(-1)": lambda c, lib: c.device(-1).__enter__(),
    "with device(None)": lambda c, lib: c.device(None).__enter__(),
    "device('cuda:1').idx": lambda c, lib: c.device("cuda:1").idx,
    "device('cpu')": lambda c, lib: c.device("cpu"),
    "with device_of(tensor)": lambda c, lib: c.device_of(lib.ones(1)).__enter__(),
    "with stream(None)": lambda c, lib: c.stream(None).__enter__(),
    "FloatTensor([1])": lambda c, lib: c.FloatTensor([1]),
    "LongTensor(2)": lambda c, lib: c.LongTensor(2),
    "OutOfMemoryError": lambda c, lib: (issubclass(c.OutOfMemoryError, RuntimeError),
                                        lib.OutOfMemoryError is c.OutOfMemoryError),
}


@pytest.mark.parametrize("name", CUDA_CALLS_WITH_ARGUMENTS)
def test_cuda_function_with_arguments_as_in_a_cpu_only_pytorch(name):
    same_outcome(lambda lib: CUDA_CALLS_WITH_ARGUMENTS[name](lib.cuda, lib))


def test_cuda_set_device_to_a_gpu_says_cuda_is_missing():
    """PyTorch's CPU build fails here on a private C function (AttributeError); gradiente says what is wrong."""
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        gradiente.cuda.set_device(0)


def test_the_device_choice_of_every_script_picks_the_cpu():
    for lib in (gradiente, torch):
        device = "cuda" if lib.cuda.is_available() else "mps" if lib.backends.mps.is_available() else "cpu"
        model = lib.nn.Linear(2, 1).to(device)
        assert model(lib.ones(3, 2, device=device)).shape == (3, 1)


def _call_without_arguments(name):
    return lambda namespace: getattr(namespace, name)()


ACCELERATOR_CALLS = {name: _call_without_arguments(name) for name in [
    "is_available", "current_accelerator", "device_count", "current_device_index", "current_device_idx",
    "current_stream", "synchronize", "empty_cache", "empty_host_cache", "memory_allocated", "max_memory_allocated",
    "memory_reserved", "max_memory_reserved", "memory_stats", "get_memory_info", "reset_peak_memory_stats",
    "reset_accumulated_memory_stats", "get_device_capability"]}
ACCELERATOR_CALLS.update({
    "set_device_index(0)": lambda a: a.set_device_index(0),
    "set_device_index(-1)": lambda a: a.set_device_index(-1),
    "with device_index(0)": lambda a: a.device_index(0).__enter__(),
    "with device_index(None)": lambda a: a.device_index(None).__enter__(),
    "current_accelerator(True)": lambda a: a.current_accelerator(True),
    "synchronize(0)": lambda a: a.synchronize(0),
})


@pytest.mark.parametrize("name", ACCELERATOR_CALLS)
def test_accelerator_as_in_a_cpu_only_pytorch(name):
    same_outcome(lambda lib: ACCELERATOR_CALLS[name](lib.accelerator))


MPS_CALLS = {name: (lambda lib, name=name: getattr(lib.mps, name)()) for name in [
    "is_available", "device_count", "seed", "get_rng_state", "synchronize", "empty_cache",
    "current_allocated_memory", "driver_allocated_memory", "recommended_max_memory"]}
MPS_CALLS.update({
    "manual_seed": lambda lib: lib.mps.manual_seed(0),
    "set_rng_state": lambda lib: lib.mps.set_rng_state(lib.ones(8, dtype=lib.uint8)),
    "set_per_process_memory_fraction": lambda lib: lib.mps.set_per_process_memory_fraction(0.5),
})


@pytest.mark.parametrize("name", MPS_CALLS)
def test_mps_as_in_a_cpu_only_pytorch(name):
    same_outcome(MPS_CALLS[name])


# --- torch.backends --------------------------------------------------------------------------------------------

def test_backends_answers_and_defaults_as_in_a_cpu_only_pytorch():
    def answers(lib):
        b = lib.backends
        return [b.cudnn.is_available(), b.cudnn.version(), b.cudnn.enabled, b.cudnn.benchmark,
                b.cudnn.deterministic, b.cudnn.allow_tf32, b.cudnn.benchmark_limit, b.cudnn.is_acceptable(lib.ones(1)),
                b.cuda.is_built(), b.cuda.matmul.allow_tf32, b.cuda.matmul.allow_fp16_reduced_precision_reduction,
                b.cuda.matmul.allow_bf16_reduced_precision_reduction, b.cuda.flash_sdp_enabled(),
                b.cuda.mem_efficient_sdp_enabled(), b.cuda.math_sdp_enabled(), b.cuda.cudnn_sdp_enabled(),
                b.mps.is_available(), b.mps.is_built(), b.opt_einsum.is_available(), b.opt_einsum.enabled,
                b.opt_einsum.strategy, b.opt_einsum.get_opt_einsum(), b.mkldnn.enabled, b.mkldnn.deterministic]
    on_both(answers)


def test_backends_that_gradiente_does_not_use_say_so():
    """PyTorch's CPU build has oneDNN, MKL and OpenMP; gradiente computes with NumPy and has none of them."""
    assert not gradiente.backends.mkldnn.is_available()
    assert not gradiente.backends.mkl.is_available()
    assert not gradiente.backends.openmp.is_available()


@pytest.mark.parametrize("module, flag, value", [
    ("cudnn", "enabled", 1), ("cudnn", "benchmark", 1), ("cudnn", "deterministic", 1.5), ("cudnn", "allow_tf32", 1),
    ("cudnn", "benchmark", True), ("mkldnn", "enabled", 1.5), ("mkldnn", "enabled", False),
])
def test_backend_flags_accept_and_refuse_values_as_in_pytorch(module, flag, value):
    def scenario(lib):
        settings = getattr(lib.backends, module)
        before = getattr(settings, flag)
        try:
            setattr(settings, flag, value)
            return getattr(settings, flag)
        finally:
            object.__setattr__(settings, flag, before)
    same_outcome(scenario)


@pytest.mark.parametrize("flag, value", [("allow_tf32", True), ("allow_tf32", 1),
                                         ("allow_fp16_reduced_precision_reduction", 1.5),
                                         ("allow_bf16_reduced_precision_reduction", False), ("foo", True)])
def test_matmul_settings_accept_and_refuse_values_as_in_pytorch(flag, value):
    def scenario(lib):
        matmul = lib.backends.cuda.matmul
        before = getattr(matmul, flag, None)
        try:
            setattr(matmul, flag, value)
            return getattr(matmul, flag)
        finally:
            if before is not None:
                setattr(matmul, flag, before)
    same_outcome(scenario)


def test_cudnn_flags_set_for_a_block_and_restore():
    def scenario(lib):
        cudnn = lib.backends.cudnn
        cudnn.benchmark, cudnn.deterministic = True, True
        try:
            with cudnn.flags(enabled=False, benchmark=False):
                inside = (cudnn.enabled, cudnn.benchmark, cudnn.deterministic, cudnn.allow_tf32)
            return inside, (cudnn.enabled, cudnn.benchmark, cudnn.deterministic, cudnn.allow_tf32)
        finally:
            cudnn.benchmark, cudnn.deterministic = False, False
    on_both(scenario)


def test_sdp_switches_are_remembered_as_in_pytorch():
    def scenario(lib):
        cuda = lib.backends.cuda
        try:
            cuda.enable_flash_sdp(False)
            cuda.enable_math_sdp(False)
            return cuda.flash_sdp_enabled(), cuda.math_sdp_enabled(), cuda.mem_efficient_sdp_enabled()
        finally:
            cuda.enable_flash_sdp(True)
            cuda.enable_math_sdp(True)
    on_both(scenario)


def test_device_namespaces_import_as_submodules():
    import gradiente.cuda
    from gradiente.backends import cudnn
    assert cudnn is gradiente.backends.cudnn and not gradiente.cuda.is_available()
