"""utils.data against PyTorch: the same shuffled order for the same seed (and the same random numbers drawn
after a loop), batching, drop_last, collation of tensors/tuples/dicts/numbers, random_split."""
from collections import namedtuple

import numpy as np
import pytest
from harness import on_both

import gradiente
from gradiente.utils.data import (
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    Subset,
    TensorDataset,
    default_collate,
    random_split,
)

torch = pytest.importorskip("torch")
tud = pytest.importorskip("torch.utils.data")

X = np.arange(23 * 2, dtype=np.float32).reshape(23, 2)
Y = np.arange(23, dtype=np.int64)


def _tensor_loaders(**kwargs):
    g = DataLoader(TensorDataset(gradiente.from_numpy(X), gradiente.from_numpy(Y)), **kwargs)
    t = tud.DataLoader(tud.TensorDataset(torch.from_numpy(X), torch.from_numpy(Y)), **kwargs)
    return g, t


def _batches(loader):
    return [[b.tolist() for b in batch] for batch in loader]


@pytest.mark.parametrize("seed", [0, 7, 2024])
@pytest.mark.parametrize("kwargs", [{"batch_size": 5, "shuffle": True},
                                    {"batch_size": 4, "shuffle": True, "drop_last": True},
                                    {"batch_size": 6}, {"batch_size": 1, "shuffle": True}])
def test_order_and_batches_match_torch(seed, kwargs):
    gradiente.manual_seed(seed)
    torch.manual_seed(seed)
    g, t = _tensor_loaders(**kwargs)
    assert len(g) == len(t)
    for _ in range(2):                                       # a new order each epoch
        assert _batches(g) == _batches(t)
    assert gradiente.rand(4).tolist() == torch.rand(4).tolist()


def test_python_dataset_and_collation_match_torch():
    Point = namedtuple("Point", "x y")

    class Items:
        def __init__(self, lib):
            self.lib = lib

        def __len__(self):
            return 7

        def __getitem__(self, i):
            return {"t": self.lib.full((2,), float(i)), "n": i, "f": i / 2, "s": f"item{i}",
                    "pair": (i, self.lib.tensor([i, -i])), "arr": np.full(3, i, dtype=np.float32),
                    "pt": Point(i, 2.0 * i)}

    gradiente.manual_seed(3)
    torch.manual_seed(3)
    g = list(DataLoader(Items(gradiente), batch_size=3, shuffle=True))
    t = list(tud.DataLoader(Items(torch), batch_size=3, shuffle=True))
    assert len(g) == len(t) == 3
    for gb, tb in zip(g, t):
        assert gb["t"].tolist() == tb["t"].tolist() and gb["n"].tolist() == tb["n"].tolist()
        assert gb["n"].dtype is gradiente.int64 and gb["f"].dtype is gradiente.float64
        assert gb["f"].tolist() == tb["f"].tolist() and gb["s"] == tb["s"]
        assert isinstance(gb["pair"], list) and gb["pair"][1].tolist() == tb["pair"][1].tolist()
        assert gb["arr"].tolist() == tb["arr"].tolist() and gb["arr"].dtype is gradiente.float32
        assert type(gb["pt"]).__name__ == "Point" and gb["pt"].y.tolist() == tb["pt"].y.tolist()


def test_default_collate_errors():
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="default_collate: batch must contain tensors"):
        default_collate([object()])


def test_random_split_matches_torch():
    for lengths in ([7, 3], [0.5, 0.3, 0.2], [0.34, 0.66]):
        gradiente.manual_seed(11)
        torch.manual_seed(11)
        g = random_split(range(10), lengths)
        t = tud.random_split(range(10), lengths)
        assert [list(s) for s in g] == [list(s) for s in t]
    gen_g, gen_t = gradiente.Generator().manual_seed(5), torch.Generator().manual_seed(5)
    assert ([list(s) for s in random_split(range(6), [2, 4], generator=gen_g)]
            == [list(s) for s in tud.random_split(range(6), [2, 4], generator=gen_t)])
    with pytest.raises(ValueError, match="Sum of input lengths does not equal the length of the input dataset!"):
        random_split(range(5), [2, 2])


def test_loader_with_generator_and_samplers():
    g_loader, t_loader = _tensor_loaders(batch_size=8, shuffle=True)
    g_loader = DataLoader(g_loader.dataset, batch_size=8, shuffle=True, generator=gradiente.Generator().manual_seed(9))
    t_loader = tud.DataLoader(t_loader.dataset, batch_size=8, shuffle=True, generator=torch.Generator().manual_seed(9))
    assert _batches(g_loader) == _batches(t_loader)
    unbatched = list(DataLoader(list(X), batch_size=None))
    assert len(unbatched) == 23 and unbatched[1].tolist() == X[1].tolist() and unbatched[1].dtype is gradiente.float32
    with pytest.raises(ValueError, match="sampler option is mutually exclusive with shuffle"):
        DataLoader(X, sampler=[0], shuffle=True)


def test_dataset_classes():
    class Squares(Dataset):
        def __init__(self, n):
            self.n = n

        def __len__(self):
            return self.n

        def __getitem__(self, i):
            return i * i
    both = Squares(3) + Squares(2)
    assert isinstance(both, ConcatDataset) and [both[i] for i in range(len(both))] == [0, 1, 4, 0, 1]
    assert [Subset(Squares(5), [4, 0])[i] for i in range(2)] == [16, 0]

    class Stream(IterableDataset):
        def __iter__(self):
            return iter(range(5))
    assert [b.tolist() for b in DataLoader(Stream(), batch_size=2)] == [[0, 1], [2, 3], [4]]
    assert [b.tolist() for b in DataLoader(Stream(), batch_size=2, drop_last=True)] == [[0, 1], [2, 3]]
    with pytest.raises(ValueError, match="Size mismatch between tensors"):
        TensorDataset(gradiente.zeros(3), gradiente.zeros(4))


def test_an_error_in_one_batch_does_not_end_the_epoch():
    """As in PyTorch: the failing batch raises, and the iterator goes on with the next one."""
    def scenario(lib):
        seen = []
        for data, batch_size in (([1, 2, "x", 4], 1), (_Stream([1, "x", 3, 4, 5]), 2)):
            it = iter(lib.utils.data.DataLoader(data, batch_size=batch_size, collate_fn=_add_one))
            while True:
                try:
                    seen.append(next(it))
                except StopIteration:
                    break
                except TypeError as e:
                    seen.append(type(e).__name__)
        return seen

    on_both(scenario)


def _add_one(batch):
    return [b + 1 for b in batch]


class _Stream:
    """An iterable-style dataset, as both libraries accept one (iterable, with no __getitem__)."""

    def __init__(self, items):
        self.items = items

    def __iter__(self):
        return iter(self.items)


@pytest.mark.parametrize("replacement", [True, False])
def test_weighted_random_sampler_draws_pytorchs_indices(replacement):
    def scenario(lib):
        lib.manual_seed(3)
        sampler = lib.utils.data.WeightedRandomSampler([0.1, 0.5, 0.2, 0.2, 1.0], 4, replacement=replacement)
        errors = []
        for bad in ({"weights": [[1.0]], "num_samples": 1}, {"weights": [1.0], "num_samples": 0},
                    {"weights": [1.0], "num_samples": 1, "replacement": 1}):
            try:
                lib.utils.data.WeightedRandomSampler(**bad)
            except ValueError as e:
                errors.append(str(e))
        return list(sampler), list(sampler), len(sampler), errors

    on_both(scenario)
