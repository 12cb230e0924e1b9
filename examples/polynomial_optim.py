"""Fit y = sin(x) with nn.Sequential and let an optimizer update the weights: RMSprop by default, or SGD /
Adam given as the first argument (PyTorch tutorial "Learning PyTorch with Examples": optim)."""
import math
import sys

import gradiente as torch

torch.manual_seed(0)

x = torch.linspace(-math.pi, math.pi, 2000)
y = torch.sin(x)

p = torch.tensor([1, 2, 3])
xx = x.unsqueeze(-1).pow(p)

model = torch.nn.Sequential(
    torch.nn.Linear(3, 1),
    torch.nn.Flatten(0, 1)
)
loss_fn = torch.nn.MSELoss(reduction='sum')

name = sys.argv[1] if len(sys.argv) > 1 else "RMSprop"
optimizers = {
    "RMSprop": lambda params: torch.optim.RMSprop(params, lr=1e-3),
    "SGD": lambda params: torch.optim.SGD(params, lr=1e-6, momentum=0.9),
    "Adam": lambda params: torch.optim.Adam(params, lr=1e-2),
}
optimizer = optimizers[name](model.parameters())
print(optimizer)

for t in range(2000):
    y_pred = model(xx)

    loss = loss_fn(y_pred, y)
    if t % 100 == 99:
        print(t, loss.item())

    # Zero the gradients (they accumulate in .grad otherwise), backward, then one optimizer step.
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

linear_layer = model[0]
print(f'Result: y = {linear_layer.bias.item()} + {linear_layer.weight[:, 0].item()} x + '
      f'{linear_layer.weight[:, 1].item()} x^2 + {linear_layer.weight[:, 2].item()} x^3')
