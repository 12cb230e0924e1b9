"""torch.fx (issue 16): each program below runs twice, with ``torch`` bound to real PyTorch and to gradiente, and
must print the same thing: graphs, generated code, node lists, and the values the traced modules compute."""
import contextlib
import io
import textwrap

import pytest
import torch as real_torch

import gradiente
import gradiente.fx  # (loads the fx package, as ``torch.fx`` does on first use)


def run_both(source):
    """What ``source`` prints with ``torch`` as real PyTorch, and as gradiente."""
    outputs = []
    for lib in (real_torch, gradiente):
        lib.manual_seed(0)
        out = io.StringIO()
        namespace = {"torch": lib, "F": lib.nn.functional, "__name__": "__main__"}
        with contextlib.redirect_stdout(out):
            exec(compile(textwrap.dedent(source), "<fx program>", "exec"), namespace)
        outputs.append(out.getvalue())
    return outputs


def check(source):
    expected, got = run_both(source)
    assert expected.strip(), "the program printed nothing to compare"
    assert got == expected


MLP = """
class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(4, 8)
        self.fc2 = torch.nn.Linear(8, 2)
        self.scale = torch.nn.Parameter(torch.ones(2))

    def forward(self, x):
        h = F.relu(self.fc1(x))
        return torch.sigmoid(self.fc2(h)) * self.scale
"""


def test_mlp_graph_code_and_values():
    check(MLP + """
gm = torch.fx.symbolic_trace(MLP())
print(gm.graph)
print(gm.code)
print(gm)
x = torch.randn(3, 4)
print(torch.allclose(gm(x), gm.fc2.weight.new_zeros(1) + MLP.forward(gm, x)))
print([(n.op, n.name, len(n.users), [str(a) for a in n.all_input_nodes]) for n in gm.graph.nodes])
""")


def test_arithmetic_torch_calls_and_methods():
    check("""
def f(x, y, k=3):
    a = torch.add(x, y, alpha=2) - x * 2 / (y + 1)
    b = a.sum(dim=1, keepdim=True).abs() ** 2
    c = torch.cat([a, b], 1).view(-1)
    d = -c[1:4] @ torch.ones(3)
    e = torch.relu(x).mean() + torch.tanh(y).max() + k
    return d, e, x.shape, torch.split(a, 1)[0]
gm = torch.fx.symbolic_trace(f)
print(gm.graph)
print(gm.code)
x, y = torch.randn(2, 3), torch.rand(2, 3)
out = gm(x, y)
print([round(float(v.sum()), 4) for v in (out[0], out[1], out[3])], tuple(out[2]))
""")


def test_wrapped_function_and_inlining_by_proxy():
    check("""
def lowp(x):
    return x.float().sigmoid().half()
torch.fx.wrap(lowp)

class M(torch.nn.Module):
    def forward(self, x, y):
        return lowp(x) + lowp(y)

gm = torch.fx.symbolic_trace(M())
print(gm.code)
for node in gm.graph.nodes:
    if node.op == "call_function" and node.target is lowp:
        tracer = torch.fx.proxy.GraphAppendingTracer(node.graph)
        with node.graph.inserting_before(node):
            args = torch.fx.node.map_arg(node.args, lambda a: torch.fx.Proxy(a, tracer))
            out = node.target(*args)
            node.replace_all_uses_with(out.node)
            node.graph.erase_node(node)
gm.recompile()
print(gm.code)
print(gm(torch.ones(2), torch.zeros(2)).float().tolist())
""")


def test_tracer_subclass_records_module_paths():
    check(MLP + """
class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = MLP()
        self.norm = torch.nn.LayerNorm(2)
    def forward(self, x):
        return self.norm(self.mlp(x)) + 1

class PathTracer(torch.fx.Tracer):
    current = ''
    origin = {}
    def call_module(self, m, forward, args, kwargs):
        old = self.current
        try:
            self.current = self.path_of_module(m)
            return super().call_module(m, forward, args, kwargs)
        finally:
            self.current = old
    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None):
        proxy = super().create_proxy(kind, target, args, kwargs, name, type_expr)
        self.origin[proxy.node] = self.current
        proxy.node.meta['path'] = self.current
        return proxy
    def is_leaf_module(self, m, qualname):
        return qualname == 'mlp.fc2' or super().is_leaf_module(m, qualname)

tracer = PathTracer()
graph = tracer.trace(Block())
for node in graph.nodes:
    print('Node', node, 'is from module', tracer.origin.get(node), node.meta.get('path'))
print(graph)
""")


def test_interpreter_and_transformer():
    check(MLP + """
gm = torch.fx.symbolic_trace(MLP())

class Count(torch.fx.Interpreter):
    def run_node(self, n):
        result = super().run_node(n)
        print(n.op, n.name, tuple(result.shape) if hasattr(result, 'shape') else result)
        return result

x = torch.randn(2, 4)
print(torch.allclose(Count(gm).run(x), gm(x)))

class SigmoidToTanh(torch.fx.Transformer):
    def call_function(self, target, args, kwargs):
        if target is torch.sigmoid:
            target = torch.tanh
        return super().call_function(target, args, kwargs)

new = SigmoidToTanh(gm).transform()
print(new.code)
print(torch.allclose(new(x), torch.tanh(gm.fc2(F.relu(gm.fc1(x)))) * gm.scale))
try:
    torch.fx.Interpreter(gm).run()
except RuntimeError as e:
    print(type(e).__name__, e)
""")


def test_replace_pattern_and_replace_op():
    check("""
import operator
class M(torch.nn.Module):
    def forward(self, x, w1, w2):
        m1 = torch.cat([torch.neg(w1), w2]).sum()
        m2 = torch.cat([torch.neg(w1), w2]).sum()
        return x + torch.max(m1) + torch.max(m2), x + w1, torch.add(x, w2), x.add(w1)

def pattern(a1, a2):
    return torch.cat([torch.neg(a1), a2]).sum()

def replacement(w1, w2):
    return torch.stack([w1, w2])

gm = torch.fx.symbolic_trace(M())
matches = torch.fx.replace_pattern(gm, pattern, replacement)
print(len(matches), [m.anchor.name for m in matches])
print(gm.code)
for n in gm.graph.nodes:
    if any(n.target == p for p in (operator.add, torch.add, "add")) and n.args[0].name == 'x':
        with gm.graph.inserting_after(n):
            new = gm.graph.call_function(torch.mul, n.args, n.kwargs)
            n.replace_all_uses_with(new)
        gm.graph.erase_node(n)
gm.recompile()
print(gm.graph)
x, w = torch.randn(3), torch.randn(3)
print([tuple(v.shape) for v in gm(x, w, w)])
""")


def test_graph_surgery_invert_and_wrap_output():
    check("""
inverse = {torch.exp: torch.log, torch.tan: torch.arctan, torch.sin: torch.arcsin}

def f(x):
    return torch.exp(torch.tan(x))

traced = torch.fx.symbolic_trace(f)
g = torch.fx.Graph()
env = {}
for node in reversed(traced.graph.nodes):
    if node.op == 'call_function':
        new = g.call_function(inverse[node.target], (env[node.name],))
        env[node.args[0].name] = new
    elif node.op == 'output':
        env[node.args[0].name] = g.placeholder(node.name)
    else:
        g.output(env[node.name])
g.lint()
inv = torch.fx.GraphModule(traced, g)
print(inv.code)
print(g)
print(torch.allclose(f(inv(torch.tensor([0.5, 2.0]))), torch.tensor([0.5, 2.0])))

class Cat(torch.nn.Module):
    def forward(self, x, y):
        return torch.cat([x, y])

gm = torch.fx.symbolic_trace(Cat())
out = next(n for n in reversed(gm.graph.nodes) if n.op == 'output')
last = out.all_input_nodes[0]
act = torch.fx.symbolic_trace(torch.nn.LeakyReLU())
with gm.graph.inserting_after(last):
    out.args = (act(torch.fx.Proxy(last)).node,)
gm.recompile()
print(gm.code)
x, y = torch.randn(2, 2), torch.randn(2, 2)
print(torch.equal(gm(x, y), F.leaky_relu(torch.cat([x, y]))))
""")


def test_dead_code_and_graph_errors():
    check("""
def f(x):
    unused = x * 3
    return x.relu()
gm = torch.fx.symbolic_trace(f)
print(gm.graph.eliminate_dead_code())
print(gm.graph)
n = next(iter(gm.graph.nodes))
for call in (lambda: gm.graph.erase_node(n), lambda: bool(torch.fx.Proxy(n)), lambda: list(torch.fx.Proxy(n)),
             lambda: len(torch.fx.Proxy(n))):
    try:
        call()
    except Exception as e:
        print(type(e).__name__, e)
""")


@pytest.mark.parametrize("name", ["relu", "leaky_relu", "softmax"])
def test_functional_calls_print_as_pytorch(name):
    check(f"""
def f(x):
    return F.{name}(x, {'dim=1' if name == 'softmax' else ''})
print(torch.fx.symbolic_trace(f).code)
""")


def test_profiler_ranges_recorded_by_a_tracer():
    check('''
class Foo(torch.nn.Module):
    def forward(self, x):
        with torch.profiler.record_function('foo'):
            return torch.relu(x) + 1

class ProfilerTracer(torch.fx.Tracer):
    def trace(self, root, concrete_args=None):
        rf = torch.autograd.profiler.record_function
        orig_enter, orig_exit = rf.__enter__, rf.__exit__
        def enter(_self):
            handle = self.create_proxy('call_function', torch.ops.profiler._record_function_enter, (_self.name,), {})
            _self._fx_handle = handle
            return handle
        def exit_(_self, *exc):
            torch.ops.profiler._record_function_exit(_self._fx_handle)
        rf.__enter__, rf.__exit__ = enter, exit_
        try:
            return super().trace(root, concrete_args)
        finally:
            rf.__enter__, rf.__exit__ = orig_enter, orig_exit

pt = ProfilerTracer()
graph = pt.trace(Foo())
print(graph)
gm = torch.fx.GraphModule(pt.root, graph)
print(gm.code)
print(gm.graph.eliminate_dead_code())
with torch.autograd.profiler.profile() as prof:
    gm(torch.randn(3))
print(sorted({e.name for e in prof.function_events} & {"foo", "aten::relu", "aten::add"}))
''')


def test_annotations_buffers_constants_sequential_and_print_readable():
    check('''
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.seq = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.ReLU())
        self.register_buffer("buf", torch.ones(3))
        self.const = torch.tensor([1.0, 2.0, 3.0])
    def forward(self, x: torch.Tensor, n: int = 2) -> torch.Tensor:
        y = torch.matmul(x, x.t()) + torch.mm(x, x.t()) + torch.addmm(x, x, torch.eye(3))[0, 0]
        z = self.seq(x) + self.buf + self.const
        w = z.view(z.size(0), -1).transpose(0, 1).contiguous()
        return y.sum() + w.mean() * n + z[0, 1] + torch.zeros_like(z) + x.size()[0]
gm = torch.fx.symbolic_trace(M())
print(gm.graph)
gm.print_readable()
print(gm)
x = torch.ones(2, 3)
print(tuple(gm(x).shape), torch.allclose(gm(x), M.forward(gm, x)) if False else None)
import copy
gm2 = copy.deepcopy(gm)
print(gm2.code == gm.code, torch.equal(gm2(x), gm(x)))
print(list(dict(gm.named_buffers()).keys()), list(dict(gm.named_parameters()).keys()))
def h(x, *args):
    return x + 1
print(torch.fx.symbolic_trace(h).code)
g = torch.fx.Graph()
a = g.placeholder("a")
b = g.call_method("relu", (a,))
c = g.call_module("lin", (b,))
d = g.get_attr("lin.weight")
g.output((c, d))
print(g)
print(g.python_code("self").src)
print(repr(a), a.next, b.prev, list(a.users), b.all_input_nodes)
''')


def test_unpacking_wrapped_len_graph_edits_and_a_conv_net():
    check('''
torch.fx.wrap("len")
def f(x, y):
    a, b = x.split(2)
    n = len(y)
    c = torch.sum(a, dim=0, keepdim=True) - b.max(dim=0).values
    d = x.shape[0] + n
    return c * d, torch.where(a > 0, a, b), a.clamp(min=0.5), torch.nn.functional.softmax(a, dim=-1)
gm = torch.fx.symbolic_trace(f)
print(gm.graph)
print(gm.code)
x = torch.arange(16.).reshape(4, 4)
out = gm(x, x)
print([o.sum().item() for o in out])
nodes = list(gm.graph.nodes)
print(nodes[2], repr(torch.fx.Proxy(nodes[2])), nodes[2].format_node())
m = nodes[5]
with gm.graph.inserting_before(m):
    neg = gm.graph.call_function(torch.neg, (nodes[2],))
m.replace_input_with(nodes[2], neg)
print(gm.graph.find_nodes(op="call_function", target=torch.neg))
gm.recompile()
print(gm.code)
class T(torch.fx.Transformer):
    def call_method(self, target, args, kwargs):
        if target == "clamp":
            return torch.relu(args[0])
        return super().call_method(target, args, kwargs)
print(T(gm).transform().code)
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(1, 2, 3)
        self.bn = torch.nn.BatchNorm2d(2)
        self.fc = torch.nn.Linear(8, 3)
    def forward(self, x):
        x = torch.flatten(self.bn(self.conv(x)), 1)
        return torch.nn.functional.log_softmax(self.fc(x), dim=1)
net = Net().eval()
gm2 = torch.fx.symbolic_trace(net)
print(gm2.graph)
print(gm2.code)
print(gm2)
inp = torch.randn(2, 1, 4, 4)
print(torch.allclose(gm2(inp), net(inp)), torch.allclose(torch.fx.Interpreter(gm2).run(inp), net(inp)))
print(torch.fx.Transformer(gm2).transform().code)
''')


def test_module_path_tracer_on_a_small_resnet():
    check('''
class Basic(torch.nn.Module):
    def __init__(self, c, down=False):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(c)
        self.relu = torch.nn.ReLU(inplace=True)
        self.conv2 = torch.nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(c)
        self.downsample = torch.nn.Sequential(torch.nn.Conv2d(c, c, 1), torch.nn.BatchNorm2d(c)) if down else None
    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 4, 3)
        self.layer1 = torch.nn.Sequential(Basic(4), Basic(4, True))
        self.avgpool = torch.nn.AdaptiveAvgPool2d((1, 1))
        self.fc = torch.nn.Linear(4, 2)
    def forward(self, x):
        x = self.layer1(self.conv1(x))
        return self.fc(torch.flatten(self.avgpool(x), 1))
class ModulePathTracer(torch.fx.Tracer):
    current_module_qualified_name = ''
    node_to_originating_module = {}
    def call_module(self, m, forward, args, kwargs):
        old = self.current_module_qualified_name
        try:
            self.current_module_qualified_name = self.path_of_module(m)
            return super().call_module(m, forward, args, kwargs)
        finally:
            self.current_module_qualified_name = old
    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None):
        proxy = super().create_proxy(kind, target, args, kwargs, name, type_expr)
        self.node_to_originating_module[proxy.node] = self.current_module_qualified_name
        return proxy
tracer = ModulePathTracer()
g = tracer.trace(Net())
for node in g.nodes:
    print('Node', node, 'is from module', tracer.node_to_originating_module.get(node))
gm = torch.fx.GraphModule(tracer.root, g)
net = tracer.root.eval(); gm.eval()
x = torch.randn(1, 3, 6, 6)
print(torch.allclose(gm(x), net(x)))
''')
