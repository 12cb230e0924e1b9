"""``torch.slice_inverse``: the tensor a slice was taken from, seen again through the slice.

``slice_inverse(self, src, dim, start, end, step)`` undoes ``src.slice(dim, start, end, step) == self``: it views
``self``'s memory with ``src``'s sizes, strides and storage offset, so the result is ``src`` again, reached from
``self`` (PyTorch's functionalization uses it to replay in-place writes on slices). ``self`` must have been sliced
from memory that holds all of ``src``; otherwise the view is out of bounds and PyTorch's ``setStorage`` error is
raised. In values the result is ``src`` with ``self`` in the slice, so, as in PyTorch, the gradient reaches
``self`` through the slice and ``src`` everywhere else (SliceInverseBackward0, two inputs).
"""
from ..core.inplace import track_view
from ..core.node import Node
from ..core.record import record, wants_grad, wrap
from ..core.tensor import _wrap_dim
from .views import as_strided

__all__ = ["slice_inverse"]


class SliceInverseBackward0(Node):
    """out = src with x in its slice (a view of x's memory);  dx = grad[slice];  dsrc = grad, 0 in the slice;
    out' = src' with x' in its slice"""
    complex_ok = True
    __slots__ = ()
    formula = "∂out/∂x: the slice of the gradient; ∂out/∂src: the gradient outside the slice"
    index: tuple        # the slice of ``src`` that ``x`` is
    _out_shape: tuple   # src's

    def backward(self, ops, grad):
        in_slice = ops.getitem(grad, self.index + (Ellipsis,))
        return in_slice, grad - ops.embed(in_slice, self._out_shape, self.index)

    def jvp(self, ops, x_t, src_t):
        outside = src_t - ops.embed(ops.getitem(src_t, self.index + (Ellipsis,)), self._out_shape, self.index)
        return outside + ops.embed(x_t, self._out_shape, self.index)


def slice_inverse(input, src, dim=0, start=None, end=None, step=1):
    """``src``'s sizes, strides and offset over ``input``'s memory (``input`` being ``src[start:end:step]`` along
    ``dim``): shape ``src.shape``, a view of ``input``, recorded as SliceInverseBackward0. Forward mode gives the
    tangent of the values (``src'`` with ``input'`` in the slice), where PyTorch reads ``input'``'s memory."""
    array = as_strided(input.detach(), src.shape, src.stride(), src.storage_offset())._data
    d = _wrap_dim(dim, src.dim())
    index = (slice(None),) * d + (slice(*slice(start, end, step).indices(src.shape[d])),)
    out = wrap(array)
    if track_view(out, input, SliceInverseBackward0) and wants_grad(input, src):
        record(SliceInverseBackward0, (input, src), out, index=index, _out_shape=tuple(src.shape))
    return out
