"""The short-time Fourier transform and its inverse, ``torch.stft`` and ``torch.istft``, built from differentiable
ops, so their derivatives (of every order, and forward mode) come from those ops' rules.

``stft`` pads the signal (``center``), cuts it into frames ``hop_length`` apart (``as_strided``, a view), multiplies
each by the window (zero-padded to ``n_fft`` around its centre) and transforms each frame (the ``fft`` module's
r2c or c2c primitive); the result is (batch?, frequencies, frames).

``istft`` moves the spectrogram's dims on its real view (as PyTorch does), inverts each frame (c2r or c2c),
multiplies it by the window again and adds the frames back where they came from (overlap-add,
``UnfoldBackwardBackward0`` as in PyTorch), then divides by the overlap-added squared window, the least-squares
inverse of ``stft`` wherever that envelope is not zero (the NOLA condition).
"""
import warnings

import numpy as np

from ..core import dtype as dt
from ..core.dtype import scalar_name
from ..core.tensor import Tensor
from .arithmetic import div, mul, pow
from .complex_numbers import view_as_complex, view_as_real
from .fft import _fft_c2c, _fft_c2r, _fft_r2c
from .nn.linear_maps import _node_pair, linear_op
from .nn.padding import pad
from .views import as_strided, expand, narrow, slice_dim, squeeze, squeeze_, transpose, transpose_, unsqueeze, view

__all__ = ["stft", "istft"]

_RETURN_COMPLEX_REQUIRED = ("stft requires the return_complex parameter be given for real inputs, and will further "
                            "require that return_complex=True in a future PyTorch release.")
_RETURN_REAL_DEPRECATED = ("stft with return_complex=False is deprecated. In a future pytorch release, stft will "
                           "return complex tensors for all inputs, and return_complex=False will raise an error.\n"
                           "Note: you can still call torch.view_as_real on the complex output to recover the old "
                           "return format.")
_NO_STFT_WINDOW = ("A window was not provided. A rectangular window will be applied,which is known to cause spectral "
                   "leakage. Other windows such as torch.hann_window or torch.hamming_window are recommended to "
                   "reduce spectral leakage.To suppress this warning and use a rectangular window, explicitly set "
                   "`window=torch.ones(n_fft, device=<device>)`.")
_NO_WINDOW = ("A window was not provided. A rectangular window will be applied.Please provide the same window used by "
              "stft to make the inversion lossless.To suppress this warning and use a rectangular window, explicitly "
              "set `window=torch.ones(n_fft, device=<device>)`.")
_COMPLEX_ONESIDED = "Cannot have onesided output if window or input is complex"
_PADDED_TAIL = ("The length of signal is shorter than the length parameter. Result is being padded with zeros in the "
                "tail. Please check your center and hop_length settings.")
_NOLA_FLOOR = 1e-11

#: the warnings given so far: PyTorch gives each of these once per process (TORCH_WARN_ONCE)
_WARNED = set()


def _warn_once(message):
    if message not in _WARNED:
        _WARNED.add(message)
        warnings.warn(message, UserWarning, stacklevel=3)


# --- overlap-add and its adjoint, framing ---------------------------------------------------------------------

def _overlap_add_array(frames, hop, length):
    """(B, T, n) frames -> (B, length): frame t added at t·hop. Vectorised by slices of ``hop`` columns: the
    k-th slice of every frame lands on a disjoint stretch, so one strided add places it for all frames."""
    batch, count, size = frames.shape
    out = np.zeros((batch, (count + -(-size // hop)) * hop), dtype=frames.dtype)
    for start in range(0, size, hop):
        width = min(hop, size - start)
        stretch = out[:, start:start + count * hop].reshape(batch, count, hop)
        stretch[:, :, :width] += frames[:, :, start:start + width]
    return out[:, :length]


def _frames_array(signal, hop, size, count):
    """(B, length) -> (B, T, n): the adjoint of overlap-add, frame t read from t·hop (a copy)."""
    windows = np.lib.stride_tricks.sliding_window_view(signal, size, axis=-1)
    return np.ascontiguousarray(windows[:, ::hop][:, :count])


UnfoldBackwardBackward0, _FramesBackward = _node_pair(
    "UnfoldBackwardBackward0", "UnfoldBackward0",
    "overlap-add puts frame t at t·hop (summing overlaps);  dframes = grad read back frame by frame", __name__)
# overlap-add moves and sums values with real weights: right for complex gradients as written
UnfoldBackwardBackward0.complex_ok = _FramesBackward.complex_ok = True


def _overlap_add(frames, hop, length):
    count, size = frames.shape[1], frames.shape[2]
    return linear_op(frames, lambda a: _overlap_add_array(a, hop, length),
                     lambda g: _frames_array(g, hop, size, count), UnfoldBackwardBackward0)


# --- what PyTorch's messages print --------------------------------------------------------------------------

def _legacy_name(t):
    return f"torch.{t.dtype._legacy}"


def _flag(value):
    return "None" if value is None else str(int(value))


def _stft_call(input, n_fft, hop_length, win_length, window, normalized, onesided, return_complex, align):
    shown = "None" if window is None else f"{_legacy_name(window)}{{{list(window.shape)}}}"
    return (f"stft({_legacy_name(input)}{list(input.shape)}, n_fft={n_fft}, hop_length={hop_length}, "
            f"win_length={win_length}, window={shown}, normalized={_flag(normalized)}, onesided={_flag(onesided)}, "
            f"return_complex={_flag(return_complex)}, align_to_window={_flag(align)})")


def _istft_call(input, n_fft, hop_length, win_length, window, center, normalized, onesided, length, return_complex):
    shown = "None" if window is None else f"{_legacy_name(window)}{{{list(window.shape)}}}"
    return (f"istft(CPU{scalar_name(input._data.dtype)}Type{list(input.shape)}, n_fft={n_fft}, "
            f"hop_length={hop_length}, win_length={win_length}, window={shown}, center={_flag(center)}, "
            f"normalized={_flag(normalized)}, onesided={_flag(onesided)}, length={_flag(length)}, "
            f"return_complex={_flag(return_complex)})")


def _check_fft_precision(t):
    """PyTorch's CPU transforms (MKL) refuse half precision; so do these."""
    if t._data.dtype.itemsize <= 2:
        raise RuntimeError(f"MKL FFT doesn't support tensors of type: {scalar_name(t._data.dtype)}")


def _window_of_n_fft(window, win_length, n_fft, dtype):
    """The window as ``n_fft`` points: ones when none is given, zero-padded around its centre when shorter."""
    if window is None:
        window = Tensor._make(np.ones(win_length, dtype=dtype))
    if win_length == n_fft:
        return window
    left = (n_fft - win_length) // 2
    return pad(window, (left, n_fft - win_length - left))


# --- stft --------------------------------------------------------------------------------------------------

def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None, align_to_window=None):
    """Short-time Fourier transform of a signal (L,) or a batch of signals (B, L): (B?, N, T) complex, N =
    n_fft // 2 + 1 when ``onesided`` (the default for real input and window) or n_fft, T the number of frames
    (1 + L // hop_length with ``center``, which pads n_fft // 2 on each side by ``pad_mode``). With
    ``return_complex=False`` (deprecated, warns) the real view (B?, N, T, 2). ``hop_length`` defaults to
    n_fft // 4, ``win_length`` to n_fft, ``window`` to ones; ``normalized`` scales by 1/√n_fft;
    ``align_to_window`` (only without ``center``) starts each frame where its window starts. Differentiable
    in the signal and the window. Warns once, as PyTorch, when no window is given."""
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if center:
        signal_dims = input.dim()
        margin = n_fft // 2
        padded = pad(view(input, *([1] * (3 - signal_dims) + list(input.shape))), (margin, margin), pad_mode)
        input = view(padded, *padded.shape[3 - signal_dims:])
    if window is None:
        _warn_once(_NO_STFT_WINDOW)
    complex_window = window is not None and window.is_complex()
    if return_complex is None and not (input.is_complex() or complex_window):
        raise RuntimeError(_RETURN_COMPLEX_REQUIRED)
    if return_complex is None:
        return_complex = True
    if not return_complex:
        _warn_once(_RETURN_REAL_DEPRECATED)
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    call = _stft_call(input, n_fft, hop, win, window, normalized, onesided, return_complex, align_to_window)
    if input.dim() not in (1, 2):
        raise RuntimeError(f"{call} : expected a 1D or 2D tensor")
    if dt.kind(input._data.dtype) not in "fc":
        raise RuntimeError(f"{call} : expected a tensor of floating point or complex values")
    signal = input if input.dim() == 2 else unsqueeze(input, 0)
    length = signal.shape[1]
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(f"{call} : expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(f"{call} : expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise RuntimeError(f"{call} : expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise RuntimeError(f"{call} : expected a 1D window tensor of size equal to win_length={win}, but got window "
                           f"with size {list(window.shape)}")
    if align_to_window and win < n_fft:
        # the frames start where their windows do: the window's zero margins reach outside the signal
        left = (n_fft - win) // 2
        signal = pad(signal, (left, n_fft - win - left))
    # (B, T, n_fft): frames hop elements apart, as PyTorch cuts them, with as_strided (a view)
    row_stride, step = signal.stride()
    frames = as_strided(signal, (signal.shape[0], 1 + (signal.shape[1] - n_fft) // hop, n_fft),
                        (row_stride, hop * step, step))
    if window is not None or win < n_fft:
        frames = mul(frames, _window_of_n_fft(window, win, n_fft, np.finfo(input._data.dtype).dtype))
    _check_fft_precision(frames)
    real_in = not frames.is_complex()
    onesided = real_in if onesided is None else onesided
    if onesided and not real_in:
        raise RuntimeError(_COMPLEX_ONESIDED)
    normalization = "by_root_n" if normalized else "none"
    if real_in:
        spectrum = _fft_r2c(frames, [2], normalization, bool(onesided))
    else:
        spectrum = _fft_c2c(frames, [2], normalization, True)
    spectrum = transpose_(spectrum, 1, 2)                   # (B, N, T)
    if input.dim() == 1:
        spectrum = squeeze_(spectrum, 0)
    return spectrum if return_complex else view_as_real(spectrum)


# --- istft -------------------------------------------------------------------------------------------------

def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    """Inverse of ``stft``: a complex spectrogram (B?, N, T) back to the signal (B?, L), L = n_fft + hop_length·(T
    - 1), less n_fft // 2 at each end with ``center``, or ``length`` (cut, or padded with zeros after a warning).
    N must be n_fft // 2 + 1 when ``onesided`` (the default when N != n_fft), else n_fft. The frames are
    overlap-added and divided by the overlap-added squared window, which must not vanish anywhere (NOLA).
    ``return_complex=True`` returns the complex signal (two-sided input only). Differentiable in the
    spectrogram and the window. Warns (once, as PyTorch) when no window is given."""
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    call = _istft_call(input, n_fft, hop, win, window, center, normalized, onesided, length, return_complex)
    if window is None:
        _warn_once(_NO_WINDOW)
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft with "
                           "return_complex=True.")
    real_dims = input.dim() + 1                  # PyTorch checks the real view (..., 2) of the spectrogram
    if input.dim() < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-real_dims}, {real_dims - 1}], "
                         f"but got -3)")
    bins, count = input.shape[-2], input.shape[-1]
    if input.numel() == 0:
        raise RuntimeError(f"{call} : input tensor cannot be empty.")
    if real_dims not in (3, 4):
        raise RuntimeError(f"{call} : expected a tensor with 3 or 4 dimensions, but got {real_dims}")
    onesided = bins != n_fft if onesided is None else onesided
    if onesided and n_fft // 2 + 1 != bins:
        raise RuntimeError(f"{call} : expected the frequency dimension (3rd to the last) of the input tensor to match "
                           f"n_fft / 2 + 1 when onesided=True, but got {bins}")
    if not onesided and n_fft != bins:
        raise RuntimeError(f"{call} : expected the frequency dimension (3rd to the last) of the input tensor to match "
                           f"n_fft when onesided=False, but got {bins}")
    if not 0 < hop <= win:
        raise RuntimeError(f"{call} : expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        raise RuntimeError(f"{call} : expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise RuntimeError(f"{call} : Invalid window shape. window has to be 1D and length of `win_length`")
    real_dtype = np.finfo(input._data.dtype).dtype
    full_window = _window_of_n_fft(window, win, n_fft, real_dtype)
    # (B, T, N), moved as PyTorch moves it: on the real view of the spectrogram, viewed as complex again
    as_real = view_as_real(input)
    spectra = view_as_complex(transpose(as_real if input.dim() == 3 else unsqueeze(as_real, 0), 1, 2))
    normalization = "by_root_n" if normalized else "by_n"
    if return_complex:
        if onesided:
            raise RuntimeError(_COMPLEX_ONESIDED)
        frames = _fft_c2c(spectra, [2], normalization, False)
    else:
        if window is not None and window.is_complex():
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not onesided:
            spectra = narrow(spectra, 2, 0, n_fft // 2 + 1)
        frames = _fft_c2r(spectra, [2], normalization, n_fft)
    expected = n_fft + hop * (count - 1)
    signal = _overlap_add(mul(frames, view(full_window, 1, 1, n_fft)), hop, expected)
    envelope = _overlap_add(expand(pow(full_window, 2), 1, count, n_fft), hop, expected)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (-(n_fft // 2) if center else expected)
    signal = slice_dim(signal, 1, start, end, 1)
    envelope = slice_dim(envelope, 1, start, end, 1)
    if envelope.numel() == 0:
        # PyTorch's check takes the envelope's minimum, which an empty signal does not have
        raise RuntimeError("min(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                           "reduction dim with the 'dim' argument.")
    if np.abs(envelope._data).min() < _NOLA_FLOOR:
        raise RuntimeError(f"{call} window overlap add min: 1\n[ CPUBoolType{{}} ]")
    signal = div(signal, envelope)
    if input.dim() == 2:
        signal = squeeze(signal, 0)
    if end > expected:
        _warn_once(_PADDED_TAIL)
        signal = pad(signal, (0, end - expected))
    return signal
