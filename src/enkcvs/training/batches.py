"""Batches as training and prediction take them: in-memory inputs (images, token ids) uploaded to the device once and
batched there, inputs too large for memory (image files) streamed by a DataLoader with worker processes instead.

Every random draw of an epoch is made at its start (:func:`epoch_draws`): the batch order, each batch's augmentation,
mixup partners and lambda, drawn from the training's own generators in a fixed order and uploaded at once. A step
only reads its row of them, so it waits on nothing on the host, and models trained together as one stacked program
(:mod:`enkcvs.training.stacked`) draw exactly what each would draw trained alone.
"""

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import torch
from torch.utils.data import DataLoader

from enkcvs.method.mixup import mixup_lambdas
from enkcvs.training.augment import AUGMENTATIONS
from enkcvs.training.device import upload
from enkcvs.training.recipe import Recipe

#: Inputs of :func:`enkcvs.training.train.train_model` and :func:`enkcvs.training.evaluate.predict_proba`: an array
#: held in memory, or a torch Dataset of (input, position) pairs streamed from disk (see
#: :func:`enkcvs.data.sources.web.image_files_dataset`).
Inputs = np.ndarray | torch.utils.data.Dataset


def batch_sizes(num_samples: int, *, batch_size: int, limit: int = 0) -> list[int]:
    """The sizes of an epoch's batches over ``num_samples``: full batches, then the rest, except a last batch of one
    sample (batch norm needs two); the first ``limit`` of them where it is set (``Recipe.steps_per_epoch``)."""
    full, rest = divmod(num_samples, batch_size)
    sizes = [batch_size] * full + ([rest] if rest >= 2 else [])
    return sizes[:limit] if limit else sizes


def steps_per_epoch(num_samples: int, *, batch_size: int, limit: int = 0) -> int:
    """Optimizer steps in one epoch over ``num_samples`` (:func:`batch_sizes`)."""
    return len(batch_sizes(num_samples, batch_size=batch_size, limit=limit))


@dataclass
class EpochDraws:
    """One epoch's random draws of one training, on its device: the batch order and, per step, what augmentation and
    mixup draw (rows past a batch's size are unused)."""

    order: torch.Tensor  # (N,) int64: the samples in training order (in-memory data; a DataLoader shuffles its own)
    host_order: torch.Tensor  # the same on the host (what a batch's token lengths are looked up by)
    sizes: list[int]  # each step's batch size, on the host
    augment: dict[str, torch.Tensor]  # (steps, ...) draws of recipe.augment (enkcvs.training.augment); {} for none
    partners: torch.Tensor | None  # (steps, B) float in [0, 1): mixup partners (enkcvs.method.mixup.partner_index)
    lambdas: torch.Tensor | None  # (steps,) float32: mixup's lambda' of each step


def epoch_draws(
    num_samples: int, *, recipe: Recipe, generator: torch.Generator, rng: np.random.Generator, device: torch.device
) -> EpochDraws:
    """Every draw of one epoch of a training on ``num_samples``, in this order: the batch order from ``generator``,
    then the augmentation's draws, then the mixup partners; mixup's lambdas from ``rng``."""
    sizes = batch_sizes(num_samples, batch_size=recipe.batch_size, limit=recipe.steps_per_epoch)
    steps = len(sizes)
    order = torch.randperm(num_samples, generator=generator)
    augment = {}
    if recipe.augment:
        draw, _ = AUGMENTATIONS[recipe.augment]
        augment = draw(steps, recipe.batch_size, generator=generator)
    partners = lambdas = None
    if recipe.mixup_alpha:
        partners = torch.rand(steps, recipe.batch_size, generator=generator)
        lambdas = torch.from_numpy(mixup_lambdas(alpha=recipe.mixup_alpha, rng=rng, size=steps))
    return EpochDraws(
        order=upload(order, device=device),
        host_order=order,
        sizes=sizes,
        augment={name: upload(draws, device=device) for name, draws in augment.items()},
        partners=None if partners is None else upload(partners, device=device),
        lambdas=None if lambdas is None else upload(lambdas, device=device),
    )


def memory_batches(
    x: torch.Tensor, targets: torch.Tensor, *, draws: EpochDraws, lengths: np.ndarray | None = None
) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """An epoch's batches of inputs held on the device (:func:`resident`) in the order its ``draws`` give: each as
    the model takes it (:func:`model_input`; token ids cut to the batch's longest text, by ``lengths``, the texts'
    token counts on the host: :func:`token_lengths`) with its (B, Q) ``targets``."""
    start = 0
    for size in draws.sizes:
        batch = draws.order[start : start + size]
        xb = x[batch]
        if lengths is not None:
            xb = cut_to_longest(xb, lengths[draws.host_order[start : start + size].numpy()])
        start += size
        yield model_input(xb), targets[batch]


def resident(x: np.ndarray | torch.Tensor, device: torch.device) -> torch.Tensor:
    """An in-memory input array as a device tensor; images channels_last (uint8 images stay uint8 until batched)."""
    tensor = torch.as_tensor(x, device=device)
    return tensor.contiguous(memory_format=torch.channels_last) if tensor.ndim == 4 else tensor


def model_input(batch: torch.Tensor) -> torch.Tensor:
    """A batch as the model takes it: uint8 images scaled to [0, 1], images channels_last; token ids unchanged."""
    if batch.dtype == torch.uint8:
        batch = batch.float().div_(255)
    return batch.contiguous(memory_format=torch.channels_last) if batch.ndim == 4 else batch


def token_lengths(x: np.ndarray | torch.Tensor) -> np.ndarray | None:
    """Each text's token count (N,) where ``x`` holds token ids (N, 2, L) (ids, attention mask), on the host (a
    device tensor is read back once, here); None for any other input."""
    tensor = torch.as_tensor(x)
    if tensor.ndim != 3 or tensor.is_floating_point():
        return None
    return tensor[:, 1].sum(dim=1).cpu().numpy()


def cut_to_longest(xb: torch.Tensor, lengths: np.ndarray) -> torch.Tensor:
    """Token ids (B, 2, L), padded on the right to the dataset's longest text, cut to the batch's longest
    (``lengths`` (B,): :func:`token_lengths` of the batch, on the host): padding is masked, so the cut changes nothing
    but the cost (TREC: median 13 of 41 tokens), and it is known without waiting for the device."""
    return xb[:, :, : int(lengths.max())]


def input_shape(x: Inputs) -> tuple[int, ...]:
    """The shape of one input: (C, H, W) of an image, (2, L) of token ids."""
    return tuple(x.shape[1:]) if isinstance(x, np.ndarray) else tuple(x[0][0].shape)


def data_loader(x: torch.utils.data.Dataset, *, batch_size: int, workers: int, device, generator=None) -> DataLoader:
    """A DataLoader over a streamed Dataset with ``workers`` processes: shuffled by ``generator`` (training), in
    order without one (prediction)."""
    return DataLoader(
        x,
        batch_size=batch_size,
        shuffle=generator is not None,
        generator=generator,
        num_workers=workers,
        pin_memory=device.type == "cuda",
        persistent_workers=workers > 0 and generator is not None,
    )
