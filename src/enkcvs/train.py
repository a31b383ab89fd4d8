"""The one training loop shared by fold models, final models and the baselines, and prediction with class
probabilities.

In-memory data (images, token ids) live as tensors on the device; batches, augmentation, mixup and the loss run on
whole batches (no per-sample Python). Datasets too large for memory (image files) are streamed by a DataLoader with
worker processes instead.
"""

import copy
import dataclasses
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader
from tqdm import tqdm

from enkcvs import losses
from enkcvs.allocator import keep_freed_memory
from enkcvs.augment import AUGMENTATIONS
from enkcvs.io import PathLike
from enkcvs.mixup import mixup, mixup_lambda
from enkcvs.models import create_model
from enkcvs.optimizer import recipe_optimizer
from enkcvs.precision import resolve_bf16
from enkcvs.recipe import CoTeaching, Recipe
from enkcvs.resume import EpochCheckpoint, training_key
from enkcvs.rng import Purpose, derive_seed

log = logging.getLogger(__name__)


def default_device() -> torch.device:
    """CUDA when present (the device ``CUDA_VISIBLE_DEVICES`` exposes first), else the CPU."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def job_device(*, gpus: int, allow_cpu_fallback: bool = False) -> torch.device:
    """The device a job trains on, checked against the GPUs it asked for (its ``gpu`` resource).

    A job that asked for GPUs and sees none raises ``RuntimeError`` naming the fix, rather than training for hours
    on the CPU unnoticed; with ``allow_cpu_fallback`` it logs a warning and trains on the CPU.
    """
    device = default_device()
    if gpus > 0 and device.type != "cuda":
        problem = (f"this job asked for {gpus} GPU(s) (config gpu.per_training_job) but torch {torch.__version__} "
                   f"sees none")
        if not allow_cpu_fallback:
            raise RuntimeError(f"{problem}: run it where a GPU is visible, set gpu.per_training_job: 0, or allow "
                               "training on the CPU with gpu.allow_cpu_fallback: true")
        log.warning("%s: training on the CPU (gpu.allow_cpu_fallback: true)", problem)
    return device


@dataclass
class TrainingResult:
    """A trained model and what happened while training it."""

    model: nn.Module
    best_epoch: int  # 1-based epoch whose weights were kept
    train_loss: list[float] = field(default_factory=list)  # mean batch loss per epoch (co-teaching: see train_model)
    validation_accuracy: list[float] = field(default_factory=list)  # against the noisy labels, per epoch
    peer: nn.Module | None = None  # co-teaching's second network (weights of the same kept epoch); None otherwise
    bf16: bool = False  # whether forward passes ran under bf16 autocast (recipe.bf16, "auto" resolved)


def steps_per_epoch(num_samples: int, *, batch_size: int) -> int:
    """Optimizer steps in one epoch over ``num_samples`` in batches of ``batch_size``: a last batch of one sample is
    skipped (batch norm needs two)."""
    return -(-num_samples // batch_size) - (num_samples % batch_size == 1)


def small_loss_indices(losses: torch.Tensor, *, keep: int) -> torch.Tensor:
    """Indices of the ``keep`` smallest entries of the per-sample ``losses`` (B,), smallest first; ties keep the
    lower index first, so the choice is deterministic."""
    return torch.argsort(losses, stable=True)[:keep]


def co_teaching_losses(
    logits: tuple[torch.Tensor, torch.Tensor], targets: torch.Tensor, *, forget_rate: float
) -> tuple[list[torch.Tensor], torch.Tensor]:
    """One co-teaching exchange (Han et al. 2018, Algorithm 1, lines 4-8) on a batch seen by both networks.

    Each network keeps its round((1 - forget_rate) B) smallest-loss samples (at least one) as likely clean, and its
    peer is updated on them, as in the authors' code: the networks run on the whole batch (batch norm included), then
    the cross-entropy is averaged over the peer's kept samples.

    Returns
    -------
    The loss each network steps on (network 1's first), and the mean per-sample cross-entropy of both networks over
    the whole batch: that is checked for NaN/inf (a forgotten sample must not hide one) and recorded as train loss.
    """
    per_sample = [losses.cross_entropy_per_sample(net_logits, targets) for net_logits in logits]
    keep = max(1, round((1.0 - forget_rate) * len(targets)))
    kept = [small_loss_indices(loss.detach(), keep=keep) for loss in per_sample]
    return [per_sample[0][kept[1]].mean(), per_sample[1][kept[0]].mean()], torch.cat(per_sample).mean()


#: Inputs of :func:`train_model` and :func:`predict_proba`: an array held in memory, or a torch Dataset of
#: (input, position) pairs streamed from disk (see :func:`enkcvs.sources.web.image_files_dataset`).
Inputs = np.ndarray | torch.utils.data.Dataset


def _new_model(recipe: Recipe, *, input_shape, num_classes: int, device: torch.device) -> nn.Module:
    model = create_model(recipe.model, input_shape=input_shape, num_classes=num_classes, **recipe.model_options)
    return model.to(device).to(memory_format=torch.channels_last)


def _resident(x: np.ndarray, device: torch.device) -> torch.Tensor:
    """An in-memory input array as a device tensor; images channels_last (uint8 images stay uint8 until batched)."""
    tensor = torch.as_tensor(x, device=device)
    return tensor.contiguous(memory_format=torch.channels_last) if tensor.ndim == 4 else tensor


def _model_input(batch: torch.Tensor) -> torch.Tensor:
    """A batch as the model takes it: uint8 images scaled to [0, 1], images channels_last; token ids unchanged."""
    if batch.dtype == torch.uint8:
        batch = batch.float().div_(255)
    return batch.contiguous(memory_format=torch.channels_last) if batch.ndim == 4 else batch


def _autocast(device: torch.device, *, enabled: bool):
    """bfloat16 autocast of forward passes (``recipe.bf16``, resolved by :func:`enkcvs.precision.resolve_bf16`):
    convolutions and matrix products run in bf16, weights, gradients, optimizer state and the loss stay fp32; disabled,
    it changes nothing."""
    return torch.autocast(device.type, dtype=torch.bfloat16, enabled=enabled)


def _probe_batch(x: Inputs, *, size: int, device: torch.device) -> torch.Tensor:
    """The first ``size`` training inputs as one model-ready batch (for :func:`enkcvs.precision.resolve_bf16`)."""
    if isinstance(x, np.ndarray):
        return _model_input(_resident(x[:size], device))
    return _model_input(torch.stack([x[i][0] for i in range(min(size, len(x)))]).to(device))


def _input_shape(x: Inputs) -> tuple[int, ...]:
    return tuple(x.shape[1:]) if isinstance(x, np.ndarray) else tuple(x[0][0].shape)


def _loader(x: torch.utils.data.Dataset, *, batch_size: int, workers: int, device, generator=None) -> DataLoader:
    return DataLoader(
        x,
        batch_size=batch_size,
        shuffle=generator is not None,
        generator=generator,
        num_workers=workers,
        pin_memory=device.type == "cuda",
        persistent_workers=workers > 0 and generator is not None,
    )


def _check_training(recipe: Recipe, x: Inputs, *, loss: str, loss_params: dict | None,
                    co_teaching: CoTeaching | None) -> None:
    """Refuse combinations :func:`train_model` cannot train, before anything is built."""
    if co_teaching is not None and (loss != "ce" or loss_params):
        raise ValueError(f"co-teaching trains with plain cross-entropy; got loss={loss!r}, loss_params={loss_params}")
    if co_teaching is not None and recipe.mixup_alpha:
        raise ValueError("co-teaching trains without mixup (its small-loss ranking needs each sample's own label): "
                         "pass a recipe with mixup_alpha None")
    if recipe.mixup_alpha and isinstance(x, np.ndarray) and x.dtype.kind in "iu" and x.ndim != 4:
        raise ValueError("mixup cannot mix token ids: set recipe.mixup_alpha: null for text datasets")


def _new_networks(recipe: Recipe, x: Inputs, *, num_classes: int, seed: int, device: torch.device,
                  co_teaching: CoTeaching | None) -> tuple[list[nn.Module], bool]:
    """The fresh network(s) (co-teaching's peer initialised from a seed derived from ``seed``), and whether their
    forward passes run under bf16 autocast (``recipe.bf16`` resolved on them)."""
    shape = {"input_shape": _input_shape(x), "num_classes": num_classes, "device": device}
    bf16 = resolve_bf16(recipe.bf16, model_name=recipe.model, build=lambda: _new_model(recipe, **shape),
                        batch=lambda: _probe_batch(x, size=recipe.batch_size, device=device), device=device)
    models = [_new_model(recipe, **shape)]
    if co_teaching is not None:
        torch.manual_seed(derive_seed(seed, Purpose.PEER))
        models.append(_new_model(recipe, **shape))
    return models, bf16


def _batch_source(x: Inputs, targets: np.ndarray, *, recipe: Recipe, seed: int, device: torch.device,
                  generator: torch.Generator) -> Callable[[], Iterator[tuple[torch.Tensor, torch.Tensor]]]:
    """A function that yields one epoch's batches: model-ready inputs (augmented where the recipe says) and their
    (B, Q) targets, in a new order each epoch drawn from ``generator`` (streamed Datasets: from a DataLoader seeded
    from ``seed``). In-memory inputs are uploaded once, here."""
    augment = AUGMENTATIONS[recipe.augment] if recipe.augment else None
    t_all = torch.as_tensor(targets, device=device)
    if isinstance(x, np.ndarray):
        x_all = _resident(x, device)

        def positioned():
            order = torch.randperm(len(x_all), generator=generator).to(device)
            return ((x_all[batch], batch) for batch in order.split(recipe.batch_size))

    else:
        loader = _loader(x, batch_size=recipe.batch_size, workers=recipe.loader_workers, device=device,
                         generator=torch.Generator().manual_seed(derive_seed(seed, Purpose.FOLDS)))

        def positioned():
            for images, positions in loader:
                yield images.to(device, non_blocking=True), positions.to(device)

    def epoch_batches():
        for xb, batch in positioned():
            if len(batch) < 2:  # batch norm needs two samples; only an epoch's last batch can be this small
                continue
            xb = _model_input(xb)
            if augment is not None and xb.ndim == 4:
                xb = augment(xb, generator=generator)
            yield xb, t_all[batch]

    return epoch_batches


#: Per-batch loss of :func:`train_model`: (inputs, targets, 1-based epoch and step) -> the loss each network steps on,
#: and the loss recorded and checked for NaN/inf.
_BatchLoss = Callable[..., tuple[list[torch.Tensor], torch.Tensor]]


def _batch_loss(models: list[nn.Module], *, recipe: Recipe, loss_function: Callable, co_teaching: CoTeaching | None,
                epoch_steps: int, bf16: bool, device: torch.device, generator: torch.Generator,
                rng: np.random.Generator) -> _BatchLoss:
    """The per-batch loss of this training: co-teaching's exchange between the two networks, or ``loss_function`` of
    one network on the batch, mixed first (Eq. mixup) when ``recipe.mixup_alpha`` is set."""
    if co_teaching is not None:

        def co_teaching_loss(xb, tb, *, epoch: int, step: int):
            forget_rate = co_teaching.rate(epoch=epoch, step=step, steps_per_epoch=epoch_steps)
            with _autocast(device, enabled=bf16):
                logits = (models[0](xb), models[1](xb))
            return co_teaching_losses(tuple(net_logits.float() for net_logits in logits), tb, forget_rate=forget_rate)

        return co_teaching_loss

    def one_network_loss(xb, tb, *, epoch: int, step: int):
        if recipe.mixup_alpha:
            # Each sample's partner is a random *other* sample of the batch (PAPER-NOTES, Mixup).
            offsets = torch.randint(1, len(tb), (len(tb),), generator=generator)
            partner = ((torch.arange(len(tb)) + offsets) % len(tb)).to(device)
            xb, tb = mixup(xb, tb, lam=mixup_lambda(alpha=recipe.mixup_alpha, rng=rng), partner=partner)
        with _autocast(device, enabled=bf16):
            logits = models[0](xb)
        step_loss = loss_function(logits.float(), tb)
        return [step_loss], step_loss

    return one_network_loss


def _guarded_step(optimizers: list, step_losses: list[torch.Tensor], batch_loss: torch.Tensor, *, where: str) -> None:
    """Step each network's optimizer on its loss, unless a loss is NaN or infinite (``FloatingPointError`` naming
    ``where`` and the fix: diverged weights would train on silently)."""
    watched = torch.stack([batch_loss, *step_losses])
    if not torch.isfinite(watched).all():
        raise FloatingPointError(f"non-finite loss {watched[~torch.isfinite(watched)][0].item()} at {where}: lower "
                                 "recipe.lr or check the inputs for NaN/inf")
    for optimizer, step_loss in zip(optimizers, step_losses):
        optimizer.zero_grad()
        step_loss.backward()
        optimizer.step()


def _train_epoch(models: list[nn.Module], batches: Iterator, *, epoch: int, step: int, batch_loss: _BatchLoss,
                 optimizers: list, batch_size: int, device: torch.device) -> tuple[list[torch.Tensor], int, int]:
    """One epoch of guarded steps of the networks in train mode, from optimizer step ``step`` on: the batches'
    recorded losses, the samples trained on and the step count after it. Running out of device memory raises
    ``MemoryError`` naming the batch size to lower."""
    for model in models:
        model.train()
    recorded, samples = [], 0
    for batch_number, (xb, tb) in enumerate(batches, start=1):
        where = f"epoch {epoch}, batch {batch_number}"
        try:
            step_losses, loss = batch_loss(xb, tb, epoch=epoch, step=step + 1)
            _guarded_step(optimizers, step_losses, loss, where=where)
        except torch.OutOfMemoryError as error:
            raise MemoryError(f"out of {device.type} memory at {where} with batch_size {batch_size}: lower "
                              f"recipe.batch_size (e.g. to {max(batch_size // 2, 2)})") from error
        recorded.append(loss.detach())
        samples += len(tb)
        step += 1
    return recorded, samples, step


class _BestEpoch:
    """The noisy-validation accuracy of every epoch, and the weights of the best one (Appendix, Eq. para_val): the
    first epoch with the highest accuracy of network 1. Without validation data, the last epoch's weights are kept."""

    def __init__(self, validation: tuple[Inputs, np.ndarray] | None, *, device: torch.device, workers: int,
                 bf16: bool):
        if validation is not None and isinstance(validation[0], np.ndarray):
            validation = (_resident(validation[0], device), validation[1])  # uploaded once, evaluated every epoch
        self.validation, self.device, self.workers, self.bf16 = validation, device, workers, bf16
        self.history: list[float] = []
        self.best_epoch: int | None = None  # None until an epoch is scored
        self._best_accuracy, self._best_states = -1.0, None

    def update(self, models: list[nn.Module], *, epoch: int) -> float | None:
        """Score network 1 after ``epoch`` (1-based) and keep every network's weights if it is the best so far;
        returns the accuracy (None without validation data)."""
        if self.validation is None:
            return None
        inputs, labels = self.validation
        predicted = predict_proba(models[0], inputs, device=self.device, workers=self.workers, bf16=self.bf16)
        accuracy = float(np.mean(predicted.argmax(1) == labels))
        self.history.append(accuracy)
        if accuracy > self._best_accuracy:
            self._best_accuracy, self.best_epoch = accuracy, epoch
            self._best_states = [copy.deepcopy(model.state_dict()) for model in models]
        return accuracy

    def state_dict(self) -> dict:
        return {"history": self.history, "best_epoch": self.best_epoch, "best_accuracy": self._best_accuracy,
                "best_states": self._best_states}

    def load_state_dict(self, state: dict) -> None:
        self.history, self.best_epoch = list(state["history"]), state["best_epoch"]
        self._best_accuracy, self._best_states = state["best_accuracy"], state["best_states"]

    def restore(self, models: list[nn.Module]) -> None:
        """Load the best epoch's weights into the networks (if any epoch was scored) and put them in eval mode."""
        for index, model in enumerate(models):
            if self._best_states is not None:
                model.load_state_dict(self._best_states[index])
            model.eval()


def _epoch_checkpoint(path: PathLike | None, *, recipe: Recipe, x: Inputs, targets: np.ndarray,
                      validation: tuple[Inputs, np.ndarray] | None, settings: dict) -> EpochCheckpoint | None:
    """The epoch checkpoint of this training at ``path`` (:mod:`enkcvs.resume`), keyed by ``settings`` and the
    arrays; None without a path or for streamed inputs (a DataLoader's order cannot be resumed mid-run)."""
    if path is None:
        return None
    streamed = not isinstance(x, np.ndarray) or (validation is not None and not isinstance(validation[0], np.ndarray))
    if streamed:
        log.info("no epoch checkpoints: the inputs are streamed from disk")
        return None
    arrays = {"x": x, "targets": targets}
    if validation is not None:
        arrays |= {"validation_x": validation[0], "validation_labels": validation[1]}
    settings = {**settings, "recipe": recipe.to_dict(), "torch": torch.__version__}
    return EpochCheckpoint(path, key=training_key(arrays=arrays, settings=settings))


def _random_states(*, device: torch.device, generator: torch.Generator, rng: np.random.Generator) -> dict:
    """The state of every random generator a training draws from (initialisation and dropout, batch order,
    augmentation and mixup partners, mixup's lambda)."""
    states = {"torch": torch.get_rng_state(), "batches": generator.get_state(), "numpy": rng.bit_generator.state}
    if device.type == "cuda":
        states["cuda"] = torch.cuda.get_rng_state(device)
    return states


def _set_random_states(states: dict, *, device: torch.device, generator: torch.Generator,
                       rng: np.random.Generator) -> None:
    torch.set_rng_state(states["torch"])
    generator.set_state(states["batches"])
    rng.bit_generator.state = states["numpy"]
    if "cuda" in states:
        torch.cuda.set_rng_state(states["cuda"], device)


def _training_state(*, epoch: int, train_loss: list[float], step: int, models: list[nn.Module], optimizers: list,
                    best: _BestEpoch, randomness: dict) -> dict:
    """Everything a training needs to go on after ``epoch`` (:func:`_resume`)."""
    return {"epoch": epoch, "train_loss": train_loss, "step": step, "best": best.state_dict(),
            "models": [model.state_dict() for model in models],
            "optimizers": [optimizer.state_dict() for optimizer in optimizers],
            "random": _random_states(**randomness)}


def _resume(saved: dict, *, models: list[nn.Module], optimizers: list, best: _BestEpoch,
            randomness: dict) -> tuple[list[float], int, int]:
    """Load a :func:`_training_state` into the training's parts; returns its loss history, optimizer steps and
    epochs done."""
    for model, optimizer, model_state, optimizer_state in zip(models, optimizers, saved["models"],
                                                              saved["optimizers"], strict=True):
        model.load_state_dict(model_state)
        optimizer.load_state_dict(optimizer_state)
    best.load_state_dict(saved["best"])
    _set_random_states(saved["random"], **randomness)
    return list(saved["train_loss"]), saved["step"], saved["epoch"]


def _log_epoch(epoch: int, *, epochs: int, loss: float, accuracy: float | None, samples: int,
               training_seconds: float, seconds: float, device: torch.device, bf16: bool) -> None:
    log.info(
        "epoch %d/%d  loss %.4f  noisy-validation accuracy %s  %.0f samples/s trained  %.1f s  %s%s",
        epoch, epochs, loss, f"{accuracy:.4f}" if accuracy is not None else "n/a",
        samples / training_seconds if training_seconds > 0 else float("nan"), seconds, device, " bf16" if bf16 else "",
    )


def train_model(
    *,
    recipe: Recipe,
    x: Inputs,
    targets: np.ndarray,
    seed: int,
    validation: tuple[Inputs, np.ndarray] | None = None,
    device: torch.device | None = None,
    loss: str = "ce",
    loss_params: dict[str, float] | None = None,
    co_teaching: CoTeaching | None = None,
    resume: PathLike | None = None,
) -> TrainingResult:
    """Train a fresh model of ``recipe.model`` with a milestone lr schedule, and mixup when ``recipe.mixup_alpha``
    is set (which methods mix is decided per method: :func:`enkcvs.methods.final_recipe`).

    Parameters
    ----------
    recipe : the dataset's training recipe.
    x : the N training inputs: images (N, C, H, W) float32 in [0, 1] or uint8, token ids (N, 2, L) int64 (ids and
        attention mask), or a torch Dataset of (input, position in 0..N-1) streamed by a DataLoader with
        ``recipe.loader_workers`` workers.
    targets : (N, Q) soft targets, each row scaled by the sample's loss weight (one-hot rows for plain CE).
    seed : seeds initialisation, batch order, augmentation and mixup.
    validation : optional (inputs as ``x`` (V, ...), labels (V,)); the epoch with the best accuracy on it is kept
        (Appendix, Eq. para_val). Without it the last epoch is kept.
    device : defaults to :func:`default_device`.
    loss : batch loss by name, see :func:`enkcvs.losses.make_loss` ("ce", "sl", "gce"), on mixed batches when the
        recipe mixes.
    loss_params : the loss's parameters (``sl``: alpha, beta; ``gce``: q).
    co_teaching : when given, train two networks by co-teaching (Han et al. 2018) instead of one: the second is
        initialised from a seed derived from ``seed``, each has its own optimizer and schedule, both see the same
        batches, and each is updated on the samples its peer finds small-loss under plain cross-entropy (``loss``
        must stay "ce", ``recipe.mixup_alpha`` None: small-loss selection ranks each sample by its own loss against
        its own label, which a mixed pair no longer has). The forget rate rises as :meth:`CoTeaching.rate` says,
        per epoch or per step. The validation set picks the epoch by network 1;
        ``train_loss`` holds both networks' mean cross-entropy over every sample of each batch.
    resume : an epoch checkpoint file (:mod:`enkcvs.resume`): written after every epoch but the last, removed at the
        end; a training started again with the same arguments goes on after the epoch it holds, and ends with the
        same weights and history as one never interrupted. Inputs streamed from disk are not checkpointed.

    Returns
    -------
    The model (eval mode) with the kept weights, and the per-epoch history; with co-teaching, network 1 as ``model``
    and network 2 (same kept epoch) as ``peer``.
    """
    device = device or default_device()
    if device.type == "cpu":
        keep_freed_memory()
    _check_training(recipe, x, loss=loss, loss_params=loss_params, co_teaching=co_teaching)
    loss_function = losses.make_loss(loss, **(loss_params or {}))
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)  # mixup's lambda
    batch_order = torch.Generator(device="cpu").manual_seed(seed)  # batch order, augmentation, mixup partners
    models, bf16 = _new_networks(recipe, x, num_classes=targets.shape[1], seed=seed, device=device,
                                 co_teaching=co_teaching)
    epoch_batches = _batch_source(x, targets, recipe=recipe, seed=seed, device=device, generator=batch_order)
    best = _BestEpoch(validation, device=device, workers=recipe.loader_workers, bf16=bf16)
    optimizers = [recipe_optimizer(recipe, model.parameters()) for model in models]
    batch_loss = _batch_loss(models, recipe=recipe, loss_function=loss_function, co_teaching=co_teaching,
                             epoch_steps=steps_per_epoch(len(x), batch_size=recipe.batch_size), bf16=bf16,
                             device=device, generator=batch_order, rng=rng)
    randomness = {"device": device, "generator": batch_order, "rng": rng}
    checkpoint = _epoch_checkpoint(resume, recipe=recipe, x=x, targets=targets, validation=validation, settings={
        "seed": seed, "loss": loss, "loss_params": loss_params, "bf16": bf16, "device": device.type,
        "co_teaching": dataclasses.asdict(co_teaching) if co_teaching else None})
    parts = {"models": models, "optimizers": optimizers, "best": best, "randomness": randomness}
    train_loss, step, done = [], 0, 0
    if checkpoint is not None and (saved := checkpoint.load()) is not None:
        train_loss, step, done = _resume(saved, **parts)
    # A bar only in a terminal (disable=None: off when stderr is no TTY, e.g. a Snakemake log file).
    progress = tqdm(total=recipe.epochs, initial=done, desc="training", unit="epoch", disable=None, leave=False)
    for epoch in range(done + 1, recipe.epochs + 1):
        started = time.perf_counter()
        recorded, samples, step = _train_epoch(models, epoch_batches(), epoch=epoch, step=step, batch_loss=batch_loss,
                                               optimizers=optimizers, batch_size=recipe.batch_size, device=device)
        training_seconds = time.perf_counter() - started
        for optimizer in optimizers:
            optimizer.end_epoch()
        train_loss.append(float(torch.stack(recorded).mean()) if recorded else float("nan"))
        accuracy = best.update(models, epoch=epoch)
        _log_epoch(epoch, epochs=recipe.epochs, loss=train_loss[-1], accuracy=accuracy, samples=samples,
                   training_seconds=training_seconds, seconds=time.perf_counter() - started, device=device, bf16=bf16)
        progress.set_postfix_str(f"loss {train_loss[-1]:.4f}", refresh=False)
        progress.update()
        if checkpoint is not None and epoch < recipe.epochs:
            checkpoint.save(_training_state(epoch=epoch, train_loss=train_loss, step=step, **parts))
    progress.close()
    if checkpoint is not None:
        checkpoint.remove()
    best.restore(models)
    return TrainingResult(model=models[0], best_epoch=recipe.epochs if best.best_epoch is None else best.best_epoch,
                          train_loss=train_loss, validation_accuracy=best.history,
                          peer=models[1] if co_teaching else None, bf16=bf16)


@torch.no_grad()
def predict_proba(
    model: nn.Module,
    x: Inputs | torch.Tensor,
    *,
    device: torch.device | None = None,
    batch_size: int = 1024,
    workers: int = 4,
    bf16: bool = False,
) -> np.ndarray:
    """Class probabilities of ``model`` (eval mode) for N inputs as :func:`train_model` takes them, or already on
    the device (a streamed Dataset is read in order by ``workers`` processes; ``bf16`` as ``recipe.bf16``). Returns
    (N, Q) float32."""
    device = device or default_device()
    model.eval()
    if isinstance(x, np.ndarray | torch.Tensor):
        chunks = _resident(x, device).split(batch_size)
    else:
        chunks = (images.to(device) for images, _ in _loader(x, batch_size=batch_size, workers=workers, device=device))
    probabilities = []
    for chunk in chunks:
        with _autocast(device, enabled=bf16):
            logits = model(_model_input(chunk))
        probabilities.append(F.softmax(logits.float(), dim=1))
    return torch.cat(probabilities).float().cpu().numpy()
