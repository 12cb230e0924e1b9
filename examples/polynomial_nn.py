"""Fit y = sin(x) with nn.Sequential(Linear(3, 1), Flatten(0, 1)) on the features (x, x², x³) and MSELoss,
updating the parameters by hand (PyTorch tutorial "Learning PyTorch with Examples": nn module)."""
import math

import gradiente as torch

torch.manual_seed(0)

x = torch.linspace(-math.pi, math.pi, 2000)
y = torch.sin(x)

# The output y is a linear function of (x, x^2, x^3), so we can treat it as a linear layer neural network.
# x.unsqueeze(-1) has shape (2000, 1) and p has shape (3,); broadcasting gives xx of shape (2000, 3).
p = torch.tensor([1, 2, 3])
xx = x.unsqueeze(-1).pow(p)

# The Linear module holds the weight and bias; Flatten flattens the output of the linear layer to a 1D tensor,
# to match the shape of y.
model = torch.nn.Sequential(
    torch.nn.Linear(3, 1),
    torch.nn.Flatten(0, 1)
)
print(model)

loss_fn = torch.nn.MSELoss(reduction='sum')

learning_rate = 1e-6
for t in range(2000):
    y_pred = model(xx)

    loss = loss_fn(y_pred, y)
    if t % 100 == 99:
        print(t, loss.item())

    model.zero_grad()
    loss.backward()

    with torch.no_grad():
        for param in model.parameters():
            param -= learning_rate * param.grad

# You can access the first layer of `model` like accessing the first item of a list
linear_layer = model[0]

print(f'Result: y = {linear_layer.bias.item()} + {linear_layer.weight[:, 0].item()} x + '
      f'{linear_layer.weight[:, 1].item()} x^2 + {linear_layer.weight[:, 2].item()} x^3')
