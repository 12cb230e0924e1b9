"""All parameters as one flat vector, and back."""
import numpy as np

from ...core.tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters):
    """The values of ``parameters`` concatenated into one 1-D tensor (a copy, outside the graph)."""
    return Tensor._make(np.concatenate([p._data.ravel() for p in parameters]))


def vector_to_parameters(vec, parameters):
    """Copy consecutive slices of the 1-D ``vec`` into ``parameters``, in place."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    offset = 0
    for p in parameters:
        n = p._data.size
        p._data[...] = vec._data[offset:offset + n].reshape(p._data.shape)
        p._bump_version()
        offset += n
