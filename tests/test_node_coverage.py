"""Every graph node class gradiente defines is made by at least one op spec, so that the table-driven tests
(gradcheck, second derivatives, comparison with PyTorch) reach every derivative rule.

The node classes are the subclasses of ``autograd.graph.Node`` after every module of the package is imported
(the node classes of gradiente's own ``autograd.Function``s included; classes made on demand count once made).
The specs are the ``OpSpec`` rows that the test modules hold at top level. Each spec runs on each of its shape
cases (a few make a node of their own: nll_loss of images records NllLoss2DBackward0), in float64 on contiguous
inputs, and its graph is walked from the outputs through ``next_functions``.
A class no spec makes fails the test unless ``EXEMPT`` names it, with the reason.
"""
import importlib
import pkgutil
import warnings

import pytest
from harness import all_op_specs, make_tensors

import gradiente
from gradiente.autograd.graph import Node

# A class is named by the module that defines it and its name, as ``where`` spells it.
EXEMPT = {
    # Bases: they hold what their subclasses share and are never a node of a graph themselves.
    "gradiente.autograd.function.BackwardCFunction": "base of the node classes of autograd.Functions",
    "gradiente.ops.special._IncompleteGammaBackward": "base of IgammaBackward0 and IgammacBackward0",
    "gradiente.ops._table.UnaryNode": "base of the nodes of the unary table",
    "gradiente.ops.arithmetic._ZeroGradBackward": "base of the piecewise-constant nodes it names on demand "
                                                  "(PoissonBackward0, DivBackward2 of a rounded div)",
    "gradiente.core.inplace._Strided": "base of AsStridedBackward0 and CopySlices",
    "gradiente.ops.nn.linear_maps._LinearBackward": "base of the nodes of linear maps (interpolation, patches)",
    "gradiente.ops.nn.linear_maps._LinearGradientOfInput": "base of the linear maps' gradient nodes with an edge to "
                                                           "the op's input (AdaptiveAvgPool3DBackwardBackward0, ...)",
    "gradiente.ops.sparse_coo._SoftmaxOfEntries": "base of SparseSoftmaxBackward0 and SparseLogSoftmaxBackward0",
    "gradiente.ops.nn.losses._LossNode": "base of the pointwise-loss nodes",
    "gradiente.ops.nn.losses._LossGradientBackward": "base of the nodes of piecewise losses' gradients "
                                                     "(SmoothL1LossBackwardBackward0, HuberLossBackwardBackward0)",
    "gradiente.ops.nn.pooling._PoolBackward": "base of the pooling nodes",
    "gradiente.ops.nn.pooling._PoolBackwardBackward": "base of the nodes of the pooling nodes' gradients",
    "gradiente.ops.nn.padding._GatherPadBackward": "base of the reflection and replication padding nodes",
    "gradiente.ops.sparse_compressed._RegatherBackward": "base of the conversion nodes of the compressed sparse "
                                                         "layouts (ToSparseCsrBackward0 ...)",
    "gradiente.ops.nn.activations.PiecewiseGradientBackward": "base of the nodes of piecewise-linear activations' "
                                                               "gradients (HardtanhBackwardBackward0 ...)",
    # The nodes of Function classes that programs subclass and never apply themselves.
    "gradiente.autograd.function.FunctionBackward": "the node class of Function itself",
    "gradiente.utils.checkpoint.CheckpointFunctionBackward": "the reentrant checkpoint's Function; "
                                                            "tests/test_checkpoint.py makes it",
    "gradiente.autograd.function.InplaceFunctionBackward": "the node class of InplaceFunction itself",
    "gradiente.autograd.function.NestedIOFunctionBackward": "the node class of NestedIOFunction itself",
    # Made only inside other nodes' rules or by legacy Functions, with tests of their own.
    "gradiente.ops.nn.activations.ThresholdBackwardBackward0":
        "relu's and threshold's gradient under create_graph; "
        "test_nn_double_backward.py::test_relu_and_threshold_record_their_gradient_as_one_node",
    "gradiente.ops.nn.recurrent.MkldnnRnnLayerBackward0":
        "float32 nn.LSTM only, as PyTorch; test_nn_rnn.py gradchecks it in float64 and compares it with PyTorch",
    "gradiente.ops.nn.gru_sequence.GruSequenceBackward0":
        "float32 nn.GRU only; test_nn_gru_sequence.py gradchecks it in float64 and compares it with PyTorch",
    "gradiente.autograd._functions.ResizeBackward": "test_custom_function.py::test_legacy_resize_and_type_functions",
    "gradiente.autograd._functions.TypeBackward": "test_custom_function.py::test_legacy_resize_and_type_functions",
    # Made only by module hooks, which no op spec sets.
    "gradiente.nn.modules._backward_hooks.BackwardHookFunctionBackward":
        "made by nn.Module full backward hooks; test_nn_module.py tests them",
    # Nodes whose backward raises PyTorch's error: there is no derivative to check.
    "gradiente.ops.arithmetic.NotImplemented":
        "floor_divide, heaviside, ...; test_not_implemented_derivatives.py",
    "gradiente.autograd.function.Error":
        "once_differentiable's guard against a second derivative; test_custom_function.py",
    "gradiente.ops.linalg_lobpcg.LOBPCGAutogradFunctionBackward":
        "lobpcg's start is random and its results accurate to a tolerance, which the spec table's comparison with "
        "PyTorch cannot take; test_ops_linalg_lobpcg.py::test_gradients_match_torch_and_gradcheck",
    "gradiente.ops.linalg_householder.GeqrfBackward0":
        "test_ops_linalg_householder.py::test_geqrf_has_no_derivative_as_in_torch",
    "gradiente.ops.sorting.Unique2Backward0": "test_ops_sorting.py::test_unique_has_no_derivative_as_in_torch",
    "gradiente.ops.sorting.UniqueDimBackward0": "test_ops_sorting.py::test_unique_has_no_derivative_as_in_torch",
    "gradiente.ops.sorting.UniqueConsecutiveBackward0":
        "test_ops_sorting.py::test_unique_has_no_derivative_as_in_torch",
    "gradiente.ops.special.SpecialZetaBackward2":
        "zeta(x, number) has no derivative in x; test_ops_special.py::test_zeta_has_no_derivative_in_s",
    "gradiente.core.inplace.Error": "the history of a view its base's in-place change made stale; "
                                   "test_inplace_views.py checks its messages",
    "gradiente.ops.sparse_coo.SumBackward1": "Tensor.sum(dim) of a sparse tensor, which PyTorch cannot run backward; "
                                            "test_sparse.py::test_sum_method_has_pytorchs_backward_error",
    "gradiente.ops.sparse_compressed.SumBackward1": "CSR sum(dim, keepdim=True), which PyTorch cannot run backward; "
                                                   "test_not_implemented_audit.py checks the result and name",
    "gradiente.ops.nn.aten_nn.EmbeddingRenormBackward0":
        "torch.embedding_renorm_ of a tensor that requires grad; test_aten_nn_functions.py checks its error",
    # Dead code.
    "gradiente.ops.nn.activations.HardtanhBackward1": "nothing records it: hardtanh_ records HardtanhBackward0, "
                                                      "as PyTorch 2.13 does",
}


def where(cls):
    """``module.Name`` of a node class; for a Function's node, the module of the Function (its class is made
    in ``autograd.function``)."""
    forward = getattr(cls, "_forward_cls", None)
    module = forward.__module__ if forward is not None else cls.__module__
    return f"{module}.{cls.__qualname__}"


def node_classes():
    """Every Node subclass defined in gradiente, after importing all its modules."""
    for info in pkgutil.walk_packages(gradiente.__path__, "gradiente."):
        importlib.import_module(info.name)
    found, todo = [], [Node]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in found:
                found.append(sub)
                todo.append(sub)
    return [cls for cls in found if where(cls).startswith("gradiente.")]


def graph_nodes(out):
    """The nodes of the graph behind ``out`` (a tensor or a tuple of them), each once, walked iteratively."""
    outs = out if isinstance(out, (tuple, list)) else (out,)
    todo = [t.grad_fn for t in outs if isinstance(t, gradiente.Tensor) and t.grad_fn is not None]
    seen = {}
    while todo:
        node = todo.pop()
        if id(node) not in seen:
            seen[id(node)] = node
            todo.extend(fn for fn, _ in node.next_functions if fn is not None)
    return list(seen.values())


@pytest.fixture(scope="module")
def coverage():
    """``(classes, made)``: gradiente's node classes, and for each class some spec makes, the first such spec."""
    made = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # the specs' own warnings, tested where the specs are
        for module, spec in all_op_specs(skip=(__name__,)):
            for shapes in spec.shapes:
                for node in graph_nodes(spec.fn(gradiente, *make_tensors(gradiente, spec, shapes))):
                    made.setdefault(type(node), f"{module}::{spec.name}")
    return node_classes(), made      # after the specs: classes they made on demand are included


def test_every_node_class_is_made_by_an_op_spec(coverage):
    classes, made = coverage
    missing = sorted(where(cls) for cls in classes if cls not in made and where(cls) not in EXEMPT)
    assert not missing, ("node classes no op spec makes (add an OpSpec that calls the op, or an EXEMPT entry "
                         "with the reason):\n  " + "\n  ".join(missing))


def test_exemptions_are_current(coverage):
    classes, made = coverage
    named = {where(cls): cls for cls in classes}
    gone = sorted(name for name in EXEMPT if name not in named)
    assert not gone, "EXEMPT names classes that no longer exist: " + ", ".join(gone)
    covered = sorted(f"{name} (by {made[named[name]]})" for name in EXEMPT if named[name] in made)
    assert not covered, "EXEMPT names classes a spec now makes; drop them: " + ", ".join(covered)


def test_the_walk_finds_every_node_of_a_graph():
    x = gradiente.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    out = (y * y.sin()).sum()           # a diamond: y feeds both factors
    names = sorted(type(node).__name__ for node in graph_nodes(out))
    assert names == ["AccumulateGrad", "ExpBackward0", "MulBackward0", "SinBackward0", "SumBackward0"]
