"""Views with strides of their own, in-place view ops, storage, and the in-place odds and ends of PyTorch's
autograd suite, each scenario run on gradiente and on PyTorch and the observations compared: values,
gradients, ``grad_fn`` names, versions, ``_is_view``/``_base``, and exception types and messages."""
import warnings

import numpy as np
import pytest
from harness import OpSpec, error_of, grad_fn_name, spec_tests

import gradiente

torch = pytest.importorskip("torch")


def _same(scenario):
    ours, theirs = scenario(gradiente), scenario(torch)
    assert ours == theirs


def _weighted(lib, t):
    """Σ t * (1, 2, 3, ...): a loss whose gradient tells the elements apart."""
    return (t * lib.arange(1.0, t.numel() + 1.0, dtype=t.dtype).reshape(t.shape)).sum()


# --- the table: gradients, second derivatives and node names against PyTorch ------------------------------------

CONTIGUOUS_ONLY = {"contiguous_only": True}     # as_strided reads the storage, which a strided input's differs in

SPECS = [
    OpSpec("as_strided", lambda lib, x: x.as_strided((2, 2), (1, 2), 1), [((6,),), ((2, 3),)], extra=CONTIGUOUS_ONLY),
    OpSpec("as_strided_overlapping", lambda lib, x: lib.as_strided(x, (3, 2), (1, 1)), [((4,),)],
           extra=CONTIGUOUS_ONLY),
    OpSpec("as_strided_", lambda lib, x: (x * 1).as_strided_((3,), (2,)), [((6,),)]),
    OpSpec("transpose_", lambda lib, x: (x * 1).transpose_(0, 1), [((2, 3),), ((2, 3, 4),)]),
    OpSpec("swapdims_", lambda lib, x: (x * 1).swapdims_(0, -1), [((2, 3),)]),
    OpSpec("t_", lambda lib, x: (x * 1).t_(), [((2, 3),), ((3,),)]),
    OpSpec("squeeze_", lambda lib, x: (x * 1).squeeze_(), [((2, 1, 3),)]),
    OpSpec("squeeze_dim", lambda lib, x: (x * 1).squeeze_(1), [((2, 1, 3),)]),
    OpSpec("squeeze_dims", lambda lib, x: (x * 1).squeeze_((0, 1)), [((1, 1, 3),)]),
    OpSpec("unsqueeze_", lambda lib, x: (x * 1).unsqueeze_(-1), [((2, 3),)]),
    OpSpec("unsafe_split", lambda lib, x: x.unsafe_split(2, 1)[0], [((3, 4),)]),
    OpSpec("unsafe_split_with_sizes", lambda lib, x: x.unsafe_split_with_sizes((1, 2))[1], [((3, 2),)]),
    OpSpec("split_with_sizes", lambda lib, x: x.split_with_sizes((2, 1), 1)[0], [((3, 3),)]),
]

test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


# --- as_strided ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("size, stride, offset", [((2, 2), (1, 2), 1), ((3,), (2,), None), ((2, 3), (0, 1), 0),
                                                   ((4, 2), (1, 1), None), ((0, 2), (1, 1), 5)])
def test_as_strided_values_and_gradients(size, stride, offset):
    def scenario(lib):
        x = lib.tensor(np.linspace(-1, 1, 8), requires_grad=True)
        view = x.as_strided(size, stride, offset) if offset is not None else lib.as_strided(x, size, stride)
        _weighted(lib, view).backward()
        return (view.tolist(), grad_fn_name(view), view.stride(), view.storage_offset(), view._is_view(),
                view._base is x, x.grad.tolist())
    _same(scenario)


def test_as_strided_of_a_non_leaf_and_of_a_slice():
    def scenario(lib):
        x = lib.tensor(np.arange(12.0), requires_grad=True)
        h = x * 2
        rows = h.view(3, 4)[1:]
        view = rows.as_strided((2, 2), (4, 1))           # from rows' own start
        moved = rows.as_strided((2, 2), (4, 1), 0)       # the storage's first element: outside rows
        _weighted(lib, view).backward()
        return view.tolist(), moved.tolist(), view._base is h, x.grad.tolist()
    _same(scenario)


@pytest.mark.parametrize("args", [((10,), (1,)), ((3,), (2,), -1), ((2, 2), (1,)), ((2,), (-1,))])
def test_as_strided_errors(args):
    _same(lambda lib: error_of(lambda: lib.arange(6.0).as_strided(*args)))


# --- in-place view ops ------------------------------------------------------------------------------------------

IN_PLACE_VIEWS = {
    "transpose_": lambda t: t.transpose_(0, 1),
    "swapdims_": lambda t: t.swapdims_(0, 1),
    "swapaxes_": lambda t: t.swapaxes_(1, 0),
    "t_": lambda t: t.t_(),
    "squeeze_": lambda t: t.squeeze_(),
    "squeeze_dim": lambda t: t.squeeze_(0),
    "squeeze_dims": lambda t: t.squeeze_((0,)),
    "unsqueeze_": lambda t: t.unsqueeze_(1),
    "as_strided_": lambda t: t.as_strided_((2,), (2,)),
}


@pytest.mark.parametrize("op", IN_PLACE_VIEWS)
def test_in_place_view_ops(op):
    fn = IN_PLACE_VIEWS[op]

    def scenario(lib):
        leaf = lib.tensor([[0.5, -1.0, 2.0]], requires_grad=True)
        seen = [error_of(lambda: fn(leaf))]
        a = leaf * 3
        same = fn(a) is a
        strides = [st for st, n in zip(a.stride(), a.shape) if n > 1]     # a size-1 dim's stride is arbitrary
        seen += [same, grad_fn_name(a), a._version, list(a.shape), strides, a.is_leaf]
        b = leaf * 1
        v = b[0:1]
        fn(v)
        seen += [grad_fn_name(v), v._version, b._version, v._is_view(), v._base is b, grad_fn_name(b)]
        (_weighted(lib, a) + _weighted(lib, v)).backward()
        seen.append(leaf.grad.tolist())
        with lib.no_grad():
            plain = lib.ones(1, 3)
            fn(plain)
            seen += [plain._version, list(plain.shape)]
        return seen
    _same(scenario)


def test_t_refuses_more_than_two_dims():
    _same(lambda lib: error_of(lambda: lib.ones(2, 3, 4).t_()))


# --- splitting ---------------------------------------------------------------------------------------------------

SPLITS = {
    "split_with_sizes": lambda lib, t: t.split_with_sizes((1, 2)),
    "torch_split_with_sizes": lambda lib, t: lib.split_with_sizes(t, [2, 1], 1),
    "unsafe_split": lambda lib, t: t.unsafe_split(1),
    "unsafe_split_with_sizes": lambda lib, t: t.unsafe_split_with_sizes((1, 1, 1)),
    "unsafe_chunk": lambda lib, t: t.unsafe_chunk(2),
    "torch_unsafe_split": lambda lib, t: lib.unsafe_split(t, 2, 1),
    "torch_unsafe_chunk": lambda lib, t: lib.unsafe_chunk(t, 3, 1),
}


@pytest.mark.parametrize("how", SPLITS)
def test_splits(how):
    def scenario(lib):
        x = lib.tensor(np.arange(9.0).reshape(3, 3), requires_grad=True)
        pieces = SPLITS[how](lib, x * 1)
        loss = sum(_weighted(lib, p) * (i + 1) for i, p in enumerate(pieces))
        loss.backward()
        return [(p.tolist(), grad_fn_name(p), p._is_view()) for p in pieces], type(pieces).__name__, x.grad.tolist()
    _same(scenario)


def test_unsafe_split_pieces_may_change_in_place_but_split_pieces_may_not():
    def scenario(lib):
        a = lib.tensor(np.linspace(0, 1, 9).reshape(3, 3), requires_grad=True)
        s1, s2, _ = (a + a).unsafe_split(1)
        s1.mul_(s2)
        s1.sum().backward()
        safe = (a + a).split_with_sizes((1, 1, 1))
        return np.round(a.grad.numpy(), 6).tolist(), error_of(lambda: safe[0].mul_(safe[1]))
    _same(scenario)


# --- Tensor.new, storage ---------------------------------------------------------------------------------------

def test_tensor_new():
    def scenario(lib):
        t = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64)
        shaped, empty, data, sized = t.new(2, 3), t.new(), t.new([1, 2]), t.new(lib.Size([4]))
        shared = t.new(t)
        dtypes = [str(x.dtype).split(".")[1] for x in (shaped, data)]
        return ([list(x.shape) for x in (shaped, empty, data, sized)], dtypes, data.tolist(),
                shared.data_ptr() == t.data_ptr(), t.new_tensor([1, 2]).dtype == t.dtype)
    _same(scenario)


def test_untyped_storage_is_shared_by_views():
    def scenario(lib):
        t = lib.arange(12.0).view(3, 4)
        s = t.untyped_storage()
        row = t[1:]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            typed = row.storage()
        return (s.nbytes(), s.size(), len(s), s.data_ptr() == t.data_ptr(),
                row.untyped_storage().data_ptr() == s.data_ptr(), row.data_ptr() == s.data_ptr(), len(typed),
                typed.data_ptr() == s.data_ptr())
    _same(scenario)


def test_resize_keeps_the_first_elements_and_bumps_the_version():
    def scenario(lib):
        x = lib.arange(6.0)
        x.resize_(2, 2)
        seen = [x.tolist(), x._version]
        x.resize_as_(lib.ones(4))
        seen += [x.tolist(), x._version]
        x.resize_((4,))                     # no change: no new version
        seen.append(x._version)
        x.resize_(3, 3)
        seen += [list(x.shape), x.flatten()[:4].tolist(), x._version]
        leaf = lib.ones(2, 3, requires_grad=True)
        seen += [error_of(lambda: leaf.resize_(6)), error_of(lambda: (leaf * 1).resize_(6)),
                 error_of(lambda: leaf.resize_as_(lib.ones(6)))]
        with lib.no_grad():
            seen.append(error_of(lambda: leaf.resize_(6)))
        return seen
    _same(scenario)


def test_set_():
    def scenario(lib):
        z, w = lib.zeros(3), lib.arange(4.0)
        z.set_(w)
        seen = [z.tolist(), z._version, z.data_ptr() == w.data_ptr(), z._base is None]
        z.add_(1)
        seen.append(w.tolist())
        part = lib.zeros(3)
        part.set_(w.untyped_storage(), 1, (2,), (1,))
        emptied = lib.zeros(3)
        emptied.set_()
        mismatch = error_of(lambda: lib.zeros(3).set_(lib.zeros(3, dtype=lib.int64)))
        seen += [part.tolist(), list(emptied.shape), mismatch]
        param = lib.nn.Parameter(lib.ones(16, dtype=lib.float64))
        seen.append(error_of(lambda: param.set_(param[1:])))
        for _ in range(2):
            with lib.no_grad():
                param.set_(param[1:])
                param.grad = None
            lib.cat((param, param)).sum().backward()
        seen += [list(param.shape), param.is_leaf, param.requires_grad, param.grad.tolist()]
        return seen
    _same(scenario)


# --- retain_grad through in-place changes ------------------------------------------------------------------------

def test_retain_grad_follows_in_place_changes():
    def scenario(lib):
        a = lib.tensor([1.0], requires_grad=True).clone()
        a.retain_grad()
        a.mul_(2)
        a.mul_(2)
        (a * 3).sum().backward()
        return a.grad.tolist(), a.retains_grad
    _same(scenario)


def test_retain_grad_over_views_changed_in_place():
    def scenario(lib):
        base = lib.tensor([1.0, 2.0], requires_grad=True).clone()
        view, view2 = base[:], base[:]
        view.retain_grad()
        view2.retain_grad()
        view.mul_(2)
        _weighted(lib, view + view2 * 3).backward()
        return view.grad.tolist(), view2.grad.tolist(), grad_fn_name(view), grad_fn_name(view2)
    _same(scenario)


def test_retain_grad_through_an_in_place_view_op_keeps_the_old_shape():
    def scenario(lib):
        a = lib.tensor([[1.0, 2.0, 3.0]], requires_grad=True).clone()
        a.retain_grad()
        a.transpose_(0, 1)
        _weighted(lib, a).backward()
        return a.grad.tolist(), list(a.grad.shape)
    _same(scenario)


# --- out= and autograd -------------------------------------------------------------------------------------------

def test_out_refuses_inputs_that_require_grad():
    def scenario(lib):
        a = lib.ones(2, 2, requires_grad=True)
        b = lib.ones(2, 2, requires_grad=True)
        x = lib.zeros(2, 2)
        seen = [error_of(lambda: lib.mul(a, b, out=x)), error_of(lambda: lib.exp(a, out=x)),
                error_of(lambda: lib.add(a, 1, out=x))]
        with lib.no_grad():
            lib.mul(a, b * 3, out=x)
        seen += [x.tolist(), x.requires_grad]
        return seen
    _same(scenario)


# --- views made under no_grad ---------------------------------------------------------------------------------

def test_a_no_grad_view_of_a_tensor_that_requires_grad_requires_grad():
    def scenario(lib):
        a = lib.ones(2, 3, requires_grad=True).clone()
        with lib.no_grad():
            v = a.view(-1)
        w = v * v
        w.sum().backward()
        return (v.requires_grad, v.is_leaf, grad_fn_name(v), w.requires_grad, v.grad, error_of(lambda: v.add_(1)),
                a.detach()._is_view(), a.detach()._base is None, a.view(-1)._base is a)
    _same(scenario)
