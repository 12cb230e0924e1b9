"""``torch.utils.data.distributed.DistributedSampler``: each of ``num_replicas`` processes reads its own share of
a dataset, the same indices PyTorch gives for the same seed, epoch and rank (``randperm`` draws PyTorch's
numbers). gradiente runs one process, so a program states ``num_replicas`` and ``rank``; left out, they would
come from a process group, which ``gradiente.distributed`` never has."""
import math

from ...core.generator import Generator
from ...core.random import randperm
from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """The indices of rank ``rank`` out of ``num_replicas``: every ``num_replicas``-th one of the (shuffled,
    seeded by ``seed + epoch``) index list, padded by repeating its start to a multiple of ``num_replicas``, or
    cut to one when ``drop_last``."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None or rank is None:
            # PyTorch asks the process group; there is none (gradiente.distributed.is_available() is False)
            raise RuntimeError("Requires distributed package to be available")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if drop_last and len(dataset) % num_replicas != 0:
            # the largest share that every rank can have in full
            self.num_samples = math.ceil((len(dataset) - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(len(dataset) / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        if self.shuffle:
            generator = Generator()
            generator.manual_seed(self.seed + self.epoch)
            indices = randperm(len(self.dataset), generator=generator).tolist()
        else:
            indices = list(range(len(self.dataset)))
        if not self.drop_last:
            padding = self.total_size - len(indices)
            indices += (indices * math.ceil(padding / len(indices)))[:padding] if padding else []
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """The epoch that, added to the seed, shuffles the next pass differently (call it before each epoch)."""
        self.epoch = epoch
