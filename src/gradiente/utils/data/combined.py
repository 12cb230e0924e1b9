"""Datasets made of other datasets, side by side or one after another: ``StackDataset`` (sample ``i`` is the
``i``-th sample of every part, as a tuple or a dict) and ``ChainDataset`` (streams read one after the other)."""
from .dataset import Dataset, IterableDataset

__all__ = ["ChainDataset", "StackDataset"]


def _require_iterable(dataset):
    # PyTorch checks lazily, when the chain is read or measured, not when it is built
    if not isinstance(dataset, IterableDataset):
        raise AssertionError("ChainDataset only supports IterableDataset")


class ChainDataset(IterableDataset):
    """Reads the ``IterableDataset`` s in ``datasets`` one after another, on the fly; ``len`` is their sum."""

    def __init__(self, datasets):
        super().__init__()
        self.datasets = datasets

    def __iter__(self):
        for dataset in self.datasets:
            _require_iterable(dataset)
            yield from dataset

    def __len__(self):
        total = 0
        for dataset in self.datasets:
            _require_iterable(dataset)
            total += len(dataset)
        return total


class StackDataset(Dataset):
    """Datasets of one length stacked: ``StackDataset(a, b)[i] == (a[i], b[i])`` and
    ``StackDataset(x=a, y=b)[i] == {"x": a[i], "y": b[i]}``. ``__getitems__`` batches through the parts that have
    one, as the DataLoader asks."""

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            # PyTorch's wording, its missing space included
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like "
                             "input/output, but both types are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        parts = args if args else list(kwargs.values())
        self._length = len(parts[0])
        if any(self._length != len(dataset) for dataset in parts):
            raise ValueError("Size mismatch between datasets")
        self.datasets = args if args else kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {key: dataset[index] for key, dataset in self.datasets.items()}
        return tuple(dataset[index] for dataset in self.datasets)

    def __getitems__(self, indices):
        named = isinstance(self.datasets, dict)
        keys = list(self.datasets) if named else range(len(self.datasets))
        columns = [_samples(self.datasets[key], indices) for key in keys]
        if named:
            return [dict(zip(keys, row)) for row in zip(*columns)]
        return [tuple(row) for row in zip(*columns)]

    def __len__(self):
        return self._length


def _samples(dataset, indices):
    """One part's samples at ``indices``, in one batched call where the part offers ``__getitems__``."""
    if callable(getattr(dataset, "__getitems__", None)):
        items = dataset.__getitems__(indices)
        if len(items) != len(indices):
            raise ValueError(f"Nested dataset's output size mismatch. Expected {len(indices)}, got {len(items)}")
        return list(items)
    return [dataset[index] for index in indices]
