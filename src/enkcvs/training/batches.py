"""Batches as the training loop and prediction take them: in-memory inputs (images, token ids) uploaded to the device
once and batched there in a new order each epoch, augmented on whole batches (no per-sample Python); inputs too large
for memory (image files) streamed by a DataLoader with worker processes instead."""

from collections.abc import Callable, Iterator

import numpy as np
import torch
from torch.utils.data import DataLoader

from enkcvs.rng import Purpose, derive_seed
from enkcvs.training.augment import AUGMENTATIONS
from enkcvs.training.device import upload
from enkcvs.training.recipe import Recipe


#: Inputs of :func:`enkcvs.training.train.train_model` and :func:`enkcvs.training.evaluate.predict_proba`: an array
#: held in memory, or a torch Dataset of (input, position) pairs streamed from disk (see
#: :func:`enkcvs.data.sources.web.image_files_dataset`).
Inputs = np.ndarray | torch.utils.data.Dataset


def steps_per_epoch(num_samples: int, *, batch_size: int, limit: int = 0) -> int:
    """Optimizer steps in one epoch over ``num_samples`` in batches of ``batch_size``: a last batch of one sample is
    skipped (batch norm needs two); at most ``limit`` where it is set (``Recipe.steps_per_epoch``)."""
    steps = -(-num_samples // batch_size) - (num_samples % batch_size == 1)
    return min(steps, limit) if limit else steps


def resident(x: np.ndarray, device: torch.device) -> torch.Tensor:
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


def probe_batch(x: Inputs, *, size: int, device: torch.device) -> torch.Tensor:
    """The first ``size`` training inputs as one model-ready batch (for
    :func:`enkcvs.training.precision.resolve_bf16`)."""
    if isinstance(x, np.ndarray):
        return model_input(resident(x[:size], device))
    return model_input(torch.stack([x[i][0] for i in range(min(size, len(x)))]).to(device))


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


def batch_source(x: Inputs, targets: np.ndarray, *, recipe: Recipe, seed: int, device: torch.device,
                 generator: torch.Generator) -> Callable[[], Iterator[tuple[torch.Tensor, torch.Tensor]]]:
    """A function that yields one epoch's batches: model-ready inputs (augmented where the recipe says) and their
    (B, Q) targets, in a new order each epoch drawn from ``generator`` (streamed Datasets: from a DataLoader seeded
    from ``seed``), the first ``recipe.steps_per_epoch`` of them where it is set. In-memory inputs are uploaded
    once, here."""
    augment = AUGMENTATIONS[recipe.augment] if recipe.augment else None
    t_all = torch.as_tensor(targets, device=device)
    if isinstance(x, np.ndarray):
        x_all, lengths = resident(x, device), token_lengths(x)

        def positioned():
            host_order = torch.randperm(len(x_all), generator=generator)
            order = upload(host_order, device=device)
            for host_batch, batch in zip(host_order.split(recipe.batch_size), order.split(recipe.batch_size)):
                xb = x_all[batch]
                yield (xb if lengths is None else cut_to_longest(xb, lengths[host_batch.numpy()])), batch

    else:
        loader = data_loader(x, batch_size=recipe.batch_size, workers=recipe.loader_workers, device=device,
                             generator=torch.Generator().manual_seed(derive_seed(seed, Purpose.FOLDS)))

        def positioned():
            for images, positions in loader:
                # The loader pins its batches on a GPU (data_loader), so neither copy waits for the device.
                yield images.to(device, non_blocking=True), positions.to(device, non_blocking=True)

    def epoch_batches():
        steps = 0
        for xb, batch in positioned():
            if len(batch) < 2:  # batch norm needs two samples; only an epoch's last batch can be this small
                continue
            if recipe.steps_per_epoch and steps == recipe.steps_per_epoch:  # the rest of the shuffle is left
                return
            xb = model_input(xb)
            if augment is not None and xb.ndim == 4:
                xb = augment(xb, generator=generator)
            steps += 1
            yield xb, t_all[batch]

    return epoch_batches
