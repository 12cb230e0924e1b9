"""The ``torch.func`` helpers that change how a program is run rather than what it computes:
``functionalize``, ``debug_unwrap`` and ``replace_all_batch_norm_modules_``.

``functionalize`` exists in PyTorch to hand a mutation-free program to compilers. gradiente has no compiler or
tracer, so the wrapped function simply runs ``func``: the results, and the mutations of the inputs (which
PyTorch's functionalize also copies back), are the same."""
import functools

from ..nn.modules.batchnorm import _BatchNorm
from ._batched_tensor import BatchedTensor

__all__ = ["functionalize", "debug_unwrap", "replace_all_batch_norm_modules_"]


def functionalize(func, *, remove="mutations"):
    """A function computing what ``func`` computes, with the same effect on its inputs. ``remove`` is checked as
    PyTorch checks it ('mutations' or 'mutations_and_views'); with no tracer here it changes nothing else."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(
            f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}. Valid options "
            "are:\n     remove='mutations': all inplace and out= operators will be removed from the program, and "
            "replaced with their out-of-place equivalents.\n     remove='mutations_and_views': In addition to the "
            "above, all aliasing operators {view} will be replaced with their non-aliasing counterparts, "
            "{view}_copy.\n")

    @functools.wraps(func)
    def functionalized(*args, **kwargs):
        return func(*args, **kwargs)
    return functionalized


def debug_unwrap(tensor, *, recurse=True):
    """The physical tensor under a ``BatchedTensor`` seen inside ``vmap`` (its batch dims in front); any other
    tensor as it is. For debugging only. Difference from PyTorch: one physical value holds every vmap level's
    dims, so ``recurse=False`` under nested vmaps also unwraps them all."""
    while isinstance(tensor, BatchedTensor):
        tensor = tensor._value
        if not recurse:
            break
    return tensor


def _without_running_stats(module):
    if isinstance(module, _BatchNorm) and module.track_running_stats:
        module.running_mean = None
        module.running_var = None
        module.num_batches_tracked = None
        module.track_running_stats = False


def replace_all_batch_norm_modules_(root):
    """Make every BatchNorm module in ``root`` (``root`` included) stop tracking running statistics, in place:
    running_mean, running_var and num_batches_tracked become None, so vmap over a batch-norm model works.
    Returns ``root``."""
    _without_running_stats(root)
    for module in root.modules():
        _without_running_stats(module)
    return root
