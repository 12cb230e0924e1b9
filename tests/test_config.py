"""``gradiente._config`` against PyTorch: the global settings (thread counts, deterministic algorithms, matmul
precision, warnings about devices, denormals), then the dtype facts (``finfo``, ``iinfo``, ``can_cast``) and the
small questions about tensors and shapes (``is_complex``, ``is_signed``, ``is_nonzero``, ``is_same_size``,
``typename``, ``broadcast_shapes``): values, types, reprs and error messages."""
import numpy as np
import pytest
from harness import both_quietly, check_same_error

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
    # As in a CPU-only PyTorch, "cuda" is accepted as the default; the next tensor made there raises
    for lib in (gradiente, torch):
        lib.set_default_device("cuda")
        try:
            with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
                lib.zeros(2)
        finally:
            lib.set_default_device(None)
    assert not gradiente.is_warn_always_enabled()
    gradiente.set_warn_always(True)
    assert gradiente.is_warn_always_enabled()
    assert gradiente.set_flush_denormal(True) is False      # NumPy cannot flush denormals (see its docstring)


# --- dtype facts and questions ------------------------------------------------------------------------------

def same_repr(ours, theirs):
    """The same repr, PyTorch's module name read as ours (test_ops_reductions.py and test_ops_statistics.py import
    this)."""
    assert repr(ours) == repr(theirs).replace("torch.", "gradiente.")


FLOATS = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128")
INTEGERS = ("uint8", "int8", "int16", "int32", "int64")


@pytest.mark.parametrize("name", FLOATS)
def test_finfo_matches_torch(name):
    ours, theirs = gradiente.finfo(getattr(gradiente, name)), torch.finfo(getattr(torch, name))
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
        assert type(getattr(ours, attr)) is type(getattr(theirs, attr)), attr
    same_repr(ours, theirs)
    assert str(ours) == str(theirs)


@pytest.mark.parametrize("name", INTEGERS)
def test_iinfo_matches_torch(name):
    ours, theirs = gradiente.iinfo(getattr(gradiente, name)), torch.iinfo(getattr(torch, name))
    for attr in ("bits", "max", "min", "dtype"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    same_repr(ours, theirs)


def test_finfo_defaults_equality_and_errors():
    assert gradiente.finfo() == gradiente.finfo(gradiente.float32)
    assert gradiente.finfo(float).dtype == torch.finfo(float).dtype
    assert gradiente.finfo(gradiente.float32) != gradiente.finfo(gradiente.float64)
    with pytest.raises(TypeError):
        hash(gradiente.finfo())
    for fn in (lambda lib: lib.finfo(lib.int32), lambda lib: lib.finfo(lib.bool), lambda lib: lib.finfo("float32"),
               lambda lib: lib.finfo(int), lambda lib: lib.iinfo(lib.float32), lambda lib: lib.iinfo(lib.bool)):
        check_same_error(fn)


ALL_DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64", "complex64",
              "complex128")


def test_can_cast_matches_torch_for_every_pair():
    for a in ALL_DTYPES:
        for b in ALL_DTYPES:
            assert gradiente.can_cast(getattr(gradiente, a), getattr(gradiente, b)) == \
                torch.can_cast(getattr(torch, a), getattr(torch, b)), (a, b)
    check_same_error(lambda lib: lib.can_cast(1, lib.float))
    check_same_error(lambda lib: lib.can_cast(lib.float, "x"))


@pytest.mark.parametrize("name", ALL_DTYPES)
def test_tensor_predicates_match_torch(name):
    ours, theirs = both_quietly(lambda lib: lib.ones(2, dtype=getattr(lib, name)))
    assert gradiente.is_complex(ours) == torch.is_complex(theirs)
    assert gradiente.is_signed(ours) == torch.is_signed(theirs) == ours.is_signed()
    assert gradiente.is_nonzero(ours[:1]) == torch.is_nonzero(theirs[:1]) == ours[:1].is_nonzero()
    assert gradiente.is_same_size(ours, ours[:1]) is torch.is_same_size(theirs, theirs[:1]) is False
    assert ours.is_same_size(ours) is True


def test_predicate_errors_match_torch():
    for fn in (lambda lib: lib.is_complex(1.0), lambda lib: lib.is_signed(1), lambda lib: lib.is_nonzero(1),
               lambda lib: lib.is_nonzero(lib.tensor([])), lambda lib: lib.is_nonzero(lib.tensor([1, 2])),
               lambda lib: lib.is_same_size(lib.ones(2), 1)):
        check_same_error(fn)
    assert gradiente.is_nonzero(gradiente.tensor(float("nan"))) is torch.is_nonzero(torch.tensor(float("nan")))
    assert gradiente.is_nonzero(gradiente.tensor([[0.0]])) is torch.is_nonzero(torch.tensor([[0.0]]))


def test_typename_matches_torch():
    for obj in (1, int, "a", None, len, np.zeros(1), np.ndarray):
        assert gradiente.typename(obj) == torch.typename(obj)
    for name in ("float32", "int64", "complex64", "bool"):
        ours, theirs = both_quietly(lambda lib, name=name: lib.ones(1, dtype=getattr(lib, name)))
        assert gradiente.typename(ours) == torch.typename(theirs)
    assert gradiente.typename(gradiente.nn.Linear(1, 1)) == "gradiente.nn.modules.linear.Linear"


@pytest.mark.parametrize("shapes", [((2, 1), (3,)), (), (2, (3, 1)), ((1, 2), (3, 1), (4, 1, 2)), ((0,), (1,)),
                                    ([2, 1], (1, 4))])
def test_broadcast_shapes_matches_torch(shapes):
    assert tuple(gradiente.broadcast_shapes(*shapes)) == tuple(torch.broadcast_shapes(*shapes))
    assert isinstance(gradiente.broadcast_shapes(*shapes), gradiente.Size)


@pytest.mark.parametrize("shapes", [((2,), (3,)), ((2, 3), (4, 3), (1,)), ((1, 2), (3, 1), (4, 1, 5)), ((-1,),),
                                    ((0,), (2,)), ((5,), (2, 3), (3,)), ((2.0,),)])
def test_broadcast_shapes_errors_match_torch(shapes):
    check_same_error(lambda lib: lib.broadcast_shapes(*shapes))
