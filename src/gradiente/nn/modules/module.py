"""``nn.Module``: the base class of every layer and model, with PyTorch's semantics.

Assigning a ``Parameter``, a ``Module`` or a ``Buffer`` as an attribute registers it (in ``_parameters``,
``_modules``, ``_buffers``, in assignment order); ``parameters()``, ``state_dict()``, ``train()``, ``to()``
and the rest walk that registry. ``repr`` is PyTorch's: the class name, ``extra_repr()``, then each child
indented, so a printed model reads the same in both libraries.
"""
import functools
import inspect
import itertools
import warnings
import weakref
from collections import OrderedDict, namedtuple
from collections.abc import Mapping
from typing import Any, TypeVar

import numpy as np

from ...core import dtype as dt
from ...core import grad_mode
from ...core.device import COPY, as_device, check_device, unavailable
from ...core.meta import NO_DATA, is_meta
from ...core.shared_memory import share_storages
from ...core.tensor import Tensor
from ...utils.hooks import RemovableHandle
from ..parameter import Buffer, Parameter, _reset_grads
from ._backward_hooks import BackwardHook

__all__ = ["register_module_forward_pre_hook", "register_module_forward_hook", "register_module_full_backward_pre_hook",
           "register_module_backward_hook", "register_module_full_backward_hook",
           "register_module_buffer_registration_hook", "register_module_module_registration_hook",
           "register_module_parameter_registration_hook", "Module"]

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"

# Hooks common to every module, as PyTorch keeps them (module-level dicts that libraries read and clear). The
# registration hooks run as a buffer, a parameter or a child module is registered; the others around each call.
_global_buffer_registration_hooks = OrderedDict()
_global_module_registration_hooks = OrderedDict()
_global_parameter_registration_hooks = OrderedDict()
_global_backward_pre_hooks = OrderedDict()
_global_backward_hooks = OrderedDict()
#: whether the global backward hooks are full ones (None until the first is registered)
_global_is_full_backward_hook = None
_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()
_global_forward_hooks_always_called = OrderedDict()
_global_forward_hooks_with_kwargs = OrderedDict()

_MIXED_BACKWARD_HOOKS = ("Cannot use both regular backward hooks and full backward hooks on a single Module. Please "
                         "use only one of them.")
_MIXED_GLOBAL_BACKWARD_HOOKS = ("Cannot use both regular backward hooks and full backward hooks as a global Module "
                                "hook. Please use only one of them.")


class _WrappedHook:
    """A hook stored by a module, called with the module first when ``module`` is given (held weakly, so the
    hook keeps no module alive), with the hook's name and docstring (``functools.update_wrapper``)."""

    def __init__(self, hook, module=None):
        self.hook = hook
        functools.update_wrapper(self, hook)
        self.with_module = module is not None
        if self.with_module:
            self.module = weakref.ref(module)

    def __call__(self, *args, **kwargs):
        if self.with_module:
            module = self.module()
            if module is None:
                raise RuntimeError("You are trying to call the hook of a dead Module!")
            return self.hook(module, *args, **kwargs)
        return self.hook(*args, **kwargs)

    def __getstate__(self):
        state = {"hook": self.hook, "with_module": self.with_module}
        if self.with_module:
            state["module"] = self.module()
        return state

    def __setstate__(self, state):
        self.hook = state["hook"]
        self.with_module = state["with_module"]
        if self.with_module:
            if state["module"] is None:
                raise RuntimeError("You are trying to revive the hook of a dead Module!")
            self.module = weakref.ref(state["module"])


def _has_any_global_hook():
    return (_global_backward_pre_hooks or _global_backward_hooks or _global_forward_pre_hooks
            or _global_forward_hooks or _global_forward_hooks_always_called or _global_forward_hooks_with_kwargs)


def _add_hook(hooks, hook):
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    return handle


def register_module_buffer_registration_hook(hook):
    """``hook(module, name, buffer)`` each time any module registers a buffer; a return value replaces it."""
    return _add_hook(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook):
    """``hook(module, name, submodule)`` each time any module registers a child; a return value replaces it."""
    return _add_hook(_global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook):
    """``hook(module, name, param)`` each time any module registers a parameter; a return value replaces it."""
    return _add_hook(_global_parameter_registration_hooks, hook)


def register_module_forward_pre_hook(hook):
    """``hook(module, args)`` before the forward of every module, before the module's own pre-hooks."""
    return _add_hook(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """``hook(module, args, output)`` (``hook(module, args, kwargs, output)`` with ``with_kwargs``) after the
    forward of every module, before the module's own hooks; ``always_call``: also when the forward raised."""
    # (as in PyTorch, removing the hook leaves its id in ``_global_forward_hooks_with_kwargs``, where it is inert)
    handle = RemovableHandle(_global_forward_hooks, extra_dict=_global_forward_hooks_always_called)
    _global_forward_hooks[handle.id] = hook
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    return handle


def _set_global_backward_kind(full):
    # a module attribute under PyTorch's name, which code that inspects the global hooks reads
    global _global_is_full_backward_hook  # noqa: PLW0603
    if _global_is_full_backward_hook is (not full):
        raise RuntimeError(_MIXED_GLOBAL_BACKWARD_HOOKS)
    _global_is_full_backward_hook = full


def register_module_backward_hook(hook):
    """The deprecated, non-full ``register_backward_hook`` for every module (see ``Module.register_backward_hook``).
    Cannot be mixed with ``register_module_full_backward_hook``."""
    _set_global_backward_kind(False)
    return _add_hook(_global_backward_hooks, hook)


def register_module_full_backward_pre_hook(hook):
    """``register_full_backward_pre_hook`` for every module; runs before the module's own pre-hooks."""
    return _add_hook(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook):
    """``register_full_backward_hook`` for every module; runs before the module's own hooks."""
    _set_global_backward_kind(True)
    return _add_hook(_global_backward_hooks, hook)


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(s_, num_spaces):
    lines = s_.split("\n")
    if len(lines) == 1:
        return s_
    first = lines.pop(0)
    lines = [(num_spaces * " ") + line if line.strip() else "" for line in lines]
    return first + "\n" + "\n".join(lines)


def _typename(obj):
    """``torch.typename``: ``torch.FloatTensor`` for tensors, the qualified class name otherwise."""
    if isinstance(obj, Tensor):
        return "torch." + obj.dtype._legacy
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in (None, "builtins") else f"{module}.{name}"


def _to_missing_accelerator(kind, device):
    """What ``Tensor.ipu(device)`` and ``Tensor.mtia(device)`` raise in a CPU-only PyTorch: a device of another
    kind is refused, one of that kind cannot be reached."""
    place = as_device(kind if device is None else device, kind)
    if place.type != kind:
        raise RuntimeError(f"Invalid device, must be {'MTIA' if kind == 'mtia' else kind} device")
    raise unavailable(place, COPY)


def _registered_module(parent, name, module):
    """``module`` as the global module registration hooks leave it, about to become ``parent.<name>``."""
    for hook in _global_module_registration_hooks.values():
        output = hook(parent, name, module)
        if output is not None:
            module = output
    return module


def _forward_unimplemented(self, *input):
    raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')



#: this module's own helper methods, which PyTorch's Module does not have: left out of ``dir(model)``, so that it
#: prints what PyTorch's prints
_OWN_HELPERS = frozenset({"_call_always_called_hooks", "_cast_floating", "_holds_meta", "_register_assigned_buffer",
                          "_swap_in", "_swap_loaded"})

class Module:
    """Base class for all neural network modules: subclass it, create layers in ``__init__`` (after
    ``super().__init__()``), and compute in ``forward``. Call the module, not ``forward``, so hooks run."""

    dump_patches = False
    _version = 1
    training: bool
    call_super_init = False
    T_destination = TypeVar("T_destination", bound=dict[str, Any])
    #: what ``compile()`` made of ``_call_impl`` (gradiente runs the module as written: see ``compile``)
    _compiled_call_impl = None

    def __init__(self, *args, **kwargs):
        if self.call_super_init is False and kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        if self.call_super_init is False and args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but {len(args) + 1} "
                            "were given")
        setattr_ = super().__setattr__
        setattr_("training", True)
        setattr_("_parameters", {})
        setattr_("_buffers", {})
        setattr_("_non_persistent_buffers_set", set())
        setattr_("_backward_pre_hooks", OrderedDict())
        setattr_("_backward_hooks", OrderedDict())
        setattr_("_is_full_backward_hook", None)
        setattr_("_forward_hooks", OrderedDict())
        setattr_("_forward_hooks_with_kwargs", OrderedDict())
        setattr_("_forward_hooks_always_called", OrderedDict())
        setattr_("_forward_pre_hooks", OrderedDict())
        setattr_("_forward_pre_hooks_with_kwargs", OrderedDict())
        setattr_("_state_dict_hooks", OrderedDict())
        setattr_("_state_dict_pre_hooks", OrderedDict())
        setattr_("_load_state_dict_pre_hooks", OrderedDict())
        setattr_("_load_state_dict_post_hooks", OrderedDict())
        setattr_("_modules", {})
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    forward = _forward_unimplemented

    # --- registration ----------------------------------------------------------------------------------
    def register_buffer(self, name, tensor, persistent=True):
        """Add a tensor that is module state but not a parameter (BatchNorm's ``running_mean``).
        ``persistent=False`` keeps it out of ``state_dict()``."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        if isinstance(tensor, Buffer):
            plain = Tensor._make(tensor._data, tensor._requires_grad)
            plain._version_box = tensor._version_box
            tensor = plain
        for hook in _global_buffer_registration_hooks.values():
            output = hook(self, name, tensor)
            if output is not None:
                tensor = output
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        """Add ``param`` (a ``Parameter`` or None) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        elif param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                             f"created explicitly. To express '{name}' as a function of another Tensor, compute "
                             "the value in the forward() method.")
        else:
            for hook in _global_parameter_registration_hooks.values():
                output = hook(self, name, param)
                if output is not None:
                    param = output
            self._parameters[name] = param

    def add_module(self, name, module):
        """Add the child ``module`` under ``name`` (what ``self.name = module`` does)."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = _registered_module(self, name, module)

    def register_module(self, name, module):
        """Alias for ``add_module``."""
        self.add_module(name, module)

    def _register_assigned_buffer(self, name, value, persistent):
        """``self.name = buffer``: ``register_buffer``, also where a subclass overrides it without the
        ``persistent`` argument (as PyTorch allows, for such modules written before the argument existed)."""
        if (getattr(self.register_buffer, "__func__", None) is Module.register_buffer
                or "persistent" in inspect.signature(self.register_buffer).parameters):
            self.register_buffer(name, value, persistent)
        elif not persistent:
            raise RuntimeError("Registering a non-persistent buffer on a Module subclass that implements "
                               "register_buffer() without the persistent argument is not allowed.")
        else:
            self.register_buffer(name, value)

    def get_submodule(self, target):
        """The submodule at the dotted path ``target`` (``"net.0"``); ``""`` is the module itself."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target, module, strict=False):
        """Put ``module`` at the dotted path ``target``: replaces the submodule there, or adds it to an existing
        parent (with ``strict``, only replaces)."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent = self if len(atoms) == 1 else self.get_submodule(".".join(atoms[:-1]))
        name = atoms[-1]
        if strict and not hasattr(parent, name):
            raise AttributeError(parent._get_name() + " has no attribute `" + name + "`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError("`" + name + "` is not an nn.Module")
        setattr(parent, name, module)

    def get_parameter(self, target):
        module_path, _, param_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, param_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + param_name + "`")
        param = getattr(mod, param_name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + param_name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        module_path, _, buffer_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, buffer_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + buffer_name + "`")
        if buffer_name not in mod._buffers:
            raise AttributeError("`" + buffer_name + "` is not a buffer")
        return getattr(mod, buffer_name)

    def get_extra_state(self):
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called. Please "
                           "file an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml "
                           "to report this bug.")

    def set_extra_state(self, state):
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called. Please "
                           "file an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml "
                           "to report this bug.")

    # --- attribute access ------------------------------------------------------------------------------
    def __getattr__(self, name):
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            return d["_parameters"][name]
        if "_buffers" in d and name in d["_buffers"]:
            return d["_buffers"][name]
        if "_modules" in d and name in d["_modules"]:
            return d["_modules"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        d = self.__dict__

        def remove_from(*dicts_or_sets):
            for container in dicts_or_sets:
                if name in container:
                    if isinstance(container, dict):
                        del container[name]
                    else:
                        container.discard(name)

        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        else:
            modules = d.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                remove_from(d, self._parameters, self._buffers, self._non_persistent_buffers_set)
                modules[name] = _registered_module(self, name, value)
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                    "(torch.nn.Module or None expected)")
                modules[name] = _registered_module(self, name, value)
            else:
                buffers = d.get("_buffers")
                if isinstance(value, Buffer) or (buffers is not None and name in buffers):
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                        "(torch.nn.Buffer, torch.Tensor or None expected)")
                    persistent = (value.persistent if isinstance(value, Buffer)
                                  else name not in self._non_persistent_buffers_set)
                    self._register_assigned_buffer(name, value, persistent)
                else:
                    object.__setattr__(self, name, value)

    def __delattr__(self, name):
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        keys = (dir(self.__class__) + list(self.__dict__) + list(self._parameters) + list(self._modules)
                + list(self._buffers))
        return sorted(key for key in keys if not key[0].isdigit() and key not in _OWN_HELPERS)

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("_compiled_call_impl", None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        # modules pickled before these attributes existed
        for name in ("_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_forward_hooks_with_kwargs",
                     "_forward_hooks_always_called", "_state_dict_hooks", "_state_dict_pre_hooks",
                     "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks", "_backward_pre_hooks"):
            if name not in self.__dict__:
                object.__setattr__(self, name, OrderedDict())
        if "_non_persistent_buffers_set" not in self.__dict__:
            object.__setattr__(self, "_non_persistent_buffers_set", set())
        if "_is_full_backward_hook" not in self.__dict__:
            object.__setattr__(self, "_is_full_backward_hook", None)

    # --- calling ---------------------------------------------------------------------------------------
    def _call_impl(self, *args, **kwargs):
        # The fast path: a module with no hook of its own, and no global hook, only runs its forward. Its hook
        # dicts are read from __dict__ directly: attribute access costs more, on a class with a __getattr__.
        try:
            d = self.__dict__
            hooked = (d["_forward_hooks"] or d["_forward_pre_hooks"] or d["_backward_hooks"]
                      or d["_backward_pre_hooks"])
        except KeyError:    # Module.__init__ did not run: the attribute error PyTorch raises
            hooked = (self._backward_hooks or self._backward_pre_hooks or self._forward_hooks
                      or self._forward_pre_hooks)
        if not (hooked or _global_forward_hooks or _global_forward_pre_hooks or _global_backward_hooks
                or _global_backward_pre_hooks):
            return self.forward(*args, **kwargs)
        output = None
        called = set()
        try:
            full_backward_hooks, non_full_backward_hooks, backward_pre_hooks = (), (), ()
            if self._backward_pre_hooks or _global_backward_pre_hooks:
                backward_pre_hooks = self._get_backward_pre_hooks()
            if self._backward_hooks or _global_backward_hooks:
                full_backward_hooks, non_full_backward_hooks = self._get_backward_hooks()
            for hook_id, hook in (*_global_forward_pre_hooks.items(), *self._forward_pre_hooks.items()):
                if hook_id in self._forward_pre_hooks_with_kwargs:
                    result = hook(self, args, kwargs)
                    if result is not None:
                        if isinstance(result, tuple) and len(result) == 2:
                            args, kwargs = result
                        else:
                            raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, "
                                               f"new_kwargs), but got {result}.")
                else:
                    result = hook(self, args)
                    if result is not None:
                        args = result if isinstance(result, tuple) else (result,)
            bw_hook = None
            if full_backward_hooks or backward_pre_hooks:
                bw_hook = BackwardHook(self, full_backward_hooks, backward_pre_hooks)
                args = bw_hook.setup_input_hook(args)
            output = self.forward(*args, **kwargs)
            for hook_id, hook in (*_global_forward_hooks.items(), *self._forward_hooks.items()):
                if hook_id in self._forward_hooks_always_called or hook_id in _global_forward_hooks_always_called:
                    called.add(hook_id)
                if hook_id in self._forward_hooks_with_kwargs or hook_id in _global_forward_hooks_with_kwargs:
                    result = hook(self, args, kwargs, output)
                else:
                    result = hook(self, args, output)
                if result is not None:
                    output = result
            if bw_hook is not None:
                if not isinstance(output, (Tensor, tuple)):
                    warnings.warn("For backward hooks to be called, module output should be a Tensor or a tuple of "
                                  f"Tensors but received {type(output)}", stacklevel=1)
                output = bw_hook.setup_output_hook(output)
            if non_full_backward_hooks:
                # PyTorch's legacy hooks: on the node of the output's first tensor, whatever the forward did
                first = output
                while not isinstance(first, Tensor):
                    if isinstance(first, dict):
                        first = next(v for v in first.values() if isinstance(v, Tensor))
                    else:
                        first = first[0]
                grad_fn = first.grad_fn
                if grad_fn is not None:
                    for hook in non_full_backward_hooks:
                        grad_fn.register_hook(_WrappedHook(hook, self))
                    self._maybe_warn_non_full_backward_hook(args, output, grad_fn)
            return output
        except Exception:
            self._call_always_called_hooks(called, args, kwargs, output)
            raise

    __call__ = _call_impl

    def _call_always_called_hooks(self, called, args, kwargs, output):
        """After an exception in the call, the forward hooks marked ``always_call`` that have not run, globals
        first; what they raise is a warning, and the exception goes on."""
        for hook_id, hook in _global_forward_hooks.items():
            if hook_id in _global_forward_hooks_always_called and hook_id not in called:
                try:
                    result = hook(self, args, output)
                    if result is not None:
                        output = result
                except Exception as e:
                    warnings.warn("global module forward hook with ``always_call=True`` raised an exception that "
                                  f"was silenced as another error was raised in forward: {e!s}", stacklevel=2)
        for hook_id, hook in self._forward_hooks.items():
            if hook_id in self._forward_hooks_always_called and hook_id not in called:
                try:
                    if hook_id in self._forward_hooks_with_kwargs:
                        result = hook(self, args, kwargs, output)
                    else:
                        result = hook(self, args, output)
                    if result is not None:
                        output = result
                except Exception as e:
                    warnings.warn("module forward hook with ``always_call=True`` raised an exception that was "
                                  f"silenced as another error was raised in forward: {e!s}", stacklevel=2)

    def _wrapped_call_impl(self, *args, **kwargs):
        if self._compiled_call_impl is not None:
            return self._compiled_call_impl(*args, **kwargs)
        return self._call_impl(*args, **kwargs)

    def _slow_forward(self, *input, **kwargs):
        """``forward``, as PyTorch calls it while tracing (gradiente's tracers need no scopes)."""
        return self.forward(*input, **kwargs)

    def compile(self, *args, **kwargs):
        """``torch.compile`` applied to this module's call, with PyTorch's checks of its arguments. gradiente
        runs the module's Python as written (see ``gradiente.compiler``), so the module computes as before."""
        from ...compiler import compile as compile_
        self._compiled_call_impl = compile_(self._call_impl, *args, **kwargs)

    # --- hooks -----------------------------------------------------------------------------------------
    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """``hook(module, args)`` (or ``hook(module, args, kwargs)``) before ``forward``; may return new args."""
        handle = RemovableHandle(self._forward_pre_hooks, extra_dict=self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """``hook(module, args, output)`` after ``forward``; a return value replaces the output."""
        handle = RemovableHandle(self._forward_hooks,
                                 extra_dict=[self._forward_hooks_with_kwargs, self._forward_hooks_always_called])
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """``hook(module, grad_output)`` when the gradients of the module's outputs are known; may return
        replacement ``grad_output``."""
        handle = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[handle.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_backward_hook(self, hook):
        """The deprecated, non-full backward hook: ``hook(module, grad_input, grad_output)`` runs as a hook of the
        autograd node that made the output's first tensor, so ``grad_input`` is that node's gradients (the
        input, weight and bias of a convolution; addmm's bias, input and weight of a Linear) rather than the
        module's inputs'. Each call warns (FutureWarning) where that differs from the module's. Cannot be mixed
        with ``register_full_backward_hook`` on one module."""
        if self._is_full_backward_hook is True:
            raise RuntimeError(_MIXED_BACKWARD_HOOKS)
        self._is_full_backward_hook = False
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        return handle

    def register_full_backward_hook(self, hook, prepend=False):
        """``hook(module, grad_input, grad_output)`` when the gradients of the module's inputs are known; may
        return replacement ``grad_input``."""
        if self._is_full_backward_hook is False:
            raise RuntimeError(_MIXED_BACKWARD_HOOKS)
        self._is_full_backward_hook = True
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def _get_backward_hooks(self):
        """``(full, non_full)``: the global and then this module's backward hooks, split by kind."""
        full, non_full = [], []
        if _global_is_full_backward_hook is True:
            full += _global_backward_hooks.values()
        elif _global_is_full_backward_hook is False:
            non_full += _global_backward_hooks.values()
        if self._is_full_backward_hook is True:
            full += self._backward_hooks.values()
        elif self._is_full_backward_hook is False:
            non_full += self._backward_hooks.values()
        return full, non_full

    def _get_backward_pre_hooks(self):
        return [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]

    def _maybe_warn_non_full_backward_hook(self, inputs, result, grad_fn):
        """PyTorch's FutureWarnings where a non-full hook's ``grad_input`` or ``grad_output`` (those of
        ``grad_fn``, the node of the output's first tensor) miss some of the module's gradients."""
        if isinstance(result, Tensor):
            result = (result,)
        elif not (isinstance(result, tuple) and all(isinstance(r, Tensor) for r in result)):
            warnings.warn("Using non-full backward hooks on a Module that does not return a single Tensor or a tuple "
                          "of Tensors is deprecated and will be removed in future versions. This hook will be "
                          "missing some of the grad_output. Please use register_full_backward_hook to get the "
                          "documented behavior.", FutureWarning, stacklevel=2)
            return
        if isinstance(inputs, Tensor):
            inputs = (inputs,)
        elif not (isinstance(inputs, tuple) and all(isinstance(i, Tensor) for i in inputs)):
            warnings.warn("Using non-full backward hooks on a Module that does not take as input a single Tensor or "
                          "a tuple of Tensors is deprecated and will be removed in future versions. This hook will "
                          "be missing some of the grad_input. Please use register_full_backward_hook to get the "
                          "documented behavior.", FutureWarning, stacklevel=2)
            return
        out_grad_fns = {r.grad_fn for r in result if r.grad_fn is not None}
        if not out_grad_fns or (len(out_grad_fns) == 1 and grad_fn not in out_grad_fns):
            warnings.warn("Using a non-full backward hook when outputs are nested in python data structure is "
                          "deprecated and will be removed in future versions. This hook will be missing some "
                          "grad_output.", FutureWarning, stacklevel=2)
        elif len(out_grad_fns) > 1:
            warnings.warn("Using a non-full backward hook when outputs are generated by different autograd Nodes is "
                          "deprecated and will be removed in future versions. This hook will be missing some "
                          "grad_output. Please use register_full_backward_hook to get the documented behavior.",
                          FutureWarning, stacklevel=2)
        elif {i.grad_fn for i in inputs if i.grad_fn is not None} != {fn for fn, _ in grad_fn.next_functions}:
            # the output's node is not the only node between the inputs and the output
            warnings.warn("Using a non-full backward hook when the forward contains multiple autograd Nodes is "
                          "deprecated and will be removed in future versions. This hook will be missing some "
                          "grad_input. Please use register_full_backward_hook to get the documented behavior.",
                          FutureWarning, stacklevel=2)

    def register_state_dict_pre_hook(self, hook):
        handle = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[handle.id] = hook
        return handle

    def _register_state_dict_hook(self, hook):
        """The older form of ``register_state_dict_post_hook``: ``hook(module, state_dict, prefix, local_metadata)``
        may also return a new state_dict, which is used when this module is the one ``state_dict()`` was
        called on."""
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook that was previously "
                               "registered via register_state_dict_post_hook")
        return _add_hook(self._state_dict_hooks, hook)

    def register_state_dict_post_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata)`` after this module's entries are written; it may
        change the state_dict in place and must return None."""
        # marks the hook as registered here, so that ``state_dict`` refuses a return value from it (as PyTorch
        # tells the two kinds apart in the one dict)
        hook._from_public_api = True
        return _add_hook(self._state_dict_hooks, hook)

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        """``register_load_state_dict_pre_hook``, where the hook is given the module first only ``with_module``."""
        return _add_hook(self._load_state_dict_pre_hooks, _WrappedHook(hook, self if with_module else None))

    def register_load_state_dict_pre_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
        error_msgs)`` before this module's entries are loaded."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_load_state_dict_post_hook(self, hook):
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    # --- iteration -------------------------------------------------------------------------------------
    def _named_members(self, get_members_fn, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix,
                                                                                                          self)]
        for module_prefix, module in modules:
            for k, v in get_members_fn(module):
                if v is None or v in memo:
                    continue
                if remove_duplicate:
                    memo.add(v)
                yield module_prefix + ("." if module_prefix else "") + k, v

    def parameters(self, recurse=True):
        """Every parameter of this module and (``recurse``) its descendants, each once, in registration order."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def children(self):
        for _, module in self.named_children():
            yield module

    def named_children(self):
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def modules(self, remove_duplicate=True):
        for _, module in self.named_modules(remove_duplicate=remove_duplicate):
            yield module

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """``(name, module)`` for this module (name ``prefix``) and every descendant, depth first."""
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            yield from module.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    # --- modes and gradients ---------------------------------------------------------------------------
    def train(self, mode=True):
        """Set training mode (Dropout drops, BatchNorm uses batch statistics) here and in every descendant."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Reset the gradients of all parameters: to None (default), or to zeros."""
        _reset_grads(self.parameters(), set_to_none)

    # --- conversion ------------------------------------------------------------------------------------
    def _apply(self, fn, recurse=True):
        """Replace the values of every parameter, gradient and buffer by ``fn(tensor)``; parameters stay the
        same objects (PyTorch's ``param.data = fn(param)``), except across the CPU and the meta device, where
        PyTorch cannot change a tensor's device in place and makes a new Parameter. ``torch.__future__``'s switches
        choose otherwise: *swap* keeps each Parameter object and swaps its whole contents with the converted one
        (``utils.swap_tensors``), *overwrite* makes new Parameters."""
        from ... import __future__ as future
        if recurse:
            for module in self.children():
                module._apply(fn)
        swap = future.get_swap_module_params_on_conversion()
        overwrite = future.get_overwrite_module_params_on_conversion()
        for key, param in self._parameters.items():
            if param is None:
                continue
            with grad_mode.no_grad():
                applied = fn(param)
            grad = param._grad
            if swap:
                self._swap_in(key, param, applied, grad, fn)
                continue
            if overwrite or is_meta(applied._data) != is_meta(param._data):
                param = self._parameters[key] = Parameter(applied, param.requires_grad)
                if grad is not None:
                    with grad_mode.no_grad():
                        param._grad = fn(grad) if overwrite else grad
                continue
            param._data = applied._data
            if grad is not None:
                with grad_mode.no_grad():
                    grad._data = fn(grad)._data
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def _swap_in(self, key, param, applied, grad, fn):
        """``_apply`` under ``torch.__future__``'s swap: the Parameter object stays, its contents become ``applied``'s
        (and its gradient's, ``fn`` of it), so an optimizer holding it sees the converted tensor."""
        from ...utils.swap import swap_tensors
        try:
            if grad is not None:
                param.grad = None
            swap_tensors(param, Parameter(applied, requires_grad=param.requires_grad))
        except Exception as e:
            if grad is not None:
                param.grad = grad
            raise RuntimeError(f"_apply(): Couldn't swap {self._get_name()}.{key}") from e
        if grad is not None:
            with grad_mode.no_grad():
                grad_applied = fn(grad)
            grad_applied.requires_grad_(grad.requires_grad)
            try:
                swap_tensors(grad, grad_applied)
            except Exception as e:
                raise RuntimeError(f"_apply(): Couldn't swap {self._get_name()}.{key}.grad") from e
            param.grad = grad

    def apply(self, fn):
        """Call ``fn(module)`` on every descendant (children first) and on this module; for initialization."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def to(self, *args, **kwargs):
        """``to(dtype)``, ``to(device)``, ``to(tensor)``: casts floating-point parameters and buffers in place.
        A device other than the CPU raises at the first tensor moved, as in a CPU-only PyTorch (so a module
        without parameters or buffers moves anywhere)."""
        dtype, place = kwargs.pop("dtype", None), None
        memory_format = kwargs.pop("memory_format", None)     # (for the 4- and 5-dim ones: conv weights)
        for a in itertools.chain(args, [kwargs.pop("device", None), kwargs.pop("tensor", None)]):
            if isinstance(a, dt.dtype):
                dtype = a
            elif isinstance(a, Tensor):
                dtype = a.dtype
            elif a is not None and not isinstance(a, bool):
                place = as_device(a, "to")
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but got desired "
                            f"dtype={dtype}")

        def convert(t):
            if place is not None:
                if is_meta(t._data) and place.type != "meta":
                    raise NotImplementedError(f"{NO_DATA} Please use torch.nn.Module.to_empty() instead of "
                                              "torch.nn.Module.to() when moving module from meta to a different "
                                              "device.")
                if check_device(place, "to", COPY):
                    t = t.to("meta")
            if memory_format is not None and t.dim() in (4, 5):
                t = t.to(memory_format=memory_format)
            return t.to(dtype) if dtype is not None and (t.is_floating_point() or t.is_complex()) else t
        if dtype is None and memory_format is None and (place is None or place.type == "cpu") and \
                not self._holds_meta():
            return self
        return self._apply(convert)

    def _holds_meta(self):
        return any(is_meta(t._data) for t in itertools.chain(self.parameters(), self.buffers()))

    def to_empty(self, *, device, recurse=True):
        """Every parameter and buffer replaced by an uninitialized tensor of its shape on ``device`` (zeros in
        gradiente): how a model built on the meta device gets memory, before its weights are loaded."""
        from ...core.creation import empty_like
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def _cast_floating(self, dtype):
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def float(self):
        return self._cast_floating(dt.float32)

    def double(self):
        return self._cast_floating(dt.float64)

    def half(self):
        return self._cast_floating(dt.float16)

    def bfloat16(self):
        return self._cast_floating(dt.bfloat16)

    def type(self, dst_type):
        return self._apply(lambda t: t.type(dst_type))

    def cpu(self):
        """This module: its parameters and buffers are on the CPU already (a meta one has no values to copy)."""
        if self._holds_meta():
            raise NotImplementedError(NO_DATA)
        return self

    def cuda(self, device=None):
        """Every parameter and buffer to a CUDA device: PyTorch's error at the first one (none: nothing to do)."""
        return self._apply(lambda t: t.cuda(device))

    def ipu(self, device=None):
        """Every parameter and buffer to an IPU, which a CPU-only build cannot reach: PyTorch's error at the first
        one (a module without any moves anywhere)."""
        return self._apply(lambda t: _to_missing_accelerator("ipu", device))

    def xpu(self, device=None):
        return self._apply(lambda t: t.xpu(device))

    def mtia(self, device=None):
        """Every parameter and buffer to an MTIA device, which a CPU-only build lacks: PyTorch's error at the first
        one (a module without any moves anywhere)."""
        return self._apply(lambda t: _to_missing_accelerator("mtia", device))

    def _replicate_for_data_parallel(self):
        """A shallow copy for one device of ``DataParallel``: the module's own dicts, without parameters (a
        replica reads the original's)."""
        replica = self.__new__(type(self))
        replica.__dict__ = self.__dict__.copy()
        replica._parameters = {}
        replica._buffers = replica._buffers.copy()
        replica._modules = replica._modules.copy()
        replica._is_replica = True
        return replica

    def share_memory(self):
        """Moves every parameter, gradient and buffer into shared memory (``Tensor.share_memory_``), in one pass,
        for ``gradiente.multiprocessing``: processes forked afterwards, or sent the module, train the same
        values. Returns ``self``."""
        tensors = [t for t in itertools.chain(self.parameters(), self.buffers()) if t is not None]
        tensors += [p._grad for p in self.parameters() if p._grad is not None]
        share_storages(tensors)
        return self

    # --- state dict ------------------------------------------------------------------------------------
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """An OrderedDict of every parameter and persistent buffer by dotted name (``"0.weight"``), detached
        but sharing memory with the module."""
        if args:
            warnings.warn("Positional args are being deprecated, use kwargs instead. Refer to "
                          "https://pytorch.org/docs/main/generated/torch.nn.Module.html#torch.nn.Module.state_dict for "
                          "details.", FutureWarning, stacklevel=2)
            destination = args[0] if destination is None else destination
            prefix = args[1] if len(args) > 1 and prefix == "" else prefix
            keep_vars = args[2] if len(args) > 2 and keep_vars is False else keep_vars
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, local_metadata)
            if getattr(hook, "_from_public_api", False):
                if result is not None:
                    raise RuntimeError("state_dict post-hook must return None")
            elif result is not None:
                destination = result
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        persistent_buffers = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in itertools.chain(self._parameters.items(), persistent_buffers.items())
                       if v is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)
        from ... import __future__ as future
        swap = future.get_swap_module_params_on_conversion()
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            input_param = state_dict[key]
            if not isinstance(input_param, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected torch.Tensor or '
                                  f"Tensor-like object from checkpoint but received {type(input_param)}")
                continue
            if param.dim() == 0 and input_param.dim() == 1 and input_param.shape[0] == 1:
                input_param = Tensor._make(input_param._data.reshape(()))
            if input_param.shape != param.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {input_param.shape} from "
                                  f"checkpoint, the shape in current model is {param.shape}.")
                continue
            if is_meta(param._data) and not is_meta(input_param._data) and not assign:
                warnings.warn(f"for {key}: copying from a non-meta parameter in the checkpoint to a meta parameter in "
                              "the current model, which is a no-op. (Did you mean to pass `assign=True` to assign "
                              "items in the state dictionary to their corresponding key in the module instead of "
                              "copying them in place?)", stacklevel=2)
            try:
                if swap:
                    self._swap_loaded(param, input_param, assign)
                elif assign:
                    if isinstance(param, Parameter):
                        input_param = (input_param.requires_grad_(param.requires_grad)
                                       if isinstance(input_param, Parameter)
                                       else Parameter(input_param, requires_grad=param.requires_grad))
                    setattr(self, name, input_param)
                else:
                    # (a meta checkpoint has no values for a real parameter: NumPy's copyto hands that to
                    # core/meta.py, which raises PyTorch's error, reported below as PyTorch reports it)
                    np.copyto(param._data, input_param._data, casting="unsafe")
                    param._bump_version()
            except Exception as ex:
                error_msgs.append(f'While {"swapping" if swap else "copying"} the parameter named "{key}", whose '
                                  f"dimensions in the model are {param.size()} and whose dimensions in the "
                                  f"checkpoint are {input_param.size()}, an exception occurred : {ex.args}.")
        extra_state_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_state_key in state_dict:
                self.set_extra_state(state_dict[extra_state_key])
            elif strict:
                missing_keys.append(extra_state_key)
        elif strict and extra_state_key in state_dict:
            unexpected_keys.append(extra_state_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_state_key:
                    input_name = key[len(prefix):].split(".", 1)
                    if len(input_name) > 1:
                        if input_name[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif input_name[0] not in local_state:
                        unexpected_keys.append(key)

    @staticmethod
    def _swap_loaded(param, input_param, assign):
        """``load_state_dict`` under ``torch.__future__``'s swap: ``param.module_load(input_param)`` swapped into
        ``param`` (``utils.swap_tensors``), a Parameter kept a Parameter."""
        from ...utils.swap import swap_tensors
        with grad_mode.no_grad():
            loaded = param.module_load(input_param, assign=assign)
            if loaded is input_param or loaded is param:
                raise RuntimeError("module_load returned one of self or other, please .detach() the result if "
                                   "returning one of the inputs in module_load")
            if isinstance(param, Parameter):
                if isinstance(loaded, Parameter):
                    loaded.requires_grad_(param.requires_grad)
                else:
                    loaded = Parameter(loaded, requires_grad=param.requires_grad)
            swap_tensors(param, loaded)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy parameters and buffers from ``state_dict`` into this module (values are copied, the module's
        tensors stay the same objects; ``assign=True`` puts the given tensors in place instead). With
        ``strict``, missing and unexpected keys are errors. Returns ``(missing_keys, unexpected_keys)``."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys, unexpected_keys, error_msgs = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)

        stack = [(self, state_dict, "")]
        post_hooks = []
        while stack:        # depth first, parent before children, children in registration order
            module, local_state_dict, prefix = stack.pop()
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(local_state_dict, prefix, local_metadata, True, missing_keys,
                                         unexpected_keys, error_msgs)
            children = []
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    children.append((child, {k: v for k, v in local_state_dict.items()
                                             if k.startswith(child_prefix)}, child_prefix))
            stack.extend(reversed(children))
            post_hooks.append(module)
        incompatible = _IncompatibleKeys(missing_keys, unexpected_keys)
        for module in post_hooks:
            for hook in module._load_state_dict_post_hooks.values():
                if hook(module, incompatible) is not None:
                    raise AssertionError("Hooks registered with ``register_load_state_dict_post_hook`` are not "
                                         "expected to return new values, if incompatible_keys need to be "
                                         "modified, it should be done inplace.")
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                self.__class__.__name__, "\n\t".join(error_msgs)))
        return incompatible

    # --- printing --------------------------------------------------------------------------------------
    def _get_name(self):
        return self.__class__.__name__

    def extra_repr(self):
        """The text inside the parentheses of this module's repr (``in_features=3, ...``); override it."""
        return ""

    def __repr__(self):
        extra_repr = self.extra_repr()
        extra_lines = extra_repr.split("\n") if extra_repr else []
        child_lines = ["(" + key + "): " + _addindent(repr(module), 2) for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        main_str = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main_str += extra_lines[0]
            else:
                main_str += "\n  " + "\n  ".join(lines) + "\n"
        return main_str + ")"
