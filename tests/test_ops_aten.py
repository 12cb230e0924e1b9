"""``gradiente.ops.aten``: the op handles a selective checkpointing policy compares with print as torch's, and the
handle of each recorded node is the ATen op PyTorch's dispatcher runs to record the same node."""
import numpy as np
import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import gradiente as g
from gradiente.ops import aten


class _LastOp(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func is not torch.ops.aten.detach.default:
            self.ops.append(func)
        return func(*args, **(kwargs or {}))


CASES = {
    "add": lambda lib, x, w: x + x, "add_number": lambda lib, x, w: x + 1, "mul_number": lambda lib, x, w: x * 2,
    "div": lambda lib, x, w: x / (x * x + 1), "pow_number": lambda lib, x, w: x ** 2,
    "pow_tensor": lambda lib, x, w: x.abs() ** x, "number_pow": lambda lib, x, w: 2 ** x,
    "sum": lambda lib, x, w: x.sum(), "sum_dim": lambda lib, x, w: x.sum(1), "mean_dim": lambda lib, x, w: x.mean(1),
    "matmul": lambda lib, x, w: x @ w, "linear": lambda lib, x, w: lib.nn.functional.linear(x, w),
    "softmax": lambda lib, x, w: x.softmax(-1), "log_softmax": lambda lib, x, w: x.log_softmax(-1),
    "view": lambda lib, x, w: x.view(12), "transpose": lambda lib, x, w: x.transpose(0, 1),
    "select": lambda lib, x, w: x[0], "slice": lambda lib, x, w: x[1:], "var": lambda lib, x, w: x.var(),
    "max": lambda lib, x, w: x.max(), "max_dim": lambda lib, x, w: x.max(1)[0], "relu": lambda lib, x, w: x.relu(),
    "sigmoid": lambda lib, x, w: x.sigmoid(), "layer_norm": lambda lib, x, w: lib.nn.functional.layer_norm(x, (4,)),
    "gelu": lambda lib, x, w: lib.nn.functional.gelu(x), "log1p": lambda lib, x, w: x.abs().log1p(),
}


@pytest.mark.parametrize("name", list(CASES))
def test_handle_of_a_node_is_the_aten_op_that_records_it(name):
    a = np.random.default_rng(0).standard_normal((3, 4))
    b = np.random.default_rng(1).standard_normal((4, 4))
    tx, tw = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    with _LastOp() as mode:
        t_out = CASES[name](torch, tx, tw)
    gx, gw = g.tensor(a, requires_grad=True), g.tensor(b, requires_grad=True)
    g_out = CASES[name](g, gx, gw)
    assert g_out.grad_fn.name() == t_out.grad_fn.name()
    assert str(aten.handle_of(g_out.grad_fn)) == str(mode.ops[-1])


def test_handles_print_and_compare_as_torch():
    assert str(g.ops.aten.mm.default) == str(torch.ops.aten.mm.default)
    assert repr(g.ops.aten.mm.default) == repr(torch.ops.aten.mm.default)
    assert repr(g.ops.aten.mm) == repr(torch.ops.aten.mm)
    assert str(g.ops.aten.mm) == str(torch.ops.aten.mm)
    assert g.ops.aten.mm.default.name() == torch.ops.aten.mm.default.name()
    assert g.ops.aten.mm.default is g.ops.aten.mm.default
    assert g.ops.aten.mul.Tensor != g.ops.aten.mul.default
    assert g.ops.aten.mm.default in {g.ops.aten.mm.default}
    with pytest.raises(TypeError, match="not an op to run"):
        g.ops.aten.mm.default(g.ones(2, 2), g.ones(2, 2))
