"""The lazy layers against PyTorch: before the first input (repr, placeholders), after it (the plain layer they
become, with the same values drawn from the same seed), and the values and gradients of a forward and backward
pass; ``UninitializedParameter`` / ``UninitializedBuffer`` and the errors of a bad first input."""
import numpy as np
import pytest
from harness import check_same_error

import gradiente

torch = pytest.importorskip("torch")

LAYERS = [
    ("LazyLinear", lambda nn: nn.LazyLinear(3), (2, 4)),
    ("LazyLinear_no_bias_3d", lambda nn: nn.LazyLinear(2, bias=False), (2, 3, 5)),
    ("LazyConv1d", lambda nn: nn.LazyConv1d(4, 3, padding=1), (2, 2, 6)),
    ("LazyConv2d_groups", lambda nn: nn.LazyConv2d(4, 2, groups=2), (2, 4, 4, 5)),
    ("LazyConv3d_unbatched", lambda nn: nn.LazyConv3d(2, 2, bias=False), (3, 3, 3, 4)),
    ("LazyConvTranspose1d", lambda nn: nn.LazyConvTranspose1d(3, 2, stride=2), (2, 4, 5)),
    ("LazyConvTranspose2d", lambda nn: nn.LazyConvTranspose2d(4, 3, groups=2, output_padding=1, stride=2),
     (2, 2, 3, 3)),
    ("LazyConvTranspose3d", lambda nn: nn.LazyConvTranspose3d(2, 2), (1, 3, 2, 3, 2)),
    ("LazyBatchNorm1d", lambda nn: nn.LazyBatchNorm1d(), (4, 3)),
    ("LazyBatchNorm2d_plain", lambda nn: nn.LazyBatchNorm2d(affine=False, track_running_stats=False), (2, 3, 2, 2)),
    ("LazyBatchNorm3d", lambda nn: nn.LazyBatchNorm3d(momentum=0.3), (2, 3, 2, 2, 2)),
    ("LazyInstanceNorm1d", lambda nn: nn.LazyInstanceNorm1d(), (2, 3, 5)),
    ("LazyInstanceNorm2d", lambda nn: nn.LazyInstanceNorm2d(affine=False), (2, 3, 3, 4)),
    ("LazyInstanceNorm3d", lambda nn: nn.LazyInstanceNorm3d(track_running_stats=False), (2, 3, 2, 3, 2)),
]


def _placeholders(lib, module):
    kinds = (lib.nn.UninitializedParameter, lib.nn.UninitializedBuffer)
    return [name for name, v in [*module.named_parameters(), *module.named_buffers()] if isinstance(v, kinds)]


def _state(module):
    return {k: v.detach().numpy().copy() for k, v in module.state_dict().items()}


@pytest.mark.parametrize("make,shape", [pytest.param(m, s, id=n) for n, m, s in LAYERS])
def test_lazy_layer_matches_torch(make, shape):
    x = np.random.RandomState(0).randn(*shape).astype(np.float32)
    seen = []
    for lib in (torch, gradiente):
        lib.manual_seed(3)
        layer = make(lib.nn)
        before = (repr(layer), type(layer).__name__, _placeholders(lib, layer), repr(layer.weight)
                  if isinstance(getattr(layer, "weight", None), lib.Tensor) else None)
        t = lib.tensor(x, requires_grad=True)
        out = layer(t)
        out.pow(2).sum().backward()
        after = (repr(layer), type(layer).__name__, _placeholders(lib, layer), out.grad_fn.name())
        grads = {n: p.grad.numpy() for n, p in layer.named_parameters()}
        seen.append((before, after, _state(layer), out.detach().numpy(), t.grad.numpy(), grads))
    (t_before, t_after, t_state, t_out, t_grad, t_grads), (g_before, g_after, g_state, g_out, g_grad, g_grads) = seen
    assert g_before == t_before
    assert g_after == t_after
    assert g_state.keys() == t_state.keys()
    for key in t_state:
        np.testing.assert_allclose(g_state[key], t_state[key], rtol=1e-5, atol=1e-6, err_msg=key)
        assert g_state[key].dtype == t_state[key].dtype, key
    np.testing.assert_allclose(g_out, t_out, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(g_grad, t_grad, rtol=1e-4, atol=1e-4)
    assert g_grads.keys() == t_grads.keys()
    for name in t_grads:
        np.testing.assert_allclose(g_grads[name], t_grads[name], rtol=1e-4, atol=1e-4, err_msg=name)


def test_placeholders_print_and_refuse_a_shape_as_torch():
    for cls in ("UninitializedParameter", "UninitializedBuffer"):
        assert repr(getattr(gradiente.nn, cls)()) == repr(getattr(torch.nn, cls)())
    check_same_error(lambda lib: lib.nn.UninitializedParameter().shape)
    p, q = gradiente.nn.UninitializedParameter(), torch.nn.UninitializedParameter()
    assert p.requires_grad == q.requires_grad and isinstance(p, gradiente.nn.Parameter)
    p.materialize((2, 3))
    q.materialize((2, 3))
    assert type(p).__name__ == type(q).__name__ == "Parameter" and tuple(p.shape) == tuple(q.shape)
    b = gradiente.nn.UninitializedBuffer()
    b.materialize(4, dtype=gradiente.float64)
    assert type(b) is gradiente.Tensor and b.dtype == gradiente.float64 and tuple(b.shape) == (4,)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.LazyConv2d(4, 2, groups=3)(lib.ones(1, 4, 3, 3)),
    lambda lib: lib.nn.LazyConv2d(4, 2)(lib.ones(3, 3)),
    lambda lib: lib.nn.LazyConvTranspose1d(4, 2)(lib.ones(1, 2, 3, 3)),
], ids=["groups", "conv_rank", "transposed_rank"])
def test_bad_first_input_errors_match_torch(call):
    check_same_error(call)
