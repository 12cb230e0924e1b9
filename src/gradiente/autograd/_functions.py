"""``torch.autograd._functions``: two legacy custom Functions that old code still calls, ``Resize`` (a reshape
that keeps the number of elements) and ``Type`` (a dtype change, deprecated since PyTorch 2.1)."""
import math
import warnings

from .function import Function

__all__ = ["Resize", "Type"]


class Resize(Function):
    """``Resize.apply(x, sizes)``: ``x``'s values with shape ``sizes``, which must hold as many elements."""

    @staticmethod
    def forward(ctx, tensor, sizes):
        ctx.sizes = sizes
        ctx.numel = math.prod(sizes)
        if tensor.numel() != ctx.numel:
            raise RuntimeError(
                f"requested resize to {'x'.join(map(str, sizes))} ({ctx.numel} elements in total), but the given "
                f"tensor has a size of {'x'.join(map(str, tensor.size()))} ({tensor.numel()} elements). autograd's "
                "resize can only change the shape of a given tensor, while preserving the number of elements. ")
        ctx.input_sizes = tensor.size()
        # a new tensor even when the shape is unchanged: a Function's output must not be its input
        return tensor.contiguous().clone().view(*sizes)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.contiguous().view(ctx.input_sizes), None


class Type(Function):
    """``Type.apply(x, dtype)``: ``x`` converted to ``dtype``; its gradient comes back in ``x``'s dtype."""

    @staticmethod
    def forward(ctx, i, dest_type):
        # PyTorch's ``@deprecated`` on ``forward`` names its caller, ``Function.apply``
        warnings.warn("`torch.autograd._functions.Type` is deprecated as of PyTorch 2.1, please use "
                      "`torch.tensor.to(dtype=dtype)` instead.", FutureWarning, stacklevel=2)
        ctx.input_type = i.dtype
        return i.type(dest_type)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.to(ctx.input_type), None
