"""PyTorch's errors, shared by the op modules: shapes that do not broadcast, arguments that must be tensors,
and dtype names as PyTorch's messages print them."""
import numpy as np

from .creation import in_iteration_layout
from .tensor import Tensor


def broadcast_error(*shapes):
    """PyTorch's error for shapes that do not broadcast, naming the first pair and dimension that clash."""
    common = tuple(shapes[0])
    for shape in shapes[1:]:
        shape = tuple(shape)
        n = max(len(common), len(shape))
        a, b = (1,) * (n - len(common)) + common, (1,) * (n - len(shape)) + shape
        for i in range(n - 1, -1, -1):
            if a[i] != b[i] and a[i] != 1 and b[i] != 1:
                return RuntimeError(f"The size of tensor a ({a[i]}) must match the size of tensor b ({b[i]}) at "
                                    f"non-singleton dimension {i}")
        common = np.broadcast_shapes(common, shape)
    return RuntimeError(f"shapes {' and '.join(str(list(s)) for s in shapes)} cannot be broadcast together")


def broadcasting(np_fn, *arrays):
    """``np_fn(*arrays)``, an elementwise function, raising PyTorch's error where NumPy finds the shapes do not
    broadcast; the result is laid out as PyTorch's TensorIterator lays it out (``in_iteration_layout``)."""
    try:
        return in_iteration_layout(np_fn(*arrays), *arrays)
    except ValueError:
        shapes = [np.shape(a) for a in arrays]
        try:
            np.broadcast_shapes(*shapes)
        except ValueError:
            raise broadcast_error(*shapes) from None
        raise


def broadcast_shape(*shapes):
    """The shape ``shapes`` broadcast to, or PyTorch's error."""
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise broadcast_error(*shapes) from None


def _require_tensor(name, value, position=2, arg="other"):
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, not {type(value).__name__}")
