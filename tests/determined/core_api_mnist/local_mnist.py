"""MNIST-shaped data made on the spot (no download, no torchvision data): what the Core API tutorial scripts
here import instead of torchvision's `datasets` and `transforms` (the one line changed in them).

`datasets.MNIST(root, train, download, transform)` is 64 training or 32 test images of 1x28x28 random pixels
with random labels, the same in every process (a seeded generator); the transforms are identities.
"""
import torch
from torch.utils.data import TensorDataset


class datasets:  # noqa: N801 - torchvision's module name
    @staticmethod
    def MNIST(root=None, train=True, download=False, transform=None):  # noqa: N802
        generator = torch.Generator().manual_seed(0 if train else 1)
        count = 64 if train else 32
        images = torch.rand(count, 1, 28, 28, generator=generator)
        return TensorDataset(images, torch.randint(0, 10, (count,), generator=generator))


class transforms:  # noqa: N801
    class Compose:
        def __init__(self, steps):
            self.steps = steps

        def __call__(self, value):
            return value

    @staticmethod
    def ToTensor():  # noqa: N802
        return None

    @staticmethod
    def Normalize(mean, std):  # noqa: N802
        return None
