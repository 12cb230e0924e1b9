"""Packed sequences, as ``torch.nn.utils.rnn``: a batch of sequences of different lengths stored without padding.

A ``PackedSequence`` keeps, time step after time step, only the rows of the sequences still running: with
lengths 3, 2, 1 its ``data`` holds 3 rows for t=0, then 2, then 1, and ``batch_sizes`` is ``[3, 2, 1]``. The
sequences are sorted by decreasing length; ``sorted_indices`` (when the caller's batch was not sorted) says
where each sorted sequence came from, ``unsorted_indices`` undoes it. ``RNN``, ``LSTM`` and ``GRU`` accept one
and skip the padding instead of running over it.

Packing is one gather (``PackPaddedSequenceBackward0``, as in PyTorch); padding is slice assignment into a
filled tensor (``CopySlices``, as in PyTorch), so gradients flow through both.
One difference from PyTorch on purpose: ``unpad_sequence`` leaves its input as it was (PyTorch transposes a
time-major input in place, which changes the caller's tensor).
"""
from collections.abc import Iterable
from typing import NamedTuple, Optional

import numpy as np

import gradiente

from ..._compat import zip_strict
from ...core.node import Node
from ...core.record import record, wants_grad, wrap
from ...core.tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]


class _PackedFields(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Optional[Tensor]
    unsorted_indices: Optional[Tensor]


class PackedSequence(_PackedFields):
    """``(data, batch_sizes, sorted_indices, unsorted_indices)``: ``data`` is ``(sum(lengths), *)``, the rows of
    every time step one after the other; ``batch_sizes[t]`` is how many sequences are longer than ``t``.

    Make one with ``pack_padded_sequence`` or ``pack_sequence``, not by hand. ``PackedSequence((data,
    batch_sizes))`` is also accepted; ``unsorted_indices`` defaults to the inverse of ``sorted_indices``.
    """

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """``data.to(...)``; ``batch_sizes`` and the indices stay as they are (they are always int64)."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def cpu(self, *args, **kwargs):
        return self.to(*args, **kwargs)

    def cuda(self, *args, **kwargs):
        return type(self)(self.data.cuda(*args, **kwargs), self.batch_sizes, self.sorted_indices,
                          self.unsorted_indices)

    def double(self):
        return self.to(dtype=gradiente.float64)

    def float(self):
        return self.to(dtype=gradiente.float32)

    def half(self):
        return self.to(dtype=gradiente.float16)

    def long(self):
        return self.to(dtype=gradiente.int64)

    def int(self):
        return self.to(dtype=gradiente.int32)

    def short(self):
        return self.to(dtype=gradiente.int16)

    def char(self):
        return self.to(dtype=gradiente.int8)

    def byte(self):
        return self.to(dtype=gradiente.uint8)

    @property
    def is_cuda(self):
        return self.data.is_cuda


def invert_permutation(permutation):
    """The permutation that undoes ``permutation`` (None stays None)."""
    if permutation is None:
        return None
    return permutation.argsort()


def _as_lengths(lengths):
    if isinstance(lengths, Tensor):
        return lengths.to(dtype=gradiente.int64)
    return gradiente.as_tensor(lengths, dtype=gradiente.int64)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``) whose sequence ``b`` has
    ``lengths[b]`` valid steps. With ``enforce_sorted`` the lengths must be decreasing; otherwise the batch is
    sorted here and the permutation kept in the result."""
    lengths = _as_lengths(lengths)
    sorted_indices = None
    if not enforce_sorted:
        lengths, sorted_indices = gradiente.sort(lengths, descending=True)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    data, batch_sizes = _pack_padded(input, lengths, batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def _check_packable(steps, lengths):
    """PyTorch's checks, in its order, on the time-major ``steps`` and the int64 ``lengths``."""
    if steps.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    batch_size = steps.size(1)
    sizes = lengths.tolist()
    if len(sizes) != batch_size:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(sizes)} "
                           f"(batch_size={batch_size})")
    if sizes[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if any(later > earlier for earlier, later in zip(sizes, sizes[1:])):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You "
                           "can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep "
                           "this requirement if you do not need ONNX exportability.")
    return sizes


class PackPaddedSequenceBackward0(Node):
    """data = input[step, row] over the valid entries;  dinput = zeros with grad put back at those entries"""
    __slots__ = ()
    formula = "∂ pack(x)/∂x: each packed row's gradient back at its (step, sequence) place, zeros in the padding"

    def backward(self, ops, grad):
        return (ops.embed(grad, self._input_meta[0][0], self.index),)


def _pack_padded(input, lengths, batch_first):
    """The valid rows of each time step, one step after the other (one gather, recorded as PyTorch's
    ``PackPaddedSequenceBackward0``), and how many there are at each step."""
    if lengths.dim() != 1:
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got {lengths.dim()}D cpu Long "
                           "tensor")
    sizes = _check_packable(input.transpose(0, 1) if batch_first else input, lengths)
    batch_sizes = [sum(1 for n in sizes if n > t) for t in range(sizes[0])]
    steps = np.repeat(np.arange(len(batch_sizes)), batch_sizes)
    rows = np.concatenate([np.arange(n) for n in batch_sizes])
    index = (rows, steps) if batch_first else (steps, rows)
    data = wrap(input._data[index])
    if wants_grad(input):
        record(PackPaddedSequenceBackward0, (input,), data, index=index)
    return data, gradiente.tensor(batch_sizes, dtype=gradiente.int64)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Undo ``pack_padded_sequence``: ``(padded, lengths)``, padded ``(T, B, *)`` (``(B, T, *)`` with
    ``batch_first``) with ``padding_value`` past each sequence's end, in the caller's original batch order.
    ``total_length`` pads to that many steps instead of the longest sequence's length."""
    steps = sequence.batch_sizes.size(0)
    if total_length is not None:
        if total_length < steps:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, but "
                             f"got total_length={total_length} and max sequence length being {steps}")
        steps = total_length
    padded, lengths = _pad_packed(sequence.data, sequence.batch_sizes, batch_first, padding_value, steps)
    if sequence.unsorted_indices is None:
        return padded, lengths
    return padded.index_select(0 if batch_first else 1, sequence.unsorted_indices), lengths[sequence.unsorted_indices]


def _pad_packed(data, batch_sizes, batch_first, padding_value, steps):
    sizes = batch_sizes.tolist()
    batch = sizes[0]
    padded = data.new_full((steps, batch, *data.shape[1:]), padding_value)
    # One write per run of steps with the same batch size, of the rows viewed as (steps, rows, *), as PyTorch's
    # kernel writes them (SliceBackward0, ViewBackward0, CopySlices in the graph)
    start = first = 0
    for t in range(1, len(sizes) + 1):
        if t < len(sizes) and sizes[t] == sizes[first]:
            continue
        rows, run = sizes[first], t - first
        padded[first:t, :rows] = data[start:start + run * rows].view(run, rows, *data.shape[1:])
        start += run * rows
        first = t
    lengths = gradiente.tensor([sum(1 for rows in sizes if rows > b) for b in range(batch)], dtype=gradiente.int64)
    return (padded.transpose(0, 1) if batch_first else padded), lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack sequences ``(L_i, *)`` of different lengths into ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``),
    T the longest length, filling the rest with ``padding_value`` on the right (or ``padding_side="left"``).
    The result has the first sequence's dtype."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError(f"pad_sequence: Expected iterable for input sequences, but got arg of type: "
                           f"{type(sequences)}")
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    longest = max(seq.size(0) for seq in sequences)
    first = sequences[0]
    shape = (len(sequences), longest) if batch_first else (longest, len(sequences))
    padded = first.new_full((*shape, *first.shape[1:]), padding_value)
    for b, seq in enumerate(sequences):
        length = seq.size(0)
        start = 0 if padding_side == "right" else longest - length
        steps = slice(start, start + length)
        padded[(b, steps) if batch_first else (steps, b)] = seq
    return padded


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """Split a padded batch back into its sequences: a list of ``(lengths[b], *)`` tensors."""
    batch_major = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    positions = gradiente.arange(batch_major.shape[1])
    return [seq[positions < length] for seq, length in zip_strict(batch_major, lengths)]


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of sequences ``(L_i, *)`` (decreasing lengths unless ``enforce_sorted=False``)."""
    lengths = gradiente.as_tensor([seq.size(0) for seq in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """Undo ``pack_sequence``: the list of sequences, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
