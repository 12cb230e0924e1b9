"""NumPy's argument names (``axis``, ``keepdims``) accepted exactly where PyTorch accepts them: by the functions of
its C++ core (Tensor methods, torch-level functions), not by those it writes in Python (``Tensor.norm``,
``Tensor.split``, ``nn.functional``). Each call is compared with PyTorch: the same result or the same error."""
import pytest
import torch
from harness import on_both, plain

import gradiente

CALLS = {
    "sum_axis": lambda lib, t: t.sum(axis=0),
    "sum_keepdims": lambda lib, t: t.sum(1, keepdims=True),
    "torch_sum_axis": lambda lib, t: lib.sum(t, axis=1),
    "torch_mean_both_names": lambda lib, t: lib.mean(t, axis=1, keepdims=True),
    "mean_dim_and_axis": lambda lib, t: t.mean(dim=0, axis=0),
    "max_axis": lambda lib, t: t.max(axis=0).values,
    "argmax_axis": lambda lib, t: t.argmax(axis=1),
    "std_keepdims": lambda lib, t: t.std(0, keepdims=True),
    "cumsum_axis": lambda lib, t: t.cumsum(axis=1),
    "softmax_axis": lambda lib, t: lib.softmax(t, axis=0),
    "cat_axis": lambda lib, t: lib.cat([t, t], axis=1),
    "stack_axis": lambda lib, t: lib.stack([t, t], axis=0),
    "squeeze_axis": lambda lib, t: t.unsqueeze(0).squeeze(axis=0),
    "unsqueeze_axis": lambda lib, t: t.unsqueeze(axis=2),
    "any_axis": lambda lib, t: (t > 2).any(axis=0),
    "amax_axis": lambda lib, t: lib.amax(t, axis=1, keepdims=True),
    # written in Python by PyTorch: no aliases
    "norm_axis": lambda lib, t: t.norm(axis=0),
    "split_axis": lambda lib, t: t.split(1, axis=0),
    "functional_softmax_axis": lambda lib, t: lib.nn.functional.softmax(t, axis=0),
}


REFUSED = {"norm_axis", "split_axis", "functional_softmax_axis"}


@pytest.mark.parametrize("call", [c for c in CALLS if c not in REFUSED])
def test_numpy_names_where_pytorch_takes_them(call):
    def scenario(lib):
        t = lib.arange(6.0).reshape(2, 3)
        result = CALLS[call](lib, t)
        return plain(result), tuple(result.shape)

    outcome = on_both(scenario)
    assert (outcome[0] == "raised") == (call == "mean_dim_and_axis")


@pytest.mark.parametrize("call", sorted(REFUSED))
def test_no_numpy_names_where_pytorch_writes_the_function_in_python(call):
    # Python's own TypeError: its wording names the function as Python qualifies it (``Tensor.norm()`` there)
    for lib in (gradiente, torch):
        with pytest.raises(TypeError, match=r"norm\(\)|split\(\)|softmax\(\)") as caught:
            CALLS[call](lib, lib.arange(6.0).reshape(2, 3))
        assert str(caught.value).endswith("got an unexpected keyword argument 'axis'")
