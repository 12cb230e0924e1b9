"""``torch.distributed``: training across processes. gradiente runs in one process, so there is never a process
group, and this module says so in PyTorch's words.

Single-process scripts import it and ask: ``is_initialized()`` is False (so they take their one-process path),
``is_available()`` is False (PyTorch's Linux builds answer True: they can start process groups, gradiente cannot),
and the calls that need a group (``get_rank``, ``all_reduce``, ``barrier``, ...) raise PyTorch's ValueError about a
default process group that was never initialized. ``init_process_group`` itself explains why it cannot be: the
model's ``state_dict`` loads unchanged into PyTorch, which trains it across processes.
"""
import enum
import os

__all__ = ["is_available", "is_initialized", "is_torchelastic_launched", "is_nccl_available", "is_gloo_available",
           "is_mpi_available", "init_process_group", "destroy_process_group", "get_rank", "get_world_size",
           "get_backend", "barrier", "all_reduce", "all_gather", "all_gather_object", "broadcast", "reduce",
           "ReduceOp", "new_group"]

_NOT_INITIALIZED = "Default process group has not been initialized, please make sure to call init_process_group."


def is_available():
    """False: gradiente has no process groups (PyTorch's Linux builds answer True)."""
    return False


def is_initialized():
    return False


def is_torchelastic_launched():
    """Whether ``torchrun`` started this process, which it marks by this variable (PyTorch's test)."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def is_nccl_available():
    return False


def is_gloo_available():
    return False


def is_mpi_available():
    return False


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    raise RuntimeError(
        "gradiente runs in one process: it has no process groups, so init_process_group cannot start one. Train "
        "in a single process here (leave out the distributed setup), or train across processes with PyTorch: "
        "the model's state_dict, saved with gradiente.save, loads unchanged into the same model in PyTorch.")


def destroy_process_group(group=None):
    raise AssertionError("Process group cannot be None")


def _no_group(*args, **kwargs):
    raise ValueError(_NOT_INITIALIZED)


def get_rank(group=None):
    _no_group()


def get_world_size(group=None):
    _no_group()


def get_backend(group=None):
    _no_group()


def barrier(group=None, async_op=False, device_ids=None):
    _no_group()


def all_reduce(tensor, op=None, group=None, async_op=False):
    _no_group()


def all_gather(tensor_list, tensor, group=None, async_op=False):
    _no_group()


def all_gather_object(object_list, obj, group=None):
    _no_group()


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    _no_group()


def reduce(tensor, dst=None, op=None, group=None, async_op=False, group_dst=None):
    _no_group()


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False,
              group_desc=None, device_id=None):
    _no_group()


class ReduceOp(enum.IntEnum):
    """How a collective combines the processes' tensors (``dist.ReduceOp.SUM`` ...), PyTorch's values."""
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8


ReduceOp.__name__ = ReduceOp.__qualname__ = "RedOpType"   # PyTorch's enum prints as <RedOpType.SUM: 0>
