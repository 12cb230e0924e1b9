"""``torch.nn.utils.stateless``: the deprecated home of ``functional_call``; it warns and calls
``torch.func.functional_call`` (one implementation, in ``gradiente.func.functional_call``)."""
import warnings

from ...func.functional_call import functional_call as _functional_call

__all__ = ["functional_call"]


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """``module(*args, **kwargs)`` with its parameters and buffers replaced by ``parameters_and_buffers`` for
    this call. Deprecated in PyTorch (FutureWarning) in favour of ``torch.func.functional_call``, which it calls."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed in "
                  "a future version of PyTorch. Please use `torch.func.functional_call` instead which is a drop-in "
                  "replacement.", FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)
