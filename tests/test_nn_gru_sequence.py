"""A float32 GRU layer's steps as one node (``ops/nn/gru_sequence.py``): the same bits as the composed steps it
replaces, PyTorch's values and output nodes, and its rule against finite differences in float64 (its second
derivatives against PyTorch's: test_nn_rnn.py)."""
import numpy as np
import pytest

import gradiente
from gradiente.ops.nn.gru_sequence import gru_sequence, gru_step

torch = pytest.importorskip("torch")


def _bits(a):
    return np.asarray(a).view(np.uint32 if a.dtype == np.float32 else np.uint64)


def _composed_layer(x, h0, w_ih, w_hh, b_ih, b_hh, reverse):
    """The layer as nn.GRU computed it before the node: linear, then gru_step after gru_step, stacked."""
    x_gates = gradiente.nn.functional.linear(x, w_ih, b_ih)
    h, outputs = h0, {}
    for t in (range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])):
        h = gru_step(x_gates[t], h, w_hh, b_hh)
        outputs[t] = h
    return gradiente.stack([outputs[t] for t in range(x.shape[0])]), h


def _fused_layer(x, h0, w_ih, w_hh, b_ih, b_hh, reverse):
    steps = gru_sequence(gradiente.nn.functional.linear(x, w_ih, b_ih), h0, w_hh, b_hh, reverse=reverse)
    return gradiente.stack(steps), steps[0 if reverse else -1]


def _leaves(rng, dtype, bias, length=7, batch=3, inputs=5, hidden=6):
    shapes = [(length, batch, inputs), (batch, hidden), (3 * hidden, inputs), (3 * hidden, hidden)]
    shapes += [(3 * hidden,), (3 * hidden,)] if bias else []
    arrays = [(rng.standard_normal(s) * 0.7).astype(dtype) for s in shapes]
    return [gradiente.tensor(a, requires_grad=True) for a in arrays] + ([] if bias else [None, None])


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("used", ["all", "final_only", "first_steps"])
def test_same_bits_as_the_composed_steps(reverse, bias, used):
    """Outputs and every gradient equal the composed recurrence's to the last bit (the order of the sums included),
    also when only some steps' outputs get a gradient."""
    results = []
    for layer in (_composed_layer, _fused_layer):
        rng = np.random.RandomState(3)
        leaves = _leaves(rng, np.float32, bias)
        out, h = layer(*leaves, reverse)
        weight = gradiente.tensor(rng.standard_normal(tuple(out.shape)).astype(np.float32))
        if used == "all":
            loss = (out * weight).sum() + (h * h).sum()
        elif used == "final_only":
            loss = (h * weight[0]).sum()
        else:
            loss = (out[:3] * weight[:3]).sum()
        loss.backward()
        results.append([out.detach().numpy(), h.detach().numpy()] +
                       [t.grad.numpy() for t in leaves if t is not None])
    for composed, fused in zip(*results):
        assert np.array_equal(_bits(composed), _bits(fused))


@pytest.mark.parametrize("batch, hidden", [(16, 780), (2, 60)])
def test_same_bits_as_the_composed_steps_where_the_weights_layout_matters(batch, hidden):
    """On CPUs whose MKL blocks by 384, a weight laid out in rows takes other blocks past 768 than the transposed view
    the composed steps multiply by, and a small batch times the transposed view a dot-product kernel: the layer must
    not copy the weight there."""
    results = []
    for layer in (_composed_layer, _fused_layer):
        leaves = _leaves(np.random.RandomState(4), np.float32, True, length=2, batch=batch, inputs=8, hidden=hidden)
        out, h = layer(*leaves, False)
        (out.sum() + (h * h).sum()).backward()
        results.append([out.detach().numpy()] + [t.grad.numpy() for t in leaves])
    for composed, fused in zip(*results):
        assert np.array_equal(_bits(composed), _bits(fused))


GRU_CASES = [{}, {"num_layers": 2, "bidirectional": True}, {"bias": False}, {"batch_first": True},
             {"num_layers": 2, "dropout": 0.0, "bidirectional": True, "batch_first": True}]


@pytest.mark.parametrize("options", GRU_CASES, ids=[str(o) for o in GRU_CASES])
def test_float32_gru_layers_match_pytorch(options):
    """Values, gradients of input, state and weights, and the output nodes' names."""
    results = []
    for lib in (gradiente, torch):
        lib.manual_seed(0)
        gru = lib.nn.GRU(4, 6, **options)
        rng = np.random.RandomState(0)
        shape = (3, 8, 4) if options.get("batch_first") else (8, 3, 4)
        layers = options.get("num_layers", 1) * (2 if options.get("bidirectional") else 1)
        x = lib.tensor(rng.randn(*shape), dtype=lib.float32, requires_grad=True)
        h0 = lib.tensor(rng.randn(layers, 3, 6), dtype=lib.float32, requires_grad=True)
        out, h = gru(x, h0)
        weight = lib.tensor(rng.randn(*out.shape), dtype=lib.float32)
        ((out * weight).sum() + h.sum() * 2).backward()
        arrays = [out, h, x.grad, h0.grad] + [p.grad for p in gru.parameters()]
        results.append(([type(t.grad_fn).__name__ for t in (out, h)], [a.detach().numpy() for a in arrays]))
    assert results[0][0] == results[1][0]
    for ours, theirs in zip(results[0][1], results[1][1]):
        assert ours.dtype == theirs.dtype
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_node_gradcheck_in_float64(reverse, bias):
    """The node's rule (backpropagation through time) against finite differences, and its second derivatives;
    the last output is left out of the loss, so a step whose output gets no gradient is checked too."""
    rng = np.random.RandomState(2)
    x_gates, h0, w_hh = (gradiente.tensor(rng.randn(*s) * 0.5, dtype=gradiente.float64, requires_grad=True)
                         for s in ((4, 2, 15), (2, 5), (15, 5)))
    inputs = [x_gates, h0, w_hh]
    if bias:
        inputs.append(gradiente.tensor(rng.randn(15) * 0.5, dtype=gradiente.float64, requires_grad=True))

    def layer(*args):
        steps = gru_sequence(*args, reverse=reverse)
        return tuple(steps[:-1])

    assert layer(*inputs)[0].grad_fn.name() == "GruSequenceBackward0"
    assert gradiente.autograd.gradcheck(layer, inputs)
    assert gradiente.autograd.gradgradcheck(layer, inputs)


def test_float64_and_packed_layers_keep_the_composed_graph():
    """Only float32 over a padded sequence takes the node: other dtypes and packed sequences keep PyTorch's
    composed graph (its node names are compared with PyTorch's elsewhere)."""
    gru = gradiente.nn.GRU(3, 4)
    out64, _ = gru.double()(gradiente.randn(5, 2, 3, dtype=gradiente.float64, requires_grad=True))
    assert out64.grad_fn.next_functions[0][0].name() == "AddBackward0"
    gru = gradiente.nn.GRU(3, 4)
    out32, _ = gru(gradiente.randn(5, 2, 3, requires_grad=True))
    assert out32.grad_fn.next_functions[0][0].name() == "GruSequenceBackward0"
