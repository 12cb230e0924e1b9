"""A small DCGAN in the style of pytorch/examples' dcgan/main.py: a generator of transposed convolutions with
batch normalization, a discriminator of strided convolutions with LeakyReLU, weights initialized through
``classname.find('Conv')``, BCELoss with real and fake labels, two Adam optimizers with betas (0.5, 0.999), and
``fake.detach()`` for the discriminator's step. The real images are synthetic 16×16 rings. Run it with PyTorch or
gradiente: the output is the same."""
import gradiente as torch
import gradiente.nn as nn
import gradiente.optim as optim

torch.manual_seed(999)
nz, ngf, ndf, nc = 8, 8, 8, 1


def rings(n):
    grid = torch.linspace(-1, 1, 16)
    yy, xx = torch.meshgrid(grid, grid, indexing="ij")
    radius = 0.4 + 0.3 * torch.rand(n, 1, 1)
    ring = torch.exp(-((xx ** 2 + yy ** 2).sqrt() - radius) ** 2 / 0.02)
    return (2 * ring - 1).unsqueeze(1)


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        nn.init.normal_(m.weight.data, 0.0, 0.02)
    elif classname.find("BatchNorm") != -1:
        nn.init.normal_(m.weight.data, 1.0, 0.02)
        nn.init.constant_(m.bias.data, 0)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 4, 4, 1, 0, bias=False),
            nn.BatchNorm2d(ngf * 4),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, nc, 4, 2, 1, bias=False),
            nn.Tanh(),
        )

    def forward(self, input):
        return self.main(input)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False),
            nn.Sigmoid(),
        )

    def forward(self, input):
        return self.main(input).view(-1, 1).squeeze(1)


netG, netD = Generator(), Discriminator()
netG.apply(weights_init)
netD.apply(weights_init)
print(netG)
criterion = nn.BCELoss()
fixed_noise = torch.randn(4, nz, 1, 1)
real_label, fake_label = 1.0, 0.0
optimizerD = optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
optimizerG = optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
for i in range(12):
    real = rings(16)
    batch_size = real.size(0)
    netD.zero_grad()
    label = torch.full((batch_size,), real_label, dtype=real.dtype)
    output = netD(real)
    errD_real = criterion(output, label)
    errD_real.backward()
    D_x = output.mean().item()
    noise = torch.randn(batch_size, nz, 1, 1)
    fake = netG(noise)
    label.fill_(fake_label)
    output = netD(fake.detach())
    errD_fake = criterion(output, label)
    errD_fake.backward()
    D_G_z1 = output.mean().item()
    errD = errD_real + errD_fake
    optimizerD.step()
    netG.zero_grad()
    label.fill_(real_label)
    output = netD(fake)
    errG = criterion(output, label)
    errG.backward()
    D_G_z2 = output.mean().item()
    optimizerG.step()
    if i % 3 == 0:
        print(f"[{i}/12] Loss_D: {errD.item():.4f} Loss_G: {errG.item():.4f} D(x): {D_x:.4f} "
              f"D(G(z)): {D_G_z1:.4f} / {D_G_z2:.4f}")
with torch.no_grad():
    fake = netG(fixed_noise).detach()
print("fixed-noise images:", tuple(fake.shape), f"mean {fake.mean():.4f}, std {fake.std():.4f}")
