"""``gradiente.explain.why_no_grad`` on each cause, in English and Spanish, with learner mode off (the cause from
what the graph shows) and on (the cause with its line); and the in-place error that names both lines."""
import warnings

import pytest
import torch as reference

import gradiente as torch
from gradiente.core import diagnostics
from gradiente.explain import Diagnosis, why_no_grad

LANGS = ("en", "es")


# --- each cause, as a learner writes it: returns (x, loss, the line that cut the path or None, a leaf the
# learner still holds or None) -----------------------------------------------------------------------------

def detach():
    x = torch.tensor([1., 2.], requires_grad=True)
    w = torch.tensor([3., 5.], requires_grad=True)
    loss = (x.detach() * w).sum()
    return x, loss, "loss = (x.detach() * w).sum()", None


def data():
    x = torch.tensor([1., 2.], requires_grad=True)
    w = torch.tensor([3., 5.], requires_grad=True)
    loss = (x.data * w).sum()
    return x, loss, "loss = (x.data * w).sum()", None


def no_grad():
    x = torch.tensor([1., 2.], requires_grad=True)
    w = torch.tensor([3., 5.], requires_grad=True)
    with torch.no_grad():
        y = x * 2
    loss = (y * w).sum()
    return x, loss, "y = x * 2", None


def inference_mode():
    x = torch.tensor([1., 2.], requires_grad=True)
    w = torch.tensor([3., 5.], requires_grad=True)
    with torch.inference_mode():
        y = x.exp()
    loss = (y.clone() * w).sum()
    return x, loss, "y = x.exp()", None


def numpy_round_trip():
    x = torch.tensor([1., 2.], requires_grad=True)
    w = torch.tensor([3., 5.], requires_grad=True)
    loss = (torch.tensor(x.tolist()) * w).sum()
    return x, loss, "loss = (torch.tensor(x.tolist()) * w).sum()", None


def item_round_trip():
    x = torch.tensor(2., requires_grad=True)
    w = torch.tensor(3., requires_grad=True)
    loss = torch.tensor(x.item() ** 2) * w
    return x, loss, "loss = torch.tensor(x.item() ** 2) * w", None


def not_leaf():
    x = torch.tensor([1., 2.], requires_grad=True)
    h = x * 3
    loss = (h ** 2).sum()
    return h, loss, "h = x * 3", x     # the learner still holds the leaf x (else h would look like x replaced)


def replaced():
    x = torch.tensor([1., 2.], requires_grad=True)
    x = x * 2
    loss = (x ** 2).sum()
    return x, loss, "x = x * 2", None


def modified_in_place():
    x = torch.tensor([1., 2.], requires_grad=True)
    h = x * 1
    h.retain_grad()
    loss = h.exp().sum()
    h.mul_(2)
    return h, loss, "h.mul_(2)", None


def never_used():
    x = torch.tensor([1., 2.], requires_grad=True)
    w = torch.tensor([3., 5.], requires_grad=True)
    loss = (w * 2).sum()
    return x, loss, None, None


def graph_freed():
    x = torch.tensor([1., 2.], requires_grad=True)
    loss = x.sin().sum()
    loss.backward()
    x.grad = None
    return x, loss, "loss.backward()", None


def requires_grad_false():
    x = torch.tensor([1., 2.])
    w = torch.tensor([3., 5.], requires_grad=True)
    loss = (x * w).sum()
    return x, loss, None, None


def integer_dtype():
    x = torch.tensor([1, 2])
    w = torch.tensor([3., 5.], requires_grad=True)
    loss = (x * w).sum()
    return x, loss, None, None


def no_graph():
    x = torch.tensor([1., 2.], requires_grad=True)
    with torch.no_grad():
        loss = (x * 2).sum()
    return x, loss, "loss = (x * 2).sum()", None


# cause found with learner mode off, cause with it on, and a fragment of each language's message
CASES = {
    detach: ("detach", "detach", "cut by .detach()", "se cortó con .detach()"),
    data: ("data", "data", "", ""),         # off: read from the counter .data's remembers
    no_grad: ("never_used", "no_grad", "", "dentro de torch.no_grad()"),
    inference_mode: ("never_used", "inference_mode", "", "torch.inference_mode()"),
    numpy_round_trip: ("numpy", "numpy", "through NumPy or plain Python", "pasó por NumPy o por Python"),
    item_round_trip: ("never_used", "numpy", "", "(.item())"),
    not_leaf: ("not_leaf", "not_leaf", "is not a leaf", "no es una hoja"),
    replaced: ("replaced", "replaced", "no longer refers", "ya no se refiere"),
    modified_in_place: ("modified_in_place", "modified_in_place", "changed in place", "se modificó en el lugar"),
    never_used: ("never_used", "never_used", "does not depend on x", "no depende de x"),
    graph_freed: ("graph_freed", "graph_freed", "already used by a backward()", "ya lo usó un backward()"),
    requires_grad_false: ("requires_grad_false", "requires_grad_false", "x.requires_grad is False",
                          "x.requires_grad es False"),
    integer_dtype: ("dtype", "dtype", "its dtype is gradiente.int64", "su dtype es gradiente.int64"),
    no_graph: ("no_graph", "no_grad", "", "dentro de torch.no_grad()"),    # on: the no_grad block is known
}


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("case", list(CASES), ids=lambda f: f.__name__)
def test_each_cause_with_learner_mode_on_names_it_and_its_line(case, lang):
    _, cause, *fragments = CASES[case]
    with torch.learner_mode(lang=lang):
        x, loss, line, leaf = case()          # (the leaf is held by a name here, as a learner's would be)
        found = why_no_grad(x, loss, lang=lang)
    assert leaf is None or leaf.is_leaf
    assert isinstance(found, Diagnosis)
    assert found.cause == cause
    assert str(found) == found.message
    assert fragments[LANGS.index(lang)] in found.message
    if line is not None:
        assert found.where is not None and found.where.code == line and found.where.filename == __file__
        assert f"{__file__}:{found.where.lineno}" in found.message
    if cause in ("dtype", "requires_grad_false", "never_used"):
        assert found.where is None


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("case", list(CASES), ids=lambda f: f.__name__)
def test_each_cause_with_learner_mode_off_is_read_from_the_graph(case, lang):
    cause = CASES[case][0]
    x, loss, _, leaf = case()
    found = why_no_grad(x, loss, lang=lang)
    assert leaf is None or leaf.is_leaf
    assert found.cause == cause
    assert found.where is None
    hint = {"en": "turn on learner mode", "es": "activa el modo aprendiz"}[lang]
    knowable = cause in ("detach", "data", "numpy", "not_leaf", "replaced", "modified_in_place", "graph_freed")
    assert (hint in found.message) == knowable


def test_a_result_without_graph():
    x = torch.tensor([1., 2.], requires_grad=True)
    loss = (x.detach() * 2).sum()
    found = why_no_grad(x, loss, lang="es")
    assert found.cause == "no_graph" and found.message.startswith("loss no tiene grafo (requires_grad=False)")


def test_the_spanish_message_is_spanish_and_names_the_learners_variables():
    peso = torch.tensor([1., 2.], requires_grad=True)
    otro = torch.tensor([3., 5.], requires_grad=True)
    perdida = (peso.detach() * otro).sum()
    found = why_no_grad(peso, perdida, lang="es")
    assert found.message.startswith("El camino de peso a perdida se cortó con .detach()")
    assert found.title == "¿Por qué peso.grad es None?"
    assert found.label == "detach()"


def test_a_path_that_is_intact():
    x = torch.tensor([1., 2.], requires_grad=True)
    loss = (x ** 2).sum()
    assert why_no_grad(x, loss).cause == "not_backpropagated"
    loss.backward()
    found = why_no_grad(x, loss, lang="es")
    assert found.cause == "has_grad" and "ya tiene su gradiente" in found.message


def test_a_tensor_made_by_detach_or_data_is_named_as_such():
    x = torch.tensor([1., 2.], requires_grad=True)
    w = torch.tensor([3., 5.], requires_grad=True)
    with torch.learner_mode():
        d = x.detach()
        loss = (d * w).sum()
        assert why_no_grad(d, loss).message.startswith("d was made by .detach() at")
        v = x.data
        assert why_no_grad(v, loss).cause == "data"
    assert why_no_grad(x.detach(), loss).cause == "detach"


def test_a_tensor_assigned_in_a_no_grad_block():
    x = torch.tensor([1., 2.], requires_grad=True)
    w = torch.tensor([3., 5.], requires_grad=True)
    with torch.learner_mode(lang="es"):
        with torch.no_grad():
            y = x * 2
        loss = (y * w).sum()
        found = why_no_grad(y, loss, lang="es")
    assert found.cause == "no_grad" and found.where.code == "y = x * 2"
    assert "se creó sin historia" in found.message


def test_the_displays():
    x = torch.tensor([1., 2.], requires_grad=True)
    loss = (x.detach() * torch.ones(2, requires_grad=True)).sum()
    with torch.learner_mode():
        loss = (x.detach() * torch.ones(2, requires_grad=True)).sum()
        found = why_no_grad(x, loss)
    markdown = found._repr_markdown_()
    assert markdown.startswith("**Why is x.grad None?** (detach())") and found.message in markdown
    page = found._repr_html_()
    assert page.startswith('<div class="gradiente-diagnosis"') and "<code>.detach()</code>" not in page
    assert "<code>loss = (x.detach() * torch.ones(2, requires_grad=True)).sum()</code>" in page
    assert f"{__file__}:{found.where.lineno}" in page
    assert repr(found) == f"{found.title}\n{found.message}"


def test_bad_arguments():
    x = torch.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match="lang must be one of en, es"):
        why_no_grad(x, x.sum(), lang="fr")
    with pytest.raises(TypeError, match="loss is a float"):
        why_no_grad(x, 1.0)


def test_cuts_cost_nothing_when_no_mode_is_on():
    x = torch.tensor([1., 2.], requires_grad=True)
    x.detach(), x.data, x.tolist()
    with torch.no_grad():
        x * 2
    assert not diagnostics.state.sites and len(diagnostics.state.cuts) == 0


def test_cuts_made_by_gradiente_itself_are_not_the_learners():
    w = torch.nn.Parameter(torch.tensor([1., 2.]))
    opt = torch.optim.SGD([w], lr=0.1)
    with torch.learner_mode():
        (w * w).sum().backward()
        opt.step()
        torch.nn.utils.clip_grad_norm_([w], 1.0)
        assert len(diagnostics.state.cuts) == 0


# --- the in-place error ---------------------------------------------------------------------------------

def _inplace_error(lib):
    x = lib.tensor([1., 2.], requires_grad=True)
    h = x * 1
    y = h.sin().sum()   # sin saves h
    h.mul_(2)           # and h changes
    with pytest.raises(RuntimeError) as info:
        y.backward()
    return str(info.value)


def test_the_inplace_error_is_pytorchs_when_no_mode_is_on():
    assert _inplace_error(torch) == _inplace_error(reference)


def test_the_inplace_error_names_both_lines_in_learner_mode():
    with torch.learner_mode():
        message = _inplace_error(torch)
    pytorch_message, _, lines = message.partition("\n")
    assert pytorch_message == _inplace_error(reference)
    assert f"saved    at {__file__}:" in lines and "by SinBackward0" in lines and "y = h.sin().sum()" in lines
    assert "in place by mul_ (version 0 → 1):  h.mul_(2)" in lines


def test_the_inplace_error_names_both_lines_in_anomaly_mode_and_for_an_assignment():
    x = torch.tensor([1., 2.], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autograd.detect_anomaly():
            h = x * 1
            y = (h ** 2).sum()
            h[0] = 5.
            with pytest.raises(RuntimeError) as info:
                y.backward()
    lines = str(info.value).partition("\n")[2]
    assert "by PowBackward0" in lines and "y = (h ** 2).sum()" in lines
    assert "in place by copy_ (version 0 → 1):  h[0] = 5." in lines
    assert not diagnostics.state.sites         # off again, with the mode
