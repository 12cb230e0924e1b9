"""Modules whose attributes are settings, typed as PyTorch types them.

PyTorch's ``torch.backends.cudnn`` and its kin are modules whose attributes call a C++ setter, which refuses a
value of the wrong type (``cudnn.benchmark = 1`` raises ``RuntimeError: set_benchmark_cudnn expects a bool, but
got int``). A module here lists its settings in ``_SETTERS`` ({attribute: the name of PyTorch's setter}) and
calls ``typed_settings(__name__)``; plain assignment then checks the type the same way.
"""
import contextlib
import sys
import types


class _TypedSettingsModule(types.ModuleType):
    def __setattr__(self, name, value):
        setter = self.__dict__.get("_SETTERS", {}).get(name)
        if setter is not None and not isinstance(value, bool):
            raise RuntimeError(f"{setter} expects a bool, but got {type(value).__name__}")
        super().__setattr__(name, value)


def typed_settings(module_name):
    """Make the module ``module_name`` check its settings when they are assigned (Python lets a module's class
    be replaced by a subclass of ModuleType for exactly this)."""
    sys.modules[module_name].__class__ = _TypedSettingsModule


@contextlib.contextmanager
def settings_for_block(module_name, **values):
    """Set the module's settings to ``values`` for a ``with`` block, and restore them after it (the ``flags``
    context managers of ``torch.backends.cudnn`` and ``mkldnn``)."""
    module = sys.modules[module_name]
    saved = {name: getattr(module, name) for name in values}
    for name, value in values.items():
        setattr(module, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(module, name, value)
