"""ChainDataset and StackDataset against torch.utils.data's, item for item and error for error."""
import pytest
import torch

import gradiente
from gradiente.utils import data as gdata


def _stream(module, values):
    class Stream(module.IterableDataset):
        def __iter__(self):
            return iter(values)

        def __len__(self):
            return len(values)
    return Stream()


def _both(make):
    return make(torch.utils.data, torch), make(gdata, gradiente)


def test_chain_reads_streams_in_order_and_sums_lengths():
    ours, theirs = (m.ChainDataset([_stream(m, [1, 2]), _stream(m, [3])]) for m in (gdata, torch.utils.data))
    assert list(ours) == list(theirs) == [1, 2, 3]
    assert len(ours) == len(theirs) == 3


def test_chain_rejects_map_style_parts_when_read():
    for module, lib in ((gdata, gradiente), (torch.utils.data, torch)):
        chain = module.ChainDataset([module.TensorDataset(lib.arange(3))])
        with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
            list(chain)
        with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
            len(chain)


def test_stack_tuple_and_dict_samples_match_torch():
    ref = torch.utils.data.StackDataset(torch.utils.data.TensorDataset(torch.arange(4.0)), [10, 11, 12, 13])
    got = gdata.StackDataset(gdata.TensorDataset(gradiente.arange(4.0)), [10, 11, 12, 13])
    assert len(got) == len(ref) == 4
    assert got[2][0][0].item() == ref[2][0][0].item() and got[2][1] == ref[2][1]
    named_ref = torch.utils.data.StackDataset(x=[1, 2], y=["a", "b"])
    named = gdata.StackDataset(x=[1, 2], y=["a", "b"])
    assert named[1] == named_ref[1] == {"x": 2, "y": "b"}
    assert named.__getitems__([1, 0]) == named_ref.__getitems__([1, 0])


def test_stack_batches_through_getitems_and_with_the_dataloader():
    class Batched:
        def __len__(self):
            return 3

        def __getitems__(self, indices):
            return [i * 100 for i in indices]

        def __getitem__(self, index):
            return index * 100

    ref = torch.utils.data.StackDataset(Batched(), [5, 6, 7]).__getitems__([2, 0])
    got = gdata.StackDataset(Batched(), [5, 6, 7]).__getitems__([2, 0])
    assert got == ref == [(200, 7), (0, 5)]
    loader = gdata.DataLoader(gdata.StackDataset(gradiente.arange(4), gradiente.arange(4) * 2), batch_size=2)
    ref_loader = torch.utils.data.DataLoader(torch.utils.data.StackDataset(torch.arange(4), torch.arange(4) * 2),
                                             batch_size=2)
    for ours, theirs in zip(loader, ref_loader):
        assert [t.tolist() for t in ours] == [t.tolist() for t in theirs]


@pytest.mark.parametrize("args, kwargs, message", [
    (([1], [2]), {"x": [3]}, "Supported either"),
    ((), {}, "At least one dataset should be passed"),
    (([1, 2], [3]), {}, "Size mismatch between datasets"),
])
def test_stack_errors_match_torch(args, kwargs, message):
    with pytest.raises(ValueError) as ref:
        torch.utils.data.StackDataset(*args, **kwargs)
    with pytest.raises(ValueError) as got:
        gdata.StackDataset(*args, **kwargs)
    assert str(got.value) == str(ref.value)
    assert message in str(got.value)


def test_more_workers_than_cpus_warns_as_pytorch_does():
    """PyTorch warns when ``num_workers`` exceeds the CPUs the process may use, at construction and at the first
    iterator (two places, so twice, then never again); gradiente loads in this process and says the same."""
    import os
    import warnings

    too_many = len(os.sched_getaffinity(0)) + 3 if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1) + 3
    seen = []
    for lib in (gradiente, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("default")
            loader = lib.utils.data.DataLoader(lib.utils.data.TensorDataset(lib.arange(6.0)), batch_size=2,
                                               num_workers=too_many)
            for _ in range(2):
                list(loader)
        seen.append([str(w.message) for w in caught if "worker processes" in str(w.message)])
    assert seen[0] == seen[1] and len(seen[0]) == 2


@pytest.mark.parametrize("workers", [0, 2])
def test_the_iterator_has_torchs_class_name(workers):
    # the training tutorial's dataiter.next() (Python 2's spelling) fails naming the iterator's class
    def name_and_error(lib):
        loader = lib.utils.data.DataLoader(lib.utils.data.TensorDataset(lib.arange(6.0)), batch_size=2,
                                           num_workers=workers)
        iterator = iter(loader)
        try:
            iterator.next()
        except AttributeError as error:
            return type(iterator).__name__, str(error), [b[0].tolist() for b in iterator]
    assert name_and_error(gradiente) == name_and_error(torch)
