"""float32 square roots rounded as PyTorch's (MKL's ``vsSqrt``) on the CPUs measured: ``core/vml_sqrt.py``."""
import shutil

import numpy as np
import pytest
import torch

import gradiente
from gradiente.core import vml_sqrt
from gradiente.core.cpu_flags import cpu_flags

pytestmark = pytest.mark.usefixtures("torch_on_one_thread")


needs_mkl_rounding = pytest.mark.skipif(
    not vml_sqrt.TAKEN, reason="this CPU lacks AVX-512 FP16: MKL's sqrt is not the one measured, NumPy's is taken")


def _same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool(np.all((a.view(np.uint32) == b.view(np.uint32)) | (np.isnan(a) & np.isnan(b))))


def _inputs():
    rng = np.random.default_rng(11)
    return {
        "uniform in [0, 4)": (rng.random(200_000) * 4).astype(np.float32),
        "over every exponent": np.exp(rng.uniform(-100, 88, 200_000)).astype(np.float32),
        "subnormal": rng.integers(1, 1 << 23, 20_000).astype(np.uint32).view(np.float32),
        "special": np.array([0, -0.0, np.inf, -np.inf, np.nan, -1, 1, 2, 4, 3.4e38, 1.2e-38], np.float32),
    }


def test_the_table_holds_the_inputs_whose_root_is_one_unit_low():
    keys = np.nonzero(np.unpackbits(vml_sqrt._table(), bitorder="little"))[0]
    assert len(keys) == 98_955 and keys.max() < 1 << 24
    inputs = (keys + 0x3F800000).astype(np.uint32).view(np.float32)     # the keys are the floats of [1, 4)
    exact = np.sqrt(inputs.astype(np.float64))
    rounded = np.sqrt(inputs)
    # each lies just above a half-way point, so that a root computed a little low rounds one unit down
    position = (exact - rounded.astype(np.float64)) / np.spacing(rounded).astype(np.float64)
    assert np.all((position > -0.5) & (position < -0.43))


@needs_mkl_rounding
@pytest.mark.parametrize("kind", list(_inputs()))
def test_sqrt_equals_pytorchs_bit_for_bit(kind):
    x = _inputs()[kind]
    theirs = torch.from_numpy(x).sqrt().numpy()
    assert _same_bits(gradiente.from_numpy(x).sqrt().numpy(), theirs)
    with np.errstate(invalid="ignore"):
        assert not _same_bits(np.sqrt(x), theirs) or kind == "special"     # NumPy's correctly rounded root is not
    assert _same_bits((gradiente.from_numpy(x) ** 0.5).numpy(), torch.from_numpy(x).pow(0.5).numpy())


@needs_mkl_rounding
@pytest.mark.parametrize("kind", list(_inputs()))
def test_small_arrays_look_every_root_up(kind):
    """Arrays of up to 8,192 elements skip the float64 test and look each root up (an optimizer's bias, a small
    layer's weights): the same bits."""
    x = _inputs()[kind]
    for size in (1, 7, 300, 8192):
        for start in range(0, min(len(x), 20_000), 4099):
            piece = x[start:start + size]
            assert _same_bits(gradiente.from_numpy(piece).sqrt().numpy(), torch.from_numpy(piece).sqrt().numpy())


@needs_mkl_rounding
def test_in_place_strided_and_zero_dimensional_roots():
    x = _inputs()["uniform in [0, 4)"][:3000]
    ours, theirs = gradiente.from_numpy(x.copy()), torch.from_numpy(x.copy())
    ours.sqrt_()
    theirs.sqrt_()
    assert _same_bits(ours.numpy(), theirs.numpy())
    assert _same_bits(gradiente.from_numpy(x)[::3].sqrt().numpy(), torch.from_numpy(x)[::3].sqrt().numpy())
    low = x[np.argmax(vml_sqrt.sqrt(x) != np.sqrt(x))]         # an input MKL rounds down
    assert gradiente.tensor(float(low)).sqrt().item() == torch.tensor(float(low)).sqrt().item()
    assert gradiente.tensor(float(low)).sqrt().item() != float(np.sqrt(low))


@needs_mkl_rounding
@pytest.mark.parametrize("name, kwargs", [
    ("Adam", {"lr": 0.1}), ("AdamW", {"lr": 0.1, "amsgrad": True}), ("Adagrad", {"lr": 0.1}),
    ("Adadelta", {"lr": 1.0}), ("RMSprop", {"lr": 0.01}), ("RMSprop", {"lr": 0.01, "centered": True}),
    ("NAdam", {"lr": 0.1}), ("RAdam", {"lr": 0.1}),
])
def test_optimizers_take_pytorchs_roots(name, kwargs):
    """Every Adam-family step divides by a square root: with NumPy's, a training run's numbers left PyTorch's at
    the first step."""
    results = []
    for lib in (gradiente, torch):
        lib.manual_seed(0)
        p = lib.nn.Parameter(lib.randn(5000))
        optimizer = getattr(lib.optim, name)([p], **kwargs)
        for _ in range(8):
            p.grad = lib.randn(5000)
            optimizer.step()
        results.append(p.detach().numpy().copy())
    assert _same_bits(*results)


def test_elsewhere_the_root_is_numpys(monkeypatch):
    monkeypatch.setattr(vml_sqrt, "TAKEN", False)
    x = _inputs()["uniform in [0, 4)"]
    assert _same_bits(gradiente.from_numpy(x).sqrt().numpy(), np.sqrt(x))


def test_the_cpu_and_the_setting_decide(tmp_path):
    with_fp16 = tmp_path / "fp16"
    with_fp16.write_text("processor\t: 0\nflags\t\t: fpu sse avx512f avx512_fp16 amx_tile\n")
    without = tmp_path / "plain"
    without.write_text("processor\t: 0\nflags\t\t: fpu sse avx2 avx512f\n")
    assert vml_sqrt._taken({}, str(with_fp16)) is True
    assert vml_sqrt._taken({}, str(without)) is False
    assert vml_sqrt._taken({}, str(tmp_path / "missing")) is False
    assert vml_sqrt._taken({"GRADIENTE_VML_SQRT": "1"}, str(without)) is True
    assert vml_sqrt._taken({"GRADIENTE_VML_SQRT": "0"}, str(with_fp16)) is False
    with pytest.warns(UserWarning, match="neither 0 nor 1"):
        assert vml_sqrt._taken({"GRADIENTE_VML_SQRT": "yes"}, str(with_fp16)) is True


@pytest.mark.skipif(shutil.which("cc") is None or "avx512f" not in cpu_flags(), reason="needs a C compiler and AVX-512")
def test_the_stored_table_is_what_the_cpus_instructions_give():
    """``tools/vml_sqrt_table.py`` runs MKL's four steps (``vrsqrt14ps`` and a Newton step) on every float32 of
    [1, 4): the file holds exactly the inputs they round one unit low."""
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).parent.parent / "tools" / "vml_sqrt_table.py"
    spec = importlib.util.spec_from_file_location("vml_sqrt_table", path)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    stored = np.nonzero(np.unpackbits(vml_sqrt._table(), bitorder="little"))[0]
    assert np.array_equal(tool.rounded_down_keys(), stored)


@needs_mkl_rounding
def test_roots_of_views_in_any_memory_order():
    """The roots are found in the input's memory order and written back in the root's: transposed, strided,
    permuted and reversed views all get PyTorch's values."""
    rng = np.random.default_rng(3)
    base = (rng.random((300, 400)) * 4).astype(np.float32)
    for view in (base.T, base[::3, 1::2], base.reshape(30, 10, 400).transpose(2, 0, 1), base[::-1]):
        theirs = torch.from_numpy(np.ascontiguousarray(view)).sqrt().numpy()
        assert np.array_equal(vml_sqrt.sqrt(view), theirs)
        if all(stride > 0 for stride in view.strides):        # (from_numpy refuses negative strides, as PyTorch)
            assert np.array_equal(gradiente.from_numpy(view).sqrt().numpy(), theirs)
