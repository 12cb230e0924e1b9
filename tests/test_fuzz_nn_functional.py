"""Random nn.functional calls against PyTorch: losses (reductions, weights, ignore_index, label smoothing,
probability targets), activations with their parameters, normalizations, convolutions and pooling with
random geometry, padding modes, softmax, normalize, linear, embedding. Values, dtypes, shapes, grad_fn
names, warnings, gradients of every input and (where PyTorch refuses) errors must agree."""
import random
import warnings

import numpy as np
import pytest

import gradiente

torch = pytest.importorskip("torch")

KINDS = ["cross_entropy", "nll_loss", "bce", "bce_logits", "mse", "l1", "smooth_l1", "huber", "kl_div",
         "cosine_embedding", "margin_ranking", "activation", "layer_norm", "group_norm", "batch_norm", "conv1d",
         "conv2d", "max_pool", "avg_pool", "adaptive_avg_pool", "pad", "softmax", "normalize", "linear", "embedding",
         "interpolate"]
ACTIVATIONS = ["relu", "elu", "selu", "celu", "gelu", "silu", "mish", "softplus", "leaky_relu", "hardtanh", "relu6",
               "hardsigmoid", "hardswish", "logsigmoid", "softsign", "tanhshrink", "softshrink", "hardshrink", "glu",
               "prelu", "threshold", "softmin", "log_softmax", "rrelu"]


def make_case(seed):
    """``(kind, dtype, call)``: ``call(lib)`` returns the output and the tensors whose gradients to compare.
    Every random choice is made here, once, so that both libraries see the same case."""
    r, rs = random.Random(seed), np.random.RandomState(seed)
    kind, dtype = r.choice(KINDS), r.choice(["float32", "float64"])
    n, c = r.randrange(1, 5), r.randrange(2, 5)
    reduction = r.choice(["mean", "sum", "none"])

    def t(lib, a, grad=True):
        return lib.tensor(a.astype(dtype), requires_grad=grad) if a.dtype.kind == "f" else lib.tensor(a)

    if kind in ("cross_entropy", "nll_loss"):
        extra = r.choice([(), (3,), (2, 3)])
        x = rs.standard_normal((n, c) + extra)
        probabilities = kind == "cross_entropy" and r.random() < 0.2
        target = rs.uniform(0, 1, (n, c) + extra) if probabilities else rs.randint(0, c, (n,) + extra)
        if not probabilities and r.random() < 0.3:
            target.flat[0] = -100
        weight = rs.uniform(0.1, 2, c) if r.random() < 0.4 else None
        smoothing = r.choice([0.0, 0.0, 0.1]) if kind == "cross_entropy" else 0.0

        def call(lib):
            F, xi = lib.nn.functional, t(lib, x)
            w = t(lib, weight, False) if weight is not None else None
            if kind == "cross_entropy":
                return F.cross_entropy(xi, t(lib, target, False), weight=w, reduction=reduction,
                                       label_smoothing=smoothing), [xi]
            return F.nll_loss(F.log_softmax(xi, 1), t(lib, target), weight=w, reduction=reduction), [xi]
    elif kind in ("bce", "bce_logits"):
        x, target = rs.standard_normal((n, c)), rs.uniform(0, 1, (n, c))
        weight = rs.uniform(0.1, 2, (c,)) if r.random() < 0.3 else None
        pos_weight = rs.uniform(0.1, 3, (c,)) if kind == "bce_logits" and r.random() < 0.3 else None

        def call(lib):
            F, xi, ti = lib.nn.functional, t(lib, x), t(lib, target)
            w = t(lib, weight, False) if weight is not None else None
            if kind == "bce":
                return F.binary_cross_entropy(xi.sigmoid(), ti, weight=w, reduction=reduction), [xi, ti]
            pw = t(lib, pos_weight, False) if pos_weight is not None else None
            return F.binary_cross_entropy_with_logits(xi, ti, weight=w, pos_weight=pw, reduction=reduction), [xi, ti]
    elif kind in ("mse", "l1", "smooth_l1", "huber", "kl_div"):
        shape = tuple(r.randrange(1, 4) for _ in range(r.randrange(1, 4)))
        x, target = rs.standard_normal(shape), rs.standard_normal(shape)
        if r.random() < 0.2:
            target = target[..., :1]            # a broadcasting target: PyTorch warns
        beta = r.choice([0.5, 1.0, 2.0])

        def call(lib):
            F, xi, ti = lib.nn.functional, t(lib, x), t(lib, target)
            if kind == "kl_div":
                return F.kl_div(F.log_softmax(xi, -1), F.softmax(ti, -1), reduction="batchmean"), [xi, ti]
            fn = {"mse": F.mse_loss, "l1": F.l1_loss}.get(kind)
            if fn is not None:
                return fn(xi, ti, reduction=reduction), [xi, ti]
            if kind == "smooth_l1":
                return F.smooth_l1_loss(xi, ti, reduction=reduction, beta=beta), [xi, ti]
            return F.huber_loss(xi, ti, reduction=reduction, delta=beta), [xi, ti]
    elif kind in ("cosine_embedding", "margin_ranking"):
        x, y = rs.standard_normal((n, c)), rs.standard_normal((n, c))
        target = np.array([r.choice([1.0, -1.0]) for _ in range(n)])

        def call(lib):
            F, xi, yi = lib.nn.functional, t(lib, x), t(lib, y)
            if kind == "cosine_embedding":
                return F.cosine_embedding_loss(xi, yi, t(lib, target.astype(np.int64)), margin=0.1,
                                               reduction=reduction), [xi, yi]
            return F.margin_ranking_loss(xi[:, 0], yi[:, 0], t(lib, target, False), margin=0.2,
                                         reduction=reduction), [xi, yi]
    elif kind == "activation":
        name = r.choice(ACTIVATIONS)
        x, slopes, approximate = rs.standard_normal((n, 2 * c, 3)) * 3, rs.uniform(0, 0.5, (2 * c,)), r.choice(
            ["none", "tanh"])

        def call(lib):
            F, xi = lib.nn.functional, t(lib, x)
            if name == "prelu":
                w = t(lib, slopes)
                return F.prelu(xi, w), [xi, w]
            special = {"glu": lambda: F.glu(xi, 1), "threshold": lambda: F.threshold(xi, 0.3, -2.0),
                       "softmin": lambda: F.softmin(xi, dim=1), "log_softmax": lambda: F.log_softmax(xi, dim=1),
                       "elu": lambda: F.elu(xi, alpha=0.7), "softplus": lambda: F.softplus(xi, beta=2, threshold=3),
                       "leaky_relu": lambda: F.leaky_relu(xi, 0.2), "gelu": lambda: F.gelu(xi, approximate=approximate),
                       "rrelu": lambda: F.rrelu(xi, training=False)}
            return (special[name]() if name in special else getattr(F, name)(xi)), [xi]
    elif kind in ("layer_norm", "group_norm", "batch_norm"):
        groups, width = r.choice([1, 2]), 2 * c
        x = rs.standard_normal((n + 1, width, 3))
        normalized = r.choice([(3,), (width, 3)])
        shape = normalized if kind == "layer_norm" else (width,)
        w, b = rs.standard_normal(shape), rs.standard_normal(shape)
        running = rs.standard_normal(width), rs.uniform(0.5, 2, width)
        training = r.random() < 0.7

        def call(lib):
            F, xi, wi, bi = lib.nn.functional, t(lib, x), t(lib, w), t(lib, b)
            if kind == "layer_norm":
                return F.layer_norm(xi, normalized, wi, bi), [xi, wi, bi]
            if kind == "group_norm":
                return F.group_norm(xi, groups, wi, bi), [xi, wi, bi]
            mean, var = (lib.tensor(a.astype(dtype)) for a in running)
            return F.batch_norm(xi, mean, var, wi, bi, training=training), [xi, wi, bi]
    elif kind in ("conv1d", "conv2d"):
        dims = 1 if kind == "conv1d" else 2
        k, stride, dilation, groups = r.randrange(1, 4), r.randrange(1, 3), r.randrange(1, 3), r.choice([1, c])
        padding, size = r.randrange(0, k), r.randrange(k * dilation, k * dilation + 5)
        x = rs.standard_normal((n, c) + (size,) * dims)
        w, b = rs.standard_normal((2 * c, c // groups) + (k,) * dims), rs.standard_normal(2 * c)
        unbatched = r.random() < 0.2

        def call(lib):
            xi, wi, bi = t(lib, x[0] if unbatched else x), t(lib, w), t(lib, b)
            conv = getattr(lib.nn.functional, kind)
            return conv(xi, wi, bi, stride=stride, padding=padding, dilation=dilation, groups=groups), [xi, wi, bi]
    elif kind in ("max_pool", "avg_pool", "adaptive_avg_pool"):
        dims, k, stride = r.choice([1, 2]), r.randrange(1, 4), r.randrange(1, 3)
        padding, ceil_mode, size = r.randrange(0, k // 2 + 1), r.random() < 0.3, r.randrange(k, k + 6)
        x = rs.standard_normal((n, c) + (size,) * dims)
        include_pad, out_size = r.random() < 0.5, r.randrange(1, size + 1)

        def call(lib):
            F, xi = lib.nn.functional, t(lib, x)
            if kind == "max_pool":
                return getattr(F, f"max_pool{dims}d")(xi, k, stride, padding, ceil_mode=ceil_mode), [xi]
            if kind == "avg_pool":
                return getattr(F, f"avg_pool{dims}d")(xi, k, stride, padding, ceil_mode=ceil_mode,
                                                       count_include_pad=include_pad), [xi]
            return getattr(F, f"adaptive_avg_pool{dims}d")(xi, out_size), [xi]
    elif kind == "pad":
        mode, x = r.choice(["constant", "reflect", "replicate", "circular"]), rs.standard_normal((n, c, 4, 5))
        amounts = tuple(r.randrange(-1, 3) for _ in range(4))

        def call(lib):
            xi = t(lib, x)
            return lib.nn.functional.pad(xi, amounts, mode=mode), [xi]
    elif kind in ("softmax", "normalize"):
        x, dim, p = rs.standard_normal((n, c, 3)) * 5, r.randrange(-3, 3), r.choice([1, 2, 3])

        def call(lib):
            xi = t(lib, x)
            if kind == "softmax":
                return lib.softmax(xi, dim), [xi]
            return lib.nn.functional.normalize(xi, p=p, dim=dim), [xi]
    elif kind == "linear":
        x, w = rs.standard_normal((n, 3, c)), rs.standard_normal((4, c))
        b = rs.standard_normal(4) if r.random() < 0.6 else None

        def call(lib):
            xi, wi = t(lib, x), t(lib, w)
            bi = t(lib, b) if b is not None else None
            return lib.nn.functional.linear(xi, wi, bi), [xi, wi] + ([bi] if bi is not None else [])
    elif kind == "interpolate":
        mode = r.choice(["nearest", "nearest-exact", "bilinear", "bicubic", "area"])
        x, by_size = rs.standard_normal((n, c, 3, 4)), r.random() < 0.5
        size, scale = (r.randrange(1, 8), r.randrange(1, 8)), r.choice([0.5, 1.5, 2, 3])
        corners = r.choice([None, True, False]) if mode in ("bilinear", "bicubic") else None

        def call(lib):
            xi = t(lib, x)
            kwargs = {"size": size} if by_size else {"scale_factor": scale}
            return lib.nn.functional.interpolate(xi, mode=mode, align_corners=corners, **kwargs), [xi]
    else:
        index, w, padding_idx = rs.randint(0, 6, (n, 3)), rs.standard_normal((6, c)), r.choice([None, 0, 2])

        def call(lib):
            wi = t(lib, w)
            return lib.nn.functional.embedding(t(lib, index), wi, padding_idx=padding_idx), [wi]
    return kind, dtype, call


def run_case(seed):
    kind, dtype, call = make_case(seed)
    outcome = {}
    for lib in (gradiente, torch):
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                out, inputs = call(lib)
                if out.requires_grad:
                    upstream = np.random.RandomState(seed + 7).standard_normal(tuple(out.shape)).astype(dtype)
                    out.backward(lib.tensor(upstream))
            messages = sorted({str(w.message).split(" (Triggered")[0].replace("gradiente.", "torch.")
                               for w in caught if not issubclass(w.category, (RuntimeWarning, DeprecationWarning))})
            outcome[lib] = ("ok", type(out.grad_fn).__name__, str(out.dtype).split(".")[-1], tuple(out.shape),
                            messages, out.detach().numpy().copy(),
                            [None if i.grad is None else i.grad.numpy().copy() for i in inputs])
        except Exception as e:      # the error itself is compared
            outcome[lib] = ("error", type(e).__name__, str(e).split("\n")[0])
    ours, theirs = outcome[gradiente], outcome[torch]
    where = f"seed {seed}: {kind} ({dtype})"
    if ours[0] != theirs[0] or (ours[0] == "error" and ours != theirs):
        return f"{where}: gradiente {ours[:3]}, torch {theirs[:3]}"
    if ours[0] == "error":
        return None
    if ours[1:5] != theirs[1:5]:
        return f"{where}: grad_fn/dtype/shape/warnings {ours[1:5]} vs {theirs[1:5]}"
    tol = {"rtol": 2e-4, "atol": 2e-5} if dtype == "float32" else {"rtol": 1e-8, "atol": 1e-10}
    if not np.allclose(ours[5], theirs[5], equal_nan=True, **tol):
        return f"{where}: values differ"
    for i, (g, t_) in enumerate(zip(ours[6], theirs[6])):
        if (g is None) != (t_ is None) or (g is not None and not np.allclose(g, t_, equal_nan=True, **tol)):
            return f"{where}: gradient of input {i} differs"
    return None


@pytest.mark.parametrize("block", range(6))
def test_random_nn_functional_calls_agree_with_torch(block):
    failures = [f for f in (run_case(seed) for seed in range(block * 100, block * 100 + 100)) if f]
    assert not failures, "\n".join(failures)
