"""Stochastic gradient descent, with momentum, dampening, Nesterov momentum and weight decay."""

from ..core.tensor import Tensor
from . import _kernels as K
from .optimizer import Optimizer, _changed, _check_nonnegative, _closure_loss

__all__ = ["SGD"]


class SGD(Optimizer):
    """``p -= lr * g`` where ``g`` is the gradient (plus ``weight_decay * p``), or with ``momentum`` the buffer
    ``b = momentum * b + (1 - dampening) * g`` (``g + momentum * b`` with ``nesterov``). Same operations, in
    the same order and rounding, as PyTorch's single-tensor implementation. A sparse gradient (``nn.Embedding(sparse=
    True)``) updates as its dense form does, which is PyTorch's update; with ``weight_decay`` it is refused, as in
    PyTorch."""

    _takes_sparse_gradients = True

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *, maximize=False,
                 foreach=None, differentiable=False, fused=None):
        _check_nonnegative(**{"learning rate": lr, "momentum value": momentum, "weight_decay value": weight_decay})
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening, "weight_decay": weight_decay,
                    "nesterov": nesterov, "maximize": maximize, "foreach": foreach, "differentiable": differentiable,
                    "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One update of every parameter that has a gradient. ``closure`` re-evaluates and returns the loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
            weight_decay, nesterov = group["weight_decay"], group["nesterov"]
            for p, grad in self._params_with_grad(group):
                param = p._data
                if weight_decay != 0 and p.grad.is_sparse:
                    # (PyTorch adds the decay to the sparse gradient, which its add refuses)
                    raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
                if weight_decay != 0:
                    grad = K.add_scaled(grad, param, weight_decay)
                if momentum != 0:
                    state = self.state[p]
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = state["momentum_buffer"] = Tensor._make(K.new_momentum_buffer(grad))
                    else:
                        buf._data *= K.scalar(momentum, buf._data)
                        K.add_scaled(buf._data, grad, 1 - dampening, out=buf._data)
                        _changed(buf)
                    grad = K.add_scaled(grad, buf._data, momentum) if nesterov else buf._data
                # (through the momentum buffer's own matrix when the step is the buffer: optim/_kernels.py)
                K.add_into(param, grad, -lr)
                _changed(p)
        return loss
