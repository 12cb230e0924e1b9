"""Second (and third) derivatives through normalization and embedding, against finite differences and PyTorch.

Their first derivatives are computed on arrays (the training hot path). Under ``create_graph=True``:

* layer_norm and batch_norm record those arrays as the outputs of PyTorch's double-backward node
  (``NativeLayerNormBackwardBackward0``, ``NativeBatchNormBackwardBackward0``), whose rule gives the second
  derivatives on arrays and the third on recorded tensors;
* group_norm composes its first derivatives of differentiable ops, as PyTorch does; instance_norm (a batch norm)
  and rms_norm (a composition) follow;
* embedding records ``EmbeddingDenseBackwardBackward0``.

The op-spec rows run the first derivatives as an op of (inputs, upstream gradient): gradcheck of that op is a
numerical check of the second derivatives, gradgradcheck of the third, and the comparison with PyTorch checks the
grad_fn name and the second derivatives by every input. Where PyTorch is wrong, the tests say so and check the
derivative instead: its third derivatives through layer_norm and training batch_norm (pytorch#175754, #186256:
its double backward treats the saved statistics as constants), and its second derivatives through embedding with
``scale_grad_by_freq`` (its double backward leaves out the division by the counts).
"""
import numpy as np
import pytest
import torch
from harness import OpSpec, spec_tests

import gradiente


def first_derivatives(op, pick=0):
    """``op(lib, *inputs)``'s first derivatives by each input that requires grad, against the upstream gradient
    ``v`` (the last argument), with ``create_graph=True``: ``fn(lib, *inputs, v)``. The ``pick``-th comes first,
    for the harness, which checks the first output."""
    def fn(lib, *args):
        *inputs, v = args
        with lib.enable_grad():     # gradcheck's numerical pass runs under no_grad; the gradient needs a graph
            wrt = [t for t in inputs if t.requires_grad]
            grads = lib.autograd.grad(op(lib, *inputs), wrt, v, create_graph=True)
        return (grads[pick], *grads[:pick], *grads[pick + 1:])
    return fn


def F(lib):
    return lib.nn.functional


def _running_stats(rng, shapes):
    """Input, weight, bias, running mean, running variance (positive) and upstream gradient of a batch norm."""
    x, w, b, mean, var, v = shapes
    return [rng.uniform(-2, 2, x), rng.uniform(-2, 2, w), rng.uniform(-2, 2, b), rng.uniform(-1, 1, mean),
            rng.uniform(0.5, 2, var), rng.uniform(-2, 2, v)]


def _lookups(padding=None):
    def make(rng, shapes):
        weight, index, v = shapes
        idx = rng.randint(0, weight[0], size=index)
        if padding is not None:
            idx.flat[0] = padding
        idx.flat[1] = idx.flat[2]       # a repeated index: its row sums two lookups
        return [rng.uniform(-2, 2, weight), idx.astype(np.int64), rng.uniform(-2, 2, v)]
    return make


# The ops under test, as fn(lib, *inputs); the first derivatives are taken by the floating inputs that require grad.
def layer_norm(lib, x, w, b):
    return F(lib).layer_norm(x, (4,), w, b)


def layer_norm_2d(lib, x):
    return F(lib).layer_norm(x, (3, 4))


def batch_norm_train(lib, x, w, b):
    return F(lib).batch_norm(x, None, None, w, b, training=True)


def batch_norm_train_plain(lib, x):
    return F(lib).batch_norm(x, None, None, training=True, eps=0.1)


def batch_norm_eval(lib, x, w, b, mean, var):
    return F(lib).batch_norm(x, mean, var, w, b, training=False)


def batch_norm_eval_plain(lib, x, mean, var):
    return F(lib).batch_norm(x, mean, var, training=False)


def group_norm(lib, x, w, b):
    return F(lib).group_norm(x, 2, w, b)


def group_norm_plain(lib, x):
    return F(lib).group_norm(x, 3)


def instance_norm(lib, x, w, b):
    return F(lib).instance_norm(x, weight=w, bias=b)


def rms_norm(lib, x, w):
    return F(lib).rms_norm(x, (4,), w)


def embedding(lib, weight, idx):
    return F(lib).embedding(idx, weight)


def embedding_padding(lib, weight, idx):
    return F(lib).embedding(idx, weight, padding_idx=1)


def embedding_by_freq(lib, weight, idx):
    return F(lib).embedding(idx, weight, scale_grad_by_freq=True)


X, C, BATCH = (2, 3, 4), (3,), (3, 3, 2)     # (N, C, L) for the channel norms; (N, *, 4) for layer and rms norm
EVAL = {"make_inputs": _running_stats, "grad_inputs": (0, 1, 2, 5)}
SPECS = [
    OpSpec("layer_norm_dx", first_derivatives(layer_norm), [(X, (4,), (4,), X)]),
    OpSpec("layer_norm_dweight", first_derivatives(layer_norm, 1), [(X, (4,), (4,), X)]),
    OpSpec("layer_norm_dbias", first_derivatives(layer_norm, 2), [(X, (4,), (4,), X)]),
    OpSpec("layer_norm_2d_dx", first_derivatives(layer_norm_2d), [(X, X)]),
    OpSpec("batch_norm_train_dx", first_derivatives(batch_norm_train), [(BATCH, C, C, BATCH)]),
    OpSpec("batch_norm_train_dweight", first_derivatives(batch_norm_train, 1), [(BATCH, C, C, BATCH)]),
    OpSpec("batch_norm_train_dbias", first_derivatives(batch_norm_train, 2), [(BATCH, C, C, BATCH)]),
    OpSpec("batch_norm_train_plain_dx", first_derivatives(batch_norm_train_plain), [((4, 3), (4, 3)), (X, X)]),
    OpSpec("batch_norm_eval_dx", first_derivatives(batch_norm_eval), [(BATCH, C, C, C, C, BATCH)], **EVAL),
    OpSpec("batch_norm_eval_dweight", first_derivatives(batch_norm_eval, 1), [(BATCH, C, C, C, C, BATCH)], **EVAL),
    OpSpec("batch_norm_eval_plain_dx", first_derivatives(batch_norm_eval_plain), [(BATCH, C, C, BATCH)],
           make_inputs=lambda rng, s: [rng.uniform(-2, 2, s[0]), rng.uniform(-1, 1, s[1]), rng.uniform(0.5, 2, s[2]),
                                       rng.uniform(-2, 2, s[3])], grad_inputs=(0, 3)),
    OpSpec("group_norm_dx", first_derivatives(group_norm), [((2, 4, 3), (4,), (4,), (2, 4, 3))]),
    OpSpec("group_norm_dweight", first_derivatives(group_norm, 1), [((2, 4, 3), (4,), (4,), (2, 4, 3))]),
    OpSpec("group_norm_plain_dx", first_derivatives(group_norm_plain),
           [((2, 6), (2, 6)), ((2, 3, 2, 2), (2, 3, 2, 2))]),
    OpSpec("instance_norm_dx", first_derivatives(instance_norm), [(BATCH, C, C, BATCH)]),
    OpSpec("instance_norm_dweight", first_derivatives(instance_norm, 1), [(BATCH, C, C, BATCH)]),
    OpSpec("rms_norm_dx", first_derivatives(rms_norm), [(X, (4,), X)]),
    OpSpec("rms_norm_dweight", first_derivatives(rms_norm, 1), [(X, (4,), X)]),
    OpSpec("embedding_dweight", first_derivatives(embedding), [((5, 3), (2, 3), (2, 3, 3))],
           make_inputs=_lookups()),
    OpSpec("embedding_padding_dweight", first_derivatives(embedding_padding), [((5, 3), (2, 3), (2, 3, 3))],
           make_inputs=_lookups(padding=1)),
    # PyTorch's second derivative is wrong here (see test_embedding_by_freq_divides_by_the_counts): the first
    # derivatives are compared, the second checked numerically only
    OpSpec("embedding_by_freq_dweight", first_derivatives(embedding_by_freq), [((5, 3), (2, 3), (2, 3, 3))],
           make_inputs=_lookups(), torch_grad=False),
]

test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


# --- each op's own gradgradcheck, and its second derivatives by every input against PyTorch's -------------------

CASES = {
    "layer_norm": (layer_norm, [X, (4,), (4,)], None),
    "layer_norm_2d": (layer_norm_2d, [X], None),
    "batch_norm_train": (batch_norm_train, [BATCH, C, C], None),
    "batch_norm_train_plain": (batch_norm_train_plain, [BATCH], None),
    "batch_norm_eval": (batch_norm_eval, [BATCH, C, C, C, C], (3, 4)),
    "batch_norm_eval_plain": (batch_norm_eval_plain, [BATCH, C, C], (1, 2)),
    "group_norm": (group_norm, [(2, 4, 3), (4,), (4,)], None),
    "group_norm_plain": (group_norm_plain, [(2, 3, 2, 2)], None),
    "instance_norm": (instance_norm, [BATCH, C, C], None),
    "rms_norm": (rms_norm, [X, (4,)], None),
    "embedding": (embedding, [(5, 3), (2, 3)], None),
    "embedding_padding": (embedding_padding, [(5, 3), (2, 3)], None),
}


def _inputs(lib, name, dtype, seed=0):
    """The case's inputs in ``lib``: floating ones require grad, except a batch norm's running statistics (the
    positions the case names); an embedding's second input is its indices."""
    _, shapes, constant = CASES[name]
    rng = np.random.RandomState(seed)
    if name.startswith("embedding"):
        arrays = _lookups(padding=1 if "padding" in name else None)(rng, shapes + [(1,)])[:2]
    else:
        arrays = [rng.uniform(-2, 2, s) for s in shapes]
        for i in constant or ():
            arrays[i] = rng.uniform(0.5, 2, shapes[i])
    return [lib.from_numpy(a.astype(dtype)).requires_grad_(i not in (constant or ()))
            if a.dtype.kind == "f" else lib.from_numpy(a) for i, a in enumerate(arrays)]


@pytest.mark.parametrize("name", list(CASES))
def test_gradgradcheck_of_the_op(name):
    inputs = _inputs(gradiente, name, "float64")
    assert gradiente.autograd.gradgradcheck(lambda *xs: CASES[name][0](gradiente, *xs), inputs)


def _second_derivatives(lib, name, dtype):
    """The first derivatives (create_graph), their grad_fn and its edges' names, and the derivatives of a random
    combination of all of them by every input and by the upstream gradient."""
    inputs = _inputs(lib, name, dtype)
    wrt = [t for t in inputs if t.requires_grad]
    out = CASES[name][0](lib, *inputs)
    rng = np.random.RandomState(3)
    v = lib.from_numpy(rng.uniform(-2, 2, tuple(out.shape)).astype(dtype)).requires_grad_()
    firsts = lib.autograd.grad(out, wrt, v, create_graph=True)
    names = [(type(g.grad_fn).__name__,
              [None if n is None else type(n).__name__.split("::")[-1] for n, _ in g.grad_fn.next_functions])
             for g in firsts]
    total = sum((g * lib.from_numpy(rng.uniform(-2, 2, tuple(g.shape)).astype(dtype))).sum() for g in firsts)
    seconds = lib.autograd.grad(total, [*wrt, v], allow_unused=True)
    return ([g.detach().numpy() for g in firsts], names,
            [None if s is None else s.numpy() for s in seconds])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(CASES))
def test_second_derivatives_as_torch(name, dtype):
    ours_first, ours_names, ours = _second_derivatives(gradiente, name, dtype)
    theirs_first, theirs_names, theirs = _second_derivatives(torch, name, dtype)
    rtol, atol = (2e-5, 2e-5) if dtype == "float32" else (1e-10, 1e-12)
    for a, b in zip(ours_first, theirs_first):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
    assert ours_names == theirs_names
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert (a is None) == (b is None), f"second derivative {i}: {a is None=} but {b is None=}"
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=rtol * 10, atol=atol * 10, err_msg=f"second derivative {i}")


@pytest.mark.parametrize("name", ["layer_norm", "batch_norm_train", "batch_norm_eval", "embedding_padding"])
def test_first_derivatives_under_create_graph_are_the_plain_ones(name):
    """The recorded first derivatives are the arrays an ordinary backward computes, bit for bit."""
    inputs = _inputs(gradiente, name, "float32")
    wrt = [t for t in inputs if t.requires_grad]
    out = CASES[name][0](gradiente, *inputs)
    v = gradiente.from_numpy(np.random.RandomState(3).uniform(-2, 2, tuple(out.shape)).astype("float32"))
    plain = gradiente.autograd.grad(out, wrt, v, retain_graph=True)
    recorded = gradiente.autograd.grad(out, wrt, v, create_graph=True)
    for a, b in zip(plain, recorded):
        assert a.numpy().tobytes() == b.detach().numpy().tobytes()


def test_embedding_by_freq_divides_by_the_counts():
    """With ``scale_grad_by_freq`` the first derivative divides each lookup's gradient by its index's count, so
    its derivative by the upstream gradient does too. PyTorch 2.13's leaves the division out (its gradgradcheck
    fails); gradiente's is PyTorch's divided by the counts, and passes."""
    weight = np.random.RandomState(0).uniform(-2, 2, (5, 3))
    idx = np.array([[0, 2, 2], [4, 1, 0]])
    counts = np.bincount(idx.ravel(), minlength=5)[idx][..., None]
    u = np.random.RandomState(1).uniform(-2, 2, (5, 3))
    seconds = []
    for lib in (gradiente, torch):
        w = lib.from_numpy(weight.copy()).requires_grad_()
        out = F(lib).embedding(lib.from_numpy(idx), w, scale_grad_by_freq=True)
        v = lib.ones(tuple(out.shape), dtype=lib.float64, requires_grad=True)
        (dweight,) = lib.autograd.grad(out, w, v, create_graph=True)
        seconds.append(lib.autograd.grad((dweight * lib.from_numpy(u)).sum(), v)[0].numpy())
    np.testing.assert_allclose(seconds[0], seconds[1] / counts, rtol=1e-12)
    assert gradiente.autograd.gradgradcheck(lambda w: embedding_by_freq(gradiente, w, gradiente.from_numpy(idx)),
                                            [gradiente.from_numpy(weight).requires_grad_()])


@pytest.mark.parametrize("op", [
    lambda lib, x: F(lib).layer_norm(x, (4,)),
    lambda lib, x: F(lib).batch_norm(x, None, None, training=True),
    lambda lib, x: F(lib).batch_norm(x, lib.zeros(3, dtype=lib.float64), lib.ones(3, dtype=lib.float64)),
    lambda lib, x: F(lib).group_norm(x, 3),
], ids=["layer_norm", "batch_norm_train", "batch_norm_eval", "group_norm"])
def test_input_changed_in_place_is_caught_as_in_torch(op):
    """The normalizations save their input (its derivatives need it, as PyTorch's do): changing it in place
    before the backward raises PyTorch's error."""
    for lib in (torch, gradiente):
        x = lib.from_numpy(np.random.RandomState(0).uniform(-2, 2, (2, 3, 4))).requires_grad_()
        h = x * 1
        out = op(lib, h)
        h.add_(1)
        with pytest.raises(RuntimeError, match=r"^one of the variables needed for gradient computation has been "
                                               r"modified by an inplace operation: \[torch.DoubleTensor \[2, 3, 4\]\]"):
            out.sum().backward()


@pytest.mark.parametrize("activation", ["relu", "relu_", "threshold", "threshold_"])
def test_relu_and_threshold_record_their_gradient_as_one_node(activation):
    # PyTorch's graph of the gradient: ThresholdBackwardBackward0 with no edge for the incoming gradient and one
    # to the input (or relu's output); its derivative in x is zero, not absent (x still gets a gradient)
    def run(lib):
        x = lib.tensor([-1.0, 0.0, 0.5, 2.0], dtype=lib.float64, requires_grad=True)
        f = {"relu": lib.relu, "relu_": lambda t: t.clone().relu_(),
             "threshold": lambda t: lib.nn.functional.threshold(t, 0.1, 2.0),
             "threshold_": lambda t: lib.nn.functional.threshold(t.clone(), 0.1, 2.0, True)}[activation]
        g, = lib.autograd.grad((f(x) * lib.arange(4.0, dtype=lib.float64)).sum(), x, create_graph=True)
        node = g.grad_fn
        gg, = lib.autograd.grad((g * g).sum(), x)
        return (type(node).__name__, [type(n).__name__ if n is not None else None for n, _ in node.next_functions],
                g.detach().tolist(), gg.tolist())

    assert run(gradiente) == run(torch)
