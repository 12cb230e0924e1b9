"""``torch.optim.swap_in_optimizer_params_and_state``: run an optimizer, for the length of a ``with`` block, on
other parameter tensors and another ``state_dict()``-shaped state, then give it back its own."""
import contextlib
from collections import defaultdict

from .._compat import zip_strict
from ..core.tensor import Tensor

__all__ = ["swap_in_optimizer_params_and_state"]

_NAME = "swap_in_optimizer_params_and_state"


def _check_state(state):
    """``state`` must map packed parameter ids (ints) to per-parameter dicts."""
    if not isinstance(state, dict):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be a dict mapping packed parameter ids "
                           f"to per-param state dicts, got {type(state).__name__}.")
    if any(isinstance(k, Tensor) for k in state):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style state keyed by packed parameter ids.")
    if any(isinstance(k, int) and not isinstance(v, dict) for k, v in state.items()):
        raise RuntimeError(f"{_NAME} requires per-parameter optimizer state entries to be dictionaries.")
    return state


def _check_param_groups(optimizer, param_groups):
    if not isinstance(param_groups, list):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['param_groups'] to be a list of param-group dicts, "
                           f"got {type(param_groups).__name__}.")
    if len(optimizer.param_groups) != len(param_groups):
        raise RuntimeError("swapin_optim_state has a different number of parameter groups than the live optimizer.")
    return param_groups


def _check_group(idx, group, swapin_group):
    """The packed ids of ``swapin_group``, which must have exactly the live group's keys and size."""
    if not isinstance(swapin_group, dict):
        raise RuntimeError(f"{_NAME} requires each optimizer param group to be a dictionary.")
    ids = swapin_group.get("params")
    if not isinstance(ids, list) or not all(isinstance(pid, int) for pid in ids):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style param_groups[*]['params'] entries keyed "
                           "by packed parameter ids.")
    if len(group["params"]) != len(ids):
        raise RuntimeError(f"swapin_optim_state param group {idx} has a different number of params than the live "
                           "optimizer param group.")
    swapin_only = [k for k in swapin_group if k not in group]
    live_only = [k for k in group if k not in swapin_group]
    if swapin_only or live_only:
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style param group keys to exactly match the "
                           f"live optimizer group keys for group {idx}. Keys only in swap-in: {swapin_only}. "
                           f"Keys only in live: {live_only}.")
    return ids


def _prepare(optimizer, swapin_parameters, swapin_optim_state):
    """The swap-in state and, per group, ``(live group, swap-in group, its parameter tensors)``."""
    if not optimizer.state:
        raise RuntimeError(f"{_NAME} requires initialized optimizer state.")
    if not isinstance(swapin_optim_state, dict):
        raise RuntimeError(f"{_NAME} requires a DCP-style optimizer state_dict.")
    state = _check_state(swapin_optim_state.get("state"))
    param_groups = _check_param_groups(optimizer, swapin_optim_state.get("param_groups"))
    flat = list(swapin_parameters.values())
    offset = 0
    seen = set()
    groups = []
    for idx, (group, swapin_group) in enumerate(zip_strict(optimizer.param_groups, param_groups)):
        ids = _check_group(idx, group, swapin_group)
        seen.update(ids)
        if offset + len(ids) > len(flat):
            raise RuntimeError(f"{_NAME} requires the explicit parameter state to match optimizer.param_groups "
                               "ordering.")
        groups.append((group, swapin_group, flat[offset:offset + len(ids)]))
        offset += len(ids)
    extra = [k for k in state if k not in seen]
    if extra:
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be keyed only by packed parameter ids "
                           f"from param_groups[*]['params']; got extra keys {extra!r}.")
    return state, groups


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer, swapin_parameters, swapin_optim_state):
    """Within the block, ``optimizer`` works on the tensors of ``swapin_parameters`` (a dict, in the order of
    its param groups) with the state and group options of ``swapin_optim_state`` (an ``optimizer.state_dict()``):
    in-place changes to those tensors and state tensors stay there; on exit the optimizer's own parameters,
    options and state come back. The optimizer's state must already exist."""
    state, groups = _prepare(optimizer, swapin_parameters, swapin_optim_state)
    original_state = optimizer.state
    # Shallow copies: the original ``params`` lists come back as the same objects.
    snapshots = [dict(g) for g in optimizer.param_groups]
    try:
        swapped = defaultdict(dict)
        for live, swapin_group, params in groups:
            live["params"] = params
            for key, value in swapin_group.items():
                if key != "params":
                    live[key] = value
            for param, pid in zip_strict(params, swapin_group["params"]):
                # A copy of the per-parameter dict: tensors are shared (in-place updates reach the caller's
                # state), new entries stay here.
                swapped[param] = dict(state.get(pid, {}))
        optimizer.state = swapped
        yield
    finally:
        for group, snapshot in zip_strict(optimizer.param_groups, snapshots):
            group.clear()
            group.update(snapshot)
        optimizer.state = original_state
