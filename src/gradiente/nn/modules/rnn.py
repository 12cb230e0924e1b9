"""Recurrent layers: ``RNN`` (tanh or ReLU), ``LSTM`` and ``GRU`` over whole sequences, and the one-step cells
``RNNCell``, ``LSTMCell`` and ``GRUCell``.

The recurrences themselves are ``ops/nn/recurrent_layers.py``'s, shared with ``torch.lstm`` and its kin. Each
layer is composed from differentiable ops (``linear``, ``sigmoid``, ``tanh``, ``unsafe_chunk``, ``stack``,
``cat``), so it needs no backward code: the gradients of the input, the initial state and every weight come
from the ops. The gate math, the parameter names and shapes, their registration order and their initial
values for a given seed are PyTorch's; the graph's node names are those of the composing ops, not of
PyTorch's fused kernels.

A step of each recurrence, with ``x`` the input and ``h`` the previous state:

* RNN:  h' = tanh(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh)   (or relu)
* LSTM: i, f, g, o = chunk(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh, 4); c' = σ(f)·c + σ(i)·tanh(g); h' = σ(o)·tanh(c')
  (and h' = h' W_hrᵀ with ``proj_size``)
* GRU:  r = σ(x_r + h_r), z = σ(x_z + h_z), n = tanh(x_n + r·h_n), h' = (1 - z)·n + z·h, where
  x_* = chunks of x W_ihᵀ + b_ih and h_* = chunks of h W_hhᵀ + b_hh
"""
import math
import numbers
import warnings

from ...core.creation import empty, zeros
from ...ops.nn.recurrent_layers import GATES, Weights, cell_step, run_layers
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


def _init_uniform(parameters, hidden_size):
    """U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) for every parameter, in order: PyTorch's draws."""
    bound = 1.0 / math.sqrt(hidden_size) if hidden_size > 0 else 0
    for weight in parameters:
        init.uniform_(weight, -bound, bound)


# --- the layers -----------------------------------------------------------------------------------------
class RNNBase(Module):
    """What ``RNN``, ``LSTM`` and ``GRU`` share: the stacked (and optionally bidirectional) weights, their
    initialization, the input checks and the loop over layers and time. ``mode`` is ``'RNN_TANH'``,
    ``'RNN_RELU'``, ``'LSTM'`` or ``'GRU'``.

    Parameters, per layer ``k`` and direction (``_reverse`` suffix for the backward one), with gates 1, 4 (LSTM)
    or 3 (GRU) and h_size = ``proj_size`` if set, else ``hidden_size``: ``weight_ih_lk`` ``(gates·hidden_size,
    input_size)`` (for k > 0 the input is the previous layer's output, ``num_directions·h_size`` wide),
    ``weight_hh_lk`` ``(gates·hidden_size, h_size)``, ``bias_ih_lk`` and ``bias_hh_lk`` ``(gates·hidden_size,)``
    unless ``bias=False``, and with ``proj_size`` ``weight_hr_lk`` ``(proj_size, hidden_size)``. All start from
    U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), drawn in that order, as PyTorch draws them.

    ``dropout``: in training, ``F.dropout`` on the output of every layer but the last, drawing the same random
    numbers as PyTorch for the same seed.
    """

    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout",
                     "bidirectional", "proj_size"]

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        _check_options(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout, proj_size)
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(self._directions()):
                self._add_layer_weights(layer, direction, dtype, device)
        self.reset_parameters()

    def _directions(self):
        return 2 if self.bidirectional else 1

    def _real_hidden_size(self):
        """The width of h: ``proj_size`` when the LSTM projects it, else ``hidden_size``."""
        return self.proj_size if self.proj_size > 0 else self.hidden_size

    def _add_layer_weights(self, layer, direction, dtype, device):
        gate_size = GATES[self.mode] * self.hidden_size
        layer_input = self.input_size if layer == 0 else self._real_hidden_size() * self._directions()
        shapes = {"weight_ih": (gate_size, layer_input), "weight_hh": (gate_size, self._real_hidden_size())}
        if self.bias:
            shapes.update(bias_ih=(gate_size,), bias_hh=(gate_size,))
        if self.proj_size > 0:
            shapes["weight_hr"] = (self.proj_size, self.hidden_size)
        suffix = "_reverse" if direction == 1 else ""
        names = []
        for kind, shape in shapes.items():
            name = f"{kind}_l{layer}{suffix}"
            setattr(self, name, Parameter(empty(shape, dtype=dtype, device=device)))
            names.append(name)
        self._flat_weights_names.extend(names)
        self._all_weights.append(names)

    @property
    def _flat_weights(self):
        return [getattr(self, name, None) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        """The parameters, one list per layer and direction."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self):
        """Does nothing: PyTorch packs the weights into one cuDNN buffer here, and gradiente has no GPU."""

    def reset_parameters(self):
        _init_uniform(self.parameters(), self.hidden_size)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # --- checks, with PyTorch's names and messages ---------------------------------------------------------
    def check_input(self, input, batch_sizes):
        weight_dtype = self.weight_ih_l0.dtype
        if input.dtype != weight_dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({weight_dtype}). Convert "
                             f"input: input.to({weight_dtype}), or convert model: model.to({input.dtype})")
        expected_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_dim:
            raise RuntimeError(f"input must have {expected_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                               f"{input.size(-1)}")

    def _mini_batch(self, input, batch_sizes):
        if batch_sizes is not None:
            return int(batch_sizes[0])
        return input.size(0) if self.batch_first else input.size(1)

    def get_expected_hidden_size(self, input, batch_sizes):
        return (self.num_layers * self._directions(), self._mini_batch(input, batch_sizes), self._real_hidden_size())

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        if hx.size() != expected_hidden_size:
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        """Reorder the batch dimension of ``hx`` (to follow a packed batch's sorting)."""
        if permutation is None:
            return hx
        return hx.index_select(1, permutation)

    # --- forward, shared by the three layers ---------------------------------------------------------------
    def _zero_hidden(self, batch, like):
        """The default initial state: zeros, h (and, for LSTM, c) of shape (layers·directions, batch, size), with
        the dtype and on the device of the input ``like``."""
        h = zeros(self.num_layers * self._directions(), batch, self._real_hidden_size(), dtype=like.dtype,
                  device=like.device)
        if self.mode != "LSTM":
            return h
        return h, zeros(self.num_layers * self._directions(), batch, self.hidden_size, dtype=like.dtype,
                        device=like.device)

    def _forward_h_only(self, input, hx, rank_message):
        """RNN's and GRU's forward (a state of h alone); ``rank_message`` is their wording for an input that is
        not 2-D or 3-D."""
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        if input.dim() not in (2, 3):
            raise ValueError(rank_message.format(input.dim()))
        if hx is not None:
            if input.dim() == 3 and hx.dim() != 3:
                raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
            if input.dim() == 2 and hx.dim() != 2:
                raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D tensor")
        return self._forward_padded(input, hx)

    def _forward_packed(self, input, hx):
        data, batch_sizes, sorted_indices, unsorted_indices = input
        if hx is None:
            hx = self._zero_hidden(int(batch_sizes[0]), data)
        else:
            hx = self.permute_hidden(hx, sorted_indices)
        self.check_forward_args(data, hx, batch_sizes)
        output, hidden = self._run_layers(data, hx, batch_sizes.tolist())
        return (PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices),
                self.permute_hidden(hidden, unsorted_indices))

    def _forward_padded(self, input, hx):
        """``input`` is 2-D or 3-D and ``hx`` (if given) of the matching rank: both were checked."""
        batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not batched:
            input = input.unsqueeze(batch_dim)
            if hx is not None:
                hx = _map_states(hx, lambda s: s.unsqueeze(1))
        if hx is None:
            hx = self._zero_hidden(input.size(batch_dim), input)
        self.check_forward_args(input, hx, None)
        steps = input.transpose(0, 1) if self.batch_first else input
        output, hidden = self._run_layers(steps, hx, None)
        if self.batch_first:
            # as PyTorch: its LSTM transposes the output back out of place, its RNN and GRU in place
            output = output.transpose(0, 1) if self.mode == "LSTM" else output.transpose_(0, 1)
        if not batched:
            output = output.squeeze(batch_dim)
            hidden = _map_states(hidden, lambda s: s.squeeze(1))
        return output, hidden

    def _layer_weights(self, layer, direction):
        suffix = "_reverse" if direction == 1 else ""

        def get(kind):
            return getattr(self, f"{kind}_l{layer}{suffix}", None)
        return Weights(get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh"), get("weight_hr"))

    def _run_layers(self, x, hx, batch_sizes):
        """Run every layer over ``x``: ``(T, B, input_size)``, or a packed ``data`` ``(N, input_size)`` with
        ``batch_sizes`` its rows per step. Returns the last layer's output (same layout) and the final states,
        in the form of ``hx`` (a tensor, or ``(h, c)`` for LSTM)."""
        states = hx if isinstance(hx, tuple) else (hx,)
        weights = [self._layer_weights(layer, direction) for layer in range(self.num_layers)
                   for direction in range(self._directions())]
        x, hidden = run_layers(self.mode, x, states, weights, self.num_layers, self.bidirectional, self.dropout,
                               self.training, batch_sizes)
        return x, (hidden if isinstance(hx, tuple) else hidden[0])


def _map_states(hx, fn):
    return tuple(fn(s) for s in hx) if isinstance(hx, tuple) else fn(hx)


def _check_options(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout, proj_size):
    """PyTorch's constructor checks, in its order."""
    if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
        raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                         "being zeroed")
    if dropout > 0 and num_layers == 1:
        # at the caller of ``RNNBase.__init__`` (``RNN.__init__``, ``LSTM.__init__``...), as PyTorch's ``stacklevel=2``
        warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout expects "
                      f"num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                      stacklevel=3)
    for name, value in (("bias", bias), ("batch_first", batch_first)):
        if not isinstance(value, bool):
            raise TypeError(f"{name} should be of type bool, got: {type(value).__name__}")
    for name, value in (("input_size", input_size), ("hidden_size", hidden_size)):
        if not isinstance(value, int):
            raise TypeError(f"{name} should be of type int, got: {type(value).__name__}")
        if value <= 0:
            raise ValueError(f"{name} must be greater than zero")
    if num_layers <= 0:
        raise ValueError("num_layers must be greater than zero")
    if proj_size < 0:
        raise ValueError("proj_size should be a positive integer or zero to disable projections")
    if proj_size >= hidden_size:
        raise ValueError("proj_size has to be smaller than hidden_size")
    if mode not in GATES:
        raise ValueError("Unrecognized RNN mode: " + mode)


def _reject_proj_size(kwargs):
    if "proj_size" in kwargs:
        raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")


class RNN(RNNBase):
    """An Elman RNN: h_t = tanh(x_t W_ihᵀ + b_ih + h_{t-1} W_hhᵀ + b_hh) (``nonlinearity='relu'`` for ReLU).

    ``forward(input, hx=None)``: input ``(L, N, input_size)`` (``(N, L, input_size)`` with ``batch_first``;
    ``(L, input_size)`` unbatched) or a ``PackedSequence``; hx ``(num_layers·num_directions, N, hidden_size)``,
    zeros by default. Returns ``(output, h_n)``: output ``(L, N, num_directions·hidden_size)``, the last layer's
    h at every step (packed if the input was); h_n the final h of every layer and direction.
    """

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None, **kwargs):
        _reject_proj_size(kwargs)
        modes = {"tanh": "RNN_TANH", "relu": "RNN_RELU"}
        if nonlinearity not in modes:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(modes[nonlinearity], input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, device=device, dtype=dtype, **kwargs)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        return self._forward_h_only(input, hx, "RNN: Expected input to be 2D or 3D, got {}D tensor instead")


class LSTM(RNNBase):
    """Long short-term memory: gates i, f, g, o (in that order in the weights), c_t = f·c_{t-1} + i·g,
    h_t = o·tanh(c_t); with ``proj_size > 0`` h_t is then projected to ``proj_size`` by ``weight_hr``.

    ``forward(input, hx=None)``: as ``RNN``, with hx = ``(h_0, c_0)``: h_0 ``(num_layers·num_directions, N,
    proj_size or hidden_size)``, c_0 ``(num_layers·num_directions, N, hidden_size)``. Returns
    ``(output, (h_n, c_n))``.
    """

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None, **kwargs):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device=device, dtype=dtype, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes):
        return (self.num_layers * self._directions(), self._mini_batch(input, batch_sizes), self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return hx[0].index_select(1, permutation), hx[1].index_select(1, permutation)

    def forward(self, input, hx=None):
        if hx is not None:
            hx = tuple(hx)
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        if input.dim() not in (2, 3):
            raise ValueError(f"LSTM: Expected input to be 2D or 3D, got {input.dim()}D instead")
        if hx is not None:
            rank = input.dim()
            if hx[0].dim() != rank or hx[1].dim() != rank:
                kind = "batched 3-D" if rank == 3 else "unbatched 2-D"
                raise RuntimeError(f"For {kind} input, hx and cx should also be {rank}-D but got "
                                   f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
        return self._forward_padded(input, hx)


class GRU(RNNBase):
    """Gated recurrent unit: gates r, z, n (in that order in the weights), r_t = σ(x_r + h_r),
    z_t = σ(x_z + h_z), n_t = tanh(x_n + r_t·h_n), h_t = (1 - z_t)·n_t + z_t·h_{t-1}, where x_* are the chunks
    of x_t W_ihᵀ + b_ih and h_* those of h_{t-1} W_hhᵀ + b_hh (the reset gate multiplies h_n after its bias).

    ``forward(input, hx=None)``: as ``RNN``; returns ``(output, h_n)``.
    """

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, device=None, dtype=None, **kwargs):
        _reject_proj_size(kwargs)
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype, **kwargs)

    def forward(self, input, hx=None):
        return self._forward_h_only(input, hx, "GRU: Expected input to be 2D or 3D, got {}D instead")


# --- the cells: one time step ---------------------------------------------------------------------------
class RNNCellBase(Module):
    """What the cells share: ``weight_ih`` ``(chunks·hidden_size, input_size)``, ``weight_hh``
    ``(chunks·hidden_size, hidden_size)``, ``bias_ih`` and ``bias_hh`` ``(chunks·hidden_size,)`` (None without
    bias), all from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) as PyTorch draws them."""

    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(empty((num_chunks * hidden_size, input_size), dtype=dtype, device=device))
        self.weight_hh = Parameter(empty((num_chunks * hidden_size, hidden_size), dtype=dtype, device=device))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, dtype=dtype, device=device))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, dtype=dtype, device=device))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def reset_parameters(self):
        _init_uniform(self.parameters(), self.hidden_size)

    @staticmethod
    def _check_rank(name, input, hx, hidden_names):
        """PyTorch's checks before a step: input 1-D or 2-D, each state tensor too (``name`` starts the
        message)."""
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        for label, state in zip(hidden_names, hx or ()):
            if state.dim() not in (1, 2):
                raise ValueError(f"{name}: Expected {label} to be 1D or 2D, got {state.dim()}D instead")

    def _step(self, mode, input, state):
        """One step on a batched ``input`` and a tuple ``state``, after PyTorch's shape and dtype checks."""
        return cell_step(mode, input, state, Weights(self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh))

    def _batched(self, input, hx, count):
        """``input`` as a batch of one if it was 1-D, and the state as a tuple of ``count`` tensors (zeros by
        default)."""
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = (zeros(input.size(0), self.hidden_size, dtype=input.dtype, device=input.device),) * count
        elif not batched:
            hx = tuple(s.unsqueeze(0) for s in hx)
        return batched, input, tuple(hx)


class RNNCell(RNNCellBase):
    """One step of ``RNN``: h' = tanh(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh) (or relu).

    ``forward(input, hx=None)``: input ``(N, input_size)`` or ``(input_size,)``, hx ``(N, hidden_size)`` or
    ``(hidden_size,)`` (zeros by default); returns h'.
    """

    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        self._check_rank("RNNCell", input, None if hx is None else (hx,), ["hidden"])
        batched, input, state = self._batched(input, None if hx is None else (hx,), 1)
        modes = {"tanh": "RNN_TANH", "relu": "RNN_RELU"}
        if self.nonlinearity not in modes:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        h = self._step(modes[self.nonlinearity], input, state)[0]
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One step of ``LSTM``: ``forward(input, hx=None)`` with hx = ``(h, c)`` (zeros by default) returns
    ``(h', c')``."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        self._check_rank("LSTMCell", input, hx, ["hx[0]", "hx[1]"])
        batched, input, state = self._batched(input, hx, 2)
        h, c = self._step("LSTM", input, state)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One step of ``GRU``: ``forward(input, hx=None)`` returns h'."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        self._check_rank("GRUCell", input, None if hx is None else (hx,), ["hidden"])
        batched, input, state = self._batched(input, None if hx is None else (hx,), 1)
        h = self._step("GRU", input, state)[0]
        return h if batched else h.squeeze(0)
