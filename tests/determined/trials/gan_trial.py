"""The shape of Determined's GAN example (gan_mnist_pytorch): two models and two optimizers stepped in
alternation, LR schedulers (one per epoch, one per batch), noise drawn in train_batch, a TensorBoard writer,
and evaluate_batch(batch, batch_idx)."""
import os
import time
from typing import Any, Dict

import torch
from torch import nn
from torch.nn import functional as F

import tiny_data
from determined.pytorch import DataLoader, LRScheduler, PyTorchTrial, PyTorchTrialContext, TorchData

LATENT = 4


class GANTrial(PyTorchTrial):
    def __init__(self, context: PyTorchTrialContext) -> None:
        self.context = context
        self.logger = self.context.get_tensorboard_writer()
        self.generator = self.context.wrap_model(nn.Sequential(nn.Linear(LATENT, 16), nn.LeakyReLU(0.2),
                                                               nn.Linear(16, 64), nn.Tanh()))
        self.discriminator = self.context.wrap_model(nn.Sequential(nn.Linear(64, 16), nn.LeakyReLU(0.2),
                                                                   nn.Dropout(0.3), nn.Linear(16, 1), nn.Sigmoid()))
        lr, b1, b2 = (self.context.get_hparam(name) for name in ("lr", "b1", "b2"))
        self.opt_g = self.context.wrap_optimizer(torch.optim.Adam(self.generator.parameters(), lr=lr, betas=(b1, b2)))
        self.opt_d = self.context.wrap_optimizer(torch.optim.Adam(self.discriminator.parameters(), lr=lr,
                                                                  betas=(b1, b2)))
        self.lr_g = self.context.wrap_lr_scheduler(torch.optim.lr_scheduler.StepLR(self.opt_g, step_size=1, gamma=0.5),
                                                   step_mode=LRScheduler.StepMode.STEP_EVERY_EPOCH)
        self.lr_d = self.context.wrap_lr_scheduler(torch.optim.lr_scheduler.ExponentialLR(self.opt_d, gamma=0.9),
                                                   step_mode=LRScheduler.StepMode.STEP_EVERY_BATCH, frequency=2)

    def build_training_data_loader(self) -> DataLoader:
        return DataLoader(tiny_data.dataset(True), batch_size=self.context.get_per_slot_batch_size(), shuffle=True)

    def build_validation_data_loader(self) -> DataLoader:
        return DataLoader(tiny_data.dataset(False, 16), batch_size=self.context.get_per_slot_batch_size())

    def train_batch(self, batch: TorchData, epoch_idx: int, batch_idx: int) -> Dict[str, Any]:
        time.sleep(float(os.environ.get("DET_TEST_BATCH_SLEEP", 0)))   # lets a test's signal land mid-run
        imgs, _ = batch
        real = imgs.reshape(imgs.shape[0], -1) / 4.0
        valid = self.context.to_device(torch.ones(imgs.size(0), 1))
        fake = self.context.to_device(torch.zeros(imgs.size(0), 1))
        z = self.context.to_device(torch.randn(imgs.shape[0], LATENT))

        generated = self.generator(z)
        g_loss = F.binary_cross_entropy(self.discriminator(generated), valid)
        self.context.backward(g_loss)
        self.context.step_optimizer(self.opt_g)

        real_loss = F.binary_cross_entropy(self.discriminator(real), valid)
        fake_loss = F.binary_cross_entropy(self.discriminator(generated.detach()), fake)
        d_loss = (real_loss + fake_loss) / 2
        self.context.backward(d_loss)
        self.context.step_optimizer(self.opt_d, clip_grads=lambda params: torch.nn.utils.clip_grad_norm_(params, 1.0))
        self.logger.add_scalar("d_loss_per_batch", d_loss.item(), batch_idx)
        return {"loss": d_loss, "g_loss": g_loss, "d_loss": d_loss}

    def evaluate_batch(self, batch: TorchData, batch_idx: int) -> Dict[str, Any]:
        imgs, _ = batch
        valid = self.context.to_device(torch.ones(imgs.size(0), 1))
        loss = F.binary_cross_entropy(self.discriminator(imgs.reshape(imgs.shape[0], -1) / 4.0), valid)
        return {"loss": loss, "batch_idx": batch_idx}
