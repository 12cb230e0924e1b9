"""The ``autograd.Function`` behind ``nn.CrossMapLRN2d``, as PyTorch keeps it in ``torch.nn.modules._functions``
(its node is ``CrossMapLRN2dBackward``).

PyTorch's legacy (Lua Torch) local response normalisation across channels, computed as PyTorch computes it: each
channel's sum of squares is a running sum, started from the first ``(size - 1) // 2 + 1`` channels and updated one
channel at a time, and the backward is PyTorch's own formula. Neither is the textbook one: the running sum keeps
some far channels in it, and the backward is not the derivative of that forward (PyTorch's gradcheck of
``CrossMapLRN2d`` fails too). They are kept as PyTorch has them, so that a program gives the same numbers.
"""
import numpy as np

from ...autograd.function import Function, once_differentiable


def _channel_sums(square, size):
    """The legacy running sum of squares along the channels of (N, C, H, W) ``square``."""
    channels = square.shape[1]
    pre_pad = int((size - 1) / 2 + 1)
    scale = np.empty_like(square)
    scale[:, 0] = square[:, :min(pre_pad, channels)].sum(axis=1)
    for c in range(1, channels):
        scale[:, c] = scale[:, c - 1]
        if c < channels - pre_pad + 1:
            scale[:, c] += square[:, c + pre_pad - 1]
        if c > pre_pad:
            scale[:, c] -= square[:, c - pre_pad]
    return scale


def _scale(x, size, alpha, k):
    """k + α/size · (the legacy running sum of squares), the denominator before its power."""
    return _channel_sums(x * x, size) * x.dtype.type(alpha / size) + x.dtype.type(k)


class CrossMapLRN2d(Function):
    """out = x · (k + α/size · S)^-β, S the legacy running sum of squares over neighbouring channels;
    dx = PyTorch's legacy formula (see the module docstring).

    Written with ``setup_context`` (PyTorch's is an old-style Function, with ``ctx`` in ``forward``), which changes
    nothing a program sees except that ``vmap`` can run it, once per example, where PyTorch's refuses."""

    generate_vmap_rule = True

    @staticmethod
    def forward(input, size, alpha=1e-4, beta=0.75, k=1):
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        x = input.detach().numpy()
        return input.new_tensor(np.power(_scale(x, size, alpha, k), x.dtype.type(-beta)) * x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        input, size, alpha, beta, k = (tuple(inputs) + (1e-4, 0.75, 1)[len(inputs) - 2:])[:5]
        ctx.size, ctx.alpha, ctx.beta = size, alpha, beta
        ctx.scale = _scale(input.detach().numpy(), size, alpha, k)
        ctx.save_for_backward(input, output)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        input, output = ctx.saved_tensors
        x, out, g, scale = input.numpy(), output.numpy(), grad_output.numpy(), ctx.scale
        size, channels = ctx.size, x.shape[1]
        first = int(ctx.size - (ctx.size - 1) / 2)
        if first + channels > channels + size - 1:
            raise RuntimeError(f"start ({first}) + length ({channels}) exceeds dimension size "
                               f"({channels + size - 1}).")
        grad = np.power(scale, x.dtype.type(-ctx.beta)) * g
        ratios = np.zeros((x.shape[0], channels + size - 1) + x.shape[2:], dtype=x.dtype)
        ratios[:, first:first + channels] = g * out / scale
        running = ratios[:, :size - 1].sum(axis=1)
        coefficient = x.dtype.type(2 * ctx.alpha * ctx.beta / size)
        for c in range(channels):
            running += ratios[:, c + size - 1]
            grad[:, c] -= coefficient * x[:, c] * running
            running -= ratios[:, c]
        return input.new_tensor(grad), None, None, None, None
