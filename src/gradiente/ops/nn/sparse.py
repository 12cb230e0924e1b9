"""``one_hot``: class indices to one-hot rows (PyTorch groups it with the embedding functions)."""
import numpy as np

from ...core.record import wrap

__all__ = ["one_hot"]


def one_hot(tensor, num_classes=-1):
    """An int64 tensor of shape ``tensor.shape + (num_classes,)`` with a 1 at each index, 0 elsewhere.
    ``num_classes=-1`` takes the largest index + 1."""
    a = tensor._data
    if a.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if a.size == 0:
        if num_classes <= 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return wrap(np.zeros(a.shape + (num_classes,), dtype=np.int64))
    if a.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = int(a.max()) + 1
    elif num_classes <= a.max():
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = np.zeros_like(a, shape=a.shape + (num_classes,))     # (of a meta input, meta: core/meta.py)
    np.put_along_axis(out, a[..., None], 1, axis=-1)
    return wrap(out)
