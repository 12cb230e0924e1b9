"""The engine's walk and its ownership rule (``core/engine.py``): a leaf keeps the gradient array that reaches
it only when the engine knows nobody else holds that memory, and otherwise copies it. Whatever the path, a
leaf's ``.grad`` never shares memory with another leaf's, with a user's tensor, or with what a hook, a custom
Function or ``autograd.grad`` was given; it is C-contiguous and of the leaf's dtype, as PyTorch stores it."""

import numpy as np
import pytest
from harness import all_op_specs, make_tensors

import gradiente
from gradiente import autograd
from gradiente.core import rules
from gradiente.core.node import Node

F = gradiente.nn.functional


@pytest.fixture
def kept(monkeypatch):
    """Record, per leaf, whether the engine vouched for the gradient (``owned``) and whether the leaf kept
    that very array as its ``.grad`` (no copy)."""
    record = {}
    accumulate = rules.NumpyOps.accumulate

    def recording(variable, grad, owned=False):
        first = variable._grad is None
        accumulate(variable, grad, owned)
        if first:
            record[id(variable)] = (owned, variable._grad._data is grad)
    monkeypatch.setattr(rules.NumpyOps, "accumulate", staticmethod(recording))
    return lambda t: record.get(id(t))


def _leaf(*shape, dtype=gradiente.float32):
    return gradiente.arange(1, 1 + int(np.prod(shape)), dtype=dtype).reshape(shape).requires_grad_()


def _assert_own_memory(grads, others):
    """No gradient shares memory with another one or with any of ``others`` (arrays or tensors)."""
    arrays = [g.detach().numpy() for g in grads]
    others = [o.detach().numpy() if isinstance(o, gradiente.Tensor) else o for o in others]
    for i, g in enumerate(arrays):
        for other in arrays[i + 1:] + others:
            assert not np.shares_memory(g, other)


# --- the ownership rule, case by case: kept (no copy) only where the engine knows it owns the array ----------

def test_a_rules_new_array_is_kept(kept):
    x = _leaf(3)
    (x * 2).sum().backward()
    assert kept(x) == (True, True)


def test_a_sum_the_engine_made_is_kept(kept):
    x, w = _leaf(3), _leaf(3)
    ((x * w) * w * w).sum().backward()           # three gradients summed into w's buffer
    assert kept(w) == (True, True)


def test_a_linear_layers_weight_gradient_is_kept_and_contiguous(kept):
    # AddmmBackward0 computes dW already transposed, TBackward0 transposes it back: a view of new memory,
    # passed on along one edge, which the leaf keeps. The bias gradient is the engine's own reduction.
    inp = gradiente.ones(4, 3)
    w, b = _leaf(2, 3), _leaf(2)
    F.linear(inp, w, b).pow(2).sum().backward()
    assert kept(w) == (True, True) and kept(b) == (True, True)
    assert w.grad.numpy().flags.c_contiguous


def test_one_array_sent_to_two_leaves_is_copied_by_the_first_and_kept_by_the_second(kept):
    x, y = _leaf(3), _leaf(3)
    ((x + y) * 2).sum().backward()               # AddBackward0 sends MulBackward0's new array to both leaves
    assert sorted([kept(x), kept(y)]) == [(False, False), (True, True)]
    _assert_own_memory([x.grad, y.grad], [])
    x.grad.add_(1)
    np.testing.assert_array_equal(y.grad.numpy(), [2, 2, 2])
    a, b = _leaf(3), _leaf(3)
    (a + b).sum().backward()                     # a broadcast view of backward()'s own 1: read-only, so copied
    assert sorted([kept(a), kept(b)]) == [(False, False), (True, False)]      # the second may, but cannot
    c, d = _leaf(3), _leaf(3)
    (c + d).backward(gradiente.ones(3))          # the caller's gradient, passed on to both: never kept
    assert kept(c) == (False, False) and kept(d) == (False, False)
    _assert_own_memory([c.grad, d.grad], [])
    _assert_own_memory([a.grad, b.grad], [])


def test_a_callers_gradient_is_never_kept(kept):
    x = _leaf(3)
    g = gradiente.ones(3)
    x.backward(g)                                # straight into the leaf
    assert kept(x) == (False, False)
    y = _leaf(3)
    (y + 0).backward(g)                          # passed on by AddBackward0
    assert kept(y) == (False, False)
    z = _leaf(2, 3)
    gt = gradiente.ones(3, 2)
    z.t().backward(gt)                           # as a view (TBackward0)
    assert kept(z) == (False, False)
    _assert_own_memory([x.grad, y.grad, z.grad], [g, gt])


def test_what_a_hook_saw_is_never_kept(kept):
    seen = []
    x = _leaf(3)
    x.register_hook(seen.append)
    (x * 2).sum().backward()
    assert kept(x)[0] is False
    _assert_own_memory([x.grad], seen)
    x.grad.zero_()
    np.testing.assert_array_equal(seen[0].numpy(), [2, 2, 2])


def test_a_leaf_keeps_only_an_owned_contiguous_array_of_its_dtype_spanning_its_memory():
    def keeps(grad, owned=True):
        leaf = gradiente.zeros(grad.shape)                           # float32
        rules.numpy_ops.accumulate(leaf, grad, owned)
        assert leaf.grad.numpy().flags.c_contiguous and leaf.grad.numpy().dtype == np.float32
        return leaf.grad.numpy() is grad

    assert keeps(np.ones((3, 4), np.float32)) and not keeps(np.ones((3, 4), np.float32), owned=False)
    assert keeps(np.ones(12, np.float32).reshape(3, 4))              # a view spanning all its base's memory
    assert not keeps(np.ones((4, 3), np.float32).T)                  # not C-contiguous
    assert not keeps(np.ones((3, 8), np.float32)[:, :4])             # a part of a larger array
    assert not keeps(np.ones((2, 3, 4), np.float32)[0])
    assert not keeps(np.ones((3, 4), np.float64))                    # another dtype
    assert not keeps(np.broadcast_to(np.ones((3, 4), np.float32), (3, 4)))      # read-only
    strided = np.lib.stride_tricks.as_strided(np.ones((3, 4), np.float32), (3, 4))
    assert not keeps(strided)                                        # a base the engine cannot see through


# --- no aliasing, whatever the path -------------------------------------------------------------------------

def test_passing_through_views_and_sums_never_aliases():
    x, y = _leaf(2, 3), _leaf(3)
    s = x + y                                    # broadcast: y's gradient is reduced, x's passed on
    out = (s.t().reshape(6) * 1).reshape(3, 2).t()
    g = gradiente.rand(2, 3)
    out.backward(g)
    _assert_own_memory([x.grad, y.grad], [g, x, y, s, out])
    a = _leaf(3)
    (a + a).sum().backward()                     # one array twice into one leaf: summed, new memory
    np.testing.assert_array_equal(a.grad.numpy(), [2, 2, 2])
    b = _leaf(3)
    b.expand(2, 3).backward(gradiente.ones(2, 3))
    np.testing.assert_array_equal(b.grad.numpy(), [2, 2, 2])


def test_non_leaf_hooks_and_their_replacements_are_never_kept():
    seen = []
    x = _leaf(3)
    h = x + 0                                    # AddBackward0 passes the hooked gradient on unchanged
    h.register_hook(seen.append)
    h.sum().backward()
    _assert_own_memory([x.grad], seen)
    replacement = gradiente.full((3,), 5.0)
    y = _leaf(3)
    k = y * 1
    k.register_hook(lambda g: replacement)      # a hook's own tensor, passed on to y
    (k + 0).sum().backward()
    np.testing.assert_array_equal(y.grad.numpy(), [5, 5, 5])
    _assert_own_memory([y.grad], [replacement])


def test_node_hooks_and_their_replacements_are_never_kept():
    given = gradiente.full((3,), 7.0)
    x = _leaf(3)
    h = x + 0
    h.grad_fn.register_prehook(lambda grads: (given,))
    h.sum().backward()
    _assert_own_memory([x.grad], [given])
    y = _leaf(3)
    k = y * 2
    k.grad_fn.register_hook(lambda grad_inputs, grad_outputs: (given, None))
    k.sum().backward()
    np.testing.assert_array_equal(y.grad.numpy(), [7, 7, 7])
    _assert_own_memory([y.grad], [given])
    seen = []
    z = _leaf(3)
    m = z + 0
    m.grad_fn.register_hook(lambda grad_inputs, grad_outputs: seen.extend(grad_inputs + grad_outputs))
    m.sum().backward()
    _assert_own_memory([z.grad], [g for g in seen if g is not None])


def test_retained_and_captured_gradients_are_copies():
    x = _leaf(2, 3)
    h, t = x + 0, x.t()                          # their gradients reach x unchanged, and as a view
    h.retain_grad()
    t.retain_grad()
    ((h * 2).sum() + (t * 3).sum()).backward()
    _assert_own_memory([x.grad, h.grad, t.grad], [])
    y = _leaf(3)
    k = y + 0
    (gk,) = autograd.grad((k * 2).sum(), [k], retain_graph=True)
    (k * 2).sum().backward(inputs=[y, k])
    _assert_own_memory([y.grad, k.grad], [gk])
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 3), 5.0))


def test_autograd_grad_hands_over_only_memory_nobody_else_holds():
    """``autograd.grad`` returns a captured array without a copy only when the engine owns it alone; every path
    where the same memory could reach two results, the caller or the graph gets a copy."""
    x, w, y = _leaf(2, 3), _leaf(2, 3), _leaf(2, 3)
    v = gradiente.ones(2, 3)
    gx, gw, gx_again = autograd.grad(x * w, [x, w, x], v)           # x listed twice: two distinct results
    _assert_own_memory([gx, gw, gx_again], [x, w, v])
    np.testing.assert_array_equal(gx.numpy(), w.detach().numpy())
    gx, gy = autograd.grad((x + y).sum(), [x, y])                    # AddBackward0 sends one array both ways
    _assert_own_memory([gx, gy], [x, y])
    (gx,) = autograd.grad(x.view(6), [x], gradiente.arange(6.0))     # the caller's array, reshaped
    _assert_own_memory([gx], [x])
    h = x * 2
    gh, gx = autograd.grad((h * w).sum(), [h, x])                    # a captured node that also runs
    _assert_own_memory([gh, gx], [x, w, h])
    np.testing.assert_array_equal(gx.numpy(), 2 * w.detach().numpy())
    gx.add_(1)                                                       # results are the caller's to change
    np.testing.assert_array_equal(gh.numpy(), w.detach().numpy())


def _function(backward):
    """A custom Function ``x * 1`` with the given ``backward(ctx, grad)``."""
    return type("Custom", (autograd.Function,), {"forward": staticmethod(lambda ctx, x: x * 1),
                                                  "backward": staticmethod(backward)})


def test_custom_functions_results_are_never_kept():
    stash, given = gradiente.full((3,), 3.0), []
    returns_stash = _function(lambda ctx, grad: stash)
    passes_on = _function(lambda ctx, grad: given.append(grad) or grad)
    x, y, z = _leaf(3), _leaf(3), _leaf(3)
    returns_stash.apply(x).sum().backward()
    passes_on.apply(y * 2 + 0).sum().backward()
    passes_on.apply(z).sum().backward()
    np.testing.assert_array_equal(y.grad.numpy(), [2, 2, 2])
    _assert_own_memory([x.grad, y.grad, z.grad], [stash] + given)


def test_what_user_code_returned_and_let_go_is_kept_as_pytorch_keeps_it(kept):
    # PyTorch steals a gradient whose Tensor nobody else holds; the engine knows it by weak reference.
    passes_on = _function(lambda ctx, grad: grad)
    twice = type("Twice", (autograd.Function,), {"forward": staticmethod(lambda ctx, a, b: a + b),
                                                  "backward": staticmethod(lambda ctx, grad: (grad, grad))})
    x = _leaf(3)
    passes_on.apply(x * 2 + 0).sum().backward()
    assert kept(x) == (True, True)
    a, b = _leaf(3), _leaf(3)
    (twice.apply(a, b) * 2).sum().backward()     # one array along two edges: one leaf copies, the other keeps
    assert sorted([kept(a), kept(b)]) == [(False, False), (True, True)]
    _assert_own_memory([a.grad, b.grad], [])
    y = _leaf(3)
    y.register_hook(lambda grad: grad * 3)       # a new tensor the hook does not keep
    (y * 2).sum().backward()
    assert kept(y) == (True, True)
    kept_by_hook, z = [], _leaf(3)
    z.register_hook(lambda grad: kept_by_hook.append(grad * 3) or kept_by_hook[-1])
    (z * 2).sum().backward()
    assert kept(z)[1] is False
    _assert_own_memory([z.grad], kept_by_hook)


def test_a_leafs_node_post_hook_runs_after_its_post_accumulate_hooks():
    def hooks_in_order(lib):
        x = lib.ones(3, requires_grad=True)
        node = x.view_as(x).grad_fn.next_functions[0][0]
        order = []
        x.register_post_accumulate_grad_hook(lambda t: order.append(("tensor", t.grad.tolist())))
        node.register_hook(lambda grad_inputs, grad_outputs: order.append(("node", grad_inputs,
                                                                           grad_outputs[0].tolist())))
        (x * 2).sum().backward()
        return order

    assert hooks_in_order(gradiente) == hooks_in_order(pytest.importorskip("torch"))
    assert hooks_in_order(gradiente) == [("tensor", [2.0] * 3), ("node", (), [2.0] * 3)]


def test_grad_has_the_leafs_layout_and_dtype():
    # PyTorch's gradient layout contract: a dense leaf's gradient has the leaf's strides (core/grad_layout.py)
    x = gradiente.ones(4, 3).t().detach().requires_grad_()      # a non-contiguous leaf
    (x * gradiente.ones(3, 4, dtype=gradiente.float64)).sum().backward()
    assert x.grad.dtype is gradiente.float32 and x.grad.stride() == x.stride() == (1, 3)
    w = _leaf(3, 2)
    (gradiente.ones(5, 3) @ w).sum().backward()
    assert w.grad.numpy().flags.c_contiguous


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_create_graph_gives_each_leaf_its_own_recorded_copy():
    torch = pytest.importorskip("torch")
    names = []
    for lib in (torch, gradiente):
        x, a, b = (lib.ones(3, requires_grad=True) for _ in range(3))
        ((x * x) * (a + b)).sum().backward(create_graph=True)      # one tensor, requiring grad, reaches a and b
        assert a.grad is not b.grad
        a.grad.detach().add_(1)
        assert b.grad.detach().numpy().tolist() == [1, 1, 1]
        h = lib.ones(3, requires_grad=True) * 2
        y = lib.ones(3, requires_grad=True)
        y.backward(h, create_graph=True)
        assert not np.shares_memory(y.grad.detach().numpy(), h.detach().numpy())
        names.append((type(a.grad.grad_fn).__name__, type(y.grad.grad_fn).__name__))
    assert names[0] == names[1]


# --- the rule contract, on every op of the op tables --------------------------------------------------------

def _specs():
    return [spec for _, spec in all_op_specs(skip=(__name__,))]


def _node_classes():
    found, stack = [], [Node]
    while stack:
        for cls in stack.pop().__subclasses__():
            if cls not in found:
                found.append(cls)
                stack.append(cls)
    return found


def _kept_arrays(node):
    """The arrays a node keeps: its saved values and its attributes (one level into tuples and lists)."""
    values = []
    for v in (*(node._saved or ()), *node.__dict__.values()):
        values += v if isinstance(v, (tuple, list)) else [v]
    for v in values:
        array = v if isinstance(v, np.ndarray) else getattr(v, "_data", getattr(v, "array", None))
        if isinstance(array, np.ndarray):
            yield array


@pytest.fixture
def rules_checked(monkeypatch):
    """Every built-in rule wrapped: a result that shares memory with a value its node keeps is recorded."""
    from gradiente.autograd.function import BackwardCFunction
    broken = []
    for cls in _node_classes():
        if "backward" not in cls.__dict__ or issubclass(cls, BackwardCFunction):
            continue

        def checked(self, ops, *grads, _rule=cls.__dict__["backward"]):
            results = _rule(self, ops, *grads)
            if not ops.recording:
                kept = list(_kept_arrays(self))
                for r in results if isinstance(results, tuple) else (results,):
                    if isinstance(r, np.ndarray) and any(np.may_share_memory(r, k) for k in kept):
                        broken.append(type(self).__name__)
            return results
        monkeypatch.setattr(cls, "backward", checked)
    return broken


@pytest.mark.filterwarnings("ignore")
def test_rules_return_new_memory_or_incoming_gradients_and_leaves_own_theirs(rules_checked):
    # The contract the ownership rule rests on: a built-in rule never returns (a view of) a value its node
    # keeps. And end to end: no input's gradient shares memory with an input, the output, the upstream
    # gradient, or another input's gradient, on contiguous and strided inputs.
    specs = _specs()
    assert len(specs) > 500
    checked = 0
    for spec in specs:
        for contiguous in (True, False) if not spec.extra.get("contiguous_only") else (True,):
            inputs = make_tensors(gradiente, spec, spec.shapes[0], contiguous=contiguous)
            out = spec.fn(gradiente, *inputs)
            out = out[0] if isinstance(out, (tuple, list)) else out
            if not isinstance(out, gradiente.Tensor) or not out.requires_grad:
                continue
            upstream = gradiente.from_numpy(np.random.RandomState(1).uniform(0.5, 1.5, tuple(out.shape))
                                            .astype(out.detach().numpy().dtype))
            out.backward(upstream)
            grads = [t.grad for t in inputs if t.grad is not None]
            _assert_own_memory(grads, inputs + [out, upstream])
            checked += 1
    assert checked > 500
    assert not rules_checked, sorted(set(rules_checked))
