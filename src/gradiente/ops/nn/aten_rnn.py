"""PyTorch's functional recurrent layers, the calls ``nn.RNN``, ``nn.LSTM`` and ``nn.GRU`` make inside PyTorch:
``torch.lstm``, ``torch.gru``, ``torch.rnn_tanh``, ``torch.rnn_relu`` over a whole sequence (padded or packed),
and their one-step forms ``torch.lstm_cell``, ``gru_cell``, ``rnn_tanh_cell``, ``rnn_relu_cell``.

They take the weights as one flat list, per layer and direction ``w_ih, w_hh[, b_ih, b_hh][, w_hr]``, and run
the same recurrences as the modules (``recurrent_layers``), so values, gradients and graphs are the modules'.
PyTorch's ATen functions check little of their arguments (a wrong shape can crash the process); these give
PyTorch's messages where PyTorch has them and otherwise fail as NumPy does.
"""
from ...core.tensor import Tensor
from .recurrent_layers import Weights, cell_step, run_layers

__all__ = ["lstm", "gru", "rnn_tanh", "rnn_relu", "lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell"]


def _group_weights(params, has_biases, num_layers, bidirectional):
    """The flat ``params`` as one ``Weights`` per layer and direction: ``w_ih, w_hh``, then ``b_ih, b_hh`` with
    ``has_biases``, then an LSTM's projection ``w_hr`` when the list holds one more per layer and direction."""
    base = 4 if has_biases else 2
    groups = num_layers * (2 if bidirectional else 1)
    if len(params) == groups * base:
        stride = base
    elif len(params) == groups * (base + 1):
        stride = base + 1
    else:       # PyTorch's message, from its view of the list as rows of ``base``
        raise RuntimeError(f"MatrixRef: ArrayRef size {len(params)} not divisible by stride {base}")
    weights = []
    for k in range(groups):
        chunk = params[k * stride:(k + 1) * stride]
        biases = chunk[2:4] if has_biases else (None, None)
        projection = chunk[-1] if stride > base else None
        weights.append(Weights(chunk[0], chunk[1], biases[0], biases[1], projection))
    return weights


def _recurrence(mode, args, count_states):
    """Both of PyTorch's overloads: ``(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
    batch_first)`` and the packed ``(data, batch_sizes, hx, params, has_biases, num_layers, dropout, train,
    bidirectional)``, told apart as PyTorch's dispatcher does, by whether ``params`` comes third or fourth."""
    packed = isinstance(args[1 if count_states == 2 else 2], Tensor)     # batch_sizes, or an RNN's hx
    if packed:
        data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional = args
        batch_first = False
    else:
        data, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first = args
        batch_sizes = None
    states = tuple(hx) if count_states == 2 else (hx,)
    if len(states) != count_states:
        raise RuntimeError("lstm expects two hidden states")
    weights = _group_weights(list(params), has_biases, num_layers, bidirectional)
    x = data.transpose(0, 1) if batch_first else data
    sizes = None if batch_sizes is None else [int(n) for n in batch_sizes.tolist()]
    out, finals = run_layers(mode, x, states, weights, num_layers, bidirectional, dropout, train, sizes)
    if batch_first:
        # PyTorch's LSTM transposes its output back out of place, its RNN and GRU in place (TransposeBackward1)
        out = out.transpose(0, 1) if mode == "LSTM" else out.transpose_(0, 1)
    return (out,) + finals


def lstm(*args):
    """``torch.lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)`` or
    ``torch.lstm(data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional)``: a
    (stacked, optionally bidirectional) LSTM over a sequence, as ``nn.LSTM`` computes it. input ``(T, B, in)``
    (``(B, T, in)`` with ``batch_first``) or packed data ``(N, in)`` with int64 ``batch_sizes``; hx ``(h0, c0)``,
    each ``(layers·directions, B, size)``; params flat, per layer and direction ``w_ih, w_hh[, b_ih, b_hh][, w_hr]``.
    Returns the tuple ``(output, h_n, c_n)``."""
    return _recurrence("LSTM", args, 2)


def gru(*args):
    """``torch.gru``: as ``torch.lstm`` with a GRU's recurrence and a single hidden state ``hx``; returns
    ``(output, h_n)``."""
    return _recurrence("GRU", args, 1)


def rnn_tanh(*args):
    """``torch.rnn_tanh``: as ``torch.gru`` with an Elman RNN's recurrence, h' = tanh(x W_ihᵀ + b_ih + h W_hhᵀ +
    b_hh); returns ``(output, h_n)``."""
    return _recurrence("RNN_TANH", args, 1)


def rnn_relu(*args):
    """``torch.rnn_relu``: as ``torch.rnn_tanh`` with relu for tanh; returns ``(output, h_n)``."""
    return _recurrence("RNN_RELU", args, 1)


def _cell(mode, name, input, state, w_ih, w_hh, b_ih, b_hh):
    count = 2 if mode == "LSTM" else 1
    if len(state) != count:
        raise RuntimeError(f"{name} expects two hidden states")
    return cell_step(mode, input, state, Weights(w_ih, w_hh, b_ih, b_hh))


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One LSTM step, as ``nn.LSTMCell``'s: input ``(B, in)``, hx ``(h, c)`` each ``(B, hidden)``; returns the
    tuple ``(h', c')``."""
    return _cell("LSTM", "lstm_cell", input, tuple(hx), w_ih, w_hh, b_ih, b_hh)


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One GRU step, as ``nn.GRUCell``'s: input ``(B, in)``, hx ``(B, hidden)``; returns h'."""
    return _cell("GRU", "gru_cell", input, (hx,), w_ih, w_hh, b_ih, b_hh)[0]


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One step of a tanh RNN, as ``nn.RNNCell``'s: h' = tanh(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh)."""
    return _cell("RNN_TANH", "rnn_tanh_cell", input, (hx,), w_ih, w_hh, b_ih, b_hh)[0]


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One step of a relu RNN, as ``nn.RNNCell(nonlinearity='relu')``'s: h' = relu(x W_ihᵀ + b_ih + h W_hhᵀ +
    b_hh)."""
    return _cell("RNN_RELU", "rnn_relu_cell", input, (hx,), w_ih, w_hh, b_ih, b_hh)[0]
