"""The recurrences of ``nn.RNN``, ``nn.LSTM`` and ``nn.GRU`` over a whole sequence, layer by layer and
direction by direction, shared by those modules and by PyTorch's functional forms (``torch.lstm``,
``torch.gru``, ``torch.rnn_tanh``, ``torch.rnn_relu`` and their ``*_cell`` steps).

Each step is composed from differentiable ops (``linear``, ``sigmoid``, ``tanh``, ``unsafe_chunk``), so it needs
no backward code; a float32 LSTM layer without projection over a padded sequence is instead one recorded node,
``lstm_layer`` (``MkldnnRnnLayerBackward0``), as PyTorch's CPU kernel records it, and a float32 GRU layer's steps
over a padded sequence are one node too, ``gru_sequence``, for speed (the same values as the composed steps').
"""
from typing import NamedTuple, Optional

from ...core import dtype as dt
from ...core.tensor import Tensor
from ..joining import cat, stack
from .dropout import dropout as _dropout
from .gru_sequence import gru_sequence, gru_step
from .linear import linear
from .recurrent import lstm_layer, lstm_step

__all__ = ["Weights", "STEPS", "GATES", "check_same_dtype", "run_layers", "cell_step"]


# --- one time step of each recurrence ---------------------------------------------------------------------
class Weights(NamedTuple):
    """The weights of one layer and direction (or of a cell); absent ones are None."""
    w_ih: Tensor
    w_hh: Tensor
    b_ih: Optional[Tensor] = None
    b_hh: Optional[Tensor] = None
    w_hr: Optional[Tensor] = None


# Each step takes ``x_gates``, the input's part of the gates (x W_ihᵀ + b_ih, computed beforehand for all the
# steps at once), the state as a tuple ((h,) or (h, c)) and the weights, and returns the new state.
def _rnn_tanh_step(x_gates, state, w):
    """h' = tanh(x_gates + h W_hhᵀ + b_hh)"""
    return ((linear(state[0], w.w_hh, w.b_hh) + x_gates).tanh(),)


def _rnn_relu_step(x_gates, state, w):
    """h' = relu(x_gates + h W_hhᵀ + b_hh)"""
    return ((linear(state[0], w.w_hh, w.b_hh) + x_gates).relu(),)


def _lstm_step(x_gates, state, w):
    """c' = σ(f)·c + σ(i)·tanh(g); h' = σ(o)·tanh(c'), projected by W_hr when there is one."""
    return lstm_step(x_gates, state, w.w_hh, w.b_hh, w.w_hr)


def _gru_step(x_gates, state, w):
    """r, z = σ(x_r + h_r), σ(x_z + h_z); n = tanh(x_n + r·h_n); h' = (h - n)·z + n"""
    return (gru_step(x_gates, state[0], w.w_hh, w.b_hh),)


STEPS = {"RNN_TANH": _rnn_tanh_step, "RNN_RELU": _rnn_relu_step, "LSTM": _lstm_step, "GRU": _gru_step}
GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def check_same_dtype(x, weight):
    """PyTorch's message for a matrix product of two dtypes (an ``hx`` or cell input of the wrong dtype)."""
    if x.dtype != weight.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {dt.scalar_name(x._data.dtype)} and "
                           f"{dt.scalar_name(weight._data.dtype)}")


# --- one direction of one layer over a sequence -----------------------------------------------------------
def _first_rows(state, rows):
    """The state's first ``rows`` batch rows (the state itself when it has exactly that many)."""
    return state if state[0].shape[0] == rows else tuple(s[:rows] for s in state)


def _run_forward(step, x_steps, state, w):
    """Steps 0..T-1. In a packed batch the batch shrinks as sequences end; each one's final state is set
    aside when it ends, and the pieces are put back together (in batch order) at the end."""
    outputs, ended = [], []
    for x_gates in x_steps:
        rows = x_gates.shape[0]
        if rows < state[0].shape[0]:
            ended.append(tuple(s[rows:] for s in state))
            state = _first_rows(state, rows)
        state = step(x_gates, state, w)
        outputs.append(state[0])
    if ended:
        pieces = [state] + ended[::-1]
        state = tuple(cat([piece[k] for piece in pieces]) for k in range(len(state)))
    return outputs, state


def _run_backward(step, x_steps, state0, w):
    """Steps T-1..0 (the reverse direction). In a packed batch the batch grows as the walk reaches the last
    steps of shorter sequences, which start from their rows of the initial state."""
    state = _first_rows(state0, x_steps[-1].shape[0])
    outputs = []
    for x_gates in reversed(x_steps):
        rows, have = x_gates.shape[0], state[0].shape[0]
        if rows > have:
            state = tuple(cat([s, s0[have:rows]]) for s, s0 in zip(state, state0))
        state = step(x_gates, state, w)
        outputs.append(state[0])
    return outputs[::-1], state


def _packed_steps(x_gates, batch_sizes):
    """A packed batch's rows step by step, one slice each (as PyTorch takes them, so the graph is its graph)."""
    starts = [0]
    for rows in batch_sizes:
        starts.append(starts[-1] + rows)
    return [x_gates[start:end] for start, end in zip(starts, starts[1:])]


def _run_direction(mode, x, state0, w, reverse, batch_sizes):
    """One layer in one direction: its output at every step (in ``x``'s layout) and its final state."""
    if mode == "LSTM" and batch_sizes is None and w.w_hr is None and x.dtype == dt.float32 and not x.is_meta:
        # PyTorch's CPU kernel for this case (oneDNN's): the layer is one node, MkldnnRnnLayerBackward0
        # (its input contiguous: a batch_first input, transposed to time first, is copied, as PyTorch does)
        out, h, c = lstm_layer(x.contiguous(), state0[0], state0[1], w.w_ih, w.w_hh, w.b_ih, w.b_hh,
                               reverse=reverse)
        return out, (h, c)
    if mode == "GRU" and batch_sizes is None and x.dtype == dt.float32 and not x.is_meta:
        # the steps as one node (gru_sequence), the same values as the composed steps' and a few times faster
        steps = gru_sequence(linear(x, w.w_ih, w.b_ih), state0[0], w.w_hh, w.b_hh, reverse=reverse)
        return stack(steps), (steps[0 if reverse else -1],)
    # the input's part of the gates for all steps in one product, as PyTorch's CPU path computes it
    x_gates = linear(x, w.w_ih, w.b_ih)
    x_steps = x_gates.unbind(0) if batch_sizes is None else _packed_steps(x_gates, batch_sizes)
    run = _run_backward if reverse else _run_forward
    step_outputs, final = run(STEPS[mode], x_steps, state0, w)
    return (stack(step_outputs) if batch_sizes is None else cat(step_outputs)), final


def run_layers(mode, x, states, weights, num_layers, bidirectional, dropout, training, batch_sizes):
    """Run every layer of a ``mode`` recurrence (``'RNN_TANH'``, ``'RNN_RELU'``, ``'LSTM'``, ``'GRU'``) over ``x``:
    ``(T, B, input_size)``, or a packed ``data`` ``(N, input_size)`` with ``batch_sizes`` (a list) its rows per
    step. ``states`` is ``(h0,)`` or ``(h0, c0)``, each ``(num_layers·directions, B, size)``; ``weights[k]`` the
    ``Weights`` of layer ``k // directions`` in direction ``k % directions``. In training with ``dropout > 0``,
    ``dropout`` is applied to every layer's output but the last, as PyTorch does. Returns the last layer's output
    (same layout as ``x``) and the final states, a tuple like ``states``."""
    check_same_dtype(states[0], weights[0].w_hh)
    directions = 2 if bidirectional else 1
    per_layer = [s.unbind(0) for s in states]       # as PyTorch splits hx (UnbindBackward0 when it requires grad)
    finals = []
    for layer in range(num_layers):
        outputs = []
        for direction in range(directions):
            index = layer * directions + direction
            output, final = _run_direction(mode, x, tuple(s[index] for s in per_layer), weights[index],
                                           direction == 1, batch_sizes)
            outputs.append(output)
            finals.append(final)
        x = outputs[0] if len(outputs) == 1 else cat(outputs, -1)
        # PyTorch's inter-layer dropout is F.dropout on the whole layer output: same draws, same seed
        if dropout and training and layer < num_layers - 1:
            x = _dropout(x, dropout, True)
    return x, tuple(stack([final[k] for final in finals]) for k in range(len(states)))


def cell_step(mode, input, state, w):
    """One step of a ``mode`` cell on a batched ``input`` (B, input_size) from ``state`` ((h,) or (h, c)), after
    PyTorch's shape and dtype checks: the new state, a tuple like ``state``."""
    input_size, hidden_size = w.w_ih.shape[1], w.w_hh.shape[1]
    if input.size(1) != input_size:     # size(1): PyTorch's IndexError for a 1-D input (a cell takes batches)
        raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} expected {input_size}")
    for k, s in enumerate(state):
        if s.shape[0] != input.shape[0]:
            raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden{k} batch size {s.shape[0]}")
        if s.size(1) != hidden_size:
            raise RuntimeError(f"hidden{k} has inconsistent hidden_size: got {s.shape[1]}, expected {hidden_size}")
    check_same_dtype(input, w.w_ih)
    check_same_dtype(state[0], w.w_hh)
    return STEPS[mode](linear(input, w.w_ih, w.b_ih), state, w)
