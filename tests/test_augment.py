"""CIFAR's batch augmentation: every output image is its input shifted by at most MAX_SHIFT pixels (zeros shifted
in), horizontally flipped or not, and the draws, made for a whole epoch, depend on the generator only."""

import torch

from enkcvs.training.augment import MAX_SHIFT, draw_shift_flip, shift_flip


def random_shift_flip(x: torch.Tensor, *, generator: torch.Generator) -> torch.Tensor:
    """One batch augmented from one step's draws."""
    drawn = draw_shift_flip(1, len(x), generator=generator)
    return shift_flip(x, shifts=drawn["shifts"][0], flips=drawn["flips"][0])


def _shifted(image: torch.Tensor, dy: int, dx: int) -> torch.Tensor:
    """``image`` (C, H, W) moved down by dy and right by dx, zeros shifted in."""
    out = torch.zeros_like(image)
    height, width = image.shape[1:]
    out[:, max(dy, 0) : height + min(dy, 0), max(dx, 0) : width + min(dx, 0)] = image[
        :, max(-dy, 0) : height - max(dy, 0), max(-dx, 0) : width - max(dx, 0)
    ]
    return out


def test_each_image_is_a_shift_of_its_input_or_of_its_mirror():
    x = torch.rand(256, 3, 10, 11) + 1.0  # no zeros, so shifted-in pixels are visible
    out = random_shift_flip(x, generator=torch.Generator().manual_seed(0))
    assert out.shape == x.shape
    kinds = set()
    for image, augmented in zip(x, out):
        matches = [
            (dy, dx, flip)
            for flip in (False, True)
            for dy in range(-MAX_SHIFT, MAX_SHIFT + 1)
            for dx in range(-MAX_SHIFT, MAX_SHIFT + 1)
            if torch.equal(augmented, _shifted(image.flip(2) if flip else image, dy, dx))
        ]
        assert len(matches) == 1
        kinds.add(matches[0])
    assert {flip for _, _, flip in kinds} == {False, True} and len(kinds) > 10


def test_same_generator_same_batch_and_memory_format_kept():
    x = torch.rand(8, 3, 5, 5).contiguous(memory_format=torch.channels_last)
    first = random_shift_flip(x, generator=torch.Generator().manual_seed(3))
    second = random_shift_flip(x, generator=torch.Generator().manual_seed(3))
    assert torch.equal(first, second)
    assert first.is_contiguous(memory_format=torch.channels_last)
    assert not torch.equal(first, random_shift_flip(x, generator=torch.Generator().manual_seed(4)))
