"""nn.Module semantics against PyTorch: registration, iteration order, state_dict and its errors, modes,
conversion, hooks, containers, and repr identical to PyTorch's."""
import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import gradiente

torch = pytest.importorskip("torch")


def both(build):
    """``build(lib)`` run for PyTorch and for gradiente."""
    return build(torch), build(gradiente)


def _net(lib):
    nn = lib.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2, 2),
                                          nn.Conv2d(6, 16, 5, padding=2, bias=False), nn.BatchNorm2d(16))
            self.blocks = nn.ModuleList([nn.Linear(16, 16) for _ in range(3)] + [nn.Dropout(0.25)])
            self.heads = nn.ModuleDict({"cls": nn.Linear(16, 10), "act": nn.LeakyReLU(0.1, inplace=True)})
            self.scale = nn.Parameter(lib.ones(1))
            self.register_buffer("steps", lib.zeros(1))
            self.register_buffer("cache", lib.zeros(2), persistent=False)
            self.norm = nn.LayerNorm(16)
            self.embed = nn.Embedding(100, 16, padding_idx=0)
            self.flat = nn.Flatten()

        def forward(self, x):
            return self.heads["cls"](self.norm(x))

    return Net()


def test_repr_identical():
    t_net, g_net = both(_net)
    assert repr(g_net) == repr(t_net)
    t_seq, g_seq = both(lambda lib: lib.nn.Sequential(OrderedDict(
        fc=lib.nn.Linear(3, 8), act=lib.nn.GELU(approximate="tanh"), out=lib.nn.Linear(8, 1, bias=False),
        smax=lib.nn.Softmax(dim=-1), lsm=lib.nn.LogSoftmax(dim=1), un=lib.nn.Unflatten(1, (2, 2)),
        ada=lib.nn.AdaptiveAvgPool2d((1, 1)), avg=lib.nn.AvgPool2d(3, stride=2), c1=lib.nn.Conv1d(2, 4, 3, stride=2),
        bil=lib.nn.Bilinear(2, 3, 4), sp=lib.nn.Softplus(beta=2), hard=lib.nn.Hardtanh(-2, 2), r6=lib.nn.ReLU6(True),
        elu=lib.nn.ELU(alpha=0.5), prelu=lib.nn.PReLU(3), gn=lib.nn.GroupNorm(2, 4), idn=lib.nn.Identity(),
        bn=lib.nn.BatchNorm1d(4, momentum=None, affine=False), mse=lib.nn.MSELoss(), ce=lib.nn.CrossEntropyLoss(),
        zp=lib.nn.ZeroPad2d((1, 2, 0, 1)), cp=lib.nn.ConstantPad1d(2, 3.5), rp=lib.nn.ReflectionPad2d(1),
        rep=lib.nn.ReplicationPad3d(1), circ=lib.nn.CircularPad1d((1, 2)))))
    assert repr(g_seq) == repr(t_seq)
    t_pl, g_pl = both(lambda lib: lib.nn.ParameterList([lib.nn.Parameter(lib.zeros(2, 3)), lib.ones(4)]))
    assert repr(g_pl).replace("gradiente.", "torch.") == repr(t_pl)
    t_pd, g_pd = both(lambda lib: lib.nn.ParameterDict({"b": lib.nn.Parameter(lib.zeros(2)), "a": lib.ones(1)}))
    assert repr(g_pd) == repr(t_pd)
    assert repr(gradiente.nn.ModuleList()) == "ModuleList()"


def test_parameter_is_a_tensor_that_requires_grad():
    p = gradiente.nn.Parameter(gradiente.tensor([1.0, 2.0]))
    assert isinstance(p, gradiente.Tensor) and p.requires_grad and p.is_leaf
    assert repr(p) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
    with gradiente.no_grad():
        assert gradiente.nn.Parameter(gradiente.zeros(1)).requires_grad
    assert type(p * 2) is gradiente.Tensor
    assert not gradiente.nn.Parameter(gradiente.zeros(1), requires_grad=False).requires_grad
    data = gradiente.zeros(3)
    shared = gradiente.nn.Parameter(data)
    with gradiente.no_grad():
        shared.add_(1)
    assert data.tolist() == [1.0, 1.0, 1.0]
    deep = copy.deepcopy(p)
    assert type(deep) is gradiente.nn.Parameter and deep.tolist() == [1.0, 2.0] and deep.requires_grad
    unpickled = pickle.loads(pickle.dumps(p))
    assert type(unpickled) is gradiente.nn.Parameter and unpickled.tolist() == [1.0, 2.0]


def test_registration_and_iteration_match_torch():
    t_net, g_net = both(_net)
    for fn in ("named_parameters", "named_buffers", "named_children", "named_modules"):
        t_names = [name for name, _ in getattr(t_net, fn)()]
        g_names = [name for name, _ in getattr(g_net, fn)()]
        assert g_names == t_names, fn
    assert [tuple(p.shape) for p in g_net.parameters()] == [tuple(p.shape) for p in t_net.parameters()]
    assert list(g_net.state_dict()) == list(t_net.state_dict())
    assert len(list(g_net.modules())) == len(list(t_net.modules()))
    assert g_net.get_submodule("features.3") is g_net.features[3]
    assert g_net.get_parameter("blocks.1.bias") is g_net.blocks[1].bias
    assert g_net.get_buffer("features.4.running_mean") is g_net.features[4].running_mean


def test_attribute_rules():
    nn = gradiente.nn
    m = nn.Module()
    m.w = nn.Parameter(gradiente.zeros(2))
    m.sub = nn.Linear(2, 2)
    m.register_buffer("b", gradiente.ones(1))
    m.plain = gradiente.ones(1)                  # a plain tensor attribute is not registered
    assert [n for n, _ in m.named_parameters()] == ["w", "sub.weight", "sub.bias"]
    assert [n for n, _ in m.named_buffers()] == ["b"]
    with pytest.raises(TypeError, match=r"cannot assign 'torch\.FloatTensor' as parameter 'w'"):
        m.w = gradiente.zeros(2)
    m.w = None
    assert [n for n, _ in m.named_parameters()] == ["sub.weight", "sub.bias"]
    del m.sub
    assert not hasattr(m, "sub")
    m.buf = nn.Buffer(gradiente.zeros(3), persistent=False)
    assert "buf" in dict(m.named_buffers()) and "buf" not in m.state_dict()

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(gradiente.zeros(1))
    with pytest.raises(AttributeError, match=r"cannot assign parameters before Module\.__init__\(\) call"):
        Early()
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'nope'"):
        _ = nn.Linear(1, 1).nope


def test_state_dict_round_trip_and_strict_errors():
    t_net, g_net = both(_net)
    g_net.load_state_dict({k: gradiente.from_numpy(v.detach().numpy().copy()) for k, v in t_net.state_dict().items()})
    for (name, g), (_, t) in zip(g_net.state_dict().items(), t_net.state_dict().items()):
        assert np.array_equal(g.numpy(), t.numpy()), name
    sd = g_net.state_dict()
    assert isinstance(sd, OrderedDict) and not sd["scale"].requires_grad
    assert np.shares_memory(sd["scale"].numpy(), g_net.scale.detach().numpy())

    def errors(lib, net):
        bad = net.state_dict()
        del bad["scale"]
        bad["extra.weight"] = lib.zeros(1)
        bad["norm.weight"] = lib.zeros(3)
        with pytest.raises(RuntimeError) as info:
            net.load_state_dict(bad)
        return str(info.value).replace("torch.Size", "Size").replace("gradiente.Size", "Size")
    assert errors(gradiente, g_net) == errors(torch, t_net)
    bad = g_net.state_dict()
    del bad["scale"]
    result = g_net.load_state_dict(bad, strict=False)
    assert result.missing_keys == ["scale"] and result.unexpected_keys == []
    assert repr(g_net.load_state_dict(g_net.state_dict())) == "<All keys matched successfully>"


def test_train_eval_zero_grad_requires_grad_apply_and_to():
    net = _net(gradiente)
    assert net.training and all(m.training for m in net.modules())
    net.eval()
    assert not any(m.training for m in net.modules())
    net.train()
    x = gradiente.randn(2, 16)
    net(x).sum().backward()
    assert net.heads["cls"].weight.grad is not None
    net.zero_grad(set_to_none=False)
    assert net.heads["cls"].weight.grad.abs().sum().item() == 0
    net.zero_grad()
    assert net.heads["cls"].weight.grad is None
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen[-1] == "Net" and seen[0] == "Conv2d"
    weight = net.heads["cls"].weight
    net.double()
    assert net.heads["cls"].weight is weight and weight.dtype is gradiente.float64
    assert net.features[4].num_batches_tracked.dtype is gradiente.int64
    net.to(gradiente.float32)
    assert weight.dtype is gradiente.float32
    with pytest.raises(TypeError, match=r"nn\.Module\.to only accepts floating point or complex dtypes"):
        net.to(gradiente.int32)


def test_forward_hooks_match_torch():
    def run(lib):
        calls = []
        lin = lib.nn.Linear(2, 2)
        h1 = lin.register_forward_pre_hook(lambda m, args: calls.append("pre") or (args[0] * 2,))
        h2 = lin.register_forward_hook(lambda m, args, out: calls.append("post") or out + 1)
        lin.register_forward_hook(lambda m, args, kwargs, out: calls.append("kw"), with_kwargs=True)
        lin.register_forward_pre_hook(lambda m, args: calls.append("first"), prepend=True)
        lib.manual_seed(0)
        with lib.no_grad():
            lin.weight.copy_(lib.tensor([[1.0, 2.0], [3.0, 4.0]]))
            lin.bias.zero_()
        out = lin(lib.ones(1, 2))
        h1.remove()
        h2.remove()
        out2 = lin(lib.ones(1, 2))
        return calls, out.tolist(), out2.tolist()
    assert run(gradiente) == run(torch)


def test_full_backward_hooks_match_torch():
    def run(lib):
        seen = []
        lib.manual_seed(0)
        lin = lib.nn.Linear(3, 2)
        lin.register_full_backward_pre_hook(lambda m, gout: seen.append(("pre", gout[0].tolist())))
        lin.register_full_backward_hook(lambda m, gin, gout: seen.append(
            ("post", [round(v, 5) for v in gin[0].flatten().tolist()], gout[0].tolist())) or (gin[0] * 10,))
        x = lib.tensor([[1.0, -1.0, 2.0]], requires_grad=True)
        (lin(x) * lib.tensor([[1.0, 3.0]])).sum().backward()
        return seen, [round(v, 5) for v in x.grad.flatten().tolist()]
    assert run(gradiente) == run(torch)


def test_containers_behave_like_torch():
    t_seq, g_seq = both(lambda lib: lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.ReLU(), lib.nn.Linear(3, 1)))
    assert repr(g_seq[1:]) == repr(t_seq[1:]) and repr(g_seq[-1]) == repr(t_seq[-1])
    g_seq.append(gradiente.nn.Sigmoid())
    del g_seq[0]
    assert [type(m).__name__ for m in g_seq] == ["ReLU", "Linear", "Sigmoid"]
    assert list(g_seq._modules) == ["0", "1", "2"]
    ml = gradiente.nn.ModuleList([gradiente.nn.Linear(1, 1)])
    ml += [gradiente.nn.Tanh()]
    ml.insert(0, gradiente.nn.ReLU())
    assert [type(m).__name__ for m in ml] == ["ReLU", "Linear", "Tanh"] and len(ml) == 3
    md = gradiente.nn.ModuleDict({"b": gradiente.nn.ReLU(), "a": gradiente.nn.Tanh()})
    assert list(md.keys()) == ["b", "a"] and "a" in md
    pl = gradiente.nn.ParameterList([gradiente.zeros(2)])
    assert isinstance(pl[0], gradiente.nn.Parameter) and [n for n, _ in pl.named_parameters()] == ["0"]
    pd = gradiente.nn.ParameterDict({"z": gradiente.zeros(1), "y": gradiente.ones(1)})
    assert list(pd.keys()) == ["y", "z"]           # PyTorch sorts a plain dict's keys
    with pytest.raises(RuntimeError, match=r"ParameterList should not be called\."):
        pl()


def test_deepcopy_and_pickle_of_a_module():
    net = gradiente.nn.Sequential(gradiente.nn.Linear(2, 2), gradiente.nn.BatchNorm1d(2))
    twin = copy.deepcopy(net)
    assert twin[0].weight is not net[0].weight and twin[0].weight.tolist() == net[0].weight.tolist()
    again = pickle.loads(pickle.dumps(net))
    assert repr(again) == repr(net) and again[0].bias.tolist() == net[0].bias.tolist()
