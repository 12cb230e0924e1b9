"""The op kinds of the random-program tester (``tools/random_programs.py``), one small generator each.

A generator reads the program so far through a ``Scope`` (the variables' shapes and dtypes, taken from the
PyTorch run that builds the program) and returns one line of Python source that uses ``torch`` and ``F``
only, such as ``v7 = v3.softmax(-1)``. Because every choice is written into the source as a literal, the same
line means the same thing in both libraries, and a failing program is its own reproducer.

A generator returns ``None`` when the op does not apply to what it picked (a convolution of a 1-d tensor);
the builder then tries another. Lines whose op raises in PyTorch are kept now and then on purpose: the two
libraries must raise alike.
"""
import numpy as np

#: name -> generator(scope) -> expression (assigned to the new variable) or a statement that assigns ``{out}``
OPS = {}


def op(*names):
    def register(generator):
        for name in names or (generator.__name__,):
            OPS[name] = generator
        return generator
    return register


class Scope:
    """What the builder knows while it writes a program: the variables so far and a random source."""

    def __init__(self, rng, namespace, leaves):
        self.rng, self.namespace, self.leaves = rng, namespace, leaves
        self.op_name = None

    def tensors(self, floating=True):
        """Names of the tensors so far (the floating-point ones by default), oldest first."""
        names = []
        for name, value in self.namespace.items():
            is_tensor = name[:1] in "vx" and name[1:].isdigit() and hasattr(value, "dtype")
            if is_tensor and (not floating or value.dtype.is_floating_point):
                names.append(name)
        return names

    def pick(self, floating=True, min_dim=0, max_dim=9):
        """A variable, recent ones more often (programs read as chains, with branches)."""
        names = [n for n in self.tensors(floating) if min_dim <= self.ndim(n) <= max_dim]
        if not names:
            return None
        k = min(int(self.rng.expovariate(0.5)), len(names) - 1)
        return names[-1 - k]

    def partner(self, x):
        """Another floating-point variable whose shape broadcasts with ``x``'s, or ``x`` itself."""
        shape = self.shape(x)
        names = [n for n in self.tensors() if _broadcasts(shape, self.shape(n))]
        return self.rng.choice(names) if names else x

    def shape(self, name):
        return tuple(self.namespace[name].shape)

    def ndim(self, name):
        return len(self.shape(name))

    def dtype(self, name):
        return str(self.namespace[name].dtype).replace("torch.", "")

    def dim(self, name):
        """A valid dim of ``name``, negative or not (0-d tensors accept 0 and -1)."""
        nd = self.ndim(name)
        return self.rng.choice([0, -1]) if nd == 0 else self.rng.randrange(-nd, nd)

    def size(self, name, d):
        shape = self.shape(name)
        return shape[d] if shape else 1

    def chance(self, p):
        return self.rng.random() < p

    def constant(self, shape, dtype):
        """Source for a fixed tensor of ``shape``: a seeded normal sample (``R`` is in every namespace)."""
        return f"torch.from_numpy(R({self.rng.randrange(10**6)}, {tuple(shape)}, '{dtype}'))"

    def index_tensor(self, high, count):
        return f"torch.tensor({[self.rng.randrange(high) for _ in range(count)]})"


def _broadcasts(a, b):
    try:
        np.broadcast_shapes(a, b)
        return True
    except ValueError:
        return False


# --- elementwise: one input ---------------------------------------------------------------------------------
UNARY = ["exp", "sin", "cos", "tanh", "sigmoid", "relu", "abs", "neg", "square", "exp2", "expm1", "atan",
         "asinh", "sinh", "cosh", "erf", "erfc", "floor", "ceil", "round", "trunc", "sign", "frac", "sgn", "sinc",
         "deg2rad", "rad2deg", "reciprocal", "rsqrt", "positive", "logit"]
#: ops defined on part of the line: the input is first brought into the domain, as a user would
DOMAIN = {"log": "abs().add(0.1).log()", "sqrt": "abs().sqrt()", "log1p": "abs().log1p()", "log2": "abs().log2()",
          "log10": "abs().add(1).log10()", "asin": "clamp(-0.9, 0.9).asin()", "acos": "tanh().acos()",
          "atanh": "clamp(-0.9, 0.9).atanh()", "erfinv": "clamp(-0.9, 0.9).erfinv()", "tan": "clamp(-1, 1).tan()",
          "lgamma": "abs().add(0.5).lgamma()", "digamma": "abs().add(0.5).digamma()", "acosh": "abs().add(1.5).acosh()",
          "nan_to_num": "log().nan_to_num(1.0, 2.0, -2.0)", "pow_scalar": "pow(2)", "pow_half": "abs().pow(0.5)",
          "mul_scalar": "mul(2.5)", "rsub": "__rsub__(1.0)", "rdiv": "abs().add(0.5).__rtruediv__(2.0)",
          "clamp": "clamp(-0.5, 0.7)", "clamp_min": "clamp(min=0.1)", "float_power": "abs().float_power(2)"}


def _unary(name):
    return lambda s: f"{s.pick()}.{name}()"


for _name in UNARY:
    OPS[_name] = _unary(_name)
def _in_domain(tail):
    return lambda s: f"{s.pick()}.{tail}"


for _name, _tail in DOMAIN.items():
    OPS[_name] = _in_domain(_tail)


# --- elementwise: two inputs, broadcasting ------------------------------------------------------------------
BINARY = {"add": "{x} + {y}", "sub": "{x} - {y}", "mul": "{x} * {y}", "div": "{x} / ({y}.abs() + 0.5)",
          "pow": "({x}.abs() + 0.1) ** {y}", "maximum": "torch.maximum({x}, {y})",
          "minimum": "torch.minimum({x}, {y})", "atan2": "torch.atan2({x}, {y})",
          "remainder": "torch.remainder({x}, {y})", "fmod": "torch.fmod({x}, {y})",
          "lerp": "torch.lerp({x}, {y}, 0.3)", "lerp_tensor": "torch.lerp({x}, {y}, {y}.sigmoid())",
          "where": "torch.where({x} > 0, {x}, {y})", "hypot": "torch.hypot({x}, {y})",
          "copysign": "torch.copysign({x}, {y})", "xlogy": "torch.xlogy({x}, {y}.abs())",
          "fmax": "torch.fmax({x}, {y})", "fmin": "torch.fmin({x}, {y})",
          "addcmul": "torch.addcmul({x}, {y}, {x}, value=0.5)", "addcdiv": "torch.addcdiv({x}, {y}, {x}.exp())",
          "clamp_tensor": "{x}.clamp(min={y})", "add_alpha": "torch.add({x}, {y}, alpha=-2)",
          "true_divide": "torch.true_divide({x}, {y}.exp())", "masked_fill": "{x}.masked_fill({y} > 0, 0.5)",
          "dist": "torch.dist({x}, {y})", "eq_where": "torch.where({x} == {y}, {y}, {x} * 2)",
          "logaddexp": "torch.logaddexp({x}, {y})", "mse": "F.mse_loss({x}, {y})",
          "sq_diff": "({x} - {y}).pow(2).mean()", "gt": "({x} > {y})", "smooth_l1": "F.smooth_l1_loss({x}, {y})",
          "l1": "F.l1_loss({x}, {y}, reduction='sum')"}


def _binary(template):
    def generate(s):
        x = s.pick()
        if x is None:
            return None
        return template.format(x=x, y=s.partner(x))
    return generate


for _name, _template in BINARY.items():
    OPS[_name] = _binary(_template)


# --- reductions and scans -----------------------------------------------------------------------------------
REDUCE = {"sum_dim": "sum({d})", "sum": "sum()", "mean": "mean({d}, keepdim=True)", "prod": "prod({d})",
          "amax": "amax({d})", "amin": "amin({d})", "max_dim": "max({d}).values", "min_dim": "min({d})[0]",
          "max": "max()", "logsumexp": "logsumexp({d})", "std": "std({d})", "var": "var({d}, correction=0)",
          "norm": "norm()", "norm_p1": "norm(p=1, dim={d})", "cumsum": "cumsum({d})", "cumprod": "cumprod({d})",
          "cummax": "cummax({d}).values", "softmax": "softmax({d})", "log_softmax": "log_softmax({d})",
          "median": "median({d}).values", "sort": "sort({d}).values", "argmax": "argmax({d})",
          "nansum": "nansum({d})",
          "mean_all": "mean()", "topk": "topk(1, {d}).values", "kthvalue": "kthvalue(1, {d}).values",
          "all_close": "isclose({x2}).all()"}


def _reduce(template):
    def generate(s):
        x = s.pick()
        return None if x is None else f"{x}." + template.format(d=s.dim(x), x2=x)
    return generate


for _name, _template in REDUCE.items():
    OPS[_name] = _reduce(_template)


# --- views, indexing and joining ----------------------------------------------------------------------------
@op()
def transpose(s):
    x = s.pick(min_dim=2)
    return x and f"{x}.transpose({s.dim(x)}, {s.dim(x)})"


@op()
def mT(s):
    x = s.pick(min_dim=2)
    return x and f"{x}.mT"


@op()
def t(s):
    x = s.pick(max_dim=2)
    return x and f"{x}.t()"


@op()
def permute(s):
    x = s.pick()
    order = list(range(s.ndim(x)))
    s.rng.shuffle(order)
    return f"{x}.permute({', '.join(map(str, order))})" if order else None


@op("reshape", "view")
def reshape(s):
    x = s.pick()
    n = int(np.prod(s.shape(x)))
    shape = s.rng.choice([(-1,), (1, -1), (-1, 1)] + ([(2, -1)] if n % 2 == 0 else []))
    how = s.op_name
    return f"{x}.{how}{shape}"


@op()
def flatten(s):
    return f"{s.pick()}.flatten()"


@op()
def unsqueeze(s):
    x = s.pick(max_dim=2)
    return x and f"{x}.unsqueeze({s.rng.randrange(-s.ndim(x) - 1, s.ndim(x) + 1)})"


@op()
def squeeze(s):
    return f"{s.pick()}.squeeze()"


@op()
def expand(s):
    x = s.pick(max_dim=2)
    return x and f"{x}.expand(2, *{s.shape(x)})"


@op("slice_step", "slice_start", "select", "narrow", "diagonal", "unbind", "split", "chunk", "movedim", "unfold")
def slicing(s):
    x = s.pick(min_dim=1)
    if x is None:
        return None
    d = s.dim(x)
    n = s.size(x, d)
    return {"slice_step": f"{x}[..., ::2]", "slice_start": f"{x}[1:]",
            "select": n and f"{x}.select({d}, {s.rng.randrange(n)})",
            "narrow": n and f"{x}.narrow({d}, 0, {max(1, n // 2)})",
            "diagonal": s.ndim(x) >= 2 and f"{x}.diagonal()", "unbind": n and f"{x}.unbind({d})[-1]",
            "split": f"{x}.split(1, {d})[0]", "chunk": f"{x}.chunk(2, {d})[-1]",
            "movedim": f"{x}.movedim({d}, 0)", "unfold": n and f"{x}.unfold({d}, {min(n, 2)}, 1)"}[s.op_name] or None


@op("index_int", "index_tensor", "index_bool", "index_select", "gather", "take", "masked_select")
def indexing(s):
    x = s.pick(min_dim=1)
    if x is None:
        return None
    d, shape = s.dim(x), s.shape(x)
    n = shape[d]
    if n == 0:
        return None
    idx = s.index_tensor(n, s.rng.randrange(1, 4))
    if s.op_name == "gather":
        index_shape = list(shape)
        index_shape[d] = 2
        values = s.rng.choices(range(n), k=int(np.prod(index_shape)))
        return f"{x}.gather({d}, torch.tensor({values}).reshape({tuple(index_shape)}))"
    return {"index_int": f"{x}[{s.rng.randrange(n) if d == 0 else 0}]", "index_tensor": f"{x}[{idx}]",
            "index_bool": f"{x}[{x} > 0]", "index_select": f"{x}.index_select({d}, {idx})",
            "take": f"{x}.take({s.index_tensor(max(1, int(np.prod(shape))), 3)})",
            "masked_select": f"{x}.masked_select({x} < 0.5)"}[s.op_name]


@op("flip", "roll", "tril", "triu", "repeat", "tile", "contiguous", "clone", "detach", "cat", "stack")
def rearranging(s):
    x = s.pick()
    d = s.dim(x)
    two_d = s.ndim(x) >= 2
    same = [n for n in s.tensors() if s.shape(n) == s.shape(x)]
    y = s.rng.choice(same)
    return {"flip": f"{x}.flip({d})", "roll": f"{x}.roll(1, {d})", "tril": two_d and f"{x}.tril()",
            "triu": two_d and f"{x}.triu(1)", "repeat": f"{x}.repeat({', '.join(['2'] + ['1'] * s.ndim(x))})",
            "tile": f"{x}.tile((2,))", "contiguous": f"{x}.contiguous()", "clone": f"{x}.clone()",
            "detach": f"{x}.detach()", "cat": s.ndim(x) and f"torch.cat([{x}, {y}], {d})",
            "stack": f"torch.stack([{x}, {y}], {s.rng.randrange(s.ndim(x) + 1)})"}[s.op_name] or None


# --- in-place ops on intermediates (leaves that require grad are refused by both) ----------------------------
INPLACE = {"add_": "add_(1.5)", "mul_": "mul_({y})", "clamp_": "clamp_(-1, 1)", "relu_": "relu_()",
           "sigmoid_": "sigmoid_()", "exp_": "exp_()", "zero_": "zero_()", "fill_": "fill_(0.5)",
           "copy_": "copy_({y})", "div_": "div_(2)", "sub_": "sub_({y}, alpha=0.5)", "neg_": "neg_()",
           "addcmul_": "addcmul_({y}, {y})", "tanh_": "tanh_()", "masked_fill_": "masked_fill_({x} > 0, 0.0)",
           "sin_": "sin_()", "pow_": "pow_(2)", "abs_": "abs_()", "lerp_": "lerp_({y}, 0.5)"}


def _inplace(template):
    def generate(s):
        x = s.pick()
        if x is None:
            return None
        y = s.partner(x)
        if not _broadcasts_to(s.shape(y), s.shape(x)):
            y = "1.5"
        target = s.rng.choice([x, x, f"{x}[0]" if s.ndim(x) else x, f"{x}[..., ::2]" if s.ndim(x) else x])
        return f"{target}.{template.format(x=target, y=y)}; {{out}} = {x}"
    return generate


def _broadcasts_to(shape, target):
    try:
        return np.broadcast_shapes(shape, target) == tuple(target)
    except ValueError:
        return False


for _name, _template in INPLACE.items():
    OPS[_name] = _inplace(_template)


@op("setitem", "setitem_view", "select_add_")
def setitem(s):
    x = s.pick(min_dim=1)
    y = s.pick()
    if x is None:
        return None
    where = {"setitem": "[0]", "setitem_view": "[..., 0]", "select_add_": ".select(0, 0)"}[s.op_name]
    if s.op_name == "select_add_":
        return f"{x}.select(0, 0).add_({y}.sum()); {{out}} = {x}"
    return f"{x}{where} = {y}.sum(); {{out}} = {x}"


@op("index_add_", "index_fill_", "index_copy_", "scatter_", "scatter_add_", "index_put_")
def scattering(s):
    x = s.pick(min_dim=1)
    if x is None:
        return None
    n = s.shape(x)[0]
    if n == 0:
        return None
    source_shape = (2,) + s.shape(x)[1:]
    src = s.constant(source_shape, s.dtype(x))
    idx = s.index_tensor(n, 2)
    if s.op_name == "index_add_":
        return f"{x}.index_add_(0, {idx}, {src}); {{out}} = {x}"
    if s.op_name == "index_fill_":
        return f"{x}.index_fill_(0, {idx}, -1.0); {{out}} = {x}"
    if s.op_name == "index_copy_":
        return f"{x}.index_copy_(0, torch.tensor([0, {n - 1}]), {src}); {{out}} = {x}"
    if s.op_name == "index_put_":
        return f"{x}.index_put_(({idx},), {src}, accumulate=True); {{out}} = {x}"
    index = f"torch.zeros({source_shape}, dtype=torch.long)"
    return f"{x}.{s.op_name}(0, {index}, {src}); {{out}} = {x}"


# --- casts --------------------------------------------------------------------------------------------------
CASTS = {"double": "double()", "float": "float()", "to64": "to(torch.float64)", "to32": "to(torch.float32)",
         "long": "long()", "bool": "bool()", "half_round_trip": "half().float()", "type_as": "type_as({y})",
         "int_to_float": "long().float()"}


def _cast(template):
    def generate(s):
        x = s.pick(floating=s.chance(0.7))
        return x and f"{x}." + template.format(y=s.pick())
    return generate


for _name, _template in CASTS.items():
    OPS[_name] = _cast(_template)


# --- products -----------------------------------------------------------------------------------------------
@op("matmul_self", "matmul_other", "einsum_outer", "einsum_contract", "outer", "dot", "bmm", "mv", "tensordot")
def products(s):
    x = s.pick(min_dim=1)
    if x is None:
        return None
    shape, nd = s.shape(x), s.ndim(x)
    if s.op_name == "matmul_self":
        return f"{x} @ {x}.mT" if nd >= 2 else f"{x} @ {x}"
    if s.op_name == "matmul_other":
        k = shape[-1]
        return f"{x} @ {s.constant((k, 2), s.dtype(x))}"
    if s.op_name == "einsum_outer":
        return f"torch.einsum('...i,...j->...ij', {x}, {x})"
    if s.op_name == "einsum_contract":
        y = s.pick(min_dim=1)
        if y is None or s.shape(y)[-1] != shape[-1]:
            return f"torch.einsum('...i,...i->...', {x}, {x})"
        return f"torch.einsum('...i,j->...j', {x}, {y}.flatten())" if s.ndim(y) == 1 else None
    if nd != 1 and s.op_name in ("outer", "dot", "mv"):
        x = f"{x}.flatten()"
    if s.op_name == "outer":
        return f"torch.outer({x}, {x})"
    if s.op_name == "dot":
        return f"torch.dot({x}, {x})"
    if s.op_name == "mv":
        return f"torch.mv({x}.unsqueeze(0).expand(3, -1), {x})"
    if s.op_name == "bmm":
        return (nd == 3 and f"torch.bmm({x}, {x}.mT)") or None
    return f"torch.tensordot({x}, {x}, dims=1)" if nd >= 1 else None


# --- nn.functional ------------------------------------------------------------------------------------------
ACTIVATIONS = {"gelu": "F.gelu({x})", "gelu_tanh": "F.gelu({x}, approximate='tanh')", "silu": "F.silu({x})",
               "elu": "F.elu({x})", "leaky_relu": "F.leaky_relu({x}, 0.1)", "softplus": "F.softplus({x})",
               "logsigmoid": "F.logsigmoid({x})", "hardtanh": "F.hardtanh({x})", "mish": "F.mish({x})",
               "dropout0": "F.dropout({x}, p=0.0)", "dropout_eval": "F.dropout({x}, p=0.5, training=False)",
               "F_relu": "F.relu({x})", "F_softmax": "F.softmax({x}, dim={d})", "hardswish": "F.hardswish({x})",
               "normalize": "F.normalize({x}, dim={d})", "softsign": "F.softsign({x})", "celu": "F.celu({x})",
               "selu": "F.selu({x})", "relu6": "F.relu6({x})", "softshrink": "F.softshrink({x})",
               "tanhshrink": "F.tanhshrink({x})", "F_log_softmax": "F.log_softmax({x}, dim={d})",
               "var_mean": "torch.var_mean({x}, {d})[0]", "std_mean": "torch.std_mean({x}, {d})[1]"}


def _activation(template):
    def generate(s):
        x = s.pick()
        return x and template.format(x=x, d=s.dim(x))
    return generate


for _name, _template in ACTIVATIONS.items():
    OPS[_name] = _activation(_template)


@op("layer_norm", "layer_norm_affine", "group_norm", "batch_norm", "instance_norm", "conv1d", "linear",
    "cross_entropy", "nll_loss", "bce_logits", "avg_pool1d", "max_pool1d", "embedding", "pad", "glu",
    "cosine_similarity", "kl_div")
def functional(s):
    x = s.pick(min_dim=1)
    if x is None:
        return None
    shape, dtype, name = s.shape(x), s.dtype(x), s.op_name
    last = shape[-1]
    if name == "layer_norm":
        return f"F.layer_norm({x}, {shape[-1:]})"
    if name == "layer_norm_affine":
        weight = s.pick(max_dim=1)
        if weight is None or s.shape(weight) not in ((last,),):
            weight = s.constant((last,), dtype)
        return f"F.layer_norm({x}, {shape[-1:]}, {weight}, {s.constant((last,), dtype)})"
    if name in ("group_norm", "batch_norm", "instance_norm", "conv1d", "avg_pool1d", "max_pool1d"):
        x3 = x if len(shape) == 3 else f"{x}.reshape(1, 1, -1)"
        shape3 = shape if len(shape) == 3 else (1, 1, int(np.prod(shape)))
        channels, length = shape3[1], shape3[2]
        if name == "group_norm":
            return f"F.group_norm({x3}, 1)"
        if name == "batch_norm":
            return f"F.batch_norm({x3}, None, None, training=True)"
        if name == "instance_norm":
            return f"F.instance_norm({x3})"
        if length < 2:
            return None
        if name == "conv1d":
            weight = s.constant((2, channels, 2), dtype)
            return f"F.conv1d({x3}, {weight}, padding={s.rng.randrange(2)}, stride={s.rng.randrange(1, 3)})"
        return f"F.{name}({x3}, 2)"
    if name == "linear":
        return f"F.linear({x}, {s.constant((3, last), dtype)}, {s.constant((3,), dtype)})"
    if name in ("cross_entropy", "nll_loss"):
        if len(shape) != 2 or shape[0] == 0 or last == 0:
            return None
        target = s.index_tensor(last, shape[0])
        if name == "nll_loss":
            return f"F.nll_loss({x}.log_softmax(1), {target})"
        return f"F.cross_entropy({x}, {target}, label_smoothing={s.rng.choice([0.0, 0.1])})"
    if name == "bce_logits":
        return f"F.binary_cross_entropy_with_logits({x}, {s.partner(x)}.sigmoid())"
    if name == "embedding":
        return (len(shape) == 2 and shape[0] > 0 and f"F.embedding({s.index_tensor(shape[0], 3)}, {x})") or None
    if name == "pad":
        return f"F.pad({x}, (1, 2))"
    if name == "glu":
        return (last % 2 == 0 and last > 0 and f"F.glu({x})") or None
    if name == "cosine_similarity":
        return f"F.cosine_similarity({x}, {s.partner(x)}, dim=-1)"
    return f"F.kl_div({x}.log_softmax(-1), {s.partner(x)}.softmax(-1), reduction='batchmean')"
