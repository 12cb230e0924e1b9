"""Stochastic Weight Averaging and exponential moving averages of a model's weights (``AveragedModel``),
the SWA learning-rate schedule (``SWALR``) and the BatchNorm statistics pass (``update_bn``), as
``torch.optim.swa_utils``."""
import itertools
import math
import warnings
from copy import deepcopy

import gradiente

from .._compat import zip_strict
from ..core.grad_mode import no_grad
from ..nn.modules.batchnorm import _BatchNorm
from ..nn.modules.module import Module
from .lr_scheduler import LRScheduler, _format_param

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn", "get_ema_avg_fn",
           "get_swa_avg_fn"]


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def get_ema_multi_avg_fn(decay=0.999):
    """``fn(ema_params, current_params, num_averaged)``: each ``ema = lerp(ema, current, 1 - decay)`` in place
    (integer tensors: ``ema * decay + current * (1 - decay)``)."""
    _check_decay(decay)

    def ema_update(ema_param_list, current_param_list, _):
        with no_grad():
            if ema_param_list[0].is_floating_point() or ema_param_list[0].is_complex():
                for p_ema, p_model in zip_strict(ema_param_list, current_param_list):
                    p_ema.lerp_(p_model, 1 - decay)
            else:
                for p_ema, p_model in zip_strict(ema_param_list, current_param_list):
                    p_ema.copy_(p_ema * decay + p_model * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """``fn(averaged_params, current_params, num_averaged)``: the running mean, in place:
    ``avg += (current - avg) / (num_averaged + 1)`` (for floats, ``lerp`` with weight ``1 / (n + 1)``)."""

    def swa_update(averaged_param_list, current_param_list, num_averaged):
        with no_grad():
            if averaged_param_list[0].is_floating_point() or averaged_param_list[0].is_complex():
                weight = 1 / (num_averaged + 1)
                weight = weight.item() if isinstance(weight, gradiente.Tensor) else weight
                for p_avg, p_model in zip_strict(averaged_param_list, current_param_list):
                    p_avg.lerp_(p_model, weight)
            else:
                for p_avg, p_model in zip_strict(averaged_param_list, current_param_list):
                    diff = p_model - p_avg
                    if isinstance(num_averaged, gradiente.Tensor):
                        p_avg.addcdiv_(diff, num_averaged + 1)
                    else:
                        p_avg.add_(diff, alpha=1.0 / (num_averaged + 1))
    return swa_update


def get_ema_avg_fn(decay=0.999):
    """``fn(ema_param, current_param, num_averaged)`` returning ``decay * ema + (1 - decay) * current``."""
    _check_decay(decay)

    def ema_update(ema_param, current_param, num_averaged):
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    """``fn(averaged_param, current_param, num_averaged)`` returning ``avg + (current - avg) / (n + 1)``."""

    def swa_update(averaged_param, current_param, num_averaged):
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` (in ``self.module``) whose parameters are an average of the values passed to
    ``update_parameters`` over time: the plain mean (SWA) by default, or what ``avg_fn`` (one tensor at a
    time) or ``multi_avg_fn`` (lists, in place) computes, e.g. ``get_ema_multi_avg_fn(0.999)``.
    ``n_averaged`` (a long buffer) counts the updates. ``use_buffers``: average the buffers too; otherwise
    they are copied from ``model``. Calling it calls the averaged copy."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", gradiente.tensor(0, dtype=gradiente.long))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        """Fold ``model``'s current parameters (and buffers with ``use_buffers``) into the average; the
        first call copies them."""
        if self.use_buffers:
            self_param = itertools.chain(self.module.parameters(), self.module.buffers())
            model_param = itertools.chain(model.parameters(), model.buffers())
        else:
            self_param, model_param = self.parameters(), model.parameters()
        averaged, current = [], []
        copy_param = bool(self.n_averaged == 0)
        for p_averaged, p_model in zip(self_param, model_param):
            averaged.append(p_averaged.detach())
            current.append(p_model.detach())
            if copy_param:
                p_averaged.detach().copy_(p_model.detach())
        if self.n_averaged > 0:
            if self.multi_avg_fn is not None:
                # One call per dtype, as PyTorch groups the lists (an integer buffer goes its own way).
                for averaged_group, current_group in _grouped_by_dtype(averaged, current):
                    self.multi_avg_fn(averaged_group, current_group, self.n_averaged)
            elif self.avg_fn is None:
                # PyTorch's CPU path: the one-tensor SWA mean, parameter by parameter.
                avg_fn = get_swa_avg_fn()
                for p_averaged, p_model in zip_strict(averaged, current):
                    p_averaged.copy_(avg_fn(p_averaged, p_model, self.n_averaged))
            else:
                for p_averaged, p_model in zip_strict(averaged, current):
                    p_averaged.copy_(self.avg_fn(p_averaged, p_model, self.n_averaged))
        if not self.use_buffers:
            for b_swa, b_model in zip_strict(self.module.buffers(), model.buffers()):
                b_swa.detach().copy_(b_model.detach())
        with no_grad():
            self.n_averaged += 1


def _grouped_by_dtype(averaged, current):
    """``(averaged, current)`` pairs of lists, one per dtype of ``averaged``, in order of first appearance."""
    groups = {}
    for a, c in zip_strict(averaged, current):
        pair = groups.setdefault(a.dtype, ([], []))
        pair[0].append(a)
        pair[1].append(c)
    return list(groups.values())


def update_bn(loader, model, device=None):
    """Recompute the running statistics of every BatchNorm in ``model`` with one pass over ``loader``
    (batches, or tuples/lists whose first item is the input), as a cumulative average (momentum None for
    the pass). The model's training mode and the momenta are restored."""
    with no_grad():
        momenta = {}
        for module in model.modules():
            if isinstance(module, _BatchNorm):
                module.reset_running_stats()
                momenta[module] = module.momentum
        if not momenta:
            return
        was_training = model.training
        model.train()
        for module in momenta:
            module.momentum = None
        for input in loader:
            if isinstance(input, (list, tuple)):
                input = input[0]
            if device is not None:
                input = input.to(device)
            model(input)
        for bn_module, momentum in momenta.items():
            bn_module.momentum = momentum
        model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's learning rate to ``swa_lr`` (a number or one per group) over ``anneal_epochs``
    steps, by cosine (``"cos"``) or linearly, then keeps it there."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip_strict(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        """The learning rates of this step: the start value (recovered from the previous step's) moved a
        fraction ``anneal(t)`` of the way to ``swa_lr``."""
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                          UserWarning, stacklevel=2)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group["swa_lr"] * alpha + lr * (1 - alpha)
                for group, lr in zip_strict(self.optimizer.param_groups, prev_lrs)]

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self):
        """The scheduler's attributes but the optimizer and the anneal function."""
        return {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        """Restore what ``state_dict()`` returned."""
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
