"""The ``*_copy`` variants of view ops (``ops/view_copies.py``) against real torch: values, contiguity, the node
names PyTorch gives them (``ViewBackward0_copy``, ``NarrowCopyBackward0``), gradients, and gradcheck."""
import numpy as np
import pytest

import gradiente
from gradiente.autograd import gradcheck

torch = pytest.importorskip("torch")
LIBS = (gradiente, torch)
A = np.arange(1.0, 7.0).reshape(2, 3) / 7


def _np(t):
    return t.detach().numpy()


COPIES = [("view_copy", ((6,),)), ("t_copy", ()), ("permute_copy", ((1, 0),)), ("select_copy", (0, 1)),
          ("squeeze_copy", ()), ("unsqueeze_copy", (0,)), ("transpose_copy", (0, 1)), ("unbind_copy", (0,)),
          ("split_copy", (1,)), ("split_with_sizes_copy", ([1, 2], 1)), ("as_strided_copy", ((2,), (1,))),
          ("diagonal_copy", ()), ("unfold_copy", (1, 2, 1)), ("slice_copy", (1, 0, 2)), ("narrow_copy", (1, 0, 2)),
          ("expand_copy", ((2, 2, 3),))]


@pytest.mark.parametrize("name, args", COPIES, ids=[c[0] for c in COPIES])
def test_copy_variants_match_torch_values_nodes_and_gradients(name, args):
    seen = []
    for lib in LIBS:
        x = lib.tensor(A, requires_grad=True)
        y = getattr(lib, name)(x, *args)
        pieces = y if isinstance(y, (tuple, list)) else (y,)
        sum(p.sum() * (i + 1) for i, p in enumerate(pieces)).backward()
        seen.append((type(pieces[0].grad_fn).__name__, pieces[0].grad_fn.name(), [p.is_contiguous() for p in pieces],
                     [_np(p).tolist() for p in pieces], _np(x.grad).tolist()))
    assert seen[0] == seen[1]
    x = gradiente.tensor(A, dtype=gradiente.float64, requires_grad=True)
    assert gradcheck(lambda t: getattr(gradiente, name)(t, *args), (x,))


def test_a_copy_is_not_a_view_of_its_input():
    x = gradiente.zeros(2, 3)
    y = gradiente.transpose_copy(x, 0, 1)
    y.add_(1)
    assert x.sum().item() == 0 and y._base is None
