"""Initialization draws PyTorch's numbers for the same seed: default layer initialization and nn.init."""
import math
import warnings

import numpy as np
import pytest

import gradiente

torch = pytest.importorskip("torch")

DEFAULT_INIT = [
    lambda nn: nn.Linear(5, 3),
    lambda nn: nn.Linear(7, 2, bias=False),
    lambda nn: nn.Bilinear(3, 4, 2),
    lambda nn: nn.Conv1d(3, 4, 3),
    lambda nn: nn.Conv2d(3, 6, 5),
    lambda nn: nn.Conv2d(4, 6, (3, 2), groups=2),
    lambda nn: nn.Embedding(10, 4, padding_idx=2),
    lambda nn: nn.PReLU(3),
    lambda nn: nn.LayerNorm(4),
    lambda nn: nn.BatchNorm1d(3),
    lambda nn: nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 8), nn.Linear(8, 1)),
]


@pytest.mark.parametrize("seed", [0, 1234])
@pytest.mark.parametrize("ctor", DEFAULT_INIT)
def test_default_initialization_is_bit_identical(ctor, seed):
    torch.manual_seed(seed)
    t_mod = ctor(torch.nn)
    gradiente.manual_seed(seed)
    g_mod = ctor(gradiente.nn)
    for (name, g), (_, t) in zip(g_mod.state_dict().items(), t_mod.state_dict().items()):
        assert np.array_equal(g.numpy(), t.numpy()), name
    assert gradiente.rand(3).tolist() == torch.rand(3).tolist()     # the generators stay in step


INIT_FNS = [
    ("uniform_", lambda init, t: init.uniform_(t, -0.3, 0.7)),
    ("normal_", lambda init, t: init.normal_(t, 1.0, 0.5)),
    ("constant_", lambda init, t: init.constant_(t, 0.25)),
    ("ones_", lambda init, t: init.ones_(t)),
    ("zeros_", lambda init, t: init.zeros_(t)),
    ("eye_", lambda init, t: init.eye_(t)),
    ("xavier_uniform_", lambda init, t: init.xavier_uniform_(t, gain=init.calculate_gain("tanh"))),
    ("xavier_normal_", lambda init, t: init.xavier_normal_(t)),
    ("kaiming_uniform_", lambda init, t: init.kaiming_uniform_(t, a=math.sqrt(5))),
    ("kaiming_uniform_relu_out", lambda init, t: init.kaiming_uniform_(t, mode="fan_out", nonlinearity="relu")),
    ("kaiming_normal_", lambda init, t: init.kaiming_normal_(t, nonlinearity="relu")),
    ("trunc_normal_", lambda init, t: init.trunc_normal_(t, std=0.5, a=-0.6, b=0.6)),
    ("trunc_normal_narrow", lambda init, t: init.trunc_normal_(t, mean=0.0, std=1.0, a=1.0, b=1.5)),
    ("sparse_", lambda init, t: init.sparse_(t, 0.3)),
]


@pytest.mark.parametrize("name,fn", INIT_FNS, ids=[row[0] for row in INIT_FNS])
def test_init_functions_draw_torch_numbers(name, fn):
    torch.manual_seed(7)
    t = fn(torch.nn.init, torch.empty(6, 5, requires_grad=True))
    gradiente.manual_seed(7)
    g = fn(gradiente.nn.init, gradiente.empty(6, 5, requires_grad=True))
    assert np.array_equal(g.detach().numpy(), t.detach().numpy())
    assert g.requires_grad and g.is_leaf
    assert gradiente.rand(2).tolist() == torch.rand(2).tolist()


def test_orthogonal_and_dirac():
    torch.manual_seed(3)
    t = torch.nn.init.orthogonal_(torch.empty(4, 6), gain=2.0)
    gradiente.manual_seed(3)
    g = gradiente.nn.init.orthogonal_(gradiente.empty(4, 6), gain=2.0)
    np.testing.assert_allclose(g.numpy(), t.numpy(), atol=1e-5)
    np.testing.assert_allclose(g.numpy() @ g.numpy().T, 4 * np.eye(4), atol=1e-5)
    t = torch.nn.init.dirac_(torch.empty(4, 2, 3, 3), groups=2)
    g = gradiente.nn.init.dirac_(gradiente.empty(4, 2, 3, 3), groups=2)
    assert np.array_equal(g.numpy(), t.numpy())


def test_calculate_gain_and_fan_errors():
    for nl, p in [("linear", None), ("tanh", None), ("relu", None), ("leaky_relu", 0.2), ("selu", None)]:
        assert gradiente.nn.init.calculate_gain(nl, p) == torch.nn.init.calculate_gain(nl, p)
    with pytest.raises(ValueError, match="Fan in and fan out can not be computed for tensor with fewer than 2"):
        gradiente.nn.init.xavier_uniform_(gradiente.empty(3))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gradiente.nn.init.kaiming_uniform_(gradiente.empty(0, 3))
    assert "Initializing zero-element tensors is a no-op" in str(caught[0].message)
