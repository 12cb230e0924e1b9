"""An LSTM layer over a whole sequence as one recorded node, as PyTorch's CPU kernel records it
(``MkldnnRnnLayerBackward0``): one node per layer and direction instead of a dozen per time step.

The forward is the recurrence step by step on arrays, keeping each step's gate activations and cell state;
the backward is backpropagation through time over those, from the last step to the first, the weights'
gradients summed over the steps. Under ``create_graph`` the rule instead runs the same recurrence again on
recorded tensors (``lstm_step``, which ``nn.LSTM`` also uses for what this node does not cover) and
differentiates it, so second derivatives follow.

The order of operations is the recorded recurrence's, so both give the same values to the last bit:
``gates = (h W_hhᵀ + b_hh) + (x W_ihᵀ + b_ih)``, ``c' = σ(f)·c + σ(i)·tanh(g)``, ``h' = σ(o)·tanh(c')``.
"""
import numpy as np

from ...core import grad_mode
from ...core.backward import grad as _grad
from ...core.node import Node
from ...core.record import record, wants_grad
from ...core.tensor import Tensor
from .. import joining, unary
from .linear import linear

__all__ = ["lstm_layer", "lstm_step"]


def lstm_step(x_gates, state, w_hh, b_hh, w_hr=None):
    """One recorded LSTM step from the input's part of the gates: the new ``(h, c)``."""
    h, c = state
    in_gate, forget_gate, cell_gate, out_gate = joining.unsafe_chunk(linear(h, w_hh, b_hh) + x_gates, 4, 1)
    c = unary.sigmoid(forget_gate) * c + unary.sigmoid(in_gate) * unary.tanh(cell_gate)
    h = unary.sigmoid(out_gate) * unary.tanh(c)
    if w_hr is not None:
        h = h.matmul(w_hr.t())
    return h, c


def _steps(length, reverse):
    return range(length - 1, -1, -1) if reverse else range(length)


def _before(start, after, reverse):
    """The state before each step, in time order, from the state after each (``after``) and the initial one."""
    if reverse:
        return np.concatenate([after[1:], start[None]])
    return np.concatenate([start[None], after[:-1]])


class MkldnnRnnLayerBackward0(Node):
    """outputs: (out, h_T, c_T) of one LSTM layer over a sequence x (T, B, in), from (h_0, c_0);
    backward: through time, each step's gates' gradients from the gradient of its h and c"""
    formula = "backpropagation through time: dgates = (dh·tanh c, dc·g, dc·c₋₁, dc·i) times σ' or tanh'"
    aten_name = "mkldnn_rnn_layer"

    def backward(self, ops, grad_out, grad_h, grad_c):
        if ops.recording:
            return self._recorded_backward(ops, grad_out, grad_h, grad_c)
        x, w_ih, w_hh, b_ih, _b_hh, h0, c0 = self.saved(ops)
        gates, tanh_cells = self.gates, self.tanh_cells     # per step: σ(i), σ(f), tanh(g), σ(o); tanh c
        length, batch, hidden = tanh_cells.shape
        # what each step's state was before it (h for the weights' gradient, c for the forget gate's)
        h_before, c_before = _before(h0, self.hs, self.reverse), _before(c0, self.cells, self.reverse)
        # Every factor of the gates' gradients that does not depend on the incoming gradient is known for all steps
        # at once: computed here in a few whole-sequence passes, the loop through time is left with seven small
        # NumPy calls a step instead of twenty-odd.
        i, f, g, o = (gates[..., k * hidden:(k + 1) * hidden] for k in range(4))
        dc_per_dh = o * (1 - tanh_cells * tanh_cells)
        factors = np.empty((length, batch, 4, hidden), gates.dtype)    # d gate / d c for i, f, g; d gate / d h for o
        np.multiply(g, i * (1 - i), out=factors[:, :, 0])
        np.multiply(c_before, f * (1 - f), out=factors[:, :, 1])
        np.multiply(i, 1 - g * g, out=factors[:, :, 2])
        np.multiply(tanh_cells, o * (1 - o), out=factors[:, :, 3])
        d_gates = np.empty_like(gates)
        per_gate = d_gates.reshape(length, batch, 4, hidden)
        dh_next, dc_next = grad_h, grad_c
        for t in reversed(_steps(length, self.reverse)):
            dh = grad_out[t] + dh_next
            dc = dh * dc_per_dh[t]
            dc += dc_next
            np.multiply(factors[t, :, :3], dc[:, None], out=per_gate[t, :, :3])
            np.multiply(factors[t, :, 3], dh, out=per_gate[t, :, 3])
            dh_next = d_gates[t] @ w_hh
            dc_next = dc * f[t]
        flat = d_gates.reshape(-1, d_gates.shape[-1])
        d_x = d_gates @ w_ih
        d_w_ih = flat.T @ x.reshape(-1, x.shape[-1])
        d_w_hh = flat.T @ h_before.reshape(-1, hidden)
        d_bias = flat.sum(0) if b_ih is not None else None
        return d_x, d_w_ih, d_w_hh, d_bias, None if d_bias is None else d_bias.copy(), dh_next, dc_next

    def _recorded_backward(self, ops, grad_out, grad_h, grad_c):
        """Under create_graph: the recurrence again, recorded, and its derivatives (differentiable in turn)."""
        inputs = self.saved(ops)
        with grad_mode.enable_grad():
            outputs = _recorded_layer(*inputs, self.reverse)
        wanted = [i for i, t in enumerate(inputs) if t is not None and t.requires_grad]
        found = _grad(outputs, [inputs[i] for i in wanted], (grad_out, grad_h, grad_c), create_graph=True,
                     allow_unused=True)
        results = [None] * len(inputs)
        for i, g in zip(wanted, found):
            results[i] = g
        return tuple(results)


def _recorded_layer(x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse):
    x_gates = linear(x, w_ih, b_ih)
    state, outputs = (h0, c0), {}
    for t in _steps(x.shape[0], reverse):
        state = lstm_step(x_gates[t], state, w_hh, b_hh)
        outputs[t] = state[0]
    return joining.stack([outputs[t] for t in range(x.shape[0])]), state[0], state[1]


def lstm_layer(x, h0, c0, w_ih, w_hh, b_ih=None, b_hh=None, reverse=False):
    """One LSTM layer in one direction over x (T, B, in) from (h0, c0) (B, H): ``(out, h_T, c_T)``, out (T, B, H)
    holding h after each step (in time order, also for ``reverse``), recorded as one node."""
    xa, wi, wh = x._data, w_ih._data, w_hh._data
    hidden = wh.shape[1]
    # the input's part of every step's gates as one matrix product (a 3-d operand would make NumPy run one
    # product per step, four times slower)
    x_gates = (xa.reshape(-1, xa.shape[-1]) @ wi.T).reshape(xa.shape[:-1] + (wi.shape[0],))
    if b_ih is not None:
        x_gates = x_gates + b_ih._data
    h, c = h0._data, c0._data
    length = xa.shape[0]
    gates = np.empty(x_gates.shape, xa.dtype)
    cells = np.empty((length,) + c.shape, xa.dtype)
    tanh_cells = np.empty((length,) + c.shape, xa.dtype)
    hs = np.empty((length,) + h.shape, xa.dtype)
    wh_t = np.ascontiguousarray(wh.T)
    g_gate = slice(2 * hidden, 3 * hidden)
    # Each step writes its results straight into the arrays the backward pass keeps (no temporaries to copy),
    # in the order of operations of the formulas (σ(x) = 1 / (1 + e⁻ˣ), c' = f·c + i·g), so every value is the
    # same as computed one expression at a time.
    with np.errstate(over="ignore"):                    # e⁻ˣ may overflow to inf: σ is then 0, as PyTorch's
        for t in _steps(length, reverse):
            step = h @ wh_t
            if b_hh is not None:
                step += b_hh._data
            step += x_gates[t]
            sig = gates[t]
            np.negative(step, out=sig)                  # σ of all four gates at once, then tanh in its place for g
            np.exp(sig, out=sig)
            sig += 1
            np.divide(1, sig, out=sig)
            np.tanh(step[:, g_gate], out=sig[:, g_gate])
            i, f, g, o = (sig[:, k * hidden:(k + 1) * hidden] for k in range(4))
            c_new, h = cells[t], hs[t]
            np.multiply(f, c, out=c_new)
            c_new += i * g
            c = c_new
            np.tanh(c, out=tanh_cells[t])
            np.multiply(o, tanh_cells[t], out=h)
    out, h_last, c_last = Tensor._make(hs.copy()), Tensor._make(h.copy()), Tensor._make(c.copy())
    inputs = (x, w_ih, w_hh, b_ih, b_hh, h0, c0)
    if wants_grad(*inputs):
        record(MkldnnRnnLayerBackward0, inputs, (out, h_last, c_last), saved=inputs, gates=gates, cells=cells,
               tanh_cells=tanh_cells, hs=hs, reverse=reverse)
    return out, h_last, c_last
