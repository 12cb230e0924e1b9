"""explain, sharper (issue 15, part 2): the learner's names in every line, each local derivative named
and valued, notes on what PyTorch decomposed and on dead ReLUs, and the HTML display, in English and
Spanish; the numbers and node names checked against real torch on the same inputs."""
import json
import os
from html.parser import HTMLParser

import numpy as np
import pytest
import torch

import gradiente
import gradiente.nn.functional as F
from gradiente.autograd import gradcheck
from gradiente.explain import explain
from gradiente.explain.symbols import DERIVATIVES, EXPRESSIONS
from gradiente.viz.walk import reachable

HERE = os.path.dirname(os.path.abspath(__file__))
NOTEBOOK = os.path.join(HERE, "..", "examples", "seed003_grafo.ipynb")
LANGS = ("en", "es")


def _pair(values, requires_grad=True):
    return (gradiente.tensor(values, dtype=gradiente.float64, requires_grad=requires_grad),
            torch.tensor(values, dtype=torch.float64, requires_grad=requires_grad))


def _neuron(lib, w, x, b):
    return lib.sin(w * x + b).exp().sum()


@pytest.mark.parametrize("lang", LANGS)
def test_names_flow_into_leaves_and_intermediates(lang):
    w, tw = _pair([0.5, -1.0])
    b, tb = _pair(0.1)
    x = gradiente.tensor([1.0, 2.0], dtype=gradiente.float64)
    e = explain(_neuron(gradiente, w, x, b), params={"w": w, "b": b}, lang=lang)
    _neuron(torch, tw, torch.tensor([1.0, 2.0], dtype=torch.float64), tb).backward()
    np.testing.assert_array_equal(e.grads["w"], tw.grad.numpy())
    np.testing.assert_array_equal(e.grads["b"], tb.grad.numpy())
    text = str(e)
    for expected in ("w·x + b", "sin(w·x + b)", "exp(sin(w·x + b))", "w.grad", "b.grad"):
        assert expected in text
    assert [s.expression for s in e.steps if not s.is_leaf] == [
        "sum(exp(sin(w·x + b)))", "exp(sin(w·x + b))", "sin(w·x + b)", "w·x + b", "w·x"]


def test_a_constant_is_named_by_the_variable_holding_it_else_c():
    w, tw = _pair([0.5, -1.0])
    scale = gradiente.tensor([3.0, 4.0], dtype=gradiente.float64)
    e = explain((w * scale).sum() + (w * 2).sum(), params={"w": w})
    (tw * torch.tensor([3.0, 4.0], dtype=torch.float64)).sum().add((tw * 2).sum()).backward()
    np.testing.assert_array_equal(e.grads["w"], tw.grad.numpy())
    expressions = [s.expression for s in e.steps if not s.is_leaf]
    assert "w·scale" in expressions and "w·c" in expressions
    assert "∂/∂w = scale" in str(e)


def test_renamed_leaves_follow_params():
    w, _ = _pair([0.5, -1.0])
    e = explain((w * w).sum(), params={"peso": w})
    assert "∂/∂peso = peso" in str(e)
    assert "peso·peso" in e.to_markdown()
    assert list(e.grads) == ["peso"]


@pytest.mark.parametrize("lang", LANGS)
def test_local_derivatives_named_and_valued(lang):
    x, tx = _pair([0.3, 1.2, -0.7])
    e = explain(x.sin().sum() + x.exp().sum(), params={"x": x}, lang=lang)
    (tx.sin().sum() + tx.exp().sum()).backward()
    np.testing.assert_allclose(e.grads["x"], tx.grad.numpy(), rtol=0, atol=0)
    steps = {s.name: s for s in e.steps}
    assert steps["SinBackward0"].symbolic == ["cos(x)"]
    assert steps["ExpBackward0"].symbolic == ["eˣ"]
    np.testing.assert_array_equal(steps["SinBackward0"].passes[0].local, torch.cos(tx.detach()).numpy())
    np.testing.assert_array_equal(steps["ExpBackward0"].passes[0].local, torch.exp(tx.detach()).numpy())
    word = {"en": "local derivatives", "es": "derivadas locales"}[lang]
    assert f"{word}: ∂/∂x = cos(x)" in str(e)
    assert f"{word}: `∂/∂x = eˣ`" in e.to_markdown()
    each = {"en": "(each element)", "es": "(cada elemento)"}[lang]
    assert each in str(e)


def test_power_and_quotient_forms():
    x, _ = _pair([1.5, 2.0])
    y, _ = _pair([0.5, 4.0])
    e = explain((x ** 3 / y).sum(), params={"x": x, "y": y})
    forms = {s.name: s.symbolic for s in e.steps if not s.is_leaf}
    assert forms["PowBackward0"] == ["3·x^(3-1)"]
    assert forms["DivBackward0"] == ["1/y", "-x^3/y²"]


def _seed_notebook_node_names():
    with open(NOTEBOOK, encoding="utf-8") as f:
        cells = [c for c in json.load(f)["cells"] if c["cell_type"] == "code"]
    names = set()
    scope = {}
    for cell in cells:
        source = "".join(cell["source"])
        exec(compile(source, NOTEBOOK, "exec"), scope)
        for value in list(scope.values()):
            if isinstance(value, gradiente.Tensor) and value.grad_fn is not None:
                names |= {type(n).__name__ for n in reachable([value.grad_fn])}
    return names


def _nn_node_names():
    x = gradiente.randn(3, 4, requires_grad=True)
    weight = gradiente.randn(5, 4, requires_grad=True)
    target = gradiente.tensor([0, 1, 2])
    outputs = [F.cross_entropy(x, target), F.mse_loss(x, gradiente.zeros(3, 4)), F.log_softmax(x, 1).sum(),
               F.softmax(x, 1).sum(), F.relu(F.linear(x, weight)).mean(), (x @ weight.T).tanh().sigmoid().sum(),
               (x.sqrt().log() - x.reciprocal().neg()).pow(2).sum(), (1 / (x + 2)).mean(), (x / 2 - 1).sum()]
    return {type(n).__name__ for y in outputs for n in reachable([y.grad_fn])}


def test_every_seed_and_nn_node_has_a_symbolic_form():
    names = (_seed_notebook_node_names() | _nn_node_names()) - {"AccumulateGrad"}
    assert {"MeanBackward0", "PowBackward0", "ReciprocalBackward0", "SinBackward0"} <= names
    missing = sorted(n for n in names if n not in DERIVATIVES or n not in EXPRESSIONS)
    assert missing == []


def _torch_names(fn, values):
    t = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    return {type(n).__name__ for n in _torch_reachable(fn(t).grad_fn)}


def _torch_reachable(node):
    seen, stack = [], [node]
    while stack:
        n = stack.pop()
        if n is None or n in seen:
            continue
        seen.append(n)
        stack += [nxt for nxt, _ in n.next_functions]
    return seen


DECOMPOSED = [
    (lambda x: (1 / (x + 2)).sum(), "ReciprocalBackward0",
     {"en": "computed as reciprocal", "es": "se calcula como el recíproco"}),
    (lambda x: (x - x * 3).sum(), "SubBackward0", {"en": "alpha = 1", "es": "alpha = 1"}),
    (lambda x: x.mean(), "MeanBackward0", {"en": "divided by n", "es": "dividido entre n"}),
    (lambda x: (3 - x).sum(), "RsubBackward1", {"en": "RsubBackward1", "es": "RsubBackward1"}),
]


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("fn,node,words", DECOMPOSED)
def test_decomposition_notes(fn, node, words, lang):
    values = [0.5, 1.5, 3.0]
    x, tx = _pair(values)
    y = fn(x)
    assert node in _torch_names(fn, values)         # the node PyTorch itself records
    assert gradcheck(fn, (gradiente.tensor(values, dtype=gradiente.float64, requires_grad=True),))
    e = explain(y, params={"x": x}, lang=lang)
    fn(tx).backward()
    np.testing.assert_allclose(e.grads["x"], tx.grad.numpy(), rtol=1e-15)
    heading = {"en": "Notes", "es": "Notas"}[lang]
    assert heading in str(e)
    assert words[lang] in str(e)
    assert words[lang] in e.to_markdown()


def test_no_note_for_an_undecomposed_graph():
    x, _ = _pair([0.5, 1.5])
    assert "Notes" not in str(explain((x * x).sum(), params={"x": x}))


@pytest.mark.parametrize("lang", LANGS)
def test_dead_relu_note(lang):
    h, th = _pair([-1.0, -2.0, 0.0])
    e = explain(gradiente.relu(h * 2).sum(), params={"h": h}, lang=lang)
    torch.relu(th * 2).sum().backward()
    np.testing.assert_array_equal(e.grads["h"], th.grad.numpy())
    words = {"en": ("ReLU of step 2 is dead", "LeakyReLU"), "es": ("ReLU del paso 2 está muerta", "LeakyReLU")}
    for w in words[lang]:
        assert w in str(e)
    alive, _ = _pair([-1.0, 2.0])
    assert "dead" not in str(explain(gradiente.relu(alive).sum(), params={"h": alive}))


class _Structure(HTMLParser):
    """Records the open/close tags (checking they nest) and the text of every cell."""

    VOID = ("br",)

    def __init__(self):
        super().__init__()
        self.stack, self.tags, self.cells, self.text = [], [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag not in self.VOID:
            self.stack.append(tag)
        if tag == "td":
            self.text = []

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, (tag, self.stack)
        self.stack.pop()
        if tag == "td":
            self.cells.append("".join(self.text))

    def handle_data(self, data):
        self.text.append(data)


@pytest.mark.parametrize("lang", LANGS)
def test_html_display(lang):
    x, tx = _pair([0.5, -1.0])
    e = explain((x.sin() * 2).sum(), params={"<x&>": x}, lang=lang)
    html = e._repr_html_()
    parser = _Structure()
    parser.feed(html)
    assert parser.stack == []
    tags = [t for t, _ in parser.tags]
    assert tags[0] == "div" and "table" in tags and "thead" in tags
    assert tags.count("tr") == 1 + len(e.steps)
    assert "<x&>" not in html and "&lt;x&amp;&gt;" in html
    assert "∂/∂&lt;x&amp;&gt; = cos(&lt;x&amp;&gt;)" in html
    header = {"en": "Local derivatives", "es": "Derivadas locales"}[lang]
    assert f"<th>{header}</th>" in html
    for tag, attrs in parser.tags:       # self-contained: nothing fetched from elsewhere
        assert tag not in ("script", "link", "img", "iframe")
        assert not any(key in ("src", "href") for key in attrs)
    (tx.sin() * 2).sum().backward()
    local = torch.cos(tx.detach()).numpy()
    assert any(f"{local[0]:.4f}" in cell for cell in parser.cells)
    assert e.to_html("es") != e.to_html("en")


def test_html_graph_is_inline_svg():
    x, _ = _pair([0.5, -1.0])
    html = explain((x * x).sum(), params={"x": x})._repr_html_()
    try:
        gradiente.viz.make_dot(gradiente.tensor(1.0, requires_grad=True) * 2).pipe(format="svg")
    except Exception:
        pytest.skip("no Graphviz here to draw the graph")
    assert '<div class="graph"><svg' in html and "MulBackward0" in html.split('<div class="graph">')[1]


@pytest.mark.parametrize("lang", ["en", "es"])
def test_names_given_to_make_dot_are_reused_by_explain(lang):
    # a learner names the leaves once, when drawing; the walkthrough that follows uses the same names
    w = gradiente.tensor([2.0], requires_grad=True)
    b = gradiente.tensor([1.0], requires_grad=True)
    loss = (w * 3 + b).sum()
    gradiente.viz.make_dot(loss, params={"peso": w, "sesgo": b})
    text = str(explain(loss, lang=lang))
    assert "peso.grad = [3.]" in text and "sesgo.grad = [1.]" in text
    assert " w" not in text.replace("wa", "")        # not the variable names guessed from this frame


def test_remembered_names_keep_no_tensor_alive():
    import gc
    import weakref

    from gradiente.viz.names import remembered_name

    def draw():   # in its own frame: to_text reads the caller's variables, which Python keeps while it runs
        v = gradiente.tensor([1.0], requires_grad=True)
        gradiente.viz.to_text(v * 2, params={"v0": v})
        assert remembered_name(v) == "v0"
        return weakref.ref(v)

    ref = draw()
    gc.collect()
    assert ref() is None
    fresh = gradiente.tensor([1.0])
    assert remembered_name(fresh) is None
