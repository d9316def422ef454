"""The network of the Trainer-API example (its own module, as a Trainer-API project keeps it): a small
convolutional network on the 8x8 digits."""
import torch
from torch import nn


class DigitsNet(nn.Module):
    def __init__(self, n_filters1: int, n_filters2: int, dropout1: float, dropout2: float) -> None:
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, n_filters1, 3, padding=1), nn.ReLU(),
                                      nn.Conv2d(n_filters1, n_filters2, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.head = nn.Sequential(nn.Dropout(dropout1), nn.Flatten(), nn.Linear(n_filters2 * 16, 64), nn.ReLU(),
                                  nn.Dropout(dropout2), nn.Linear(64, 10))

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(self.head(self.features(images)), dim=1)
