"""``torch.__future__``'s switches: what converting a module (``module.double()``) and loading a state dict do to its
parameters when *swap* or *overwrite* is on (the swap_tensors recipe), compared with PyTorch's on the same program."""
import pytest

import gradiente

torch = pytest.importorskip("torch")


def conversions(lib, swap, overwrite):
    """What a program sees of a Linear's parameters across ``double()`` and two ``load_state_dict`` calls."""
    lib.__future__.set_swap_module_params_on_conversion(swap)
    lib.__future__.set_overwrite_module_params_on_conversion(overwrite)
    try:
        lib.manual_seed(0)
        m = lib.nn.Linear(3, 2)
        weight = m.weight
        m(lib.randn(4, 3)).sum().backward()
        grad = m.weight.grad
        optimizer = lib.optim.SGD(m.parameters(), lr=0.1)
        m.double()
        seen = [m.weight is weight, str(m.weight.dtype), str(weight.dtype), m.weight.grad is grad,
                str(m.weight.grad.dtype), str(grad.dtype), type(m.weight).__name__,
                str(optimizer.param_groups[0]["params"][0].dtype)]
        zeros = {k: v.clone() * 0 for k, v in m.state_dict().items()}
        before = m.weight
        seen += [str(m.load_state_dict(zeros)), m.weight is before, m.weight.abs().sum().item(),
                 type(m.weight).__name__, m.weight.requires_grad]
        seen += [str(m.load_state_dict({k: v + 1 for k, v in zeros.items()}, assign=True)), m.weight is before,
                 m.weight.sum().item(), m.weight.requires_grad]
        return [s.replace("gradiente.", "torch.") if isinstance(s, str) else s for s in seen]
    finally:
        lib.__future__.set_swap_module_params_on_conversion(False)
        lib.__future__.set_overwrite_module_params_on_conversion(False)


@pytest.mark.parametrize("swap, overwrite", [(False, False), (True, False), (False, True), (True, True)])
def test_module_conversion_and_loading_follow_the_switches_as_pytorchs_do(swap, overwrite):
    assert conversions(gradiente, swap, overwrite) == conversions(torch, swap, overwrite)


def test_the_switches_read_back_and_are_off_by_default():
    future = gradiente.__future__
    assert not future.get_swap_module_params_on_conversion()
    assert not future.get_overwrite_module_params_on_conversion()
    assert sorted(future.__all__) == sorted(n for n in dir(torch.__future__) if not n.startswith("_"))
