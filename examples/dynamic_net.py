"""A module with control flow and weight sharing (PyTorch tutorial "Learning PyTorch with Examples": control
flow + weight sharing): each forward pass draws 4 or 5 terms and reuses the parameter ``e`` for x⁴ and x⁵.

``python dynamic_net.py [steps]`` (default 30000, as the tutorial)."""
import math
import random
import sys

import gradiente as torch


class DynamicNet(torch.nn.Module):
    def __init__(self):
        """Five parameters: a, b, c, d as in the polynomial, and e shared by the higher terms."""
        super().__init__()
        self.a = torch.nn.Parameter(torch.randn(()))
        self.b = torch.nn.Parameter(torch.randn(()))
        self.c = torch.nn.Parameter(torch.randn(()))
        self.d = torch.nn.Parameter(torch.randn(()))
        self.e = torch.nn.Parameter(torch.randn(()))

    def forward(self, x):
        """A third, fourth or fifth order polynomial, chosen at random; the same ``e`` serves x⁴ and x⁵, and the
        graph built anew at each call makes that ordinary Python code."""
        y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
        for exp in range(4, random.randint(4, 6)):
            y = y + self.e * x ** exp
        return y

    def string(self):
        return (f'y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + {self.d.item()} x^3 + '
                f'{self.e.item()} x^4 ? + {self.e.item()} x^5 ?')


random.seed(0)
torch.manual_seed(0)
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 30000

x = torch.linspace(-math.pi, math.pi, 2000)
y = torch.sin(x)

model = DynamicNet()

# Training this strange model with vanilla stochastic gradient descent is tough, so we use momentum
criterion = torch.nn.MSELoss(reduction='sum')
optimizer = torch.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)
for t in range(steps):
    y_pred = model(x)

    loss = criterion(y_pred, y)
    if t % 2000 == 1999:
        print(t, loss.item())

    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f'Result: {model.string()}')
