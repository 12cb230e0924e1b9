"""``DataLoader``: batches of samples from a dataset, in order or shuffled, collated into tensors.

Creating an iterator draws one 64-bit "base seed" from the generator, as PyTorch's does, so that the random numbers
drawn after a loop over a DataLoader are PyTorch's too. Data loading runs in this process; with ``num_workers > 0``
it runs as PyTorch's worker processes would (``_Worker``): each worker has its own random states, seeded from the
base seed as PyTorch seeds a worker, its ``worker_init_fn`` call and ``get_worker_info()``, its own copy of an
iterable dataset, and the batches come from the workers in turn. A dataset that draws random numbers while loading
then draws a worker's, and the program's own random numbers stay PyTorch's. What a worker's code changes in the
program's own objects (a list ``worker_init_fn`` appends to) is seen here, where a worker process would change only
its copy.
"""
import collections.abc
import copy
import os
import random
import re
import warnings

import numpy as np

from ...core import random as _torch_random
from ...core.tensor import Tensor
from ...ops.joining import stack
from .dataset import IterableDataset, _tensor_rows
from .sampler import BatchSampler, RandomSampler, SequentialSampler, _draw_seed

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]

_NUMPY_STR = re.compile(r"[SaUO]")
_COLLATE_ERROR = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


class WorkerInfo:
    """What ``get_worker_info()`` gives a dataset inside a worker: its ``id``, ``num_workers``, its ``seed`` and its
    ``dataset`` (a worker's own copy of an iterable dataset)."""
    __slots__ = ("id", "num_workers", "seed", "dataset", "rng", "worker_method")

    def __init__(self, id, num_workers, seed, dataset):      # (PyTorch's field names)
        self.id, self.num_workers, self.seed, self.dataset = id, num_workers, seed, dataset
        self.rng, self.worker_method = None, "multiprocessing"

    def __repr__(self):
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"WorkerInfo({fields})"


_current_worker: list = [None]


def get_worker_info():
    """The current worker's ``WorkerInfo`` while a worker loads data (``num_workers > 0``), else None."""
    return _current_worker[0]


def default_collate(batch):
    """Merge a list of samples into a batch: tensors and arrays are stacked along a new first dim, Python
    floats become a float64 tensor, ints an int64 tensor; dicts, tuples and lists are collated field by field
    (tuples give lists, as in PyTorch); strings stay a list."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        # torch.stack, as PyTorch's collate calls it: a contiguous batch whatever the samples' layout, their dtypes
        # promoted, and its error for samples of different sizes
        return stack(batch)
    if isinstance(elem, np.ndarray) or (isinstance(elem, np.generic) and not isinstance(elem, (np.str_, np.bytes_))):
        if _NUMPY_STR.search(np.asarray(elem).dtype.str) is not None:
            raise TypeError(_COLLATE_ERROR.format(np.asarray(elem).dtype))
        return stack([Tensor._make(np.asarray(b)) for b in batch])
    if isinstance(elem, bool):
        return Tensor._make(np.array(batch, dtype=np.bool_))
    if isinstance(elem, float):
        return Tensor._make(np.array(batch, dtype=np.float64))
    if isinstance(elem, int):
        return Tensor._make(np.array(batch, dtype=np.int64))
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        collated = {key: default_collate([d[key] for d in batch]) for key in elem}
        try:
            return type(elem)(collated)
        except TypeError:
            return collated
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if not all(len(e) == size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(samples) for samples in transposed]
        try:
            return type(elem)([default_collate(samples) for samples in transposed])
        except TypeError:
            return [default_collate(samples) for samples in transposed]
    raise TypeError(_COLLATE_ERROR.format(type(elem)))


def default_convert(data):
    """Without batching (``batch_size=None``): NumPy arrays become tensors, containers are converted inside."""
    if isinstance(data, np.ndarray) and _NUMPY_STR.search(data.dtype.str) is None:
        return Tensor._make(data)
    if isinstance(data, collections.abc.Mapping):
        return type(data)({k: default_convert(v) for k, v in data.items()})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return type(data)([default_convert(d) for d in data])
    return data


class DataLoader:
    """Iterate over ``dataset`` in batches of ``batch_size`` (``shuffle`` for a new random order each epoch,
    ``drop_last`` to skip a final short batch); each batch is ``collate_fn(list_of_samples)``.

    ``num_workers > 0`` loads as PyTorch's worker processes would, in this process (see the module's docstring);
    ``pin_memory``, ``timeout`` and ``prefetch_factor`` are accepted and have no effect."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        self.dataset = dataset
        self.num_workers = num_workers
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.generator = generator
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in {False, None}:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 f"shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got "
                                 f"sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, but "
                                 f"got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                                 "drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with "
                             "drop_last")
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        if collate_fn is None:
            collate_fn = default_collate if batch_size is not None or batch_sampler is not None else default_convert
        self.collate_fn = collate_fn
        _warn_about_workers(self)

    def __iter__(self):
        base_seed = _draw_seed(self.generator)      # PyTorch's per-iterator base seed
        if self.num_workers > 0:
            _warn_about_workers(self)
            return _MultiProcessingDataLoaderIter(self, base_seed)
        return _SingleProcessDataLoaderIter(self)

    def __len__(self):
        if self._iterable:
            length = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else -(-length // self.batch_size)
            return length
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)



def _warn_about_workers(loader):
    """PyTorch's warning, at construction and at each new iterator, when ``num_workers`` exceeds the CPUs this process
    may use: the loading runs here in this process, but a program prints what it prints under PyTorch."""
    if not loader.num_workers:
        return
    try:
        suggested, cpuset_checked = len(os.sched_getaffinity(0)), True
    except (AttributeError, OSError):
        suggested, cpuset_checked = os.cpu_count(), False
    if suggested is None:
        advice = "DataLoader is not able to compute a suggested max number of worker in current system."
    elif loader.num_workers > suggested:
        advice = (f"Our suggested max number of worker in current system is {suggested}"
                  f"{'' if cpuset_checked else ' (`cpuset` is not taken into account)'}, which is smaller than what "
                  "this DataLoader is going to create.")
    else:
        return
    warnings.warn(f"This DataLoader will create {loader.num_workers} worker processes in total. {advice} Please be "
                  "aware that excessive worker creation might get DataLoader running slow or even freeze, lower the "
                  "worker number to avoid potential slowness/freeze if necessary.", stacklevel=2)


def _warn_about_pinning(loader):
    """PyTorch's warnings, given by each new iterator: there is no accelerator here, so no memory is pinned."""
    if loader.pin_memory and loader.pin_memory_device:
        warnings.warn("pin_memory_device is deprecated, the current accelerator will be used as the device,"
                      f"ignore pin_memory_device='{loader.pin_memory_device}'.", stacklevel=3)
    if loader.pin_memory:
        warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then device pinned memory "
                      "won't be used.", stacklevel=3)


class _SingleProcessDataLoaderIter:
    """What ``iter(loader)`` returns: each ``next()`` makes one batch. As in PyTorch, a batch whose loading
    raises is skipped, not the end of the epoch: the error reaches the caller, and the next ``next()`` gives the
    next batch (a generator would be finished by the error)."""

    def __init__(self, loader):
        self._loader = loader
        _warn_about_pinning(loader)
        if loader._iterable:
            self._batches = self._open_stream()
        else:
            self._indices = iter(loader.batch_sampler if loader.batch_sampler is not None else loader.sampler)
            dataset, collate = loader.dataset, loader.collate_fn
            self._batched = loader.batch_sampler is not None
            self._rows = _tensor_rows(dataset) if self._batched and collate is default_collate else None
            self._getitems = getattr(dataset, "__getitems__", None)

    def _open_stream(self):
        return _Batches(self._loader, iter(self._loader.dataset))

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._loader)

    def __next__(self):
        loader = self._loader
        if loader._iterable:
            return self._batches.next()
        return self._fetch(next(self._indices))

    def _fetch(self, index):
        """The batch (or sample) of ``index``, as the sampler gave it."""
        loader = self._loader
        dataset, collate = loader.dataset, loader.collate_fn
        if self._rows is not None:  # the batch stacking the samples would give, by one fancy index per tensor
            tensors, mapping = self._rows
            picked = np.asarray(index, dtype=np.int64)
            picked = picked if mapping is None else mapping[picked]
            return [Tensor._make(t._data[picked]) for t in tensors]
        if not self._batched:
            return collate(dataset[index])
        return collate(self._getitems(index) if self._getitems else [dataset[i] for i in index])



class _Batches:
    """An iterable dataset's stream cut into the loader's batches (``next()``, StopIteration at the end): the one
    stream of a loader without workers, or one worker's."""

    def __init__(self, loader, stream):
        self.loader, self.stream, self.ended = loader, stream, False

    def next(self):
        loader = self.loader
        if self.ended:
            raise StopIteration
        if loader.batch_size is None:
            try:
                return loader.collate_fn(next(self.stream))
            except StopIteration:
                self.ended = True
                raise
        batch = []
        for item in self.stream:
            batch.append(item)
            if len(batch) == loader.batch_size:
                break
        if len(batch) < loader.batch_size:
            self.ended = True           # the stream ran out: this batch (if kept) is the last
        if not batch or (loader.drop_last and len(batch) < loader.batch_size):
            raise StopIteration
        return loader.collate_fn(batch)


class _Worker:
    """One of PyTorch's worker processes, emulated in this one: its random states (torch's default generator,
    Python's ``random``, NumPy's global generator), seeded as PyTorch's ``_worker_loop`` seeds them (``base_seed +
    id``; NumPy's from a SeedSequence of the id and the base seed's halves), swapped in while it loads and out after,
    so that loading never moves the program's own random numbers; and, for an iterable dataset, its own copy and
    stream."""

    def __init__(self, loader, worker_id, base_seed):
        self.seed = base_seed + worker_id
        dataset = copy.copy(loader.dataset) if loader._iterable else loader.dataset
        self.info = WorkerInfo(worker_id, loader.num_workers, self.seed, dataset)
        self.states = None
        entropy = [worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32, 0]

        def seeded():
            random.seed(self.seed)
            _torch_random.manual_seed(self.seed)
            np.random.seed(np.random.SeedSequence(entropy).generate_state(4))
        self.run(seeded)
        if loader.worker_init_fn is not None:
            self.run(lambda: loader.worker_init_fn(worker_id))
        self.batches = _Batches(loader, self.run(lambda: iter(dataset))) if loader._iterable else None

    def run(self, work):
        """``work()`` as this worker: its random states and ``get_worker_info()`` in place while it runs."""
        program = (_torch_random.get_rng_state(), random.getstate(), np.random.get_state())
        if self.states is not None:
            torch_state, python_state, numpy_state = self.states
            _torch_random.set_rng_state(torch_state)
            random.setstate(python_state)
            np.random.set_state(numpy_state)
        _current_worker[0] = self.info
        try:
            return work()
        finally:
            self.states = (_torch_random.get_rng_state(), random.getstate(), np.random.get_state())
            _current_worker[0] = None
            _torch_random.set_rng_state(program[0])
            random.setstate(program[1])
            np.random.set_state(program[2])


class _MultiProcessingDataLoaderIter(_SingleProcessDataLoaderIter):
    """The iterator of a loader with ``num_workers > 0``, under PyTorch's name (its errors and reprs name it): the
    workers (``_Worker``) take the batches in turn, the i-th to worker i mod ``num_workers``, and hand them back in
    order; for an iterable dataset each worker batches its own copy's stream, and a worker whose stream ends drops
    out of the turn, as PyTorch's do."""

    def __init__(self, loader, base_seed):
        super().__init__(loader)        # (an iterable dataset's streams are the workers' own: _open_stream)
        self._workers = [_Worker(loader, worker_id, base_seed) for worker_id in range(loader.num_workers)]
        self._turn = 0

    def _open_stream(self):
        return None

    def __next__(self):
        loader = self._loader
        if not loader._iterable:
            index = next(self._indices)
            worker = self._workers[self._turn % len(self._workers)]
            self._turn += 1
            return worker.run(lambda: self._fetch(index))
        while any(not worker.batches.ended for worker in self._workers):
            worker = self._workers[self._turn % len(self._workers)]
            self._turn += 1
            if worker.batches.ended:
                continue
            try:
                return worker.run(worker.batches.next)
            except StopIteration:
                worker.batches.ended = True
        raise StopIteration
