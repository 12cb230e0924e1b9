"""``autograd.Function`` under ``vmap``, as PyTorch: a Function's ``vmap`` staticmethod is its batching rule, and
``generate_vmap_rule=True`` asks vmap to make one. A Function with neither cannot be vmapped.

The rule is called as PyTorch calls it: ``vmap(info, in_dims, *args)`` with each batched argument unwrapped to its
physical tensor (its batch dim at 0, ``in_dims`` saying which are batched), returning ``(output, out_dims)``. It
batches one level; an argument batched at several levels (nested vmaps) runs per example at the innermost one
first. The generated rule runs the Function per example (``_dispatch.fallback``): its ``forward`` and
``backward`` were written for one example, and running them per example keeps their meaning exactly.
"""
import collections

from ._batched_tensor import levels_of, physical, size_of_level, wrap
from ._batching_rules import randomness
from ._dispatch import batch_levels, fallback
from ._tree import flatten, unflatten

__all__ = ["VmapInfo", "apply_batched"]

VmapInfo = collections.namedtuple("VmapInfo", ["batch_size", "randomness"])


def apply_batched(cls, args, kwargs):
    from ..autograd.function import Function
    if cls.setup_context is Function.setup_context:
        raise RuntimeError("In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, "
                           "...), it must override the setup_context staticmethod. For more details, please see "
                           "https://pytorch.org/docs/main/notes/extending.func.html")
    if cls.vmap is Function.vmap and not cls.generate_vmap_rule:
        raise RuntimeError(f"You tried to vmap over {cls.__name__}, but it does not have vmap support. Please "
                           "override and implement the vmap staticmethod or set generate_vmap_rule=True. For more "
                           "details, please see https://pytorch.org/docs/main/notes/extending.func.html")
    levels = batch_levels(args, kwargs)
    level = levels[-1]
    if cls.generate_vmap_rule or any(levels_of(a) not in ((), (level,)) for a in args):
        return fallback(cls.apply, args, kwargs, levels)
    in_dims = tuple(0 if levels_of(a) else None for a in args)
    info = VmapInfo(batch_size=size_of_level(level), randomness=randomness())
    output, out_dims = cls.vmap(info, in_dims, *[physical(a) for a in args], **kwargs)
    flat, spec = flatten(output)
    flat_dims = [out_dims] * len(flat) if out_dims is None or isinstance(out_dims, int) else flatten(out_dims)[0]
    return unflatten([out if d is None else wrap(out.movedim(d, 0) if d else out, (level,))
                      for out, d in zip(flat, flat_dims)], spec)
