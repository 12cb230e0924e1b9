"""``pad``: constant padding of any number of trailing dimensions (``ConstantPadNdBackward0``; negative
amounts crop), and reflect/replicate padding of the last 1-3 dimensions (``ReflectionPad2DBackward0``, ...).

Constant padding's gradient is the upstream gradient with the padding removed, which is itself a
constant padding by the negated amounts. Reflect and replicate padding gather each output element from
one input position along every padded dimension; their gradient sums the upstream gradient back onto
those positions, written as a product with the 0/1 gather matrix so that one rule serves both
first- and higher-order derivatives.
"""
import numpy as np

from ...core.node import Node
from ...core.record import record, wants_grad, wrap
from ...core.rules import constant_pad_array, pad_amounts

__all__ = ["pad"]

_MODES = ("constant", "reflect", "replicate", "circular")


def _amounts(pad, ndim):
    """Check ``pad`` against an ``ndim``-dimensional input; the (dim, before, after) triples it names."""
    for i, p in enumerate(pad):
        if not isinstance(p, (int, np.integer)):
            raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, but found element of type "
                            f"{type(p).__name__} at pos {i}")
    pad = [int(p) for p in pad]
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > 2 * ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {ndim}")
    return pad_amounts(pad, ndim)


class ConstantPadNdBackward0(Node):
    """out = x with a border of a constant (negative amounts crop);  dx = grad with that border removed"""
    formula = "∂pad(x)/∂x: the gradient of the interior, the border's dropped"
    complex_ok = True           # the rule only crops the gradient

    def backward(self, ops, grad):
        return (ops.constant_pad(grad, [-p for p in self.pad]),)


class _GatherPadBackward(Node):
    """out = x gathered along each padded dim (out[..., j] = x[..., index[j]]);
    dx = grad summed back onto the gathered positions: grad @ G along each dim, G[j, index[j]] = 1"""
    formula = "∂pad(x)/∂x: each output's gradient added to the input element it copies"
    complex_ok = True       # it only moves and sums gradients: right for complex ones as written (stft pads them)

    def backward(self, ops, grad):
        for dim, index, size in reversed(self.gathers):
            onehot = np.zeros((len(index), size), dtype=ops.raw(grad).dtype)
            onehot[np.arange(len(index)), index] = 1
            moved = ops.transpose(grad, dim, -1)
            grad = ops.transpose(ops.matmul(moved, ops.constant(onehot, grad)), dim, -1)
        return (grad,)


_GATHER_NODES = {(mode, k): type(f"{name}Pad{k}DBackward0", (_GatherPadBackward,),
                                 {"__doc__": _GatherPadBackward.__doc__})
                 for mode, name in (("reflect", "Reflection"), ("replicate", "Replication")) for k in (1, 2, 3)}


def _gather_index(n, before, after, mode):
    positions = np.arange(-before, n + after)
    if mode == "replicate":
        return np.clip(positions, 0, n - 1)
    positions = np.abs(positions)
    return np.where(positions > n - 1, 2 * (n - 1) - positions, positions)


def pad(input, pad, mode="constant", value=None):
    """Pad the trailing dimensions of ``input``: ``pad = (last_before, last_after, second_last_before, ...)``.

    ``mode='constant'`` (any number of dimensions, negative amounts crop) fills with ``value`` (0);
    ``'reflect'`` mirrors the input without repeating its edge, ``'replicate'`` repeats the edge; these two
    pad the last 1, 2 or 3 dimensions of a 2-3, 3-4 or 4-5 dimensional input, and so does ``'circular'``,
    which wraps around (the end of the input pads its beginning)."""
    if mode not in _MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    a = input._data
    amounts = _amounts(pad, a.ndim)
    if mode == "constant":
        out = wrap(constant_pad_array(a, pad, 0 if value is None else value))
        if wants_grad(input):
            record(ConstantPadNdBackward0, (input,), out, pad=tuple(int(p) for p in pad))
        return out
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    k = len(pad) // 2
    if k not in (1, 2, 3) or a.ndim not in (k + 1, k + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {a.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    if mode == "circular":
        return _pad_circular(input, pad)
    gathers = []
    out = a
    for j, (dim, before, after) in enumerate(amounts):
        n = a.shape[dim]
        if mode == "reflect" and (before >= n or after >= n):
            raise RuntimeError(f"Argument #{4 + 2 * j}: Padding size should be less than the corresponding input "
                               f"dimension, but got: padding ({before}, {after}) at dimension {dim} of input "
                               f"[{', '.join(map(str, a.shape))}]")
        index = _gather_index(n, before, after, mode)
        out = np.take(out, index, axis=dim)
        gathers.append((dim, index, n))
    out = wrap(np.ascontiguousarray(out))
    if wants_grad(input):
        record(_GATHER_NODES[mode, k], (input,), out, gathers=tuple(gathers))
    return out


def _pad_circular(input, pad):
    """Circular padding as PyTorch's ``_pad_circular`` computes it, with the same ops, so that the graph is
    PyTorch's too (``CopySlices`` over ``SliceBackward0``): copy the input (cropped where a pad is negative)
    into the middle of an empty result, then, one padded dimension at a time, copy the result's own last
    columns into its left margin and its first columns into its right margin. Corners are written twice,
    the second time from a margin that is already filled, which is what wraps them in both dimensions."""
    k = len(pad) // 2
    in_shape = tuple(input.shape)
    out_shape = list(in_shape)
    for i in range(k):
        dim = input.dim() - 1 - i
        before, after = int(pad[2 * i]), int(pad[2 * i + 1])
        out_shape[dim] = in_shape[dim] + before + after
        if before > in_shape[dim] or after > in_shape[dim]:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if out_shape[dim] < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
    out = input.new_empty(out_shape)
    out_middle, in_kept = out, input
    for i in range(k):
        dim = input.dim() - 1 - i
        before, after = int(pad[2 * i]), int(pad[2 * i + 1])
        out_middle = _slice(out_middle, dim, max(before, 0), out_shape[dim] - max(after, 0))
        in_kept = _slice(in_kept, dim, max(-before, 0), in_shape[dim] - max(-after, 0))
    out_middle.copy_(in_kept)
    for i in range(k):
        dim = input.dim() - 1 - i
        before, after = int(pad[2 * i]), int(pad[2 * i + 1])
        end = out_shape[dim] - max(after, 0)           # where the copied input ends
        if before > 0:
            _slice(out, dim, 0, before).copy_(_slice(out, dim, end - before, end))
        if after > 0:
            start = max(before, 0)
            _slice(out, dim, out_shape[dim] - after, out_shape[dim]).copy_(_slice(out, dim, start, start + after))
    return out


def _slice(t, dim, start, end):
    return t.narrow(dim, start, end - start)
