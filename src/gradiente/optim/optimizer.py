"""``Optimizer``: parameter groups, per-parameter state, ``zero_grad``, ``state_dict``, step hooks.

Subclasses implement ``step()``; it runs (hooks around it) on the parameters' arrays in place, outside the
autograd graph, bumping each parameter's version as PyTorch's in-place updates do. Optimizers that update each
parameter on its own derive from ``_SingleTensorOptimizer`` instead, and implement only how a parameter's state
starts and how one parameter moves.
"""
import functools
import warnings
from collections import OrderedDict, defaultdict
from copy import deepcopy
from itertools import chain

import numpy as np

from ..core import grad_mode, profiling
from ..core.tensor import Tensor
from ..nn.parameter import _reset_grads
from ..utils.hooks import RemovableHandle

__all__ = ["Optimizer", "required", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]

# Hooks run around the step of every optimizer, before each optimizer's own (PyTorch's global step hooks; learner
# mode uses them to look at the gradients each step is about to use)
_global_optimizer_pre_hooks: "OrderedDict[int, object]" = OrderedDict()
_global_optimizer_post_hooks: "OrderedDict[int, object]" = OrderedDict()


def register_optimizer_step_pre_hook(hook):
    """``hook(optimizer, args, kwargs)`` before the step of every optimizer; may return new ``(args, kwargs)``.
    Returns a handle whose ``remove()`` unregisters it."""
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook):
    """``hook(optimizer, args, kwargs)`` after the step of every optimizer."""
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


class _RequiredParameter:
    """Singleton class representing a required parameter for an Optimizer."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def _typename(obj):
    return "torch." + obj.dtype._legacy if isinstance(obj, Tensor) else type(obj).__qualname__


def _check_nonnegative(**named):
    """PyTorch's argument checks: ``_check_nonnegative(**{"learning rate": lr})`` -> "Invalid learning rate: -1"."""
    for label, value in named.items():
        if not value >= 0.0:
            raise ValueError(f"Invalid {label}: {value}")


def _closure_loss(closure):
    """The loss ``closure`` returns, evaluated with grad enabled (``step(closure)``), or None."""
    if closure is None:
        return None
    with grad_mode.enable_grad():
        return closure()


def _step_counter():
    """The ``state['step']`` PyTorch keeps: a float32 0-d tensor."""
    return Tensor._make(np.zeros((), dtype=np.float32))


def _increment(step):
    """``step_t += 1`` and its value as a Python float (PyTorch's ``_get_value(step_t)``)."""
    step._data += 1
    step._bump_version()
    return float(step._data)


def _zeros_like(p):
    return Tensor._make(np.zeros_like(p._data))


def _changed(*tensors):
    for t in tensors:
        t._bump_version()


def _hooked_step(step):
    """Wrap a subclass's ``step`` so that step hooks run around it and schedulers can tell it ran."""
    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        if profiling.state.session is None:
            return hooked(self, *args, **kwargs)
        with profiling.Range(f"Optimizer.step#{type(self).__name__}.step"):      # a profiler records: PyTorch's name
            return hooked(self, *args, **kwargs)

    def hooked(self, *args, **kwargs):
        for pre_hook in list(chain(_global_optimizer_pre_hooks.values(), self._optimizer_step_pre_hooks.values())):
            result = pre_hook(self, args, kwargs)
            if result is not None:
                if isinstance(result, tuple) and len(result) == 2:
                    args, kwargs = result
                else:
                    raise RuntimeError(f"{step} must return None or a tuple of (new_args, new_kwargs), but got "
                                       f"{result}.")
        out = step(self, *args, **kwargs)
        self._opt_called = True
        for post_hook in list(chain(self._optimizer_step_post_hooks.values(), _global_optimizer_post_hooks.values())):
            post_hook(self, args, kwargs)
        return out
    wrapper._hooked = wrapper._wrapped_by_lr_sched = True
    return wrapper


class Optimizer:
    """Base class of optimizers. ``params`` is an iterable of tensors, of ``(name, tensor)`` pairs, or of
    dicts (parameter groups, each with its own options overriding ``defaults``)."""

    # ``(option, value)`` pairs for group options added in later versions: state saved before them (a pickle, a
    # state dict) gets PyTorch's defaults when loaded, as its ``__setstate__`` gives them.
    _options_added_later: tuple = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_hooked", False):
            cls.step = _hooked_step(step)

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._optimizer_state_dict_pre_hooks = OrderedDict()
        self._optimizer_state_dict_post_hooks = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = OrderedDict()
        self._optimizer_load_state_dict_post_hooks = OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, but "
                            "got " + _typename(params))
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks", "_optimizer_state_dict_pre_hooks",
                     "_optimizer_state_dict_post_hooks", "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            self.__dict__.setdefault(name, OrderedDict())
        self.defaults.setdefault("differentiable", False)
        for group in self.param_groups:
            for option, value in self._options_added_later:
                group.setdefault(option, value)

    def __repr__(self):
        format_string = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            format_string += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    format_string += f"    {key}: {group[key]}\n"
        return format_string + ")"

    # --- groups and gradients --------------------------------------------------------------------------
    def add_param_group(self, param_group):
        """Add a group of parameters (a dict with ``"params"`` and any options to override)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering of "
                            "tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        tensors, names = [], []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            param_group["param_names"] = names
        for param in tensors:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + _typename(param))
            if not self.defaults.get("differentiable", None) and not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        if len(tensors) != len(set(tensors)):
            # PyTorch's ``stacklevel=3`` lands in the ``torch._disable_dynamo`` wrapper around add_param_group,
            # one line of its own whoever calls: here, this line, printed once per process as there
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will "
                          "cause an error; see github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=1)
        param_set = set()
        for group in self.param_groups:
            param_set.update(group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                current = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {current} to the optimizer")
        if not param_set.isdisjoint(tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        """Reset the gradients of all optimized parameters: to None (the default), or to zeros."""
        if profiling.state.session is not None:     # a profiler records: one range, PyTorch's name
            with profiling.Range(f"Optimizer.zero_grad#{type(self).__name__}.zero_grad"):
                _reset_grads(chain.from_iterable(group["params"] for group in self.param_groups), set_to_none)
            return
        _reset_grads(chain.from_iterable(group["params"] for group in self.param_groups), set_to_none)

    def step(self, closure=None):
        raise NotImplementedError

    #: whether a sparse gradient (``nn.Embedding(sparse=True)``) may be stepped on as its dense form, which gives
    #: PyTorch's sparse update (SGD, Adagrad); other optimizers refuse it in PyTorch's words
    _takes_sparse_gradients = False

    @property
    def _sparse_refusal(self):
        name = type(self).__name__
        if name in ("Adam", "AdamW"):
            return "Adam does not support sparse gradients, please consider SparseAdam instead"
        return f"{name} does not support sparse gradients"

    def _params_with_grad(self, group):
        """The group's parameters that have a gradient, with the gradient's array (negated for ``maximize``) laid
        out like the parameter: mixing memory orders would send every update through NumPy's slow strided loops
        (a linear layer's weight gradient arrives transposed)."""
        maximize = group.get("maximize", False)
        for p in group["params"]:
            g = p._grad
            if g is not None:
                if "_sparse_grad" in p.__dict__ and not self._takes_sparse_gradients:
                    raise RuntimeError(self._sparse_refusal)
                array = g._data
                if maximize:
                    array = np.negative(array, order="C")
                elif not array.flags.c_contiguous:
                    array = np.ascontiguousarray(array)
                yield p, array

    # --- hooks -----------------------------------------------------------------------------------------
    def _register(self, hooks, hook, prepend=False):
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_step_pre_hook(self, hook):
        """``hook(optimizer, args, kwargs)`` before each ``step``; may return new ``(args, kwargs)``."""
        return self._register(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        """``hook(optimizer, args, kwargs)`` after each ``step``."""
        return self._register(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        return self._register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        return self._register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        return self._register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        return self._register(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # --- state dict ------------------------------------------------------------------------------------
    def state_dict(self):
        """``{"state": {index: {...}}, "param_groups": [{options..., "params": [indices]}]}``, with parameters
        replaced by their position across the groups (as PyTorch's, so the two can be exchanged)."""
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)
        param_mappings = {}
        start_index = 0

        def pack_group(group):
            nonlocal start_index
            packed = {k: v for k, v in group.items() if k != "params"}
            param_mappings.update({id(p): i for i, p in enumerate(group["params"], start_index)
                                   if id(p) not in param_mappings})
            packed["params"] = [param_mappings[id(p)] for p in group["params"]]
            start_index += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(param_mappings[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        state_dict = {"state": packed_state, "param_groups": param_groups}
        for post_hook in self._optimizer_state_dict_post_hooks.values():
            result = post_hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    def load_state_dict(self, state_dict):
        """Restore the state and group options saved by ``state_dict()`` (state tensors are copied and cast to
        their parameter's dtype; ``step`` counters stay as saved)."""
        state_dict = state_dict.copy()
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = pre_hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        def cast(param, value, key=None):
            if isinstance(value, Tensor):
                array = value._data
                if key != "step" and param.is_floating_point():
                    array = array.astype(param._data.dtype)
                return Tensor._make(np.array(array, copy=True))
            if isinstance(value, dict):
                return {k: cast(param, v, k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(param, v) for v in value)
            return value

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                state[id_map[k]] = cast(id_map[k], v)
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})
        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)


class _SingleTensorOptimizer(Optimizer):
    """An optimizer that moves each parameter on its own, as PyTorch's single-tensor ("for-loop")
    implementations do. A subclass gives the state a parameter starts with (``_init_state``) and one parameter's
    update (``_update``); the loop, the lazily made state and the ``step`` counter are here."""

    def _init_state(self, p, group):
        """The state ``p`` starts with besides ``step``: a dict of tensors, in PyTorch's key order."""
        raise NotImplementedError

    def _update(self, param, grad, state, step, group):
        """Move ``param`` (the parameter's array, in place) given ``grad`` and ``state``, at step ``step`` (a
        float, already counted), with ``group``'s options; bump the version of each state tensor it changes."""
        raise NotImplementedError

    def _start_state(self, p, group):
        """``p``'s state, made anew: the ``step`` counter first, as in PyTorch's state dicts."""
        state = self.state[p]
        state["step"] = _step_counter()
        state.update(self._init_state(p, group))
        return state

    def _params_with_state(self, group):
        """``(p, grad, state, step)`` for each of the group's parameters that has a gradient. State is made on a
        parameter's first update (so one that never gets a gradient has none, as in PyTorch), and ``step`` is
        counted before the update, as PyTorch's ``step_t += 1`` opens it."""
        for p, grad in self._params_with_grad(group):
            state = self.state[p] or self._start_state(p, group)
            yield p, grad, state, _increment(state["step"])

    def step(self, closure=None):
        """One update of every parameter that has a gradient. ``closure`` re-evaluates and returns the loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            for p, grad, state, step in self._params_with_state(group):
                self._update(p._data, grad, state, step, group)
                _changed(p)
        return loss
