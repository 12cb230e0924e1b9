"""The table behind tests/test_sparse_everywhere.py: every public function and Tensor method that takes a tensor,
called on a small sparse COO tensor and a small CSR tensor in gradiente and in PyTorch, each outcome sorted.

A row is (namespace, name, argument family, layout). The argument families are the shapes of call that most
signatures take: the tensor alone, with a number, with a second sparse tensor of its layout, with a dense tensor
(either side), with a dim, with two dims. A family PyTorch refuses with TypeError (its argument parser: the call
does not fit the signature) is no row. Each row is then one of:

* ``agree``: the same result (layout, dtype, shape and dense values; random results: layout, dtype and shape), or
  the same exception type with PyTorch's message (gradiente's may stop after the first sentences of PyTorch's
  "Could not run 'aten::...'" message, which goes on to list backends);
* ``clear``: both raise, or gradiente raises where PyTorch computes: clear, but not PyTorch's behaviour;
* ``silent``: gradiente returns where PyTorch raises, or returns a different result: the worst kind.

Run as a script for the counts: ``PYTHONPATH=src python tests/sparse_everywhere_table.py [-v]``.
"""
import math
import operator
import sys
import warnings

import numpy as np

import gradiente

try:
    import torch
except ImportError:        # the test module skips itself
    torch = None

#: names never called: they change global state, read files, or take no tensor at all
SKIPPED = frozenset({
    "set_default_dtype", "set_default_device", "set_default_tensor_type", "set_printoptions", "set_grad_enabled",
    "set_num_threads", "set_num_interop_threads", "set_rng_state", "set_flush_denormal", "set_anomaly_enabled",
    "set_warn_always", "set_float32_matmul_precision", "set_deterministic_debug_mode", "use_deterministic_algorithms",
    "manual_seed", "seed", "save", "load", "compile", "from_file", "set_autocast_enabled", "set_autocast_dtype",
    "set_autocast_cache_enabled", "set_autocast_cpu_enabled", "set_autocast_cpu_dtype", "set_autocast_gpu_dtype",
    "set_autocast_ipu_enabled", "set_autocast_ipu_dtype", "set_autocast_xla_enabled", "set_autocast_xla_dtype",
    "autocast_increment_nesting", "autocast_decrement_nesting", "clear_autocast_cache", "init_num_threads",
    "vmap", "cond", "get_device_module", "typename", "is_tensor", "is_storage", "lobpcg", "frombuffer",
    "register_hook", "register_post_accumulate_grad_hook", "backward", "share_memory_", "storage",
    "untyped_storage", "_typed_storage", "apply_", "map_", "map2_", "tolist", "numpy", "__reduce_ex__",
    "__setstate__", "__deepcopy__", "__dlpack__", "__dlpack_device__", "data_ptr", "storage_offset", "stride",
    "is_set_to", "set_", "record_stream", "pin_memory", "is_pinned", "cuda", "to_mkldnn", "module_load",
    "resize_", "resize_as_", "sparse_resize_", "sparse_resize_and_clear_", "__array__", "__array_wrap__",
})

#: results drawn at random: compared by layout, dtype and shape only
RANDOM = ("rand", "bernoulli", "normal", "multinomial", "poisson", "dropout", "rrelu", "exponential_", "uniform_",
          "cauchy_", "geometric_", "log_normal_", "random_", "gumbel", "binomial", "randint")

DENSE = [[0.0, 1.5, 0.0], [-2.0, 0.0, 0.5]]
OTHER = [[0.25, 0.0, 0.0], [3.0, 0.0, -1.0]]

FAMILIES = {
    "unary": lambda s, s2, d: (s,),
    "number": lambda s, s2, d: (s, 2),
    "same_layout": lambda s, s2, d: (s, s2),
    "dense_second": lambda s, s2, d: (s, d),
    "dense_first": lambda s, s2, d: (d, s),
    "dim": lambda s, s2, d: (s, 0),
    "two_dims": lambda s, s2, d: (s, 0, 1),
}


#: reflected operators, called as the expression that invokes them (``d + s`` for ``s.__radd__(d)``): PyTorch's
#: ``s.__radd__(d)`` called by hand is ``add(s, d)``, while in gradiente, whose sparse classes are subclasses of Tensor,
#: Python itself calls ``s.__radd__(d)`` for ``d + s``
REFLECTED = {"__radd__": operator.add, "__rsub__": operator.sub, "__rmul__": operator.mul,
             "__rtruediv__": operator.truediv, "__rpow__": operator.pow}


def make_inputs(lib, layout):
    """(sparse, another sparse of its layout, dense), fresh for each call: some functions change their input."""
    def sparse(rows):
        t = lib.tensor(rows)
        return t.to_sparse() if layout == "coo" else t.to_sparse_csr()
    return sparse(DENSE), sparse(OTHER), lib.tensor(OTHER)


def namespaces(lib):
    """{namespace name: (module or class, whether the name is a method)}."""
    return {"torch": lib, "nn.functional": lib.nn.functional, "linalg": lib.linalg, "special": lib.special,
            "Tensor": lib.Tensor}


def _public_callables(space, is_method):
    names = []
    for name in dir(space):
        if name in SKIPPED or (name.startswith("_") and not (is_method and name.startswith("__")
                                                              and name.endswith("__"))):
            continue
        if is_method and name.startswith("__") and name not in DUNDER_OPERATORS:
            continue
        value = getattr(space, name, None)
        if value is None or isinstance(value, type) or type(value).__name__ == "module" or not callable(value):
            continue
        names.append(name)
    return names


#: Python's operators on a tensor: their rows run through the method of that name
DUNDER_OPERATORS = frozenset({
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
    "__floordiv__", "__pow__", "__rpow__", "__matmul__", "__neg__", "__abs__", "__getitem__", "__eq__", "__ne__",
    "__lt__", "__le__", "__gt__", "__ge__", "__and__", "__or__", "__xor__", "__invert__", "__mod__", "__iadd__",
    "__imul__", "__isub__", "__itruediv__", "__len__", "__bool__", "__float__", "__int__",
})


def common_names():
    """(namespace, name, is_method) for every public callable both libraries have."""
    ours, theirs = namespaces(gradiente), namespaces(torch)
    rows = []
    for key, space in theirs.items():
        is_method = key == "Tensor"
        mine = ours[key]
        for name in _public_callables(space, is_method):
            if name in SKIPPED:
                continue
            try:
                present = callable(getattr(mine, name))
            except Exception:
                present = False
            if present:
                rows.append((key, name, is_method))
    return rows


def call(lib, key, name, is_method, family, layout):
    """The outcome of one call: ("value", result) or ("error", exception)."""
    s, s2, d = make_inputs(lib, layout)
    args = FAMILIES[family](s, s2, d)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if is_method and name in REFLECTED and len(args) == 2:
                # what a reflected operator is for: ``other + self`` written as an expression
                result = REFLECTED[name](args[1], args[0])
            elif is_method:
                first, *rest = args
                result = getattr(first, name)(*rest)
            else:
                result = getattr(namespaces(lib)[key], name)(*args)
        except Exception as error:
            return "error", error
    return "value", result


def _same_message(ours, theirs):
    ours, theirs = str(ours), str(theirs)
    if ours == theirs:
        return True
    return ours.startswith("Could not run") and theirs.startswith(ours)


def _layout_word(value):
    return str(value.layout).replace("gradiente.", "torch.")


def _dense_array(value):
    dense = value.to_dense() if value.layout != (gradiente.strided if isinstance(value, gradiente.Tensor)
                                                   else torch.strided) else value
    return np.asarray(dense.detach().cpu().numpy() if hasattr(dense, "cpu") else dense.detach().numpy())


def _same_value(ours, theirs, random):
    if isinstance(theirs, torch.Tensor):
        if not isinstance(ours, gradiente.Tensor):
            return False
        if _layout_word(ours) != _layout_word(theirs) or str(ours.dtype)[10:] != str(theirs.dtype)[6:]:
            return False
        if tuple(ours.shape) != tuple(theirs.shape):
            return False
        if random:
            return True
        a, b = _dense_array(ours), _dense_array(theirs)
        if a.dtype.kind in "fc":
            return a.shape == b.shape and np.allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True)
        return a.shape == b.shape and np.array_equal(a, b)
    if isinstance(theirs, (tuple, list)):
        return (isinstance(ours, (tuple, list)) and len(ours) == len(theirs)
                and all(_same_value(o, t, random) for o, t in zip(ours, theirs)))
    if isinstance(theirs, float) and isinstance(ours, float) and math.isnan(theirs):
        return math.isnan(ours)
    if isinstance(theirs, (bool, int, float, complex, str, type(None))):
        return type(ours) is type(theirs) and ours == theirs
    return str(ours).replace("gradiente", "torch") == str(theirs)


def classify(ours, theirs, random=False):
    """'agree', 'clear' or 'silent' for one row's two outcomes."""
    (our_kind, our_out), (their_kind, their_out) = ours, theirs
    if their_kind == "error":
        if our_kind == "value":
            return "silent"
        same = type(our_out) is type(their_out) and _same_message(our_out, their_out)
        return "agree" if same else "clear"
    if our_kind == "error":
        return "clear"
    return "agree" if _same_value(our_out, their_out, random) else "silent"


def rows():
    """Every row: (key, name, family, layout, kind, our outcome, their outcome)."""
    table = []
    for key, name, is_method in common_names():
        random = any(word in name for word in RANDOM)
        for layout in ("coo", "csr"):
            for family in FAMILIES:
                theirs = call(torch, key, name, is_method, family, layout)
                if theirs[0] == "error" and isinstance(theirs[1], TypeError):
                    continue
                ours = call(gradiente, key, name, is_method, family, layout)
                table.append((key, name, family, layout, classify(ours, theirs, random), ours, theirs))
    return table


def _short(outcome):
    kind, out = outcome
    if kind == "error":
        return f"{type(out).__name__}: {str(out)[:110]}"
    if isinstance(out, (gradiente.Tensor, torch.Tensor)) and out.layout not in (gradiente.strided, torch.strided):
        return f"{_layout_word(out)} {tuple(out.shape)}"
    return repr(out)[:110].replace("\n", " ")


if __name__ == "__main__":
    table = rows()
    counts = {}
    for row in table:
        counts[row[4]] = counts.get(row[4], 0) + 1
    if "-v" in sys.argv:
        for key, name, family, layout, kind, ours, theirs in table:
            if kind != "agree":
                print(f"{kind:6} {layout} {key}.{name}({family})\n    ours:   {_short(ours)}\n    torch:  "
                      f"{_short(theirs)}")
    print(f"rows {len(table)}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
