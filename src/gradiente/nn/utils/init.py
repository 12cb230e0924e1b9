"""``torch.nn.utils.skip_init``: a module made without running its parameter initialisation."""
import inspect

from ..modules.module import Module

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """``module_cls(*args, **kwargs)``, meant to skip the initialisation of its parameters and buffers (the
    module must accept a ``device`` argument, as PyTorch requires). Intended difference: gradiente has no
    ``meta`` device to build on, so the module is built directly and its initialisation does run; PyTorch
    leaves the values uninitialised memory, so no program can rely on them either way."""
    if not isinstance(module_cls, type) or not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    return module_cls(*args, **kwargs)
