"""``torch.nn.parallel``: a model split across GPUs (``DataParallel``) or across processes
(``DistributedDataParallel``).

Without GPUs PyTorch's ``DataParallel`` keeps the module and calls it as is, and so it does here: the wrapper
shows in the printout and in the ``state_dict`` keys (``module.weight``), as in PyTorch, which matters when a
checkpoint moves between the two. ``DistributedDataParallel`` needs a process group, which gradiente never has
(``gradiente.distributed``), so making one raises PyTorch's error for a process group not initialized.
"""
from ..modules.module import Module

__all__ = ["DataParallel", "DistributedDataParallel"]


class DataParallel(Module):
    """``DataParallel(module)``: on a machine without GPUs, the module itself, called unchanged."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        # PyTorch's CPU path: no devices to spread over, so none are kept (not even those asked for)
        self.module = module
        self.device_ids = []
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


class DistributedDataParallel(Module):
    """One replica of a model per process, gradients averaged between them: needs a process group."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, **kwargs):
        from ... import distributed
        distributed.get_world_size(process_group)   # raises: gradiente has no process group
