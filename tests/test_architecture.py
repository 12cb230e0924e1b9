"""The architecture as tests (docs/architecture.md): floors that import only downward, small import cycles,
Tensor's surface bound in one table, and the rule namespaces implementing one interface."""
import ast
import inspect
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import gradiente
from gradiente.core import rules
from gradiente.core.tensor import Tensor

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import import_graph  # noqa: E402 - tools/ is not a package; it is put on the path just above


def test_every_import_goes_to_the_same_floor_or_below():
    upward = import_graph.upward_imports(import_graph.import_graph(include_package_inits=True))
    assert upward == [], "\n".join(f"{a}:{line} imports {b}" for a, b, line in upward)


def test_import_cycles_are_small():
    found = import_graph.cycles(import_graph.import_graph())
    largest = found[0] if found else []
    assert len(largest) <= import_graph.MAX_CYCLE, f"a cycle of {len(largest)} modules: {largest}"


def test_the_floors_cover_the_package_as_documented():
    floors = {import_graph.FLOORS[import_graph.floor_of(m)][0] for m in import_graph.module_files()}
    assert floors == {"core", "ops", "api"}
    assert import_graph.FLOORS[import_graph.floor_of("gradiente.core.engine")][0] == "core"
    assert import_graph.FLOORS[import_graph.floor_of("gradiente.ops.nn.convolution")][0] == "ops"
    assert import_graph.FLOORS[import_graph.floor_of("gradiente.nn.modules.linear")][0] == "api"


def _tensor_attribute_writes(path):
    """``setattr(Tensor, ...)`` calls and ``Tensor.name = ...`` assignments in one source file."""
    tree = ast.parse(path.read_text())
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr"
                and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id == "Tensor"):
            found.append(node.lineno)
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, (ast.AugAssign, ast.AnnAssign)) else []
        for target in targets:
            elements = target.elts if isinstance(target, ast.Tuple) else [target]
            found += [t.lineno for t in elements if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
                      and t.value.id == "Tensor"]
    return found


def test_only_the_methods_table_binds_tensor_attributes():
    table = ROOT / "src" / "gradiente" / "tensor_methods.py"
    writes = {str(path.relative_to(ROOT)): lines for path in sorted((ROOT / "src" / "gradiente").rglob("*.py"))
              if path != table and (lines := _tensor_attribute_writes(path))}
    assert writes == {}


def _class_body_names():
    source = (ROOT / "src" / "gradiente" / "core" / "tensor.py").read_text()
    cls = next(n for n in ast.parse(source).body if isinstance(n, ast.ClassDef) and n.name == "Tensor")
    names = set()
    for node in cls.body:
        if isinstance(node, ast.FunctionDef):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names.update(t.id for t in ast.walk(target) if isinstance(t, ast.Name))
    return names


def test_tensor_has_its_data_model_and_the_table_and_nothing_else():
    from gradiente.tensor_methods import METHODS
    bound = [name for _, *names in METHODS for name in names]
    assert len(bound) == len(set(bound)), "a name bound twice"
    python_made = {"__dict__", "__doc__", "__module__", "__weakref__", "__annotations__", "__firstlineno__",
                   "__static_attributes__", "__slots__"}
    present = set(vars(Tensor)) - python_made
    assert present == (_class_body_names() | set(bound)) - python_made
    assert not set(bound) & _class_body_names(), "a table row rebinds a method of the data model"


def test_in_place_rows_make_in_place_methods():
    x = gradiente.tensor([0.0, 1.0], dtype=gradiente.float64)
    y = x.exp_()
    assert y is x and x.tolist() == [1.0, float(np.e)]
    assert Tensor.exp_.__name__ == "exp_"


# --- the rules' namespace ---------------------------------------------------------------------------------

def _interface():
    """``{name: signature without self}`` of every method of ``RuleOps``."""
    out = {}
    for name, fn in vars(rules.RuleOps).items():
        if inspect.isfunction(fn):
            sig = inspect.signature(fn)
            out[name] = sig.replace(parameters=list(sig.parameters.values())[1:])
    return out


def _call_arguments(signature):
    """Placeholder arguments a rule would pass for ``signature``'s parameters (one for ``*operands``)."""
    args, kwargs = [], {}
    for p in signature.parameters.values():
        if p.kind is p.VAR_POSITIONAL or p.default is p.empty:
            args.append(object())
        else:
            kwargs[p.name] = p.default
    return args, kwargs


def _accepts(impl, signature):
    args, kwargs = _call_arguments(signature)
    if isinstance(impl, np.ufunc):
        return impl.nin == len(args) and not kwargs
    inspect.signature(impl).bind(*args, **kwargs)
    return True


def test_both_rule_namespaces_define_every_name_of_the_interface_themselves():
    from gradiente.ops.tensor_rules import TensorOps
    interface = _interface()
    assert len(interface) > 40
    for namespace in (rules.NumpyOps, TensorOps):
        own = {n for n in vars(namespace) if not n.startswith("__")}
        assert set(interface) <= own, f"{namespace.__name__} lacks {sorted(set(interface) - own)}"
        assert own <= set(interface) | {"recording"}, \
            f"{namespace.__name__} has names the interface does not document: {sorted(own - set(interface))}"
        assert not hasattr(namespace, "__getattr__")


def test_both_rule_namespaces_take_the_interfaces_arguments():
    interface = _interface()
    for ops in (rules.numpy_ops, rules.tensor_ops):
        for name, signature in interface.items():
            assert _accepts(getattr(ops, name), signature), f"{type(ops).__name__}.{name}{signature}"


def test_the_ops_package_handed_the_tensor_namespace_down():
    from gradiente.ops.tensor_rules import TensorOps
    assert isinstance(rules.tensor_ops, TensorOps) and rules.tensor_ops.recording
    assert rules.numpy_ops.recording is False


def test_every_module_says_in_its_first_line_what_it_holds():
    silent = [str(path.relative_to(ROOT)) for path in sorted((ROOT / "src" / "gradiente").rglob("*.py"))
              if not (ast.get_docstring(ast.parse(path.read_text())) or "").strip()]
    assert silent == []


def test_the_architecture_page_says_where_each_op_lives():
    """Each row of docs/architecture.md's table names a file that defines the forward and the node it names."""
    page = (ROOT / "docs" / "architecture.md").read_text()
    rows = [line.split("|") for line in page.splitlines() if line.startswith("| `") and "ops/" in line]
    assert len(rows) >= 6
    for row in rows:
        path, forward, derivative = (cell.strip() for cell in row[2:5])
        source = (ROOT / "src" / "gradiente" / path.strip("`")).read_text()
        assert f"def {forward.split('`')[1]}(" in source, (path, forward)
        for node in derivative.split("`")[1::2]:
            if node.endswith(tuple("0123456789")):
                assert f"class {node}(" in source, (path, node)


# Ops modules with public names but no test file of their own, and why.
OPS_WITHOUT_A_TEST_FILE = {
    "_table": "the machinery of the unary table; each row is tested in its family's file and by test_jvp_rules.py",
    "_reparam": "the reparameterization gradients of sampling.py's ops, tested through them",
    "tensor_rules": "the rules' Tensor namespace; test_architecture.py checks it against the interface",
    "samplers": "the array-level samplers behind sampling.py's ops, tested through them",
    "autocast": "the autocast state and the entry of the listed ops, tested with torch.amp in test_autocast.py",
}


def _public_ops_modules():
    """The modules of ``gradiente/ops/`` (not ``ops/nn/``, whose tests are test_functional.py and test_nn_*.py)
    whose ``__all__`` names at least one op."""
    found = []
    for path in sorted((ROOT / "src" / "gradiente" / "ops").glob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if (isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets)
                    and isinstance(node.value, (ast.List, ast.Tuple)) and node.value.elts):
                found.append(path.stem)
    return found


def test_op_test_files_mirror_the_ops_modules():
    modules = _public_ops_modules()
    test_files = sorted(path.stem for path in (ROOT / "tests").glob("test_ops_*.py"))
    without = [m for m in modules if f"test_ops_{m}" not in test_files and m not in OPS_WITHOUT_A_TEST_FILE]
    assert not without, f"ops modules without tests/test_ops_<module>.py: {without}"
    stale = [m for m in OPS_WITHOUT_A_TEST_FILE if m not in modules or f"test_ops_{m}" in test_files]
    assert not stale, f"OPS_WITHOUT_A_TEST_FILE names modules that are gone or have a test file now: {stale}"
    orphans = [t for t in test_files if t[len("test_ops_"):] not in modules]
    assert not orphans, f"test files named after no ops module: {orphans}"


def test_functions_loaded_on_first_use_are_their_modules_whole_public_list():
    import importlib

    for module, names in gradiente._LOADED_ON_FIRST_USE.items():
        loaded = importlib.import_module(f"gradiente.{module}")
        if module.startswith("ops."):
            assert sorted(names) == sorted(loaded.__all__), module     # all of an op module's functions
        assert set(names) <= set(loaded.__all__), module
        for name in names:
            assert getattr(gradiente, name).__name__ == name


def test_import_leaves_the_rarely_used_modules_unloaded():
    import subprocess

    code = ("import sys, gradiente; print(' '.join(m for m in sys.modules if m.startswith('gradiente.')))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    for module in gradiente._LOADED_ON_FIRST_USE:
        assert f"gradiente.{module}" not in loaded, module
    # what the functions and methods loaded on first use stand on (torch.linalg's ops, the FFTs)
    assert "gradiente.ops.linalg" not in loaded and "gradiente.ops.fft" not in loaded
    # the sparse kernels, and nn's activations (which the create-graph rules import when first asked)
    assert "gradiente.ops.sparse_coo" not in loaded and "gradiente.ops.nn.activations" not in loaded
    assert not [m for m in loaded if m.startswith(("gradiente.nn.", "gradiente.optim", "gradiente.ops.nn.conv"))]


def test_a_method_loaded_on_first_use_is_bound_as_the_table_binds_the_others():
    """``Tensor.histc`` (``on_first_use`` in the table) is a stand-in until the first lookup, then the method itself,
    with the sparse check the other methods have; its results are PyTorch's."""
    code = ("import sys, gradiente; from gradiente.tensor_methods import _BoundOnFirstUse; "
            "print(isinstance(vars(gradiente.Tensor)['histc'], _BoundOnFirstUse), "
            "'gradiente.ops.statistics' in sys.modules)")
    assert subprocess_output(code) == "True False"
    x = np.random.RandomState(0).randn(3, 5)
    assert gradiente.tensor(x).histc(4).tolist() == torch.tensor(x).histc(4).tolist()
    assert inspect.isfunction(vars(Tensor)["histc"])
    assert vars(Tensor)["histc"].sparse_dispatch_of is not None          # behind the sparse check
    errors = []
    for lib in (gradiente, torch):
        with pytest.raises(Exception) as caught:
            lib.tensor(x).to_sparse().histc(4)
        errors.append((type(caught.value), str(caught.value).split(" This could")[0]))      # (torch goes on)
    assert errors[0] == errors[1]


def test_methods_and_functions_are_made_on_first_lookup_as_they_were_made_at_import():
    """A fresh ``import gradiente`` holds stand-ins for the table's methods and the torch-level functions (issue 14:
    making their wrappers was an eighth of the import each); the first lookup makes the very method or function the
    table would have bound: NumPy's names, the sparse check, one in-place function for a row's names, the
    torch-level function and the method being distinct wrappers of one op."""
    code = ("import gradiente, inspect; T = vars(gradiente.Tensor); "
            "print(type(T['sum']).__name__, 'sum' in vars(gradiente), 'sum' in dir(gradiente), "
            "'sum' in gradiente.__all__); "
            "s = gradiente.Tensor.sum; print(inspect.isfunction(T['sum']), T['sum'] is s, 'sum' in vars(gradiente)); "
            "print(gradiente.ones(2).divide_(2.0).tolist(), type(T['divide_']).__name__, "
            "T['divide_'].sparse_dispatch_of is T['true_divide_'].sparse_dispatch_of)")
    assert subprocess_output(code).splitlines() == [
        "_BoundOnFirstUse False True True", "True True False", "[0.5, 0.5] function True"]
    x = gradiente.tensor([[1., 2.], [3., 4.]])
    assert x.sum(axis=0, keepdims=True).tolist() == [[4., 6.]]              # NumPy's names, on the method
    assert gradiente.sum(x, axis=1).tolist() == [3., 7.]                    # and on the function
    assert vars(Tensor)["sum"].sparse_dispatch_of is not None and gradiente.sum.sparse_dispatch_of is not None
    assert gradiente.sum is not vars(Tensor)["sum"]
    namespace = {}
    exec("from gradiente import *", namespace)
    assert namespace["sum"] is gradiente.sum and namespace["tensor"] is gradiente.tensor


def test_a_swap_of_the_ops_leaves_the_methods_made_during_it_as_the_table_makes_them():
    """The profiler and selective checkpointing swap wrappers into the ops' module globals; a method whose op loads
    on first use must still be made from the op itself, not from a wrapper that outlives the swap."""
    code = ("import gradiente, functools\n"
            "from gradiente.utils.checkpoint import checkpoint, create_selective_checkpoint_contexts as contexts\n"
            "from gradiente.utils.checkpoint import CheckpointPolicy\n"
            "x = gradiente.randn(3, requires_grad=True)\n"
            "policy = lambda ctx, op, *a, **k: CheckpointPolicy.PREFER_RECOMPUTE\n"
            "checkpoint(lambda t: t.sin().sum(), x, use_reentrant=False,\n"
            "           context_fn=functools.partial(contexts, policy)).backward()\n"
            "with gradiente.profiler.profile():\n"
            "    x.detach().histc(4)\n"
            "T = vars(gradiente.Tensor)\n"
            "print(T['smm'].__module__, T['histc'].__module__)")
    assert subprocess_output(code) == "gradiente.ops.sparse_products gradiente.ops.statistics"


def subprocess_output(code):
    import subprocess
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
