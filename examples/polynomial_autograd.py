"""Fit y = sin(x) with a third-order polynomial; autograd computes the gradients (PyTorch tutorial
"Learning PyTorch with Examples": Autograd)."""
import math

import gradiente as torch

torch.manual_seed(0)
dtype = torch.float
device = torch.device("cpu")

# Create Tensors to hold input and outputs.
x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
y = torch.sin(x)

# Create random Tensors for weights. Setting requires_grad=True indicates that we want to compute gradients
# with respect to these Tensors during the backward pass.
a = torch.randn((), device=device, dtype=dtype, requires_grad=True)
b = torch.randn((), device=device, dtype=dtype, requires_grad=True)
c = torch.randn((), device=device, dtype=dtype, requires_grad=True)
d = torch.randn((), device=device, dtype=dtype, requires_grad=True)

learning_rate = 1e-6
for t in range(2000):
    # Forward pass: compute predicted y using operations on Tensors.
    y_pred = a + b * x + c * x ** 2 + d * x ** 3

    # Compute and print loss; loss is a Tensor of shape (), loss.item() is its value.
    loss = (y_pred - y).pow(2).sum()
    if t % 100 == 99:
        print(t, loss.item())

    # Backward pass: a.grad, b.grad, c.grad and d.grad now hold the gradient of the loss.
    loss.backward()

    # Update the weights by gradient descent, outside the graph (no_grad), then zero the gradients.
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad

        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None

print(f'Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3')
