"""PyTorch 2.13's public names, namespace by namespace, and which of them gradiente lacks (issue 16).

    python tools/public_names.py            # coverage per namespace, and every name gradiente lacks
    python tools/public_names.py --write    # rewrite the table of intended absences in docs/public-names.md

A namespace's public names are its ``__all__`` where PyTorch defines one, else what ``dir()`` shows without a
leading underscore, less submodules and the helpers a module merely imports (``typing.Optional``, ``math``...).
For ``torch.Tensor`` they are its attributes without a leading underscore.

Every name gradiente lacks must be listed in ``docs/public-names.md`` with the reason it is absent
(``tests/test_public_names.py`` holds the table to the truth both ways: no name missing from it, no name in it
that gradiente has). ``--write`` keeps the reasons already written, drops names gradiente now has, and gives
each newly missing name the reason of the first rule in ``RULES`` that matches it (an intended absence), or
``NOT_YET``: a gap, listed as one, until it is implemented or a reason is written for it.
"""
import argparse
import fnmatch
import importlib
import os
import sys
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TABLE = os.path.join(ROOT, "docs", "public-names.md")

#: the namespaces compared: PyTorch's module path under ``torch`` ("" for torch itself), and "Tensor"
NAMESPACES = (
    "", "Tensor", "nn", "nn.functional", "nn.init", "nn.utils", "nn.utils.rnn", "nn.utils.parametrize",
    "nn.utils.parametrizations", "nn.utils.stateless", "optim", "optim.lr_scheduler", "optim.swa_utils",
    "autograd", "autograd.functional", "autograd.forward_ad", "autograd.graph", "func", "linalg", "special", "fft",
    "distributions", "distributions.transforms", "distributions.constraints", "distributions.kl", "sparse",
    "utils.data", "utils.checkpoint", "utils.tensorboard", "amp", "testing", "random", "multiprocessing", "jit",
)

#: modules whose names a namespace merely imports (not PyTorch's API)
_IMPORTED_FROM = ("typing", "typing_extensions", "collections", "collections.abc", "builtins", "dataclasses",
                  "math", "warnings", "functools", "enum", "abc", "contextlib", "numbers", "itertools")

NOT_YET = "not yet in gradiente"

#: (namespace pattern, name pattern, reason) for names gradiente does not have, first match wins
RULES = (
    ("", "*Storage", "typed storage classes: gradiente keeps a tensor's values in a NumPy array, its storage"),
    ("", "Sym*", "symbolic shapes belong to torch.compile's tracing, which gradiente does not do"),
    ("", "sym_*", "symbolic shapes belong to torch.compile's tracing, which gradiente does not do"),
    ("", "q*_per_*", "quantized tensors are not part of gradiente"),
    ("", "quantize*", "quantized tensors are not part of gradiente"),
    ("", "fake_quantize*", "quantized tensors are not part of gradiente"),
    ("Tensor", "q_*", "quantized tensors are not part of gradiente"),
    ("Tensor", "int_repr", "quantized tensors are not part of gradiente"),
    ("Tensor", "dequantize", "quantized tensors are not part of gradiente"),
    ("Tensor", "qscheme", "quantized tensors are not part of gradiente"),
    ("Tensor", "is_ipu", "no IPU, MAIA, MTIA, Vulkan or XLA devices: gradiente is CPU-only"),
    ("Tensor", "is_maia", "no IPU, MAIA, MTIA, Vulkan or XLA devices: gradiente is CPU-only"),
    ("Tensor", "is_mtia", "no IPU, MAIA, MTIA, Vulkan or XLA devices: gradiente is CPU-only"),
    ("Tensor", "is_vulkan", "no IPU, MAIA, MTIA, Vulkan or XLA devices: gradiente is CPU-only"),
    ("Tensor", "is_xla", "no IPU, MAIA, MTIA, Vulkan or XLA devices: gradiente is CPU-only"),
    ("Tensor", "ipu", "no IPU, MAIA, MTIA, Vulkan or XLA devices: gradiente is CPU-only"),
    ("Tensor", "mtia", "no IPU, MAIA, MTIA, Vulkan or XLA devices: gradiente is CPU-only"),
    ("Tensor", "is_mkldnn", "oneDNN's opaque layout is a PyTorch build detail"),
    ("Tensor", "record_stream", "CUDA streams: gradiente is CPU-only"),
    ("utils.data", "*DataPipe*", "DataPipes are deprecated in PyTorch and not carried over"),
    ("utils.data", "*datapipe*", "DataPipes are deprecated in PyTorch and not carried over"),
    ("utils.data", "DataChunk", "DataPipes are deprecated in PyTorch and not carried over"),
    ("utils.data", "*runtime_validation*", "DataPipes' type checks, deprecated with them"),
    ("utils.data", "argument_validation", "DataPipes' type checks, deprecated with them"),
    ("utils.data", "guaranteed_datapipes_determinism", "DataPipes are deprecated in PyTorch and not carried over"),
    ("utils.data", "non_deterministic", "DataPipes are deprecated in PyTorch and not carried over"),
    ("sparse", "SparseSemiStructured*", "2:4 semi-structured sparsity is a CUDA kernel format"),
    ("sparse", "to_sparse_semi_structured", "2:4 semi-structured sparsity is a CUDA kernel format"),
    # TorchScript: the JIT compiler's types, IR and runtime objects (gradiente runs Python eagerly, no JIT)
    *(("", name, "TorchScript's compiler types and IR: gradiente has no JIT") for name in (
        "AliasDb", "AnyType", "Argument", "ArgumentSpec", "AwaitType", "Block", "BoolType", "BufferDict",
        "CallStack", "Capsule", "ClassType", "Code", "CompilationUnit", "CompleteArgumentSpec", "ComplexType",
        "ConcreteModuleType", "ConcreteModuleTypeBuilder", "DeepCopyMemoTable", "DeviceObjType", "DictType",
        "EnumType", "ErrorReport", "ExecutionPlan", "FileCheck", "FloatType", "FunctionSchema", "FutureType",
        "Gradient", "Graph", "GraphExecutorState", "InferredType", "IntType", "InterfaceType", "JITException",
        "ListType", "LiteScriptModule", "LockingLogger", "ModuleDict", "NoneType", "NoopLogger", "NumberType",
        "OperatorInfo", "OptionalType", "ParameterDict", "PyObjectType", "RRefType", "ScriptClass",
        "ScriptClassFunction", "ScriptDict", "ScriptDictIterator", "ScriptDictKeyIterator", "ScriptFunction",
        "ScriptList", "ScriptListIterator", "ScriptMethod", "ScriptModule", "ScriptModuleSerializer",
        "ScriptObject", "ScriptObjectProperty", "StaticModule", "StreamObjType", "StringType", "SymBoolType",
        "SymIntType", "TensorType", "TracingState", "TupleType", "Type", "UnionType", "Use", "Value",
        "import_ir_module", "import_ir_module_from_buffer", "merge_type_from_type_comment", "parse_ir",
        "parse_schema", "parse_type_comment", "unify_type_list", "fork", "wait", "Future", "AggregationType",
        "BenchmarkConfig", "BenchmarkExecutionStats", "ThroughputBenchmark", "IODescriptor", "SUM", "AVG",
        "PyTorchFileReader", "PyTorchFileWriter", "SerializationStorageContext",
        "DeserializationStorageContext")),
    *(("", name, "PyTorch's dispatcher and __torch_function__ machinery, which gradiente does not have")
      for name in ("DispatchKey", "DispatchKeySet", "ExcludeDispatchKeyGuard", "DisableTorchFunction",
                   "DisableTorchFunctionSubclass", "Tag")),
    ("", "cudnn_*", "a cuDNN kernel's entry point: gradiente is CPU-only"),
    ("", "miopen_*", "a MIOpen (ROCm) kernel's entry point: gradiente is CPU-only"),
    ("", "mkldnn_*", "a oneDNN kernel's entry point: a PyTorch build detail"),
    ("", "fbgemm_*", "FBGEMM's quantized kernels: quantized tensors are not part of gradiente"),
    ("", "quantized_*", "quantized tensors are not part of gradiente"),
    ("", "choose_qparams_optimized", "quantized tensors are not part of gradiente"),
    ("", "fused_moving_avg_obs_fake_quant", "quantized tensors are not part of gradiente"),
    ("", "empty_quantized", "quantized tensors are not part of gradiente"),
    ("", "int_repr", "quantized tensors are not part of gradiente"),
    ("", "dequantize", "quantized tensors are not part of gradiente"),
    ("", "qscheme", "quantized tensors are not part of gradiente"),
    ("", "q*int*", "quantized dtypes are not part of gradiente"),
    ("", "bits*", "bit-packed dtypes without arithmetic: NumPy has none to store them in"),
    ("", "float8_*", "8-bit floats have no arithmetic on CPU in PyTorch either; not carried over"),
    ("", "float4_*", "4-bit floats have no arithmetic on CPU in PyTorch either; not carried over"),
    ("", "int[1-7]", "sub-byte integer dtypes: NumPy has none"),
    ("", "uint[1-7]", "sub-byte integer dtypes: NumPy has none"),
    ("", "complex32", "half-precision complex: NumPy has no complex32"),
    ("", "chalf", "half-precision complex: NumPy has no complex32"),
    ("Tensor", "chalf", "half-precision complex: NumPy has no complex32"),
    ("", "Stream", "device streams order work on accelerators: gradiente is CPU-only"),
    ("", "Event", "device events time work on accelerators: gradiente is CPU-only"),
    ("", "AcceleratorError", "raised by accelerator runtimes: gradiente is CPU-only"),
    ("", "*_autocast_ipu_*", "no IPU or XLA devices: gradiente is CPU-only"),
    ("", "*_autocast_xla_*", "no IPU or XLA devices: gradiente is CPU-only"),
    ("", "set_autocast_gpu_dtype", "autocast on GPUs: gradiente is CPU-only"),
    ("", "is_vulkan_available", "no Vulkan device: gradiente is CPU-only"),
    ("", "batch_norm_*", "SyncBatchNorm's distributed kernels: gradiente runs in one process"),
    ("nn", "SyncBatchNorm", "synchronizes statistics across processes: gradiente runs in one process"),
    ("", "FatalError", "a C++ runtime error type of PyTorch's"),
    ("", "export", "torch.export traces programs into graphs for deployment; gradiente runs eagerly only"),
    ("", "Node", "TorchScript's IR node (autograd's nodes are torch.autograd.graph.Node, which gradiente has)"),
    ("", "cpp", "the bindings of PyTorch's C++ frontend"),
    ("", "bit", "a bit-packed dtype without arithmetic: NumPy has none to store it in"),
    ("testing", "FileCheck", "checks TorchScript's IR, which gradiente does not have"),
    ("nn.functional", "BroadcastingList*", "TorchScript's annotations for arguments"),
    ("nn.functional", "assert_int_or_pair", "a helper PyTorch's functional.py uses to define its own functions"),
    ("nn.functional", "boolean_dispatch", "a helper PyTorch's functional.py uses to define its own functions"),
    ("nn.functional", "*torch_function*", "the __torch_function__ override protocol, which gradiente does not have"),
    ("nn.functional", "*_notes", "a fragment PyTorch's docstrings share, not a function"),
    ("linalg", "common_notes", "a fragment PyTorch's docstrings share, not a function"),
    ("nn.functional", "*scaled*mm", "float8 matrix-product kernels of GPUs"),
    ("nn.functional", "grouped_mm", "a grouped matrix-product kernel of GPUs"),
    ("nn.functional", "ScalingType", "float8 matrix-product kernels of GPUs"),
    ("nn.functional", "SwizzleType", "float8 matrix-product kernels of GPUs"),
    ("autograd.graph", "set_override_stale_capture_stream", "CUDA streams: gradiente is CPU-only"),
    ("autograd.graph", "set_warn_on_accumulate_grad_stream_mismatch", "CUDA streams: gradiente is CPU-only"),
    ("autograd.graph", "region_activation_memory_budget", "torch.compile's activation memory budget"),
    ("", "cond", "a control-flow operator of torch.compile/torch.export, which gradiente does not have"),
    ("func", "functionalize", "torch.func.functionalize removes mutation for compilers; gradiente runs eagerly"),
)


def torch_names(torch, path):
    """PyTorch's public names in one namespace (see the module's docstring)."""
    if path == "Tensor":
        return sorted(n for n in dir(torch.Tensor) if not n.startswith("_"))
    module = importlib.import_module(f"torch.{path}" if path else "torch")
    declared = getattr(module, "__all__", None)
    if declared is not None:
        return sorted(n for n in set(declared) if not n.startswith("_"))
    names = []
    for name in dir(module):
        if name.startswith("_"):
            continue
        value = getattr(module, name)
        if isinstance(value, types.ModuleType) or getattr(value, "__module__", None) in _IMPORTED_FROM:
            continue
        if name in ("TYPE_CHECKING", "annotations"):
            continue
        names.append(name)
    return sorted(names)


def gradiente_has(gradiente, path, name):
    if path == "Tensor":
        return hasattr(gradiente.Tensor, name)
    try:
        module = importlib.import_module(f"gradiente.{path}" if path else "gradiente")
    except ImportError:
        return False
    try:
        return hasattr(module, name)
    except Exception:       # a lazy attribute whose import fails: not there
        return False


def survey():
    """``{namespace: (torch's names, the names gradiente lacks)}``."""
    import torch

    import gradiente
    result = {}
    for path in NAMESPACES:
        names = torch_names(torch, path)
        result[path] = (names, [n for n in names if not gradiente_has(gradiente, path, n)])
    return result


def label(path):
    return "torch.Tensor" if path == "Tensor" else f"torch.{path}" if path else "torch"


def read_table(path=TABLE):
    """``{(namespace label, name): reason}`` from the markdown table of ``docs/public-names.md``."""
    rows = {}
    if not os.path.exists(path):
        return rows
    with open(path, encoding="utf-8") as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) == 3 and cells[0].startswith("`torch") and cells[1].startswith("`"):
                rows[(cells[0].strip("`"), cells[1].strip("`"))] = cells[2]
    return rows


def default_reason(path, name):
    for space_pattern, name_pattern, reason in RULES:
        if fnmatch.fnmatchcase(path, space_pattern) and fnmatch.fnmatchcase(name, name_pattern):
            return reason
    return NOT_YET


def coverage(results):
    total = sum(len(names) for names, _ in results.values())
    missing = sum(len(lacking) for _, lacking in results.values())
    return (total - missing) / total, total, missing


def in_scope_coverage(results, reasons):
    """The share of the names in scope that gradiente has: PyTorch's names less those absent by design (GPU
    kernels, JIT, quantization... each with its reason in the table), the census the issue itself describes.
    ``reasons`` maps (namespace label, name) to the reason a name is absent."""
    gaps = sum(reasons.get((label(space), name), NOT_YET) == NOT_YET
               for space, (_, lacking) in results.items() for name in lacking)
    _, total, missing = coverage(results)
    present = total - missing
    return present / (present + gaps), present + gaps, gaps


_HEADER = """# PyTorch's public names in gradiente

gradiente follows PyTorch 2.13's API name for name. `tools/public_names.py` lists PyTorch's public names in each
namespace (its `__all__`, or what `dir()` shows without a leading underscore, less submodules and imported
helpers) and checks which of them gradiente has; `tests/test_public_names.py` runs it in CI and fails on a
name that is missing without a reason below, or listed below though gradiente has it.

"""


def write_table(results, path=TABLE):
    old = read_table(path)
    fraction, total, missing = coverage(results)
    reasons = {(label(space), name): old.get((label(space), name)) or default_reason(space, name)
               for space, (_, lacking) in results.items() for name in lacking}
    in_scope, scope, gaps = in_scope_coverage(results, reasons)
    lines = [_HEADER, f"**Coverage: {total - missing} of {total} names ({fraction:.1%}).** Of the {missing} names "
             f"gradiente lacks, {missing - gaps} are absent by design (the reason is given) and {gaps} are gaps "
             f"still to fill (\"{NOT_YET}\"). **In scope** (PyTorch's names less those absent by design): "
             f"{total - missing} of {scope} ({in_scope:.1%}).\n\n",
             "| namespace | present | of |\n|---|---|---|\n"]
    for space, (names, lacking) in results.items():
        lines.append(f"| `{label(space)}` | {len(names) - len(lacking)} | {len(names)} |\n")
    lines.append("\n## Names gradiente does not have, and why\n\n| namespace | name | reason |\n|---|---|---|\n")
    for space, (_, lacking) in results.items():
        for name in lacking:
            reason = reasons[(label(space), name)]
            lines.append(f"| `{label(space)}` | `{name}` | {reason} |\n")
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(lines)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--write", action="store_true", help="rewrite docs/public-names.md")
    args = parser.parse_args()
    sys.path.insert(0, os.path.join(ROOT, "src"))
    results = survey()
    for space, (names, lacking) in results.items():
        print(f"{label(space):<32}{len(names) - len(lacking):>5} / {len(names):<5} {' '.join(lacking)}")
    fraction, total, missing = coverage(results)
    print(f"\ncoverage: {total - missing} of {total} ({fraction:.1%})")
    in_scope, scope, gaps = in_scope_coverage(results, read_table())
    print(f"in scope (less the absences by design in the table): {total - missing} of {scope} ({in_scope:.1%}), "
          f"{gaps} gaps")
    if args.write:
        write_table(results)
        print(f"wrote {os.path.relpath(TABLE, ROOT)}")


if __name__ == "__main__":
    main()
