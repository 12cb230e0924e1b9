"""``torch.functional``: the PyTorch module that defines some of the top-level functions in Python (einsum, split,
norm, stft, unique, meshgrid, ...). Here they are the top-level functions themselves. Programs import it, at
times by mistake for ``torch.nn.functional`` (the models tutorial's ``import torch.functional as F``); like
PyTorch's, it has no ``relu``. ``pca_lowrank`` and ``svd_lowrank`` are not in gradiente."""
from . import (
    atleast_1d,
    atleast_2d,
    atleast_3d,
    block_diag,
    broadcast_shapes,
    broadcast_tensors,
    cartesian_prod,
    cdist,
    chain_matmul,
    einsum,
    istft,
    lu,
    meshgrid,
    norm,
    split,
    stft,
    tensordot,
    unique,
    unique_consecutive,
    unravel_index,
)
from .core.tensor import Tensor  # noqa: F401 - torch.functional.Tensor is torch.Tensor
from .nn import functional as F  # noqa: F401 - as in PyTorch's module

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors", "cartesian_prod",
           "block_diag", "cdist", "chain_matmul", "einsum", "istft", "lu", "norm", "meshgrid", "split", "stft",
           "tensordot", "unique", "unique_consecutive", "unravel_index"]
