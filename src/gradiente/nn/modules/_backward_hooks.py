"""Module backward hooks (``register_full_backward_hook``/``_pre_hook``), as PyTorch builds them.

The module's tensor inputs and outputs each pass through one identity Function. The gradient reaching the
outputs' identity node is the module's ``grad_output`` (pre-hooks run there); the gradient leaving the
inputs' identity node is its ``grad_input`` (hooks run there, and may replace it).
"""
import os
import sys
import warnings

from ...autograd.function import Function
from ...core import grad_mode
from ...core.tensor import Tensor

_LIBRARY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep
_HOOKS_ON_OUTPUTS = ("Full backward hook is firing when gradients are computed with respect to module outputs since no "
                     "inputs require gradients. See https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                     "#torch.nn.Module.register_full_backward_hook for more details.")


def _warn_at_caller(message):
    """Warn at the line outside gradiente that started this backward pass (PyTorch's warning, raised from
    inside its engine, names the ``backward()`` call)."""
    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_code.co_filename.startswith(_LIBRARY):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, stacklevel=level)


class BackwardHookFunction(Function):
    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[a for a in args if isinstance(a, Tensor) and not a.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *grads):
        return grads


class BackwardHook:
    """One module call's hook state: ``grad_outputs`` captured on the way back, handed to the hooks."""

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs = None
        self.n_outputs = -1
        self.output_tensors_index = None
        self.n_inputs = -1
        self.input_tensors_index = None

    @staticmethod
    def _pack_with_none(indices, values, size):
        res = [None] * size
        for idx, val in zip(indices, values):
            res[idx] = val
        return tuple(res)

    @staticmethod
    def _unpack_none(indices, values):
        return tuple(values[idx] for idx in indices)

    def _apply_on_tensors(self, register, args):
        """Pass the tensors of ``args`` through the identity Function and ``register`` a hook on its node."""
        tensors_idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in tensors_idx]
        if not (grad_mode.is_grad_enabled() and any(t.requires_grad for t in tensors)):
            return args, None
        new_tensors = BackwardHookFunction.apply(*tensors)
        grad_fns = [t.grad_fn for t in new_tensors if isinstance(t, Tensor) and t.grad_fn is not None]
        register(grad_fns[0])
        arg_list = list(args)
        for idx, val in zip(tensors_idx, new_tensors):
            arg_list[idx] = val
        return tuple(arg_list), tensors_idx

    def setup_input_hook(self, args):
        def register(grad_fn):
            def hook(grad_input, _):
                if self.grad_outputs is None:       # this backward pass did not come through the outputs
                    return None
                res = self._pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
                for user_hook in self.user_hooks:
                    out = user_hook(self.module, res, self.grad_outputs)
                    if out is None:
                        continue
                    if len(out) != len(res):
                        raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(out)}, "
                                           f"but expected {len(res)}")
                    res = out
                self.grad_outputs = None
                return self._unpack_none(self.input_tensors_index, res)
            grad_fn.register_hook(hook)

        new_args, self.input_tensors_index = self._apply_on_tensors(register, args)
        self.n_inputs = len(args)
        return new_args

    def setup_output_hook(self, output):
        def register(grad_fn):
            def pre_hook(grad_output):
                self.grad_outputs = self._pack_with_none(self.output_tensors_index, grad_output, self.n_outputs)
                for user_pre_hook in self.user_pre_hooks:
                    replaced = user_pre_hook(self.module, self.grad_outputs)
                    if replaced is None:
                        continue
                    if len(replaced) != len(self.grad_outputs):
                        raise RuntimeError(f"Backward pre hook returned an invalid number of grad_output, got "
                                           f"{len(replaced)}, but expected {len(self.grad_outputs)}")
                    self.grad_outputs = tuple(replaced)
                local_grad_outputs = self.grad_outputs
                if self.input_tensors_index is None:    # no input requires grad: the hooks run here
                    _warn_at_caller(_HOOKS_ON_OUTPUTS)
                    grad_inputs = self._pack_with_none([], [], self.n_inputs)
                    for user_hook in self.user_hooks:
                        res = user_hook(self.module, grad_inputs, self.grad_outputs)
                        if res is not None and not (isinstance(res, tuple) and all(el is None for el in res)):
                            raise RuntimeError("Backward hook for Modules where no input requires gradient should "
                                               "always return None or None for all gradients.")
                    self.grad_outputs = None
                return self._unpack_none(self.output_tensors_index, local_grad_outputs)
            grad_fn.register_prehook(pre_hook)

        is_tuple = isinstance(output, tuple)
        outputs = output if is_tuple else (output,)
        new_outputs, self.output_tensors_index = self._apply_on_tensors(register, outputs)
        self.n_outputs = len(outputs)
        return new_outputs if is_tuple else new_outputs[0]
