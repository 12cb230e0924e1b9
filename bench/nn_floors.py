"""Floors for ``bench_nn_ops.py``: each op's forward and backward written by hand in NumPy, float32, with no
autograd, no checks and no dtype rules, the least work Python over NumPy can do for the same result.

Each ``name(arrays...)`` returns ``run()``, which computes the op's output and the gradients of its inputs for a
fixed upstream gradient (the same seed as the bench's) and returns them, so that ``tests/test_bench_floors.py``
can check that a floor computes what gradiente computes (a floor that skipped work would flatter the target).
The optimizer floors update their arrays in place and return the parameter, with float32 arithmetic (no attempt
at PyTorch's rounding).
Like ``floors.py``, these are measuring instruments, not part of gradiente; the two things borrowed are array
kernels NumPy lacks: erf (``gradiente.core.erf``) and an exact scatter-add of rows (``gradiente.core.scatter``).
"""
import math

import numpy as np

from gradiente.core.erf import erf
from gradiente.core.scatter import add_rows_at

_SQRT1_2 = math.sqrt(0.5)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)


def upstream(shape):
    """The bench's upstream gradient for an output of ``shape``."""
    return np.random.RandomState(1).standard_normal(shape).astype(np.float32)


def gelu(x):
    g = upstream(x.shape)

    def run():
        cdf = 1 + erf(x * _SQRT1_2)
        cdf *= 0.5
        out = x * cdf
        pdf = np.exp(x * x * -0.5)
        pdf *= _INV_SQRT_2PI
        pdf *= x
        pdf += cdf
        pdf *= g
        return out, pdf
    return run


def embedding(idx, w):
    g = upstream(idx.shape + w.shape[1:])

    def run():
        out = w[idx]
        return out, add_rows_at(np.zeros_like(w), idx, g)
    return run


def _norm_backward(g, xhat, rstd, w_b, stat_axes, param_axes, n):
    """dx, dw, db of y = xhat * w + b with xhat normalized over ``stat_axes`` (n elements each)."""
    dxhat = g * w_b
    mean_dxhat = dxhat.sum(axis=stat_axes, keepdims=True) / n
    mean_dxhat_xhat = (dxhat * xhat).sum(axis=stat_axes, keepdims=True) / n
    dx = dxhat - mean_dxhat
    dx -= xhat * mean_dxhat_xhat
    dx *= rstd
    return dx, (g * xhat).sum(axis=param_axes), g.sum(axis=param_axes)


def layer_norm(x, w, b, eps=1e-5):
    g = upstream(x.shape)

    def run():
        mean = x.mean(axis=-1, keepdims=True)
        centered = x - mean
        rstd = 1 / np.sqrt(np.square(centered).mean(axis=-1, keepdims=True) + eps)
        xhat = centered * rstd
        out = xhat * w + b
        return (out,) + _norm_backward(g, xhat, rstd, w, -1, 0, x.shape[-1])
    return run


def group_norm(x, groups, w, b, eps=1e-5):
    g = upstream(x.shape)
    n, c = x.shape[:2]
    w_b, b_b = w.reshape(1, c, 1), b.reshape(1, c, 1)

    def run():
        grouped = x.reshape(n, groups, -1)
        mean = grouped.mean(axis=2, keepdims=True)
        centered = grouped - mean
        rstd = 1 / np.sqrt(np.square(centered).mean(axis=2, keepdims=True) + eps)
        xhat = (centered * rstd).reshape(n, c, -1)
        out = xhat * w_b + b_b
        gc = g.reshape(n, c, -1)
        dxhat = (gc * w_b).reshape(n, groups, -1)
        xg = xhat.reshape(n, groups, -1)
        m = dxhat.shape[2]
        dx = dxhat - dxhat.sum(axis=2, keepdims=True) / m
        dx -= xg * ((dxhat * xg).sum(axis=2, keepdims=True) / m)
        dx *= rstd
        return (out.reshape(x.shape), dx.reshape(x.shape), (gc * xhat).sum(axis=(0, 2)), gc.sum(axis=(0, 2)))
    return run


def batch_norm(x, w, b, eps=1e-5):
    g = upstream(x.shape)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    axes = (0,) + tuple(range(2, x.ndim))
    w_b, b_b = w.reshape(shape), b.reshape(shape)
    n = x.size // x.shape[1]

    def run():
        mean = x.mean(axis=axes, keepdims=True)
        centered = x - mean
        rstd = 1 / np.sqrt(np.square(centered).mean(axis=axes, keepdims=True) + eps)
        xhat = centered * rstd
        out = xhat * w_b + b_b
        return (out,) + _norm_backward(g, xhat, rstd, w_b, axes, axes, n)
    return run


def sgd_momentum_step(n, lr=0.01, momentum=0.9):
    rng = np.random.RandomState(0)
    p, grad = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    buf = np.zeros_like(p)                  # so that the first step leaves it as PyTorch's first does: the gradient
    lr, momentum = np.float32(lr), np.float32(momentum)
    scaled = np.empty_like(p)

    def run():
        np.multiply(buf, momentum, out=buf)
        np.add(buf, grad, out=buf)
        np.multiply(buf, lr, out=scaled)
        np.subtract(p, scaled, out=p)
        return p
    return run


def adamw_step(n, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=1e-2):
    rng = np.random.RandomState(0)
    p, grad = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    m, v = np.zeros_like(p), np.zeros_like(p)
    tmp, denom = np.empty_like(p), np.empty_like(p)
    step = [0]
    f32 = np.float32

    def run():
        step[0] += 1
        t = step[0]
        np.multiply(p, f32(1 - lr * weight_decay), out=p)
        np.subtract(grad, m, out=tmp)                           # m += (1 - beta1)(g - m)
        np.multiply(tmp, f32(1 - beta1), out=tmp)
        np.add(m, tmp, out=m)
        np.multiply(v, f32(beta2), out=v)                       # v = beta2 v + (1 - beta2) g²
        np.multiply(grad, grad, out=tmp)
        np.multiply(tmp, f32(1 - beta2), out=tmp)
        np.add(v, tmp, out=v)
        bias1, bias2 = 1 - beta1 ** t, 1 - beta2 ** t
        np.sqrt(v, out=denom)                                   # p -= lr/bias1 · m / (√v/√bias2 + eps)
        np.divide(denom, f32(math.sqrt(bias2)), out=denom)
        np.add(denom, f32(eps), out=denom)
        np.divide(m, denom, out=tmp)
        np.multiply(tmp, f32(lr / bias1), out=tmp)
        np.subtract(p, tmp, out=p)
        return p
    return run


# --- a GPT block: x + attn(ln1(x)), then + mlp(ln2(.)), causal, 4 heads ------------------------------------

def gpt_block_arrays(batch=8, length=64, width=128, seed=0):
    rng = np.random.RandomState(seed)

    def lin(fan_out, fan_in):
        bound = 1 / math.sqrt(fan_in)
        return (rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32),
                rng.uniform(-bound, bound, fan_out).astype(np.float32))
    c = width
    ones, zeros = np.ones(c, np.float32), np.zeros(c, np.float32)
    params = [ones, zeros, *lin(3 * c, c), *lin(c, c), ones.copy(), zeros.copy(), *lin(4 * c, c), *lin(c, 4 * c)]
    return rng.standard_normal((batch, length, width)).astype(np.float32), params


HEADS = 4


def gpt_block_lib(lib, x, params):
    """The block in ``lib`` (gradiente or torch): pre-norm attention and GELU MLP with residuals."""
    F = lib.nn.functional
    ln1w, ln1b, wqkv, bqkv, wo, bo, ln2w, ln2b, w1, b1, w2, b2 = params
    batch, length, width = x.shape
    h = F.layer_norm(x, (width,), ln1w, ln1b)
    q, k, v = F.linear(h, wqkv, bqkv).split(width, dim=2)
    q, k, v = (t.reshape(batch, length, HEADS, width // HEADS).transpose(1, 2) for t in (q, k, v))
    a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(batch, length, width)
    x = x + F.linear(a, wo, bo)
    return x + F.linear(F.gelu(F.linear(F.layer_norm(x, (width,), ln2w, ln2b), w1, b1)), w2, b2)


def gpt_block(x, params, eps=1e-5):
    """The block by hand: ``run()`` returns the output and the gradients of x and of every parameter."""
    ln1w, ln1b, wqkv, bqkv, wo, bo, ln2w, ln2b, w1, b1, w2, b2 = params
    batch, length, width = x.shape
    d = width // HEADS
    scale = 1 / math.sqrt(d)
    g = upstream(x.shape)
    causal = np.triu(np.ones((length, length), bool), 1)

    def ln(t, w, b):
        mean = t.mean(axis=-1, keepdims=True)
        centered = t - mean
        rstd = 1 / np.sqrt(np.square(centered).mean(axis=-1, keepdims=True) + eps)
        xhat = centered * rstd
        return xhat * w + b, xhat, rstd

    def ln_back(gy, xhat, rstd, w):
        return _norm_backward(gy, xhat, rstd, w, -1, (0, 1), width)

    def heads(t):
        return t.reshape(batch, length, HEADS, d).transpose(0, 2, 1, 3)

    def run():
        h1, xhat1, rstd1 = ln(x, ln1w, ln1b)
        qkv = h1 @ wqkv.T + bqkv
        q, k, v = (heads(t) for t in np.split(qkv, 3, axis=2))
        s = (q @ k.transpose(0, 1, 3, 2)) * np.float32(scale)
        s[..., causal] = -np.inf
        s -= s.max(axis=-1, keepdims=True)
        p = np.exp(s)
        p /= p.sum(axis=-1, keepdims=True)
        a = (p @ v).transpose(0, 2, 1, 3).reshape(batch, length, width)
        x1 = x + a @ wo.T + bo
        h2, xhat2, rstd2 = ln(x1, ln2w, ln2b)
        u = h2 @ w1.T + b1
        cdf = 1 + erf(u * _SQRT1_2)
        cdf *= 0.5
        r = u * cdf
        out = x1 + r @ w2.T + b2
        # backward
        g2 = g.reshape(-1, width)
        dw2, db2 = g2.T @ r.reshape(-1, 4 * width), g2.sum(0)
        dr = g @ w2
        pdf = np.exp(u * u * -0.5)
        pdf *= _INV_SQRT_2PI
        pdf *= u
        pdf += cdf
        du = dr * pdf
        du2 = du.reshape(-1, 4 * width)
        dw1, db1 = du2.T @ h2.reshape(-1, width), du2.sum(0)
        dh2 = du @ w1
        dx1_ln, dln2w, dln2b = ln_back(dh2, xhat2, rstd2, ln2w)
        dx1 = g + dx1_ln
        d1 = dx1.reshape(-1, width)
        dwo, dbo = d1.T @ a.reshape(-1, width), d1.sum(0)
        da = heads(dx1 @ wo)
        dp = da @ v.transpose(0, 1, 3, 2)
        dv = p.transpose(0, 1, 3, 2) @ da
        ds = dp - (dp * p).sum(axis=-1, keepdims=True)
        ds *= p
        ds *= np.float32(scale)
        dq, dk = ds @ k, ds.transpose(0, 1, 3, 2) @ q
        dqkv = np.concatenate([t.transpose(0, 2, 1, 3).reshape(batch, length, width) for t in (dq, dk, dv)], axis=2)
        dq2 = dqkv.reshape(-1, 3 * width)
        dwqkv, dbqkv = dq2.T @ h1.reshape(-1, width), dq2.sum(0)
        dh1 = dqkv @ wqkv
        dx_ln, dln1w, dln1b = ln_back(dh1, xhat1, rstd1, ln1w)
        return (out, dx1 + dx_ln, dln1w, dln1b, dwqkv, dbqkv, dwo, dbo, dln2w, dln2b, dw1, db1, dw2, db2)
    return run


# --- recurrent layers: one layer over a whole sequence, forward and backward through time --------------------

def rnn_arrays(kind, length=32, batch=16, inputs=64, hidden=128, seed=0):
    """``x`` (length, batch, inputs) and the layer's ``w_ih, w_hh, b_ih, b_hh`` in PyTorch's gate order."""
    rng = np.random.RandomState(seed)
    gates = {"lstm": 4, "gru": 3}[kind] * hidden
    bound = 1 / math.sqrt(hidden)
    params = [rng.uniform(-bound, bound, shape).astype(np.float32)
              for shape in ((gates, inputs), (gates, hidden), (gates,), (gates,))]
    return rng.standard_normal((length, batch, inputs)).astype(np.float32), params


_LAYERS: dict = {}


def rnn_lib(lib, kind, x, params):
    """The layer in ``lib`` (gradiente or torch) run with the given weight tensors (``func.functional_call``, so
    their gradients reach them), returning the output sequence."""
    key = (lib.__name__, kind, tuple(x.shape), tuple(params[1].shape))
    if key not in _LAYERS:
        _LAYERS[key] = {"lstm": lib.nn.LSTM, "gru": lib.nn.GRU}[kind](x.shape[-1], params[1].shape[1])
    names = ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0")
    return lib.func.functional_call(_LAYERS[key], dict(zip(names, params)), (x,))[0]


def _sigmoid(t):
    out = np.negative(t)
    np.exp(out, out=out)
    out += 1
    np.reciprocal(out, out=out)
    return out


def lstm(x, params):
    """``run()`` returns the output sequence and the gradients of x, w_ih, w_hh, b_ih, b_hh (zero initial state)."""
    w_ih, w_hh, b_ih, b_hh = params
    length, batch, _ = x.shape
    hidden = w_hh.shape[1]
    g = upstream((length, batch, hidden))

    def run():
        xg = (x.reshape(length * batch, -1) @ w_ih.T + (b_ih + b_hh)).reshape(length, batch, -1)
        w_hh_t = np.ascontiguousarray(w_hh.T)          # BLAS multiplies by a row-major matrix ~2.5x faster
        h, c = np.zeros((batch, hidden), np.float32), np.zeros((batch, hidden), np.float32)
        hs, cs, acts = np.empty((length, batch, hidden), np.float32), [], []
        for t in range(length):
            gates = xg[t] + h @ w_hh_t
            i, f, o = (_sigmoid(gates[:, k * hidden:(k + 1) * hidden]) for k in (0, 1, 3))
            cell = np.tanh(gates[:, 2 * hidden:3 * hidden])
            cs.append(c)
            c = f * c + i * cell
            tc = np.tanh(c)
            h = o * tc
            hs[t] = h
            acts.append((i, f, cell, o, tc))
        dgates = np.empty((length, batch, 4 * hidden), np.float32)
        dh, dc = np.zeros((batch, hidden), np.float32), np.zeros((batch, hidden), np.float32)
        for t in reversed(range(length)):
            i, f, cell, o, tc = acts[t]
            dh = dh + g[t]
            do = dh * tc
            dc = dc + dh * o * (1 - tc * tc)
            d = dgates[t]
            d[:, :hidden] = dc * cell * i * (1 - i)
            d[:, hidden:2 * hidden] = dc * cs[t] * f * (1 - f)
            d[:, 2 * hidden:3 * hidden] = dc * i * (1 - cell * cell)
            d[:, 3 * hidden:] = do * o * (1 - o)
            dc = dc * f
            dh = d @ w_hh
        flat = dgates.reshape(length * batch, -1)
        h_prev = np.concatenate([np.zeros((1, batch, hidden), np.float32), hs[:-1]]).reshape(length * batch, -1)
        db = flat.sum(0)
        return (hs, (flat @ w_ih).reshape(x.shape), flat.T @ x.reshape(length * batch, -1), flat.T @ h_prev,
                db, db.copy())
    return run


def gru(x, params):
    """``run()`` returns the output sequence and the gradients of x, w_ih, w_hh, b_ih, b_hh (zero initial state):
    r = σ(x_r + h_r), z = σ(x_z + h_z), n = tanh(x_n + r·h_n), h' = (1 - z)·n + z·h, with h_* = W_h* h + b_h*."""
    w_ih, w_hh, b_ih, b_hh = params
    length, batch, _ = x.shape
    hidden = w_hh.shape[1]
    g = upstream((length, batch, hidden))

    def run():
        xg = (x.reshape(length * batch, -1) @ w_ih.T + b_ih).reshape(length, batch, -1)
        w_hh_t = np.ascontiguousarray(w_hh.T)          # BLAS multiplies by a row-major matrix ~2.5x faster
        h = np.zeros((batch, hidden), np.float32)
        hs, saved = np.empty((length, batch, hidden), np.float32), []
        for t in range(length):
            hg = h @ w_hh_t + b_hh
            r = _sigmoid(xg[t, :, :hidden] + hg[:, :hidden])
            z = _sigmoid(xg[t, :, hidden:2 * hidden] + hg[:, hidden:2 * hidden])
            hn = hg[:, 2 * hidden:]
            n = np.tanh(xg[t, :, 2 * hidden:] + r * hn)
            saved.append((h, r, z, n, hn))
            h = (1 - z) * n + z * h
            hs[t] = h
        dxg = np.empty((length, batch, 3 * hidden), np.float32)
        dhg = np.empty((length, batch, 3 * hidden), np.float32)
        dh = np.zeros((batch, hidden), np.float32)
        for t in reversed(range(length)):
            h_prev, r, z, n, hn = saved[t]
            dh = dh + g[t]
            dn = dh * (1 - z) * (1 - n * n)
            dz = dh * (h_prev - n) * z * (1 - z)
            dr = dn * hn * r * (1 - r)
            dxg[t, :, :hidden], dxg[t, :, hidden:2 * hidden], dxg[t, :, 2 * hidden:] = dr, dz, dn
            dhg[t, :, :hidden], dhg[t, :, hidden:2 * hidden], dhg[t, :, 2 * hidden:] = dr, dz, dn * r
            dh = dh * z + dhg[t] @ w_hh
        fx, fh = dxg.reshape(length * batch, -1), dhg.reshape(length * batch, -1)
        h_prev = np.concatenate([np.zeros((1, batch, hidden), np.float32), hs[:-1]]).reshape(length * batch, -1)
        return (hs, (fx @ w_ih).reshape(x.shape), fx.T @ x.reshape(length * batch, -1), fh.T @ h_prev, fx.sum(0),
                fh.sum(0))
    return run
