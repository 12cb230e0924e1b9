"""Saved tensors: the hooks that pack and unpack what an op keeps for backward (``autograd.graph``), the names
under which a node shows what it saved (``grad_fn._saved_<name>``, ``_raw_saved_<name>``), and the errors once
the graph is freed. Each behaviour runs on gradiente and on PyTorch, and the two must agree."""
import numpy as np
import pytest
import torch as ref

import gradiente as torch


def both(fn):
    """``fn(lib)`` on gradiente and on PyTorch."""
    return fn(torch), fn(ref)


def raised(fn, lib):
    """The (type name, message) ``fn(lib)`` raises."""
    with pytest.raises(Exception) as info:
        fn(lib)
    return type(info.value).__name__, str(info.value)


def same_error(fn):
    ours, theirs = raised(fn, torch), raised(fn, ref)
    assert ours == theirs
    return ours


def leaf(lib, values=(0.5, -1.0, 2.0)):
    return lib.tensor(values, dtype=lib.float64, requires_grad=True)


# --- saved_tensors_hooks ----------------------------------------------------------------------------------
def test_pack_runs_at_save_and_unpack_at_backward_as_often_as_in_pytorch():
    def run(lib):
        calls = []

        def pack(t):
            calls.append("pack")
            return t.detach()

        def unpack(t):
            calls.append("unpack")
            return t

        x = leaf(lib)
        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = ((x * x).sin() * 3).exp().sum()     # x twice, x*x, exp's result; 3 is not packed
        forward = list(calls)
        y.backward()
        return forward, calls, x.grad.numpy()
    (f1, c1, g1), (f2, c2, g2) = both(run)
    assert f1 == f2 and c1 == c2
    np.testing.assert_allclose(g1, g2)


def test_a_hook_that_changes_the_value_changes_the_gradient_as_in_pytorch():
    def run(lib):
        x = leaf(lib)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t * 2, lambda t: t):
            y = x.pow(3).sum()
        g, = lib.autograd.grad(y, x, create_graph=True)
        g.sum().backward()
        return g.detach().numpy(), x.grad.numpy()
    (g1, d1), (g2, d2) = both(run)
    np.testing.assert_allclose(g1, g2)
    np.testing.assert_allclose(d1, d2)


def test_nested_hooks_use_the_innermost_pair():
    def run(lib):
        with lib.autograd.graph.saved_tensors_hooks(lambda t: 3 * t, lambda t: 3 * t):
            b = leaf(lib)
            with lib.autograd.graph.saved_tensors_hooks(lambda t: 5 * t, lambda t: 5 * t):
                a = leaf(lib)
                y = a * a
            z = b * b
        y.sum().backward()
        z.sum().backward()
        return a.grad.numpy(), b.grad.numpy()
    (a1, b1), (a2, b2) = both(run)
    np.testing.assert_allclose(a1, a2)
    np.testing.assert_allclose(b1, b2)


def test_errors_of_the_hooks_reach_the_caller():
    class Packing(Exception):
        pass

    def bad_pack(t):
        raise Packing("pack")

    def unpack_gives_a_number(lib):
        x = leaf(lib)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 1):
            y = x.sin().sum()
        y.backward()

    for lib in (torch, ref):
        x = leaf(lib)
        with lib.autograd.graph.saved_tensors_hooks(bad_pack, lambda t: t), pytest.raises(Packing):
            x.sin()
    assert same_error(unpack_gives_a_number)[0] == "TypeError"


def test_disabled_hooks_raise_the_given_message():
    def enter_hooks_while_disabled(lib):
        with lib.autograd.graph.disable_saved_tensors_hooks("no hooks here"), \
                lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            pass

    def disable_while_hooks_are_set(lib):
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t), \
                lib.autograd.graph.disable_saved_tensors_hooks("not now"):
            pass

    assert same_error(enter_hooks_while_disabled) == ("RuntimeError", "no hooks here")
    assert same_error(disable_while_hooks_are_set) == ("RuntimeError", "not now")
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):     # enabled again after both
        pass


def test_save_on_cpu_keeps_values_and_gradients():
    def run(lib):
        x = leaf(lib)
        with lib.autograd.graph.save_on_cpu():
            y = (x.exp() * x).sum()
        y.backward()
        return x.grad.numpy()
    ours, theirs = both(run)
    np.testing.assert_allclose(ours, theirs)


def test_a_number_the_op_keeps_is_never_packed():
    def boom(_):
        raise AssertionError("a number went through a hook")

    x = leaf(torch)
    with torch.autograd.graph.saved_tensors_hooks(boom, boom):
        x2 = x.detach()
        out = (x2 * 3).sum()
    assert out.item() == pytest.approx(4.5)


def test_no_hook_set_means_no_packing_cost_beyond_a_flag():
    from gradiente.core.node import saved_hooks
    x = leaf(torch)
    y = x * x
    assert not saved_hooks.stack and y.grad_fn._packed is None


# --- the node's saved values, under PyTorch's names --------------------------------------------------------
@pytest.mark.parametrize("op, names", [
    (lambda lib, a, b: a * b, ("self", "other")),
    (lambda lib, a, b: a / b, ("self", "other")),
    (lambda lib, a, b: a.pow(b), ("self", "exponent", "result")),
    (lambda lib, a, b: a.exp(), ("result",)),
    (lambda lib, a, b: a.sin(), ("self",)),
    (lambda lib, a, b: a.tanh(), ("result",)),
    (lambda lib, a, b: a.sigmoid(), ("result",)),
    (lambda lib, a, b: a.relu(), ("result",)),
    (lambda lib, a, b: a.softmax(0), ("result",)),
    (lambda lib, a, b: a.reshape(3, 1).mm(b.reshape(1, 3)), ("self", "mat2")),
    (lambda lib, a, b: a.log(), ("self",)),
])
def test_saved_tensors_have_pytorch_names_and_values(op, names):
    def run(lib):
        a = lib.tensor([0.5, 1.5, 2.0], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([1.0, 2.0, 0.5], dtype=lib.float64, requires_grad=True)
        out = op(lib, a, b)
        node = out.grad_fn
        values = {n: getattr(node, "_saved_" + n).detach().numpy() for n in names}
        return values, [getattr(node, "_saved_" + n) is a for n in names]
    (v1, same1), (v2, same2) = both(run)
    for n in names:
        np.testing.assert_allclose(v1[n], v2[n])
    assert same1 == same2


def test_non_tensor_saved_values_match_pytorch():
    def run(lib):
        a = lib.ones(2, 3, requires_grad=True)
        s, m, sm = a.sum(1, keepdim=True), a.mean(), a.softmax(1)
        return (tuple(s.grad_fn._saved_dim), s.grad_fn._saved_keepdim, tuple(s.grad_fn._saved_self_sym_sizes),
                m.grad_fn._saved_self_sym_numel, sm.grad_fn._saved_dim, (a ** 2).grad_fn._saved_exponent)
    ours, theirs = both(run)
    assert ours == theirs


def test_saved_result_is_the_output_with_its_history_and_version_counter():
    for lib in (torch, ref):
        a = leaf(lib)
        b = a.exp()
        result = b.grad_fn._saved_result
        assert result.grad_fn is b.grad_fn and result is not b
        with lib.no_grad():
            b += 1
        assert result._version == b._version == 1
        np.testing.assert_allclose(result.detach().numpy(), b.detach().numpy())


def test_a_wrapped_number_is_shown_as_a_tensor():
    ours, theirs = both(lambda lib: (leaf(lib) * 2).grad_fn._saved_other)
    assert ours.item() == theirs.item() and ours.dtype == torch.int64 and theirs.dtype == ref.int64


def test_reading_saved_values_after_backward_raises_pytorchs_error():
    def read_after_backward(lib):
        y = leaf(lib).exp()
        y.sum().backward()
        return y.grad_fn._saved_result

    def hook_after_backward(lib):
        y = leaf(lib).sin()
        y.sum().backward()
        y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)

    assert same_error(read_after_backward)[0] == "RuntimeError"
    assert same_error(hook_after_backward)[0] == "RuntimeError"


def test_a_changed_saved_tensor_raises_on_read_as_in_pytorch():
    def run(lib):
        y = leaf(lib).exp()
        with lib.no_grad():
            y.mul_(2)
        return y.grad_fn._saved_result
    same_error(run)


# --- _raw_saved_*: hooks on one saved value -----------------------------------------------------------------
@pytest.mark.parametrize("make", [leaf, lambda lib: leaf(lib) + 1], ids=["leaf", "non-leaf"])
def test_register_hooks_on_one_saved_value(make):
    def run(lib):
        a = make(lib)
        y = a * a
        y.grad_fn._raw_saved_self.register_hooks(lambda t: 2 * t, lambda t: t)
        shown = y.grad_fn._saved_self
        history = shown.grad_fn is a.grad_fn
        y.sum().backward()
        return shown.detach().numpy(), history
    (s1, h1), (s2, h2) = both(run)
    np.testing.assert_allclose(s1, s2)
    assert h1 and h2


@pytest.mark.parametrize("saved", ["leaf", "non-leaf", "output"])
def test_register_hooks_hand_the_hooks_the_value_without_its_history(saved):
    """The hooks of ``_raw_saved_*.register_hooks`` see the saved value as PyTorch hands it: a tensor that neither
    requires grad nor has a grad_fn (the saved-tensors-hooks context hands the tensor itself); backward still
    reaches the inputs through the history the node kept."""
    def run(lib):
        seen = []

        def look(t):
            seen.append((t.requires_grad, t.grad_fn is None, t.is_leaf))
            return t
        a = leaf(lib)
        x = a if saved == "leaf" else a * 3
        y = x.exp() if saved == "output" else x.sin()
        raw = y.grad_fn._raw_saved_result if saved == "output" else y.grad_fn._raw_saved_self
        raw.register_hooks(look, look)
        y.sum().backward()
        return seen, a.grad.numpy()
    (seen1, g1), (seen2, g2) = both(run)
    assert seen1 == seen2 == [(False, True, True)] * 2
    np.testing.assert_allclose(g1, g2)


def test_saved_tensor_repr_names_pytorchs_module():
    def run(lib):
        return repr(leaf(lib).sin().grad_fn._raw_saved_self).split(" object at ")[0]
    ours, theirs = both(run)
    assert ours.replace("gradiente.", "torch.") == theirs == "<torch._C._autograd.SavedTensor"


def test_register_hooks_errors_match_pytorch():
    def twice(lib):
        y = leaf(lib).sin()
        y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
        y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)

    def pack_changes_its_input(lib):
        y = leaf(lib) * 2
        t = y * y

        def double(x):
            x *= 2
            return x
        t.grad_fn._raw_saved_self.register_hooks(double, lambda x: x)

    def unpack_returns_a_number(lib):
        y = leaf(lib).sin()
        y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: 1)
        return y.grad_fn._saved_self

    def wrong_arity(lib):
        y = leaf(lib).sin()
        y.grad_fn._raw_saved_self.register_hooks(lambda t, extra: t, lambda t: t)

    for case in (twice, pack_changes_its_input, unpack_returns_a_number):
        same_error(case)
    assert raised(wrong_arity, torch)[0] == raised(wrong_arity, ref)[0] == "TypeError"


def test_saved_tensor_cannot_be_made_from_python():
    assert same_error(lambda lib: lib.autograd.SavedTensor()) == (
        "RuntimeError", "Trying to create a SavedTensor object from Python is forbidden.")


# --- allow_mutation_on_saved_tensors -----------------------------------------------------------------------
def test_allow_mutation_gives_the_gradient_of_the_values_as_saved():
    def run(lib):
        a = lib.tensor([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]], requires_grad=True)
        with lib.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
            b = a.clone()
            out = (b ** 2).sum()
            b.sin_()
            out.backward()
        return a.grad.numpy(), len(ctx.cloned)
    (g1, n1), (g2, n2) = both(run)
    np.testing.assert_allclose(g1, g2)
    assert n1 == n2 == 0


def test_allow_mutation_counts_clones_as_pytorch_does():
    def run(lib):
        counts = []
        with lib.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
            a = lib.randn(2, 3, requires_grad=True).clone()
            b = a ** 2
            a.sin_()
            c = a ** 2
            a.sin_()
            counts.append(len(ctx.cloned))
            del b
            counts.append(len(ctx.cloned))
            del c
            counts.append(len(ctx.cloned))
        return counts
    assert both(run)[0] == both(run)[1] == [2, 1, 0]


def test_allow_mutation_errors_match_pytorch():
    def nested(lib):
        with lib.autograd.graph.allow_mutation_on_saved_tensors(), \
                lib.autograd.graph.allow_mutation_on_saved_tensors():
            pass

    def backward_outside(lib):
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            out = (leaf(lib) ** 2).sum()
        out.backward()

    same_error(nested)
    same_error(backward_outside)


def _pack_and_unpack_order(lib, op):
    """The shapes a printing pair of saved-tensor hooks sees, in order, for ``op`` and its backward."""
    seen = []

    def pack(x):
        seen.append(("pack", tuple(x.shape)))
        return x

    def unpack(x):
        seen.append(("unpack", tuple(x.shape)))
        return x
    lib.manual_seed(0)
    a, b = lib.randn(2, 3, requires_grad=True), lib.randn(1, 3, requires_grad=True)
    m, bias = lib.randn(3, 4, requires_grad=True), lib.randn(4, requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = op(lib, a, b.abs() + 1, m, bias)
    y.sum().backward()
    return seen


@pytest.mark.parametrize("op", [
    lambda lib, a, b, m, bias: a * b, lambda lib, a, b, m, bias: a / b, lambda lib, a, b, m, bias: a @ m,
    lambda lib, a, b, m, bias: lib.addmm(bias, a, m), lambda lib, a, b, m, bias: lib.nn.functional.linear(a, m.t()),
    lambda lib, a, b, m, bias: a.abs() ** b, lambda lib, a, b, m, bias: lib.atan2(a, b),
    lambda lib, a, b, m, bias: lib.hypot(a, b), lambda lib, a, b, m, bias: lib.maximum(a, b),
    lambda lib, a, b, m, bias: a.expand(5, 2, 3) @ m,
], ids=["mul", "div", "mm", "addmm", "linear", "pow", "atan2", "hypot", "maximum", "folded_matmul"])
def test_saved_tensors_are_packed_and_unpacked_in_torchs_order(op):
    # the saved-tensors-hooks tutorial prints in its hooks: a * b packs b, then a
    assert _pack_and_unpack_order(torch, op) == _pack_and_unpack_order(ref, op)


def _saved_attributes(lib):
    a, b = lib.randn(3, requires_grad=True), lib.randn(3, requires_grad=True)

    class Twice(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2
    outputs = [a * b, a / b, a.exp(), a.sum(), a @ b, a.abs() ** b, a.max(), a.sin(), a.tanh(), Twice.apply(a),
               a + b, a[None] @ lib.randn(3, 2), a[1:]]
    return [[n for n in dir(y.grad_fn) if n.startswith(("_saved_", "_raw_saved_"))] for y in outputs]


def test_dir_of_a_node_lists_the_saved_values_as_torchs_does():
    """torchviz's show_saved walks ``dir(grad_fn)`` for ``_saved_`` names: gradiente lists its saved tensors under
    PyTorch's names (a scalar or a size it keeps under another form may be missing), and nothing of its own."""
    ours, theirs = _saved_attributes(torch), _saved_attributes(ref)
    assert ours[:11] == theirs[:11]
    for o, t in zip(ours, theirs, strict=True):
        assert set(o) <= set(t)
