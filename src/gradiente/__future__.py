"""``torch.__future__``: the switches for behaviour PyTorch means to make the default one day.

Both concern what converting a module (``module.to(...)``, ``module.double()``, ``module.to_empty(...)``) does to its
parameters, and the second also what ``load_state_dict`` does (``nn/modules/module.py`` reads them):

- *overwrite*: give the module new Parameter objects, instead of changing the existing ones' data in place;
- *swap*: keep the Parameter objects but swap their whole contents with the converted tensors
  (``torch.utils.swap_tensors``), so that a reference held elsewhere (an optimizer's) sees the new dtype. It takes
  precedence over *overwrite*.
"""

__all__ = ["set_overwrite_module_params_on_conversion", "get_overwrite_module_params_on_conversion",
           "set_swap_module_params_on_conversion", "get_swap_module_params_on_conversion"]

_switches = {"overwrite": False, "swap": False}


def set_overwrite_module_params_on_conversion(value):
    """Whether converting a module assigns new Parameter objects (True) or changes the existing ones in place."""
    _switches["overwrite"] = value


def get_overwrite_module_params_on_conversion():
    """See ``set_overwrite_module_params_on_conversion``; False unless set."""
    return _switches["overwrite"]


def set_swap_module_params_on_conversion(value):
    """Whether converting a module, or loading a state dict into it, swaps each parameter's contents with
    ``torch.utils.swap_tensors`` (True) instead of setting its ``.data`` or copying into it."""
    _switches["swap"] = value


def get_swap_module_params_on_conversion():
    """See ``set_swap_module_params_on_conversion``; False unless set."""
    return _switches["swap"]
