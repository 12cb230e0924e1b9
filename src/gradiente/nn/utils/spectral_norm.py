"""The older, hook-based spectral normalisation (``torch.nn.utils.spectral_norm``): ``weight`` becomes
``weight_orig`` (the parameter) with buffers ``weight_u``, ``weight_v`` (power-iteration vectors), and a
forward pre-hook sets ``weight = weight_orig / sigma`` before each call, one power-iteration round per
training forward."""
import gradiente

from ...core.grad_mode import no_grad
from .. import functional as F
from ..modules.conv import _ConvTransposeNd
from ..parameter import Parameter

__all__ = ["SpectralNorm", "SpectralNormLoadStateDictPreHook", "SpectralNormStateDictHook", "spectral_norm",
           "remove_spectral_norm"]


class SpectralNorm:
    """The forward pre-hook: ``module.<name> = <name>_orig / sigma``, sigma estimated from ``<name>_u``,
    ``<name>_v``."""
    _version = 1

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        """``weight`` with ``dim`` first, flattened to ``(size(dim), -1)``."""
        if self.dim != 0:
            weight = weight.permute(self.dim, *[d for d in range(weight.dim()) if d != self.dim])
        return weight.reshape(weight.size(0), -1)

    def compute_weight(self, module, do_power_iteration):
        """``<name>_orig / sigma``; with ``do_power_iteration`` the buffers u and v first take
        ``n_power_iterations`` rounds, in place."""
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    # v first, then u: PyTorch's order in this older implementation.
                    v.copy_(F.normalize(gradiente.mv(weight_mat.t(), u), dim=0, eps=self.eps))
                    u.copy_(F.normalize(gradiente.mv(weight_mat, v), dim=0, eps=self.eps))
                # Clones, so that the next in-place update does not reach the values this graph saved.
                u = u.clone()
                v = v.clone()
        sigma = gradiente.dot(u, gradiente.mv(weight_mat, v))
        return weight / sigma

    def remove(self, module):
        """Put back ``module.<name>`` as a parameter holding the current normalised weight."""
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        """Move ``module.<name>`` to ``<name>_orig``, draw u and v (``normal_`` from the default generator,
        normalised) and register the hooks; returns the forward pre-hook."""
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        with no_grad():
            weight_mat = fn.reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = F.normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = F.normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        # A plain attribute until the first forward: the weight's values, not in state_dict().
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        module.register_state_dict_post_hook(SpectralNormStateDictHook(fn))
        module.register_load_state_dict_pre_hook(SpectralNormLoadStateDictPreHook(fn))
        return fn


class SpectralNormLoadStateDictPreHook:
    """Loads a state_dict written with this version of spectral_norm (keys ``_orig``, ``_u``, ``_v``) as is.
    (PyTorch also converts checkpoints of its version 0; gradiente never wrote those, so that path is not
    here.)"""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs):
        return None


class SpectralNormStateDictHook:
    """Records ``spectral_norm``'s version in the state_dict's metadata, as PyTorch does."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata):
        versions = local_metadata.setdefault("spectral_norm", {})
        key = self.fn.name + ".version"
        if key in versions:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        versions[key] = self.fn._version


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Divide ``module.<name>`` by its spectral norm, estimated by power iteration, before each forward.
    ``dim``: the output-channel dim (default 0, 1 for transposed convolutions). u and v are drawn with
    ``normal_`` from the default generator in PyTorch's order, so the same seed gives the same numbers.
    Returns ``module``."""
    if dim is None:
        dim = 1 if isinstance(module, _ConvTransposeNd) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name="weight"):
    """Undo ``spectral_norm``: ``module.<name>`` becomes one parameter again. Returns ``module``."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            break
    else:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    for hooks, kind in ((module._state_dict_hooks, SpectralNormStateDictHook),
                        (module._load_state_dict_pre_hooks, SpectralNormLoadStateDictPreHook)):
        for k, hook in list(hooks.items()):
            target = getattr(hook, "func", hook)     # load pre-hooks are stored bound to the module
            if isinstance(target, kind) and target.fn.name == name:
                del hooks[k]
                break
    return module
