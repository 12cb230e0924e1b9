"""``torch._vmap_internals._vmap``: PyTorch's first, private vmap, which some of its own tests still call. Here it
is ``torch.func.vmap`` without ``randomness`` (random ops are refused, with the old vmap's message) or
``chunk_size``, and with ``allow_none_pass_through``: a None output comes back as None instead of being refused
(what ``autograd.grad`` inside it may return)."""
import functools

from .func import _dispatch
from .func.vmap import _check_out_dims, _flat_vmap, _process_inputs

__all__ = ["_vmap"]


def _vmap(func, in_dims=0, out_dims=0, allow_none_pass_through=False):
    call = _dispatch.resolve(func)

    @functools.wraps(func)
    def wrapped(*args):
        _check_out_dims(out_dims, func)
        batch_size, flat_in_dims, flat_args, spec = _process_inputs(func, in_dims, args)
        return _flat_vmap(call, batch_size, flat_in_dims, flat_args, spec, out_dims, "legacy", {}, func,
                          none_passes=allow_none_pass_through)

    return wrapped
