"""PyTorch's torch-level (ATen-level) neural-network functions against PyTorch: the functional recurrences
(torch.lstm, gru, rnn_tanh, rnn_relu, padded and packed, and their *_cell steps), torch.convolution,
conv_transpose3d, conv_tbc (also F.conv_tbc), max_pool3d, affine_grid_generator, grid_sampler(_2d/_3d),
embedding_renorm_, native_batch_norm, native_layer_norm, native_group_norm, native_dropout and
F.native_channel_shuffle: values, returned tuples, gradients, node names, float64 gradcheck and errors."""
import numpy as np
import pytest
from harness import OpSpec, check_same_error, spec_tests

import gradiente

torch = pytest.importorskip("torch")

_GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}


def _weight_shapes(mode, input_size, hidden, layers=1, bidirectional=False, bias=True, proj=0):
    """The flat parameter list's shapes, per layer and direction ``w_ih, w_hh[, b_ih, b_hh][, w_hr]``."""
    directions = 2 if bidirectional else 1
    gates = _GATES[mode] * hidden
    h_size = proj or hidden
    shapes = []
    for layer in range(layers):
        width = input_size if layer == 0 else h_size * directions
        for _ in range(directions):
            shapes += [(gates, width), (gates, h_size)]
            if bias:
                shapes += [(gates,), (gates,)]
            if proj:
                shapes.append((proj, hidden))
    return shapes


def _flat(lib, outputs):
    """All of a function's outputs as one vector, so that a check differentiates through every one."""
    return lib.cat([o.reshape(-1) for o in outputs])


def _sequence_spec(name, mode, seq_shape, input_size, hidden, layers=1, bidirectional=False, bias=True, proj=0,
                   batch_first=False):
    """A padded-sequence call of ``torch.<mode>``: inputs (x, h0[, c0], *params)."""
    directions = 2 if bidirectional else 1
    batch = seq_shape[0] if batch_first else seq_shape[1]
    states = [(layers * directions, batch, proj or hidden)]
    if mode == "lstm":
        states.append((layers * directions, batch, hidden))
    weights = _weight_shapes(mode, input_size, hidden, layers, bidirectional, bias, proj)

    def fn(lib, x, *rest):
        hx = tuple(rest[:len(states)]) if mode == "lstm" else rest[0]
        params = list(rest[len(states):])
        out = getattr(lib, mode)(x, hx, params, bias, layers, 0.0, True, bidirectional, batch_first)
        return _flat(lib, out)
    return OpSpec(name, fn, [(seq_shape, *states, *weights)], domain=(-1.0, 1.0))


_BATCH_SIZES = [3, 2, 2, 1]     # a packed batch of three sequences, of lengths 4, 3, 1


def _packed_spec(name, mode, input_size, hidden, layers=1, bidirectional=False):
    """A packed-sequence call: ``torch.<mode>(data, batch_sizes, hx, params, ...)``."""
    directions = 2 if bidirectional else 1
    states = [(layers * directions, 3, hidden)] * (2 if mode == "lstm" else 1)
    weights = _weight_shapes(mode, input_size, hidden, layers, bidirectional)

    def fn(lib, data, *rest):
        hx = tuple(rest[:len(states)]) if mode == "lstm" else rest[0]
        out = getattr(lib, mode)(data, lib.tensor(_BATCH_SIZES), hx, list(rest[len(states):]), True, layers, 0.0,
                                 True, bidirectional)
        return _flat(lib, out)
    return OpSpec(name, fn, [((sum(_BATCH_SIZES), input_size), *states, *weights)], domain=(-1.0, 1.0))


def _cell_spec(name, mode, bias=True):
    states = [(2, 4)] * (2 if mode == "lstm" else 1)
    weights = [(_GATES[mode] * 4, 3), (_GATES[mode] * 4, 4)] + ([(_GATES[mode] * 4,)] * 2 if bias else [])

    def fn(lib, x, *rest):
        hx = tuple(rest[:len(states)]) if mode == "lstm" else rest[0]
        out = getattr(lib, f"{mode}_cell")(x, hx, *rest[len(states):])
        return _flat(lib, out) if mode == "lstm" else out
    return OpSpec(name, fn, [((2, 3), *states, *weights)], domain=(-1.0, 1.0))


RECURRENT = [      # small sizes: the second-derivative check perturbs every weight
    _sequence_spec("lstm", "lstm", (4, 2, 3), 3, 3),
    _sequence_spec("lstm_batch_first_no_bias", "lstm", (2, 3, 2), 2, 3, bias=False, batch_first=True),
    _sequence_spec("gru_batch_first", "gru", (2, 3, 2), 2, 3, batch_first=True),
    _sequence_spec("rnn_tanh", "rnn_tanh", (4, 2, 3), 3, 3, layers=2),
    _sequence_spec("rnn_relu_bidirectional_no_bias", "rnn_relu", (4, 2, 3), 3, 3, bidirectional=True, bias=False),
    _packed_spec("rnn_tanh_packed", "rnn_tanh", 3, 3),
    _cell_spec("lstm_cell", "lstm"),
    _cell_spec("lstm_cell_no_bias", "lstm", bias=False),
    _cell_spec("gru_cell", "gru"),
    _cell_spec("rnn_tanh_cell", "rnn_tanh"),
    _cell_spec("rnn_relu_cell_no_bias", "rnn_relu", bias=False),
]

# stacked, bidirectional, projected and packed LSTMs and GRUs: first derivatives (their steps' second derivatives are
# those above, and a gradgradcheck of every weight of two layers in two directions takes minutes)
RECURRENT_FIRST_ORDER = [
    _sequence_spec("lstm_2_layers_bidirectional", "lstm", (3, 1, 2), 2, 2, layers=2, bidirectional=True),
    _sequence_spec("lstm_projection", "lstm", (3, 2, 2), 2, 3, proj=2, bidirectional=True),
    _sequence_spec("gru_2_layers_bidirectional", "gru", (3, 1, 2), 2, 2, layers=2, bidirectional=True),
    _packed_spec("lstm_packed_bidirectional", "lstm", 2, 2, bidirectional=True),
    _packed_spec("gru_packed_2_layers", "gru", 2, 2, layers=2),
]


def _conv(transposed, stride, padding, dilation, output_padding, groups):
    def fn(lib, x, w, b):
        return lib.convolution(x, w, b, stride, padding, dilation, transposed, output_padding, groups)
    return fn


def _native_norm(which):
    calls = {
        "batch_norm": lambda lib, x, w, b: lib.native_batch_norm(x, w, b, None, None, True, 0.1, 1e-5),
        "layer_norm": lambda lib, x, w, b: lib.native_layer_norm(x, [3, 4], w, b, 1e-5),
        "group_norm": lambda lib, x, w, b: lib.native_group_norm(x, w, b, 2, 4, 6, 2, 1e-5),
    }
    return calls[which]


LAYERS = [
    OpSpec("convolution_2d", _conv(False, [2, 1], [1, 0], [1, 2], [0, 0], 2), [((2, 4, 6, 7), (6, 2, 3, 2), (6,))]),
    OpSpec("convolution_1d_one_value", _conv(False, [1], [1], [1], [0], 1), [((2, 3, 6), (4, 3, 3), (4,))]),
    OpSpec("convolution_transposed_2d", _conv(True, [2, 2], [1, 0], [1, 1], [1, 0], 1),
           [((2, 3, 3, 4), (3, 2, 3, 2), (2,))]),
    OpSpec("convolution_3d", _conv(False, [1, 1, 1], [0, 1, 0], [1, 1, 1], [0, 0, 0], 1),
           [((1, 2, 3, 4, 3), (3, 2, 2, 2, 2), (3,))]),
    OpSpec("conv_transpose3d", lambda lib, x, w, b: lib.conv_transpose3d(x, w, b, 2, 1, 1),
           [((1, 2, 2, 3, 2), (2, 3, 2, 2, 2), (3,))]),
    OpSpec("conv_tbc", lambda lib, x, w, b: lib.conv_tbc(x, w, b, 1), [((5, 2, 3), (3, 3, 4), (4,))]),
    OpSpec("functional_conv_tbc", lambda lib, x, w, b: lib.nn.functional.conv_tbc(x, w, b),
           [((6, 3, 2), (2, 2, 3), (3,))]),
    OpSpec("max_pool3d", lambda lib, x: lib.max_pool3d(x, 2), [((1, 2, 4, 4, 4),)]),
    OpSpec("max_pool3d_strided", lambda lib, x: lib.max_pool3d(x, [3, 2, 2], [1, 2, 1], 1, 1, True),
           [((2, 1, 4, 5, 4),)]),
    OpSpec("affine_grid_generator", lambda lib, t: lib.affine_grid_generator(t, [2, 1, 4, 5], False), [((2, 2, 3),)]),
    OpSpec("affine_grid_generator_3d", lambda lib, t: lib.affine_grid_generator(t, [1, 1, 2, 3, 4], True),
           [((1, 3, 4),)]),
    # (native_dropout in training draws at random: its own tests below, not a table row, which vmap's tests would
    # run per example with different draws)
    OpSpec("native_dropout_eval", lambda lib, x: lib.native_dropout(x, 0.3, False), [((3, 4),)]),
    OpSpec("native_batch_norm", _native_norm("batch_norm"), [((3, 4, 2, 3), (4,), (4,))]),
    OpSpec("native_layer_norm", _native_norm("layer_norm"), [((2, 5, 3, 4), (3, 4), (3, 4))]),
    # PyTorch's native_group_norm takes contiguous inputs only
    OpSpec("native_group_norm", _native_norm("group_norm"), [((2, 4, 2, 3), (4,), (4,))],
           extra={"contiguous_only": True}),
]


def _image_and_grid(rng, shapes):
    """An image, then sampling positions reaching a little past the border (so padding matters)."""
    return [rng.uniform(-2, 2, shapes[0]), rng.uniform(-1.25, 1.25, shapes[1])]


def _sampler(name, mode, padding, corners):
    return lambda lib, x, g: getattr(lib, name)(x, g, mode, padding, corners)


# grid sampling has first derivatives only (as grid_sample)
FIRST_ORDER = [
    OpSpec(f"grid_sampler_mode{mode}_padding{padding}", _sampler("grid_sampler", mode, padding, mode == 2),
           [((1, 2, 3, 4), (1, 2, 3, 2))], make_inputs=_image_and_grid)
    for mode in (0, 1, 2) for padding in (0, 1, 2)
] + [
    OpSpec("grid_sampler_2d", _sampler("grid_sampler_2d", 0, 2, False), [((1, 2, 3, 4), (1, 2, 3, 2))],
           make_inputs=_image_and_grid),
    OpSpec("grid_sampler_3d", _sampler("grid_sampler_3d", 0, 1, True), [((1, 2, 3, 4, 2), (1, 2, 3, 2, 3))],
           make_inputs=_image_and_grid),
    OpSpec("grid_sampler_volume", _sampler("grid_sampler", 1, 0, False), [((1, 2, 3, 4, 2), (1, 2, 3, 2, 3))],
           make_inputs=_image_and_grid),
]

test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(RECURRENT + LAYERS)
test_gradcheck_first_order, test_against_torch_first_order, _ = spec_tests(FIRST_ORDER + RECURRENT_FIRST_ORDER)


# --- the recurrences: every output, its node, and the packed and dropout forms ---------------------------------

def _both(fn):
    """``fn(lib)`` in gradiente and PyTorch, from the same seed."""
    results = []
    for lib in (gradiente, torch):
        lib.manual_seed(0)
        results.append(fn(lib))
    return results


def _assert_same_outputs(ours, theirs, rtol=1e-6, atol=1e-7):
    """The same tuple (or tensor): types, length, shapes, dtypes, values and node names."""
    assert type(ours).__name__ == type(theirs).__name__
    if isinstance(theirs, torch.Tensor):
        ours, theirs = (ours,), (theirs,)
    assert len(ours) == len(theirs)
    for g, t in zip(ours, theirs):
        assert tuple(g.shape) == tuple(t.shape)
        assert str(g.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol)
        assert (g.grad_fn is None) == (t.grad_fn is None)
        if t.grad_fn is not None:
            assert type(g.grad_fn).__name__ == type(t.grad_fn).__name__


def _module_call(mode, dtype, **options):
    """``torch.<mode>`` on a module's own weights and a random input, as the module would call it."""
    layers = options.pop("num_layers", 1)
    bidirectional = options.pop("bidirectional", False)
    packed = options.pop("packed", False)

    def fn(lib):
        cls = {"lstm": lib.nn.LSTM, "gru": lib.nn.GRU, "rnn_tanh": lib.nn.RNN, "rnn_relu": lib.nn.RNN}[mode]
        extra = {"nonlinearity": "relu"} if mode == "rnn_relu" else {}
        module = cls(3, 4, layers, bidirectional=bidirectional, dtype=dtype(lib), **extra, **options)
        x = lib.randn(4, 3, 3, dtype=dtype(lib), requires_grad=True)
        h = lib.randn(layers * (2 if bidirectional else 1), 3, module.proj_size or 4, dtype=dtype(lib))
        hx = (h, lib.randn(h.shape[0], 3, 4, dtype=dtype(lib))) if mode == "lstm" else h
        if packed:
            data = x.reshape(12, 3)[:8]
            return getattr(lib, mode)(data, lib.tensor([3, 2, 2, 1]), hx, module._flat_weights, True, layers, 0.0,
                                      True, bidirectional)
        return getattr(lib, mode)(x, hx, module._flat_weights, module.bias, layers, 0.0, True, bidirectional,
                                  False)
    return fn


def _float32(lib):
    return lib.float32


def _float64(lib):
    return lib.float64


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
@pytest.mark.parametrize("dtype", [_float32, _float64], ids=["float32", "float64"])
@pytest.mark.parametrize("options", [{}, {"num_layers": 2, "bidirectional": True}, {"packed": True},
                                     {"bias": False}], ids=["plain", "stacked", "packed", "no_bias"])
def test_sequence_outputs_and_nodes_match_torch(mode, dtype, options):
    ours, theirs = _both(_module_call(mode, dtype, **options))
    _assert_same_outputs(ours, theirs, rtol=1e-5, atol=1e-6)


def test_lstm_projection_outputs_match_torch():
    ours, theirs = _both(_module_call("lstm", _float32, proj_size=2))
    _assert_same_outputs(ours, theirs, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh"])
def test_dropout_between_layers_draws_torchs_mask(mode):
    def fn(lib):
        module = {"lstm": lib.nn.LSTM, "gru": lib.nn.GRU, "rnn_tanh": lib.nn.RNN}[mode](3, 4, 3, dtype=lib.float64)
        x = lib.randn(5, 2, 3, dtype=lib.float64)
        h = lib.zeros(3, 2, 4, dtype=lib.float64)
        hx = (h, h) if mode == "lstm" else h
        lib.manual_seed(7)
        return getattr(lib, mode)(x, hx, module._flat_weights, True, 3, 0.5, True, False, False)
    ours, theirs = _both(fn)
    _assert_same_outputs(ours, theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
def test_cells_return_torchs_results(mode):
    def fn(lib):
        w_ih = lib.randn(_GATES[mode] * 4, 3, requires_grad=True)
        w_hh = lib.randn(_GATES[mode] * 4, 4, requires_grad=True)
        x, h = lib.randn(2, 3), lib.randn(2, 4)
        hx = (h, lib.randn(2, 4)) if mode == "lstm" else h
        return getattr(lib, f"{mode}_cell")(x, hx, w_ih, w_hh)
    ours, theirs = _both(fn)
    _assert_same_outputs(ours, theirs)


def test_the_functional_lstm_is_the_modules():
    gradiente.manual_seed(0)
    module = gradiente.nn.LSTM(3, 4, 2, bidirectional=True, batch_first=True)
    x = gradiente.randn(2, 5, 3)
    out, (h, c) = module(x)
    hx = (gradiente.zeros(4, 2, 4), gradiente.zeros(4, 2, 4))
    same = gradiente.lstm(x, hx, module._flat_weights, True, 2, 0.0, True, True, True)
    for a, b in zip((out, h, c), same):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


_LSTM_WEIGHTS = [(16, 3), (16, 4), (16,), (16,)]


def _lstm_args(lib, params=4, states=2):
    weights = [lib.zeros(*s) for s in _LSTM_WEIGHTS][:params]
    return lib.zeros(5, 2, 3), tuple(lib.zeros(1, 2, 4) for _ in range(states)), weights


@pytest.mark.parametrize("call", [
    lambda lib: lib.lstm(*_lstm_args(lib, params=3), True, 1, 0.0, True, False, False),
    lambda lib: lib.lstm(*_lstm_args(lib, states=1), True, 1, 0.0, True, False, False),
    lambda lib: lib.lstm_cell(lib.zeros(2, 3), (lib.zeros(2, 4),), lib.zeros(16, 3), lib.zeros(16, 4)),
    lambda lib: lib.lstm_cell(lib.zeros(2, 2), (lib.zeros(2, 4),) * 2, lib.zeros(16, 3), lib.zeros(16, 4)),
    lambda lib: lib.gru_cell(lib.zeros(2, 3), lib.zeros(1, 4), lib.zeros(12, 3), lib.zeros(12, 4)),
    lambda lib: lib.rnn_tanh_cell(lib.zeros(2, 3), lib.zeros(2, 5), lib.zeros(4, 3), lib.zeros(4, 4)),
    lambda lib: lib.lstm_cell(lib.zeros(3), (lib.zeros(4),) * 2, lib.zeros(16, 3), lib.zeros(16, 4)),
    lambda lib: lib.gru_cell(lib.zeros(2, 3), lib.zeros(4), lib.zeros(12, 3), lib.zeros(12, 4)),
    lambda lib: lib.gru_cell(lib.zeros(2, 3), lib.zeros(2), lib.zeros(12, 3), lib.zeros(12, 4)),
], ids=["params_count", "lstm_one_state", "cell_one_state", "cell_input_size", "cell_batch", "cell_hidden_size",
        "cell_unbatched", "cell_unbatched_state", "cell_unbatched_state_of_batch_size"])
def test_recurrence_errors_match_torch(call):
    check_same_error(call)


# --- the norms' statistics, dropout's mask --------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [_float32, _float64], ids=["float32", "float64"])
@pytest.mark.parametrize("call", [
    lambda lib, x, w, b: lib.native_batch_norm(x, w, b, None, None, True, 0.1, 1e-5),
    lambda lib, x, w, b: lib.native_batch_norm(x, None, None, None, None, True, 0.1, 1e-3),
    lambda lib, x, w, b: lib.native_batch_norm(x, w, b, lib.zeros(4, dtype=x.dtype), lib.ones(4, dtype=x.dtype),
                                               False, 0.1, 1e-5),
    lambda lib, x, w, b: lib.native_layer_norm(x, [3, 5], w.repeat(15)[:15].reshape(3, 5), None, 1e-5),
    lambda lib, x, w, b: lib.native_layer_norm(x, [5], None, None, 1e-5),
    lambda lib, x, w, b: lib.native_group_norm(x, w, b, 2, 4, 15, 2, 1e-5),
    lambda lib, x, w, b: lib.native_group_norm(x, None, None, 2, 4, 15, 4, 1e-5),
], ids=["batch_training", "batch_no_affine", "batch_eval", "layer", "layer_last_dim", "group", "group_per_channel"])
def test_native_norms_return_torchs_statistics(call, dtype):
    def fn(lib):
        x = lib.randn(2, 4, 3, 5, dtype=dtype(lib), requires_grad=True)
        w = lib.randn(4, dtype=dtype(lib), requires_grad=True)
        b = lib.randn(4, dtype=dtype(lib), requires_grad=True)
        return call(lib, x, w, b)
    ours, theirs = _both(fn)
    _assert_same_outputs(ours, theirs, rtol=1e-5, atol=1e-6)


def test_native_batch_norm_updates_the_running_statistics():
    def fn(lib):
        x = lib.randn(3, 4, 5, dtype=lib.float64)
        mean, var = lib.zeros(4, dtype=lib.float64), lib.ones(4, dtype=lib.float64)
        lib.native_batch_norm(x, None, None, mean, var, True, 0.3, 1e-5)
        return mean, var
    ours, theirs = _both(fn)
    _assert_same_outputs(ours, theirs, rtol=1e-12)


def test_group_norms_statistics_carry_gradients():
    """native_group_norm's mean and rstd are outputs of its node: a loss that reads them differentiates them."""
    def fn(lib):
        x = lib.randn(2, 4, 3, dtype=lib.float64, requires_grad=True)
        w = lib.randn(4, dtype=lib.float64, requires_grad=True)
        out, mean, rstd = lib.native_group_norm(x, w, None, 2, 4, 3, 2, 1e-5)
        (out.sin().sum() + (mean * lib.arange(4.0, dtype=lib.float64).reshape(2, 2)).sum() + rstd.pow(2).sum()
         ).backward()
        return x.grad, w.grad
    ours, theirs = _both(fn)
    _assert_same_outputs(ours, theirs, rtol=1e-10, atol=1e-12)

    def stats(x):
        return gradiente.native_group_norm(x, None, None, 2, 4, 3, 2, 1e-5)
    x = gradiente.randn(2, 4, 3, dtype=gradiente.float64, requires_grad=True)
    assert gradiente.autograd.gradcheck(stats, (x,))
    assert gradiente.autograd.gradgradcheck(stats, (x,))


@pytest.mark.parametrize("p,train", [(0.3, True), (0.0, True), (1.0, True), (0.5, False), (0.4, None)])
def test_native_dropout_draws_torchs_mask(p, train):
    def fn(lib):
        x = lib.randn(4, 6, requires_grad=True)
        out, mask = lib.native_dropout(x, p, train)
        out.backward(lib.arange(24.0).reshape(4, 6))
        return out, mask, x.grad
    ours, theirs = _both(fn)
    _assert_same_outputs(ours, theirs)


def test_native_dropout_gradcheck():
    x = gradiente.randn(3, 5, dtype=gradiente.float64, requires_grad=True)

    def dropped(x):
        gradiente.manual_seed(3)        # the same mask on every call of the check
        return gradiente.native_dropout(x, 0.4, True)[0]
    assert gradiente.autograd.gradcheck(dropped, (x,))
    assert gradiente.autograd.gradgradcheck(dropped, (x,))


def test_native_channel_shuffle_in_functional():
    x = np.arange(2 * 6 * 2.0).reshape(2, 6, 2)
    ours = gradiente.nn.functional.native_channel_shuffle(gradiente.tensor(x), 3)
    theirs = torch.nn.functional.native_channel_shuffle(torch.tensor(x), 3)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


# --- embedding_renorm_ ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.5])
def test_embedding_renorm_scales_torchs_rows_in_place(norm_type):
    def fn(lib):
        weight = lib.randn(6, 3, dtype=lib.float64) * 3
        result = lib.embedding_renorm_(weight, lib.tensor([[0, 2], [2, 5]]), 1.5, norm_type)
        assert result is weight
        return weight
    ours, theirs = _both(fn)
    _assert_same_outputs(ours, theirs, rtol=1e-12)


def test_embedding_renorm_of_a_tensor_that_requires_grad_records_torchs_node():
    def fn(lib):
        weight = lib.randn(5, 3, dtype=lib.float64, requires_grad=True) * 3
        lib.embedding_renorm_(weight, lib.tensor([0, 1]), 1.0, 2.0)
        return weight
    ours, theirs = _both(fn)
    _assert_same_outputs(ours, theirs, rtol=1e-12)
    assert ours._version == theirs._version
    check_same_error(lambda lib: fn(lib).sum().backward())


# --- errors ----------------------------------------------------------------------------------------------------

def _image(lib, shape=(2, 3, 5, 5)):
    return lib.zeros(*shape)


@pytest.mark.parametrize("call", [
    lambda lib: lib.convolution(_image(lib, (3, 5, 5)), lib.zeros(4, 3, 3, 3), None, [1, 1], [0, 0], [1, 1], False,
                                [0, 0], 1),
    lambda lib: lib.convolution(_image(lib), lib.zeros(4, 3, 3, 3), None, [1, 1], [0, 0], [1, 1], False, [0, 0], 2),
    lambda lib: lib.convolution(_image(lib), lib.zeros(4, 3, 3, 3), None, 1, [0, 0], [1, 1], False, [0, 0], 1),
    lambda lib: lib.convolution(_image(lib), lib.zeros(4, 3, 3, 3), None, [1, 1], "same", [1, 1], False, [0, 0], 1),
    lambda lib: lib.conv_tbc(lib.zeros(5, 2, 3), lib.zeros(3, 2, 4), lib.zeros(4), 1),
    lambda lib: lib.conv_tbc(lib.zeros(5, 2), lib.zeros(3, 3, 4), lib.zeros(4), 1),
    lambda lib: lib.conv_tbc(lib.zeros(5, 2, 3), lib.zeros(3, 3, 4), lib.zeros(3), 1),
    lambda lib: lib.conv_tbc(lib.zeros(5, 2, 3), lib.zeros(3, 3), lib.zeros(3), 1),
    lambda lib: lib.grid_sampler_3d(_image(lib), lib.zeros(2, 4, 5, 2), 0, 0, True),
    lambda lib: lib.grid_sampler_2d(lib.zeros(1, 2, 3, 3, 3), lib.zeros(1, 2, 2, 2, 3), 0, 0, True),
    lambda lib: lib.grid_sampler(lib.zeros(1, 2, 3, 3, 3), lib.zeros(1, 2, 2, 2, 3), 2, 0, True),
    lambda lib: lib.affine_grid_generator(lib.zeros(2, 3, 4), [2, 1, 4, 5], True),
    lambda lib: lib.embedding_renorm_(lib.zeros(5, 3), lib.tensor([0.0, 1.0]), 1.0, 2.0),
    lambda lib: lib.embedding_renorm_(lib.zeros(5), lib.tensor([0, 1]), 1.0, 2.0),
    lambda lib: lib.embedding_renorm_(lib.zeros(5, 3, requires_grad=True), lib.tensor([0, 1]), 1.0, 2.0),
    lambda lib: lib.native_dropout(lib.zeros(3), 1.5, True),
    lambda lib: lib.native_group_norm(lib.zeros(2, 4, 6).transpose(1, 2), None, None, 2, 6, 4, 2, 1e-5),
], ids=["conv_rank", "conv_groups", "conv_int_stride", "conv_str_padding", "tbc_channels", "tbc_input_rank",
        "tbc_bias", "tbc_weight_rank", "sampler_3d_of_image", "sampler_2d_of_volume", "sampler_bicubic_volume",
        "affine_theta", "renorm_float_indices", "renorm_rank", "renorm_leaf", "dropout_p",
        "group_norm_strided"])
def test_errors_match_torch(call):
    check_same_error(call)
