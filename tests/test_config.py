"""The global settings of ``gradiente._config`` against PyTorch's: thread counts, deterministic algorithms, matmul
precision, warnings about devices, denormals."""
import pytest
from harness import check_same_error

import gradiente
from gradiente import _config

torch = pytest.importorskip("torch")


@pytest.fixture
def restore_settings():
    """Each test leaves the process settings, and BLAS's threads, as it found them."""
    saved = dict(_config._settings)
    yield
    threads = saved["num_threads"]
    _config._settings.update(saved)
    gradiente.set_num_threads(threads)


def test_thread_counts_are_remembered(restore_settings):
    gradiente.set_num_threads(1)
    assert gradiente.get_num_threads() == 1
    _config._settings["interop_set"] = False
    gradiente.set_num_interop_threads(3)
    assert gradiente.get_num_interop_threads() == 3


def test_thread_count_errors_match_torch(restore_settings):
    for bad in (0, -1, 2.5, "a"):
        check_same_error(lambda lib, bad=bad: lib.set_num_threads(bad))
    check_same_error(lambda lib: lib.set_num_interop_threads(0))
    _config._settings["interop_set"] = True
    with pytest.raises(RuntimeError, match="cannot set number of interop threads"):
        gradiente.set_num_interop_threads(2)


def test_set_num_threads_limits_blas_when_threadpoolctl_is_there(restore_settings):
    threadpoolctl = pytest.importorskip("threadpoolctl")
    gradiente.set_num_threads(1)
    blas = [info["num_threads"] for info in threadpoolctl.threadpool_info() if info["user_api"] == "blas"]
    assert blas and all(n == 1 for n in blas)


def test_deterministic_settings_follow_torch(restore_settings):
    states = []
    for lib in (gradiente, torch):
        before = (lib.are_deterministic_algorithms_enabled(), lib.is_deterministic_algorithms_warn_only_enabled())
        trace = []
        try:
            for call in (lambda lib: lib.use_deterministic_algorithms(True, warn_only=True),
                         lambda lib: lib.set_deterministic_debug_mode("error"),
                         lambda lib: lib.set_deterministic_debug_mode(1),
                         lambda lib: lib.set_deterministic_debug_mode("default"),
                         lambda lib: lib.use_deterministic_algorithms(True)):
                call(lib)
                trace.append((lib.are_deterministic_algorithms_enabled(),
                              lib.is_deterministic_algorithms_warn_only_enabled(), lib.get_deterministic_debug_mode()))
        finally:
            lib.use_deterministic_algorithms(before[0], warn_only=before[1])
        states.append(trace)
    assert states[0] == states[1]
    for bad in ("foo", 3, 1.0):
        check_same_error(lambda lib, bad=bad: lib.set_deterministic_debug_mode(bad))
    for bad in (1, "x"):
        check_same_error(lambda lib, bad=bad: lib.use_deterministic_algorithms(bad))


def test_matmul_precision_device_warnings_and_denormals(restore_settings):
    assert gradiente.get_float32_matmul_precision() == "highest"
    gradiente.set_float32_matmul_precision("medium")
    assert gradiente.get_float32_matmul_precision() == "medium"
    with pytest.warns(UserWarning, match="foo is not one of 'highest', 'high', or 'medium'"):
        gradiente.set_float32_matmul_precision("foo")
    assert gradiente.get_float32_matmul_precision() == "medium"
    gradiente.set_default_device("cpu")
    assert gradiente.get_default_device() == gradiente.device("cpu")
    gradiente.set_default_device(None)
    assert repr(gradiente.get_default_device()) == repr(torch.get_default_device())
    with pytest.raises(RuntimeError) as ours:
        gradiente.set_default_device("cuda")
    with pytest.raises(RuntimeError) as device_error:
        gradiente.device("cuda")
    assert str(ours.value) == str(device_error.value)
    assert not gradiente.is_warn_always_enabled()
    gradiente.set_warn_always(True)
    assert gradiente.is_warn_always_enabled()
    assert gradiente.set_flush_denormal(True) is False      # NumPy cannot flush denormals (see its docstring)
