"""What real programs written for PyTorch (nanoGPT, makemore, minGPT, pytorch/examples, the tutorials) met that our
own programs did not, each checked against PyTorch on the same call (issue 16)."""
import warnings

import pytest
import torch

import gradiente


def _warnings_of(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [(w.category, str(w.message)) for w in caught]


@pytest.mark.parametrize("device", ["", "cuda"])
def test_pinned_loader_warns_that_nothing_is_pinned(device):
    # makemore: DataLoader(..., pin_memory=True) on a machine without an accelerator
    def first_batch(lib):
        data = lib.utils.data.TensorDataset(lib.arange(6.0))
        loader = lib.utils.data.DataLoader(data, batch_size=2, pin_memory=True, pin_memory_device=device)
        return lambda: next(iter(loader))
    assert _warnings_of(first_batch(gradiente)) == _warnings_of(first_batch(torch))
    assert len(_warnings_of(first_batch(torch))) == (2 if device else 1)
