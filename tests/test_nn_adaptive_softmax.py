"""``nn.AdaptiveLogSoftmaxWithLoss`` against PyTorch: parameters drawn in PyTorch's order (the same values for the
same seed), repr and state_dict keys, the ``_ASMoutput`` of forward (values, node names and every gradient), the
unbatched form, ``log_prob`` and ``predict``, float64 gradcheck, and the error messages."""
import numpy as np
import pytest

import gradiente

torch = pytest.importorskip("torch")

X = np.random.RandomState(0).randn(7, 8)
TARGET = [0, 4, 9, 2, 7, 5, 3]


def _module(lib, cutoffs=(3, 6), **kwargs):
    lib.manual_seed(0)
    return lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, list(cutoffs), **kwargs).double()


def _node_names(out):
    """The node class names behind ``out``, breadth-first along next_functions, each node once."""
    names, queue, seen = [], [out.grad_fn], []
    while queue:
        node = queue.pop(0)
        if node is None or any(node is s for s in seen):
            continue
        seen.append(node)
        names.append(type(node).__name__)
        queue += [child for child, _ in node.next_functions]
    return names


@pytest.mark.parametrize("kwargs", [{}, {"div_value": 2.0, "head_bias": True}, {"cutoffs": (2,)},
                                    {"cutoffs": (1, 4, 8), "div_value": 1.5}])
def test_parameters_repr_and_state_dict_match_torch(kwargs):
    ours, theirs = _module(gradiente, **kwargs), _module(torch, **kwargs)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for (name, ours_p), (_, theirs_p) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_array_equal(ours_p.detach().numpy(), theirs_p.detach().numpy(), err_msg=name)
    for attribute in ("in_features", "n_classes", "cutoffs", "div_value", "head_bias", "shortlist_size",
                      "n_clusters", "head_size"):
        assert getattr(ours, attribute) == getattr(theirs, attribute)


@pytest.mark.parametrize("kwargs", [{}, {"div_value": 2.0, "head_bias": True},
                                    {"cutoffs": (1, 4, 8), "div_value": 2.0}])
def test_forward_values_nodes_and_gradients_match_torch(kwargs):
    results = []
    for lib in (gradiente, torch):
        module = _module(lib, **kwargs)
        x = lib.tensor(X, requires_grad=True)
        out = module(x, lib.tensor(TARGET))
        assert type(out).__name__ == "_ASMoutput" and out._fields == ("output", "loss")
        (out.output * lib.tensor(np.linspace(0.5, 1.5, 7))).sum().add(out.loss).backward()
        results.append((out, x.grad, {k: p.grad for k, p in module.named_parameters()}, _node_names(out.output),
                        _node_names(out.loss)))
    (ours, our_dx, our_grads, *our_names), (theirs, their_dx, their_grads, *their_names) = results
    np.testing.assert_allclose(ours.output.detach().numpy(), theirs.output.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours.loss.detach().numpy(), theirs.loss.detach().numpy(), rtol=1e-12)
    assert our_names == their_names
    np.testing.assert_allclose(our_dx.numpy(), their_dx.numpy(), rtol=1e-10, atol=1e-14)
    assert list(our_grads) == list(their_grads)
    for name in their_grads:
        if their_grads[name] is None:
            assert our_grads[name] is None
        else:
            np.testing.assert_allclose(our_grads[name].numpy(), their_grads[name].numpy(), rtol=1e-10, atol=1e-14,
                                       err_msg=name)


def test_unbatched_forward_matches_torch():
    outs = [_module(lib)(lib.tensor(X[2]), lib.tensor(9)) for lib in (gradiente, torch)]
    assert tuple(outs[0].output.shape) == tuple(outs[1].output.shape) == ()
    np.testing.assert_allclose(outs[0].output.detach().numpy(), outs[1].output.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(outs[0].loss.detach().numpy(), outs[1].loss.detach().numpy(), rtol=1e-12)


def test_log_prob_matches_torch_and_sums_to_one():
    results = []
    for lib in (gradiente, torch):
        x = lib.tensor(X, requires_grad=True)
        log_prob = _module(lib, head_bias=True).log_prob(x)
        log_prob.exp().sum().backward()
        results.append((log_prob, x.grad))
    np.testing.assert_allclose(results[0][0].detach().numpy(), results[1][0].detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(np.exp(results[0][0].detach().numpy()).sum(1), 1.0, rtol=1e-12)
    assert type(results[0][0].grad_fn).__name__ == type(results[1][0].grad_fn).__name__
    np.testing.assert_allclose(results[0][1].numpy(), results[1][1].numpy(), atol=1e-12)


@pytest.mark.parametrize("shift", [0.0, -50.0, 50.0], ids=["mixed", "all_shortlisted", "none_shortlisted"])
def test_predict_matches_torch(shift):
    # a large head bias on the cluster entries sends every example to a cluster (or none, when negative)
    predictions = []
    for lib in (gradiente, torch):
        module = _module(lib, head_bias=True)
        with lib.no_grad():
            module.head.bias[module.shortlist_size:] += shift
        x = lib.tensor(X)
        prediction = module.predict(x)
        np.testing.assert_array_equal(prediction.numpy(), module.log_prob(x).argmax(1).numpy())
        predictions.append(prediction)
    assert predictions[0].dtype == gradiente.int64
    np.testing.assert_array_equal(predictions[0].numpy(), predictions[1].numpy())


def test_gradcheck_float64():
    module = _module(gradiente, head_bias=True)
    target = gradiente.tensor(TARGET)
    x = gradiente.tensor(X, requires_grad=True)
    assert gradiente.autograd.gradcheck(lambda x: tuple(module(x, target)), (x,))
    assert gradiente.autograd.gradcheck(module.log_prob, (x,))
    # in the parameters: the head's weight and a cluster's projection
    weights = (module.head.weight, module.tail[1][0].weight)
    assert gradiente.autograd.gradcheck(
        lambda w, v: gradiente.func.functional_call(module, {"head.weight": w, "tail.1.0.weight": v},
                                                    (x.detach(), target)).loss, weights)


@pytest.mark.parametrize("cutoffs", [[], [3, 3], [4, 2], [0, 3], [3, 10], [2.5]])
def test_constructor_errors_match_torch(cutoffs):
    errors = []
    for lib in (gradiente, torch):
        with pytest.raises(ValueError) as error:
            lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs)
        errors.append(str(error.value))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("args", [
    lambda lib: (lib.tensor(X), lib.tensor(TARGET[:5])),
    lambda lib: (lib.tensor(X)[None], lib.tensor([[1] * 7])),
    lambda lib: (lib.tensor(X), lib.tensor(1)),
    lambda lib: (lib.tensor(X[0]), lib.tensor(TARGET)[:1]),
    lambda lib: (lib.tensor(X), lib.tensor([0, 4, 12, 2, 7, 5, 3])),
    lambda lib: (lib.tensor(X), lib.tensor([0, 4, -1, 2, 7, 5, 3])),
], ids=["batch_sizes", "multi_target", "scalar_target_batched_input", "one_d_input", "target_too_big",
        "target_negative"])
def test_forward_errors_match_torch(args):
    errors = []
    for lib in (gradiente, torch):
        with pytest.raises(RuntimeError) as error:
            _module(lib)(*args(lib))
        errors.append(str(error.value).replace("gradiente.", "torch."))
    assert errors[0] == errors[1]
