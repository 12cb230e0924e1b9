"""A GRU layer's recurrence over a whole sequence as one recorded node, for speed: a dozen recorded ops per time
step cost three times the arithmetic they do on the sizes nn.GRU is used with.

PyTorch's CPU GRU is a composition of ops (its output is ``StackBackward0`` of each step's ``AddBackward0``); here
the input's part of the gates stays that composition's (``linear``, recorded as PyTorch's), and the steps that
follow are one node, ``GruSequenceBackward0``, whose outputs are the steps' hidden states. Stacked, they give the
output PyTorch's does and the same ``StackBackward0`` at its top; below it the graph differs, on purpose.

Every value is the composition's to the last bit, forward and backward: each step computes in the composed ops'
order of operations (``gru_step``), and the backward adds the gradients that meet at a hidden state, and the
weights' gradients over the steps, in the order the engine adds them walking the composed graph. Under
``create_graph`` the rule runs the composed recurrence again on recorded tensors and differentiates it.
"""
import numpy as np

from ...core import blas_order, grad_mode, rounded_math
from ...core.backward import grad as _grad
from ...core.fused import one_minus_square
from ...core.inplace import make_inplace
from ...core.node import Node
from ...core.record import record, wants_grad
from ...core.rules import sigmoid_row_kernel_array
from ...core.summation import torch_order_column_sums
from ...core.tensor import Tensor
from .. import arithmetic, joining, unary
from .linear import linear

__all__ = ["gru_step", "gru_sequence"]


def gru_step(x_gates, h, w_hh, b_hh):
    """One recorded GRU step from the input's part of the gates: r, z = σ(x_r + h_r), σ(x_z + h_z);
    n = tanh(x_n + r·h_n); h' = (h - n)·z + n, with h_* = h W_h*ᵀ + b_h*.

    Written as PyTorch's CPU cell writes it, in place on the chunks of h W_hhᵀ + b_hh, so that float32 values round
    as there (σ of a chunk splits its vector blocks per row: ``rules.in_vector_blocks``) and the graph has its
    nodes. (h - n)·z + n is (1 - z)·n + z·h in the order PyTorch evaluates it."""
    h_reset, h_update, h_new = joining.unsafe_chunk(linear(h, w_hh, b_hh), 3, 1)
    x_reset, x_update, x_new = joining.unsafe_chunk(x_gates, 3, 1)
    reset = _sigmoid_in_place(arithmetic.add_(h_reset, x_reset))
    update = _sigmoid_in_place(arithmetic.add_(h_update, x_update))
    new = _tanh_in_place(arithmetic.add(x_new, arithmetic.mul_(h_new, reset)))
    return arithmetic.add_(arithmetic.mul_(arithmetic.sub(h, new), update), new)


_sigmoid_in_place = make_inplace(unary.sigmoid, "sigmoid_")
_tanh_in_place = make_inplace(unary.tanh, "tanh_")


def _steps(length, reverse):
    return range(length - 1, -1, -1) if reverse else range(length)


def _add(total, term):
    """``total + term``, where None is no term (an output that got no gradient adds nothing)."""
    if total is None:
        return term
    return total if term is None else total + term


def _sigmoid_backward_in_place(grad, out):
    """grad ← (grad·(1 - out))·out, sigmoid_backward_array's products in its order, in grad's memory."""
    slope = 1 - out
    grad *= slope
    grad *= out


class GruSequenceBackward0(Node):
    """outputs: h_t after each step t of a GRU layer (time order), from the input gates x_gates (T, B, 3H), h_0 and
    W_hh, b_hh; backward: through time, each step's gate gradients from the gradient of its h"""
    formula = "backpropagation through time: dn = dh·(1 - z)·(1 - n²), dz = dh·(h - n)·σ', dr = dn·h_n·σ'"
    _materialize_grads = False      # a step whose output got no gradient adds no term
    reverse: bool

    def backward(self, ops, *grads):
        if ops.recording:
            return self._recorded_backward(ops, grads)
        x_gates, h0, w_hh, b_hh = self.saved(ops)
        resets_updates, news, h_news, hs = self.resets_updates, self.news, self.h_news, self.hs
        hidden = w_hh.shape[1]
        order = list(_steps(x_gates.shape[0], self.reverse))
        # the steps the gradient reaches: those up to the last (in processing order) whose output got one
        reached = max((p for p, t in enumerate(order) if grads[t] is not None), default=-1) + 1
        order = order[:reached]
        # per step, in processing order: the gradients of the hidden state's gates (h W_hhᵀ + b_hh) and h before it
        d_h_gates = np.empty((reached, x_gates.shape[1], 3 * hidden), x_gates.dtype)
        h_before = np.empty((reached,) + h0.shape, x_gates.dtype)
        d_x_gates = np.zeros(x_gates.shape, x_gates.dtype)
        # tanh's derivative 1 - n² for every step at once (rounded once, as tanh_backward_array rounds it)
        tanh_slopes = one_minus_square(news)
        # what the next step (in processing order) sends to this step's h: through h - n, and through h W_hhᵀ
        through_difference = through_product = None
        for position in range(reached - 1, -1, -1):
            t = order[position]
            h_prev = h_before[position]
            h_prev[...] = h0 if position == 0 else hs[order[position - 1]]
            # the engine adds what reaches h in the order the composed graph's nodes run: the output's own
            # gradient (the stack runs first), then the next step's h - n, then its h W_hhᵀ
            d_h = _add(_add(grads[t], through_difference), through_product)
            reset_update, new = resets_updates[t], news[t]
            through_difference = d_h * reset_update[:, hidden:]
            d_new = (d_h + -through_difference) * tanh_slopes[t]
            d_gates = d_h_gates[position]
            d_reset_update = d_gates[:, :2 * hidden]
            np.multiply(d_new, h_news[t], out=d_reset_update[:, :hidden])
            np.subtract(h_prev, new, out=d_reset_update[:, hidden:])
            d_reset_update[:, hidden:] *= d_h
            _sigmoid_backward_in_place(d_reset_update, reset_update)
            d_step = d_x_gates[t]
            d_step[:, :2 * hidden] = d_reset_update
            d_step[:, 2 * hidden:] = d_new
            np.multiply(d_new, reset_update[:, :hidden], out=d_gates[:, 2 * hidden:])
            through_product = blas_order.matmul(d_gates, w_hh)
        # the weights' gradients: each step's product (addmm's backward: Gᵀ·h, as it is laid out) and sum over the
        # batch (the engine's, down the columns), added from the last step processed to the first (the engine's
        # order: the sums along the outer axis are taken in that order)
        d_w_hh = d_b_hh = None
        if reached:
            d_w_hh = np.add.reduce(blas_order.matmul(d_h_gates.transpose(0, 2, 1), h_before)[::-1], axis=0)
            if b_hh is not None:
                step_sums = [torch_order_column_sums(d_h_gates[position]) for position in range(reached - 1, -1, -1)]
                d_b_hh = np.add.reduce(np.stack(step_sums), axis=0)
        return d_x_gates, _add(through_difference, through_product), d_w_hh, d_b_hh

    def _recorded_backward(self, ops, grads):
        """Under create_graph: the recurrence again, recorded, and its derivatives (differentiable in turn)."""
        inputs = self.saved(ops)
        with grad_mode.enable_grad():
            outputs = _recorded_sequence(*inputs, self.reverse)
        wanted = [i for i, t in enumerate(inputs) if t is not None and t.requires_grad]
        given = [(out, g) for out, g in zip(outputs, grads) if g is not None]
        found = _grad([out for out, _ in given], [inputs[i] for i in wanted], [g for _, g in given],
                      create_graph=True, allow_unused=True)
        results = [None] * len(inputs)
        for i, g in zip(wanted, found):
            results[i] = g
        return tuple(results)


def _recorded_sequence(x_gates, h0, w_hh, b_hh, reverse):
    h, outputs = h0, {}
    for t in _steps(x_gates.shape[0], reverse):
        h = gru_step(x_gates[t], h, w_hh, b_hh)
        outputs[t] = h
    return [outputs[t] for t in range(x_gates.shape[0])]


def gru_sequence(x_gates, h0, w_hh, b_hh=None, reverse=False):
    """The hidden states of a GRU layer after each step, in time order (also for ``reverse``), from ``x_gates``
    (T, B, 3H), the input's part of the gates (x W_ihᵀ + b_ih), and h0 (B, H): a list of T tensors (B, H), the
    outputs of one recorded node. The last one processed is the layer's final state."""
    gates, wh = x_gates._data, w_hh._data
    hidden = wh.shape[1]
    length = gates.shape[0]
    h = h0._data
    hs = np.empty((length,) + h.shape, gates.dtype)
    resets_updates = np.empty((length, h.shape[0], 2 * hidden), gates.dtype)
    news = np.empty((length,) + h.shape, gates.dtype)
    h_news = np.empty((length,) + h.shape, gates.dtype)
    # W_hhᵀ laid out in rows, once for all the steps: BLAS multiplies by it ~2.5 times faster than by the transposed
    # view. Only where the sums keep their order (on some CPUs the layout picks MKL's kernel); elsewhere the
    # transposed view, as nn.Linear passes it.
    wh_t = np.ascontiguousarray(wh.T) if blas_order.same_order_laid_out_in_rows(h, wh.T) else wh.T
    pair = np.empty((2,) + h.shape, gates.dtype)       # the reset and update gates' pre-activations, end to end
    bias = None if b_hh is None else b_hh._data
    # each step in the order of operations of gru_step (linear is addmm: the bias, then the product's blocks
    # added to it), so that every value is the composed recurrence's
    for t in _steps(length, reverse):
        # (h as a fresh array, as PyTorch's step is: MKL's narrow kernels start by the rows' 16-byte boundaries,
        # which a step kept in the ``hs`` buffer would move)
        h_gates = blas_order.matmul(h if h.base is None else h.copy(), wh_t, bias)
        step = gates[t]
        # σ of each gate as PyTorch's cell takes it: in place, on a chunk of h_gates, whose rows its loop takes
        # one at a time (each row's last H mod 32 elements by the scalar code)
        np.add(h_gates[:, :hidden], step[:, :hidden], out=pair[0])
        np.add(h_gates[:, hidden:2 * hidden], step[:, hidden:2 * hidden], out=pair[1])
        sigmoids = sigmoid_row_kernel_array(pair)
        resets_updates[t, :, :hidden], resets_updates[t, :, hidden:] = sigmoids[0], sigmoids[1]
        h_news[t] = h_gates[:, 2 * hidden:]
        new = news[t]
        np.multiply(resets_updates[t, :, :hidden], h_news[t], out=new)
        np.add(step[:, 2 * hidden:], new, out=new)
        new[...] = rounded_math.tanh(new)
        np.subtract(h, new, out=hs[t])
        hs[t] *= resets_updates[t, :, hidden:]
        hs[t] += new
        h = hs[t]
    outputs = [Tensor._make(hs[t]) for t in range(length)]
    inputs = (x_gates, h0, w_hh, b_hh)
    if wants_grad(*inputs):
        record(GruSequenceBackward0, inputs, tuple(outputs), saved=inputs, resets_updates=resets_updates, news=news,
               h_news=h_news, hs=hs, reverse=reverse)
    return outputs
