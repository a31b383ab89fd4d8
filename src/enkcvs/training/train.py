"""The one training loop shared by fold models, final models and the baselines: a fresh network (two for
co-teaching) trained on whole batches (:mod:`enkcvs.training.batches`), the epoch kept by noisy validation
(:mod:`enkcvs.training.evaluate`), the state saved after every epoch (:mod:`enkcvs.training.state`).

In-memory data (images, token ids) live as tensors on the device; batches, augmentation, mixup and the loss run on
whole batches (no per-sample Python). Datasets too large for memory (image files) are streamed by a DataLoader with
worker processes instead.
"""

import copy
import dataclasses
import logging
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn
from tqdm import tqdm

from enkcvs.io import PathLike
from enkcvs.method import losses
from enkcvs.method.mixup import mixup, mixup_lambda
from enkcvs.rng import Purpose, derive_seed
from enkcvs.training.batches import Inputs, batch_source, input_shape, probe_batch, steps_per_epoch
from enkcvs.training.device import training_device, upload
from enkcvs.training.evaluate import BestEpoch, EpochCurve
from enkcvs.training.graphs import GraphedForward, begin_step, resolve_cuda_graphs
from enkcvs.training.models import create_model
from enkcvs.training.optimizer import recipe_optimizer
from enkcvs.training.precision import autocast, resolve_bf16
from enkcvs.training.recipe import CoTeaching, Recipe
from enkcvs.training.resume import EpochCheckpoint
from enkcvs.training.state import epoch_checkpoint, restore_training, training_state

log = logging.getLogger(__name__)


@dataclass
class TrainingResult:
    """A trained model and what happened while training it."""

    model: nn.Module
    best_epoch: int  # 1-based epoch whose weights were kept
    train_loss: list[float] = field(default_factory=list)  # mean batch loss per epoch (co-teaching: see train_model)
    validation_accuracy: list[float] = field(default_factory=list)  # against the noisy labels, per epoch
    curve_accuracy: list[float] = field(default_factory=list)  # on train_model's ``curve`` data, per epoch (if given)
    peer: nn.Module | None = None  # co-teaching's second network (weights of the same kept epoch); None otherwise
    bf16: bool = False  # whether forward passes ran under bf16 autocast (recipe.bf16, "auto" resolved)
    cuda_graphs: bool = False  # whether full-batch steps replayed as CUDA graphs (recipe.cuda_graphs, "auto" resolved)



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



def _new_model(recipe: Recipe, *, input_shape, num_classes: int, device: torch.device) -> nn.Module:
    model = create_model(recipe.model, input_shape=input_shape, num_classes=num_classes, **recipe.model_options)
    return model.to(device).to(memory_format=torch.channels_last)



def check_training(recipe: Recipe, x: Inputs, *, loss: str, loss_params: dict | None,
                    co_teaching: CoTeaching | None) -> None:
    """Refuse combinations :func:`train_model` cannot train, before anything is built."""
    if co_teaching is not None and (loss != "ce" or loss_params):
        raise ValueError(f"co-teaching trains with plain cross-entropy; got loss={loss!r}, loss_params={loss_params}")
    if co_teaching is not None and recipe.mixup_alpha:
        raise ValueError("co-teaching trains without mixup (its small-loss ranking needs each sample's own label): "
                         "pass a recipe with mixup_alpha None")
    if recipe.mixup_alpha and isinstance(x, np.ndarray) and x.dtype.kind in "iu" and x.ndim != 4:
        raise ValueError("mixup cannot mix token ids: set recipe.mixup_alpha: null for text datasets")



def new_networks(recipe: Recipe, x: Inputs, *, num_classes: int, seed: int, device: torch.device,
                  co_teaching: CoTeaching | None) -> tuple[list[nn.Module], bool]:
    """The fresh network(s) (co-teaching's peer initialised from a seed derived from ``seed``), and whether their
    forward passes run under bf16 autocast (``recipe.bf16`` resolved on them)."""
    shape = {"input_shape": input_shape(x), "num_classes": num_classes, "device": device}
    bf16 = resolve_bf16(recipe.bf16, model_name=recipe.model, build=lambda: _new_model(recipe, **shape),
                        batch=lambda: probe_batch(x, size=recipe.batch_size, device=device), device=device)
    models = [_new_model(recipe, **shape)]
    if co_teaching is not None:
        torch.manual_seed(derive_seed(seed, Purpose.PEER))
        models.append(_new_model(recipe, **shape))
    return models, bf16



def full_batch_steps(recipe: Recipe, *, num_samples: int) -> int:
    """The full-batch steps a training on ``num_samples`` takes over the recipe's epochs: the steps CUDA graphs
    replay."""
    full_batches = num_samples // recipe.batch_size
    return recipe.epochs * (min(full_batches, recipe.steps_per_epoch) if recipe.steps_per_epoch else full_batches)


def graphed_training(recipe: Recipe, x: Inputs, *, models: list[nn.Module], bf16: bool, device: torch.device) -> bool:
    """Whether the full-batch steps of this training replay as CUDA graphs (``recipe.cuda_graphs`` resolved for its
    networks, batches and number of full-batch steps: :func:`enkcvs.training.graphs.resolve_cuda_graphs`)."""
    template = models[0]
    return resolve_cuda_graphs(recipe.cuda_graphs, model_name=recipe.model, device=device, bf16=bf16,
                               steps=full_batch_steps(recipe, num_samples=len(x)),
                               build=lambda: copy.deepcopy(template),
                               batch=lambda: probe_batch(x, size=recipe.batch_size, device=device))



#: Per-batch loss of :func:`train_model`: (inputs, targets, 1-based epoch and step) -> the loss each network steps on,
#: and the loss recorded and checked for NaN/inf.
_BatchLoss = Callable[..., tuple[list[torch.Tensor], torch.Tensor]]



def mixed_batch(xb: torch.Tensor, tb: torch.Tensor, *, alpha: float, generator: torch.Generator,
                rng: np.random.Generator, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """A batch (B, ...) and its targets (B, Q) mixed (Eq. mixup): each sample's partner is a random *other* sample of
    the batch (PAPER-NOTES, Mixup), drawn from ``generator``, lambda from ``rng``."""
    offsets = torch.randint(1, len(tb), (len(tb),), generator=generator)
    partner = upload((torch.arange(len(tb)) + offsets) % len(tb), device=device)
    return mixup(xb, tb, lam=mixup_lambda(alpha=alpha, rng=rng), partner=partner)


def network_forwards(models: list[nn.Module], *, cuda_graphs: bool, batch_size: int) -> list[Callable]:
    """Each network's forward pass in training: replayed as a CUDA graph for full batches where ``cuda_graphs``
    (:class:`enkcvs.training.graphs.GraphedForward`), the network itself otherwise."""
    return [GraphedForward(model, batch_size=batch_size) if cuda_graphs else model for model in models]


def _batch_loss(forwards: list[Callable], *, recipe: Recipe, loss_function: Callable, co_teaching: CoTeaching | None,
                num_samples: int, bf16: bool, cuda_graphs: bool, device: torch.device, generator: torch.Generator,
                rng: np.random.Generator) -> _BatchLoss:
    """The per-batch loss of this training on ``num_samples`` by the networks' ``forwards``
    (:func:`network_forwards`): co-teaching's exchange between the two networks, or ``loss_function`` of one network
    on the batch, mixed first (Eq. mixup) when ``recipe.mixup_alpha`` is set. Under ``cuda_graphs`` each batch begins
    a new step of the graphs."""
    if co_teaching is not None:
        epoch_steps = steps_per_epoch(num_samples, batch_size=recipe.batch_size, limit=recipe.steps_per_epoch)

        def co_teaching_loss(xb, tb, *, epoch: int, step: int):
            forget_rate = co_teaching.rate(epoch=epoch, step=step, steps_per_epoch=epoch_steps)
            if cuda_graphs:
                begin_step()
            with autocast(device, enabled=bf16):
                logits = (forwards[0](xb), forwards[1](xb))
            return co_teaching_losses(tuple(net_logits.float() for net_logits in logits), tb, forget_rate=forget_rate)

        return co_teaching_loss

    def one_network_loss(xb, tb, *, epoch: int, step: int):
        if recipe.mixup_alpha:
            xb, tb = mixed_batch(xb, tb, alpha=recipe.mixup_alpha, generator=generator, rng=rng, device=device)
        if cuda_graphs:
            begin_step()
        with autocast(device, enabled=bf16):
            logits = forwards[0](xb)
        step_loss = loss_function(logits.float(), tb)
        return [step_loss], step_loss

    return one_network_loss



def _step(optimizers: list, step_losses: list[torch.Tensor]) -> None:
    """Step each network's optimizer on its loss."""
    for optimizer, step_loss in zip(optimizers, step_losses):
        optimizer.zero_grad()
        step_loss.backward()
        optimizer.step()


def _train_epoch(models: list[nn.Module], batches: Iterator, *, epoch: int, step: int, batch_loss: _BatchLoss,
                 optimizers: list, batch_size: int, device: torch.device) -> tuple[list[torch.Tensor], int, int]:
    """One epoch of steps of the networks in train mode, from optimizer step ``step`` on: each batch's losses (the
    recorded loss, then each network's), the samples trained on and the step count after it. Nothing is read back
    from the device, which would make every step wait for the previous one (:func:`epoch_loss` reads the losses once
    the epoch is done). Running out of device memory raises ``MemoryError`` naming the batch size to lower."""
    for model in models:
        model.train()
    watched, samples = [], 0
    for batch_number, (xb, tb) in enumerate(batches, start=1):
        try:
            step_losses, loss = batch_loss(xb, tb, epoch=epoch, step=step + 1)
            _step(optimizers, step_losses)
        except torch.OutOfMemoryError as error:
            raise MemoryError(f"out of {device.type} memory at epoch {epoch}, batch {batch_number} with batch_size "
                              f"{batch_size}: lower recipe.batch_size (e.g. to {max(batch_size // 2, 2)})") from error
        watched.append(torch.stack([loss, *step_losses]).detach())
        samples += len(tb)
        step += 1
    return watched, samples, step


def epoch_loss(watched: list[torch.Tensor], *, epoch: int) -> float:
    """The mean recorded loss of an epoch's batches (:func:`_train_epoch`'s ``watched``). A NaN or infinite loss
    raises ``FloatingPointError`` naming the first batch with one and the fix: checked here, once per epoch, before
    the epoch's weights are scored or saved (diverged weights would train on silently)."""
    if not watched:
        return float("nan")
    losses = torch.stack(watched)
    finite = torch.isfinite(losses)
    if not finite.all():
        batch = int(torch.nonzero(~finite.all(dim=1))[0])
        raise FloatingPointError(f"non-finite loss {losses[batch][~finite[batch]][0].item()} at epoch {epoch}, batch "
                                 f"{batch + 1}: lower recipe.lr or check the inputs for NaN/inf")
    return float(losses[:, 0].contiguous().mean())  # contiguous: the same sum, bit for bit, as before the check



#: An epoch's log line (:func:`log_epoch`): its device's type, whether it trained in bf16 and whether its steps
#: replayed as CUDA graphs end the line.
EPOCH_LINE = re.compile(r"(?:^|\s)epoch \d+/\d+  .*  [\d.]+ s  (?P<device>[a-z]+)(?::\d+)?(?P<bf16> bf16)?"
                        r"(?P<cuda_graphs> cuda-graphs)?$")


def epoch_device(line: str) -> str | None:
    """The device type (``cpu``, ``cuda``) an epoch's log line says it trained on; None for any other line."""
    match = EPOCH_LINE.search(line.rstrip())
    return match["device"] if match else None


def log_epoch(epoch: int, *, epochs: int, loss: float, accuracy: float | None, samples: int,
               training_seconds: float, seconds: float, device: torch.device, bf16: bool, model: str = "",
               cuda_graphs: bool = False) -> None:
    """An epoch's log line (:data:`EPOCH_LINE`), after ``model`` (which of several trained together) where given."""
    log.info(
        "%sepoch %d/%d  loss %.4f  noisy-validation accuracy %s  %.0f samples/s trained  %.1f s  %s%s%s",
        f"{model}  " if model else "", epoch, epochs, loss, f"{accuracy:.4f}" if accuracy is not None else "n/a",
        samples / training_seconds if training_seconds > 0 else float("nan"), seconds, device, " bf16" if bf16 else "",
        " cuda-graphs" if cuda_graphs else "",
    )



def _train_epochs(parts: dict, train_loss: list[float], *, done: int, step: int,
                  epoch_batches: Callable[[], Iterator], batch_loss: _BatchLoss, recipe: Recipe, device: torch.device,
                  bf16: bool, cuda_graphs: bool, checkpoint: EpochCheckpoint | None) -> None:
    """Epochs ``done + 1`` to ``recipe.epochs`` of :func:`train_model`'s ``parts`` (its networks, optimizers, best
    epoch and random generators), from optimizer step ``step`` on: each epoch's mean batch loss appended to
    ``train_loss`` and logged; the whole state saved to ``checkpoint`` after every epoch but the last."""
    models, optimizers, best, curve = parts["models"], parts["optimizers"], parts["best"], parts.get("curve")
    # A bar only in a terminal (disable=None: off when stderr is no TTY, e.g. a Snakemake log file).
    progress = tqdm(total=recipe.epochs, initial=done, desc="training", unit="epoch", disable=None, leave=False)
    for epoch in range(done + 1, recipe.epochs + 1):
        started = time.perf_counter()
        watched, samples, step = _train_epoch(models, epoch_batches(), epoch=epoch, step=step, batch_loss=batch_loss,
                                              optimizers=optimizers, batch_size=recipe.batch_size, device=device)
        train_loss.append(epoch_loss(watched, epoch=epoch))  # waits for the epoch's last step: timed with it
        training_seconds = time.perf_counter() - started
        for optimizer in optimizers:
            optimizer.end_epoch()
        accuracy = best.update(models, epoch=epoch)
        log_epoch(epoch, epochs=recipe.epochs, loss=train_loss[-1], accuracy=accuracy, samples=samples,
                   training_seconds=training_seconds, seconds=time.perf_counter() - started, device=device, bf16=bf16,
                   cuda_graphs=cuda_graphs)
        if curve is not None:
            log.info("curve accuracy after epoch %d/%d: %.4f (recorded only)", epoch, recipe.epochs,
                     curve.update(models))
        progress.set_postfix_str(f"loss {train_loss[-1]:.4f}", refresh=False)
        progress.update()
        if checkpoint is not None and epoch < recipe.epochs:
            checkpoint.save(training_state(epoch=epoch, train_loss=train_loss, step=step, **parts))
    progress.close()


def training_parts(models: list[nn.Module], *, recipe: Recipe, validation: tuple[Inputs, np.ndarray] | None,
                    curve: tuple[Inputs, np.ndarray] | None, device: torch.device, bf16: bool,
                    generator: torch.Generator, rng: np.random.Generator) -> dict:
    """What an epoch checkpoint of :func:`train_model` saves besides its history (:mod:`enkcvs.training.state`): the
    networks, an optimizer each, the best epoch by ``validation``, the ``curve`` where one is asked for, and the random
    generators."""
    parts = {"models": models, "optimizers": [recipe_optimizer(recipe, model.parameters()) for model in models],
             "best": BestEpoch(validation, device=device, workers=recipe.loader_workers, bf16=bf16),
             "randomness": {"device": device, "generator": generator, "rng": rng}}
    if curve is not None:
        parts["curve"] = EpochCurve(curve, device=device, workers=recipe.loader_workers, bf16=bf16)
    return parts


def training_checkpoint(resume: PathLike | None, *, recipe: Recipe, x: Inputs, targets: np.ndarray,
                        validation: tuple[Inputs, np.ndarray] | None, seed: int, loss: str,
                        loss_params: dict | None, bf16: bool, device: torch.device, co_teaching: CoTeaching | None,
                        curve: bool, cuda_graphs: bool = False) -> EpochCheckpoint | None:
    """The epoch checkpoint at ``resume`` of :func:`train_model` with these arguments (``curve``: whether one is
    recorded), keyed by them (:func:`enkcvs.training.state.epoch_checkpoint`)."""
    return epoch_checkpoint(resume, recipe=recipe, x=x, targets=targets, validation=validation, settings={
        "seed": seed, "loss": loss, "loss_params": loss_params, "bf16": bf16, "device": device.type,
        "co_teaching": dataclasses.asdict(co_teaching) if co_teaching else None,
        # each absent where false: older checkpoints still resume
        **({"curve": True} if curve else {}), **({"cuda_graphs": True} if cuda_graphs else {})})


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
    curve: tuple[Inputs, np.ndarray] | None = None,
) -> TrainingResult:
    """Train a fresh model of ``recipe.model`` with a milestone lr schedule, and mixup when ``recipe.mixup_alpha``
    is set (which methods mix is decided per method: :func:`enkcvs.training.final.final_recipe`).

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
    device : defaults to :func:`enkcvs.training.device.default_device`.
    loss : batch loss by name, see :func:`enkcvs.method.losses.make_loss` ("ce", "sl", "gce"), on mixed batches when the
        recipe mixes.
    loss_params : the loss's parameters (``sl``: alpha, beta; ``gce``: q).
    co_teaching : when given, train two networks by co-teaching (Han et al. 2018) instead of one: the second is
        initialised from a seed derived from ``seed``, each has its own optimizer and schedule, both see the same
        batches, and each is updated on the samples its peer finds small-loss under plain cross-entropy (``loss``
        must stay "ce", ``recipe.mixup_alpha`` None: small-loss selection ranks each sample by its own loss against
        its own label, which a mixed pair no longer has). The forget rate rises as :meth:`CoTeaching.rate` says,
        per epoch or per step. The validation set picks the epoch by network 1;
        ``train_loss`` holds both networks' mean cross-entropy over every sample of each batch.
    resume : an epoch checkpoint file (:mod:`enkcvs.training.resume`): written after every epoch but the last, removed
        at the end; a training started again with the same arguments goes on after the epoch it holds, and ends with the
        same weights and history as one never interrupted. Inputs streamed from disk are not checkpointed.
    curve : optional labelled data (inputs as ``x`` (C, ...), labels (C,)) scored after every epoch and only recorded
        (:class:`enkcvs.training.evaluate.EpochCurve`); training and the weights kept are the same without it.

    Returns
    -------
    The model (eval mode) with the kept weights, and the per-epoch history (``curve_accuracy`` with ``curve``); with
    co-teaching, network 1 as ``model`` and network 2 (same kept epoch) as ``peer``.
    """
    device = training_device(device)
    check_training(recipe, x, loss=loss, loss_params=loss_params, co_teaching=co_teaching)
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)  # mixup's lambda
    batch_order = torch.Generator(device="cpu").manual_seed(seed)  # batch order, augmentation, mixup partners
    models, bf16 = new_networks(recipe, x, num_classes=targets.shape[1], seed=seed, device=device,
                                 co_teaching=co_teaching)
    cuda_graphs = graphed_training(recipe, x, models=models, bf16=bf16, device=device)
    epoch_batches = batch_source(x, targets, recipe=recipe, seed=seed, device=device, generator=batch_order)
    forwards = network_forwards(models, cuda_graphs=cuda_graphs, batch_size=recipe.batch_size)
    batch_loss = _batch_loss(forwards, recipe=recipe, loss_function=losses.make_loss(loss, **(loss_params or {})),
                             co_teaching=co_teaching, num_samples=len(x), bf16=bf16, cuda_graphs=cuda_graphs,
                             device=device, generator=batch_order, rng=rng)
    checkpoint = training_checkpoint(resume, recipe=recipe, x=x, targets=targets, validation=validation, seed=seed,
                                     loss=loss, loss_params=loss_params, bf16=bf16, device=device,
                                     co_teaching=co_teaching, curve=curve is not None, cuda_graphs=cuda_graphs)
    parts = training_parts(models, recipe=recipe, validation=validation, curve=curve, device=device, bf16=bf16,
                            generator=batch_order, rng=rng)
    train_loss, step, done = [], 0, 0
    if checkpoint is not None and (saved := checkpoint.load()) is not None:
        train_loss, step, done = restore_training(saved, **parts)
    _train_epochs(parts, train_loss, done=done, step=step, epoch_batches=epoch_batches, batch_loss=batch_loss,
                  recipe=recipe, device=device, bf16=bf16, cuda_graphs=cuda_graphs, checkpoint=checkpoint)
    if checkpoint is not None:
        checkpoint.remove()
    (best := parts["best"]).restore(models)
    return TrainingResult(model=models[0], best_epoch=recipe.epochs if best.best_epoch is None else best.best_epoch,
                          train_loss=train_loss, validation_accuracy=best.history,
                          curve_accuracy=parts["curve"].history if curve is not None else [],
                          peer=models[1] if co_teaching else None, bf16=bf16, cuda_graphs=cuda_graphs)
