"""``torch.fft`` (``ops/fft.py``) against PyTorch: values, dtypes, the graph's nodes, first and second derivatives
(gradcheck in float64 and PyTorch's gradients on the same inputs), forward mode, and the errors. Complex outputs
are read through ``view_as_real`` so the op-spec tables can check them as real tensors."""
import numpy as np
import pytest
from harness import OpSpec, on_both, plain, spec_tests

import gradiente

torch = pytest.importorskip("torch")


def real_view(lib, t):
    return lib.view_as_real(t.resolve_conj()) if t.is_complex() else t


def as_complex(lib, x):
    """A complex input made of a real one (..., 2), so the specs' real inputs reach the complex transforms."""
    return lib.view_as_complex(x.contiguous())


SPECS = [
    OpSpec("fft_real", lambda lib, x: real_view(lib, lib.fft.fft(x)), [((6,),), ((3, 5),)]),
    OpSpec("fft_complex", lambda lib, x: real_view(lib, lib.fft.fft(as_complex(lib, x))), [((5, 2),), ((2, 4, 2),)]),
    OpSpec("fft_n_cut_ortho", lambda lib, x: real_view(lib, lib.fft.fft(x, n=4, norm="ortho")), [((6,),)]),
    OpSpec("fft_n_padded_forward", lambda lib, x: real_view(lib, lib.fft.fft(x, n=8, dim=0, norm="forward")),
           [((5, 2),)]),
    OpSpec("ifft_real", lambda lib, x: real_view(lib, lib.fft.ifft(x)), [((6,),)]),
    OpSpec("ifft_complex", lambda lib, x: real_view(lib, lib.fft.ifft(as_complex(lib, x))), [((7, 2),)]),
    OpSpec("rfft", lambda lib, x: real_view(lib, lib.fft.rfft(x)), [((6,),), ((7,),), ((2, 5),)]),
    OpSpec("irfft", lambda lib, x: lib.fft.irfft(as_complex(lib, x)), [((4, 2),), ((2, 5, 2),)]),
    OpSpec("irfft_odd_n", lambda lib, x: lib.fft.irfft(as_complex(lib, x), n=7), [((4, 2),)]),
    OpSpec("fft2", lambda lib, x: real_view(lib, lib.fft.fft2(x)), [((3, 4),), ((2, 3, 4),)]),
    OpSpec("ifftn_s", lambda lib, x: real_view(lib, lib.fft.ifftn(as_complex(lib, x), s=(2, 5))), [((3, 4, 2),)]),
    OpSpec("rfft2", lambda lib, x: real_view(lib, lib.fft.rfft2(x)), [((3, 4),)]),
    OpSpec("irfft2", lambda lib, x: lib.fft.irfft2(as_complex(lib, x)), [((3, 3, 2),)]),
    OpSpec("rfftn_dims", lambda lib, x: real_view(lib, lib.fft.rfftn(x, dim=(0, 2), norm="ortho")),
           [((3, 2, 4),)]),
    OpSpec("hfft", lambda lib, x: lib.fft.hfft(as_complex(lib, x)), [((4, 2),)]),
    OpSpec("ihfft", lambda lib, x: real_view(lib, lib.fft.ihfft(x)), [((6,),)]),
    OpSpec("fftshift", lambda lib, x: lib.fft.fftshift(x), [((5,),), ((3, 4),)]),
    OpSpec("ifftshift_dim", lambda lib, x: lib.fft.ifftshift(x, dim=1), [((3, 5),)]),
]

test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


PROGRAMS = {
    "graph": lambda lib, x: [type(f(x).grad_fn).__name__ for f in (
        lib.fft.fft, lib.fft.rfft, lib.fft.ifft, lambda t: lib.fft.fft2(t.view(2, 3)),
        lambda t: lib.fft.fft(t, n=4), lambda t: lib.fft.fft(t, n=8), lib.fft.hfft, lib.fft.ihfft)],
    "roundtrip": lambda lib, x: [round(v, 5) for v in lib.fft.irfft(lib.fft.rfft(x), n=6).tolist()],
    "frequencies": lambda lib, x: (plain(lib.fft.fftfreq(5)), plain(lib.fft.rfftfreq(6, d=0.5)),
                                   str(lib.fft.fftfreq(4, dtype=lib.float64).dtype).split(".")[-1]),
    "integer_input": lambda lib, x: str(lib.fft.fft(lib.arange(4)).dtype).split(".")[-1],
    "bad_norm": lambda lib, x: lib.fft.fft(x, norm="both"),
    "bad_n": lambda lib, x: lib.fft.fft(x, n=0),
    "rfft_of_complex": lambda lib, x: lib.fft.rfft(x.to(lib.complex64)),
    "bad_dims": lambda lib, x: lib.fft.fftn(x.view(2, 3), dim=(0, 0)),
    "s_and_dim_disagree": lambda lib, x: lib.fft.fftn(x.view(2, 3), s=(2,), dim=(0, 1)),
}


@pytest.mark.parametrize("program", list(PROGRAMS))
def test_programs_match_pytorch(program):
    def scenario(lib):
        x = lib.tensor([0.5, -1.0, 2.0, 0.25, -0.75, 1.5], requires_grad=True)
        return PROGRAMS[program](lib, x)

    on_both(scenario)


def test_gradients_of_complex_outputs_match_pytorch():
    """A complex upstream gradient through each primitive, to complex and to real inputs."""
    rng = np.random.RandomState(0)
    x = rng.randn(3, 6)
    z = rng.randn(3, 5) + 1j * rng.randn(3, 5)
    results = []
    for lib in (gradiente, torch):
        xr = lib.tensor(x, requires_grad=True)
        zc = lib.tensor(z, requires_grad=True)
        outs = [lib.fft.fft(xr), lib.fft.rfft(xr, norm="ortho"), lib.fft.ifft2(zc), lib.fft.irfft(zc, n=9),
                lib.fft.hfft(zc, norm="forward")]
        total = sum((o * lib.tensor(np.cos(np.arange(o.numel())).reshape(o.shape), dtype=o.dtype)).abs().sum()
                    for o in outs)
        total.backward()
        results.append((xr.grad.numpy(), zc.grad.numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def test_forward_mode_matches_pytorch():
    rng = np.random.RandomState(1)
    x, t = rng.randn(8), rng.randn(8)
    tangents = []
    for lib in (gradiente, torch):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            dual = fw.make_dual(lib.tensor(x), lib.tensor(t))
            out = lib.fft.irfft(lib.fft.rfft(dual) * lib.fft.rfft(dual), n=8)
            tangents.append(fw.unpack_dual(out).tangent.numpy())
    np.testing.assert_allclose(tangents[0], tangents[1], rtol=1e-10, atol=1e-12)
