"""MkDocs hook: the API reference, generated from the docstrings at build time.

``public_api()`` lists what the reference documents, page by page: every Tensor method and property, every function
of the ``gradiente`` namespace, the ``autograd`` names, ``viz``/``explain``, and the functions and classes of
``func``, ``nn``, ``optim``, ``utils.data``, ``linalg``, ``special``, ``fft``, ``sparse`` and ``distributions``.
``tests/test_docstrings.py`` uses the same list to count the public names that still lack a docstring.
"""
import importlib
import inspect
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PAGES = {
    "reference/tensor.md": ("Tensor", "Every method and property of `gradiente.Tensor`, in alphabetical order."),
    "reference/functions.md": ("Functions and classes", "The functions and classes of the `gradiente` namespace "
                                                        "(PyTorch's `torch.*`), in alphabetical order."),
    "reference/autograd.md": ("autograd", "`gradiente.autograd`: the backward pass, grad modes, custom functions, "
                                          "and `autograd.functional`."),
    "reference/viz-explain.md": ("viz and explain", "Seeing the graph (`gradiente.viz`) and the chain-rule "
                                                    "walkthrough (`gradiente.explain`)."),
    "reference/func.md": ("func and forward mode", "`gradiente.func` (PyTorch's `torch.func`: `grad`, `vmap`, "
                                                    "`jacrev`, ...) and `gradiente.autograd.forward_ad`."),
    "reference/nn.md": ("nn", "`gradiente.nn`: modules and layers, `nn.functional`, `nn.init` and `nn.utils`."),
    "reference/optim-data.md": ("optim and data", "`gradiente.optim` and its schedulers, `gradiente.utils.data` "
                                                  "and `gradiente.utils.checkpoint`."),
    "reference/math.md": ("linalg, special, fft, sparse", "`gradiente.linalg`, `gradiente.special`, "
                                                          "`gradiente.fft` and `gradiente.sparse`."),
    "reference/distributions.md": ("distributions", "`gradiente.distributions`: distributions, transforms, "
                                                    "constraints and the KL table."),
}

#: the submodules each of the later pages documents, name by name (their ``__all__``, else their public names)
MODULE_PAGES = {
    "reference/func.md": ("func", "autograd.forward_ad"),
    "reference/nn.md": ("nn", "nn.functional", "nn.init", "nn.utils", "nn.utils.rnn", "nn.utils.parametrize",
                        "nn.utils.parametrizations", "nn.utils.stateless"),
    "reference/optim-data.md": ("optim", "optim.lr_scheduler", "optim.swa_utils", "utils.data",
                                "utils.checkpoint"),
    "reference/math.md": ("linalg", "special", "fft", "sparse"),
    "reference/distributions.md": ("distributions", "distributions.transforms", "distributions.constraints",
                                   "distributions.kl"),
}


def module_entries(path):
    """[(qualified name, object)] of a submodule's public functions and classes (``path`` under gradiente)."""
    module = importlib.import_module(f"gradiente.{path}")
    names = getattr(module, "__all__", None) or [name for name in dir(module) if not name.startswith("_")]
    entries = []
    for name in sorted(names):
        value = getattr(module, name, None)
        # classes and functions only: constants and constraint instances document themselves by their repr
        if isinstance(value, type) or inspect.isfunction(value) or inspect.isbuiltin(value):
            entries.append((f"gradiente.{path}.{name}", value))
    return entries


def public_api():
    """{page: [(qualified name, object)]} for every documented public name."""
    if str(ROOT / "src") not in sys.path:
        sys.path.insert(0, str(ROOT / "src"))
    gradiente = importlib.import_module("gradiente")
    # methods and functions are made on their first lookup (tensor_methods.py, gradiente.__getattr__): all of them now
    for name in dir(gradiente.Tensor):
        getattr(gradiente.Tensor, name, None)
    gradiente._make_every_function()
    tensor = [(f"Tensor.{name}", inspect.getattr_static(gradiente.Tensor, name))
              for name in sorted(dir(gradiente.Tensor)) if not name.startswith("_")]
    functions = [(f"gradiente.{name}", value) for name, value in sorted(vars(gradiente).items())
                 if not name.startswith("_") and callable(value) and not isinstance(value, types.ModuleType)]
    autograd = importlib.import_module("gradiente.autograd")
    functional = importlib.import_module("gradiente.autograd.functional")
    grads = [(f"gradiente.autograd.{name}", getattr(autograd, name)) for name in autograd.__all__
             if not isinstance(getattr(autograd, name), types.ModuleType)]
    grads += [(f"gradiente.autograd.functional.{name}", getattr(functional, name)) for name in functional.__all__]
    viz = importlib.import_module("gradiente.viz")
    explain = importlib.import_module("gradiente.explain")
    drawing = [(f"gradiente.viz.{name}", getattr(viz, name)) for name in viz.__all__
               if callable(getattr(viz, name))]
    drawing += [("gradiente.explain", explain.explain), ("gradiente.explain.Explanation", explain.Explanation)]
    api = {"reference/tensor.md": tensor, "reference/functions.md": functions, "reference/autograd.md": grads,
           "reference/viz-explain.md": drawing}
    for page, modules in MODULE_PAGES.items():
        api[page] = [entry for module in modules for entry in module_entries(module)]
    return api


def docstring(value):
    """The object's own docstring (for a property, its getter's), or ''."""
    target = value.fget if isinstance(value, property) else value
    if isinstance(target, (staticmethod, classmethod)):
        target = target.__func__
    # inspect.getdoc also finds a slot's docstring (``Tensor.grad_fn``'s, from its class's ``__slots__`` dict)
    doc = inspect.getdoc(target) if inspect.ismemberdescriptor(target) else getattr(target, "__doc__", None)
    if isinstance(target, type) and doc == type.__doc__:
        return ""
    return inspect.cleandoc(doc) if isinstance(doc, str) and doc.strip() else ""


def missing_docstrings():
    """The public names of ``public_api()`` that have no docstring."""
    return sorted({name for entries in public_api().values() for name, value in entries if not docstring(value)})


def signature(name, value):
    if isinstance(value, property):
        return f"{name}  (property)"
    target = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
    try:
        text = str(inspect.signature(target))
    except (TypeError, ValueError):
        text = "(...)"
    if name.startswith("Tensor.") and text.startswith("(self"):
        text = "(" + text[len("(self"):].lstrip(", ")
    return name + text


def anchor(name):
    return name.replace("gradiente.", "").replace(".", "-").lower() or "top"


def page_markdown(path, entries):
    title, intro = PAGES[path]
    lines = [f"# {title}", "", intro, "",
             "Generated from the docstrings at build time. A name without a docstring says so; "
             "`tests/test_docstrings.py` keeps that list from growing.", ""]
    for name, value in entries:
        lines += [f"### `{name}` {{#{anchor(name)}}}", "", "```python", signature(name, value), "```", ""]
        doc = docstring(value)
        lines += [doc if doc else "*No docstring yet.*", ""]
    return "\n".join(lines)


def index_markdown(api):
    missing = missing_docstrings()
    total = sum(len(entries) for entries in api.values())
    lines = ["# API reference", "",
             "gradiente's API is PyTorch's, name for name: where a page here is short, PyTorch's documentation "
             "of the same name describes the same behaviour. These pages are generated at build time from the "
             "docstrings in `src/`, in English (the course itself is in English and Spanish).", "",
             "| page | names |", "|---|---|"]
    for path, entries in api.items():
        lines.append(f"| [{PAGES[path][0]}]({path.split('/')[1]}) | {len(entries)} |")
    lines += ["", f"{total - len(missing)} of {total} names have a docstring; those without one are listed "
                  "below.", ""]
    lines += [", ".join(f"`{name}`" for name in missing) if missing else "None.", ""]
    return "\n".join(lines)


def on_files(files, config):
    from mkdocs.structure.files import File
    api = public_api()
    for path, entries in api.items():
        files.append(File.generated(config, path, content=page_markdown(path, entries)))
    files.append(File.generated(config, "reference/index.md", content=index_markdown(api)))
    return files
