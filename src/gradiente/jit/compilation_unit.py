"""``CompilationUnit``: TorchScript source given as a string, whose functions are then called by name. TorchScript is
a subset of Python, so gradiente runs the source as Python, with ``torch`` bound to gradiente and the typing names
TorchScript code uses (``List``, ``Dict``, ``Tuple``, ``Optional``) in scope."""
import typing

__all__ = ["CompilationUnit"]


class CompilationUnit:
    """``CompilationUnit(source)``; ``cu.name(...)`` calls the function ``name`` the source defines."""

    def __init__(self, lang=None, _frames_up=0):
        self._functions = {}
        if lang is not None:
            self.define(lang)

    def define(self, src, rcb=None, _frames_up=0):
        """Runs ``src`` and keeps the functions it defines."""
        import gradiente
        scope = {"torch": gradiente, "Tensor": gradiente.Tensor, "List": list, "Dict": dict,
                 "Tuple": tuple, "Optional": typing.Optional, "Any": typing.Any}
        exec(compile(src, "<CompilationUnit>", "exec"), scope)
        self._functions.update({name: value for name, value in scope.items()
                                if callable(value) and getattr(value, "__module__", None) is None
                                and getattr(value, "__code__", None) is not None
                                and value.__code__.co_filename == "<CompilationUnit>"})

    def find_function(self, name):
        """The function ``name``, or None."""
        return self._functions.get(name)

    def get_functions(self):
        return list(self._functions.values())

    def __getattr__(self, name):
        functions = self.__dict__.get("_functions", {})
        if name in functions:
            return functions[name]
        raise AttributeError(f"'CompilationUnit' object has no attribute '{name}'")
