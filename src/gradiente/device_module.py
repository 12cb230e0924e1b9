"""``torch.get_device_module``: the module of a device type (``torch.cpu`` for ``"cpu"``, ``torch.cuda`` ...)."""
import importlib

from .core.tensor import device as _device

__all__ = ["get_device_module"]


def get_device_module(device=None):
    """The ``gradiente.<type>`` module of ``device`` (a ``device``, a string such as ``"cuda:0"``, or None for
    the current accelerator, which is always the CPU here: ``gradiente.cpu``). gradiente's ``cuda`` and ``mps``
    modules exist and say that no such device is available."""
    if isinstance(device, _device):
        name = device.type
    elif isinstance(device, str):
        name = _device(device).type
    elif device is None:
        name = "cpu"
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or None")
    package = importlib.import_module("gradiente")
    module = getattr(package, name, None)
    if module is None:
        raise RuntimeError(f"Device '{name}' does not have a corresponding module registered as 'torch.{name}'.")
    return module
