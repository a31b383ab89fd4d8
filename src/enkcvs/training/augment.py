"""Data augmentation on whole batches of image tensors (no per-sample Python), on whatever device they live: the
draws are made for a whole epoch at once (:func:`enkcvs.training.batches.epoch_draws`), so a step only reads them."""

import torch
import torch.nn.functional as F

#: The largest shift of :func:`shift_flip`, in pixels (the paper's CIFAR recipes: 4).
MAX_SHIFT = 4


def draw_shift_flip(steps: int, batch_size: int, *, generator: torch.Generator) -> dict[str, torch.Tensor]:
    """The draws of ``steps`` batches of :func:`shift_flip`, from a CPU ``generator`` (so a seed gives the same
    batches on every device): ``shifts`` (steps, 2, B) rows and columns in 0..2 * MAX_SHIFT, ``flips`` (steps, B)."""
    shifts = torch.randint(0, 2 * MAX_SHIFT + 1, (steps, 2, batch_size), generator=generator)
    return {"shifts": shifts, "flips": torch.rand(steps, batch_size, generator=generator) < 0.5}


def shift_flip(x: torch.Tensor, *, shifts: torch.Tensor, flips: torch.Tensor) -> torch.Tensor:
    """The CIFAR augmentation of the paper's recipes: shift each image by up to :data:`MAX_SHIFT` pixels in each
    direction (zero padding, as a random crop of the padded image) and flip the images ``flips`` says horizontally.

    Parameters
    ----------
    x : (B, C, H, W) float images.
    shifts : (2, B) row and column offsets into the padded image, in 0..2 * MAX_SHIFT, on ``x``'s device.
    flips : (B,) bool, on ``x``'s device.

    Returns
    -------
    (B, C, H, W) augmented images in ``x``'s memory format.
    """
    batch, channels, height, width = x.shape
    padded = F.pad(x, (MAX_SHIFT,) * 4)
    rows = (shifts[0, :, None] + torch.arange(height, device=x.device))[:, None, :, None]  # (B, 1, H, 1)
    columns = torch.arange(width, device=x.device)
    columns = torch.where(flips[:, None], columns.flip(0), columns) + shifts[1, :, None]  # (B, W)
    batch_index = torch.arange(batch, device=x.device)[:, None, None, None]
    channel_index = torch.arange(channels, device=x.device)[None, :, None, None]
    shifted = padded[batch_index, channel_index, rows, columns[:, None, None, :]]
    keep = torch.channels_last if x.is_contiguous(memory_format=torch.channels_last) else torch.contiguous_format
    return shifted.contiguous(memory_format=keep)


#: Augmentations a recipe can name (``recipe.augment``): name -> (draws of an epoch, the augmentation).
AUGMENTATIONS = {"shift_flip": (draw_shift_flip, shift_flip)}
