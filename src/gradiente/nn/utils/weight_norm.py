"""The older, hook-based weight normalisation (``torch.nn.utils.weight_norm``): ``weight`` is replaced by the
parameters ``weight_g`` (magnitude) and ``weight_v`` (direction), and a forward pre-hook recomputes
``weight = v · g / ‖v‖`` before each call. Deprecated in PyTorch in favour of
``nn.utils.parametrizations.weight_norm``, and warns as it does."""
import warnings

from ...ops.nn.weight_norm import _weight_norm, norm_except_dim
from ..parameter import Parameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


class WeightNorm:
    """The forward pre-hook that recomputes ``module.<name>`` from ``<name>_g`` and ``<name>_v``."""

    def __init__(self, name, dim):
        if dim is None:
            dim = -1
        self.name = name
        self.dim = dim

    def compute_weight(self, module):
        """``v · g / ‖v‖`` from the module's current ``<name>_g`` and ``<name>_v``."""
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module, name, dim):
        """Replace ``module.<name>`` by ``<name>_g`` and ``<name>_v`` and register the hook; returns it."""
        # PyTorch's ``@deprecated`` is on ``WeightNorm.apply``: the warning names its caller, ``weight_norm``
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=2)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        if dim is None:
            dim = -1
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        """Put back ``module.<name>`` as a parameter holding the current normalised weight."""
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Reparametrise ``module.<name>`` as ``g · v / ‖v‖`` with parameters ``<name>_g`` (the norm over every
    dim but ``dim``, size-1 elsewhere; ``dim=None``: one norm) and ``<name>_v``, recomputed by a forward
    pre-hook. Warns FutureWarning (deprecated, as in PyTorch). Returns ``module``."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    """Undo ``weight_norm``: ``module.<name>`` becomes one parameter again. Returns ``module``."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
