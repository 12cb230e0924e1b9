"""Floors for the engine benchmarks: the least work Python over NumPy can do for the same job.

They are measured in the same run as gradiente and PyTorch (``bench_engine.py`` prints them as
"floor" rows), so that a target can be compared with what is possible at all on the machine at hand:

* ``MinimalTensor``: a define-by-run engine reduced to what the 1000-op chain needs and nothing more.
  It has no dtype promotion, no broadcasting, no version counters (an in-place change would silently
  give wrong gradients), no hooks, no grad modes, no retain_graph, no checks of any kind. gradiente does
  all of those on every op; this engine shows the cost of the Python calls, objects and NumPy calls that
  remain once they are all gone.
* ``numpy_mlp_step``: one SGD step of the 784-256-256-10 MLP written by hand in NumPy, the same math as
  ``nn.functional.linear``/``relu``/``cross_entropy`` and ``backward()``, with no graph at all.

Neither is part of gradiente; they are measuring instruments.
"""
import heapq
import itertools

import numpy as np

_sequence = itertools.count()


class MinimalTensor:
    """A float array with just enough graph for ``*``, ``+``, ``tanh`` and ``sum``."""

    __slots__ = ("data", "requires_grad", "node", "grad", "accumulator")

    def __init__(self, data, requires_grad=False):
        self.data, self.requires_grad = data, requires_grad
        self.node = self.grad = self.accumulator = None

    def _edge(self):
        """The node the gradient of this tensor goes to (its producer, or the leaf's accumulator)."""
        if not self.requires_grad:
            return None
        if self.node is not None:
            return self.node
        if self.accumulator is None:
            self.accumulator = _Node(_accumulate, (), (self,))
        return self.accumulator

    def _result(self, data, rule, inputs, saved):
        out = MinimalTensor(data)
        if any(isinstance(t, MinimalTensor) and t.requires_grad for t in inputs):
            out.requires_grad = True
            out.node = _Node(rule, tuple(t._edge() if isinstance(t, MinimalTensor) else None for t in inputs), saved)
        return out

    def __mul__(self, other):
        other_data = other.data if isinstance(other, MinimalTensor) else other
        return self._result(self.data * other_data, _mul_rule, (self, other), (self.data, other_data))

    def __add__(self, other):
        other_data = other.data if isinstance(other, MinimalTensor) else other
        return self._result(self.data + other_data, _add_rule, (self, other), ())

    def tanh(self):
        # (in float64 and rounded once, as gradiente rounds it to take PyTorch's value: core/rounded_math.py)
        out_data = np.tanh(self.data.astype(np.float64)).astype(self.data.dtype)
        return self._result(out_data, _tanh_rule, (self,), (out_data,))

    def sum(self):
        return self._result(np.asarray(self.data.sum()), _sum_rule, (self,), (self.data.shape,))

    def backward(self):
        """Run the nodes newest first (gradiente's order) from a gradient of one."""
        buffers = {self.node: np.ones((), self.data.dtype)}
        heap = [(-self.node.seq, self.node)]
        while heap:
            node = heapq.heappop(heap)[1]
            grads = node.rule(buffers.pop(node), *node.saved)
            for nxt, g in zip(node.edges, grads):
                if nxt is None:
                    continue
                if nxt in buffers:
                    buffers[nxt] = buffers[nxt] + g
                else:
                    buffers[nxt] = g
                    heapq.heappush(heap, (-nxt.seq, nxt))


class _Node:
    __slots__ = ("rule", "edges", "saved", "seq")

    def __init__(self, rule, edges, saved):
        self.rule, self.edges, self.saved, self.seq = rule, edges, saved, next(_sequence)


def _mul_rule(grad, x, y):
    return grad * y, grad * x


def _add_rule(grad):
    return grad, grad


def _tanh_rule(grad, out):
    # 1 - out² rounded once, as PyTorch's kernel (and so gradiente) computes it: a fused multiply-add, done in
    # float64 for float32 values (the product is exact there)
    return (grad * (1 - out.astype(np.float64) ** 2).astype(out.dtype),)


def _sum_rule(grad, shape):
    return (np.broadcast_to(grad, shape),)


def _accumulate(grad, leaf):
    leaf.grad = grad.copy() if leaf.grad is None else leaf.grad + grad
    return ()


def chain(x, w, ops=1000, backward=True):
    """The chain of the engine benchmark (``ops`` elementwise ops, 1000 by default), forward and, unless told
    otherwise, backward, on any tensor type."""
    y = x
    for _ in range(ops // 4):
        y = y * 1.001
        y = y + 0.001
        y = y.tanh()
        y = y * w
    if backward:
        y.sum().backward()
    return y


def minimal_chain_1000():
    """The chain on MinimalTensor."""
    x = MinimalTensor(np.array([0.1, 0.2, 0.3], np.float32), requires_grad=True)
    w = MinimalTensor(np.array([1.001, 0.999, 1.0], np.float32), requires_grad=True)
    return lambda: chain(x, w)


def mlp_arrays(batch):
    """The MLP's parameters [W1, b1, W2, b2, W3, b3], a batch and its targets, as NumPy arrays."""
    rng = np.random.RandomState(0)
    sizes = [784, 256, 256, 10]
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        bound = 1 / np.sqrt(fan_in)
        params.append(rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32))
        params.append(rng.uniform(-bound, bound, fan_out).astype(np.float32))
    return params, rng.standard_normal((batch, 784)).astype(np.float32), rng.randint(0, 10, batch)


def numpy_mlp_step(params, x, target):
    """One SGD step (lr 0.01) of the MLP of ``bench_engine.mlp_step``, by hand. ``params`` are the NumPy
    arrays [W1, b1, W2, b2, W3, b3], updated in place."""
    batch = len(target)
    rows = np.arange(batch)
    zero = np.zeros((), np.float32)

    def run():
        w1, b1, w2, b2, w3, b3 = params
        h1 = x @ w1.T
        h1 += b1
        r1 = np.maximum(h1, zero)
        h2 = r1 @ w2.T
        h2 += b2
        r2 = np.maximum(h2, zero)
        logits = r2 @ w3.T
        logits += b3
        shifted = logits - logits.max(axis=1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        -log_probs[rows, target].mean()                                 # the loss, computed as a step does
        d_logits = np.exp(log_probs)                                    # softmax - one_hot, over the batch
        d_logits[rows, target] -= 1
        d_logits /= batch
        d_r2 = d_logits @ w3
        d_h2 = d_r2 * (r2 > 0)                                          # the cheapest mask NumPy has
        d_r1 = d_h2 @ w2
        d_h1 = d_r1 * (r1 > 0)
        grads = (d_h1.T @ x, d_h1.sum(0), d_h2.T @ r1, d_h2.sum(0), d_logits.T @ r2, d_logits.sum(0))
        for p, g in zip(params, grads):
            p -= 0.01 * g
    return run
