"""``torch.func.rearrange`` (einops' pattern language) against PyTorch 2.13: shapes, values, the recorded node and
gradients for each kind of pattern (permute, split, merge, unit dims, ellipsis, stacked sequences), a float64
gradcheck of each, and PyTorch's errors, message for message, for bad patterns and sizes that do not fit."""
import numpy as np
import pytest

import gradiente
from gradiente.autograd import gradcheck

torch = pytest.importorskip("torch")
from torch.func import rearrange as torch_rearrange  # noqa: E402

PATTERNS = [
    ((2, 6, 4), "b h w -> b w h", {}),
    ((2, 6, 4), "b h w -> (b h) w", {}),
    ((2, 6, 4), "b h w -> h (b w)", {}),
    ((2, 6, 4), "b (h1 h) w -> (b h1) h w", {"h1": 2}),
    ((2, 6, 4), "b (h h1) (w w1) -> b h w (h1 w1)", {"h1": 2, "w1": 2}),
    ((2, 6, 4), "b h w -> b 1 h w", {}),
    ((2, 6, 4), "b h w -> b () h w", {}),
    ((2, 1, 4), "b 1 w -> b w", {}),
    ((2, 1, 4), "b () w -> w b", {}),
    ((2, 3, 4), "b 1 w -> b w", {}),             # a unit dim of size 3 on the left is summed, as in PyTorch
    ((2, 6, 4), "b ... -> ... b", {}),
    ((2, 6, 4), "... w -> (...) w", {}),
    ((2, 6, 4, 3), "b ... c -> b c ...", {}),
    ((2, 6, 4), "b h w -> (b h w)", {}),
    ((2, 6, 4), "b h w -> b h w", {}),
    ((6, 4), "(a b) c -> c b a", {"a": 2}),
]


def _input(lib, shape, seed=0):
    values = np.random.default_rng(seed).standard_normal(shape)
    return lib.tensor(values, dtype=lib.float64, requires_grad=True)


@pytest.mark.parametrize("shape,pattern,lengths", PATTERNS, ids=[p[1] for p in PATTERNS])
def test_rearrange_matches_torch(shape, pattern, lengths):
    seen = []
    for lib, rearrange in ((gradiente, gradiente.func.rearrange), (torch, torch_rearrange)):
        x = _input(lib, shape)
        out = rearrange(x, pattern, **lengths)
        upstream = lib.tensor(np.arange(1.0, out.numel() + 1).reshape(tuple(out.shape)), dtype=lib.float64)
        out.backward(upstream)
        seen.append((tuple(out.shape), out.detach().numpy().round(12).tolist(), type(out.grad_fn).__name__,
                     x.grad.numpy().tolist()))
    assert seen[0] == seen[1]
    x = _input(gradiente, shape, seed=1)
    assert gradcheck(lambda t: gradiente.func.rearrange(t, pattern, **lengths), (x,))


def test_a_sequence_is_stacked_first():
    ours = gradiente.func.rearrange([gradiente.ones(2, 3), gradiente.zeros(2, 3)], "n a b -> a (n b)")
    theirs = torch_rearrange([torch.ones(2, 3), torch.zeros(2, 3)], "n a b -> a (n b)")
    assert ours.tolist() == theirs.tolist()
    ours = gradiente.func.rearrange((gradiente.ones(2), gradiente.zeros(2)), "n a -> a n")
    assert ours.tolist() == torch_rearrange((torch.ones(2), torch.zeros(2)), "n a -> a n").tolist()


def test_a_0d_tensor_with_an_empty_pattern_is_returned_as_it_is():
    x = gradiente.tensor(3.0)
    assert gradiente.func.rearrange(x, "->") is x


ERRORS = [
    ((2, 6), "b h", {}),
    ((2, 6), "b h -> b h c", {}),
    ((2, 6), "b h c -> b h c", {}),
    ((2, 6), "a b c ... -> a b c ...", {}),
    ((2, 6), "b h -> b h", {"c": 3}),
    ((2, 6), "b h -> b h", {"b": 2.0}),
    ((2, 6), "b h -> b 2 h", {}),
    ((2, 6), "b_ h -> b_ h", {}),
    ((2, 6), "b (h -> b h", {}),
    ((2, 6), "b h) -> b h", {}),
    ((2, 6), "b ((h)) -> b h", {}),
    ((2, 6), "b h! -> b h", {}),
    ((2, 6), "b h h -> b h", {}),
    ((2, 6), "b . -> b", {}),
    ((2, 6), "... (h ...) -> h", {}),
    ((2, 6), "b h -> ... b h", {}),
    ((2, 6), "(b ...) -> b ...", {}),
    ((2, 6), "b h -> b h", {"...": 2}),
    ((2, 6), "b (h w) -> b h w", {"h": 2, "w": 2}),
    ((2, 6), "b (h w) -> b h w", {"h": 4}),
    ((2, 6), "(b h) w -> b h w", {"b": 4}),
    ((2, 6), "b (h w) -> b h w", {}),
    ((2, 6, 4), "b h w -> w h b", {"b": 3}),
]


@pytest.mark.parametrize("shape,pattern,lengths", ERRORS, ids=[e[1] + str(e[2]) for e in ERRORS])
def test_errors_match_torch(shape, pattern, lengths):
    with pytest.raises(Exception) as theirs:
        torch_rearrange(torch.zeros(shape), pattern, **lengths)
    with pytest.raises(Exception) as ours:
        gradiente.func.rearrange(gradiente.zeros(shape), pattern, **lengths)
    assert type(ours.value).__name__ == type(theirs.value).__name__
    assert str(ours.value) == str(theirs.value)
