"""``torch.autograd.graph``'s introspection, checked against PyTorch: ``Node``'s methods, ``GradientEdge`` and
``get_gradient_edge`` (also as inputs and outputs of ``autograd.grad`` and ``backward``),
``register_multi_grad_hook`` in its two modes, and ``increment_version``."""
import pytest
from harness import on_both, plain


def test_node_methods():
    def scenario(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x.exp()
        node = y.grad_fn
        node.metadata["tag"] = "exp"
        calls = []
        pre = node.register_prehook(lambda grad_outputs: calls.append(("pre", plain(grad_outputs[0]))))
        post = node.register_hook(lambda grad_inputs, grad_outputs: calls.append(("post", len(grad_inputs))))
        y.sum().backward(retain_graph=True)
        pre.remove()
        post.remove()
        y.sum().backward()
        later = (x * 2).grad_fn
        return (node.name(), node.metadata, isinstance(node, lib.autograd.graph.Node), calls,
                later._sequence_nr() > node._sequence_nr())

    on_both(scenario)


def test_get_gradient_edge_names_where_a_gradient_is_computed():
    def scenario(lib):
        leaf = lib.tensor([1.0, 2.0], requires_grad=True)
        x = leaf * 3
        edge = lib.autograd.graph.get_gradient_edge(x)
        x.mul_(2)                           # the edge keeps naming the value before the change
        before, after = lib.autograd.grad(x.sum(), (edge, x))
        leaf_edge = lib.autograd.graph.get_gradient_edge(leaf)
        (through_leaf,) = lib.autograd.grad((leaf * leaf).sum(), leaf_edge)
        return (plain(before), plain(after), plain(through_leaf), type(leaf_edge.node).__name__,
                leaf_edge.output_nr, edge.node is not None)

    on_both(scenario)


def test_get_gradient_edge_of_a_tensor_without_grad_is_refused():
    on_both(lambda lib: lib.autograd.graph.get_gradient_edge(lib.ones(2)))


def test_gradient_edges_as_inputs_of_grad_and_backward():
    def scenario(lib):
        GradientEdge = lib.autograd.graph.GradientEdge
        x = lib.rand(2, requires_grad=True).clone()
        y = lib.rand(2, requires_grad=True).clone()
        edge_x, edge_y = GradientEdge(x.grad_fn, x.output_nr), GradientEdge(y.grad_fn, y.output_nr)
        out = (x * 2 + y * 3).sum()
        by_edge = lib.autograd.grad(out, (edge_x, edge_y), retain_graph=True)
        by_tensor = lib.autograd.grad(out, (x, y), retain_graph=True)
        lib.autograd.backward(out, inputs=(edge_x, y), retain_graph=True)
        unused = (x * 2).sum()
        try:
            lib.autograd.grad(unused, (x, edge_y), allow_unused=True, materialize_grads=True)
        except RuntimeError as error:
            message = str(error)
        return [plain(g) for g in by_edge] == [plain(g) for g in by_tensor], plain(y.grad), message

    on_both(scenario)


def test_gradient_edge_as_an_output_of_grad():
    def scenario(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        h = a * a
        z = h * 3
        edge = lib.autograd.graph.get_gradient_edge(h)
        (g,) = lib.autograd.grad(edge, a, lib.ones(2))
        return plain(g), plain(lib.autograd.grad(z.sum(), a)[0])

    on_both(scenario)


def test_multi_grad_hook_all_mode_fires_once_per_backward_with_what_it_reached():
    def scenario(lib):
        ts = [lib.rand(2, requires_grad=True) for _ in range(4)]
        log = []
        handle = lib.autograd.graph.register_multi_grad_hook(ts, lambda grads: log.append(
            [g is not None for g in grads]))
        out = ts[1] * ts[2]
        out.sum().backward(inputs=(ts[1], ts[2]), retain_graph=True)
        out.sum().backward(inputs=(ts[0], ts[3]), retain_graph=True)       # reaches none of them: no call
        out.sum().backward(inputs=(ts[0], ts[2]), retain_graph=True)
        out.sum().backward(retain_graph=True)
        handle.remove()
        out.sum().backward()
        return log

    on_both(scenario)


def test_multi_grad_hook_any_mode_fires_on_the_first_gradient():
    def scenario(lib):
        a, b, c = (lib.ones(2, requires_grad=True) for _ in range(3))
        seen = []
        lib.autograd.graph.register_multi_grad_hook((a, b, c), lambda g: seen.append(plain(g)), mode="any")
        (a * 2 + b * 3).sum().backward()
        (c * 5).sum().backward()
        return seen

    on_both(scenario)


def test_multi_grad_hook_refuses_an_unknown_mode():
    on_both(lambda lib: lib.autograd.graph.register_multi_grad_hook((lib.ones(1, requires_grad=True),), print,
                                                                    mode="every"))


def test_multi_grad_hook_survives_a_backward_that_fails():
    def scenario(lib):
        a, b = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
        count = [0]
        lib.autograd.graph.register_multi_grad_hook((a, b), lambda grads: count.__setitem__(0, count[0] + 1))

        class Fails(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                raise RuntimeError("backward failed on purpose")

        try:
            (Fails.apply(a) * b).sum().backward()
        except RuntimeError as error:
            message = str(error)
        (a * b).sum().backward()
        return message, count[0]

    on_both(scenario)


@pytest.mark.parametrize("as_list", [False, True])
def test_increment_version_makes_saved_values_stale(as_list):
    def scenario(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x.clone()
        z = y * y
        before = y._version
        lib.autograd.graph.increment_version([y] if as_list else y)
        bumped = y._version - before
        try:
            z.sum().backward()
        except RuntimeError as error:
            return bumped, str(error).split(",")[0]
        return bumped, "no error"

    result = on_both(scenario)
    assert "modified by an inplace operation" in result[1][1]


def test_materialize_grads_wants_allow_unused():
    def scenario(lib):
        x = lib.tensor(0.5, requires_grad=True)
        y = x * lib.tensor(1.0, requires_grad=True)
        (dydx,) = lib.autograd.grad(y, x, create_graph=True)
        (unused,) = lib.autograd.grad(dydx, x, create_graph=True, allow_unused=True, materialize_grads=True)
        try:
            lib.autograd.grad(y, x, allow_unused=False, materialize_grads=True)
        except ValueError as error:
            return plain(unused), unused.requires_grad, str(error)

    on_both(scenario)


# --- the torch._C doors: the running backward's order, saved-tensor hook state, version counters --------------

def test_execution_order_of_the_running_backward_is_the_order_nodes_run():
    def scenario(lib):
        predicted, ran = [], []
        a = lib.tensor(1.0, requires_grad=True)
        b = a * 2
        out, out2, out3 = b.sin(), b.cos(), b.cos()
        for t in (b, out, out2, out3):
            t.register_hook(lambda g, t=t: ran.append(t.grad_fn.name()))
        out3.register_hook(lambda g: predicted.extend(n.name() for n in lib._C._current_graph_task_execution_order()))
        with lib.autograd.set_multithreading_enabled(False):
            lib.autograd.grad((out, out3, out2), inputs=(a,))
        return predicted, ran

    predicted, ran = on_both(scenario)[1]
    assert predicted == ["CosBackward0", "CosBackward0", "SinBackward0", "MulBackward0",
                         "torch::autograd::AccumulateGrad"]
    assert ran == predicted[:4]


def test_execution_order_of_a_partial_run_leaves_out_what_does_not_run():
    def scenario(lib):
        predicted = []
        a = lib.tensor(1.0, requires_grad=True)
        b = lib.tensor(1.0, requires_grad=True)
        out = (a * b).sin()
        out.register_hook(lambda g: predicted.extend(n.name() for n in lib._C._current_graph_task_execution_order()))
        with lib.autograd.set_multithreading_enabled(False):
            lib.autograd.grad((out,), inputs=(a,))
        return predicted

    assert on_both(scenario)[1] == ["SinBackward0", "MulBackward0", "torch::autograd::AccumulateGrad"]


def test_execution_order_outside_a_backward_or_with_multithreading_is_refused():
    def outside(lib):
        return lib._C._current_graph_task_execution_order()

    def multithreaded(lib):
        t = lib.tensor(1.0, requires_grad=True).exp()
        t.register_hook(lambda g: lib._C._current_graph_task_execution_order())
        t.backward()

    assert on_both(outside)[0] == "raised"
    assert on_both(multithreaded)[0] == "raised"


def test_saved_tensor_hooks_switch_state_and_raw_saved_handles():
    def scenario(lib):
        states = [lib._C._autograd._saved_tensors_hooks_is_enabled()]
        with lib.autograd.graph.disable_saved_tensors_hooks("outer"):
            with lib.autograd.graph.disable_saved_tensors_hooks("inner"):
                states.append(lib._C._autograd._saved_tensors_hooks_is_enabled())
            states.append(lib._C._autograd._saved_tensors_hooks_is_enabled())
        states.append(lib._C._autograd._saved_tensors_hooks_is_enabled())
        x = lib.ones(2, requires_grad=True)
        raw = (x * x).grad_fn._raw_saved_self
        return states, isinstance(raw, lib._C._autograd.SavedTensor)

    assert on_both(scenario)[1] == ([True, False, False, True], True)


def test_unsafe_set_version_counter():
    def scenario(lib):
        x = lib.ones(2, requires_grad=True).clone()
        x.add_(1)
        lib._C._autograd._unsafe_set_version_counter((x,), (7,))
        version = x._version
        try:
            lib._C._autograd._unsafe_set_version_counter((x,), (-1,))
        except RuntimeError as e:
            return version, str(e)

    assert on_both(scenario)[1] == (7, "Cannot set a version_counter to a value below 0: -1")


def test_fwd_grad_switch_and_weak_tensor_ref():
    def scenario(lib):
        fwad = lib.autograd.forward_ad
        try:
            lib._C._set_fwd_grad_enabled(False)
            off = fwad._is_fwd_grad_enabled()
        finally:
            lib._C._set_fwd_grad_enabled(True)
        t = lib.ones(1)
        ref = lib._C._WeakTensorRef(t)
        alive = ref.expired()
        del t
        return off, fwad._is_fwd_grad_enabled(), alive, ref.expired()

    assert on_both(scenario)[1] == (False, True, False, True)


def test_accumulate_grad_name_is_pytorchs_cpp_name():
    def scenario(lib):
        node = lib.ones(1, requires_grad=True).clone().grad_fn.next_functions[0][0]
        return node.name(), type(node).__name__, issubclass(lib._C._functions.AccumulateGrad, lib.autograd.graph.Node)

    assert on_both(scenario)[1] == ("torch::autograd::AccumulateGrad", "AccumulateGrad", True)
