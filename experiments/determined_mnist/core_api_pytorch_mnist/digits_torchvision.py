"""torchvision's `datasets` and `transforms` for Determined's Core API tutorial scripts here (the one line changed
in them): `transforms` is torchvision's own; `datasets.MNIST(root, train, download, transform)` gives
scikit-learn's digits shaped as MNIST (../digits_as_mnist.py: 1,438 training or 359 test 28x28 images) as
grayscale PIL images through `transform`, as torchvision's MNIST does. Nothing is downloaded.
"""
import numpy as np
from PIL import Image
from torch.utils.data import Dataset
from torchvision import transforms  # noqa: F401  (re-exported for the scripts' import line)

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))  # ../digits_as_mnist.py
from digits_as_mnist import digits_dataset  # noqa: E402


class DigitsMNIST(Dataset):
    def __init__(self, root=None, train=True, download=False, transform=None, target_transform=None):
        images, labels = digits_dataset(train, mean=0.0, std=1.0).tensors     # floats in [0, 1]
        self.images = (images[:, 0].numpy() * 255).round().astype(np.uint8)
        self.labels = [int(label) for label in labels]
        self.transform, self.target_transform = transform, target_transform

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, index):
        image, label = Image.fromarray(self.images[index], mode="L"), self.labels[index]
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            label = self.target_transform(label)
        return image, label


class datasets:  # noqa: N801  (torchvision's module name)
    MNIST = DigitsMNIST
