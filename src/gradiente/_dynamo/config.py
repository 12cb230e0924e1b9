"""``torch._dynamo.config``: the compiler's switches, with PyTorch 2.13's defaults.

Scripts set these before calling ``torch.compile`` (``suppress_errors = True`` is the common one). gradiente keeps
the values, so a script reads back what it set, and, like PyTorch, refuses a name that is not a switch: a typo
in a flag's name fails loudly on both.
"""
import sys
import types

_DEFAULTS = {
    "suppress_errors": False, "verbose": False, "cache_size_limit": 8, "recompile_limit": 8,
    "accumulated_cache_size_limit": 256, "accumulated_recompile_limit": 256, "capture_scalar_outputs": False,
    "capture_dynamic_output_shape_ops": False, "optimize_ddp": True, "automatic_dynamic_shapes": True,
    "assume_static_by_default": True, "specialize_int": False, "dynamic_shapes": True, "guard_nn_modules": True,
    "error_on_recompile": False, "inline_inbuilt_nn_modules": True, "force_parameter_static_shapes": True,
    "allow_unspec_int_on_nn_module": False, "skip_nnmodule_hook_guards": True, "compiled_autograd": False,
}


class _ConfigModule(types.ModuleType):
    """A module whose attributes are exactly the known switches."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(f"torch._dynamo.config.{name} does not exist")

    def __setattr__(self, name, value):
        if not name.startswith("__") and name not in _DEFAULTS:
            raise AttributeError(f"torch._dynamo.config.{name} does not exist")
        super().__setattr__(name, value)


for _name, _value in _DEFAULTS.items():
    globals()[_name] = _value
sys.modules[__name__].__class__ = _ConfigModule
