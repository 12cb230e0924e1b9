"""A variational autoencoder in the style of pytorch/examples' vae/main.py: the reparameterization trick with
randn_like, binary cross-entropy summed over pixels plus the KL term, Adam, a test pass under no_grad, and
samples decoded from the prior. The images are synthetic 8×8 blobs, so nothing is downloaded. Run it with
PyTorch or gradiente: the output is the same."""
import gradiente as torch
from gradiente import nn, optim
from gradiente.nn import functional as F

torch.manual_seed(1)


def blobs(n, generator):
    """n images of 8×8 pixels in [0, 1]: a bright square at a random place on a dim background."""
    images = 0.1 * torch.rand(n, 8, 8, generator=generator)
    corners = torch.randint(0, 5, (n, 2), generator=generator)
    for i, (r, c) in enumerate(corners.tolist()):
        images[i, r:r + 3, c:c + 3] = 0.9
    return images.view(n, 64)


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 32)
        self.fc21 = nn.Linear(32, 4)
        self.fc22 = nn.Linear(32, 4)
        self.fc3 = nn.Linear(4, 32)
        self.fc4 = nn.Linear(32, 64)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 64))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, 64), reduction="sum")
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return BCE + KLD


generator = torch.Generator().manual_seed(7)
train_data, test_data = blobs(256, generator), blobs(64, generator)
train_loader = torch.utils.data.DataLoader(train_data, batch_size=32, shuffle=True)
model = VAE()
optimizer = optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(1, 6):
    model.train()
    train_loss = 0
    for data in train_loader:
        optimizer.zero_grad()
        recon_batch, mu, logvar = model(data)
        loss = loss_function(recon_batch, data, mu, logvar)
        loss.backward()
        train_loss += loss.item()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        recon, mu, logvar = model(test_data)
        test_loss = loss_function(recon, test_data, mu, logvar).item()
    print(f"====> Epoch: {epoch} Average loss: {train_loss / len(train_loader.dataset):.4f}"
          f"  Test set loss: {test_loss / len(test_data):.4f}")
with torch.no_grad():
    sample = model.decode(torch.randn(2, 4)).view(2, 8, 8)
    print(sample[0].round(decimals=2))
