"""nn.Module's hook surface against PyTorch: the legacy (non-full) backward hook and its FutureWarnings, the
global module hooks (forward, backward, registration), and the Module methods around them (``set_submodule``,
``compile``, ``ipu``/``mtia``, the private state_dict hooks), each run on both libraries with the same inputs."""
import os
import pickle
import warnings

import numpy as np
import pytest
from harness import check_same_error

import gradiente

torch = pytest.importorskip("torch")

LIBS = (gradiente, torch)


@pytest.fixture(autouse=True)
def _no_global_backward_kind():
    """Whether the global backward hooks are full ones stays set once decided, even after their removal, and a
    removed global forward hook ``with_kwargs`` leaves its id behind (in both libraries): each test starts with
    neither, and leaves no global hook behind."""
    for lib in LIBS:
        lib.nn.modules.module._global_is_full_backward_hook = None
        lib.nn.modules.module._global_forward_hooks_with_kwargs.clear()
    yield
    for lib in LIBS:
        module = lib.nn.modules.module
        module._global_is_full_backward_hook = None
        module._global_forward_hooks_with_kwargs.clear()
        for name in ("_global_backward_hooks", "_global_backward_pre_hooks", "_global_forward_hooks",
                     "_global_forward_pre_hooks", "_global_forward_hooks_always_called",
                     "_global_buffer_registration_hooks",
                     "_global_module_registration_hooks", "_global_parameter_registration_hooks"):
            assert not getattr(module, name), f"{lib.__name__}: {name} left behind"


def arrays(grads):
    """A tuple of gradients as float64 arrays, None kept in place."""
    return tuple(None if g is None else np.asarray(g.detach().numpy(), dtype=np.float64) for g in grads)


def assert_same_arrays(ours, theirs):
    """The same number of entries, None in the same places, the same values."""
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert (o is None) == (t is None)
        if t is not None:
            assert o.shape == t.shape
            np.testing.assert_allclose(o, t, rtol=1e-5, atol=1e-6)


def set_params(lib, module, seed=0):
    """The module's parameters filled with the same numbers in both libraries."""
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        for p in module.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
    return module


def data(lib, shape, seed=1, requires_grad=True):
    values = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return lib.tensor(values, requires_grad=requires_grad)


def warning_texts(caught):
    """(category, message, file name) of each warning caught."""
    return [(w.category.__name__, str(w.message), os.path.basename(w.filename)) for w in caught]


class LegacyRun:
    """A module with a legacy hook, called once and backpropagated with a non-trivial upstream gradient: what
    the hook saw, the warnings of the call, and the gradients that reached the inputs and parameters."""

    def __init__(self, lib, build, inputs, hook_result=None):
        self.seen = []

        def hook(module, grad_input, grad_output):
            self.seen.append((type(module).__name__, arrays(grad_input), arrays(grad_output)))
            return None if hook_result is None else hook_result(lib, grad_input)

        module = set_params(lib, build(lib))
        self.handle = module.register_backward_hook(hook)
        xs = inputs(lib)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = module(*xs)
        self.warnings = warning_texts(caught)
        first = out[0] if isinstance(out, tuple) else out
        upstream = lib.tensor(np.linspace(-1.0, 2.0, first.numel(), dtype=np.float32).reshape(tuple(first.shape)))
        (first * upstream).sum().backward()
        self.grads = arrays([x for x in xs if x.requires_grad] + [p.grad for p in module.parameters()])


def compare_legacy(build, inputs, hook_result=None):
    ours, theirs = (LegacyRun(lib, build, inputs, hook_result) for lib in LIBS)
    assert len(ours.seen) == len(theirs.seen) >= 1
    for (g_name, g_in, g_out), (t_name, t_in, t_out) in zip(ours.seen, theirs.seen):
        assert g_name == t_name
        assert_same_arrays(g_in, t_in)
        assert_same_arrays(g_out, t_out)
    assert ours.warnings == theirs.warnings
    assert_same_arrays(ours.grads, theirs.grads)
    return ours, theirs


class TwoInputs:
    """A custom module of two inputs whose output's node is one multiplication, or an addition of products."""

    @staticmethod
    def build(lib):
        class Mix(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.scale = lib.nn.Parameter(lib.ones(3))

            def forward(self, x, y):
                return x * self.scale + y * 2

        return Mix()


def test_legacy_hook_on_conv2d_sees_input_weight_and_bias_grads():
    ours, _ = compare_legacy(lambda lib: lib.nn.Conv2d(2, 3, 3), lambda lib: (data(lib, (2, 2, 5, 5)),))
    assert [g is None for g in ours.seen[0][1]] == [False, False, False]
    compare_legacy(lambda lib: lib.nn.Conv2d(2, 3, 3), lambda lib: (data(lib, (1, 2, 5, 5), requires_grad=False),))
    compare_legacy(lambda lib: lib.nn.Conv1d(2, 3, 3, padding=1), lambda lib: (data(lib, (2, 2, 6)),))


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", [(2, 3), (2, 5, 3), (3,)])
def test_legacy_hook_on_linear_sees_its_output_nodes_grads(bias, shape):
    ours, _ = compare_legacy(lambda lib: lib.nn.Linear(3, 4, bias=bias), lambda lib: (data(lib, shape),))
    if shape == (2, 3):     # addmm's bias, input and weight; mm's input and weight
        assert len(ours.seen[0][1]) == (3 if bias else 2)


def test_legacy_hook_on_sequential_sees_the_last_nodes_grads():
    compare_legacy(lambda lib: lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU()),
                   lambda lib: (data(lib, (2, 3)),))
    compare_legacy(lambda lib: lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2)),
                   lambda lib: (data(lib, (5, 3)),))


def test_legacy_hook_on_layers_with_one_node():
    compare_legacy(lambda lib: lib.nn.BatchNorm1d(3), lambda lib: (data(lib, (4, 3)),))
    compare_legacy(lambda lib: lib.nn.LayerNorm(3), lambda lib: (data(lib, (4, 3)),))
    compare_legacy(lambda lib: lib.nn.MaxPool2d(2), lambda lib: (data(lib, (1, 2, 4, 4)),))
    compare_legacy(lambda lib: lib.nn.Sigmoid(), lambda lib: (data(lib, (2, 3)),))


def test_legacy_hook_on_a_custom_module():
    compare_legacy(TwoInputs.build, lambda lib: (data(lib, (2, 3)), data(lib, (2, 3), seed=2)))
    compare_legacy(TwoInputs.build, lambda lib: (data(lib, (2, 3)), data(lib, (2, 3), seed=2, requires_grad=False)))


def test_legacy_hook_on_an_input_that_is_not_a_leaf_does_not_warn():
    def inputs(lib):
        x = data(lib, (2, 3))
        return (x * 1.5,)

    ours, theirs = compare_legacy(lambda lib: lib.nn.ReLU(), inputs)
    assert ours.warnings == theirs.warnings == []


def test_legacy_hook_return_value_replaces_grad_input():
    def doubled(lib, grad_input):
        return tuple(None if g is None else g * 2 for g in grad_input)

    compare_legacy(lambda lib: lib.nn.Conv2d(2, 3, 3), lambda lib: (data(lib, (1, 2, 5, 5)),), doubled)
    compare_legacy(lambda lib: lib.nn.Linear(3, 4), lambda lib: (data(lib, (2, 3)),), doubled)
    compare_legacy(lambda lib: lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU()),
                   lambda lib: (data(lib, (2, 3)),), doubled)
    compare_legacy(TwoInputs.build, lambda lib: (data(lib, (2, 3)), data(lib, (2, 3), seed=2)), doubled)


def test_legacy_hook_bad_return_values_raise_as_in_torch():
    def call(result):
        def run(lib):
            m = set_params(lib, lib.nn.Linear(3, 4))
            m.register_backward_hook(lambda mod, gin, gout: result(lib, gin))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                m(data(lib, (2, 3))).sum().backward()
        return run

    check_same_error(call(lambda lib, gin: gin[:2]))
    check_same_error(call(lambda lib, gin: list(gin)))
    check_same_error(call(lambda lib, gin: (gin[0], gin[1], lib.zeros(2, 2))))


def test_legacy_hook_handle_remove_and_repeated_calls():
    def run(lib):
        calls = []
        m = set_params(lib, lib.nn.Linear(3, 2))
        first = m.register_backward_hook(lambda mod, gin, gout: calls.append("first"))
        m.register_backward_hook(lambda mod, gin, gout: calls.append("second"))
        x = data(lib, (2, 3))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m(x).sum().backward()
            first.remove()
            m(x).sum().backward()
            y = m(x)            # the hooks are on the node made by this call: removing now still leaves them
        for h in list(m._backward_hooks):
            m._backward_hooks.pop(h)
        y.sum().backward()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m(x).sum().backward()
        return calls, m._is_full_backward_hook, len(m._backward_hooks)

    ours, theirs = (run(lib) for lib in LIBS)
    assert ours == theirs == (["first", "second", "second", "second"], False, 0)


def test_legacy_hook_is_given_the_module_weakly():
    def run(lib):
        m = lib.nn.Linear(3, 2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m.register_backward_hook(lambda mod, gin, gout: None)
            y = m(data(lib, (2, 3)))
        del m
        y.sum().backward()

    check_same_error(run)


def test_mixing_regular_and_full_backward_hooks_raises():
    def regular_then_full(lib):
        m = lib.nn.Linear(2, 2)
        m.register_backward_hook(lambda *a: None)
        m.register_full_backward_hook(lambda *a: None)

    def full_then_regular(lib):
        m = lib.nn.Linear(2, 2)
        m.register_full_backward_hook(lambda *a: None)
        m.register_backward_hook(lambda *a: None)

    def global_regular_then_full(lib):
        handle = lib.nn.modules.module.register_module_backward_hook(lambda *a: None)
        try:
            lib.nn.modules.module.register_module_full_backward_hook(lambda *a: None)
        finally:
            handle.remove()

    def global_full_then_regular(lib):
        handle = lib.nn.modules.module.register_module_full_backward_hook(lambda *a: None)
        try:
            lib.nn.modules.module.register_module_backward_hook(lambda *a: None)
        finally:
            handle.remove()

    check_same_error(regular_then_full)
    check_same_error(full_then_regular)
    check_same_error(global_regular_then_full)
    for lib in LIBS:
        lib.nn.modules.module._global_is_full_backward_hook = None
    check_same_error(global_full_then_regular)


def test_the_kind_of_backward_hook_stays_after_removal():
    def run(lib):
        m = lib.nn.Linear(2, 2)
        m.register_backward_hook(lambda *a: None).remove()
        kinds = [m._is_full_backward_hook]
        try:
            m.register_full_backward_hook(lambda *a: None)
        except RuntimeError:
            kinds.append("refused")
        return kinds, lib.nn.Linear(2, 2)._is_full_backward_hook

    assert run(gradiente) == run(torch) == ([False, "refused"], None)


# --- the FutureWarnings of _maybe_warn_non_full_backward_hook ---------------------------------------------------


def legacy_call_warnings(lib, forward, inputs):
    class Custom(lib.nn.Module):
        def forward(self, *args):
            return forward(lib, *args)

    m = Custom()
    m.register_backward_hook(lambda *a: None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m(*inputs(lib))
    return warning_texts(caught)


@pytest.mark.parametrize("case", ["dict output", "list output", "nested tuple output", "non-tensor input",
                                  "two nodes", "one node", "tuple from one node", "several nodes"])
def test_non_full_backward_hook_warnings_match_torch(case):
    forward, inputs = {
        "dict output": (lambda lib, x: {"out": x * 2}, lambda lib: (data(lib, (2,)),)),
        "list output": (lambda lib, x: [x * 2, x + 1], lambda lib: (data(lib, (2,)),)),
        "nested tuple output": (lambda lib, x: ((x * 2, x), x + 1), lambda lib: (data(lib, (2,)),)),
        "non-tensor input": (lambda lib, x, k: x * k, lambda lib: (data(lib, (2,)), 3)),
        "two nodes": (lambda lib, x: (x * 2, x + 1), lambda lib: (data(lib, (2,)) * 1,)),
        "one node": (lambda lib, x: x * 2, lambda lib: (data(lib, (2,)) * 1,)),
        "tuple from one node": (lambda lib, x: x.split(1), lambda lib: (data(lib, (2,)) * 1,)),
        "several nodes": (lambda lib, x: (x * 2).exp(), lambda lib: (data(lib, (2,)) * 1,)),
    }[case]
    ours, theirs = (legacy_call_warnings(lib, forward, inputs) for lib in LIBS)
    assert ours == theirs
    if case not in ("one node", "tuple from one node"):
        assert len(theirs) == 1 and theirs[0][0] == "FutureWarning"


def test_non_full_backward_hook_on_a_dict_output_hooks_its_first_tensor():
    def run(lib):
        seen = []

        class Heads(lib.nn.Module):
            def forward(self, x):
                return {"label": "none", "a": x * 3, "b": x.sum()}

        m = Heads()
        m.register_backward_hook(lambda mod, gin, gout: seen.append((arrays(gin), arrays(gout))))
        x = data(lib, (3,))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = m(x * 1)
        (out["a"] * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
        return seen

    ours, theirs = (run(lib) for lib in LIBS)
    assert len(ours) == len(theirs) == 1
    assert_same_arrays(ours[0][0], theirs[0][0])
    assert_same_arrays(ours[0][1], theirs[0][1])


def test_non_full_backward_hook_on_an_output_without_grad_fn_registers_nothing():
    def run(lib):
        m = lib.nn.Linear(2, 2)
        m.requires_grad_(False)
        m.register_backward_hook(lambda *a: None)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = m(lib.ones(1, 2))
        return out.grad_fn is None, warning_texts(caught)

    assert run(gradiente) == run(torch) == (True, [])


def test_maybe_warn_non_full_backward_hook_called_directly():
    def run(lib):
        m = lib.nn.Linear(2, 2)
        x = data(lib, (1, 2))
        y = m(x)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m._maybe_warn_non_full_backward_hook((x,), y, y.grad_fn)
            m._maybe_warn_non_full_backward_hook(x, [y], y.grad_fn)
            m._maybe_warn_non_full_backward_hook([x], y, y.grad_fn)
            m._maybe_warn_non_full_backward_hook((x,), (y, y * 2), y.grad_fn)
            m._maybe_warn_non_full_backward_hook((x,), (y,), (y * 2).grad_fn)
            m._maybe_warn_non_full_backward_hook((y * 1,), y * 2, (y * 2).grad_fn)
        return [(c, text, os.path.basename(__file__) == f) for c, text, f in warning_texts(caught)]

    ours, theirs = run(gradiente), run(torch)
    assert ours == theirs
    assert len(theirs) == 6


def test_backward_hook_on_an_output_that_is_not_a_tensor_warns():
    def run(lib):
        class Count(lib.nn.Module):
            def forward(self, x):
                return 3

        m = Count()
        m.register_full_backward_hook(lambda *a: None)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = m(data(lib, (2,)))
        return out, warning_texts(caught)

    assert run(gradiente) == run(torch)


def test_full_backward_hook_with_no_input_requiring_grad_warns_at_the_backward_call():
    def run(lib):
        seen = []
        m = set_params(lib, lib.nn.Linear(3, 2))
        m.register_full_backward_hook(lambda mod, gin, gout: seen.append((arrays(gin), arrays(gout))))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m(data(lib, (4, 3), requires_grad=False)).sum().backward()
        return seen, [(c, msg, w.lineno) for (c, msg, _), w in zip(warning_texts(caught), caught)]

    (g_seen, g_warned), (t_seen, t_warned) = run(gradiente), run(torch)
    assert g_warned == t_warned and len(t_warned) == 1
    assert len(g_seen) == len(t_seen) == 1
    assert_same_arrays(g_seen[0][0], t_seen[0][0])
    assert_same_arrays(g_seen[0][1], t_seen[0][1])


# --- global hooks --------------------------------------------------------------------------------------------


def test_global_legacy_backward_hook_sees_every_module():
    def run(lib):
        seen = []
        handle = lib.nn.modules.module.register_module_backward_hook(
            lambda mod, gin, gout: seen.append((type(mod).__name__, arrays(gin), arrays(gout))))
        try:
            net = set_params(lib, lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2)))
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                out = net(data(lib, (2, 3)))
            out.pow(2).sum().backward()
        finally:
            handle.remove()
        net(data(lib, (2, 3))).sum().backward()      # removed: nothing more is seen
        return seen, warning_texts(caught), lib.nn.modules.module._global_is_full_backward_hook

    (g_seen, g_warned, g_kind), (t_seen, t_warned, t_kind) = run(gradiente), run(torch)
    assert g_warned == t_warned and len(t_warned) == 3     # not the ReLU's: its node is its only one
    assert g_kind is t_kind is False
    assert [name for name, _, _ in g_seen] == [name for name, _, _ in t_seen] == \
        ["Linear", "Sequential", "ReLU", "Linear"]
    for (_, g_in, g_out), (_, t_in, t_out) in zip(g_seen, t_seen):
        assert_same_arrays(g_in, t_in)
        assert_same_arrays(g_out, t_out)


def test_global_full_backward_hooks_run_before_the_modules_own():
    def run(lib):
        calls = []
        mod = lib.nn.modules.module
        handles = [
            mod.register_module_full_backward_pre_hook(
                lambda m, gout: calls.append(("global pre", type(m).__name__, arrays(gout)))),
            mod.register_module_full_backward_hook(
                lambda m, gin, gout: calls.append(("global", type(m).__name__, arrays(gin)))),
        ]
        try:
            net = set_params(lib, lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.Tanh()))
            net[0].register_full_backward_pre_hook(lambda m, gout: calls.append(("own pre", "Linear", arrays(gout))))
            net[0].register_full_backward_hook(lambda m, gin, gout: calls.append(("own", "Linear", arrays(gin))))
            net(data(lib, (2, 3))).sum().backward()
        finally:
            for h in handles:
                h.remove()
        return calls, mod._global_is_full_backward_hook

    (ours, g_kind), (theirs, t_kind) = run(gradiente), run(torch)
    assert g_kind is t_kind is True
    assert [c[:2] for c in ours] == [c[:2] for c in theirs]
    assert len(theirs) == 8
    for o, t in zip(ours, theirs):
        assert_same_arrays(o[2], t[2])


def test_global_backward_pre_hook_may_replace_grad_output():
    def run(lib):
        mod = lib.nn.modules.module
        handle = mod.register_module_full_backward_pre_hook(lambda m, gout: (gout[0] * 3,))
        try:
            lin = set_params(lib, lib.nn.Linear(3, 2))
            x = data(lib, (2, 3))
            lin(x).sum().backward()
        finally:
            handle.remove()
        return arrays([x.grad, lin.weight.grad, lin.bias.grad])

    assert_same_arrays(run(gradiente), run(torch))


def test_global_forward_hooks_with_kwargs_and_always_call():
    def run(lib):
        calls = []
        mod = lib.nn.modules.module

        class Scale(lib.nn.Module):
            def forward(self, x, factor=1.0):
                if factor < 0:
                    raise ValueError("negative factor")
                return x * factor

        handles = [
            mod.register_module_forward_pre_hook(lambda m, args: calls.append(("pre", len(args)))),
            mod.register_module_forward_hook(lambda m, args, kwargs, out: calls.append(("kw", dict(kwargs))),
                                             with_kwargs=True),
            mod.register_module_forward_hook(lambda m, args, out: calls.append(("always", out is None)),
                                             always_call=True),
        ]
        m = Scale()
        m.register_forward_hook(lambda m, args, out: calls.append(("own", None if out is None else float(out.sum()))),
                                always_call=True)
        try:
            m(lib.ones(2), factor=2.0)
            with pytest.raises(ValueError, match="negative factor"):
                m(lib.ones(2), factor=-1.0)
        finally:
            for h in handles:
                h.remove()
        after = len(calls)
        m(lib.ones(2))
        return calls, len(calls) - after, len(mod._global_forward_hooks_with_kwargs), bool(mod._has_any_global_hook())

    assert run(gradiente) == run(torch)


def test_global_forward_hook_that_raises_after_a_failed_forward_warns():
    def run(lib):
        class Fails(lib.nn.Module):
            def forward(self, x):
                raise KeyError("forward failed")

        def bad(m, args, out):
            raise ValueError("hook failed too")

        handle = lib.nn.modules.module.register_module_forward_hook(bad, always_call=True)
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                with pytest.raises(KeyError):
                    Fails()(lib.ones(1))
        finally:
            handle.remove()
        return [(w.category.__name__, str(w.message)) for w in caught]

    assert run(gradiente) == run(torch) != []


def test_module_without_hooks_after_global_hooks_are_removed():
    def run(lib):
        mod = lib.nn.modules.module
        seen = []
        handles = [mod.register_module_forward_pre_hook(lambda m, a: seen.append(1)),
                   mod.register_module_full_backward_pre_hook(lambda m, g: seen.append(2))]
        lin = set_params(lib, lib.nn.Linear(2, 2))
        lin(data(lib, (1, 2))).sum().backward()
        for h in handles:
            h.remove()
        lin(data(lib, (1, 2))).sum().backward()
        return seen, bool(mod._has_any_global_hook())

    assert run(gradiente) == run(torch) == ([1, 2], False)


# --- registration hooks -------------------------------------------------------------------------------------


def test_global_registration_hooks_see_and_may_replace_what_is_registered():
    def run(lib):
        mod = lib.nn.modules.module
        seen = []

        replacements = []

        def on_param(m, name, p):
            seen.append(("param", type(m).__name__, name, tuple(p.shape) if p is not None else None))
            if name == "bias" and p is not None:
                replacements.append(lib.nn.Parameter(lib.zeros(p.shape)))
                return replacements[-1]
            return None

        def on_buffer(m, name, b):
            seen.append(("buffer", type(m).__name__, name, None if b is None else tuple(b.shape)))

        def on_module(m, name, sub):
            seen.append(("module", type(m).__name__, name, type(sub).__name__))
            return lib.nn.Identity() if isinstance(sub, lib.nn.ReLU) else None

        handles = [mod.register_module_parameter_registration_hook(on_param),
                   mod.register_module_buffer_registration_hook(on_buffer),
                   mod.register_module_module_registration_hook(on_module)]
        try:
            net = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.ReLU(), lib.nn.BatchNorm1d(3))
            net.add_module("tail", lib.nn.ReLU())
            net.register_module("none", None)
            net.extra = lib.nn.Tanh()
            net.extra = None
            net.register_buffer("steps", lib.zeros(1))
            net.flag = lib.nn.Buffer(lib.ones(2), persistent=False)
            net.register_parameter("alpha", lib.nn.Parameter(lib.ones(4)))
            net.beta = lib.nn.Parameter(lib.ones(1))
            net.register_parameter("gamma", None)
        finally:
            for h in handles:
                h.remove()
        net.after = lib.nn.ReLU()
        return seen, repr(net), net[0].bias is replacements[0], sorted(net.state_dict())

    assert run(gradiente) == run(torch)


def test_registration_hooks_are_not_called_on_refused_registrations():
    def run(lib):
        seen = []
        handle = lib.nn.modules.module.register_module_parameter_registration_hook(
            lambda m, name, p: seen.append(name))
        try:
            m = lib.nn.Linear(1, 1)
            for bad in (lambda: m.register_parameter("a.b", lib.nn.Parameter(lib.ones(1))),
                        lambda: m.register_parameter("c", lib.ones(1))):
                with pytest.raises((KeyError, TypeError)):
                    bad()
        finally:
            handle.remove()
        return seen

    assert run(gradiente) == run(torch) == ["weight", "bias"]


def test_register_buffer_overridden_without_persistent():
    def run(lib):
        class Old(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.calls = []

            def register_buffer(self, name, tensor):
                self.calls.append(name)
                super().register_buffer(name, tensor)

        m = Old()
        m.a = lib.nn.Buffer(lib.ones(1))
        m.a = lib.zeros(1)
        outcome = None
        try:
            m.b = lib.nn.Buffer(lib.ones(1), persistent=False)
        except RuntimeError as e:
            outcome = str(e)
        return m.calls, list(m.state_dict()), outcome

    assert run(gradiente) == run(torch)


# --- Module methods -----------------------------------------------------------------------------------------


def _tree(lib):
    nn = lib.nn
    root = nn.Module()
    root.net_b = nn.Module()
    root.net_b.net_c = nn.Module()
    root.net_b.net_c.conv = nn.Conv2d(3, 3, 3)
    root.net_b.linear = nn.Linear(3, 3)
    root.net_b.plain = 5
    return root


def test_set_submodule_replaces_and_adds():
    def run(lib):
        root = _tree(lib)
        root.set_submodule("net_b.net_c.conv", lib.nn.Linear(1, 1))
        root.set_submodule("net_b.conv", lib.nn.Conv2d(1, 1, 1))
        root.set_submodule("net_b.linear", lib.nn.ReLU(), strict=True)
        root.set_submodule("top", lib.nn.Tanh())
        return repr(root), [name for name, _ in root.named_modules()]

    assert run(gradiente) == run(torch)


@pytest.mark.parametrize("target, module, strict", [
    ("", "linear", False), ("net_b.linear", "not a module", False), ("net_b.linear", None, False),
    ("net_b.conv", "linear", True), ("net_b.missing.conv", "linear", False), ("net_b.linear.weight", "linear", False),
    ("net_b.linear.bias", "linear", True), ("net_b.plain", "linear", False), ("net_b.plain.x", "linear", False),
    ("net_b.net_c.conv.weight.x", "linear", False),
])
def test_set_submodule_errors(target, module, strict):
    def run(lib):
        root = _tree(lib)
        value = lib.nn.Linear(1, 1) if module == "linear" else module
        root.set_submodule(target, value, strict=strict)

    check_same_error(run)


@pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated:DeprecationWarning")
def test_compile_leaves_the_module_working():
    def run(lib):
        lin = set_params(lib, lib.nn.Linear(3, 2))
        x = data(lib, (2, 3), requires_grad=False)
        before = lin(x).tolist()
        returned = lin.compile()
        after = lin(x).tolist()
        sd = list(lin.state_dict())
        clone = pickle.loads(pickle.dumps(lin))
        return returned, before == after, sd, "_compiled_call_impl" in clone.__dict__, clone(x).tolist() == after

    ours, theirs = run(gradiente), run(torch)
    assert ours == theirs == (None, True, ["weight", "bias"], False, True)
    assert gradiente.nn.Module._compiled_call_impl is None
    lin = gradiente.nn.Linear(2, 2)
    lin.compile()
    assert callable(lin._compiled_call_impl)


@pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated:DeprecationWarning")
def test_compile_checks_its_arguments_as_torch():
    check_same_error(lambda lib: lib.nn.Linear(2, 2).compile(mode="fastest"))
    check_same_error(lambda lib: lib.nn.Linear(2, 2).compile(mode="default", options={"a": 1}))


@pytest.mark.parametrize("method", ["ipu", "mtia"])
@pytest.mark.parametrize("device", [None, 0, 1, -1, "cpu", "ipu", "mtia", "cuda"])
def test_ipu_and_mtia_fail_as_in_a_cpu_only_torch(method, device):
    check_same_error(lambda lib: getattr(lib.nn.Linear(2, 2), method)(device))


@pytest.mark.parametrize("method", ["ipu", "mtia"])
def test_ipu_and_mtia_of_a_module_without_tensors(method):
    def run(lib):
        relu = lib.nn.ReLU()
        return getattr(relu, method)() is relu, getattr(relu, method)(0) is relu

    assert run(gradiente) == run(torch) == (True, True)


def test_private_state_dict_hook_may_return_a_new_state_dict():
    def run(lib):
        seen = []

        def replace(module, state_dict, prefix, local_metadata):
            seen.append((type(module).__name__, prefix, sorted(state_dict)))
            return {"only": lib.ones(1)}

        net = lib.nn.Sequential(lib.nn.Linear(1, 1))
        net[0]._register_state_dict_hook(replace)     # a child's new dict is dropped
        child_keys = sorted(net.state_dict())
        net._register_state_dict_hook(replace)        # the root's is what state_dict() returns
        root_keys = sorted(net.state_dict())
        return seen, child_keys, root_keys

    assert run(gradiente) == run(torch)


def test_public_state_dict_post_hook_must_return_none():
    def returns_a_dict(lib):
        net = lib.nn.Linear(1, 1)
        net.register_state_dict_post_hook(lambda m, sd, prefix, meta: {})
        net.state_dict()

    def registered_twice(lib):
        def hook(m, sd, prefix, meta):
            return None

        net = lib.nn.Linear(1, 1)
        net.register_state_dict_post_hook(hook)
        net._register_state_dict_hook(hook)

    check_same_error(returns_a_dict)
    check_same_error(registered_twice)


def test_state_dict_positional_arguments_warn():
    def run(lib):
        net = lib.nn.Linear(1, 1)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sd = net.state_dict(None, "pre.")
        return sorted(sd), warning_texts(caught)

    (g_keys, g_warned), (t_keys, t_warned) = run(gradiente), run(torch)
    assert g_keys == t_keys == ["pre.bias", "pre.weight"]
    assert g_warned == t_warned and t_warned[0][2] == os.path.basename(__file__)


def test_private_load_state_dict_pre_hook_with_and_without_module():
    def run(lib):
        seen = []
        net = lib.nn.Sequential(lib.nn.Linear(1, 1))

        def without(state_dict, prefix, local_metadata, strict, missing, unexpected, errors):
            seen.append(("without", prefix, sorted(state_dict), strict))
            state_dict[prefix + "weight"] = lib.full((1, 1), 7.0)

        def with_module(module, state_dict, prefix, local_metadata, strict, missing, unexpected, errors):
            seen.append(("with", type(module).__name__, prefix))

        net[0]._register_load_state_dict_pre_hook(without)
        handle = net._register_load_state_dict_pre_hook(with_module, with_module=True)
        net[0].register_load_state_dict_pre_hook(with_module)
        net.load_state_dict({"0.weight": lib.zeros(1, 1), "0.bias": lib.zeros(1)})
        handle.remove()
        net.load_state_dict({"0.weight": lib.zeros(1, 1), "0.bias": lib.zeros(1)})
        return seen, net[0].weight.tolist()

    assert run(gradiente) == run(torch)


def test_load_state_dict_pre_hook_of_a_dead_module():
    def run(lib):
        net = lib.nn.Linear(1, 1)
        net.register_load_state_dict_pre_hook(lambda *a: None)
        hook = next(iter(net._load_state_dict_pre_hooks.values()))
        del net
        hook({}, "", {}, True, [], [], [])

    check_same_error(run)


def test_get_backward_hooks_split_by_kind():
    def run(lib):
        mod = lib.nn.modules.module

        def a(*args):
            return None

        def b(*args):
            return None

        def c(*args):
            return None

        m = lib.nn.Linear(1, 1)
        empty = m._get_backward_hooks(), m._get_backward_pre_hooks()
        handle = mod.register_module_backward_hook(a)
        pre = mod.register_module_full_backward_pre_hook(c)
        m.register_backward_hook(b)
        m.register_full_backward_pre_hook(a)
        try:
            names = ([[h.__name__ for h in kind] for kind in m._get_backward_hooks()],
                     [h.__name__ for h in m._get_backward_pre_hooks()])
        finally:
            handle.remove()
            pre.remove()
        return empty, names

    assert run(gradiente) == run(torch) == ((([], []), []), ([[], ["a", "b"]], ["c", "a"]))


def test_module_level_names_match_torch():
    ours, theirs = gradiente.nn.modules.module, torch.nn.modules.module
    assert ours.__all__ == theirs.__all__
    for name in ("register_module_backward_hook", "register_module_full_backward_hook",
                 "register_module_full_backward_pre_hook", "register_module_buffer_registration_hook",
                 "register_module_module_registration_hook", "register_module_parameter_registration_hook",
                 "register_module_forward_hook", "register_module_forward_pre_hook"):
        assert name in ours.__all__ and name in theirs.__all__
        assert callable(getattr(ours, name)) and callable(getattr(theirs, name))
    missing = {n for n in dir(torch.nn.Module) if not n.startswith("__")} - set(dir(gradiente.nn.Module))
    assert missing == set()


def test_unserializable_hook_and_warn_if_has_hooks():
    def run(lib):
        hooks = lib.utils.hooks

        def loud(grad):
            return grad

        @hooks.unserializable_hook
        def quiet(grad):
            return grad

        leaf = lib.ones(2, requires_grad=True)
        leaf.register_hook(loud)
        leaf.register_hook(quiet)
        inner = leaf * 2
        inner.register_hook(quiet)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            hooks.warn_if_has_hooks(leaf)
            hooks.warn_if_has_hooks(inner)
            hooks.warn_if_has_hooks(lib.ones(2))
        texts = [(c, m.replace(hex(id(loud)), "ADDR"), f) for c, m, f in warning_texts(caught)]
        return quiet.__torch_unserializable__, texts

    assert run(gradiente) == run(torch)
    assert len(run(gradiente)[1]) == 1

