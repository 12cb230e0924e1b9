"""gradiente.jit runs scripted and traced code eagerly: the values must be PyTorch's compiled code's, and the
annotations, warnings and errors PyTorch's where it has them."""
import typing
import warnings

import numpy as np
import pytest
import torch

import gradiente

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def same_weights(ours, theirs):
    for p, q in zip(ours.parameters(), theirs.parameters()):
        q.data.copy_(torch.tensor(p.detach().numpy()))


def assert_close(ours, theirs):
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-6, atol=1e-7)


SOURCE = """
def clipped_sum(x: Tensor, limit: float, steps: int) -> Tensor:
    total = torch.zeros_like(x)
    for i in range(steps):
        if bool(total.sum() > limit):
            total = total - x
        else:
            total = total + x * (i + 1)
    return total
"""


def test_compilation_unit_source_gives_torchs_values():
    x = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    ours = gradiente.jit.CompilationUnit(SOURCE).clipped_sum(gradiente.tensor(x), 4.0, 6)
    theirs = torch.jit.CompilationUnit(SOURCE).clipped_sum(torch.tensor(x), 4.0, 6)
    assert_close(ours, theirs)
    assert gradiente.jit.CompilationUnit(SOURCE).find_function("missing") is None


def test_scripted_and_traced_modules_give_torchs_values():
    gradiente.manual_seed(0)
    ours = gradiente.nn.Sequential(gradiente.nn.Linear(4, 3), gradiente.nn.Tanh(), gradiente.nn.Linear(3, 2))
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Tanh(), torch.nn.Linear(3, 2))
    same_weights(ours, theirs)
    x = np.random.default_rng(0).normal(size=(5, 4)).astype(np.float32)
    scripted, their_scripted = gradiente.jit.script(ours), torch.jit.script(theirs)
    assert_close(scripted(gradiente.tensor(x)), their_scripted(torch.tensor(x)))
    traced = gradiente.jit.trace(ours, gradiente.tensor(x))
    their_traced = torch.jit.trace(theirs, torch.tensor(x))
    assert_close(traced(gradiente.tensor(x)), their_traced(torch.tensor(x)))
    # the documented difference: the Module itself, printed as itself
    assert scripted is ours and repr(scripted) == repr(ours)
    assert repr(their_scripted).startswith("RecursiveScriptModule(")
    loss = scripted(gradiente.tensor(x)).sum()
    loss.backward()
    their_scripted(torch.tensor(x)).sum().backward()
    assert_close(ours[0].weight.grad, theirs[0].weight.grad)


def test_script_as_a_decorator_and_trace_of_a_function():
    def make(lib):
        @lib.jit.script
        def scaled_relu(x: lib.Tensor, k: int) -> lib.Tensor:
            out = x
            for _ in range(k):
                out = lib.relu(out) * 2.0 - 0.5
            return out
        return scaled_relu

    x = np.array([[0.3, -0.2], [1.5, 0.0]], dtype=np.float32)
    assert_close(make(gradiente)(gradiente.tensor(x), 3), make(torch)(torch.tensor(x), 3))

    def double_then_sum(x):
        return (x * 2).sum(0)

    assert_close(gradiente.jit.trace(double_then_sum, gradiente.tensor(x))(gradiente.tensor(x)),
                 torch.jit.trace(double_then_sum, torch.tensor(x))(torch.tensor(x)))


def test_ignore_unused_export_and_final_in_a_scripted_module():
    def make(lib):
        class Scaler(lib.nn.Module):
            factor: typing.Final[float]

            def __init__(self):
                super().__init__()
                self.factor = 3.0
                self.linear = lib.nn.Linear(2, 2)

            def forward(self, x):
                return self.linear(x) * self.factor

            @lib.jit.export
            def halve(self, x):
                return self.forward(x) / 2

            @lib.jit.ignore
            def describe(self) -> str:
                return f"Scaler({self.factor})"

            @lib.jit.unused
            def never(self, x):
                return x

        return Scaler()

    ours, theirs = make(gradiente), make(torch)
    same_weights(ours, theirs)
    ours, theirs = gradiente.jit.script(ours), torch.jit.script(theirs)
    x = np.array([[1.0, -2.0]], dtype=np.float32)
    assert_close(ours(gradiente.tensor(x)), theirs(torch.tensor(x)))
    assert_close(ours.halve(gradiente.tensor(x)), theirs.halve(torch.tensor(x)))
    assert ours.describe() == theirs.describe() == "Scaler(3.0)"
    assert gradiente.jit.Final is torch.jit.Final is typing.Final


def test_annotations_and_flags_outside_script():
    for lib in (gradiente, torch):
        assert lib.jit.is_scripting() is False and lib.jit.is_tracing() is False
        assert lib.jit.annotate(list[int], [1]) == [1]
        assert lib.jit.Attribute(5, int) == (5, int) and lib.jit.Attribute(5, int).value == 5


@pytest.mark.parametrize("value, target", [
    ([1, 2], list[int]), ([1, "a"], list[int]), ({"a": [1.0]}, dict[str, list[float]]),
    ((1, "x"), tuple[int, str]), ((1, 2), tuple[int]), (None, typing.Optional[int]),
    (3, typing.Optional[int]), ("s", typing.Optional[int]), (True, bool), (2.0, int), ([], list[str]),
])
def test_isinstance_refines_containers_as_torch_does(value, target):
    assert gradiente.jit.isinstance(value, target) == torch.jit.isinstance(value, target)


def test_isinstance_of_tensor_lists():
    assert gradiente.jit.isinstance([gradiente.ones(1)], list[gradiente.Tensor])
    assert not gradiente.jit.isinstance([gradiente.ones(1), 2], list[gradiente.Tensor])


def test_fork_and_wait_run_eagerly():
    values = []
    for lib in (gradiente, torch):
        future = lib.jit.fork(lambda x, y: x * y + 1, lib.tensor([2.0, 3.0]), y=lib.tensor(4.0))
        values.append(lib.jit.wait(future).tolist())
    assert values[0] == values[1] == [9.0, 13.0]


def test_deprecation_warnings_are_torchs():
    def fn(x):
        return x

    for name, call in [("script", lambda lib: lib.jit.script(fn)),
                       ("trace", lambda lib: lib.jit.trace(fn, lib.ones(1))),
                       ("fork", lambda lib: lib.jit.fork(fn, lib.ones(1)))]:
        messages = []
        for lib in (gradiente, torch):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                call(lib)
            messages.append([(w.category, str(w.message)) for w in caught][:1])
        assert messages[0] == messages[1] and messages[0], name


def test_freeze_refuses_a_module_in_training_mode_as_torch_does():
    messages = []
    for lib in (gradiente, torch):
        module = lib.jit.script(lib.nn.Linear(2, 2))
        with pytest.raises(RuntimeError) as info:
            lib.jit.freeze(module)
        messages.append(str(info.value))
        assert lib.jit.freeze(module.eval()) is not None
    assert messages[0] == messages[1]


def test_save_and_load_say_to_use_a_state_dict(tmp_path):
    model = gradiente.nn.Linear(2, 2)
    with pytest.raises(NotImplementedError, match=r"state_dict"):
        gradiente.jit.save(gradiente.jit.script(model), str(tmp_path / "m.pt"))
    with pytest.raises(NotImplementedError, match=r"load_state_dict"):
        gradiente.jit.load(str(tmp_path / "m.pt"))


def test_the_public_names_are_torchs():
    assert sorted(gradiente.jit.__all__) == sorted(torch.jit.__all__)
    assert all(hasattr(gradiente.jit, name) for name in torch.jit.__all__)
