"""The chain-rule walkthrough: its numbers are backward()'s, bit for bit, on graphs with shared
sub-expressions, broadcasting and reductions; what it says, in English and Spanish, as text and as
Markdown/LaTeX; and the seed 003 notebook, executed with a real Jupyter kernel."""
import os

import numpy as np
import pytest

import gradiente
from gradiente.explain import GraphFreedError, explain

HERE = os.path.dirname(os.path.abspath(__file__))
NOTEBOOK = os.path.join(HERE, "..", "examples", "seed003_grafo.ipynb")


class _Square(gradiente.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x * grad


def _shared(L, x):
    a = x * 2
    b = a.exp()
    return (a * b + a - b).sum()


# name: (fn(lib, *inputs) -> (output, upstream gradient or None), input shapes, inputs requiring grad)
GRAPHS = {
    "seed_mean_square": (lambda L, x: ((((x + 1) ** 2) + 2).mean(), None), [(3,)], 1),
    "seed_exercise": (lambda L, x: ((L.sin(x) * L.exp(x) + 1 / (x + 2)).mean(), None), [(5,)], 1),
    "shared_subexpression": (lambda L, x: (_shared(L, x), None), [(4,)], 1),
    "leaf_used_three_times": (lambda L, x: ((x * x * x).sum() + x.sum(), None), [(3,)], 1),
    "broadcast_row_col": (lambda L, a, b: ((a * b + a).sum(), None), [(2, 1), (3,)], 2),
    "broadcast_bias": (lambda L, x, w, b: ((x * w + b).tanh().sum(), None), [(4, 3), (3,), (1,)], 3),
    "broadcast_scalar_tensor": (lambda L, x, s: (((x - s) ** 2).mean(), None), [(2, 3), ()], 2),
    "sum_over_dim": (lambda L, x: ((x.sum(0) ** 2).sum(), None), [(3, 4)], 1),
    "mean_keepdim_center": (lambda L, x: (((x - x.mean(1, keepdim=True)) ** 2).sum(), None), [(3, 4)], 1),
    "matmul_relu": (lambda L, a, b: (L.relu(a.mm(b) - 0.5).sum(), None), [(2, 3), (3, 2)], 2),
    "matrix_vector": (lambda L, m, v: ((m @ v).sigmoid().sum(), None), [(3, 4), (4,)], 2),
    "dot_product": (lambda L, x, w: (x @ w, None), [(5,)] * 2, 2),
    "transpose_gram": (lambda L, m: ((m.t().mm(m)).sum(), None), [(3, 2)], 1),
    "division_both": (lambda L, x, y: ((x / y).sum(), None), [(3,), (3,)], 2),
    "power_tensor": (lambda L, x, w: ((x ** w).sum(), None), [(3,), (3,)], 2),
    "power_base": (lambda L, x: ((3 ** x).sum(), None), [(3,)], 1),
    "log_sqrt_abs": (lambda L, x: ((L.log(L.sqrt(L.abs(x) + 1))).sum(), None), [(4,)], 1),
    "non_scalar_with_gradient": (lambda L, x: (x.exp() * 2, L.tensor([[1.0, -1.0], [0.5, 2.0]])), [(2, 2)], 1),
    "two_leaves_one_constant": (lambda L, x, w, c: ((x * w * c).sum(), None), [(3,), (3,), (3,)], 2),
    "custom_function": (lambda L, x: ((_Square.apply(x) + x).sum(), None), [(3,)], 1),
    "big_tensors": (lambda L, w, x: ((x.mm(w)).tanh().mean(), None), [(20, 30), (10, 20)], 2),
    "neg_sub_rsub": (lambda L, x: ((-(2 - x) - x * 0.5).sum(), None), [(3,)], 1),
    "cos_sin_tan": (lambda L, x: ((L.cos(x) * L.sin(x) + L.tan(x)).sum(), None), [(3,)], 1),
}


def _leaves(shapes, grad, seed=0):
    rng = np.random.RandomState(seed)
    arrays = [rng.uniform(0.5, 1.5, size=s).astype(np.float32) for s in shapes]
    return [gradiente.tensor(a, requires_grad=i < grad) for i, a in enumerate(arrays)]


def _build(name, seed=0):
    fn, shapes, grad = GRAPHS[name]
    inputs = _leaves(shapes, grad, seed)
    out, upstream = fn(gradiente, *inputs)
    return inputs[:grad], out, upstream


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_walkthrough_numbers_are_backwards(name):
    leaves, out, upstream = _build(name)
    out.backward(upstream)
    expected = [t.grad.numpy().copy() for t in leaves]

    leaves, out, upstream = _build(name)
    e = explain(out, upstream)
    for t, want in zip(leaves, expected):
        assert np.array_equal(t.grad.numpy(), want)                 # explain() did backward()'s work
        assert np.array_equal(e.record.leaf[id(t)], want)           # and recorded those very numbers
    assert len(e.grads) == len(leaves)


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_every_step_adds_up(name):
    """Contributions sum to what arrives; upstream × local derivative is what is passed on (after the
    broadcast reduction); each passed gradient arrives at the node it was passed to."""
    _, out, upstream = _build(name)
    e = explain(out, upstream)
    received = {}
    for step in e.steps:
        if step.contributions:
            total = sum(g for _, _, g in step.contributions)
            assert np.allclose(total, step.incoming, rtol=1e-6, atol=1e-6)
        for p in step.passes:
            received.setdefault(p.target, []).append(p.passed)
            if p.local is not None:
                product = step.incoming * p.local
                reduced = gradiente.core.rules.sum_to(product, p.passed.shape)
                assert np.allclose(reduced, p.passed, rtol=1e-5, atol=1e-6)
                assert (p.reduced_to is not None) == (product.shape != p.passed.shape)
    for step in e.steps:
        if step.node in received and len(received[step.node]) > 1:
            assert len(step.contributions) == len(received[step.node])


def test_intermediate_gradients_are_backwards():
    x = gradiente.tensor([0.5, 1.0, 2.0], requires_grad=True)
    a = x * 2
    a.retain_grad()
    b = a.exp()
    b.retain_grad()
    y = (a * b + a - b).sum()
    e = explain(y)
    assert np.array_equal(e.record.incoming[a.grad_fn], a.grad.numpy())
    assert np.array_equal(e.record.incoming[b.grad_fn], b.grad.numpy())


def test_against_pytorch():
    torch = pytest.importorskip("torch")
    x = gradiente.arange(1, 6, dtype=gradiente.float32, requires_grad=True)
    y = (gradiente.sin(x) * gradiente.exp(x) + 1 / (x + 2)).mean()
    e = explain(y)
    tx = torch.arange(1, 6, dtype=torch.float32, requires_grad=True)
    (torch.sin(tx) * torch.exp(tx) + 1 / (tx + 2)).mean().backward()
    assert np.allclose(e.grads["x"], tx.grad.numpy(), rtol=1e-6)


# --- after or instead of backward() -----------------------------------------------------------------------

def test_after_backward_with_retained_graph_leaves_grad_alone():
    x = gradiente.tensor([1.0, 2.0], requires_grad=True)
    y = (x.sin() * x).sum()
    y.backward(retain_graph=True)
    before = x.grad.numpy().copy()
    e = explain(y)
    assert np.array_equal(x.grad.numpy(), before)
    assert np.array_equal(e.grads["x"], before)
    assert "x.grad left unchanged" in str(e)


def test_after_backward_freed_graph_says_what_to_do():
    x = gradiente.tensor([1.0, 2.0], requires_grad=True)
    y = (x.sin() * x).sum()
    y.backward()
    with pytest.raises(GraphFreedError, match="retain_graph=True") as info:
        explain(y, lang="es")
    assert "en lugar de y.backward()" in str(info.value)


def test_after_backward_of_a_graph_that_saved_nothing():
    x = gradiente.tensor([1.0, 2.0], requires_grad=True)
    y = (x + 1).sum()
    y.backward()
    assert np.array_equal(explain(y).grads["x"], [1.0, 1.0])


def test_accumulating_into_an_existing_grad_says_so():
    x = gradiente.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).sum().backward()
    y = (x * 3).sum()
    e = explain(y, accumulate=True)
    assert np.array_equal(x.grad.numpy(), [5.0, 5.0])
    assert "x.grad = [5., 5.] (added to the [2., 2.] it already held)" in str(e)


def test_non_scalar_output_needs_a_gradient():
    x = gradiente.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        explain(x * 2)


def test_graph_and_hooks_are_left_as_they_were():
    x = gradiente.tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp() * x).sum()
    explain(y, retain_graph=True)
    nodes = [y.grad_fn, y.grad_fn.next_functions[0][0]]
    assert all(not n._pre_hooks and not n._hooks for n in nodes)
    y.backward()                                   # the graph is still usable
    a = np.array([1.0, 2.0])
    assert np.allclose(x.grad.numpy(), 2 * np.exp(a) * (a + 1))


# --- what it says ---------------------------------------------------------------------------------------

def _seed_graph():
    x = gradiente.arange(3, dtype=gradiente.float32, requires_grad=True)
    z = x + 1
    z = z ** 2
    z = z + 2
    y = z.mean()
    return x, y


def test_seed_walkthrough_in_spanish():
    x, y = _seed_graph()                       # the leaf is named after the caller's variable
    text = str(explain(y, lang="es"))
    assert x.grad is not None
    lines = text.splitlines()
    assert lines[0] == "Retropropagación de y, paso a paso (regla de la cadena)"
    assert "Paso 1 · MeanBackward0: media de todos los elementos  (su salida es y)" in lines
    assert "    regla: d/dx xⁿ = n·xⁿ⁻¹   con n = 2" in lines
    assert ("    pasa a AddBackward0 (paso 4): [0.3333, 0.3333, 0.3333] × [2., 4., 6.] = [0.6667, 1.3333, 2.0000]"
            in lines)
    assert "Paso 5 · hoja x (AccumulateGrad): el gradiente se acumula en .grad" in lines
    assert lines[-1] == "    x.grad = [0.6667, 1.3333, 2.0000]"


def test_seed_walkthrough_in_english_markdown():
    x, y = _seed_graph()
    md = explain(y).to_markdown()
    assert x.grad is not None
    assert md.startswith("#### Backward pass of `y`, step by step (chain rule)")
    assert r"$\frac{d}{dx} x^n = n\,x^{n-1}$   with $n = 2$" in md
    assert "`[0.3333, 0.3333, 0.3333]` $\\odot$ `[2., 4., 6.]` = `[0.6667, 1.3333, 2.0000]`" in md
    assert md.rstrip().endswith("- `x.grad` = `[0.6667, 1.3333, 2.0000]`")


def test_paths_meeting_are_summed_in_the_text():
    x = gradiente.arange(1, 6, dtype=gradiente.float32, requires_grad=True)
    y = (gradiente.sin(x) * gradiente.exp(x) + 1 / (x + 2)).mean()
    text = str(explain(y))
    assert "3 paths meet here; their gradients are summed:" in text
    assert "      = [0.7290, 0.7163, -3.4180, -15.4071, -20.0476]" in text


def test_broadcast_reduction_is_explained():
    a = gradiente.tensor([[1.0], [2.0]], requires_grad=True)
    b = gradiente.tensor([1.0, 2.0, 3.0], requires_grad=True)
    text = str(explain((a * b).sum()))
    assert "summed over the broadcast dimensions to shape (2, 1): [[6.], [6.]]" in text


def test_big_tensors_are_summarized():
    w = gradiente.ones(100, 10, requires_grad=True)
    text = str(explain((w * 3).sum(), lang="es"))
    assert "forma (100, 10): media 3.0000, mín 3.0000, máx 3.0000" in text


def test_custom_function_rule_is_user_defined():
    x = gradiente.tensor([1.0, 2.0], requires_grad=True)
    text = str(explain(_Square.apply(x).sum()))
    assert "user-defined rule: _Square.backward (an autograd.Function)" in text


def test_long_pass_shows_first_and_last_steps():
    x = gradiente.ones(1, requires_grad=True)
    y = x
    for _ in range(500):
        y = y * 1.0
    e = explain(y.sum(), max_steps=20)
    text = str(e)
    assert "... 482 steps omitted" in text
    assert len(e.steps) == 502
    assert text.count("Step ") == 20


def test_hundred_thousand_node_chain():
    x = gradiente.ones(1, requires_grad=True)
    y = x
    for _ in range(50_000):
        y = y * 1.0
        y = y + 0.0
    e = explain(y.sum())
    assert np.array_equal(x.grad.numpy(), [1.0])
    assert len(e.record.order) == 100_002
    assert len(str(e).splitlines()) < 2_000


def test_callable_module_and_languages():
    _, y = _seed_graph()
    assert gradiente.explain.explain is explain
    e = gradiente.explain(y, lang="es")
    assert "Paso 1" in e.to_text() and "Step 1" in e.to_text("en")
    with pytest.raises(ValueError, match="lang must be one of en, es"):
        explain(y, lang="fr")


def test_params_names_leaves():
    w = gradiente.tensor([1.0, 2.0], requires_grad=True)
    e = explain((w * 2).sum(), params={"weight": w})
    assert "weight.grad = [2., 2.]" in str(e)


# --- the notebook ---------------------------------------------------------------------------------------

def test_seed003_notebook_runs():
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": os.path.dirname(NOTEBOOK)}}).execute()
    def text(cell):
        return "".join(str(o.get("text", "")) + str(o.get("data", {}).get("text/plain", "")) for o in cell.outputs)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert not any(o.get("output_type") == "error" for cell in code for o in cell.outputs)
    assert any("tensor([0.6667, 1.3333, 2.0000])" in text(cell) for cell in code)
    walkthroughs = [cell for cell in code if "explain(y" in cell.source]
    assert len(walkthroughs) == 2
    for cell in walkthroughs:
        markdown = "".join(o.get("data", {}).get("text/markdown", "") for o in cell.outputs)
        assert "**Paso 1 · `MeanBackward0`" in markdown
    checks = [cell for cell in code if "np.allclose" in cell.source]
    assert len(checks) == 2                     # both gradients match their analytic derivatives
    assert all(text(cell).rstrip().endswith("True") for cell in checks)


def test_seed003_notebook_is_committed_with_its_outputs():
    """The notebook on GitHub shows its walkthroughs without being run (re-run it with nbclient to refresh them)."""
    import json
    with open(NOTEBOOK, encoding="utf-8") as f:
        cells = [cell for cell in json.load(f)["cells"] if cell["cell_type"] == "code"]
    walkthroughs = [cell for cell in cells if "explain(y" in "".join(cell["source"])]
    assert len(walkthroughs) == 2
    for cell in walkthroughs:
        markdown = "".join("".join(o.get("data", {}).get("text/markdown", "")) for o in cell["outputs"])
        assert "**Paso 1 · `MeanBackward0`" in markdown
    assert not any(o.get("output_type") == "error" for cell in cells for o in cell["outputs"])
