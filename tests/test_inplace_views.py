"""In-place changes through views, differential against PyTorch: the base's history rebased through
CopySlices, the views' ``grad_fn`` regenerated (AsStridedBackward0), shared version counters, gradients of
every leaf bit for bit, and PyTorch's errors for views that may not be changed in place."""
import numpy as np
import pytest
from harness import OpSpec, grad_fn_name, on_both, spec_tests

import gradiente

torch = pytest.importorskip("torch")


def _leaves(lib, dtype):
    """x (3, 4), w (4,) and y (0-d), all requiring grad, with fixed values of both signs."""
    dt = getattr(lib, dtype)
    x = lib.tensor(np.arange(12.0).reshape(3, 4) / 7 - 0.8, dtype=dt, requires_grad=True)
    w = lib.tensor([0.5, -1.5, 2.0, 0.25], dtype=dt, requires_grad=True)
    y = lib.tensor(-0.75, dtype=dt, requires_grad=True)
    return x, w, y


def _run(program, lib, dtype):
    """Run ``program(lib, x, w, y)``: it returns (loss, tensors to observe). Observes each tensor's values,
    ``grad_fn`` name, ``requires_grad`` and version, then backpropagates and reads every leaf's gradient."""
    x, w, y = _leaves(lib, dtype)
    loss, observed = program(lib, x, w, y)
    seen = [(t.detach().numpy().copy(), grad_fn_name(t), t.requires_grad, t._version) for t in observed]
    loss.backward()
    grads = [None if t.grad is None else t.grad.numpy().copy() for t in (x, w, y)]
    return seen, grads


def _weights(lib, t):
    """A non-trivial upstream gradient: the loss is Σ t * (1, 2, 3, ...)."""
    return (t * lib.arange(1.0, t.numel() + 1.0, dtype=t.dtype).reshape(t.shape)).sum()


def _select_mul(lib, x, w, y):
    h = x * 2
    v = h[0]
    v.mul_(3)
    return _weights(lib, h) + (v * w).sum(), [h, v]


def _select_setitem_number(lib, x, w, y):
    h = x * 2
    v = h[0]
    v[1] = 5.0
    return _weights(lib, h * h), [h, v]


def _chained_setitem(lib, x, w, y):
    h = x * 2
    h[0][1] = y
    return _weights(lib, h * h), [h]


def _chained_copy(lib, x, w, y):
    h = x * 2
    a = h[0]
    b = a[1]
    b.copy_(y * 3)
    return _weights(lib, h) + (a * w).sum() + b * y, [h, a, b]


def _column_zero(lib, x, w, y):
    h = x * 2
    c = h[:, 1]
    c.zero_()
    return _weights(lib, h.exp()), [h, c]


def _transpose_add(lib, x, w, y):
    h = x * 2
    t = h.t()
    t.add_(w[:, None] * 2)
    return _weights(lib, h * x), [h, t]


def _transpose_row(lib, x, w, y):
    h = x * 2
    r = h.t()[0]
    r.mul_(y)
    return _weights(lib, h), [h, r]


def _slice_of_slice(lib, x, w, y):
    h = x * 2
    s = h[1:][0]
    s.fill_(2.0)
    return _weights(lib, h * x), [h, s]


def _diagonal_exp(lib, x, w, y):
    h = x * 2
    d = h.diagonal()
    d.exp_()
    return _weights(lib, h) + _weights(lib, d), [h, d]


def _view_clamp(lib, x, w, y):
    h = x * 2
    f = h.view(12)
    f.clamp_(-0.5, 1.0)
    return _weights(lib, h * x), [h, f]


def _permute_copy(lib, x, w, y):
    h = x * 2
    p = h.permute(1, 0)
    p.copy_(w[:, None] * y)
    return _weights(lib, h) + (x * h).sum(), [h, p]


def _narrow_add_broadcast(lib, x, w, y):
    h = x * 2
    n = h.narrow(1, 1, 2)
    n.add_(y)
    return _weights(lib, h * h), [h, n]


def _unsqueeze_squeeze(lib, x, w, y):
    h = x * 2
    u = h.unsqueeze(0)
    u.sub_(w)
    s = h[1:2].squeeze(0)
    s.div_(y)
    return _weights(lib, h), [h, u, s]


def _advanced_setitem_through_view(lib, x, w, y):
    h = x * 2
    v = h[0]
    v[[0, 2]] = w[:2] * 3
    return _weights(lib, h * x), [h, v]


def _mask_setitem_through_view(lib, x, w, y):
    h = x * 2
    v = h[1]
    v[v > 0] = y
    return _weights(lib, h * h), [h, v]


def _base_changed_after_view(lib, x, w, y):
    h = x * 2
    v = h[0]
    h.mul_(w)
    return _weights(lib, v * v) + _weights(lib, h), [h, v]


def _sibling_view_changed(lib, x, w, y):
    h = x * 2
    a = h[0]
    b = h[:, 1]
    b.mul_(3)
    return _weights(lib, a * a) + _weights(lib, b), [h, a, b]


def _two_changes_through_view(lib, x, w, y):
    h = x * 2
    v = h[2]
    v.mul_(2)
    v.add_(w)
    return _weights(lib, h * h) + (v * w).sum(), [h, v]


def _plain_base_value_requires_grad(lib, x, w, y):
    h = lib.zeros(3, 4, dtype=x.dtype)
    u = h[1]
    h[0].copy_(w * 2)
    return _weights(lib, h * h) + u.sum(), [h, u]


def _augmented_through_view(lib, x, w, y):
    h = x * 2
    v = h[0]
    v += w
    v *= y
    return _weights(lib, h), [h, v]


def _exp_then_use(lib, x, w, y):
    h = x * 1
    v = h[:, 2]
    v.exp_()
    return _weights(lib, v * 2) + _weights(lib, h), [h, v]


def _strided_base(lib, x, w, y):
    h = (x * 2).t().clone()                 # keeps the transposed layout: a base that is not C-contiguous
    v = h[1]
    v.mul_(w[:3])
    return _weights(lib, h * h), [h, v]


def _zero_dim_views(lib, x, w, y):
    h = x * 2
    e = h[0, 1]
    e.mul_(y)
    h[1][2].add_(1.0)
    return _weights(lib, h * h) + e, [h, e]


def _alias_then_view_of_it(lib, x, w, y):
    h = x * 2
    a = h[...]
    a.add_(1.0)
    a[2, 1:3].mul_(w[:2])
    return _weights(lib, h), [h, a]


def _reshape_view_row(lib, x, w, y):
    h = x * 2
    r = h.reshape(2, 6)[1]
    r.neg_()
    return _weights(lib, h * x), [h, r]


def _linalg_t_relu(lib, x, w, y):
    h = (x * 2).unsqueeze(0).squeeze(0)
    t = h.t()
    t.relu_()
    return _weights(lib, h) + _weights(lib, t), [h, t]


PROGRAMS = [_select_mul, _select_setitem_number, _chained_setitem, _chained_copy, _column_zero, _transpose_add,
            _transpose_row, _slice_of_slice, _diagonal_exp, _view_clamp, _permute_copy, _narrow_add_broadcast,
            _unsqueeze_squeeze, _advanced_setitem_through_view, _mask_setitem_through_view,
            _base_changed_after_view, _sibling_view_changed, _two_changes_through_view,
            _plain_base_value_requires_grad, _augmented_through_view, _exp_then_use, _strided_base,
            _zero_dim_views, _alias_then_view_of_it, _reshape_view_row, _linalg_t_relu]


# The view mechanism itself moves gradients exactly; NumPy's exp (and log, sin, ...) may differ from
# PyTorch's vectorized ones in the last bit, which the gradients downstream of them then carry.
_ULPS = 4


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__.strip("_") for p in PROGRAMS])
def test_in_place_through_views_matches_pytorch(program, dtype):
    ours, theirs = _run(program, gradiente, dtype), _run(program, torch, dtype)
    for (g_val, g_name, g_req, g_ver), (t_val, t_name, t_req, t_ver) in zip(ours[0], theirs[0]):
        np.testing.assert_array_max_ulp(g_val, t_val, maxulp=_ULPS)
        assert (g_name, g_req, g_ver) == (t_name, t_req, t_ver)
    for g, t in zip(ours[1], theirs[1]):
        assert (g is None) == (t is None)
        if t is not None:
            np.testing.assert_array_max_ulp(g, t, maxulp=_ULPS)


def test_graph_shape_matches_pytorch():
    """CopySlices keeps the base's old history and the in-place op's other inputs; the view's new node
    leads to CopySlices; every view of the base shares one version counter."""
    def run(lib):
        x, w, _ = _leaves(lib, "float32")
        h = x * 2
        v, c = h[0], h[:, 1]
        v.mul_(w)
        shape = [[type(n).__name__ if n is not None else None for n, _ in t.grad_fn.next_functions]
                 for t in (h, v, c)]
        return (shape, [grad_fn_name(t) for t in (h, v, c)], [t._version for t in (h, v, c)],
                v.grad_fn.next_functions[0][0] is h.grad_fn)
    assert run(gradiente) == run(torch)


def test_setitem_with_a_number_keeps_a_none_edge_as_pytorch():
    def run(lib):
        x, _, _ = _leaves(lib, "float32")
        h = x * 2
        h[0] = 5.0
        v = h[1]
        v[2] = 1.0
        return [type(n).__name__ if n is not None else None for n, _ in h.grad_fn.next_functions], grad_fn_name(v)
    assert run(gradiente) == run(torch)


def test_grad_and_retain_graph_through_copyslices():
    def run(lib):
        x, w, _ = _leaves(lib, "float64")
        h = x * x
        h[1].mul_(w)
        loss = _weights(lib, h)
        first = lib.autograd.grad(loss, (x, w), retain_graph=True)
        loss.backward()
        with pytest.raises(RuntimeError) as err:
            loss.backward()
        return [g.tolist() for g in first], x.grad.tolist(), w.grad.tolist(), str(err.value)
    assert run(gradiente) == run(torch)


def test_double_backward_through_copyslices():
    def run(lib):
        x, w, _ = _leaves(lib, "float64")
        h = x * x
        h[0].mul_(w * x[1])
        h.t()[2].exp_()
        g, = lib.autograd.grad(_weights(lib, h), x, create_graph=True)
        (g * g).sum().backward()
        return g.detach().numpy(), x.grad.numpy(), w.grad.numpy()
    for ours, theirs in zip(run(gradiente), run(torch)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


def _gradcheck_programs(lib):
    def select_mul(x, w):
        h = x * 1.5
        h[1].mul_(w)
        return h * x

    def transpose_setitem(x, w):
        h = x.sin()
        h.t()[1:3] = w[1:3, None] * x[0, :3]
        return h.sum(1)

    def diagonal_div(x, w):
        h = x.sin()
        h.diagonal().div_(w[:3] + 3)
        v = h[:, 0]
        h.mul_(x)
        return v * h[:, 1]

    return [select_mul, transpose_setitem, diagonal_div]


@pytest.mark.parametrize("lib", [gradiente, torch], ids=["gradiente", "torch"])
@pytest.mark.parametrize("which", range(3))
def test_gradcheck(which, lib):
    """Numerical gradients (and second derivatives) in float64; PyTorch passes the same checks."""
    fn = _gradcheck_programs(lib)[which]
    x = lib.tensor(np.random.RandomState(which).uniform(-1, 1, (3, 4)), requires_grad=True)
    w = lib.tensor(np.random.RandomState(which + 7).uniform(-1, 1, (4,)), requires_grad=True)
    assert lib.autograd.gradcheck(fn, (x, w))
    assert lib.autograd.gradgradcheck(fn, (x, w))


def _view_after_base_changed(index):
    """``h = x * 1; view = h[index]; h.mul_(w)``: the view, read after its base changed, is AsStridedBackward0
    over the base's new history."""
    def fn(lib, x, w):
        h = x * 1
        view = h[index]
        h.mul_(w)
        return view
    return fn


VIEW_SPECS = [
    OpSpec("row_after_base_changed", _view_after_base_changed(0), [((3, 4), (4,))]),
    OpSpec("column_after_base_changed", _view_after_base_changed((slice(None), 1)), [((3, 4), (4,)), ((3, 4), ())]),
]

test_gradcheck_views, test_against_torch_views, test_gradgradcheck_views = spec_tests(VIEW_SPECS)


def test_saved_values_changed_through_a_view_are_detected():
    def fn(lib):
        x, _, _ = _leaves(lib, "float32")
        h = x * 2
        z = h * h                                   # saves h
        h[0].mul_(2)
        z.sum().backward()
    assert "output 0 of torch::autograd::CopySlices, is at version 1" in _same_error(fn)


def test_view_used_after_an_unrecorded_change_of_its_base():
    """Under no_grad the base's history stays; the view's gradient is PyTorch's (PyTorch renames the view's
    node AsStridedBackward0 when it is next read; gradiente keeps its first node, which computes the same)."""
    def run(lib):
        x, w, _ = _leaves(lib, "float64")
        h = x * w
        v, c = h[0], h[:, 1]
        with lib.no_grad():
            h.mul_(2)
            c.zero_()
        _weights(lib, v * v).backward()
        return v.tolist(), x.grad.tolist(), w.grad.tolist()
    assert run(gradiente) == run(torch)


# --- PyTorch's errors ------------------------------------------------------------------------------------

def _same_error(fn):
    with pytest.raises(Exception) as expected:
        fn(torch)
    with pytest.raises(type(expected.value)) as got:
        fn(gradiente)
    assert str(got.value) == str(expected.value)
    return str(got.value)


def _unbind_then(change):
    def fn(lib):
        x, w, _ = _leaves(lib, "float32")
        change(lib, (x * 2).unbind(), w)
    return fn


def _no_grad_view(change, base="non-leaf"):
    def fn(lib):
        x, w, _ = _leaves(lib, "float32")
        h = {"non-leaf": x * 2, "leaf": x, "plain": lib.zeros(3, 4)}[base]
        with lib.no_grad():
            v = h[0]
        change(lib, v, w)
    return fn


def _view_then_requires_grad(lib):
    h = lib.zeros(3, 4)
    column = h[:, 0]
    h.requires_grad_()
    return column


ERRORS = [
    ("view_of_leaf_mul", lambda lib: _leaves(lib, "float32")[0][0].mul_(2)),
    ("view_of_leaf_zero", lambda lib: _leaves(lib, "float32")[0].t().zero_()),
    ("view_of_leaf_setitem", lambda lib: _leaves(lib, "float32")[0][0].__setitem__(1, 2.0)),
    ("view_of_view_of_leaf", lambda lib: _leaves(lib, "float32")[0][1:][0].exp_()),
    ("unbind_first", _unbind_then(lambda lib, parts, w: parts[0].mul_(2))),
    ("unbind_second", _unbind_then(lambda lib, parts, w: parts[1].add_(w))),
    ("unbind_setitem", _unbind_then(lambda lib, parts, w: parts[0].__setitem__(0, 1.0))),
    ("unbind_view_of_output", _unbind_then(lambda lib, parts, w: parts[2][1:].zero_())),
    ("split", lambda lib: (_leaves(lib, "float32")[0] * 2).split(1)[0].mul_(2)),
    ("split_with_sizes", lambda lib: (_leaves(lib, "float32")[0] * 2).split([1, 2])[1].mul_(2)),
    ("chunk", lambda lib: (_leaves(lib, "float32")[0] * 2).chunk(2)[0].mul_(2)),
    ("unbind_of_plain_tensor_with_grad_value",
     lambda lib: lib.zeros(2, 4).unbind()[0].add_(_leaves(lib, "float32")[1])),
    ("no_grad_view_mul", _no_grad_view(lambda lib, v, w: v.mul_(2))),
    ("no_grad_view_of_leaf", _no_grad_view(lambda lib, v, w: v.mul_(2), "leaf")),
    ("no_grad_view_add_grad_value", _no_grad_view(lambda lib, v, w: v.add_(w), "plain")),
    ("no_grad_view_augmented", _no_grad_view(lambda lib, v, w: v.__iadd__(1.0))),
    ("no_grad_view_setitem", _no_grad_view(lambda lib, v, w: v.__setitem__(0, 1.0))),
    ("view_of_no_grad_view", _no_grad_view(lambda lib, v, w: v[1:3].mul_(2))),
    ("view_made_before_its_base_required_grad", lambda lib: _view_then_requires_grad(lib).mul_(2)),
    ("expanded_view", lambda lib: (_leaves(lib, "float32")[1] * 2).expand(3, 4).mul_(2)),
]


@pytest.mark.parametrize("fn", [f for _, f in ERRORS], ids=[n for n, _ in ERRORS])
def test_error_messages_match_pytorch(fn):
    _same_error(fn)


def test_allowed_changes_of_views_that_record_nothing():
    """A view made under no_grad, or an output of unbind, may change in place when nothing requires grad."""
    for lib in (gradiente, torch):
        h = lib.zeros(3, 4)
        with lib.no_grad():
            v = h[0]
        v.add_(1.0)
        a, b, _ = h.unbind()
        b.mul_(3).add_(2.0)
        assert h.sum().item() == 12.0 and h._version == 3 and a.grad_fn is None and not h.requires_grad


def test_multi_output_view_used_after_its_base_changed():
    """PyTorch raises as soon as the stale view's grad_fn is read; gradiente raises when backward reaches it
    (its ``grad_fn`` is then PyTorch's ``Error`` node), with the same message."""
    def fn(lib):
        x, _, _ = _leaves(lib, "float32")
        h = x * 2
        a, *_ = h.unbind()
        h.mul_(2)
        (a * 1).sum().backward()
    message = _same_error(fn)
    assert message.startswith("Output 0 of Unbind is a view and its base or another view of its base has been "
                              "modified inplace.")


def test_detached_tensor_is_not_a_view_for_autograd():
    def run(lib):
        x, w, _ = _leaves(lib, "float32")
        h = x * 2
        d = h.detach()
        d[0].mul_(w)                                # rebases d, not h
        (d.sum() + h.sum()).backward()
        return grad_fn_name(h), grad_fn_name(d), h._version, x.grad.tolist(), w.grad.tolist()
    assert run(gradiente) == run(torch)


def test_views_are_remembered_weakly():
    """A base keeps only weak references to its views, and forgets dead ones as it goes."""
    h = gradiente.zeros(5)
    for _ in range(1000):
        h[1:3]
    assert len(h.__dict__["_views"]) < 128


@pytest.mark.parametrize("how", ["no_grad_on_base", "no_grad_on_view", "detached_alias", "setitem_no_grad"])
def test_untracked_change_regenerates_views_as_pytorch(how):
    # An in-place change autograd does not record still changes what a view reads: PyTorch then reads the
    # view through AsStridedBackward0 over its base's history; a multi-output view raises when used.
    results = []
    for lib in (gradiente, torch):
        x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        base = x * 1.5
        view, (first, _) = base[:, :2], base.unbind(0)
        if how == "no_grad_on_base":
            with lib.no_grad():
                base.add_(1.0)
        elif how == "no_grad_on_view":
            with lib.no_grad():
                view.mul_(2.0)
        elif how == "detached_alias":
            base.detach().sub_(0.5)
        else:
            with lib.no_grad():
                base[0, 0] = 7.0
        names = type(view.grad_fn).__name__
        (view * view).sum().backward()
        with pytest.raises(RuntimeError) as info:
            first.sum().backward()
        results.append((names, x.grad.numpy().tolist(), str(info.value)))
    assert results[0] == results[1]


def test_a_split_output_used_after_its_base_changed_raises_at_once():
    """Issue 13: PyTorch refuses the op that reads a multi-output view whose base changed in place (reading its
    grad_fn raises); gradiente recorded the op and raised only at backward, or never if no backward came."""
    def scenario(lib):
        base = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True) * 1
        first, _ = base.split(2)
        base.mul_(2)
        return (first * 2).tolist()
    on_both(scenario)


@pytest.mark.parametrize("make", [lambda x: x.prod(0), lambda x: (x * 1).fill_(2.0), lambda x: x.sum(0),
                                  lambda x: x.max(), lambda x: x.pow(2)], ids=["prod1", "fill2", "sum1", "max1", "pow"])
def test_version_message_keeps_the_overload_number(make):
    """Issue 13, found by tools/random_programs.py: PyTorch names a changed result "output 0 of Prod1" for
    ProdBackward1 (only a 0 overload number is dropped: MulBackward0 is "Mul"); gradiente dropped every number."""
    def scenario(lib):
        x = lib.tensor([2.0, 3.0], requires_grad=True)
        y = make(x)
        z = y * y
        with lib.no_grad():
            y.add_(1)
        z.sum().backward()
    on_both(scenario)
