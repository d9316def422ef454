"""A Trial-API experiment with two models and two optimizers (the shape of Determined's GAN example), written
for playground's examples: a generator of 8x8 digits from noise and a discriminator telling them from real
ones, stepped in alternation in each train_batch; validation scores the discriminator on real digits."""
import os
import sys
from typing import Any, Dict

import torch
from torch import nn

from determined import pytorch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))   # ../digits_data.py
from digits_data import digits  # noqa: E402


class Generator(nn.Module):
    def __init__(self, latent_dim: int) -> None:
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(latent_dim, 128), nn.LeakyReLU(0.2), nn.Linear(128, 64), nn.Sigmoid())

    def forward(self, noise: torch.Tensor) -> torch.Tensor:
        return self.layers(noise).view(-1, 1, 8, 8)


class Discriminator(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.Sequential(nn.Flatten(), nn.Linear(64, 128), nn.LeakyReLU(0.2), nn.Linear(128, 1),
                                    nn.Sigmoid())

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.layers(images)


class DigitsGANTrial(pytorch.PyTorchTrial):
    def __init__(self, context: pytorch.PyTorchTrialContext) -> None:
        self.context = context
        self.latent_dim = context.get_hparam("latent_dim")
        betas = (context.get_hparam("b1"), context.get_hparam("b2"))
        self.generator = context.wrap_model(Generator(self.latent_dim))
        self.discriminator = context.wrap_model(Discriminator())
        self.opt_g = context.wrap_optimizer(torch.optim.Adam(self.generator.parameters(), context.get_hparam("lr"),
                                                             betas=betas))
        self.opt_d = context.wrap_optimizer(torch.optim.Adam(self.discriminator.parameters(),
                                                             context.get_hparam("lr"), betas=betas))

    def build_training_data_loader(self) -> pytorch.DataLoader:
        return pytorch.DataLoader(digits(train=True, normalized=False),
                                  batch_size=self.context.get_per_slot_batch_size(), shuffle=True)

    def build_validation_data_loader(self) -> pytorch.DataLoader:
        return pytorch.DataLoader(digits(train=False, normalized=False),
                                  batch_size=self.context.get_per_slot_batch_size())

    def train_batch(self, batch: pytorch.TorchData, epoch_idx: int, batch_idx: int) -> Dict[str, Any]:
        images, _ = batch
        real = torch.ones(len(images), 1, device=images.device)
        fake = torch.zeros(len(images), 1, device=images.device)
        generated = self.generator(torch.randn(len(images), self.latent_dim, device=images.device))

        g_loss = nn.functional.binary_cross_entropy(self.discriminator(generated), real)
        self.context.backward(g_loss)
        self.context.step_optimizer(self.opt_g)

        d_loss = (nn.functional.binary_cross_entropy(self.discriminator(images), real)
                  + nn.functional.binary_cross_entropy(self.discriminator(generated.detach()), fake)) / 2
        self.context.backward(d_loss)
        self.context.step_optimizer(self.opt_d)
        return {"loss": d_loss, "g_loss": g_loss, "d_loss": d_loss}

    def evaluate_batch(self, batch: pytorch.TorchData) -> Dict[str, Any]:
        images, _ = batch
        real = torch.ones(len(images), 1, device=images.device)
        return {"loss": nn.functional.binary_cross_entropy(self.discriminator(images), real).item()}
