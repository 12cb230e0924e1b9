"""How fx names things, as PyTorch prints them: the qualified name of a call's target (``torch.relu``,
``torch.nn.functional.relu``, ``operator.add``, ``__main__.my_fn``), a type annotation, and the unique variable
names of a graph's values (``sum_1``: a name never shadows a builtin or a keyword).

gradiente's functions live in modules of their own (``gradiente.ops.arithmetic``), so a function's qualified name is
found where a program reaches it: in the public namespaces ``torch``, ``torch.nn.functional``, ``torch.linalg``,
``torch.special`` and ``torch.fft``, spelled as PyTorch spells that function's home (a few of PyTorch's functions
live in ``torch.functional`` or ``torch._C._nn`` and print so).
"""
import builtins
import importlib
import keyword
import re

__all__ = ["qualified_name", "pretty_print_target", "type_repr", "Namespace", "snake_case"]

#: torch's functions that are Python functions of ``torch.functional`` (PyTorch prints ``torch.functional.split``)
_TORCH_FUNCTIONAL = frozenset({
    "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors", "cartesian_prod",
    "block_diag", "cdist", "chain_matmul", "einsum", "istft", "lu", "norm", "meshgrid", "pca_lowrank", "split",
    "stft", "svd_lowrank", "tensordot", "unique", "unique_consecutive", "unravel_index"})
#: ``torch.nn.functional`` names that are C functions in PyTorch, printed by their C home
_FUNCTIONAL_C_HOMES = {
    "adaptive_avg_pool1d": "torch.adaptive_avg_pool1d", "avg_pool1d": "torch.avg_pool1d",
    "avg_pool2d": "torch._C._nn.avg_pool2d", "avg_pool3d": "torch._C._nn.avg_pool3d", "bilinear": "torch.bilinear",
    "celu_": "torch.celu_", "channel_shuffle": "torch.channel_shuffle", "conv1d": "torch.conv1d",
    "conv2d": "torch.conv2d", "conv3d": "torch.conv3d", "conv_tbc": "torch.conv_tbc",
    "conv_transpose1d": "torch.conv_transpose1d", "conv_transpose2d": "torch.conv_transpose2d",
    "conv_transpose3d": "torch.conv_transpose3d", "cosine_similarity": "torch.cosine_similarity",
    "elu_": "torch._C._nn.elu_", "gelu": "torch._C._nn.gelu", "hardshrink": "torch.hardshrink",
    "hardtanh_": "torch._C._nn.hardtanh_", "leaky_relu_": "torch._C._nn.leaky_relu_", "linear": "torch._C._nn.linear",
    "logsigmoid": "torch._C._nn.log_sigmoid", "one_hot": "torch._C._nn.one_hot",
    "pairwise_distance": "torch.pairwise_distance", "pdist": "torch.pdist", "pixel_shuffle": "torch.pixel_shuffle",
    "pixel_unshuffle": "torch.pixel_unshuffle", "prelu": "torch.prelu", "relu_": "torch.relu_",
    "rrelu_": "torch.rrelu_", "scaled_dot_product_attention": "torch._C._nn.scaled_dot_product_attention",
    "selu_": "torch.selu_", "softplus": "torch._C._nn.softplus", "softshrink": "torch._C._nn.softshrink",
    "threshold": "torch.nn.functional._threshold", "threshold_": "torch.threshold_"}
#: the public namespaces, searched in this order, and how PyTorch prints each
_NAMESPACES = (("gradiente", "torch"), ("gradiente.nn.functional", "torch.nn.functional"),
               ("gradiente.linalg", "torch.linalg"), ("gradiente.special", "torch.special"),
               ("gradiente.fft", "torch.fft"))
_public_names: dict = {}


def public_name(func):
    """``func``'s qualified name as PyTorch prints it, when ``func`` is one of gradiente's public functions; else
    None. (A name found by identity, so an alias, ``torch.arctan`` beside ``torch.atan``, keeps its own name.)"""
    found = _public_names.get(id(func))
    if found is not None and found[0] is func:
        return found[1]
    name = getattr(func, "__name__", None)
    for module_name, printed in _NAMESPACES:
        namespace = importlib.import_module(module_name)
        if name is not None and getattr(namespace, name, None) is func:
            return _remember(func, _printed(printed, name))
    for module_name, printed in _NAMESPACES:
        for key, value in vars(importlib.import_module(module_name)).items():
            if value is func and not key.startswith("__"):
                return _remember(func, _printed(printed, key))
    return _remember(func, None)    # (remembered too: every node made for ``func`` asks again)


def public_short_name(func):
    """The name by which a program reaches ``func`` (``arctan``), or its ``__name__``."""
    qualified = public_name(func)
    return qualified.rsplit(".", 1)[1].lstrip("_") if qualified else func.__name__


def _remember(func, printed):
    _public_names[id(func)] = (func, printed)
    return printed


def _printed(namespace, name):
    if namespace == "torch" and name in _TORCH_FUNCTIONAL:
        return f"torch.functional.{name}"
    if namespace == "torch.nn.functional" and name in _FUNCTIONAL_C_HOMES:
        return _FUNCTIONAL_C_HOMES[name]
    return f"{namespace}.{name}"


def qualified_name(func):
    """The dotted name generated code calls ``func`` by (PyTorch's ``_get_qualified_name``)."""
    name = func.__name__
    if getattr(builtins, name, None) is func:
        return name
    public = public_name(func)
    if public is not None:
        return public
    if name == "<lambda>":
        raise RuntimeError("Unable to represent lambda")
    module = getattr(func, "__module__", None) or ""
    return f"{torch_module_name(module)}.{name}"


def torch_module_name(module):
    """``gradiente.fx.x`` read as ``torch.fx.x``: gradiente's own modules print under PyTorch's name."""
    return "torch" + module[len("gradiente"):] if module == "gradiente" or module.startswith("gradiente.") else module


def is_from_torch(obj):
    """Whether generated code reaches ``obj`` through ``torch`` (PyTorch's ``_is_from_torch``)."""
    if public_name(obj) is not None:
        return True
    module = getattr(obj, "__module__", None) or ""
    return module == "gradiente" or module.startswith("gradiente.")


def pretty_print_target(target):
    """A target as a graph prints it: ``builtins.getattr``, ``operator.add``, else its qualified name."""
    if isinstance(target, str):
        return target
    name = getattr(target, "__name__", None)
    module = getattr(target, "__module__", None)
    if name is not None and module == "builtins":
        return f"builtins.{name}"
    if name is not None and module == "_operator":
        return f"operator.{name}"
    return qualified_name(target)


def type_repr(obj):
    """A type annotation as fx prints it (``torch.Tensor``, ``int``, ``typing.List[int]``)."""
    from ..core.tensor import Tensor
    if obj is Tensor:
        return "torch.Tensor"
    if isinstance(obj, type) and not hasattr(obj, "__origin__"):
        if obj.__module__ == "builtins":
            return obj.__qualname__
        return f"{torch_module_name(obj.__module__)}.{obj.__qualname__}"
    if obj is ...:
        return "..."
    if isinstance(obj, type(type_repr)):
        return obj.__name__
    return repr(obj)


_snake_case_sub = re.compile(r"(?<=[a-z])([A-Z])")


def snake_case(s):
    """``mod.pascalCase`` -> ``mod.pascal_case``: the name a graph gives a target's value."""
    return _snake_case_sub.sub(r"_\1", s).lower()


_illegal_chars = re.compile("[^0-9a-zA-Z_]+")
_name_with_number = re.compile(r"^([a-zA-Z_][0-9a-zA-Z_]*?)(?:_(\d+))?$")
#: names a value may not take: keywords and builtins (a value named ``sum`` would hide ``sum``), and the globals
#: every generated module has
_ILLEGAL = {k: object() for k in keyword.kwlist}
_ILLEGAL.update(builtins.__dict__)
for _name in ("inf", "nan", "NoneType", "torch", "device", "fx_pytree", "pytree"):
    _ILLEGAL[_name] = object()


class Namespace:
    """Unique names for a graph's values and a module's globals: each object one name, each name used once."""

    def __init__(self):
        self._obj_to_name = {}
        self._used_names = set()
        self._base_count = {}

    def create_name(self, candidate, obj):
        """A fresh name like ``candidate`` (``add`` -> ``add_1`` when ``add`` is taken), kept for ``obj``."""
        if obj is not None and obj in self._obj_to_name:
            return self._obj_to_name[obj]
        match = _name_with_number.match(candidate)
        if match is None:
            candidate = _illegal_chars.sub("_", candidate) or "_unnamed"
            if candidate[0].isdigit():
                candidate = f"_{candidate}"
            match = _name_with_number.match(candidate)
        base, num = match.group(1, 2)
        if num is None or candidate in self._used_names:
            num = self._base_count.get(base, 0)
            if _ILLEGAL.get(candidate, obj) is not obj:
                num += 1
                candidate = f"{base}_{num}"
        else:
            num = int(num)
        while candidate in self._used_names:
            num += 1
            candidate = f"{base}_{num}"
        self._used_names.add(candidate)
        self._base_count[base] = num
        if obj is not None:
            self._obj_to_name[obj] = candidate
        return candidate

    def associate_name_with_obj(self, name, obj):
        if self._obj_to_name.setdefault(obj, name) is not name:
            raise AssertionError("obj is already associated")

    def rename_object(self, obj, name):
        self._obj_to_name[obj] = name
        self._used_names.add(name)


class _Homes:
    """``torch.functional`` or ``torch._C._nn`` as generated code reads them: each name printed there (by
    ``_TORCH_FUNCTIONAL`` and ``_FUNCTIONAL_C_HOMES``) resolved to gradiente's function."""

    def __init__(self, prefix, lookup):
        self._prefix = prefix
        self._lookup = lookup

    def __getattr__(self, name):
        value = self._lookup(f"{self._prefix}.{name}")
        if value is None:
            raise AttributeError(f"module '{self._prefix}' has no attribute '{name}'")
        return value


class GeneratedCodeTorch:
    """The ``torch`` that generated code runs with: gradiente, plus the homes PyTorch prints some functions under
    (``torch.functional.split``, ``torch._C._nn.gelu``), which gradiente has no modules for."""

    def __init__(self):
        import gradiente
        self._gradiente = gradiente
        self.functional = _Homes("torch.functional", self._home)
        self._C = _Homes("torch._C", self._home)

    def _home(self, printed):
        import gradiente.nn.functional as F
        if printed == "torch._C._nn":
            return _Homes("torch._C._nn", self._home)
        if printed.startswith("torch.functional."):
            return getattr(self._gradiente, printed.rsplit(".", 1)[1], None)
        for name, home in _FUNCTIONAL_C_HOMES.items():
            if home == printed:
                return getattr(F, name)
        return None

    def __getattr__(self, name):
        return getattr(self._gradiente, name)
