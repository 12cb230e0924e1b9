"""Pruning, as ``torch.nn.utils.prune``: zeroing some of a parameter's entries through a mask.

Pruning ``module.weight`` moves the parameter to ``weight_orig``, stores a 0/1 mask as the buffer
``weight_mask``, and makes ``weight`` a plain attribute, ``weight_mask * weight_orig``, which a forward
pre-hook (the pruning method itself) recomputes before every call. Pruning the same tensor again combines
the masks in a ``PruningContainer``: the new method only sees the entries (or, for a structured method, the
channels) that are still alive. ``remove`` makes the pruning permanent: ``weight`` is a parameter again,
holding the pruned values.

A method says how it picks the entries to zero (``compute_mask``) and what it prunes (``PRUNING_TYPE``:
single entries, whole channels along ``dim``, or entries of several tensors at once). The random methods draw
from the global generator exactly as PyTorch does, so a seeded program prunes the same entries.
"""
import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

import gradiente

from .convert_parameters import parameters_to_vector

__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured", "L1Unstructured",
           "RandomStructured", "LnStructured", "CustomFromMask", "identity", "random_unstructured",
           "l1_unstructured", "random_structured", "ln_structured", "global_unstructured", "custom_from_mask",
           "remove", "is_pruned"]


class BasePruningMethod(ABC):
    """A way of pruning one tensor of a module, and the forward pre-hook that re-applies its mask."""
    _tensor_name: str

    def __call__(self, module, inputs):
        # the forward pre-hook: the pruned tensor from the current original and mask
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The new mask for ``t``, starting from ``default_mask`` (the mask so far, or ones)."""

    def apply_mask(self, module):
        """``<name>_mask * <name>_orig``: the pruned tensor."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        original = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=original.dtype) * original

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prune ``module.<name>`` with a new ``cls(*args, **kwargs)`` (combined with the method already pruning
        it, if any); ``importance_scores``, of the tensor's shape, rank the entries instead of its values."""
        method = _method_for(cls, module, name, args, kwargs)
        original = getattr(module, name)
        if importance_scores is None:
            importance_scores = original
        elif importance_scores.shape != original.shape:
            raise AssertionError(f"importance_scores should have the same shape as parameter {name} of {module}, "
                                 f"got {importance_scores.shape} vs {original.shape}")
        first_time = not isinstance(method, PruningContainer)
        if first_time:
            module.register_parameter(name + "_orig", original)
            del module._parameters[name]
            default_mask = gradiente.ones_like(original)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone(memory_format=gradiente.contiguous_format)
        try:
            module.register_buffer(name + "_mask", method.compute_mask(importance_scores, default_mask=default_mask))
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if first_time:      # put the parameter back where it was
                module.register_parameter(name, getattr(module, name + "_orig"))
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """``t`` pruned by this method's mask, without any module."""
        if importance_scores is None:
            importance_scores = t
        elif importance_scores.shape != t.shape:
            raise AssertionError(f"importance_scores should have the same shape as tensor t, got "
                                 f"{importance_scores.shape} vs {t.shape}")
        if default_mask is None:
            default_mask = gradiente.ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module):
        """Make the pruning permanent: ``<name>`` becomes a parameter again, with the pruned values; the
        original and the mask are dropped."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be removed")
        pruned = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        parameter = module._parameters[self._tensor_name + "_orig"]
        parameter.data = pruned.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, parameter)


def _method_for(cls, module, name, args, kwargs):
    """The hook that will prune ``module.<name>``: a new ``cls`` method, or, when a method prunes that tensor
    already, a container holding the old one(s) and then the new one (the old hook is taken off the module)."""
    old_keys = [k for k, hook in module._forward_pre_hooks.items()
                if isinstance(hook, BasePruningMethod) and hook._tensor_name == name]
    if len(old_keys) > 1:
        raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} of module {module}. "
                             "Use a PruningContainer.")
    old = module._forward_pre_hooks[old_keys[0]] if old_keys else None
    for k in old_keys:
        del module._forward_pre_hooks[k]
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if old is None:
        return method
    container = old if isinstance(old, PruningContainer) else PruningContainer(old)
    container.add_pruning_method(method)
    return container


class PruningContainer(BasePruningMethod):
    """The methods that pruned one tensor, in order; its mask is the last method's, computed on what the
    earlier ones left."""

    def __init__(self, *args):
        self._pruning_methods = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method):
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(f"Can only add pruning methods acting on the parameter named '{self._tensor_name}' to "
                             f"PruningContainer {self}. Found '{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        """The mask so far, with the newest method's mask written into the part it may still prune: the
        entries still alive (unstructured), the channels along its ``dim`` with an entry alive (structured), or
        everything (global)."""
        method = self._pruning_methods[-1]
        mask = default_mask.to(dtype=t.dtype)
        alive = _still_alive(method, t, default_mask)
        mask[alive] = method.compute_mask(t[alive], default_mask=default_mask[alive]).to(dtype=mask.dtype)
        return mask


def _still_alive(method, t, mask):
    """The index of the part of ``t`` that ``method`` prunes next, given the ``mask`` so far."""
    kind = method.PRUNING_TYPE
    if kind == "unstructured":
        return mask == 1
    if kind == "structured":
        if not hasattr(method, "dim"):
            raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to have the attribute `dim` '
                                 "defined.")
        dim = method.dim + t.dim() if method.dim < 0 else method.dim
        if dim < 0:
            raise IndexError(f"Index is out of bounds for tensor with dimensions {t.dim()}")
        channels_alive = mask.sum(dim=[d for d in range(t.dim()) if d != dim]) != 0
        return tuple(channels_alive if d == dim else slice(None) for d in range(t.dim()))
    if kind == "global":
        return (slice(None),) * len(t.shape)
    raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")


def _without_entries(default_mask, count, scores, largest):
    """A copy of ``default_mask`` with the ``count`` entries of largest (or smallest) ``scores()`` zeroed; the scores
    are computed only when there is something to prune (a random draw then only, as PyTorch draws)."""
    mask = default_mask.clone(memory_format=gradiente.contiguous_format)
    if count != 0:
        chosen = gradiente.topk(scores().view(-1), k=count, largest=largest).indices
        mask.view(-1)[chosen] = 0
    return mask


class Identity(BasePruningMethod):
    """Prunes nothing: the mask stays all ones (a way to give a tensor the pruning layout)."""
    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    """Zeroes ``amount`` entries (a count, or a fraction of the tensor) chosen at random."""
    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        # a uniform draw per entry; the largest draws are pruned
        return _without_entries(default_mask, _how_many(self.amount, t.nelement()), lambda: gradiente.rand_like(t),
                                largest=True)

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Zeroes the ``amount`` entries of smallest absolute value."""
    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        return _without_entries(default_mask, _how_many(self.amount, t.nelement()), lambda: gradiente.abs(t),
                                largest=False)

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Zeroes ``amount`` whole channels along ``dim``, chosen at random."""
    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1):
        _check_amount(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t, default_mask):
        channels = _channels(t, self.dim)
        count = _how_many(self.amount, channels)
        if count == 0:
            return default_mask
        # a uniform draw per channel; the channels above the count-th smallest draw are kept
        draws = gradiente.rand(channels)
        kept = draws > gradiente.kthvalue(draws, k=count).values
        mask = _channel_mask(t, self.dim, kept)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Zeroes the ``amount`` channels along ``dim`` of smallest ``n``-norm."""
    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1):
        _check_amount(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t, default_mask):
        channels = _channels(t, self.dim)
        count = _how_many(self.amount, channels)
        norms = gradiente.norm(t, p=self.n, dim=[d for d in range(t.dim()) if d != self.dim % t.dim()])
        largest = gradiente.topk(norms, k=channels - count, largest=True).indices
        if count == 0:
            return default_mask
        mask = _channel_mask(t, self.dim, largest)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes with a mask given by the caller (``global_unstructured`` hands each tensor its part)."""
    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if default_mask.shape != self.mask.shape:
            raise AssertionError(f"default_mask shape {default_mask.shape} must match self.mask shape "
                                 f"{self.mask.shape}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


def _channels(t, dim):
    """The number of channels along ``dim``, after PyTorch's checks that ``t`` has channels to prune."""
    if len(t.shape) <= 1:
        raise ValueError(f"Structured pruning can only be applied to multidimensional tensors. Found tensor of shape "
                         f"{t.shape} with {len(t.shape)} dims")
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")
    return t.shape[dim]


def _channel_mask(t, dim, kept):
    """Zeros of ``t``'s shape with ones in the channels ``kept`` (a boolean mask or indices) along ``dim``."""
    mask = gradiente.zeros_like(t)
    mask[tuple(kept if d == dim % t.dim() else slice(None) for d in range(t.dim()))] = 1
    return mask


def _check_amount(amount):
    """An amount is a count (an integer, not negative) or a fraction (a float in [0, 1])."""
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    is_count = isinstance(amount, numbers.Integral)
    if (is_count and amount < 0) or (not is_count and not 0.0 <= float(amount) <= 1.0):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer")


def _how_many(amount, size):
    """How many of ``size`` entries (or channels) to prune: the count itself, or the fraction of ``size``,
    rounded (Python's round: half to even)."""
    count = amount if isinstance(amount, numbers.Integral) else round(amount * size)
    if isinstance(count, numbers.Integral) and count > size:
        raise ValueError(f"amount={count} should be smaller than the number of parameters to prune={size}")
    return count


def identity(module, name):
    """Give ``module.<name>`` the pruning layout (``_orig``, ``_mask``, the hook) without pruning anything."""
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    """Prune ``amount`` random entries of ``module.<name>``."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    """Prune the ``amount`` entries of ``module.<name>`` of smallest absolute value (or importance score)."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    """Prune ``amount`` random channels of ``module.<name>`` along ``dim``."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    """Prune the ``amount`` channels of ``module.<name>`` along ``dim`` of smallest ``n``-norm."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def custom_from_mask(module, name, mask):
    """Prune ``module.<name>`` with the given 0/1 ``mask``."""
    CustomFromMask.apply(module, name, mask)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """Prune the ``(module, name)`` tensors of ``parameters`` as one: ``pruning_method`` (an unstructured method
    class, with ``kwargs``) ranks the entries of all of them together, so each tensor loses its own share."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    if importance_scores is None:
        importance_scores = {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    scores = parameters_to_vector([importance_scores.get((module, name), getattr(module, name))
                                   for module, name in parameters])
    masks_so_far = parameters_to_vector([getattr(module, name + "_mask", gradiente.ones_like(getattr(module, name)))
                                         for module, name in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(f'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
                        f"{pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    whole_mask = container.compute_mask(scores, masks_so_far)
    start = 0
    for module, name in parameters:
        tensor = getattr(module, name)
        custom_from_mask(module, name, mask=whole_mask[start:start + tensor.numel()].view_as(tensor))
        start += tensor.numel()


def remove(module, name):
    """Make the pruning of ``module.<name>`` permanent and take its hook off."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")


def is_pruned(module):
    """Whether any submodule of ``module`` carries a pruning hook."""
    return any(isinstance(hook, BasePruningMethod)
               for _, submodule in module.named_modules() for hook in submodule._forward_pre_hooks.values())
