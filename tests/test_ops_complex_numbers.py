"""Complex numbers, the ops of ``ops/complex_numbers.py`` (``complex``, ``polar``, ``real``, ``imag``, ``angle``,
``conj``, ``conj_physical``, ``resolve_conj``, ``resolve_neg``, ``view_as_real``, ``view_as_complex``), against
PyTorch.

Gradients come from the op-spec table (float64 gradcheck, float32/float64 against PyTorch with the grad_fn name,
gradgradcheck), each op built from real parts and taken apart again so that the loss is real. The rest compares
values, dtypes, the conjugate and negative bits, views and error messages with PyTorch's.

``both_quietly`` and ``assert_same_tensors`` come from harness.py, shared with the other test files.
"""

import numpy as np
import pytest
from harness import OpSpec, assert_same_tensors, both_quietly, check_same_error, spec_tests

import gradiente

torch = pytest.importorskip("torch")


def complex_parts(rng, shapes):
    """Real and imaginary parts away from 0 (angle's derivative is singular at 0)."""
    return [rng.uniform(0.3, 2, size=s) * rng.choice([-1, 1], size=s) for s in shapes]


SHAPES = [((3,),), ((2, 3),), ((2, 3, 4),)]

SPECS = [
    # complex numbers: built from real parts and taken apart again, so that the loss is real
    OpSpec("complex_view_as_real", lambda lib, a, b: lib.view_as_real(lib.complex(a, b)),
           [((3,), (3,)), ((2, 3), (3,))]),
    OpSpec("polar", lambda lib, r, t: lib.view_as_real(lib.polar(r, t)), [((3,), (3,)), ((2, 1), (2, 3))],
           domain=(0.2, 2.0)),
    OpSpec("angle_complex", lambda lib, a, b: lib.complex(a, b).angle(), [((4,), (4,)), ((2, 3), (2, 3))],
           make_inputs=complex_parts),
    OpSpec("angle_real", lambda lib, x: lib.angle(x), SHAPES, make_inputs=complex_parts),
    OpSpec("real", lambda lib, a, b: lib.real(lib.complex(a, b)) * b, [((3,), (3,))]),
    OpSpec("imag", lambda lib, a, b: lib.complex(a, b).imag, [((2, 3), (2, 3))]),
    OpSpec("imag_of_conj", lambda lib, a, b: lib.complex(a, b).conj().imag.resolve_neg(), [((2, 3), (2, 3))]),
    OpSpec("conj", lambda lib, a, b: lib.view_as_real(lib.complex(a, b).conj().resolve_conj()), [((3,), (3,))]),
    OpSpec("conj_physical", lambda lib, a, b: lib.view_as_real(lib.conj_physical(lib.complex(a, b))),
           [((3,), (3,))]),
    OpSpec("view_as_complex", lambda lib, x: lib.view_as_real(lib.view_as_complex(x) * 1), [((3, 2),), ((2, 3, 2),)],
           extra={"contiguous_only": True}),
    OpSpec("neg_view", lambda lib, x: x._neg_view().resolve_neg() * 2, SHAPES),
    OpSpec("view_as_complex_angle", lambda lib, x: lib.view_as_complex(x).angle(), [((4, 2),)],
           make_inputs=complex_parts, extra={"contiguous_only": True}),
]

test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


# --- values, gradients, views and errors against PyTorch ----------------------------------------------------

def _parts(lib, requires_grad=True):
    re = lib.tensor([1.0, -2.0, 0.0, 0.5], dtype=lib.float64, requires_grad=requires_grad)
    im = lib.tensor([0.5, 0.0, -3.0, 0.0], dtype=lib.float64, requires_grad=requires_grad)
    return re, im


COMPLEX_GRAPHS = {
    "complex": lambda lib, re, im: lib.complex(re, im),
    "polar": lambda lib, re, im: lib.polar(re.abs(), im),
    "view_as_real": lambda lib, re, im: lib.view_as_real(lib.complex(re, im)),
    "view_as_complex": lambda lib, re, im: lib.view_as_complex(lib.stack([re, im], -1)),
    "real": lambda lib, re, im: lib.complex(re, im).real,
    "imag": lambda lib, re, im: lib.imag(lib.complex(re, im)),
    "angle": lambda lib, re, im: lib.complex(re, im).angle(),
    "angle_real": lambda lib, re, im: re.angle(),
    "conj": lambda lib, re, im: lib.complex(re, im).conj(),
    "conj_conj": lambda lib, re, im: lib.complex(re, im).conj().conj(),
    "conj_physical": lambda lib, re, im: lib.conj_physical(lib.complex(re, im)),
    "resolve_conj": lambda lib, re, im: lib.complex(re, im).conj().resolve_conj(),
    "imag_of_conj": lambda lib, re, im: lib.complex(re, im).conj().imag,
    "resolve_neg": lambda lib, re, im: lib.complex(re, im).conj().imag.resolve_neg(),
}


@pytest.mark.parametrize("name", list(COMPLEX_GRAPHS))
def test_complex_ops_match_torch(name):
    """Values, dtype, grad_fn name, the conjugate and negative bits, and the gradient of a real loss."""
    ours, theirs = (COMPLEX_GRAPHS[name](lib, *_parts(lib)) for lib in (gradiente, torch))
    assert_same_tensors(ours, theirs)
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
    assert ours.is_conj() == theirs.is_conj() and ours.is_neg() == theirs.is_neg()
    grads = []
    for lib, out in ((gradiente, ours), (torch, theirs)):
        re, im = _parts(lib)
        out = COMPLEX_GRAPHS[name](lib, re, im)
        loss = lib.view_as_real(out.resolve_conj()) if out.is_complex() else out
        (loss.resolve_neg() * lib.arange(loss.numel(), dtype=lib.float64).view(loss.shape)).sum().backward()
        grads.append([g.numpy() if g is not None else None for g in (re.grad, im.grad)])
    for g, t in zip(*grads):
        if t is None:
            assert g is None or not g.any()
        else:
            np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-12)


def test_real_tensors_pass_through_as_torch_passes_them():
    x = gradiente.tensor([1.0, -2.0], requires_grad=True)
    assert gradiente.real(x) is x and x.real is x and x.conj() is x and x.conj_physical() is x
    assert x.resolve_conj() is x and x.resolve_neg() is x and not x.is_conj() and not gradiente.is_neg(x)
    ints = gradiente.tensor([1, 2])
    assert ints.conj() is ints and gradiente.conj_physical(ints) is ints
    assert_same_tensors(*both_quietly(lambda lib: lib.angle(lib.tensor([1, -2, 0]))))
    assert_same_tensors(*both_quietly(lambda lib: lib.angle(lib.tensor([True]))))
    assert_same_tensors(*both_quietly(lambda lib: lib.angle(lib.tensor([1.0, float("nan"), -0.0, -1.0]))))
    assert_same_tensors(*both_quietly(lambda lib: lib.angle(lib.tensor([1 + 1j, 0j, -1 + 0j, complex(-1, -0.0)]))))


def test_real_and_imag_are_views_that_can_be_assigned():
    for lib in (gradiente, torch):
        z = lib.zeros(3, dtype=lib.complex128)
        z.real = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)
        z.imag = lib.tensor([4.0, 5.0, 6.0], dtype=lib.float64)
        lib.view_as_real(z)[0, 1] = -1.0
        assert z.tolist() == [1 - 1j, 2 + 5j, 3 + 6j]
        assert z.real._base is z and lib.view_as_real(z)._base is z
    x = gradiente.ones(3)
    x.real = gradiente.tensor([1.0, 2.0, 3.0])
    assert x.tolist() == [1.0, 2.0, 3.0]
    check_same_error(lambda lib: setattr(lib.ones(3), "imag", lib.ones(3)))
    check_same_error(lambda lib: setattr(lib.ones(3, requires_grad=True), "real", lib.ones(3)))


def test_conj_physical_in_place():
    ours, theirs = both_quietly(lambda lib: lib.tensor([1 + 2j, -1j]).conj_physical_())
    assert_same_tensors(ours, theirs)
    assert_same_tensors(*both_quietly(lambda lib: lib.conj_physical_(lib.tensor([1 + 2j, -1j]))))
    x = gradiente.tensor([1.0, 2.0])
    assert x.conj_physical_() is x and x.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("fn", [
    lambda lib: lib.imag(lib.ones(2)),
    lambda lib: lib.view_as_real(lib.ones(2)),
    lambda lib: lib.view_as_real(lib.tensor([1j]).conj()),
    lambda lib: lib.view_as_complex(lib.ones(3)),
    lambda lib: lib.view_as_complex(lib.ones(2, 3).t()),
    lambda lib: lib.view_as_complex(lib.ones(3, 2)[:, :1]),
    lambda lib: lib.view_as_complex(lib.ones(3, 2, dtype=lib.int64)),
    lambda lib: lib.view_as_complex(lib.ones(6)[1:5].view(2, 2)),
    lambda lib: lib.view_as_complex(lib.ones(())),
    lambda lib: lib.complex(lib.ones(2), lib.ones(2, dtype=lib.float64)),
    lambda lib: lib.complex(lib.ones(2, dtype=lib.int64), lib.ones(2, dtype=lib.int64)),
    lambda lib: lib.complex(lib.ones(2), 1.0),
    lambda lib: lib.complex(lib.ones(2), lib.ones(3)),
    lambda lib: lib.polar(lib.ones(2, dtype=lib.int64), lib.ones(2, dtype=lib.int64)),
], ids=lambda fn: "")
def test_complex_errors_match_torch(fn):
    check_same_error(fn)


def test_complex_broadcasts_and_views_share_memory():
    ours, theirs = both_quietly(lambda lib: lib.complex(lib.ones(2, 1), lib.arange(3.0)))
    assert_same_tensors(ours, theirs)
    ours, theirs = both_quietly(lambda lib: lib.polar(lib.tensor([2.0, -1.0]), lib.tensor([0.5, 3.0])))
    assert_same_tensors(ours, theirs, rtol=1e-6, atol=1e-7)
    x = gradiente.tensor([[1.0, 2.0], [3.0, 4.0]])
    z = gradiente.view_as_complex(x)
    x[0, 1] = 9.0
    assert z.tolist() == [1 + 9j, 3 + 4j] and z._base is x
