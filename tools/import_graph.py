"""The import graph of the ``gradiente`` package, read from its source (nothing is imported).

    python tools/import_graph.py            # the largest import cycle, and every upward import
    python tools/import_graph.py --cycles   # every cycle (strongly connected component) of two or more modules

An edge ``a -> b`` means module ``a`` imports module ``b``, at module level or inside a function. For cycles,
imports of a package's ``__init__`` are left out: a package re-exports what its modules define, so
``from .. import nn`` says where a name is published, not which code depends on which. For floors they count.

The floors (``FLOORS``, lowest first) are the architecture of docs/architecture.md: a module may import only
from its own floor or those below. ``tests/test_architecture.py`` fails on an upward import and on a cycle
larger than ``MAX_CYCLE``.
"""
import argparse
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "src"
PACKAGE = "gradiente"

#: (floor, the module-name prefixes on it), lowest first; every module not named is on the top floor, "api"
FLOORS = (
    ("core", ("gradiente.core",)),      # Tensor data model, dtypes, graph nodes, grad modes, record, engine, rules
    ("ops", ("gradiente.ops",)),        # every differentiable primitive, nn's included
    ("api", ("gradiente",)),            # Tensor methods, torch-level functions, autograd, nn, optim, data, ...
)
MAX_CYCLE = 10


def floor_of(module):
    """The index in ``FLOORS`` of the floor ``module`` stands on."""
    for level, (_, prefixes) in enumerate(FLOORS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return level
    return len(FLOORS) - 1


def upward_imports(graph):
    """``(importer, imported, line)`` for every import of a module on a higher floor than the importer's."""
    return [(a, b, line) for a, edges in graph.items() for b, (line, _) in edges.items()
            if floor_of(b) > floor_of(a)]


def module_files(root=ROOT, package=PACKAGE):
    """``{module name: path}`` for every module of the package (packages as ``pkg.__init__``'s name ``pkg``)."""
    files = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        files[".".join(parts)] = path
    return files


def _resolve(importer, is_package, level, target):
    """The absolute name of a relative import ``from <level dots><target> import ...`` inside ``importer``."""
    if level == 0:
        return target
    base = importer.split(".")
    if not is_package:
        base = base[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def imports_of(name, path, modules):
    """The modules of the package that module ``name`` imports: list of ``(module, line, at_top_level)``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    is_package = path.name == "__init__.py"
    top_level = {id(node) for node in tree.body}
    for node in tree.body:                      # imports in a module-level `if`/`try` count as top-level too
        if isinstance(node, (ast.If, ast.Try)):
            top_level.update(id(n) for n in ast.walk(node))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(name, is_package, node.level, node.module or "")
            # `from pkg import mod` imports the module pkg.mod when there is one; otherwise a name of pkg
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules:     # `import a.b.c` where c is a name: the module a.b
                target = target.rpartition(".")[0]
            if target and target != name:
                found.append((target, node.lineno, id(node) in top_level))
    return found


def import_graph(include_package_inits=False):
    """``{module: {imported module: (line, at_top_level)}}`` for the package."""
    files = module_files()
    packages = {name for name, path in files.items() if path.name == "__init__.py"}
    graph = {}
    for name, path in files.items():
        edges = {}
        for target, line, top in imports_of(name, path, files):
            if target in packages and not include_package_inits:
                continue
            edges.setdefault(target, (line, top))
        graph[name] = edges
    return graph


def strongly_connected(graph):
    """Tarjan's components, computed without recursion; each as a sorted list, largest first."""
    index, low, on_stack, stack, components = {}, {}, set(), [], []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))
    return sorted(components, key=len, reverse=True)


def cycles(graph):
    return [c for c in strongly_connected(graph) if len(c) > 1]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", action="store_true", help="list every cycle, not only the largest")
    args = parser.parse_args(argv)
    upward = upward_imports(import_graph(include_package_inits=True))
    graph = import_graph()
    found = cycles(graph)
    largest = len(found[0]) if found else 1
    print(f"modules: {len(graph)}; import cycles: {len(found)}; largest: {largest} modules")
    for component in found if args.cycles else found[:1]:
        print(f"  cycle of {len(component)}: " + ", ".join(component))
    inner = sum(1 for edges in graph.values() for _, top in edges.values() if not top)
    print(f"imports inside functions: {inner}")
    print(f"upward imports: {len(upward)}")
    for importer, imported, line in upward:
        print(f"  {importer}:{line} imports {imported} ({FLOORS[floor_of(importer)][0]} -> "
              f"{FLOORS[floor_of(imported)][0]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
