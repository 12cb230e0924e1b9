"""All parameters as one flat vector, and back."""
from ...core.tensor import Tensor
from ...ops.joining import cat

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters):
    """The values of ``parameters`` concatenated into one 1-D tensor: ``cat`` of each one's ``view(-1)``, as
    PyTorch's, so the result is in the graph (``CatBackward0``)."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return cat([p.view(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Give ``parameters`` the consecutive slices of the 1-D ``vec``: each one's ``data`` becomes a view of its
    slice, as PyTorch's does (so the parameters then share ``vec``'s memory)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    offset = 0
    for p in parameters:
        n = p.numel()
        p.data = vec[offset:offset + n].view_as(p).data
        offset += n
