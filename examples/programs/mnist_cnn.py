"""A convolutional classifier in the style of pytorch/examples' mnist/main.py: argparse options, a device
chosen by availability, TensorDataset and DataLoader with shuffling, Conv2d/Dropout/max_pool2d/log_softmax,
nll_loss, Adadelta with StepLR, test accuracy under no_grad, and the state dict saved and loaded back. The digits
are synthetic (8×8 strokes with noise) so that nothing is downloaded. Run it with PyTorch or gradiente: the output
is the same."""
import argparse
import os
import tempfile

import gradiente as torch
import gradiente.nn as nn
import gradiente.nn.functional as F
import gradiente.optim as optim
from gradiente.optim.lr_scheduler import StepLR
from gradiente.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(16 * 4 * 4, 32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.dropout2(x)
        return F.log_softmax(self.fc2(x), dim=1)


def synthetic_digits(n, generator):
    """Four classes of 12×12 images: a horizontal, vertical, diagonal or anti-diagonal stroke, with noise."""
    labels = torch.randint(0, 4, (n,), generator=generator)
    images = 0.3 * torch.randn(n, 1, 12, 12, generator=generator)
    rows = torch.arange(12)
    for i, label in enumerate(labels.tolist()):
        if label == 0:
            images[i, 0, 6, :] += 1.0
        elif label == 1:
            images[i, 0, :, 6] += 1.0
        elif label == 2:
            images[i, 0, rows, rows] += 1.0
        else:
            images[i, 0, rows, 11 - rows] += 1.0
    return TensorDataset(images, labels)


def train(args, model, device, train_loader, optimizer, epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        if batch_idx % args.log_interval == 0:
            print(f"Train Epoch: {epoch} [{batch_idx * len(data)}/{len(train_loader.dataset)} "
                  f"({100. * batch_idx / len(train_loader):.0f}%)]\tLoss: {loss.item():.6f}")


def test(model, device, test_loader):
    model.eval()
    test_loss, correct = 0, 0
    with torch.no_grad():
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction="sum").item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    test_loss /= len(test_loader.dataset)
    print(f"\nTest set: Average loss: {test_loss:.4f}, Accuracy: {correct}/{len(test_loader.dataset)} "
          f"({100. * correct / len(test_loader.dataset):.0f}%)\n")


def main():
    parser = argparse.ArgumentParser(description="synthetic digits")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=1.0)
    parser.add_argument("--gamma", type=float, default=0.7)
    parser.add_argument("--no-accel", action="store_true")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--log-interval", type=int, default=5)
    args = parser.parse_args()
    use_accel = not args.no_accel and torch.accelerator.is_available()
    torch.manual_seed(args.seed)
    device = torch.accelerator.current_accelerator() if use_accel else torch.device("cpu")
    print("device:", device)
    generator = torch.Generator().manual_seed(0)
    train_loader = DataLoader(synthetic_digits(256, generator), batch_size=args.batch_size, shuffle=True)
    test_loader = DataLoader(synthetic_digits(128, generator), batch_size=64)
    model = Net().to(device)
    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)
    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    for epoch in range(1, args.epochs + 1):
        train(args, model, device, train_loader, optimizer, epoch)
        test(model, device, test_loader)
        scheduler.step()
        print("lr now", scheduler.get_last_lr())
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "mnist_cnn.pt")
        torch.save(model.state_dict(), path)
        restored = Net()
        print(restored.load_state_dict(torch.load(path, weights_only=True)))
        restored.eval()
        data, _ = next(iter(test_loader))
        print("restored model agrees:", torch.equal(restored(data), model(data)))


if __name__ == "__main__":
    main()
