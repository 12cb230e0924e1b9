"""``torch.random``: the default CPU generator's seed and state, and ``fork_rng`` to draw without disturbing it.

gradiente has one generator per process (``torch.default_generator``, PyTorch's MT19937 with its seeding, so a
seed gives PyTorch's numbers) and no accelerator, so forking the RNG saves and restores the CPU state only,
as PyTorch does on a machine without a GPU.
"""
import contextlib

from .core.random import default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state

__all__ = ["set_rng_state", "get_rng_state", "manual_seed", "seed", "initial_seed", "fork_rng",
           "thread_safe_generator"]


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type=None):
    """A context in which random draws do not change the state seen after it: the CPU generator's state is
    saved on entry and restored on exit (``enabled=False`` forks nothing). There are no accelerator devices to
    fork, so ``devices`` and ``device_type`` are accepted and have nothing to act on."""
    if device_type == "meta" or not enabled:
        yield
        return
    state = default_generator.get_state()
    try:
        yield
    finally:
        default_generator.set_state(state)


def thread_safe_generator():
    """The generator a DataLoader thread worker should draw from; None in the main process and in process
    workers, where the default generator serves (gradiente's DataLoader loads in the main process, so always
    None unless a worker says otherwise)."""
    from .utils.data import get_worker_info
    info = get_worker_info()
    return getattr(info, "generator", None) if info is not None else None
