"""Recurrent layers and packed sequences against PyTorch: the same seed gives the same initial parameters; the
same parameters and inputs give the same outputs, final states and gradients (of the input, the initial
state and every parameter, with a non-trivial upstream gradient), in float64 and float32; reprs, packing
utilities and error messages match too."""
import warnings

import numpy as np
import pytest
from harness import OpSpec, spec_tests

import gradiente
from gradiente.nn.utils import rnn as g_rnn

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:LSTM with projections is not supported with oneDNN")
t_rnn = torch.nn.utils.rnn

TOL = {"float64": (1e-10, 1e-12), "float32": (2e-5, 2e-6)}


def _g(t):
    return gradiente.from_numpy(t.detach().numpy().copy())


def _close(g, t, dtype, what=""):
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol, err_msg=what)


def _pair(make, dtype="float32"):
    """The same module in both libraries, gradiente's loaded with PyTorch's parameters."""
    torch.manual_seed(0)
    t_mod = make(torch.nn)
    g_mod = make(gradiente.nn)
    g_mod.load_state_dict({k: _g(v) for k, v in t_mod.state_dict().items()})
    if dtype == "float64":
        t_mod.double()
        g_mod.double()
    return g_mod, t_mod


def _leaves(rng, shapes, dtype):
    """Random float arrays as leaves requiring grad, in both libraries."""
    arrays = [rng.standard_normal(shape).astype(dtype) for shape in shapes]
    return ([gradiente.from_numpy(a.copy()).requires_grad_() for a in arrays],
            [torch.from_numpy(a.copy()).requires_grad_() for a in arrays])


def _flatten(out):
    """The tensors of a (nested) output tuple, in order."""
    if isinstance(out, (tuple, list)):
        return [t for part in out for t in _flatten(part)]
    return [out]


def _backward(g_outs, t_outs, rng):
    """Backpropagate sum(out · upstream) over all outputs, with the same random upstream in both libraries."""
    g_loss, t_loss = 0, 0
    for g_out, t_out in zip(g_outs, t_outs):
        upstream = rng.standard_normal(tuple(t_out.shape)).astype(str(t_out.dtype).replace("torch.", ""))
        g_loss = g_loss + (g_out * gradiente.from_numpy(upstream)).sum()
        t_loss = t_loss + (t_out * torch.from_numpy(upstream)).sum()
    g_loss.backward()
    t_loss.backward()


def _check_grads(g_mod, t_mod, g_leaves, t_leaves, dtype):
    for i, (g, t) in enumerate(zip(g_leaves, t_leaves)):
        _close(g.grad, t.grad, dtype, f"input {i}")
    g_params = dict(g_mod.named_parameters())
    assert list(g_params) == [name for name, _ in t_mod.named_parameters()]
    for name, t_param in t_mod.named_parameters():
        _close(g_params[name].grad, t_param.grad, dtype, name)


# --- the layers against PyTorch --------------------------------------------------------------------------
# (id, kind, constructor options, batched input, initial state given)
LAYER_CASES = [
    ("basic", {}, True, False),
    ("hx", {}, True, True),
    ("two_layers", {"num_layers": 2}, True, True),
    ("bidirectional", {"bidirectional": True}, True, True),
    ("deep_bidir_batch_first", {"num_layers": 2, "bidirectional": True, "batch_first": True}, True, True),
    ("no_bias", {"bias": False, "num_layers": 2}, True, False),
    ("batch_first", {"batch_first": True}, True, False),
    ("unbatched", {"num_layers": 2}, False, False),
    ("unbatched_hx_bidir", {"bidirectional": True, "batch_first": True}, False, True),
]
KIND_OPTIONS = {
    "RNN": [{}, {"nonlinearity": "relu"}],
    "LSTM": [{}, {"proj_size": 2}],
    "GRU": [{}],
}
GRID = [(kind, case_id + ("_" + "_".join(f"{k}={v}" for k, v in extra.items()) if extra else ""),
         {**options, **extra}, batched, with_hx)
        for kind, extras in KIND_OPTIONS.items() for extra in extras
        for case_id, options, batched, with_hx in LAYER_CASES]
INPUT, HIDDEN, STEPS, BATCH = 3, 4, 5, 2


def _hidden_shapes(kind, options, batched):
    layers = options.get("num_layers", 1) * (2 if options.get("bidirectional") else 1)
    h_size = options.get("proj_size") or HIDDEN
    batch = (BATCH,) if batched else ()
    shapes = [(layers, *batch, h_size)]
    if kind == "LSTM":
        shapes.append((layers, *batch, HIDDEN))
    return shapes


def _input_shape(options, batched):
    if not batched:
        return (STEPS, INPUT)
    return (BATCH, STEPS, INPUT) if options.get("batch_first") else (STEPS, BATCH, INPUT)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kind,case,options,batched,with_hx", GRID, ids=[f"{row[0]}-{row[1]}" for row in GRID])
def test_layer_matches_torch(kind, case, options, batched, with_hx, dtype):
    rng = np.random.RandomState(sum(map(ord, kind + case)))
    g_mod, t_mod = _pair(lambda nn: getattr(nn, kind)(INPUT, HIDDEN, **options), dtype)
    shapes = [_input_shape(options, batched)] + (_hidden_shapes(kind, options, batched) if with_hx else [])
    g_leaves, t_leaves = _leaves(rng, shapes, dtype)

    def call(mod, leaves):
        if not with_hx:
            return mod(leaves[0])
        return mod(leaves[0], tuple(leaves[1:]) if kind == "LSTM" else leaves[1])

    g_out, t_out = call(g_mod, g_leaves), call(t_mod, t_leaves)
    g_flat, t_flat = _flatten(g_out), _flatten(t_out)
    assert len(g_flat) == len(t_flat) == (3 if kind == "LSTM" else 2)
    for i, (g, t) in enumerate(zip(g_flat, t_flat)):
        assert tuple(g.shape) == tuple(t.shape)
        assert g.dtype is getattr(gradiente, dtype)
        _close(g, t, dtype, f"output {i}")
    _backward(g_flat, t_flat, rng)
    _check_grads(g_mod, t_mod, g_leaves, t_leaves, dtype)


@pytest.mark.parametrize("kind,options", [
    ("LSTM", {"proj_size": 2, "bidirectional": True}), ("GRU", {"num_layers": 2}), ("RNN", {"bias": False}),
])
def test_gradcheck(kind, options):
    """Finite differences agree with backward, for the input, the initial state and every weight, on a packed
    batch (so the shrinking and growing batch of the two directions is differentiated too). The weights are
    passed to gradcheck only to be perturbed in place; the module reads them itself."""
    gradiente.manual_seed(0)
    mod = getattr(gradiente.nn, kind)(2, 3, dtype=gradiente.float64, **options)
    layers = options.get("num_layers", 1) * (2 if options.get("bidirectional") else 1)
    x = gradiente.randn(3, 2, 2, dtype=gradiente.float64, requires_grad=True)
    h0 = gradiente.randn(layers, 2, 3, dtype=gradiente.float64, requires_grad=True)
    h_size = options.get("proj_size") or 3

    def run(x, h0, *weights):
        hx = (h0[..., :h_size], h0) if kind == "LSTM" else h0
        output, hidden = mod(g_rnn.pack_padded_sequence(x, [3, 1]), hx)
        return (output.data, *_flatten(hidden))

    assert gradiente.autograd.gradcheck(run, (x, h0, *mod.parameters()))


GRAD_FN_CASES = [("RNN", {}), ("GRU", {}), ("GRU", {"bidirectional": True}), ("LSTM", {"proj_size": 2})]


@pytest.mark.parametrize("kind,options", GRAD_FN_CASES, ids=[f"{k}-{o}" for k, o in GRAD_FN_CASES])
def test_output_nodes_match_torch(kind, options):
    """Where PyTorch's CPU path is itself a composition (not a fused oneDNN kernel), the outputs end in the
    same nodes."""
    def names(lib):
        mod = getattr(lib.nn, kind)(3, 4, **options)
        x = lib.randn(5, 2, 3, requires_grad=True)
        output, hidden = mod(x)
        packed, _ = mod(lib.nn.utils.rnn.pack_padded_sequence(x, [5, 3]))
        unbatched, _ = mod(lib.randn(5, 3))
        return [type(t.grad_fn).__name__ for t in (output, _flatten(hidden)[0], packed.data, unbatched)]

    assert names(gradiente) == names(torch)


@pytest.mark.parametrize("kind,options", [
    ("RNN", {}), ("RNN", {"nonlinearity": "relu", "num_layers": 3, "bias": False}),
    ("LSTM", {"num_layers": 2, "bidirectional": True, "proj_size": 3}), ("LSTM", {"bias": False, "proj_size": 1}),
    ("GRU", {"num_layers": 2, "bidirectional": True, "batch_first": True}),
])
def test_initial_parameters_match_torch(kind, options):
    torch.manual_seed(7)
    t_mod = getattr(torch.nn, kind)(5, 4, **options)
    gradiente.manual_seed(7)
    g_mod = getattr(gradiente.nn, kind)(5, 4, **options)
    t_params = list(t_mod.named_parameters())
    g_params = list(g_mod.named_parameters())
    assert [name for name, _ in g_params] == [name for name, _ in t_params]
    assert list(g_mod.state_dict()) == list(t_mod.state_dict())
    for (name, g), (_, t) in zip(g_params, t_params):
        assert tuple(g.shape) == tuple(t.shape), name
        np.testing.assert_array_equal(g.detach().numpy(), t.detach().numpy(), err_msg=name)
    assert g_mod._flat_weights_names == t_mod._flat_weights_names
    assert g_mod._all_weights == t_mod._all_weights
    assert [[tuple(w.shape) for w in ws] for ws in g_mod.all_weights] == \
        [[tuple(w.shape) for w in ws] for ws in t_mod.all_weights]
    # the next draw continues from the same generator state in both libraries
    np.testing.assert_array_equal(gradiente.rand(3).numpy(), torch.rand(3).numpy())


@pytest.mark.parametrize("kind,options", [
    ("RNNCell", {}), ("RNNCell", {"bias": False, "nonlinearity": "relu"}), ("LSTMCell", {}), ("GRUCell", {}),
    ("GRUCell", {"bias": False}),
])
def test_cell_initial_parameters_match_torch(kind, options):
    torch.manual_seed(3)
    t_mod = getattr(torch.nn, kind)(5, 4, **options)
    gradiente.manual_seed(3)
    g_mod = getattr(gradiente.nn, kind)(5, 4, **options)
    assert list(g_mod.state_dict()) == list(t_mod.state_dict())
    for (name, g), (_, t) in zip(g_mod.named_parameters(), t_mod.named_parameters()):
        np.testing.assert_array_equal(g.detach().numpy(), t.detach().numpy(), err_msg=name)
    assert (g_mod.bias_ih is None) == (t_mod.bias_ih is None)


CELL_CASES = [
    ("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}), ("RNNCell", {"bias": False}),
    ("LSTMCell", {}), ("LSTMCell", {"bias": False}), ("GRUCell", {}), ("GRUCell", {"bias": False}),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("batched,with_hx", [(True, True), (True, False), (False, True), (False, False)])
@pytest.mark.parametrize("kind,options", CELL_CASES, ids=[f"{k}-{o}" for k, o in CELL_CASES])
def test_cell_matches_torch(kind, options, batched, with_hx, dtype):
    """Three steps of the cell, feeding each state into the next, as a hand-written loop would."""
    rng = np.random.RandomState(len(kind) + 10 * len(options))
    g_mod, t_mod = _pair(lambda nn: getattr(nn, kind)(INPUT, HIDDEN, **options), dtype)
    batch = (BATCH,) if batched else ()
    n_states = 2 if kind == "LSTMCell" else 1
    shapes = [(3, *batch, INPUT)] + ([(*batch, HIDDEN)] * n_states if with_hx else [])
    g_leaves, t_leaves = _leaves(rng, shapes, dtype)

    def run(mod, leaves):
        state = None
        if with_hx:
            state = tuple(leaves[1:]) if n_states == 2 else leaves[1]
        outs = []
        for x in leaves[0]:
            state = mod(x, state)
            outs.append(state)
        return outs

    g_outs, t_outs = _flatten(run(g_mod, g_leaves)), _flatten(run(t_mod, t_leaves))
    for i, (g, t) in enumerate(zip(g_outs, t_outs)):
        assert tuple(g.shape) == tuple(t.shape)
        _close(g, t, dtype, f"output {i}")
    _backward(g_outs, t_outs, rng)
    _check_grads(g_mod, t_mod, g_leaves, t_leaves, dtype)


REPRS = [
    lambda nn: nn.RNN(3, 4),
    lambda nn: nn.RNN(3, 4, 2, "relu", False, True, 0.5, True),
    lambda nn: nn.RNN(3, 4, dropout=1),
    lambda nn: nn.LSTM(3, 4, proj_size=2, num_layers=2),
    lambda nn: nn.LSTM(10, 20, bidirectional=True, batch_first=True),
    lambda nn: nn.GRU(3, 4, bias=False, dropout=0.25, num_layers=3),
    lambda nn: nn.RNNCell(3, 4),
    lambda nn: nn.RNNCell(3, 4, bias=False, nonlinearity="relu"),
    lambda nn: nn.LSTMCell(3, 4),
    lambda nn: nn.GRUCell(3, 4, bias=False),
    lambda nn: nn.Sequential(nn.GRU(3, 4), nn.LSTMCell(4, 5)),
]


@pytest.mark.filterwarnings("ignore:dropout option adds dropout")
@pytest.mark.parametrize("index", range(len(REPRS)))
def test_repr_matches_torch(index):
    assert repr(REPRS[index](gradiente.nn)) == repr(REPRS[index](torch.nn))


def test_dropout_between_layers_matches_torch():
    """In training, the dropout between layers draws the same numbers as PyTorch's for the same seed."""
    g_mod, t_mod = _pair(lambda nn: nn.GRU(3, 6, num_layers=3, dropout=0.4), "float64")
    rng = np.random.RandomState(0)
    g_leaves, t_leaves = _leaves(rng, [(5, 4, 3)], "float64")
    gradiente.manual_seed(11)
    torch.manual_seed(11)
    g_out, t_out = g_mod(g_leaves[0]), t_mod(t_leaves[0])
    for g, t in zip(g_out, t_out):
        _close(g, t, "float64")
    _backward(g_out, t_out, rng)
    _check_grads(g_mod, t_mod, g_leaves, t_leaves, "float64")
    g_mod.eval()
    t_mod.eval()
    _close(g_mod(g_leaves[0])[0], t_mod(t_leaves[0])[0], "float64")


def test_dropout_with_one_layer_warns():
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1, but got dropout=0.5 "
                                         "and num_layers=1"):
        gradiente.nn.LSTM(3, 4, dropout=0.5)


def test_gru_training_matches_torch():
    """A few SGD steps of a GRU and a linear head, predicting the running sum of a sequence, give PyTorch's
    losses for the same seed (parameters created with the same random numbers, not copied)."""
    rng = np.random.RandomState(0)
    x = rng.uniform(-1, 1, (8, 6, 2)).astype("float32")
    y = x.sum(axis=2, keepdims=True).cumsum(axis=1)

    def train(lib):
        lib.manual_seed(0)
        gru = lib.nn.GRU(2, 8, batch_first=True)
        head = lib.nn.Linear(8, 1)
        optimizer = lib.optim.SGD([*gru.parameters(), *head.parameters()], lr=0.1)
        inputs, targets = lib.from_numpy(x), lib.from_numpy(y)
        losses = []
        for _ in range(6):
            optimizer.zero_grad()
            loss = lib.nn.functional.mse_loss(head(gru(inputs)[0]), targets)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        return losses

    g_losses, t_losses = train(gradiente), train(torch)
    np.testing.assert_allclose(g_losses, t_losses, rtol=1e-5)
    assert g_losses[-1] < g_losses[0]


# --- packed sequences ------------------------------------------------------------------------------------
def _same_packed(g, t):
    assert isinstance(g, g_rnn.PackedSequence)
    np.testing.assert_array_equal(g.data.detach().numpy(), t.data.detach().numpy())
    np.testing.assert_array_equal(g.batch_sizes.numpy(), t.batch_sizes.numpy())
    assert g.batch_sizes.dtype is gradiente.int64
    for g_idx, t_idx in ((g.sorted_indices, t.sorted_indices), (g.unsorted_indices, t.unsorted_indices)):
        assert (g_idx is None) == (t_idx is None)
        if t_idx is not None:
            np.testing.assert_array_equal(g_idx.numpy(), t_idx.numpy())


def packed_data(*args, **kwargs):
    """``pack_padded_sequence(x, *args, **kwargs).data``, the packed values (PackPaddedSequenceBackward0)."""
    return lambda lib, x: lib.nn.utils.rnn.pack_padded_sequence(x, *args, **kwargs).data


PACKING_SPECS = [
    OpSpec("pack_padded_sequence", packed_data([3, 2, 2], batch_first=True), [((3, 4, 2),)]),
    OpSpec("pack_padded_sequence_unsorted", packed_data([2, 4, 1], enforce_sorted=False), [((4, 3),), ((4, 3, 2),)]),
    OpSpec("pad_packed_round_trip", lambda lib, x: lib.nn.utils.rnn.pad_packed_sequence(
        lib.nn.utils.rnn.pack_padded_sequence(x, [2, 4, 1], enforce_sorted=False), total_length=5)[0], [((4, 3, 2),)]),
]

test_gradcheck_packing, test_against_torch_packing, test_gradgradcheck_packing = spec_tests(PACKING_SPECS)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("lengths,enforce_sorted", [
    ([5, 3, 3, 1], True), ([2, 5, 2, 4], False), ([1, 1, 1, 1], True), ([3, 5, 3, 5], False),
])
def test_pack_pad_round_trip_matches_torch(lengths, enforce_sorted, batch_first):
    rng = np.random.RandomState(len(lengths))
    shape = (4, 5, 2) if batch_first else (5, 4, 2)
    g_leaves, t_leaves = _leaves(rng, [shape], "float64")
    g_packed = g_rnn.pack_padded_sequence(g_leaves[0], lengths, batch_first, enforce_sorted)
    t_packed = t_rnn.pack_padded_sequence(t_leaves[0], lengths, batch_first, enforce_sorted)
    _same_packed(g_packed, t_packed)
    assert repr(g_packed).replace("gradiente.", "torch.") == repr(t_packed)
    g_padded, g_lengths = g_rnn.pad_packed_sequence(g_packed, batch_first, padding_value=-2.0, total_length=6)
    t_padded, t_lengths = t_rnn.pad_packed_sequence(t_packed, batch_first, padding_value=-2.0, total_length=6)
    np.testing.assert_array_equal(g_padded.detach().numpy(), t_padded.detach().numpy())
    np.testing.assert_array_equal(g_lengths.numpy(), t_lengths.numpy())
    assert g_lengths.dtype is gradiente.int64
    _backward([g_padded], [t_padded], rng)
    _close(g_leaves[0].grad, t_leaves[0].grad, "float64")


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence_matches_torch(batch_first, padding_side):
    rng = np.random.RandomState(1)
    g_leaves, t_leaves = _leaves(rng, [(3, 2), (5, 2), (1, 2)], "float32")
    g_out = g_rnn.pad_sequence(g_leaves, batch_first, 0.5, padding_side)
    t_out = t_rnn.pad_sequence(t_leaves, batch_first, 0.5, padding_side)
    np.testing.assert_array_equal(g_out.detach().numpy(), t_out.detach().numpy())
    assert type(g_out.grad_fn).__name__ == type(t_out.grad_fn).__name__ == "CopySlices"
    _backward([g_out], [t_out], rng)
    for g, t in zip(g_leaves, t_leaves):
        _close(g.grad, t.grad, "float32")


def test_pad_sequence_takes_the_first_dtype():
    for make in (lambda lib: [lib.ones(2), lib.ones(3, dtype=lib.int64)],
                 lambda lib: [lib.tensor([1, 2]), lib.tensor([1.5, 2.5, 3.5])]):
        g_out, t_out = g_rnn.pad_sequence(make(gradiente)), t_rnn.pad_sequence(make(torch))
        assert str(g_out.dtype).split(".")[-1] == str(t_out.dtype).split(".")[-1]
        np.testing.assert_array_equal(g_out.numpy(), t_out.numpy())


def test_pack_and_unpack_sequence_match_torch():
    rng = np.random.RandomState(2)
    g_leaves, t_leaves = _leaves(rng, [(3, 2), (5, 2), (1, 2), (5, 2)], "float64")
    g_packed = g_rnn.pack_sequence(g_leaves, enforce_sorted=False)
    t_packed = t_rnn.pack_sequence(t_leaves, enforce_sorted=False)
    _same_packed(g_packed, t_packed)
    g_seqs, t_seqs = g_rnn.unpack_sequence(g_packed), t_rnn.unpack_sequence(t_packed)
    assert len(g_seqs) == len(t_seqs) == 4
    for g, t, original in zip(g_seqs, t_seqs, g_leaves):
        np.testing.assert_array_equal(g.detach().numpy(), t.detach().numpy())
        np.testing.assert_array_equal(g.detach().numpy(), original.detach().numpy())
    _backward(g_seqs, t_seqs, rng)
    for g, t in zip(g_leaves, t_leaves):
        _close(g.grad, t.grad, "float64")


@pytest.mark.parametrize("batch_first", [False, True])
def test_unpad_sequence_matches_torch(batch_first):
    rng = np.random.RandomState(3)
    padded = rng.standard_normal((3, 4, 2) if batch_first else (4, 3, 2))
    lengths = [4, 1, 3]
    g_padded = gradiente.from_numpy(padded.copy())
    g_seqs = g_rnn.unpad_sequence(g_padded, gradiente.tensor(lengths), batch_first)
    t_seqs = t_rnn.unpad_sequence(torch.from_numpy(padded.copy()), torch.tensor(lengths), batch_first)
    for g, t in zip(g_seqs, t_seqs):
        np.testing.assert_array_equal(g.numpy(), t.numpy())
    assert tuple(g_padded.shape) == padded.shape       # the input is left as it was (see the module docstring)


def test_packed_sequence_constructors_and_conversions():
    data, sizes = [1.0, 2.0, 3.0], [2, 1]
    for build in (lambda lib, R: R.PackedSequence(lib.tensor(data), lib.tensor(sizes)),
                  lambda lib, R: R.PackedSequence((lib.tensor(data), lib.tensor(sizes))),
                  lambda lib, R: R.PackedSequence(lib.tensor(data), lib.tensor(sizes), lib.tensor([1, 0]))):
        g, t = build(gradiente, g_rnn), build(torch, t_rnn)
        _same_packed(g, t)
        assert repr(g) == repr(t)
    g = g_rnn.PackedSequence(gradiente.tensor(data), gradiente.tensor(sizes))
    assert g.to(gradiente.float32) is g
    assert g.double().data.dtype is gradiente.float64 and g.long().data.dtype is gradiente.int64
    assert g.double().batch_sizes is g.batch_sizes
    assert g.is_cuda is False
    _, _, sorted_indices, unsorted_indices = g
    assert sorted_indices is None and unsorted_indices is None
    perm = [2, 0, 3, 1]
    np.testing.assert_array_equal(g_rnn.invert_permutation(gradiente.tensor(perm)).numpy(),
                                  t_rnn.invert_permutation(torch.tensor(perm)).numpy())
    assert g_rnn.invert_permutation(None) is None


PACKED_CASES = [
    ("RNN", {"num_layers": 2}), ("RNN", {"bidirectional": True, "nonlinearity": "relu"}),
    ("LSTM", {"num_layers": 2, "bidirectional": True}), ("LSTM", {"proj_size": 2, "bidirectional": True}),
    ("GRU", {"num_layers": 2, "bidirectional": True}), ("GRU", {"bias": False}),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("with_hx", [False, True])
@pytest.mark.parametrize("kind,options", PACKED_CASES, ids=[f"{k}-{o}" for k, o in PACKED_CASES])
def test_packed_input_matches_torch(kind, options, with_hx, dtype):
    """A packed, unsorted batch: the output is packed again, the states come back in the caller's order."""
    rng = np.random.RandomState(len(kind) + len(options))
    g_mod, t_mod = _pair(lambda nn: getattr(nn, kind)(INPUT, HIDDEN, **options), dtype)
    lengths = [3, 6, 1, 6]
    shapes = [(6, 4, INPUT)] + ([s[:1] + (4,) + s[2:] for s in _hidden_shapes(kind, options, True)]
                                if with_hx else [])
    g_leaves, t_leaves = _leaves(rng, shapes, dtype)

    def run(lib, R, mod, leaves):
        packed = R.pack_padded_sequence(leaves[0], lengths, enforce_sorted=False)
        hx = None
        if with_hx:
            hx = tuple(leaves[1:]) if kind == "LSTM" else leaves[1]
        output, hidden = mod(packed, hx)
        return output, hidden

    g_output, g_hidden = run(gradiente, g_rnn, g_mod, g_leaves)
    t_output, t_hidden = run(torch, t_rnn, t_mod, t_leaves)
    assert isinstance(g_output, g_rnn.PackedSequence)
    np.testing.assert_array_equal(g_output.batch_sizes.numpy(), t_output.batch_sizes.numpy())
    np.testing.assert_array_equal(g_output.unsorted_indices.numpy(), t_output.unsorted_indices.numpy())
    g_padded = g_rnn.pad_packed_sequence(g_output)[0]
    t_padded = t_rnn.pad_packed_sequence(t_output)[0]
    g_flat, t_flat = [g_padded] + _flatten(g_hidden), [t_padded] + _flatten(t_hidden)
    for i, (g, t) in enumerate(zip(g_flat, t_flat)):
        assert tuple(g.shape) == tuple(t.shape)
        _close(g, t, dtype, f"output {i}")
    _backward(g_flat, t_flat, rng)
    _check_grads(g_mod, t_mod, g_leaves, t_leaves, dtype)


def test_packed_dropout_matches_torch():
    g_mod, t_mod = _pair(lambda nn: nn.LSTM(3, 5, num_layers=2, dropout=0.5, bidirectional=True), "float64")
    rng = np.random.RandomState(4)
    g_leaves, t_leaves = _leaves(rng, [(4, 3, 3)], "float64")
    gradiente.manual_seed(5)
    torch.manual_seed(5)
    g_out = g_mod(g_rnn.pack_padded_sequence(g_leaves[0], [4, 2, 1]))
    t_out = t_mod(t_rnn.pack_padded_sequence(t_leaves[0], [4, 2, 1]))
    _close(g_out[0].data, t_out[0].data, "float64")
    _close(g_out[1][0], t_out[1][0], "float64")


# --- errors ----------------------------------------------------------------------------------------------
def _rnn_errors():
    def call(kind, x_shape, hx_shapes=None, x_dtype=None, hx_dtype=None, **options):
        def run(lib):
            mod = getattr(lib.nn, kind)(3, 4, **options)
            x = lib.zeros(x_shape, dtype=getattr(lib, x_dtype or "float32"))
            if hx_shapes is None:
                return mod(x)
            hx = [lib.zeros(s, dtype=getattr(lib, hx_dtype or "float32")) for s in hx_shapes]
            return mod(x, tuple(hx) if kind.startswith("LSTM") else hx[0])
        return run

    cases = []
    for kind in ("RNN", "GRU", "LSTM"):
        hx2 = [(1, 3, 4)] * (2 if kind == "LSTM" else 1)
        cases += [
            call(kind, (5, 2, 4)),
            call(kind, (5, 2, 3, 1)),
            call(kind, (5,)),
            call(kind, (5, 2, 3), x_dtype="float64"),
            call(kind, (5, 2, 3), hx2),
            call(kind, (5, 2, 3), [(2, 4)] * len(hx2)),
            call(kind, (5, 3), [(1, 2, 4)] * len(hx2)),
            call(kind, (5, 2, 3), [(2, 2, 4)] * len(hx2), num_layers=2, bidirectional=True),
            lambda lib, kind=kind: getattr(lib.nn, kind)(3, 4, foo=1),
            lambda lib, kind=kind: getattr(lib.nn, kind)(3, 4, dropout=2),
            lambda lib, kind=kind: getattr(lib.nn, kind)(3, 4, dropout=True),
            lambda lib, kind=kind: getattr(lib.nn, kind)(3, 4, bias=1),
            lambda lib, kind=kind: getattr(lib.nn, kind)(3, 4, batch_first=1),
            lambda lib, kind=kind: getattr(lib.nn, kind)(3.0, 4),
            lambda lib, kind=kind: getattr(lib.nn, kind)(0, 4),
            lambda lib, kind=kind: getattr(lib.nn, kind)(3, 4.0),
            lambda lib, kind=kind: getattr(lib.nn, kind)(3, 0),
            lambda lib, kind=kind: getattr(lib.nn, kind)(3, 4, 0),
        ]
    cases += [
        call("RNN", (5, 2, 3), [(1, 2, 4)], hx_dtype="float64"),
        call("GRU", (5, 2, 3), [(1, 2, 4)], hx_dtype="float64"),
        call("LSTM", (5, 2, 3), [(1, 3, 2), (1, 2, 4)], proj_size=2),
        call("LSTM", (5, 2, 3), [(1, 2, 2), (1, 2, 2)], proj_size=2),
        call("LSTM", (5, 2, 3), [(1, 2, 4), (2, 4)]),
        lambda lib: lib.nn.RNN(3, 4, proj_size=1),
        lambda lib: lib.nn.GRU(3, 4, proj_size=0),
        lambda lib: lib.nn.RNN(3, 4, nonlinearity="sigmoid"),
        lambda lib: lib.nn.LSTM(3, 4, nonlinearity="relu"),
        lambda lib: lib.nn.LSTM(3, 4, proj_size=-1),
        lambda lib: lib.nn.LSTM(3, 4, proj_size=4),
        lambda lib: lib.nn.RNN(3, 4)(lib.nn.utils.rnn.pack_sequence([lib.zeros(2, 4), lib.zeros(1, 4)])),
        lambda lib: lib.nn.GRU(3, 4)(lib.nn.utils.rnn.pack_sequence([lib.zeros(2, 3), lib.zeros(1, 3)]),
                                     lib.zeros(1, 3, 4)),
    ]
    return cases


def _cell_errors():
    def call(kind, x_shape, hx_shapes=None, x_dtype="float32", hx_dtype="float32", **options):
        def run(lib):
            mod = getattr(lib.nn, kind)(3, 4, **options)
            x = lib.zeros(x_shape, dtype=getattr(lib, x_dtype))
            if hx_shapes is None:
                return mod(x)
            hx = [lib.zeros(s, dtype=getattr(lib, hx_dtype)) for s in hx_shapes]
            return mod(x, tuple(hx) if kind == "LSTMCell" else hx[0])
        return run

    cases = []
    for kind in ("RNNCell", "GRUCell", "LSTMCell"):
        n = 2 if kind == "LSTMCell" else 1
        cases += [
            call(kind, (2, 4)),
            call(kind, (2, 3, 3)),
            call(kind, (2, 3), [(2, 5)] * n),
            call(kind, (2, 3), [(3, 4)] * n),
            call(kind, (3,), [(2, 4)] * n),
            call(kind, (2, 3), [(2, 2, 4)] * n),
            call(kind, (2, 3), x_dtype="float64"),
            call(kind, (2, 3), [(2, 4)] * n, hx_dtype="float64"),
        ]
    cases += [
        call("LSTMCell", (2, 3), [(2, 4), (2, 5)]),
        call("LSTMCell", (2, 3), [(2, 4), (3, 4)]),
        call("RNNCell", (2, 3), nonlinearity="sigmoid"),
    ]
    return cases


def _packing_errors():
    R = "nn.utils.rnn"

    def utils(lib):
        module = lib
        for part in R.split("."):
            module = getattr(module, part)
        return module

    return [
        lambda lib: utils(lib).pack_padded_sequence(lib.zeros(4, 3), [2, 3, 1]),
        lambda lib: utils(lib).pack_padded_sequence(lib.zeros(4, 3), [3, 2]),
        lambda lib: utils(lib).pack_padded_sequence(lib.zeros(4, 3), [3, 0, 0]),
        lambda lib: utils(lib).pack_padded_sequence(lib.zeros(4, 3), lib.tensor([[3, 2, 1]])),
        lambda lib: utils(lib).pack_padded_sequence(lib.zeros(0, 2), [1, 1]),
        lambda lib: utils(lib).pack_padded_sequence(lib.zeros(4), [4]),
        lambda lib: utils(lib).pack_sequence([lib.zeros(3), lib.zeros(4)]),
        lambda lib: utils(lib).pad_packed_sequence(utils(lib).pack_sequence([lib.zeros(4), lib.zeros(3)]),
                                                   total_length=2),
        lambda lib: utils(lib).pad_sequence([]),
        lambda lib: utils(lib).pad_sequence(5),
        lambda lib: utils(lib).pad_sequence([lib.zeros(2), lib.zeros(3)], padding_side="middle"),
        lambda lib: utils(lib).PackedSequence(lib.zeros(3)),
    ]


ERRORS = _rnn_errors() + _cell_errors() + _packing_errors()


@pytest.mark.filterwarnings("ignore:dropout option adds dropout")
@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_errors_match_torch(index):
    make = ERRORS[index]
    with pytest.raises(Exception) as t_info:
        make(torch)
    with pytest.raises(Exception) as g_info:
        make(gradiente)
    assert g_info.type is t_info.type
    assert str(g_info.value).replace("gradiente.", "torch.") == str(t_info.value)


# --- module plumbing -------------------------------------------------------------------------------------
def test_module_conversions_and_state_dict():
    lstm = gradiente.nn.LSTM(3, 4, num_layers=2, proj_size=2)
    same = [id(p) for p in lstm.parameters()]
    lstm.double()
    assert [id(p) for p in lstm.parameters()] == same
    assert all(w.dtype is gradiente.float64 for w in lstm._flat_weights)
    output, (h, c) = lstm(gradiente.zeros(5, 2, 3, dtype=gradiente.float64))
    assert output.dtype is h.dtype is c.dtype is gradiente.float64
    copy = gradiente.nn.LSTM(3, 4, num_layers=2, proj_size=2, dtype=gradiente.float64)
    copy.load_state_dict(lstm.state_dict())
    x = gradiente.randn(5, 2, 3, dtype=gradiente.float64)
    np.testing.assert_array_equal(copy(x)[0].detach().numpy(), lstm(x)[0].detach().numpy())
    assert not hasattr(gradiente.nn.GRU(3, 4, bias=False), "bias_ih_l0")
    gradiente.nn.GRU(3, 4).flatten_parameters()


def test_zero_initial_state_is_the_default():
    gru = gradiente.nn.GRU(3, 4, num_layers=2, bidirectional=True)
    x = gradiente.randn(5, 2, 3)
    default, given = gru(x), gru(x, gradiente.zeros(4, 2, 4))
    for d, g in zip(default, given):
        np.testing.assert_array_equal(d.detach().numpy(), g.detach().numpy())


def test_no_warnings_in_forward():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for mod in (gradiente.nn.RNN(3, 4), gradiente.nn.LSTM(3, 4), gradiente.nn.GRU(3, 4)):
            mod(gradiente.randn(2, 1, 3))


# --- the float32 LSTM layer as one node (PyTorch's CPU kernel: MkldnnRnnLayerBackward0) -----------------------

def _graph_names(t, depth=3):
    """The node names of ``t``'s graph, breadth first to ``depth`` levels."""
    names, level = [], [t.grad_fn]
    for _ in range(depth):
        names.append(sorted(type(n).__name__ for n in level if n is not None))
        level = [m for n in level if n is not None for m, _ in n.next_functions]
    return names


LSTM_CASES = [{}, {"num_layers": 2, "bidirectional": True, "batch_first": True}, {"bias": False},
              {"num_layers": 2, "dropout": 0.0}, {"proj_size": 2}]


@pytest.mark.parametrize("options", LSTM_CASES, ids=["plain", "two_bidirectional_batch_first", "no_bias",
                                                     "two_layers", "projections"])
def test_float32_lstm_layers_match_pytorch(options):
    """Values, gradients of input, states and weights, and the graph's node names (one MkldnnRnnLayerBackward0 per
    layer and direction; with projections PyTorch takes its step-by-step path, and so does gradiente)."""
    results = []
    for lib in (gradiente, torch):
        lib.manual_seed(0)
        lstm = lib.nn.LSTM(3, 4, **options)
        rng = np.random.RandomState(0)
        batch_first = options.get("batch_first", False)
        x = lib.tensor(rng.randn(2, 5, 3) if batch_first else rng.randn(5, 2, 3), dtype=lib.float32,
                       requires_grad=True)
        out, (h, c) = lstm(x)
        weight = lib.tensor(rng.randn(*out.shape), dtype=lib.float32)
        ((out * weight).sum() + h.sum() * 2 + c.sum() * 3).backward()
        arrays = [out, h, c, x.grad] + [p.grad for p in lstm.parameters()]
        results.append((_graph_names(out), _graph_names(h), [a.detach().numpy() for a in arrays]))
    assert results[0][:2] == results[1][:2]
    for ours, theirs in zip(results[0][2], results[1][2]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kind,options", [("LSTM", {}), ("GRU", {"bidirectional": True})])
def test_layer_node_second_derivatives_match_pytorch(kind, options):
    """The float32 layer nodes (LSTM's MkldnnRnnLayerBackward0, GRU's GruSequenceBackward0) under create_graph."""
    results = []
    for lib in (gradiente, torch):
        lib.manual_seed(0)
        layer = getattr(lib.nn, kind)(3, 4, num_layers=2, **options)
        x = lib.tensor(np.random.RandomState(1).randn(5, 2, 3), dtype=lib.float32, requires_grad=True)
        out, _ = layer(x)
        g, = lib.autograd.grad((out * out).sum(), x, create_graph=True)
        gg, = lib.autograd.grad((g * g).sum(), x)
        results.append((g.detach().numpy(), gg.numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("reverse", [False, True])
def test_lstm_layer_node_gradcheck_in_float64(reverse):
    """The node's rule (backpropagation through time) against finite differences, and its second derivatives."""
    from gradiente.ops.nn.recurrent import lstm_layer
    rng = np.random.RandomState(2)
    shapes = [(4, 2, 3), (2, 5), (2, 5), (20, 3), (20, 5), (20,), (20,)]
    inputs = [gradiente.tensor(rng.randn(*s) * 0.5, dtype=gradiente.float64, requires_grad=True) for s in shapes]

    def layer(x, h0, c0, w_ih, w_hh, b_ih, b_hh):
        return lstm_layer(x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse=reverse)

    assert layer(*inputs)[0].grad_fn.name() == "MkldnnRnnLayerBackward0"
    assert gradiente.autograd.gradcheck(layer, inputs)
    assert gradiente.autograd.gradgradcheck(layer, inputs)
