"""Model registry keyed by name (``create_model`` rejects unknown names)."""

from collections.abc import Callable

import torch
from torch import nn

#: Model builders by name: builder(input_shape=(C, H, W), num_classes=Q) -> nn.Module.
MODELS: dict[str, Callable[..., nn.Module]] = {}


def register_model(builder: Callable[..., nn.Module]) -> Callable[..., nn.Module]:
    """Add ``builder`` to :data:`MODELS` under its function name."""
    MODELS[builder.__name__] = builder
    return builder


def create_model(name: str, *, input_shape: tuple[int, int, int], num_classes: int) -> nn.Module:
    """Build a registered model for inputs of shape (C, H, W) and Q classes."""
    if name not in MODELS:
        raise KeyError(f"unknown model {name!r}; registered models: {sorted(MODELS)}")
    return MODELS[name](input_shape=input_shape, num_classes=num_classes)


def _conv_block(in_channels: int, out_channels: int) -> list[nn.Module]:
    return [nn.Conv2d(in_channels, out_channels, 3, padding=1, bias=False), nn.BatchNorm2d(out_channels), nn.ReLU()]


@register_model
def cnn4(*, input_shape: tuple[int, int, int], num_classes: int) -> nn.Module:
    """The paper's MNIST network: conv32-pool-conv64-pool-FC128-FC (3x3 same convs, BN + ReLU)."""
    channels, height, width = input_shape
    flat = 64 * (height // 4) * (width // 4)
    return nn.Sequential(
        *_conv_block(channels, 32),
        nn.MaxPool2d(2),
        *_conv_block(32, 64),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(flat, 128, bias=False),
        nn.BatchNorm1d(128),
        nn.ReLU(),
        nn.Linear(128, num_classes),
    )


@register_model
def mlp(*, input_shape: tuple[int, int, int], num_classes: int) -> nn.Module:
    """A one-hidden-layer perceptron (256 units, BN + ReLU): a fast baseline for small images or tables."""
    return nn.Sequential(
        nn.Flatten(),
        nn.Linear(int(torch.tensor(input_shape).prod()), 256, bias=False),
        nn.BatchNorm1d(256),
        nn.ReLU(),
        nn.Linear(256, num_classes),
    )
