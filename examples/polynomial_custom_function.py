"""Fit y = sin(x) with y = a + b P3(c + d x), P3 the Legendre polynomial of degree three, written as a custom
autograd Function with its own backward (PyTorch tutorial "Learning PyTorch with Examples")."""
import math

import gradiente as torch


class LegendrePolynomial3(torch.autograd.Function):
    """P3(x) = ½(5x³ - 3x), with P3'(x) = 1.5(5x² - 1)."""

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return 0.5 * (5 * input ** 3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input ** 2 - 1)


dtype = torch.float
device = torch.device("cpu")

x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
y = torch.sin(x)

# Weights initialized not too far from the correct result, so that the fit converges.
a = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
b = torch.full((), -1.0, device=device, dtype=dtype, requires_grad=True)
c = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
d = torch.full((), 0.3, device=device, dtype=dtype, requires_grad=True)

learning_rate = 5e-6
for t in range(2000):
    # To apply our Function, we use Function.apply; we alias it as P3.
    P3 = LegendrePolynomial3.apply

    y_pred = a + b * P3(c + d * x)

    loss = (y_pred - y).pow(2).sum()
    if t % 100 == 99:
        print(t, loss.item())

    loss.backward()

    # Gradient descent on the four weights, outside the graph, then zero their gradients.
    with torch.no_grad():
        for weight in (a, b, c, d):
            weight -= learning_rate * weight.grad
            weight.grad = None

print(f'Result: y = {a.item()} + {b.item()} * P3({c.item()} + {d.item()} x)')
