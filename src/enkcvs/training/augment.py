"""Data augmentation on whole batches of image tensors (no per-sample Python), on whatever device they live."""

import torch
import torch.nn.functional as F

from enkcvs.training.device import upload


def random_shift_flip(x: torch.Tensor, *, max_shift: int = 4, generator: torch.Generator) -> torch.Tensor:
    """The CIFAR augmentation of the paper's recipes: shift each image by up to ``max_shift`` pixels in each direction
    (zero padding, as a random crop of the padded image) and flip half of the images horizontally.

    Parameters
    ----------
    x : (B, C, H, W) float images.
    max_shift : largest shift in pixels.
    generator : a CPU generator; the draws do not depend on the device, so a seed gives the same batch everywhere.

    Returns
    -------
    (B, C, H, W) augmented images in ``x``'s memory format.
    """
    batch, _, height, width = x.shape
    shifts = upload(torch.randint(0, 2 * max_shift + 1, (2, batch), generator=generator), device=x.device)
    flips = upload(torch.rand(batch, generator=generator) < 0.5, device=x.device)
    padded = F.pad(x, (max_shift,) * 4)
    rows = (shifts[0, :, None] + torch.arange(height, device=x.device))[:, None, :, None]  # (B, 1, H, 1)
    columns = torch.arange(width, device=x.device)
    columns = torch.where(flips[:, None], columns.flip(0), columns) + shifts[1, :, None]  # (B, W)
    batch_index = torch.arange(batch, device=x.device)[:, None, None, None]
    channel_index = torch.arange(x.shape[1], device=x.device)[None, :, None, None]
    shifted = padded[batch_index, channel_index, rows, columns[:, None, None, :]]
    keep = torch.channels_last if x.is_contiguous(memory_format=torch.channels_last) else torch.contiguous_format
    return shifted.contiguous(memory_format=keep)


#: Augmentations a recipe can name (``recipe.augment``).
AUGMENTATIONS = {"shift_flip": random_shift_flip}
