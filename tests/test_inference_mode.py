"""Inference mode against PyTorch: which tensors are inference tensors, which ops record, the errors for an
inference tensor saved for backward or changed in place outside the mode, views made inside it, nesting, and
``inference_mode`` as a decorator. Each scenario runs on both libraries and its observations are compared."""
import numpy as np
import pytest
from harness import error_of

import gradiente

torch = pytest.importorskip("torch")

LIBS = [gradiente, torch]


def _same(scenario):
    """Run ``scenario(lib)`` on both libraries and compare what it returns."""
    ours, theirs = scenario(gradiente), scenario(torch)
    assert ours == theirs


def test_the_mode_nests_and_inference_mode_false_turns_grad_back_on():
    def scenario(lib):
        seen = [lib.is_inference_mode_enabled(), lib.is_grad_enabled()]
        with lib.inference_mode():
            seen += [lib.is_inference_mode_enabled(), lib.is_grad_enabled()]
            with lib.inference_mode(False):
                seen += [lib.is_inference_mode_enabled(), lib.is_grad_enabled()]
                made = lib.ones(2)
                seen.append(made.is_inference())
            seen += [lib.is_inference_mode_enabled(), lib.is_grad_enabled()]
        with lib.no_grad(), lib.inference_mode(False):
            seen.append(lib.is_grad_enabled())
        return seen + [lib.is_inference_mode_enabled()]
    _same(scenario)


@pytest.mark.parametrize("form", ["bare", "true", "false", "kw_true", "kw_false", "kw_func"])
@pytest.mark.parametrize("requires_grad", [True, False])
def test_decorator_forms(form, requires_grad):
    def scenario(lib):
        def square(x):
            return x * x, lib.is_inference_mode_enabled()
        decorated = {"bare": lambda: lib.inference_mode(square), "true": lambda: lib.inference_mode(True)(square),
                     "false": lambda: lib.inference_mode(False)(square),
                     "kw_true": lambda: lib.inference_mode(mode=True)(square),
                     "kw_false": lambda: lib.inference_mode(mode=False)(square),
                     "kw_func": lambda: lib.inference_mode(mode=square)}[form]()
        out, inside = decorated(lib.ones(2, 3, requires_grad=requires_grad))
        return inside, out.is_inference(), out.requires_grad, lib.is_inference_mode_enabled()
    _same(scenario)


def test_tensors_made_inside_are_inference_tensors():
    def scenario(lib):
        with lib.inference_mode():
            made = lib.ones(2, 3)
            wanted = lib.ones(2, 3, requires_grad=True)
            product = wanted * wanted
            view = wanted.view(-1)
            seen = [made.is_inference(), wanted.is_inference(), wanted.requires_grad, product.is_inference(),
                    product.requires_grad, view.is_inference(), view.requires_grad, view._is_view(),
                    view._base is None, error_of(lambda: made._version)]
        return seen + [lib.is_inference(made), lib.is_inference(made.clone()), made.detach().is_inference(),
                       error_of(lambda: lib.is_inference(3))]
    _same(scenario)


def test_inference_tensors_used_outside_the_mode():
    def scenario(lib):
        with lib.inference_mode():
            c = lib.ones(2, 3, requires_grad=True)
            plain = lib.ones(2, 3)
        s = lib.ones(2, 3, requires_grad=True)
        total = c.add(s)            # add saves nothing: allowed, and c is a leaf that gets a gradient
        total.backward(lib.ones_like(total))
        view = c.view(-1)
        seen = [total.is_inference(), total.requires_grad, c.grad.tolist(), view.is_inference(),
                view.requires_grad, view._is_view(), view.is_leaf]
        square = plain * plain      # only inference tensors: autograd does not see the op
        seen += [square.is_inference(), square.requires_grad, square.is_leaf]
        seen.append(error_of(lambda: c * s))
        seen.append(error_of(lambda: plain.add_(1)))
        seen.append(error_of(lambda: plain.transpose_(0, 1)))
        seen.append(list(plain.shape))
        with lib.no_grad():
            seen.append(error_of(lambda: plain.mul_(2)))
        seen.append(error_of(lambda: lib.mul(s, s, out=plain)))
        seen.append(error_of(lambda: lib.mul(s.detach(), s.detach(), out=plain)))
        return seen
    _same(scenario)


def test_saving_an_inference_tensor_in_a_nested_normal_region_fails():
    def scenario(lib):
        s = lib.ones(3, requires_grad=True)
        with lib.inference_mode():
            c = lib.ones(3)
            with lib.inference_mode(False):
                return error_of(lambda: c * s), (c + s).requires_grad
    _same(scenario)


def test_in_place_on_a_normal_tensor_inside_the_mode_is_still_seen_by_autograd():
    def scenario(lib):
        a = lib.ones(2, 3, requires_grad=True).clone()
        out = a * a
        with lib.inference_mode():
            a.add_(2)
            view = a.view(-1)
            a.transpose_(0, 1)
            seen = [a.is_inference(), a.requires_grad, a._version, view.is_inference(), view.requires_grad,
                    view._is_view()]
        kind, message = error_of(lambda: out.backward(lib.ones_like(out)))
        return seen + [kind, message.split(", which is")[0]]     # PyTorch then names the node oddly ("Clone")
    _same(scenario)


@pytest.mark.parametrize("requires_grad", [True, False])
def test_views_made_inside_the_mode_of_normal_tensors(requires_grad):
    def scenario(lib):
        a = lib.ones(2, 3, requires_grad=requires_grad).clone()
        with lib.inference_mode():
            view = a.view(-1)
            view_of_view = view.view(-1)
            seen = [view.is_inference(), view.requires_grad, view._is_view(), view.is_leaf, view_of_view._is_view()]
        used = view * view
        seen += [used.is_inference(), used.requires_grad]
        seen.append(error_of(lambda: view.add_(2)))
        seen.append(error_of(lambda: view_of_view.view(2, 3).mul_(2)))
        return seen
    _same(scenario)


def test_in_place_through_a_view_inside_the_mode_keeps_one_version_counter():
    def scenario(lib):
        a = lib.ones(2, 3, requires_grad=True).clone()
        with lib.inference_mode():
            view = a.view(-1).view(-1)
            view.add_(2)
            return view.is_inference(), view.requires_grad, a._version == view._version, a.tolist()
    _same(scenario)


def test_in_place_ops_on_inference_tensors_inside_the_mode():
    def scenario(lib):
        seen = []
        with lib.inference_mode():
            for requires_grad in (True, False):
                c = lib.ones(1, 2, 3, requires_grad=requires_grad)
                c.add_(2)
                c.transpose_(0, 1)
                seen += [c.is_inference(), c.requires_grad, list(c.shape)]
                c.resize_(1, 2)
                c.copy_(lib.zeros(1, 2))
                seen += [list(c.shape), c.tolist()]
        return seen
    _same(scenario)


def test_values_and_gradients_of_a_model_run_then_trained():
    """The use case: evaluate under inference mode, then train on clones of its outputs."""
    def scenario(lib):
        w = lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3), requires_grad=True)
        x = lib.tensor(np.arange(6.0).reshape(3, 2) / 5)
        with lib.inference_mode():
            features = (w @ x).tanh()
        target = features.clone()
        loss = ((w @ x).tanh() * target).sum()
        loss.backward()
        return np.round(features.numpy(), 6).tolist(), np.round(w.grad.numpy(), 6).tolist()
    _same(scenario)
