"""Changing the memory layout of every convolution weight in a model (``channels_last`` and back), as
``torch.nn.utils.memory_format``: the same Parameter objects, the same values, the strides of the format.
"""
from ..modules.conv import Conv2d, Conv3d, ConvTranspose2d

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, kinds, memory_format):
    if isinstance(module, kinds):
        weight_data = module.weight.detach().clone(memory_format=memory_format)
        module.weight.data = weight_data.resize_(weight_data.size(), memory_format=memory_format)
    for child in module.children():
        _convert(child, kinds, memory_format)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """Give the weight of every ``Conv2d``/``ConvTranspose2d`` in ``module`` (recursively) the layout
    ``memory_format`` (e.g. ``torch.channels_last``), in place; the values do not change. Returns ``module``."""
    return _convert(module, (Conv2d, ConvTranspose2d), memory_format)


def convert_conv3d_weight_memory_format(module, memory_format):
    """As ``convert_conv2d_weight_memory_format`` for ``Conv3d`` weights (``torch.channels_last_3d``).
    (gradiente has no ``ConvTranspose3d`` yet.)"""
    return _convert(module, (Conv3d,), memory_format)
