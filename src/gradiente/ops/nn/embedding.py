"""``embedding``: rows of a weight matrix looked up by index, and its backward (a scatter-add of rows)."""
import numpy as np

from ...core.node import Node
from ...core.record import record, wants_grad
from ...core.tensor import Tensor
from ._array_rules import arrays_only

__all__ = ["embedding"]


class EmbeddingBackward0(Node):
    """out = weight[idx];  dweight[idx[k]] += grad[k] (rows of padding_idx get none)"""
    formula = "∂weight[idx]/∂weight: each looked-up row receives the gradient of its lookups"

    def backward(self, ops, grad):
        arrays_only(ops, "embedding")
        idx = self.indices.ravel()
        rows = grad.reshape(idx.size, -1)
        if self.scale_grad_by_freq:
            rows = rows / np.bincount(idx, minlength=self.num_weights)[idx][:, None].astype(rows.dtype)
        dweight = np.zeros((self.num_weights, rows.shape[1]), dtype=grad.dtype)
        np.add.at(dweight, idx, rows)
        if self.padding_idx is not None:
            dweight[self.padding_idx] = 0
        return (None, dweight)


def _renorm_rows(weight, idx, max_norm, norm_type):
    """PyTorch's ``embedding_renorm_``: rows used by ``idx`` with norm above ``max_norm`` are scaled down, in
    place."""
    data = weight._data
    rows = np.unique(idx)
    norms = np.linalg.norm(data[rows], ord=norm_type, axis=1)
    over = norms > max_norm
    if over.any():
        scale = (max_norm / (norms[over] + 1e-7)).astype(data.dtype)
        data[rows[over]] *= scale[:, None]
        weight._bump_version()


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """``weight[input]``: for integer ``input`` of any shape, the rows of ``weight (num, dim)``, giving
    ``(*input.shape, dim)``. ``padding_idx``'s row gets no gradient; ``max_norm`` renormalizes used rows in
    place first. ``sparse`` gradients are not supported (the gradient is dense)."""
    idx = input._data
    if idx.dtype.kind not in "iu":
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got torch.{input.dtype._legacy} instead (while checking arguments for "
                           "embedding)")
    num = weight._data.shape[0]
    if idx.size and (idx.min() < 0 or idx.max() >= num):
        raise IndexError("index out of range in self")
    if padding_idx is not None and padding_idx < 0:
        padding_idx += num
    if max_norm is not None:
        _renorm_rows(weight, idx, max_norm, norm_type)
    result = Tensor._make(weight._data[idx])
    if wants_grad(weight):
        record(EmbeddingBackward0, (input, weight), result, indices=idx.copy(), num_weights=num,
               padding_idx=padding_idx, scale_grad_by_freq=scale_grad_by_freq)
    return result
