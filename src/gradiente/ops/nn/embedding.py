"""``embedding``: rows of a weight matrix looked up by index, and its backward (a scatter-add of rows, on arrays;
under ``create_graph`` recorded as PyTorch records it, ``EmbeddingDenseBackwardBackward0``, which gathers rows)."""
import numpy as np

from ...core.node import AccumulateGrad, Node
from ...core.record import record, wants_grad
from ...core.scatter import add_rows_at
from ...core.sparse_tensor import sparse_rows_view
from ...core.tensor import Tensor
from ._array_rules import record_gradients

__all__ = ["embedding"]


class EmbeddingBackward0(Node):
    """out = weight[idx];  dweight[idx[k]] += grad[k] (rows of padding_idx get none)"""
    formula = "∂weight[idx]/∂weight: each looked-up row receives the gradient of its lookups"
    sparse = False          # embedding(..., sparse=True): the weight's .grad reads as sparse COO

    def backward(self, ops, grad):
        if self.sparse:
            self._note_sparse_rows()
        if ops.recording:
            (dweight,) = record_gradients(EmbeddingDenseBackwardBackward0, (grad,), (self.dense_grad(ops.raw(grad)),),
                                          first=self)
            return (dweight,)
        return (self.dense_grad(grad),)

    def jvp(self, ops, weight_t):
        # The looked-up rows of the weight's tangent: the true derivative (the rule above leaves out the padding
        # row and scales by frequency on purpose, as PyTorch's does, so it is not this map's transpose)
        return None if weight_t is None else ops.getitem(weight_t, self.indices)

    def dense_grad(self, grad):
        """The weight's gradient, on arrays: each looked-up row's gradients summed (PyTorch's
        ``embedding_dense_backward``)."""
        idx = self.indices.ravel()
        rows = grad.reshape(idx.size, -1)
        if self.scale_grad_by_freq:
            rows = rows / self.counts()[:, None].astype(rows.dtype)
        dweight = np.zeros((self.num_weights, rows.shape[1]), dtype=grad.dtype)
        add_rows_at(dweight, idx, rows)         # np.add.at's sums, in lookup order as PyTorch's, faster
        if self.padding_idx is not None:
            dweight[self.padding_idx] = 0
        return dweight

    def _note_sparse_rows(self):
        """``sparse=True``: tell the weight (a leaf) which rows this backward pass gives a gradient, so that its
        ``.grad`` reads as a sparse COO tensor of those rows (``core/sparse_tensor.sparse_rows_view``); a pass into
        an empty gradient starts the rows afresh."""
        receiver = self.next_functions[0][0]
        if not isinstance(receiver, AccumulateGrad):
            return
        weight = receiver.variable
        rows = np.unique(self.indices)
        if self.padding_idx is not None:
            rows = rows[rows != self.padding_idx]
        held = weight.__dict__.get("_sparse_grad")
        if held is not None and weight._grad is not None and weight._grad._data.any():
            rows = np.union1d(held[0], rows)
        weight.__dict__["_sparse_grad"] = (rows.astype(np.int64), sparse_rows_view)

    def counts(self):
        """How often each lookup's index occurs among all lookups (flattened)."""
        idx = self.indices.ravel()
        return np.bincount(idx, minlength=self.num_weights)[idx]


class EmbeddingDenseBackwardBackward0(Node):
    """dweight = Σ_{k: idx[k] = i} grad[k] / count;  dgrad[k] = ggweight[idx[k]] / count (0 at padding_idx)

    With ``scale_grad_by_freq`` the derivative is divided by each index's count, as the first derivative is: PyTorch
    2.13 leaves that division out (its ``embedding_dense_double_backward`` assumes the first backward scaled its
    input), so its second derivatives, and its gradgradcheck, are wrong there; gradiente's are the derivative."""
    formula = "the adjoint of the scatter-add: each lookup reads its row of the weight's cotangent"
    first: EmbeddingBackward0       # the forward's node: its indices and options

    def backward(self, ops, gg):
        first = self.first
        idx = first.indices.ravel()
        rows = ops.getitem(gg, (idx,))
        if first.scale_grad_by_freq:
            rows = rows / ops.constant(first.counts()[:, None], rows)
        if first.padding_idx is not None:
            rows = ops.mask((idx != first.padding_idx)[:, None], rows)
        return ops.reshape(rows, (*first.indices.shape, rows.shape[1]))


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
    place first. With ``sparse=True`` a leaf weight's ``.grad`` is a sparse COO tensor of the looked-up rows (stored
    once each, coalesced, where PyTorch stores one entry per lookup). Differs from PyTorch 2.13 in the
    second derivative with ``scale_grad_by_freq`` (``create_graph=True``): gradiente's divides by the counts, as the
    first derivative does; PyTorch's does not, and fails its own gradgradcheck."""
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
        # (the weight alone: the indices are no differentiable input, and PyTorch's node has no edge for them)
        record(EmbeddingBackward0, (weight,), result, indices=idx.copy(), num_weights=num,
               padding_idx=padding_idx, scale_grad_by_freq=scale_grad_by_freq, sparse=bool(sparse))
    return result
