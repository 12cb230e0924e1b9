"""Graph drawing: make_dot against torchviz under real PyTorch, the text drawing, rendering to SVG/PNG
without a system Graphviz, deep graphs, and the options beyond torchviz.

The differential test runs each program twice, with gradiente and with torch, on the same inputs, draws
both with the same make_dot arguments, and compares the DOT sources line by line after renaming node
ids in order of appearance (torchviz names nodes by ``id()``). Where torchviz is not installed, the
reference is the same traversal done here over torch's own ``grad_fn`` graph (``_torch_reference``).
"""
import re
import struct
import zlib

import numpy as np
import pytest

import gradiente
from gradiente.viz import make_dot, to_text, watch

torch = pytest.importorskip("torch")
graphviz = pytest.importorskip("graphviz")
try:
    import torchviz
except ImportError:  # pragma: no cover - torchviz's algorithm is reproduced below
    torchviz = None


def canonical(source):
    """The DOT source with node ids renamed n1, n2... in order of first appearance."""
    ids = {}

    def rename(match):
        return ids.setdefault(match.group(0), f"n{len(ids) + 1}")
    out = []
    for line in source.splitlines():
        m = re.match(r"^(\t)(\S+)( -> )(\S+)(.*)$", line)
        if m:
            line = m.group(1) + re.sub(r"^\S+", rename, m.group(2)) + m.group(3) + \
                re.sub(r"^\S+", rename, m.group(4)) + m.group(5)
        else:
            m = re.match(r"^(\t)(\d+)( \[label=.*)$", line)
            if m:
                line = m.group(1) + rename(re.match(r".*", m.group(2))) + m.group(3)
        out.append(line)
    return "\n".join(out)


def edge_set(dot):
    """The seed notebook's view of a drawing: sorted 'label -> label' lines."""
    labels = {m[0]: " ".join(m[1].strip('"').split())
              for m in re.findall(r'(\w+) \[label=("[^"]*"|[^\s\]]+)', dot.source)}
    return sorted(f"{labels.get(a, '?')} -> {labels.get(b, '?')}" for a, b in re.findall(r"(\w+) -> (\w+)", dot.source))


# --- programs: fn(lib, inputs) -> output; inputs are float32 arrays, the first `grad` of them require grad ----

def _custom_function(lib):
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 3 * x ** 2
    return Cube


PROGRAMS = {
    "seed_mean_square": (lambda L, x: (((x + 1) ** 2) + 2).mean(), [(3,)], 1),
    "seed_exercise": (lambda L, x: (L.sin(x) * L.exp(x) + 1 / (x + 2)).mean(), [(5,)], 1),
    "affine_broadcast": (lambda L, x, w, b: (x * w + b).sum(), [(3, 4), (4,), (1,)], 3),
    "square_by_product": (lambda L, x: (x * x).sum(), [(3,)], 1),
    "sub_div": (lambda L, x, w: ((x - w) / w).mean(), [(4,), (4,)], 2),
    "rsub_scalar_mul": (lambda L, x: ((2 - x) * 3).sum(), [(2, 2)], 1),
    "mm_add_relu": (lambda L, a, b, c: L.relu(a.mm(b) + c).sum(), [(2, 3), (3, 4), (4,)], 3),
    "matmul_tanh": (lambda L, a, b: L.tanh(a @ b).mean(), [(3, 2), (2, 2)], 2),
    "sigmoid_sum_dim": (lambda L, x: L.sigmoid(x).sum(0).sum(), [(3, 2)], 1),
    "log_abs_exp": (lambda L, x: L.exp(L.log(L.abs(x) + 1)).sum(), [(4,)], 1),
    "neg_pow": (lambda L, x: (-(x ** 3)).sum(), [(3,)], 1),
    "pow_tensor_tensor": (lambda L, x, w: (L.abs(x) + 1) ** w, [(3,), (3,)], 2),
    "pow_scalar_base": (lambda L, x: (2 ** x).sum(), [(3,)], 1),
    "mean_keepdim": (lambda L, x: (x.mean(1, keepdim=True) * x).sum(), [(2, 3)], 1),
    "transpose_product": (lambda L, m: m.t().mm(m).sum(), [(3, 2)], 1),
    "dot_product": (lambda L, x, w: x @ w, [(4,), (4,)], 2),
    "matrix_vector": (lambda L, m, v: (m @ v).sum(), [(2, 3), (3,)], 2),
    "shared_subexpression": (lambda L, x: _shared(x), [(3,)], 1),
    "two_outputs": (lambda L, x: (x.exp().sum(), (x * 2).mean()), [(3,)], 1),
    "trig_chain": (lambda L, x: L.sqrt(L.cos(L.sin(x)) + 2).sum(), [(3,)], 1),
    "scalar_ops": (lambda L, x: (x / 2 + x * 2.5).sum(), [(3,)], 1),
    "constant_divided_by_x": (lambda L, x, c: (c / x).sum(), [(3,), (3,)], 1),
    "times_constant_tensor": (lambda L, x, c: (x * c).sum(), [(3,), (3,)], 1),
    "reciprocal": (lambda L, x: x.reciprocal().sum(), [(3,)], 1),
    "view_output": (lambda L, m: m.t(), [(2, 3)], 1),
    "non_scalar_output": (lambda L, x, w: x * w - w, [(2, 2), (2, 2)], 2),
    "custom_function": (lambda L, x: _custom_function(L).apply(x).sum(), [(3,)], 1),
    "matrix_only_first_needs_grad": (lambda L, a, b: a.mm(b).sum(), [(2, 3), (3, 2)], 1),
    "max_along_dim": (lambda L, x: x.max(1).values.sum() + x.min(0, keepdim=True)[0].sum(), [(2, 3)], 1),
    "sort_topk_cummax": (lambda L, x: x.sort(1)[0].sum() + x.topk(2, 1)[0].sum() + x.cummax(0)[0].sum(), [(3, 4)], 1),
}


def _shared(x):
    a = x * 2
    return (a * a + a).sum()


def _inputs(lib, shapes, grad, seed=0):
    rng = np.random.RandomState(seed)
    arrays = [rng.uniform(0.5, 2.0, size=s).astype(np.float32) for s in shapes]
    return [lib.tensor(a, requires_grad=i < grad) for i, a in enumerate(arrays)]


def _draw(lib, viz_make_dot, name, **options):
    fn, shapes, grad = PROGRAMS[name]
    inputs = _inputs(lib, shapes, grad)
    out = fn(lib, *inputs)
    params = {f"p{i}": t for i, t in enumerate(inputs) if t.requires_grad}
    return viz_make_dot(out, params=params, **options)


def _torch_make_dot():
    return torchviz.make_dot if torchviz is not None else _torch_reference


OPTIONS = [{}, {"show_attrs": True}, {"show_saved": True},
           {"show_attrs": True, "show_saved": True, "max_attr_chars": 12}]


@pytest.mark.parametrize("options", OPTIONS, ids=["plain", "attrs", "saved", "attrs_saved"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_make_dot_matches_torchviz(name, options):
    ours = _draw(gradiente, make_dot, name, **options)
    theirs = _draw(torch, _torch_make_dot(), name, **options)
    assert canonical(ours.source) == canonical(theirs.source)


def test_reference_traversal_agrees_with_torchviz():
    """The fallback reference reproduces torchviz, so the differential test means the same without it."""
    if torchviz is None:
        pytest.skip("torchviz is not installed")
    for name in ("seed_exercise", "shared_subexpression", "view_output", "custom_function"):
        for options in OPTIONS:
            a = _draw(torch, torchviz.make_dot, name, **options)
            b = _draw(torch, _torch_reference, name, **options)
            assert canonical(a.source) == canonical(b.source)


def _torch_reference(var, params=None, show_attrs=False, show_saved=False, max_attr_chars=50):
    """torchviz 0.0.3's make_dot, over torch's grad_fn graph (same order, same labels)."""
    param_map = {id(v): k for k, v in (params or {}).items()}
    dot = graphviz.Digraph(node_attr={"style": "filled", "shape": "box", "align": "left", "fontsize": "10",
                                      "ranksep": "0.1", "height": "0.2", "fontname": "monospace"},
                           graph_attr={"size": "12,12"})
    seen = set()

    def var_name(v, name=None):
        name = name or param_map.get(id(v), "")
        return f"{name}\n (" + ", ".join(str(s) for s in v.size()) + ")"

    def saved(fn):
        return [(a[7:], getattr(fn, a)) for a in dir(fn) if a.startswith("_saved_")]

    def fn_name(fn):
        name = type(fn).__name__
        if not show_attrs:
            return name
        attrs = {}
        for a, v in saved(fn):
            attrs[a] = "[saved tensor]" if torch.is_tensor(v) else (
                "[saved tensors]" if isinstance(v, tuple) and any(torch.is_tensor(t) for t in v) else str(v))
        if not attrs:
            return name
        w1 = max(len(k) for k in attrs)
        w2 = min(max(len(str(v)) for v in attrs.values()), max(max_attr_chars, 3))
        fmt = "%-" + str(w1) + "s: %" + str(w2) + "s"
        rows = "\n".join(fmt % (k, v[:w2 - 3] + "..." if len(v) > w2 else v) for k, v in attrs.items())
        return name + "\n" + "-" * max(w1 + w2 + 2, len(name)) + "\n" + rows

    def add_nodes(fn):
        if fn in seen:
            return
        seen.add(fn)
        if show_saved:
            for a, v in saved(fn):
                seen.add(v)
                if torch.is_tensor(v):
                    dot.edge(str(id(fn)), str(id(v)), dir="none")
                    dot.node(str(id(v)), var_name(v, a), fillcolor="orange")
        if hasattr(fn, "variable"):
            seen.add(fn.variable)
            dot.node(str(id(fn.variable)), var_name(fn.variable), fillcolor="lightblue")
            dot.edge(str(id(fn.variable)), str(id(fn)))
        dot.node(str(id(fn)), fn_name(fn))
        for u, _ in fn.next_functions:
            if u is not None:
                dot.edge(str(id(u)), str(id(fn)))
                add_nodes(u)
        for t in getattr(fn, "saved_tensors", ()) if hasattr(fn, "saved_tensors") else ():
            seen.add(t)
            dot.edge(str(id(t)), str(id(fn)), dir="none")
            dot.node(str(id(t)), var_name(t), fillcolor="orange")

    def add_base(v, color="darkolivegreen1"):
        if v in seen:
            return
        seen.add(v)
        dot.node(str(id(v)), var_name(v), fillcolor=color)
        if v.grad_fn:
            add_nodes(v.grad_fn)
            dot.edge(str(id(v.grad_fn)), str(id(v)))
        if v._is_view():
            add_base(v._base, "darkolivegreen3")
            dot.edge(str(id(v._base)), str(id(v)), style="dotted")

    for v in (var if isinstance(var, tuple) else (var,)):
        add_base(v)
    size = max(12, len(dot.body) * 0.15)
    dot.graph_attr.update(size=f"{size},{size}")
    return dot


# --- the seed's cells -------------------------------------------------------------------------------------

def test_seed_003_graph_edges():
    x = gradiente.arange(3, dtype=gradiente.float32, requires_grad=True)
    y = ((x + 1) ** 2 + 2).mean()
    assert edge_set(make_dot(y, params={"x": x})) == [
        "AccumulateGrad -> AddBackward0", "AddBackward0 -> MeanBackward0", "AddBackward0 -> PowBackward0",
        "MeanBackward0 -> ()", "PowBackward0 -> AddBackward0", "x (3) -> AccumulateGrad"]


def test_returns_a_graphviz_digraph_with_deterministic_ids():
    x = gradiente.ones(2, requires_grad=True)
    y = (x * 3).sum()
    a, b = make_dot(y), make_dot(y)
    assert isinstance(a, graphviz.Digraph)
    assert a.source == b.source


def test_make_dot_after_backward_shows_freed_saved_tensors():
    """PyTorch raises when torchviz reads a freed saved tensor; we draw the graph and say [freed]."""
    x = gradiente.ones(2, requires_grad=True)
    y = (x.sin() * 2).sum()
    y.backward()
    dot = make_dot(y, show_attrs=True, show_saved=True)
    assert "[freed]" in dot.source
    assert "SinBackward0" in dot.source


# --- rendering without a system Graphviz -----------------------------------------------------------------

def _png_size(data):
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    length, kind = struct.unpack(">I4s", data[8:16])
    assert kind == b"IHDR" and length == 13
    width, height = struct.unpack(">II", data[16:24])
    crc = struct.unpack(">I", data[29:33])[0]
    assert zlib.crc32(data[12:29]) & 0xFFFFFFFF == crc
    return width, height


@pytest.fixture
def pure_dot(monkeypatch):
    """Render with graphviz-pure even where a system dot exists (CI has none)."""
    import shutil

    from gradiente.viz import render
    which = shutil.which
    monkeypatch.delenv("GRADIENTE_DOT", raising=False)
    monkeypatch.setattr(render.shutil, "which", lambda name: None if name == "dot" else which(name))
    program = render.dot_program()
    if program is None:
        pytest.skip("graphviz-pure is not installed (pip install graphviz-pure)")
    assert "graphviz-pure" in program
    return program


def _exercise():
    x = gradiente.arange(1, 6, dtype=gradiente.float32, requires_grad=True)
    y = (gradiente.sin(x) * gradiente.exp(x) + 1 / (x + 2)).mean()
    return x, y


def test_svg_rendering_contains_the_labels(pure_dot, tmp_path):
    import xml.etree.ElementTree as ET
    x, y = _exercise()
    dot = make_dot(y, params={"x": x}, show_formulas=True)
    path = dot.render(tmp_path / "graph", format="svg")
    with open(path, encoding="utf-8") as f:
        svg = f.read()
    root = ET.fromstring(svg)
    assert root.tag.endswith("svg")
    texts = [t.text for t in root.iter() if t.tag.endswith("text") and t.text]
    for label in ("MeanBackward0", "SinBackward0", "ExpBackward0", "ReciprocalBackward0", "AccumulateGrad", "x",
                  "d/dx sin x = cos x"):
        assert label in texts
    assert 'font-family="Courier' in svg            # 'monospace' is given metrics it knows
    assert dot.node_attr["fontname"] == "monospace"  # ...only for the call


def test_png_rendering_is_a_valid_image(pure_dot, tmp_path):
    x, y = _exercise()
    dot = make_dot(y, params={"x": x}, show_values=True, show_grads=True)
    data = dot.pipe(format="png")
    width, height = _png_size(data)
    assert width > 100 and height > 200
    try:
        from PIL import Image
    except ImportError:
        return
    import io
    image = Image.open(io.BytesIO(data))
    image.load()
    assert image.size == (width, height)
    pixels = np.asarray(image.convert("L"))
    assert pixels.min() < 50 and pixels.max() > 200     # dark text on a light background


def test_jupyter_display(pure_dot):
    x, y = _exercise()
    dot = make_dot(y, params={"x": x})
    bundle = dot._repr_mimebundle_()
    assert bundle["image/svg+xml"].lstrip().startswith("<?xml") or "<svg" in bundle["image/svg+xml"]
    assert "<svg" in dot._repr_svg_()


def test_without_a_layout_program_the_error_says_what_to_install(monkeypatch):
    from gradiente.viz import render
    monkeypatch.setattr(render, "dot_program", lambda: None)
    _, y = _exercise()
    dot = make_dot(y)
    with pytest.raises(graphviz.ExecutableNotFound, match="graphviz-pure"):
        dot.pipe(format="svg")
    assert "text/plain" in dot._repr_mimebundle_()


# --- deep graphs --------------------------------------------------------------------------------------------

def _chain(n):
    x = gradiente.ones(1, requires_grad=True)
    y = x
    for _ in range(n // 2):
        y = y * 1.0
        y = y + 0.0
    return x, y.sum()


def test_deep_chain_draws_without_recursion_error():
    x, y = _chain(100_000)
    dot = make_dot(y, params={"x": x})
    labels = re.findall(r'label="([^"]*)"', dot.source)
    summary = [label for label in labels if "more nodes" in label]
    assert len(summary) == 1 and "99,994 more nodes" in summary[0] and "MulBackward0" in summary[0]
    assert len(dot.body) < 50
    text = to_text(y)
    assert "99,994 more nodes" in text and len(text.splitlines()) < 20


def test_deep_chain_in_full_when_asked():
    _, y = _chain(5_000)
    dot = make_dot(y, max_nodes=None)
    assert dot.source.count("MulBackward0") == 2_500


def test_small_graphs_are_never_summarized():
    _, y = _chain(900)
    assert "more nodes" not in make_dot(y).source


# --- the text drawing -----------------------------------------------------------------------------------

EXERCISE_TEXT = """\
y ()  output
MeanBackward0  → y
AddBackward0
├─ MulBackward0
│  ├─ SinBackward0
│  │  AccumulateGrad ◄ x (5)  [1]
│  └─ ExpBackward0
│     AccumulateGrad ◄ x (5)  [1] again
└─ MulBackward0
   ReciprocalBackward0
   AddBackward0
   AccumulateGrad ◄ x (5)  [1] again"""


def test_text_drawing_of_the_exercise():
    x, y = _exercise()
    assert to_text(y) == EXERCISE_TEXT
    assert "x (5)" in to_text(y, params={"x": x}, auto_names=False)


def test_text_drawing_of_a_node_and_max_lines():
    _, y = _exercise()
    text = to_text(y.grad_fn, auto_names=False, max_lines=3)
    assert text.splitlines()[0] == "MeanBackward0"
    assert text.splitlines()[-1] == "... (8 more lines)"


def test_text_drawing_of_a_deep_comb_stays_narrow():
    """Each node adds a branch: nesting deeper than max_depth continues in a separate block."""
    x = gradiente.ones(2, requires_grad=True)
    y = x
    for _ in range(3_000):
        y = y * x + 1
    text = to_text(y.sum(), max_nodes=None, max_depth=8)
    assert max(len(line) for line in text.splitlines()) < 80
    assert text.count("continued:") > 100


# --- options beyond torchviz ---------------------------------------------------------------------------

def test_values_and_grads_on_nodes_do_not_touch_grad():
    x, y = _exercise()
    dot = make_dot(y, params={"x": x}, show_values=True, show_grads=True)
    assert x.grad is None                        # the recorded pass leaves .grad alone and keeps the graph
    assert "= [1., 2., 3., 4., 5.]" in dot.source
    assert "grad = [0.7290, 0.7163, -3.4180, -15.4071, -20.0476]" in dot.source
    assert "grad = [0.2000, 0.2000, 0.2000, 0.2000, 0.2000]" in dot.source
    y.backward()
    assert np.allclose(x.grad.numpy(), [0.7290, 0.7163, -3.4180, -15.4071, -20.0476], atol=1e-4)


def test_grads_after_backward_come_from_grad():
    x, y = _exercise()
    y.backward()
    dot = make_dot(y, params={"x": x}, show_grads=True)
    assert "grad = [0.7290, 0.7163, -3.4180, -15.4071, -20.0476]" in dot.source


def test_big_tensors_are_summarized():
    w = gradiente.ones(100, 10, requires_grad=True)
    y = (w * 2).sum()
    dot = make_dot(y, params={"w": w}, show_values=True, show_grads=True)
    assert "shape (100, 10): mean 1.0000, min 1.0000, max 1.0000" in dot.source
    assert "shape (100, 10): mean 2.0000" in dot.source


def test_auto_names_from_caller_variables():
    weight = gradiente.tensor([1.0, 2.0], requires_grad=True)
    bias = gradiente.tensor([0.5], requires_grad=True)
    hidden = weight * 3
    out = (hidden + bias).sum()
    labels = edge_set(make_dot(out, auto_names=True))
    assert "weight (2) -> AccumulateGrad" in labels
    assert "bias (1) -> AccumulateGrad" in labels
    assert "MulBackward0 → hidden -> AddBackward0" in labels
    assert "SumBackward0 → out -> out ()" in labels
    plain = edge_set(make_dot(out))
    assert "(2) -> AccumulateGrad" in plain      # off by default: torchviz's labels
    assert "SumBackward0 -> ()" in plain


def test_shapes_dtypes_and_formulas():
    a = gradiente.ones(2, 3, requires_grad=True)
    b = gradiente.ones(3, 4, dtype=gradiente.float32, requires_grad=True)
    y = a.mm(b).sum()
    src = make_dot(y, show_shapes=True, show_dtypes=True, show_formulas=True).source
    assert "→ (2, 4) float32" in src
    assert "∂(XY)/∂X = G·Yᵀ" in src
    assert " (2, 3) float32" in src


def test_highlight_path_from_one_leaf():
    a = gradiente.tensor([1.0], requires_grad=True)
    b = gradiente.tensor([2.0], requires_grad=True)
    y = (a.exp() + b.sin()).sum()
    src = make_dot(y, params={"a": a, "b": b}, highlight=a).source
    red = [line for line in src.splitlines() if "color=red" in line]
    assert any("ExpBackward0" in line for line in red)
    assert not any("SinBackward0" in line for line in red)
    assert 'fillcolor=lightgrey' in " ".join(red)   # highlighted nodes keep their fill


class _Module:
    """The parts of nn.Module's API that collapsing uses."""

    def __init__(self, **params):
        self._params = params
        self._pre, self._post = {}, {}

    def named_parameters(self):
        return list(self._params.items())

    def named_modules(self):
        return [("", self)]

    def register_forward_pre_hook(self, fn):
        return _Handle(self._pre, fn)

    def register_forward_hook(self, fn):
        return _Handle(self._post, fn)

    def __call__(self, x):
        for fn in list(self._pre.values()):
            fn(self, (x,))
        out = self.forward(x)
        for fn in list(self._post.values()):
            fn(self, (x,), out)
        return out


class _Handle:
    def __init__(self, hooks, fn):
        self.hooks, self.key = hooks, object()
        hooks[self.key] = fn

    def remove(self):
        self.hooks.pop(self.key, None)


class _Linear(_Module):
    def forward(self, x):
        return x.mm(self._params["weight"].t()) + self._params["bias"]


class _Block(_Module):
    """Linear then tanh: the tanh comes after the module's last parameter use."""

    def forward(self, x):
        return gradiente.tanh(x.mm(self._params["weight"].t()) + self._params["bias"])


def _layer(cls, n_in, n_out, seed):
    rng = np.random.RandomState(seed)
    return cls(weight=gradiente.tensor(rng.randn(n_out, n_in).astype(np.float32), requires_grad=True),
               bias=gradiente.tensor(rng.randn(n_out).astype(np.float32), requires_grad=True))


@pytest.mark.parametrize("watched", [False, True])
def test_collapse_module_into_one_box(watched):
    first, second = _layer(_Linear, 3, 4, 0), _layer(_Linear, 4, 2, 1)
    handles = [watch(first), watch(second)] if watched else []
    x = gradiente.ones(5, 3)
    y = second(gradiente.relu(first(x))).sum()
    for h in handles:
        h.remove()
    labels = edge_set(make_dot(y, collapse={"fc1": first, "fc2": second}))
    assert labels == sorted([
        "fc1 (_Linear) weight (4, 3) bias (4) -> ReluBackward0",
        "ReluBackward0 -> fc2 (_Linear) weight (2, 4) bias (2)",
        "fc2 (_Linear) weight (2, 4) bias (2) -> SumBackward0",
        "SumBackward0 -> ()",
    ])


def test_collapse_needs_watch_for_nodes_after_the_last_parameter_use():
    block = _layer(_Block, 3, 2, 0)
    with watch(block):
        y = block(gradiente.ones(4, 3)).sum()
    labels = edge_set(make_dot(y, collapse=block))
    assert labels == ["SumBackward0 -> ()", "_Block weight (2, 3) bias (2) -> SumBackward0"]


def test_collapse_with_real_nn_when_available():
    nn = pytest.importorskip("gradiente.nn")
    if not hasattr(nn, "Linear") or not hasattr(nn, "Sequential"):
        pytest.skip("gradiente.nn has no Linear/Sequential yet")
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    with watch(model):
        y = model(gradiente.ones(2, 3)).sum()
    src = make_dot(y, params=model, collapse=[model[0], model[2]]).source
    assert "0 (Linear)" in src and "2 (Linear)" in src and "ReluBackward0" in src
    assert "AccumulateGrad" not in src


def test_params_may_be_named_parameters_pairs():
    w = gradiente.ones(2, requires_grad=True)
    y = (w * 2).sum()
    assert "w (2) -> AccumulateGrad" in edge_set(make_dot(y, params=[("w", w)]))


def test_make_dot_from_trace_is_not_available():
    from gradiente.viz import make_dot_from_trace
    with pytest.raises(NotImplementedError):
        make_dot_from_trace(None)


def test_without_graphviz_package_make_dot_says_what_to_install(monkeypatch):
    from gradiente.viz import render
    monkeypatch.setattr(render, "_graphviz", None)
    _, y = _exercise()
    with pytest.raises(ImportError, match="pip install 'gradiente\\[viz\\]'"):
        make_dot(y)
    assert "SumBackward0" not in to_text(y) and "MeanBackward0" in to_text(y)   # text needs nothing
