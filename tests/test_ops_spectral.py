"""``torch.stft`` and ``torch.istft`` (``ops/spectral.py``) against PyTorch: values and dtypes over the arguments
(hop, window and its length, center and pad modes, normalized, onesided, return_complex, align_to_window,
length), the graph's last node, first and second derivatives in the signal, the spectrogram and the window
(gradcheck in float64, PyTorch's gradients on the same inputs), the round trip, and the errors and warnings."""
import warnings

import numpy as np
import pytest
from harness import OpSpec, error_of, on_both, plain, spec_tests

import gradiente

torch = pytest.importorskip("torch")


def real_view(lib, t):
    return lib.view_as_real(t.resolve_conj()) if t.is_complex() else t


def as_complex(lib, x):
    return lib.view_as_complex(x.contiguous())


def hann(lib, n, like):
    return lib.hann_window(n, periodic=True, dtype=like.dtype)


SPECS = [
    OpSpec("stft_default", lambda lib, x: real_view(lib, lib.stft(x, 8, return_complex=True)), [((20,),), ((2, 17),)]),
    OpSpec("stft_hann_hop_win", lambda lib, x: real_view(lib, lib.stft(
        x, 8, hop_length=3, win_length=6, window=hann(lib, 6, x), return_complex=True)), [((21,),), ((2, 16),)]),
    OpSpec("stft_not_centered_normalized", lambda lib, x: real_view(lib, lib.stft(
        x, 7, hop_length=2, center=False, normalized=True, return_complex=True)), [((15,),)]),
    OpSpec("stft_two_sided_constant_pad", lambda lib, x: real_view(lib, lib.stft(
        x, 6, onesided=False, pad_mode="constant", return_complex=True)), [((2, 13),)]),
    OpSpec("stft_replicate_pad", lambda lib, x: lib.stft(x, 6, pad_mode="replicate", return_complex=False),
           [((12,),)]),
    OpSpec("stft_aligned_to_window", lambda lib, x: real_view(lib, lib.stft(
        x, 8, hop_length=3, win_length=4, window=hann(lib, 4, x), center=False, align_to_window=True,
        return_complex=True)), [((19,),)]),
    OpSpec("stft_complex_signal", lambda lib, x: real_view(lib, lib.stft(
        as_complex(lib, x), 6, hop_length=2, window=hann(lib, 6, x), return_complex=True)), [((14, 2),)]),
    OpSpec("stft_window_gradient", lambda lib, x, w: real_view(lib, lib.stft(
        x, 6, hop_length=2, window=w, return_complex=True)), [((14,), (6,))]),
    OpSpec("istft_default", lambda lib, x: lib.istft(as_complex(lib, x), 8, window=hann(lib, 8, x) + 0.1),
           [((5, 6, 2),), ((2, 5, 4, 2),)]),
    OpSpec("istft_not_centered_hop", lambda lib, x: lib.istft(
        as_complex(lib, x), 6, hop_length=2, window=hann(lib, 6, x) + 0.1, center=False), [((4, 5, 2),)]),
    OpSpec("istft_short_window_normalized_length", lambda lib, x: lib.istft(
        as_complex(lib, x), 8, hop_length=2, win_length=6, window=hann(lib, 6, x) + 0.1, normalized=True,
        length=11), [((5, 7, 2),)]),
    OpSpec("istft_two_sided", lambda lib, x: lib.istft(
        as_complex(lib, x), 6, hop_length=2, window=hann(lib, 6, x) + 0.1, onesided=False), [((6, 5, 2),)]),
    OpSpec("istft_complex_result", lambda lib, x: real_view(lib, lib.istft(
        as_complex(lib, x), 6, hop_length=2, window=hann(lib, 6, x) + 0.1, return_complex=True)),
           [((6, 5, 2),)]),
    OpSpec("istft_padded_length", lambda lib, x: lib.istft(
        as_complex(lib, x), 6, hop_length=3, window=hann(lib, 6, x) + 0.1, length=16), [((4, 3, 2),)]),
    # a gradient of istft's, itself differentiated: overlap-add's adjoint (UnfoldBackward0) becomes a node
    OpSpec("istft_gradient_differentiated", lambda lib, x: lib.autograd.grad(
        lib.istft(as_complex(lib, x), 6, hop_length=2, window=hann(lib, 6, x) + 0.1).pow(2).sum(), x,
        create_graph=True)[0], [((4, 5, 2),)],
           check_name=False),   # the last node is view_as_complex's gradient, which gradiente records as a stack
    OpSpec("istft_window_gradient", lambda lib, x, w: lib.istft(as_complex(lib, x), 6, hop_length=2, window=w),
           [((4, 5, 2), (6,))], domain=(0.5, 1.5)),
]

test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", [
    {"n_fft": 16}, {"n_fft": 16, "hop_length": 5, "win_length": 11, "window": "hann"},
    {"n_fft": 15, "center": False}, {"n_fft": 16, "normalized": True, "onesided": False},
    {"n_fft": 16, "pad_mode": "circular", "window": "hann"}, {"n_fft": 64},
    {"n_fft": 16, "hop_length": 16, "window": "hann"}])
def test_stft_values_and_round_trip_match_torch(dtype, case):
    rng = np.random.RandomState(0)
    signal = rng.randn(2, 64)
    signal[0, 10] = 1e6      # a large value beside small ones
    signal[1, :8] = 0.0
    results = []
    for lib in (gradiente, torch):
        kwargs = dict(case)
        if kwargs.get("window") == "hann":
            kwargs["window"] = lib.hann_window(kwargs.get("win_length", kwargs["n_fft"]),
                                               dtype=getattr(lib, dtype))
        x = lib.tensor(signal, dtype=getattr(lib, dtype))
        spectrum = lib.stft(x, return_complex=True, **kwargs)
        kwargs.pop("pad_mode", None)
        back = _quiet(lib.istft, spectrum, length=64, **kwargs) if case.get("hop_length") != 16 else None
        results.append((spectrum, back, x.stft(return_complex=True, **dict(case, window=kwargs.get("window")))))
    (ours, ours_back, ours_method), (theirs, theirs_back, theirs_method) = results
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert ours.shape == theirs.shape
    scale = np.abs(theirs.numpy()).max()
    tolerance = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=tolerance, atol=tolerance * scale)
    np.testing.assert_allclose(ours_method.numpy(), theirs_method.numpy(), rtol=tolerance, atol=tolerance * scale)
    if ours_back is not None:
        np.testing.assert_allclose(ours_back.numpy(), theirs_back.numpy(), rtol=tolerance,
                                   atol=tolerance * scale)


def test_stft_of_nonfinite_values_matches_torch():
    x = [0.0, 1.0, np.inf, 2.0, -1.0, np.nan, 3.0, 0.5, -2.0, 1.5, 0.25, 4.0]
    ours = gradiente.stft(gradiente.tensor(x), 4, center=False, return_complex=True)
    theirs = torch.stft(torch.tensor(x), 4, center=False, return_complex=True)
    np.testing.assert_array_equal(np.isnan(ours.numpy()), np.isnan(theirs.numpy()))
    finite = np.isfinite(theirs.numpy())
    np.testing.assert_allclose(ours.numpy()[finite], theirs.numpy()[finite], rtol=1e-6)


PROGRAMS = {
    "graph": lambda lib, x, w: [type(t.grad_fn).__name__ for t in (
        lib.stft(x, 4, return_complex=True), lib.stft(x.view(2, 6), 4, return_complex=True),
        lib.stft(x, 4, window=w, return_complex=False), lib.istft(lib.stft(x, 4, window=w, return_complex=True),
                                                                  4, window=w),
        lib.istft(lib.stft(x.view(2, 6), 4, window=w, return_complex=True), 4, window=w),
        lib.istft(lib.stft(x, 4, window=w, return_complex=True), 4, window=w, length=20))],
    "shapes_and_dtypes": lambda lib, x, w: [(tuple(t.shape), str(t.dtype).split(".")[-1]) for t in (
        lib.stft(x.double(), 5, hop_length=2, return_complex=True), lib.stft(x, 4, onesided=False, return_complex=True),
        lib.stft(x.to(lib.complex64), 4), lib.stft(x, 4, window=w.to(lib.complex64)),
        lib.istft(lib.stft(x, 4, window=w, return_complex=True), 4, window=w, center=True, length=5))],
    "round_trip": lambda lib, x, w: [round(v, 5) for v in plain(
        lib.istft(lib.stft(x, 4, hop_length=1, window=w, return_complex=True), 4, hop_length=1, window=w))],
    "return_complex_required": lambda lib, x, w: lib.stft(x, 4),
    "align_with_center": lambda lib, x, w: lib.stft(x, 4, return_complex=True, align_to_window=True),
    "n_fft_too_large": lambda lib, x, w: lib.stft(x, 13, center=False, return_complex=True),
    "n_fft_zero": lambda lib, x, w: lib.stft(x, 0, return_complex=True),
    "hop_zero": lambda lib, x, w: lib.stft(x, 4, hop_length=0, return_complex=True),
    "win_too_long": lambda lib, x, w: lib.stft(x, 4, win_length=5, return_complex=True),
    "window_of_wrong_size": lambda lib, x, w: lib.stft(x, 4, win_length=3, window=w, return_complex=True),
    "three_dims": lambda lib, x, w: lib.stft(x.view(1, 2, 6), 4, return_complex=True),
    "integer_signal": lambda lib, x, w: lib.stft(lib.arange(12), 4, return_complex=True),
    "bad_pad_mode": lambda lib, x, w: lib.stft(x, 4, pad_mode="mirror", return_complex=True),
    "reflect_too_short": lambda lib, x, w: lib.stft(x[:3], 8, return_complex=True),
    "half_signal": lambda lib, x, w: lib.stft(x.half(), 4, return_complex=True),
    "bfloat16_signal": lambda lib, x, w: lib.stft(x.bfloat16(), 4, return_complex=True),
    "float32_signal_float64_window": lambda lib, x, w: str(lib.stft(x, 4, window=w.double(),
                                                                  return_complex=True).dtype).split(".")[-1],
    "istft_one_frame_centered": lambda lib, x, w: lib.istft(lib.ones(3, 1, dtype=lib.complex64), 4, window=w),
    "complex_onesided": lambda lib, x, w: lib.stft(x.to(lib.complex64), 4, onesided=True),
    "istft_real_input": lambda lib, x, w: lib.istft(x.view(3, 4), 4, window=w),
    "istft_one_dim": lambda lib, x, w: lib.istft(x.to(lib.complex64), 4, window=w),
    "istft_empty": lambda lib, x, w: lib.istft(lib.zeros(3, 0, dtype=lib.complex64), 4, window=w),
    "istft_five_dims": lambda lib, x, w: lib.istft(lib.zeros(1, 1, 3, 2, dtype=lib.complex64), 4, window=w),
    "istft_two_sided_by_default": lambda lib, x, w: plain(lib.istft(lib.ones(4, 3, dtype=lib.complex64), 4, window=w)),
    "istft_wrong_bins": lambda lib, x, w: lib.istft(lib.zeros(5, 3, dtype=lib.complex64), 4, window=w),
    "istft_wrong_bins_two_sided": lambda lib, x, w: lib.istft(lib.zeros(3, 3, dtype=lib.complex64), 4, window=w,
                                                              onesided=False),
    "istft_hop_too_long": lambda lib, x, w: lib.istft(lib.ones(3, 3, dtype=lib.complex64), 4, hop_length=5,
                                                      window=w),
    "istft_window_wrong": lambda lib, x, w: lib.istft(lib.ones(3, 3, dtype=lib.complex64), 4, window=w[:3]),
    "istft_not_nola": lambda lib, x, w: lib.istft(lib.ones(3, 3, dtype=lib.complex64), 4, hop_length=4,
                                                  window=lib.hann_window(4)),
    "istft_complex_result_onesided": lambda lib, x, w: lib.istft(lib.ones(3, 3, dtype=lib.complex64), 4, window=w,
                                                                 return_complex=True),
    "istft_complex_window": lambda lib, x, w: lib.istft(lib.ones(3, 3, dtype=lib.complex64), 4,
                                                        window=w.to(lib.complex64)),
}


@pytest.mark.parametrize("program", list(PROGRAMS))
def test_programs_match_pytorch(program):
    def scenario(lib):
        x = lib.tensor([0.5, -1.0, 2.0, 0.25, -0.75, 1.5, 3.0, -2.0, 1.0, 0.0, 0.5, 2.5], requires_grad=True)
        w = lib.hann_window(4) + 0.5
        return _quiet(PROGRAMS[program], lib, x, w)

    on_both(scenario)


WARNING_CALLS = {
    "stft_without_window": "lib.stft(x, 4, return_complex=True)",
    "stft_real_result": "lib.stft(x, 4, window=lib.ones(4), return_complex=False)",
    "istft_without_window": "lib.istft(lib.stft(x, 4, window=lib.ones(4), return_complex=True), 4)",
    "istft_padded_tail": "lib.stft(x, 4, window=lib.ones(4), return_complex=True).istft(4, window=lib.ones(4), "
                         "length=30)",
}
WARNINGS_SCRIPT = """
import json, sys, warnings
import {lib} as lib
x = lib.arange(12.0)
seen = []
for call in json.loads(sys.argv[1]):
    for _ in range(2):      # once per process: the second call is silent
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            eval(call)
        seen.append([(w.category.__name__, str(w.message).split(" (Triggered internally")[0]) for w in caught])
print(json.dumps(seen))
"""


def _warnings_in_a_fresh_process(lib):
    # PyTorch gives these warnings once per process, so each library runs the calls in a process of its own
    import json
    import os
    import subprocess
    import sys
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    calls = json.dumps(list(WARNING_CALLS.values()))
    done = subprocess.run([sys.executable, "-c", WARNINGS_SCRIPT.format(lib=lib), calls], capture_output=True,
                          text=True, env=env, check=True)
    return json.loads(done.stdout)


def test_warnings_match_pytorch_once_per_process():
    ours, theirs = _warnings_in_a_fresh_process("gradiente"), _warnings_in_a_fresh_process("torch")
    assert ours == theirs
    assert all(theirs[0::2]) and not any(theirs[1::2])       # each warned, each once


@pytest.mark.parametrize("call", [
    lambda lib: lib.stft(lib.zeros(10, dtype=lib.float64), 12, hop_length=3, window=lib.ones(12), center=False,
                         normalized=True, onesided=False, return_complex=True),
    lambda lib: lib.istft(lib.ones(3, 2, dtype=lib.complex128), 4, window=lib.ones(4), normalized=True,
                          onesided=True, length=7, center=False, hop_length=5)])
def test_errors_name_the_call_as_pytorch_does(call):
    # the call's description in the messages prints the window, flags and defaults as PyTorch's C++ does
    theirs = error_of(lambda: call(torch))
    assert theirs is not None
    assert error_of(lambda: call(gradiente)) == theirs
