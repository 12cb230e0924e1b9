"""Engine behaviours, one named test each: deep chains, diamonds, accumulation, retain_graph, higher
order, grad modes across threads, in-place detection, hooks, leaves and non-leaves, memory."""
import gc
import math
import sys
import threading
import warnings
import weakref

import numpy as np
import pytest
from harness import on_both, plain

import gradiente as torch
from gradiente import autograd


def test_grad_fn_and_next_functions_match_pytorch_names():
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    y = torch.tensor([4., 5., 6.], requires_grad=True)
    z = x + y
    s = z.sum()
    assert type(z.grad_fn).__name__ == "AddBackward0"
    assert [type(f).__name__ for f, _ in s.grad_fn.next_functions] == ["AddBackward0"]
    assert [type(f).__name__ for f, _ in z.grad_fn.next_functions] == ["AccumulateGrad", "AccumulateGrad"]
    assert z.grad_fn.next_functions[0][0].variable is x
    assert z.grad_fn.name() == "AddBackward0"
    assert repr(z.grad_fn).startswith("<AddBackward0 object at 0x")
    # a Python number operand appears as (None, 0), as in PyTorch
    assert (x * 2).grad_fn.next_functions[1] == (None, 0)
    # 1 / x is recorded as reciprocal then multiplication
    r = 1 / x
    assert type(r.grad_fn).__name__ == "MulBackward0"
    assert type(r.grad_fn.next_functions[0][0]).__name__ == "ReciprocalBackward0"


def test_same_accumulate_grad_node_while_graph_lives():
    x = torch.ones(2, requires_grad=True)
    a, b = x * 2, x * 3
    assert a.grad_fn.next_functions[0][0] is b.grad_fn.next_functions[0][0]


def test_deep_chain_100k_has_no_recursion_error():
    limit = sys.getrecursionlimit()
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.sum().backward()
    assert sys.getrecursionlimit() == limit
    np.testing.assert_array_equal(x.grad.numpy(), [1, 1, 1])


def test_graph_memory_is_freed_without_the_garbage_collector():
    gc.disable()
    try:
        x = torch.ones(3, requires_grad=True)
        y = x
        for _ in range(1000):
            y = (y * 1.0).exp().log()
        node_ref = weakref.ref(y.grad_fn)
        y.sum().backward()
        del y
        assert node_ref() is None, "graph nodes kept alive by a reference cycle"
    finally:
        gc.enable()


def test_saved_output_does_not_make_a_cycle():
    gc.disable()
    try:
        x = torch.ones(3, requires_grad=True)
        y = x.exp()                      # ExpBackward0 saves its output
        ref = weakref.ref(y)
        node_ref = weakref.ref(y.grad_fn)
        del y
        assert ref() is None and node_ref() is None
    finally:
        gc.enable()


def test_diamond_sums_both_paths():
    x = torch.tensor([2.0], requires_grad=True)
    a = x * 3
    y = a * a + a.exp()                  # a used twice
    y.backward()
    expected = 2 * 3 * (3 * 2.0) + 3 * math.exp(6.0)
    assert x.grad.item() == pytest.approx(expected)


def test_leaf_used_by_two_ops_is_accumulated_once_after_both():
    # A leaf's AccumulateGrad must be older than every node that uses the leaf, so that the engine
    # runs it once, with both contributions summed (a hook sees the sum, called a single time).
    a = torch.tensor([[1.0], [2.0]], requires_grad=True)
    b = torch.tensor([1.0, 2.0, 3.5], requires_grad=True)
    seen = []
    a.register_hook(lambda g: seen.append(g.clone()))
    ((a * b + a).sum()).backward()
    assert len(seen) == 1
    assert seen[0].tolist() == [[9.5], [9.5]] and a.grad.tolist() == [[9.5], [9.5]]


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex64, np.complex128])
def test_rule_mask_is_np_where_bit_for_bit(dtype):
    # NumpyOps.mask ANDs bits instead of branching; its result must be np.where's, nan, -0.0 and inf
    # included, for contiguous and transposed operands.
    from gradiente.core.rules import numpy_ops
    rng = np.random.RandomState(0)
    x = rng.standard_normal((5, 7)).astype(dtype)
    x[0, 0], x[1, 1], x[2, 2] = np.nan, -0.0, -np.inf
    keep = rng.standard_normal((5, 7)) > 0
    for c, v in ((keep, x), (keep.T, x.T), (keep[:, 0:1], x)):
        got, want = numpy_ops.mask(c, v), np.where(c, v, np.zeros((), dtype))
        assert got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes()


def test_accumulation_across_backward_calls_and_zero_():
    w = torch.ones(4, requires_grad=True)
    for k in range(1, 4):
        (w * 3).sum().backward()
        np.testing.assert_array_equal(w.grad.numpy(), [3 * k] * 4)
    w.grad.zero_()
    np.testing.assert_array_equal(w.grad.numpy(), [0] * 4)
    w.grad = None
    (w * 3).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [3] * 4)


def test_retain_graph_allows_second_backward_and_default_frees():
    inp = torch.eye(4, 5, requires_grad=True)
    out = (inp + 1).pow(2).t()
    out.backward(torch.ones_like(out), retain_graph=True)
    out.backward(torch.ones_like(out), retain_graph=True)
    assert inp.grad[0, 0].item() == 8.0
    out2 = (inp * 2).sum()
    out2.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        out2.backward()


def test_graph_without_saved_tensors_can_backward_twice():
    # PyTorch raises only when a node needs freed saved tensors: add and sum save none
    x = torch.ones(3, requires_grad=True)
    s = (x + x).sum()
    s.backward()
    s.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [4, 4, 4])


def test_implicit_gradient_only_for_scalars():
    x = torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (x * 2).backward()


def test_vector_jacobian_product():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * x
    y.backward(torch.tensor([0.1, 1.0, 0.0001]))
    np.testing.assert_allclose(x.grad.numpy(), [0.2, 4.0, 0.0006], rtol=1e-6)


def test_gradient_shape_mismatch_message():
    x = torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape of "
                                           r"gradiente.Size\(\[2\]\) and output\[0\] has a shape of "
                                           r"gradiente.Size\(\[3\]\)"):
        (x * 3).backward(torch.ones(2))


def test_backward_on_tensor_without_grad():
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and does not have a grad_fn"):
        torch.ones(2).sum().backward()


def test_requires_grad_only_for_floating_dtypes():
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype can require gradients"):
        torch.tensor([2, 3], requires_grad=True)
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require gradients"):
        torch.tensor([2, 3]).requires_grad_()


def test_non_leaf_grad_is_none_with_warning_unless_retained():
    x = torch.ones(3, requires_grad=True)
    h = x * 3
    h.sum().backward()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert h.grad is None
    assert "is not a leaf Tensor is being accessed" in str(caught[0].message)
    reference = pytest.importorskip("torch")
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        assert (reference.ones(3, requires_grad=True) * 3).grad is None
    assert str(caught[0].message) == str(theirs[0].message)         # word for word, PyTorch's suffix included
    assert not h.is_leaf and x.is_leaf
    h2 = x * 3
    h2.retain_grad()
    (h2 * h2).sum().backward()
    np.testing.assert_array_equal(h2.grad.numpy(), [6, 6, 6])


def test_changing_requires_grad_of_non_leaf_is_an_error():
    x = torch.ones(2, requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        y.requires_grad = False
    x2 = torch.randn(3, requires_grad=True)
    x2.requires_grad_(False)
    assert not x2.requires_grad


def test_detach_shares_memory_and_leaves_graph():
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None
    with torch.no_grad():
        d.add_(1)
    assert y[0].item() == 3.0 if hasattr(torch.Tensor, "__getitem__") else True


def test_data_is_detached_alias():
    x = torch.ones(3, requires_grad=True)
    x.data.mul_(5)
    assert x.data.requires_grad is False
    np.testing.assert_array_equal(x.detach().numpy(), [5, 5, 5])


def test_create_graph_third_derivative_of_tanh():
    x = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    y = torch.tanh(x)
    (g1,) = autograd.grad(y, x, create_graph=True)
    (g2,) = autograd.grad(g1, x, create_graph=True)
    (g3,) = autograd.grad(g2, x)
    t = math.tanh(0.5)
    assert g1.item() == pytest.approx(1 - t * t, rel=1e-14)
    assert g2.item() == pytest.approx(-2 * t * (1 - t * t), rel=1e-14)
    assert g3.item() == pytest.approx((6 * t * t - 2) * (1 - t * t), rel=1e-14)


def test_backward_create_graph_then_differentiate_grad():
    x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    (x ** 3).sum().backward(create_graph=True)
    g = x.grad
    assert g.requires_grad
    (g2,) = autograd.grad(g.sum(), x)
    np.testing.assert_allclose(g2.numpy(), [6.0, 12.0])


def test_autograd_grad_does_not_touch_leaves_and_allow_unused():
    x = torch.ones(2, requires_grad=True)
    z = torch.ones(2, requires_grad=True)
    y = (x * 3).sum()
    (gx,) = autograd.grad(y, x, retain_graph=True)
    assert x.grad is None
    np.testing.assert_array_equal(gx.numpy(), [3, 3])
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        autograd.grad(y, [x, z], retain_graph=True)
    gx, gz = autograd.grad(y, [x, z], allow_unused=True)
    assert gz is None


def test_grad_with_respect_to_intermediate():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    y = (h * h).sum()
    (gh,) = autograd.grad(y, h)
    np.testing.assert_array_equal(gh.numpy(), [4, 8])


def test_backward_inputs_accumulates_only_into_inputs():
    x = torch.ones(2, requires_grad=True)
    w = torch.ones(2, requires_grad=True)
    (x * w * 2).sum().backward(inputs=[w])
    assert x.grad is None
    np.testing.assert_array_equal(w.grad.numpy(), [2, 2])


def test_backward_inputs_listed_twice_get_the_gradient_once():
    a = torch.tensor([1., 2.], requires_grad=True)
    b = torch.tensor([3., 4.], requires_grad=True)
    (a * b).sum().backward(inputs=[a, a, b])        # as PyTorch: each input once, whatever the order
    np.testing.assert_array_equal(a.grad.numpy(), [3, 4])
    np.testing.assert_array_equal(b.grad.numpy(), [1, 2])


def test_no_grad_enable_grad_set_grad_enabled_and_decorators():
    x = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        assert not (x * 2).requires_grad
        with torch.enable_grad():
            assert (x * 2).requires_grad
    with torch.set_grad_enabled(False):
        assert not torch.is_grad_enabled()
    assert torch.is_grad_enabled()

    @torch.no_grad()
    def f(t):
        return t * 2

    @torch.no_grad
    def g(t):
        return t * 2

    assert not f(x).requires_grad and not g(x).requires_grad
    with torch.inference_mode():
        assert not (x * 2).requires_grad
    torch.set_grad_enabled(False)
    assert not torch.is_grad_enabled()
    torch.set_grad_enabled(True)


def test_grad_mode_is_thread_local():
    seen = {}
    inside = threading.Event()
    release = threading.Event()

    def worker():
        with torch.no_grad():
            inside.set()
            release.wait(5)
            seen["worker"] = torch.is_grad_enabled()

    t = threading.Thread(target=worker)
    t.start()
    inside.wait(5)
    x = torch.ones(2, requires_grad=True)
    seen["main"] = (x * 2).requires_grad
    release.set()
    t.join()
    assert seen == {"worker": False, "main": True}


def test_inplace_on_leaf_requiring_grad_is_an_error_but_allowed_under_no_grad():
    p = torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"a leaf Variable that requires grad is being used in an in-place "
                                           r"operation\."):
        p.add_(1)
    (p * p).sum().backward()
    with torch.no_grad():
        p -= 0.1 * p.grad
    np.testing.assert_allclose(p.detach().numpy(), [0.8, 0.8, 0.8], rtol=1e-6)
    assert p.is_leaf and p.requires_grad


def test_inplace_modification_of_saved_tensor_detected():
    a = torch.ones(3, requires_grad=True)
    b = a * 1
    c = b * b                          # MulBackward0 saves b
    b.add_(1)
    assert b._version == 1
    with pytest.raises(RuntimeError, match=r"one of the variables needed for gradient computation has been modified by "
                                           r"an inplace operation: \[torch.FloatTensor \[3\]\], which is output 0 of "
                                           r"Add, is at version 1; expected version 0 instead"):
        c.sum().backward()


def test_inplace_on_non_leaf_records_history():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.mul_(x)                           # y = 2x·x, d/dx = 4x
    assert type(y.grad_fn).__name__ == "MulBackward0"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 8.0])
    z = x * 2
    z.mul_(z)                           # as in PyTorch: z was saved, then modified
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_inplace_changes_are_seen_through_from_numpy():
    a = np.zeros(3, dtype=np.float32)
    t = torch.from_numpy(a)
    t.add_(1)
    np.testing.assert_array_equal(a, [1, 1, 1])


def test_tensor_hook_can_replace_gradient_and_be_removed():
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    handle = y.register_hook(lambda g: g * 10)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [20, 20, 20])
    handle.remove()
    x.grad = None
    (x * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2, 2, 2])


def test_leaf_hook_runs_before_accumulation():
    x = torch.ones(2, requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(g.numpy().copy()))
    (x * 5).sum().backward()
    np.testing.assert_array_equal(seen[0], [5, 5])
    np.testing.assert_array_equal(x.grad.numpy(), [5, 5])


def test_node_hooks():
    x = torch.ones(2, requires_grad=True)
    y = x * 3
    calls = []
    y.grad_fn.register_hook(lambda gin, gout: calls.append((gin[0].numpy().copy(), gout[0].numpy().copy())))
    y.grad_fn.register_prehook(lambda gout: (gout[0] * 2,))
    y.sum().backward()
    np.testing.assert_array_equal(calls[0][1], [2, 2])
    np.testing.assert_array_equal(x.grad.numpy(), [6, 6])


class Exp(autograd.Function):
    @staticmethod
    def forward(ctx, i):
        result = i.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        return grad_output * result


class MulConstant(autograd.Function):
    @staticmethod
    def forward(ctx, tensor, constant):
        ctx.constant = constant
        return tensor * constant

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.constant, None


def test_custom_function_forward_backward_and_name():
    x = torch.tensor([0.0, 1.0], dtype=torch.float64, requires_grad=True)
    y = Exp.apply(x)
    assert type(y.grad_fn).__name__ == "ExpBackward"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.0, 1.0]))
    z = MulConstant.apply(x, 3.0)
    assert z.grad_fn.needs_input_grad == (True, False)
    assert len(z.grad_fn.next_functions) == 1
    assert autograd.gradcheck(lambda t: MulConstant.apply(Exp.apply(t), 2.0), (x,))


def test_custom_function_second_order():
    x = torch.tensor([0.3], dtype=torch.float64, requires_grad=True)
    (g,) = autograd.grad(Exp.apply(x).sum(), x, create_graph=True)
    (g2,) = autograd.grad(g.sum(), x)
    assert g2.item() == pytest.approx(math.exp(0.3))


def test_custom_function_wrong_number_of_gradients():
    class Bad(autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g

    a = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"returned an incorrect number of gradients \(expected 2, got 1\)"):
        Bad.apply(a, a).sum().backward()


def test_custom_function_mark_dirty_and_non_differentiable():
    class AddOneInplace(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    class ArgmaxLike(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            idx = torch.tensor(0.0)
            ctx.mark_non_differentiable(idx)
            return x * 2, idx

        @staticmethod
        def backward(ctx, g, g_idx):
            return g * 2

    x = torch.ones(2, requires_grad=True)
    y = x * 1
    out = AddOneInplace.apply(y)
    assert out is y and type(y.grad_fn).__name__ == "AddOneInplaceBackward"
    doubled, idx = ArgmaxLike.apply(x)
    assert doubled.requires_grad and not idx.requires_grad


def test_variable_legacy_wrapper():
    from gradiente.autograd import Variable
    x = Variable(torch.ones(2, 2), requires_grad=True)
    assert isinstance(x, torch.Tensor) and isinstance(x, Variable)
    out = ((x + 2) * (x + 2) * 3).mean()
    out.backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 2), 4.5))


def test_gradcheck_detects_wrong_rule():
    class Wrong(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * x

        @staticmethod
        def backward(ctx, g):
            return g * 3

    x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        autograd.gradcheck(Wrong.apply, (x,))
    assert autograd.gradcheck(Wrong.apply, (x,), raise_exception=False) is False


def test_gradgradcheck():
    x = torch.tensor([0.2, 0.7], dtype=torch.float64, requires_grad=True)
    assert autograd.gradgradcheck(lambda t: (t.tanh() * t.exp()).sum(), (x,))


def test_broadcast_gradients_reduced_to_input_shape():
    x = torch.ones(2, 1, requires_grad=True)
    y = torch.ones(3, requires_grad=True)
    ((x + y) * 2).sum().backward()
    assert tuple(x.grad.shape) == (2, 1) and tuple(y.grad.shape) == (3,)
    np.testing.assert_array_equal(x.grad.numpy(), [[6], [6]])
    np.testing.assert_array_equal(y.grad.numpy(), [4, 4, 4])


def test_mixed_dtype_gradient_keeps_input_dtype():
    x = torch.ones(3, requires_grad=True)
    s = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    y = x * s
    assert y.dtype is torch.float32
    y.sum().backward()
    assert x.grad.dtype is torch.float32 and s.grad.dtype is torch.float64


def test_leaf_gradients_never_alias_each_other_or_user_arrays():
    # the engine may hand one array to several leaves (x + y) or start from the user's gradient: every leaf
    # must end up with its own memory, so accumulating into one never changes another
    x = torch.ones(3, requires_grad=True)
    y = torch.ones(3, requires_grad=True)
    (x + y).sum().backward()
    assert not np.shares_memory(x.grad.numpy(), y.grad.numpy())
    x.grad.add_(1)
    np.testing.assert_array_equal(y.grad.numpy(), [1, 1, 1])
    g = torch.ones(3)
    z = torch.zeros(3, requires_grad=True)
    z.backward(g)
    assert not np.shares_memory(z.grad.numpy(), g.numpy())
    kept = []
    w = torch.ones(2, requires_grad=True)
    w.register_hook(kept.append)
    (w * 2).sum().backward()
    w.grad.zero_()
    np.testing.assert_array_equal(kept[0].numpy(), [2, 2])
    a = torch.ones(2, requires_grad=True)
    b = a * 3
    b.retain_grad()
    b.sum().backward()
    a.grad.zero_()
    np.testing.assert_array_equal(b.grad.numpy(), [1, 1])


def test_inplace_change_of_a_saved_result_names_the_forward_op():
    x = torch.tensor([0.5, 1.0], requires_grad=True)
    y = (x * 1).exp()                  # ExpBackward0 saves its result y
    y.mul_(2)
    with pytest.raises(RuntimeError, match=r"\[torch.FloatTensor \[2\]\], which is output 0 of Exp, is at version 1; "
                                           r"expected version 0 instead"):
        y.sum().backward()


def test_inplace_change_of_a_saved_inplace_result_is_detected():
    x = torch.tensor([0.5, 1.0], requires_grad=True)
    y = (x * 1).exp_()                 # ExpBackward0 saves its result, which is y itself
    y.mul_(2)
    with pytest.raises(RuntimeError, match=r"output 0 of Exp, is at version 2; expected version 1"):
        y.sum().backward()


def test_custom_function_materialize_grads():
    seen = []

    class Two(autograd.Function):
        @staticmethod
        def forward(ctx, x, materialize):
            ctx.set_materialize_grads(materialize)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append(g2)
            return g1 * 2 + (g2 * 3 if g2 is not None else 0), None

    for materialize in (True, False):
        x = torch.ones(2, requires_grad=True)
        a, _ = Two.apply(x, materialize)
        a.sum().backward()               # the second output gets no gradient
        np.testing.assert_array_equal(x.grad.numpy(), [2, 2])
    assert seen[0] is not None and not seen[0].numpy().any()
    assert seen[1] is None


def test_inplace_update_with_a_non_broadcastable_operand_gives_pytorchs_error():
    p = torch.ones(2, 3)
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match the size of tensor b \(4\) at "
                                           r"non-singleton dimension 1"):
        p -= torch.ones(4)
    p -= torch.ones(3) * 2
    np.testing.assert_array_equal(p.numpy(), np.full((2, 3), -1.0))


def test_backward_inputs_give_each_input_its_own_gradient_memory():
    x = torch.ones(3, requires_grad=True)
    y = torch.ones(3, requires_grad=True)
    (x + y).sum().backward(inputs=[x, y])        # one array reaches both inputs
    assert not np.shares_memory(x.grad.numpy(), y.grad.numpy())
    x.grad.add_(1)
    np.testing.assert_array_equal(y.grad.numpy(), [1, 1, 1])
    (x + y).sum().backward(inputs=[x])           # and a second call accumulates
    np.testing.assert_array_equal(x.grad.numpy(), [3, 3, 3])
    h = x * 1
    g = torch.ones(3)
    h.backward(g, inputs=[h])                    # the user's gradient reaches h unchanged
    assert not np.shares_memory(h.grad.numpy(), g.numpy())


def test_complex_gradients_are_pytorchs_or_refused_never_silently_wrong():
    # Rules that move, sum or scale gradients by real numbers are right for complex tensors as written, holomorphic
    # rules run between two conjugations (PyTorch's conjugate convention); a rule written for real derivatives only
    # (grad * f'(z) of a function not marked holomorphic) is refused with a clear error.
    a = np.array([1 + 1j, 2 - 0.5j], np.complex64)
    c = np.array([2 + 3j, -1 + 1j], np.complex64)
    allowed = [lambda lib, x: (x + lib.tensor(c)).abs().sum(), lambda lib, x: (x * 2.5).abs().sum(),
               lambda lib, x: lib.cat([x, x / 2]).abs().sum(), lambda lib, x: (x.real * 2).sum(),
               lambda lib, x: x.reshape(2, 1)[0].abs().sum(), lambda lib, x: x.abs().mean(),
               lambda lib, x: (x * lib.tensor(c)).abs().sum(), lambda lib, x: x.exp().abs().sum(),
               lambda lib, x: (x * x).abs().sum()]
    real_torch = pytest.importorskip("torch")     # this module names gradiente "torch"
    for fn in allowed:
        grads = []
        for lib in (real_torch, torch):
            x = lib.tensor(a, requires_grad=True)
            fn(lib, x).backward()
            grads.append(x.grad.numpy())
        np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6)
    # (complex det, inv, slogdet, cholesky, eigh and matrix_exp have PyTorch's gradients: test_not_implemented_audit.py)
    for fn in (lambda x: x.acosh().abs().sum(), lambda x: torch.linalg.qr(torch.stack([x, x * 2j]))[1].abs().sum()):
        x = torch.tensor(a, requires_grad=True)
        with pytest.raises(NotImplementedError, match="does not compute gradients of complex tensors through"):
            fn(x).backward()


def test_backward_with_create_graph_warns_of_the_reference_cycle_and_grad_does_not():
    real_torch = pytest.importorskip("torch")

    def messages(lib, call):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        y = (x * x).sum()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call(lib, x, y)
        return [str(w.message).split(" (Triggered")[0] for w in caught if "create_graph" in str(w.message)]

    def backward(lib, x, y):
        y.backward(create_graph=True)

    def grad(lib, x, y):
        lib.autograd.grad(y, x, create_graph=True)
    # PyTorch warns once per process (from C++), so its list is empty when an earlier test warned already
    ours, theirs = messages(torch, backward), messages(real_torch, backward)
    assert ours and ours[0].startswith("Using backward() with create_graph=True will create a reference cycle")
    assert theirs in ([], ours)
    assert messages(torch, grad) == messages(real_torch, grad) == []


def test_batched_grad_outputs_of_the_wrong_shape_get_pytorchs_message():
    # PyTorch's message prints the grad_output's shape less its first two dims: copied as it is
    def scenario(lib):
        x = lib.randn(2, 2, requires_grad=True)
        out = x.clone()
        messages = []
        for shape in [(2, 2), (3, 4, 5, 6)]:
            try:
                lib.autograd.grad(out, (x,), (lib.ones(*shape),), is_grads_batched=True)
            except RuntimeError as e:
                messages.append(str(e).replace("gradiente.", "torch."))
        return messages

    assert len(on_both(scenario)[1]) == 2


def test_set_on_a_leaf_starts_a_new_variable_for_autograd():
    def scenario(lib):
        x = lib.rand(2, requires_grad=True)
        edge = lib.autograd.graph.get_gradient_edge(x)
        out = x.clone()
        with lib.no_grad():
            x.set_(lib.rand(2))
        try:
            lib.autograd.grad(out.sum(), x)
        except RuntimeError as e:
            refused = str(e)
        return refused, plain(lib.autograd.grad(out.sum(), edge)[0])

    on_both(scenario)


def test_backward_hooks_dict_can_be_replaced():
    def scenario(lib):
        from collections import OrderedDict
        seen = []
        z = lib.ones(2, requires_grad=True)
        y = z * 2
        z._backward_hooks = OrderedDict(first=lambda g: seen.append(("leaf", plain(g))))
        y._backward_hooks = OrderedDict(first=lambda g: seen.append(("y", plain(g))))
        y.sum().backward(retain_graph=True)       # a non-leaf's dict is only kept...
        y.grad_fn._register_hook_dict(y)            # ...until its node is told to call it
        y.sum().backward()
        return seen, sorted(z._backward_hooks), sorted(y._backward_hooks)

    on_both(scenario)
