"""Random programs run on gradiente and on PyTorch, compared line by line (issue 13).

    python tools/random_programs.py --programs 5000 --seed 0   # a summary table, and each disagreement
    python tools/random_programs.py --replay 1234              # one program: its source and what differs
    python tools/random_programs.py --report                   # the adversarial suite's table as well

A program is Python source that uses ``torch`` and ``F`` only. It is written by running PyTorch: 1-3 leaves
of broadcastable shapes (0-d to 3-d, float32 or float64, some of them strided or transposed), then 5-25 lines
drawn from the op kinds of ``tools/program_ops.py``, each one chosen knowing the shapes the lines before it
made; then the gradients of the last results with respect to the leaves (``autograd.grad`` with a random
upstream gradient and ``create_graph=True``), and the gradient of a random projection of those (second
order). Because the source holds every choice as a literal, the same text runs on ``import gradiente as
torch``, and a failing program is its own reproducer.

After each line both runs are compared: the value (within a tolerance scaled by the dtype), dtype, shape,
strides, ``grad_fn`` name and ``requires_grad`` of the variable it made, or the exception it raised (type and
message, ``gradiente.`` read as ``torch.``); at the end every variable is compared again, which catches
in-place writes that reach a variable through a view. A disagreement is

* *clear but different*: both raise, differently; or gradiente raises where PyTorch returns;
* *silent*: PyTorch raises where gradiente returns, or the results differ without an error.

A failing program is shrunk by dropping lines while the disagreement stays the same kind.
"""
import argparse
import collections
import random
import re
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

import program_ops

import gradiente

try:
    import torch
except ImportError:  # pragma: no cover - the tester needs the reference
    torch = None

SAME, CLEAR, SILENT = "same as torch", "clear but different", "silent difference"
#: (rtol, atol) per dtype, read off each value compared: values pass through up to 25 ops, so float32 allows
#: for rounding that compounds
#: (float64 allows for special functions: PyTorch's trigamma, digamma's derivative, is good to about 1e-9)
TOLERANCE = {"float16": (1e-2, 1e-3), "float32": (2e-4, 2e-5), "float64": (1e-7, 1e-9)}
#: ops whose output jumps where the input crosses a boundary: float32 rounding may put the two runs on
#: either side, so after one of them a float32 program's values are not compared (float64 programs are)
DISCONTINUOUS = {"floor", "ceil", "round", "trunc", "sign", "frac", "sgn", "remainder", "fmod", "argmax", "gt",
                 "where", "maximum", "minimum", "fmax", "fmin", "masked_fill", "masked_fill_", "eq_where", "sort",
                 "median", "max_dim", "min_dim", "max", "amax", "amin", "topk", "kthvalue", "cummax", "index_bool",
                 "masked_select", "relu", "relu_", "clamp", "clamp_", "clamp_min", "clamp_tensor", "hardtanh",
                 "long", "int_to_float", "half_round_trip", "copysign", "abs", "abs_", "all_close", "bool",
                 "F_relu", "relu6", "softshrink", "max_pool1d", "hardswish", "leaky_relu", "dist", "norm_p1", "l1",
                 "smooth_l1",
                 # and ops whose derivative blows up at the edge of their domain (acos of tanh of something large):
                 # there float32 rounding of the input moves the gradient by any amount
                 "acos", "asin", "atanh", "acosh", "erfinv", "logit", "rsqrt", "reciprocal", "rdiv", "lgamma",
                 "digamma"}


SINGLE_TOLERANCE = {**TOLERANCE, "float64": TOLERANCE["float32"]}
#: the casts that bring float32 or float16 values into a program
SINGLE_CASTS = ("float()", "float32", "half()", "type_as")


def _values_at(program, verdict, lines, libs=None, leaves=None):
    """The float arrays each library made where ``verdict`` found values differ, running ``lines``:
    ``(ours, theirs)`` lists of arrays, or None when the runs do not both reach that point. ``libs``: the two
    libraries to run (gradiente and PyTorch); ``leaves``: the function that makes the leaves' arrays (``R``)."""
    if verdict.kind != SILENT or not verdict.what.endswith("values"):
        return None
    found = []
    for lib in libs or (gradiente, torch):
        trail = run(program, lib, lines, leaves or R)
        if len(trail) <= verdict.line or trail[verdict.line][0] == "raised":
            return None
        what = trail[verdict.line][1]
        if trail[verdict.line][0] == "end":
            what = what.get(verdict.what.split(" at the end")[0])
        found.append([d["data"] for d in _descriptions(what) if d["data"].dtype.kind == "f"])
    ours, theirs = found
    if len(ours) != len(theirs) or any(a.shape != b.shape for a, b in zip(ours, theirs)):
        return None
    return ours, theirs


def _descriptions(what):
    if isinstance(what, dict):
        yield what
    elif isinstance(what, tuple):
        for item in what:
            yield from _descriptions(item)


def _float32_rounding(program, verdict):
    """Whether a float32 program's values differ by rounding only (KNOWN's ``float32_rounding``)."""
    if program.dtype != "float32" or any("half()" in line for line in program.lines):
        return False
    narrow = _values_at(program, verdict, program.lines)
    wide = _values_at(program, verdict, [_in_float64(line) for line in program.lines])
    if narrow is None or wide is None:
        return False
    (ours, theirs), (reference, theirs_wide) = narrow, wide
    for a, b, exact, b_wide in zip(ours, theirs, reference, theirs_wide):
        if not _close(exact, b_wide, TOLERANCE) or not np.array_equal(np.isnan(a), np.isnan(exact)):
            return False        # the libraries differ in float64 too, or in where the nans are
        finite = np.isfinite(exact)
        our_error = np.max(np.abs(a[finite] - exact[finite]), initial=0.0)
        their_error = np.max(np.abs(b[finite] - exact[finite]), initial=0.0)
        scale = max(1.0, float(np.max(np.abs(exact[finite]), initial=0.0)))
        if our_error > max(2 * their_error, TOLERANCE["float32"][1] * scale):
            return False
    return True


def _float64_ill_conditioned(program, verdict):
    """Whether a float64 program's values differ by no more than PyTorch's own values move when every leaf moves
    by an ulp or two (KNOWN's ``float64_ill_conditioned``), with their nans in the same places."""
    if program.dtype != "float64" or any(cast in line for line in program.lines for cast in SINGLE_CASTS):
        return False
    found = _values_at(program, verdict, program.lines)
    if found is None:
        return False
    moved = []
    for step in (1.0, -1.0):
        def nudged(seed, shape, dtype, step=step):
            return np.asarray(R(seed, shape, dtype) * (1.0 + step * np.finfo(np.float64).eps))   # 0-d: an array
        values = _values_at(program, verdict, program.lines, (torch, torch), nudged)
        if values is None:
            return False
        moved.append(values[1])
    ours, theirs = found
    for i, (a, b) in enumerate(zip(ours, theirs)):
        if not np.array_equal(np.isnan(a), np.isnan(b)):
            return False
        finite = np.isfinite(b)
        difference = np.max(np.abs(a[finite] - b[finite]), initial=0.0) if np.array_equal(a[~finite], b[~finite]) \
            else np.inf
        movement = max(np.inf if not np.array_equal(np.isfinite(m[i]), finite) or
                       not np.array_equal(m[i][~finite], b[~finite], equal_nan=True)
                       else np.max(np.abs(m[i][finite] - b[finite]), initial=0.0) for m in moved)
        if difference > movement:
            return False
    return True


def _jump_taken_apart(program, verdict):
    """Whether values first differ at a discontinuous op (ceil, sign, a comparison ...) that, run by PyTorch on
    gradiente's own inputs, gives gradiente's result (KNOWN's ``jump_taken_apart``): the op agrees, and its
    inputs, equal within the tolerance (every line before agreed), lie on either side of its jump."""
    line_number = verdict.line
    if verdict.kind != SILENT or verdict.what != "values" or line_number >= len(program.lines) \
            or program.kinds[line_number] not in DISCONTINUOUS:
        return False
    line = program.lines[line_number]
    target = line.split(" = ")[-2].split("; ")[-1].strip() if " = " in line else None
    ours = namespace(gradiente)
    try:
        for earlier in program.lines[:line_number]:
            quiet(lambda earlier=earlier: exec(earlier, ours))
        theirs = namespace(torch)
        for name, value in ours.items():
            if isinstance(value, gradiente.Tensor):
                copy = torch.from_numpy(value.detach().numpy().copy())
                theirs[name] = copy.requires_grad_(value.requires_grad and copy.is_floating_point())
        for ns in (ours, theirs):
            quiet(lambda ns=ns: exec(line, ns))
    except Exception:  # (a line that raises here is no jump to explain)
        return False
    a, b = _describe(ours.get(target)), _describe(theirs.get(target))
    return isinstance(a, dict) and isinstance(b, dict) and a["data"].shape == b["data"].shape \
        and _close(a["data"], b["data"], TOLERANCE)


def _zero_tensor_absorbs_nan(program, verdict):
    """Whether the values differ only as PyTorch's own do between ``sgn`` and ``sign`` of real numbers (KNOWN's
    ``zero_tensor_absorbs_nan``): PyTorch, with every ``sgn`` read as ``sign``, gives gradiente's values."""
    if not any(".sgn()" in line or "torch.sgn(" in line for line in program.lines):
        return False
    found = _values_at(program, verdict, program.lines)
    signs = [line.replace(".sgn()", ".sign()").replace("torch.sgn(", "torch.sign(") for line in program.lines]
    signed = _values_at(program, verdict, signs, (torch, torch))
    if found is None or signed is None or len(found[0]) != len(signed[1]):
        return False
    return all(a.shape == b.shape and _close(a, b, TOLERANCE) for a, b in zip(found[0], signed[1]))


def _in_float64(line):
    """A line of a float32 program, computing in float64 instead."""
    for narrow, wide in (("'float32'", "'float64'"), (".float()", ".double()"), ("torch.float32", "torch.float64")):
        line = line.replace(narrow, wide)
    return line


def _nan_at_hardtanh(program, verdict):
    """Whether values differ after a hardtanh (relu6) met a nan input (KNOWN's ``nan_at_hardtanh``): the program
    runs again on gradiente with those two functions watched."""
    if verdict.kind != SILENT or not verdict.what.endswith("values"):
        return False
    functional = gradiente.nn.functional
    met_nan = []

    def watched(name):
        def call(input, *args, **kwargs):
            met_nan.append(bool(np.isnan(input.detach().numpy()).any()))
            return getattr(functional, name)(input, *args, **kwargs)
        return call

    ns = namespace(gradiente)
    ns["F"] = type("WatchedF", (), {"__getattr__": lambda self, name: getattr(functional, name),
                                    "relu6": staticmethod(watched("relu6")),
                                    "hardtanh": staticmethod(watched("hardtanh"))})()
    for line in program.lines[:verdict.line + 1]:
        try:
            quiet(lambda line=line: exec(line, ns))
        except Exception:  # (the verdict's run got past this line; a rerun that does not changes nothing here)
            break
    return any(met_nan)


def _welford_mean_of_an_infinity(program, verdict):
    """Whether values differ only where gradiente's var_mean/std_mean mean is infinite and PyTorch's nan (KNOWN's
    ``welford_mean_of_an_infinity``)."""
    if not any(op in line for line in program.lines for op in ("std_mean", "var_mean")):
        return False
    found = _values_at(program, verdict, program.lines)
    if found is None:
        return False
    for ours, theirs in zip(*found):
        differ = ~np.isclose(ours, theirs, equal_nan=True)
        if not np.all(np.isinf(ours[differ]) & np.isnan(theirs[differ])):
            return False
    return True


#: Disagreements understood and not fixed yet: name -> (does a verdict show it, why). ``tests/test_random_programs.py``
#: lets a fixed seed end in one of these (and pins some with a strict xfail each); any other fails.
KNOWN = {
    "welford_mean_of_an_infinity": (
        _welford_mean_of_an_infinity,
        "the mean that var_mean and std_mean return, over values that include an infinity: PyTorch's Welford "
        "recurrence gives nan unless the infinity comes last ([inf, 1] -> nan, [1, inf] -> inf) while its own mean() "
        "gives inf for both; gradiente gives mean()'s answer"),
    "version_check_order": (
        lambda p, v: v.kind == CLEAR and v.what.count("one of the variables needed for gradient computation") == 2,
        "both raise PyTorch's in-place modification error, but the engine meets another changed saved value first"),
    "overlap_check": (lambda p, v: v.kind == CLEAR and "unsupported operation" in v.what,
                      "gradiente refuses an in-place write into an expanded view or unfold windows that overlap, and "
                      "checks overlap before shapes; PyTorch refuses only zero strides, writes overlapping windows in "
                      "its own order, and index_fill_ merely warns"),
    "empty_tensor_version": (
        lambda p, v: v.kind == CLEAR and "torch returns" in v.what
        and re.search(r"Tensor \[[^\]]*\b0\b[^\]]*\]\], which is output", v.what) is not None,
        "an empty saved tensor changed in place: gradiente's engine raises the version error where PyTorch's "
        "backward returns (both bump the version; which check PyTorch skips for empty tensors is not yet known: "
        "seed 1134 shows it)"),
    "zero_tensor": (lambda p, v: "ZeroTensors are immutable" in v.what,
                    "PyTorch's internal ZeroTensor (sgn's gradient) refuses a later in-place write; gradiente has "
                    "none"),
    "float32_rounding": (
        _float32_rounding,
        "float32 values that differ by more than the tolerance, where each library's float32 result is within "
        "rounding of the same program run in float64 (on which the two agree), gradiente's no farther than "
        "PyTorch's: rounding amplified by a steep function (a normalization of nearly equal values, a second "
        "derivative near a pole), not a different computation"),
    "nan_at_hardtanh": (
        _nan_at_hardtanh,
        "hardtanh's (relu6's) gradient at a nan input: PyTorch's kernel gives 0 in its vectorized loop and passes "
        "the gradient in its scalar loop, so its answer depends on the tensor's length and the CPU; gradiente "
        "gives 0 everywhere"),
    "jump_taken_apart": (
        _jump_taken_apart,
        "a discontinuous op (ceil, sign, a comparison ...) whose inputs agree within rounding but lie on either side "
        "of its jump; PyTorch's op on gradiente's inputs gives gradiente's result (seed 110856: instance_norm of two "
        "values, a unit in the last place apart, as normalization.py's fast path says, then kl_div(p, p) = 2.8e-17 "
        "in PyTorch and -1.1e-16 in gradiente, and ceil of it)"),
    "zero_tensor_absorbs_nan": (
        _zero_tensor_absorbs_nan,
        "PyTorch's gradient of sgn of a real tensor is a ZeroTensor, which a later product with a nan or inf leaves "
        "0 (0·nan = 0); sign's, the same function's, is a materialized zero, which gives nan, as gradiente's zeros do "
        "for both (seed 160555: sgn of var_mean of one value, nan, whose backward multiplies by nan)"),
    "float64_ill_conditioned": (
        _float64_ill_conditioned,
        "float64 values that differ by no more than PyTorch's own move when the leaves move by an ulp or two: "
        "rounding amplified by the program (seed 20793: fmod by 8e-34 sends back a gradient of 2.8e16, which "
        "meets log_softmax's backward grad - exp(out)·Σgrad where the two terms cancel; PyTorch's kernel rounds "
        "that as one fused multiply-add and gradiente rounds the product first, which moves the result by 0.03; "
        "fusing it exactly would cost log_softmax's backward (cross_entropy's) ~10x, and PyTorch's SLEEF exp "
        "differs from NumPy's in the last bit of 5% of values anyway; seed 190818: sinc of exp(18.7) = 1.4e8, whose "
        "phase π·x turns a last-place difference into 1e-7)"),
}



def known(program, verdict):
    """The name of the KNOWN difference ``verdict`` is, or None."""
    for name, (shows, _) in KNOWN.items():
        if shows(program, verdict):
            return name
    return None


def header(lib_name):
    return ("import numpy as np\n"
            f"{'import torch' if lib_name == 'torch' else 'import gradiente as torch'}\n"
            "F = torch.nn.functional\n\n"
            "def R(seed, shape, dtype):\n"
            "    return np.random.RandomState(seed).standard_normal(shape).astype(dtype)\n\n")


def R(seed, shape, dtype):
    return np.random.RandomState(seed).standard_normal(shape).astype(dtype)


def namespace(lib, leaves=R):
    return {"torch": lib, "F": lib.nn.functional, "np": np, "R": leaves}


# --- writing a program ------------------------------------------------------------------------------------

@dataclass
class Program:
    seed: int
    dtype: str
    lines: list            # source lines; the leaves first
    kinds: list            # the op kind of each line ("leaf", "grad" ...)
    leaves: list           # names of the leaves

    def source(self, lib_name="torch"):
        return header(lib_name) + "\n".join(self.lines) + "\n"


def _leaf_line(name, shape, dtype, layout, rng):
    seed = rng.randrange(10**6)
    if layout == "transposed" and len(shape) >= 2:
        array = f"R({seed}, {tuple(reversed(shape))}, '{dtype}').T"
    elif layout == "strided" and len(shape) >= 1:
        wide = shape[:-1] + (shape[-1] * 2,)
        array = f"R({seed}, {wide}, '{dtype}')[..., ::2]"
    else:
        array = f"R({seed}, {shape}, '{dtype}')"
    return f"{name} = torch.from_numpy({array}).requires_grad_()"


def write_program(seed, error_keep=0.15):
    """The program of ``seed``, written by running PyTorch line by line."""
    rng = random.Random(seed)
    dtype = rng.choice(["float32", "float64"])
    full = tuple(rng.randrange(1, 4) for _ in range(rng.randrange(0, 4)))
    lines, kinds, leaves = [], [], []
    for i in range(rng.randrange(1, 4)):
        shape = full[rng.randrange(len(full) + 1):]           # a suffix of the full shape: they broadcast
        shape = tuple(1 if rng.random() < 0.2 else n for n in shape)
        layout = rng.choice(["contiguous", "contiguous", "transposed", "strided"])
        lines.append(_leaf_line(f"x{i}", shape, dtype, layout, rng))
        kinds.append("leaf")
        leaves.append(f"x{i}")
    ns = namespace(torch)
    quiet(lambda: [exec(line, ns) for line in lines])
    scope = program_ops.Scope(rng, ns, leaves)
    kinds_available = sorted(program_ops.OPS)
    count = rng.randrange(5, 26)
    k = 0
    while k < count:
        for _ in range(20):
            kind = rng.choice(kinds_available)
            scope.op_name = kind
            text = program_ops.OPS[kind](scope)
            if not text:
                continue
            line = text.format(out=f"v{k}") if "{out}" in text else f"v{k} = {text}"
            try:
                quiet(lambda line=line: exec(line, ns))
            except Exception:
                if rng.random() < error_keep:     # keep it: the two libraries must raise alike
                    lines.append(line)
                    kinds.append(kind)
                    return Program(seed, dtype, lines, kinds, leaves)
                ns.pop(f"v{k}", None)
                continue
            if not isinstance(ns.get(f"v{k}"), torch.Tensor):
                ns.pop(f"v{k}", None)
                continue
            lines.append(line)
            kinds.append(kind)
            break
        k += 1
    lines += _gradient_lines(ns, leaves, rng)
    kinds += ["grad"] * (len(lines) - len(kinds))
    return Program(seed, dtype, lines, kinds, leaves)


def _gradient_lines(ns, leaves, rng):
    """First-order gradients of the last one or two results that require grad, with random upstream
    gradients, then the gradient of a random projection of those gradients (second order)."""
    results = [name for name in ns if name.startswith("v") and isinstance(ns[name], torch.Tensor)
               and ns[name].requires_grad and ns[name].dtype.is_floating_point]
    if not results:
        return []
    targets = results[-1:] if len(results) == 1 or rng.random() < 0.5 else [results[-1], rng.choice(results[:-1])]
    upstream = [f"R({rng.randrange(10**6)}, {tuple(ns[t].shape)}, '{str(ns[t].dtype)[6:]}')" for t in targets]
    leaf_list = ", ".join(leaves)
    projection = rng.randrange(10**6)
    return [
        f"g = torch.autograd.grad([{', '.join(targets)}], [{leaf_list}], "
        f"[{', '.join(f'torch.from_numpy({u})' for u in upstream)}], create_graph=True, allow_unused=True)",
        f"s = sum((gi * torch.from_numpy(R({projection}, tuple(gi.shape), str(gi.dtype).split('.')[-1]))).sum() "
        "for gi in g if gi is not None and gi.requires_grad)",
        f"gg = torch.autograd.grad(s, [{leaf_list}], allow_unused=True) if torch.is_tensor(s) else None",
    ]


def quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


# --- running and comparing --------------------------------------------------------------------------------

def _describe(value):
    """What is compared of one value: a tensor's metadata and data, a tuple's items, None."""
    if isinstance(value, (tuple, list)):
        return tuple(_describe(v) for v in value)
    if value is None or not hasattr(value, "stride"):
        return value if value is None else repr(type(value).__name__)
    data = value.detach()
    if data.is_conj() if hasattr(data, "is_conj") else False:
        data = data.resolve_conj()
    return {"shape": tuple(value.shape), "dtype": str(value.dtype).split(".")[-1],
            "stride": _strides_that_address_memory(value),
            "grad_fn": _grad_fn_name(value),
            "requires_grad": value.requires_grad, "data": _array(data)}


def _grad_fn_name(t):
    """The node's class name; reading it raises for a multi-output view whose base changed in place, and
    that error is compared too."""
    try:
        return type(t.grad_fn).__name__ if t.grad_fn is not None else None
    except RuntimeError as error:
        return _message(error)


def _array(data):
    """A detached tensor's values as a NumPy array (PyTorch's zero gradients may be ZeroTensors, which
    ``numpy()`` refuses without ``force``)."""
    if torch is not None and isinstance(data, torch.Tensor):
        return data.numpy(force=True).copy()
    return data.numpy().copy()


def _strides_that_address_memory(t):
    """The strides of the dims longer than 1: a dim of size 1 never moves the pointer, and no dim of an empty
    tensor reaches memory, so their strides are a convention each kernel picks (NumPy's and PyTorch's differ),
    invisible to every view and copy."""
    empty = t.numel() == 0
    return tuple(stride if size > 1 and not empty else None for stride, size in zip(t.stride(), t.shape))


def _message(error):
    return type(error).__name__, str(error).replace("gradiente.", "torch.").split("\n")[0]


def run(program, lib, lines=None, leaves=R):
    """Run the program's lines on ``lib``: per line, ``("ok", description of what it assigned)`` or
    ``("raised", type, message)`` (the run stops there), then ``("end", every variable)``. ``leaves`` makes the
    leaves' arrays (``R``)."""
    ns = namespace(lib, leaves)
    trail = []
    for line in program.lines if lines is None else lines:
        target = line.split(" = ")[-2].split("; ")[-1].strip() if " = " in line else None
        try:
            quiet(lambda line=line: exec(line, ns))
        except Exception as error:  # the error itself is compared
            trail.append(("raised",) + _message(error))
            return trail
        trail.append(("ok", _describe(ns.get(target))))
    final = {name: _describe(value) for name, value in ns.items() if name[:1] in "xv" and name[1:].isdigit()}
    trail.append(("end", final))
    return trail


def _difference(ours, theirs, tolerance, forward=True):
    """Where two descriptions differ ('values', 'dtype', 'stride' ...), or None. Gradients (not ``forward``)
    are compared without their grad_fn names and strides: the double-backward graph is gradiente's own, since
    its backward rules run on recorded tensors, and PyTorch's backward kernels pick their own layouts; their
    values, dtypes, shapes, requires_grad and second derivatives are compared."""
    if isinstance(theirs, dict) and isinstance(ours, dict):
        for key in ("shape", "dtype", "stride", "grad_fn", "requires_grad"):
            if key in ("grad_fn", "stride") and not forward:
                continue
            if ours[key] != theirs[key]:
                return f"{key}: {ours[key]} vs torch {theirs[key]}"
        if tolerance is not None and not _close(ours["data"], theirs["data"], tolerance):
            return "values"
        return None
    if isinstance(theirs, tuple) and isinstance(ours, tuple) and len(ours) == len(theirs):
        for a, b in zip(ours, theirs):
            found = _difference(a, b, tolerance, forward)
            if found:
                return found
        return None
    return None if _same_plain(ours, theirs) else f"{ours!r} vs torch {theirs!r}"


def _same_plain(a, b):
    return type(a) is type(b) and a == b


def _close(a, b, tolerance):
    if a.dtype.kind not in "fc":
        return np.array_equal(a, b)
    rtol, atol = tolerance[b.dtype.name if b.dtype.name in tolerance else "float32"]
    a, b = a.astype(np.float64), b.astype(np.float64)
    scale = max(1.0, float(np.max(np.abs(b[np.isfinite(b)]), initial=0.0)))
    return bool(np.allclose(a, b, rtol=rtol, atol=atol * scale, equal_nan=True))


@dataclass
class Verdict:
    kind: str              # SAME, CLEAR or SILENT
    line: int = -1         # the line where the runs part (len(lines) for the final comparison)
    what: str = ""

    def __str__(self):
        return f"{self.kind} at line {self.line}: {self.what}"


def compare(program, lines=None):
    """Run both libraries and say whether, where and how they disagree."""
    lines = program.lines if lines is None else lines
    ours, theirs = run(program, gradiente, lines), run(program, torch, lines)
    kinds = dict(zip(program.lines, program.kinds))
    single = program.dtype == "float32" or any(cast in line for line in lines for cast in SINGLE_CASTS)
    jumps = False
    for i, (a, b) in enumerate(zip(ours, theirs)):
        jumps = jumps or kinds.get(lines[i] if i < len(lines) else None) in DISCONTINUOUS
        # float32 rounding reaches float64 values made from float32 ones (float_power, double()): a program
        # that holds float32 data is compared at float32's tolerance throughout
        tolerance = None if jumps and single else SINGLE_TOLERANCE if single else TOLERANCE
        if a[0] == "raised" and b[0] == "raised":
            return Verdict(SAME) if a == b else Verdict(CLEAR, i, f"gradiente {a[1:]} vs torch {b[1:]}")
        if a[0] == "raised":
            return Verdict(CLEAR, i, f"gradiente raises {a[1:]}; torch returns")
        if b[0] == "raised":
            return Verdict(SILENT, i, f"torch raises {b[1:]}; gradiente returns")
        if a[0] == "end":
            if set(a[1]) != set(b[1]):
                return Verdict(SILENT, i, "variables differ")
            for name in b[1]:
                found = _difference(a[1][name], b[1][name], tolerance)
                if found:
                    return Verdict(SILENT, i, f"{name} at the end: {found}")
            return Verdict(SAME)
        found = _difference(a[1], b[1], tolerance, forward=kinds.get(lines[i]) != "grad")
        if found:
            return Verdict(SILENT, i, found)
    return Verdict(SAME)


def shrink(program, verdict):
    """Drop lines (last first) while the disagreement stays of the same kind at an op of the same kind."""
    lines = list(program.lines)
    aspect = verdict.what.split(":")[0]
    changed = True
    while changed:
        changed = False
        for i in reversed(range(len(lines))):
            candidate = lines[:i] + lines[i + 1:]
            found = compare(program, candidate)
            if found.kind == verdict.kind and found.what.split(":")[0] == aspect:
                lines, changed = candidate, True
    return lines


def check(seed):
    """``(program, verdict)`` for one seed."""
    program = write_program(seed)
    return program, compare(program)


def reproducer(program, lines):
    return header("gradiente") + "\n".join(lines) + "\n"


# --- the command line -------------------------------------------------------------------------------------

def summary(counts, by_kind, total):
    rows = [("programs", total)] + [(kind, counts[kind]) for kind in (SAME, CLEAR, SILENT)]
    width = max(len(r[0]) for r in rows)
    text = "\n".join(f"{name:<{width}}  {n:>6}  {100 * n / max(total, 1):5.1f}%" for name, n in rows)
    if by_kind:
        text += "\n\nline kind where the runs part (disagreements only):\n"
        text += "\n".join(f"  {kind:<20} {n}" for kind, n in by_kind.most_common())
    return text


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--programs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0, help="the first seed; programs take consecutive ones")
    parser.add_argument("--replay", type=int, help="show one seed's program and verdict")
    parser.add_argument("--no-shrink", action="store_true")
    parser.add_argument("--report", action="store_true", help="also print the adversarial suite's table")
    args = parser.parse_args(argv)
    if args.replay is not None:
        program, verdict = check(args.replay)
        print(program.source("gradiente"))
        print(f"# {verdict}")
        return 0
    counts, by_kind, by_known = collections.Counter(), collections.Counter(), collections.Counter()
    unknown_silent = 0
    for seed in range(args.seed, args.seed + args.programs):
        program, verdict = check(seed)
        counts[verdict.kind] += 1
        if verdict.kind != SAME:
            part = program.kinds[verdict.line] if 0 <= verdict.line < len(program.kinds) else "end"
            by_kind[part] += 1
            name = known(program, verdict)
            by_known[name or "not known"] += 1
            if verdict.kind == SILENT and name is None:
                unknown_silent += 1
            lines = program.lines if args.no_shrink else shrink(program, verdict)
            print(f"=== seed {seed}: {verdict}\n{reproducer(program, lines)}", flush=True)
    print(summary(counts, by_kind, args.programs))
    if by_known:
        print("\ndisagreements by known difference (tools/random_programs.py KNOWN):")
        print("\n".join(f"  {name:<28} {n}" for name, n in by_known.most_common()))
    if args.report:
        import adversarial_report
        adversarial_report.main([])
    print(f"\nsilent differences not explained in KNOWN: {unknown_silent}")
    return 1 if unknown_silent else 0


if __name__ == "__main__":
    sys.exit(main())
