"""The one epoch loop (:func:`run_epochs`) shared by fold models, final models, the baselines and models trained
together as one stacked program, and the training of one model it drives (:class:`ModelTraining`: a fresh network,
two for co-teaching, :func:`train_model`).

The loop knows a training by what it does each epoch: its steps (every draw made at the epoch's start,
:func:`enkcvs.training.batches.epoch_draws`, nothing read back from the device until the epoch is done), its
schedules, its noisy-validation scores (the best epoch kept, Appendix Eq. para_val) and its state, saved to one epoch
checkpoint (:mod:`enkcvs.training.resume`). :class:`enkcvs.training.stacked.StackTraining` is the other kind it
drives: G models in one vmapped step.

In-memory data (images, token ids) live as tensors on the device; batches, augmentation, mixup and the loss run on
whole batches (no per-sample Python). Datasets too large for memory (image files) are streamed by a DataLoader with
worker processes instead.
"""

import dataclasses
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import torch
from torch import nn
from tqdm import tqdm

from enkcvs.io import PathLike
from enkcvs.method import losses
from enkcvs.method.mixup import mixup, partner_index
from enkcvs.rng import Purpose, derive_seed
from enkcvs.training.augment import AUGMENTATIONS
from enkcvs.training.batches import (
    Inputs,
    data_loader,
    epoch_draws,
    input_shape,
    memory_batches,
    model_input,
    resident,
    steps_per_epoch,
    token_lengths,
)
from enkcvs.training.device import Execution, default_device
from enkcvs.training.evaluate import BestEpoch, EpochCurve
from enkcvs.training.graphs import GraphedForward, begin_step, graphs_apply
from enkcvs.training.models import create_model
from enkcvs.training.optimizer import recipe_optimizer
from enkcvs.training.precision import autocast, uses_bf16
from enkcvs.training.recipe import CoTeaching, Recipe
from enkcvs.training.resume import EpochCheckpoint
from enkcvs.training.state import epoch_checkpoint, random_states, set_random_states

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
    bf16: bool = False  # whether forward passes ran under bf16 autocast (enkcvs.training.precision)
    cuda_graphs: bool = False  # whether full-batch steps replayed as CUDA graphs (enkcvs.training.graphs)


class Training(Protocol):
    """What :func:`run_epochs` drives: one model's training (:class:`ModelTraining`) or several trained together
    (:class:`enkcvs.training.stacked.StackTraining`), each of its ``names`` a model with its own history."""

    names: list[str]  # how the epoch lines name each model ("" for a training of one)
    train_loss: list[list[float]]  # each model's mean batch loss per epoch
    recipe: Recipe  # its epochs
    device: torch.device
    bf16: bool  # forward passes under bf16 autocast
    cuda_graphs: bool  # full-batch steps replayed as CUDA graphs

    def train_epoch(self, epoch: int) -> tuple[list[torch.Tensor], list[int]]:
        """The epoch's steps: each model's recorded batch losses (steps, ...) on the device, and samples trained."""

    def end_epoch(self, epoch: int) -> list[float | None]:
        """Schedules advanced, each model's noisy-validation accuracy scored (its best epoch kept)."""

    def state_dict(self) -> dict: ...

    def load_state_dict(self, state: dict) -> None: ...


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


def new_network(recipe: Recipe, *, shape: tuple[int, ...], num_classes: int, device: torch.device) -> nn.Module:
    """A fresh network of ``recipe.model`` for inputs of ``shape``, drawn from torch's global generator."""
    model = create_model(recipe.model, input_shape=shape, num_classes=num_classes, **recipe.model_options)
    return model.to(device).to(memory_format=torch.channels_last)


def check_training(
    recipe: Recipe, x: Inputs, *, loss: str, loss_params: dict | None, co_teaching: CoTeaching | None
) -> None:
    """Refuse combinations :func:`train_model` cannot train, before anything is built."""
    if co_teaching is not None and (loss != "ce" or loss_params):
        raise ValueError(f"co-teaching trains with plain cross-entropy; got loss={loss!r}, loss_params={loss_params}")
    if co_teaching is not None and recipe.mixup_alpha:
        raise ValueError(
            "co-teaching trains without mixup (its small-loss ranking needs each sample's own label): "
            "pass a recipe with mixup_alpha None"
        )
    if recipe.mixup_alpha and isinstance(x, np.ndarray) and x.dtype.kind in "iu" and x.ndim != 4:
        raise ValueError("mixup cannot mix token ids: set recipe.mixup_alpha: null for text datasets")


def epoch_loss(watched: torch.Tensor, *, epoch: int) -> float:
    """The mean recorded loss of an epoch's batches (``watched`` (steps, k): column 0 recorded, the others each
    network's step loss). A NaN or infinite loss raises ``FloatingPointError`` naming the first batch with one and the
    fix: checked here, once per epoch, before the epoch's weights are scored or saved (diverged weights would train on
    silently)."""
    if not len(watched):
        return float("nan")
    finite = torch.isfinite(watched)
    if not finite.all():
        batch = int(torch.nonzero(~finite.all(dim=1))[0])
        raise FloatingPointError(
            f"non-finite loss {watched[batch][~finite[batch]][0].item()} at epoch {epoch}, batch "
            f"{batch + 1}: lower recipe.lr or check the inputs for NaN/inf"
        )
    return float(watched[:, 0].contiguous().mean())


#: An epoch's log line (:func:`log_epoch`): its device's type, whether it trained in bf16 and whether its steps
#: replayed as CUDA graphs end the line.
EPOCH_LINE = re.compile(
    r"(?:^|\s)epoch \d+/\d+  .*  [\d.]+ s  (?P<device>[a-z]+)(?::\d+)?(?P<bf16> bf16)?"
    r"(?P<cuda_graphs> cuda-graphs)?$"
)


def epoch_device(line: str) -> str | None:
    """The device type (``cpu``, ``cuda``) an epoch's log line says it trained on; None for any other line."""
    match = EPOCH_LINE.search(line.rstrip())
    return match["device"] if match else None


def log_epoch(
    epoch: int,
    *,
    epochs: int,
    loss: float,
    accuracy: float | None,
    samples: int,
    training_seconds: float,
    seconds: float,
    device: torch.device,
    bf16: bool,
    model: str = "",
    cuda_graphs: bool = False,
) -> None:
    """An epoch's log line (:data:`EPOCH_LINE`), after ``model`` (which of several trained together) where given."""
    log.info(
        "%sepoch %d/%d  loss %.4f  noisy-validation accuracy %s  %.0f samples/s trained  %.1f s  %s%s%s",
        f"{model}  " if model else "",
        epoch,
        epochs,
        loss,
        f"{accuracy:.4f}" if accuracy is not None else "n/a",
        samples / training_seconds if training_seconds > 0 else float("nan"),
        seconds,
        device,
        " bf16" if bf16 else "",
        " cuda-graphs" if cuda_graphs else "",
    )


def run_epochs(
    training: Training,
    *,
    checkpoint: EpochCheckpoint | None,
    checkpoint_every: int = 1,
    on_epoch: Callable[[int], None] | None = None,
) -> None:
    """The epoch loop: from the epoch after the one ``checkpoint`` holds (if any) to the recipe's last, each epoch's
    steps, its mean batch losses checked and recorded, schedules and best epochs updated, a line per model logged,
    and the whole state saved to ``checkpoint`` every ``checkpoint_every`` epochs (never after the last, when the
    checkpoint is removed); ``on_epoch(epoch)`` after each (progress)."""
    recipe = training.recipe
    done = 0
    if checkpoint is not None and (saved := checkpoint.load()) is not None:
        training.load_state_dict(saved)
        done = saved["epoch"]
    # A bar only in a terminal (disable=None: off when stderr is no TTY, e.g. a Snakemake log file).
    progress = tqdm(total=recipe.epochs, initial=done, desc="training", unit="epoch", disable=None, leave=False)
    for epoch in range(done + 1, recipe.epochs + 1):
        started = time.perf_counter()
        watched, samples = training.train_epoch(epoch)
        for history, losses_ in zip(training.train_loss, watched):
            history.append(epoch_loss(losses_, epoch=epoch))  # waits for the epoch's last step: timed with it
        training_seconds = time.perf_counter() - started
        accuracies = training.end_epoch(epoch)
        for name, history, accuracy, trained in zip(training.names, training.train_loss, accuracies, samples):
            log_epoch(
                epoch,
                epochs=recipe.epochs,
                loss=history[-1],
                accuracy=accuracy,
                samples=trained,
                training_seconds=training_seconds,
                seconds=time.perf_counter() - started,
                device=training.device,
                bf16=training.bf16,
                model=name,
                cuda_graphs=training.cuda_graphs,
            )
        progress.set_postfix_str(f"loss {training.train_loss[0][-1]:.4f}", refresh=False)
        progress.update()
        if checkpoint is not None and epoch < recipe.epochs and epoch % checkpoint_every == 0:
            checkpoint.save({"epoch": epoch, **training.state_dict()})
        if on_epoch is not None:
            on_epoch(epoch)
    progress.close()
    if checkpoint is not None:
        checkpoint.remove()


class ModelTraining:
    """One model's training: a network (two for co-teaching) with its optimizer each, its own generators (batch
    order, augmentation and mixup partners from ``generator``, mixup's lambda from ``rng``), whole-batch steps on the
    device, and the best epoch by noisy validation."""

    def __init__(
        self,
        *,
        recipe: Recipe,
        x: Inputs,
        targets: np.ndarray,
        seed: int,
        validation: tuple[Inputs, np.ndarray] | None,
        execution: Execution,
        loss_function: Callable,
        co_teaching: CoTeaching | None,
        curve: tuple[Inputs, np.ndarray] | None,
    ):
        device = execution.device
        self.recipe, self.device, self.co_teaching, self.loss_function = recipe, device, co_teaching, loss_function
        self.names = [""]
        self.train_loss: list[list[float]] = [[]]
        self.step = 0  # optimizer steps taken
        torch.manual_seed(seed)
        self.rng = np.random.default_rng(seed)  # mixup's lambda
        self.generator = torch.Generator(device="cpu").manual_seed(seed)  # order, augmentation, mixup partners
        shape = {"shape": input_shape(x), "num_classes": targets.shape[1], "device": device}
        self.models = [new_network(recipe, **shape)]
        if co_teaching is not None:
            torch.manual_seed(derive_seed(seed, Purpose.PEER))
            self.models.append(new_network(recipe, **shape))
        self.bf16 = uses_bf16(recipe.bf16, device=device)
        self.cuda_graphs = graphs_apply(execution.cuda_graphs, model=recipe.model, device=device)
        self.forwards = [
            GraphedForward(model, batch_size=recipe.batch_size) if self.cuda_graphs else model for model in self.models
        ]
        self.optimizers = [recipe_optimizer(recipe, model.parameters()) for model in self.models]
        self.best = BestEpoch(validation, device=device, workers=execution.loader_workers, bf16=self.bf16)
        self.curve = (
            None
            if curve is None
            else EpochCurve(curve, device=device, workers=execution.loader_workers, bf16=self.bf16)
        )
        self.targets = torch.as_tensor(targets, device=device)
        self.num_samples = len(x)
        self.streamed = None
        if isinstance(x, np.ndarray):
            self.x, self.lengths = resident(x, device), token_lengths(x)
        else:
            self.streamed = data_loader(
                x,
                batch_size=recipe.batch_size,
                workers=execution.loader_workers,
                device=device,
                generator=torch.Generator().manual_seed(derive_seed(seed, Purpose.FOLDS)),
            )

    def _batches(self, draws):
        """The epoch's batches, in the order its draws (or the DataLoader) give: inputs as the model takes them and
        their (B, Q) targets."""
        if self.streamed is None:
            yield from memory_batches(self.x, self.targets, draws=draws, lengths=self.lengths)
            return
        sizes = iter(draws.sizes)
        for images, positions in self.streamed:
            if next(sizes, None) is None:  # the limit of steps_per_epoch reached, or a last batch of one sample
                return
            # The loader pins its batches on a GPU (data_loader), so neither copy waits for the device.
            images, positions = images.to(self.device, non_blocking=True), positions.to(self.device, non_blocking=True)
            yield model_input(images), self.targets[positions]

    def _batch_loss(
        self, xb: torch.Tensor, tb: torch.Tensor, *, draws, step: int, epoch: int
    ) -> tuple[list[torch.Tensor], torch.Tensor]:
        """A step's losses: co-teaching's exchange between the two networks, or the loss of one network on the
        batch, augmented and mixed first (Eq. mixup) where the recipe says, each from the epoch's draws of this
        step. Returns the loss each network steps on and the loss recorded."""
        if self.recipe.augment and xb.ndim == 4:
            _, augment = AUGMENTATIONS[self.recipe.augment]
            xb = augment(xb, **{name: drawn[step, ..., : len(tb)] for name, drawn in draws.augment.items()})
        if self.cuda_graphs:
            begin_step()
        if self.co_teaching is not None:
            epoch_steps = steps_per_epoch(
                self.num_samples, batch_size=self.recipe.batch_size, limit=self.recipe.steps_per_epoch
            )
            forget_rate = self.co_teaching.rate(epoch=epoch, step=self.step + 1, steps_per_epoch=epoch_steps)
            with autocast(self.device, enabled=self.bf16):
                logits = (self.forwards[0](xb), self.forwards[1](xb))
            return co_teaching_losses(tuple(net.float() for net in logits), tb, forget_rate=forget_rate)
        if self.recipe.mixup_alpha:
            xb, tb = mixup(xb, tb, lam=draws.lambdas[step], partner=partner_index(draws.partners[step], size=len(tb)))
        with autocast(self.device, enabled=self.bf16):
            logits = self.forwards[0](xb)
        step_loss = self.loss_function(logits.float(), tb)
        return [step_loss], step_loss

    def _step(self, step_losses: list[torch.Tensor]) -> None:
        """Step each network's optimizer on its loss."""
        for optimizer, step_loss in zip(self.optimizers, step_losses):
            optimizer.zero_grad()
            step_loss.backward()
            optimizer.step()

    def train_epoch(self, epoch: int) -> tuple[list[torch.Tensor], list[int]]:
        """One epoch of steps of the networks in train mode. Nothing is read back from the device, which would make
        every step wait for the previous one (:func:`epoch_loss` reads the losses once the epoch is done). Running
        out of device memory raises ``MemoryError`` naming the batch size to lower."""
        for model in self.models:
            model.train()
        draws = epoch_draws(
            self.num_samples, recipe=self.recipe, generator=self.generator, rng=self.rng, device=self.device
        )
        watched, samples = [], 0
        for step, (xb, tb) in enumerate(self._batches(draws)):
            try:
                step_losses, loss = self._batch_loss(xb, tb, draws=draws, step=step, epoch=epoch)
                self._step(step_losses)
            except torch.OutOfMemoryError as error:
                batch_size = self.recipe.batch_size
                raise MemoryError(
                    f"out of {self.device.type} memory at epoch {epoch}, batch {step + 1} with "
                    f"batch_size {batch_size}: lower recipe.batch_size (e.g. to "
                    f"{max(batch_size // 2, 2)})"
                ) from error
            watched.append(torch.stack([loss, *step_losses]).detach())
            samples += len(tb)
            self.step += 1
        return [torch.stack(watched) if watched else torch.empty(0, 1 + len(self.models))], [samples]

    def end_epoch(self, epoch: int) -> list[float | None]:
        for optimizer in self.optimizers:
            optimizer.end_epoch()
        accuracy = self.best.update(self.models, epoch=epoch)
        if self.curve is not None:
            log.info(
                "curve accuracy after epoch %d/%d: %.4f (recorded only)",
                epoch,
                self.recipe.epochs,
                self.curve.update(self.models),
            )
        return [accuracy]

    def state_dict(self) -> dict:
        """Everything this training needs to go on after an epoch (:meth:`load_state_dict`)."""
        state = {
            "train_loss": self.train_loss[0],
            "step": self.step,
            "best": self.best.state_dict(),
            "models": [{name: tensor.clone() for name, tensor in model.state_dict().items()} for model in self.models],
            "optimizers": [optimizer.state_dict() for optimizer in self.optimizers],
            "random": random_states(device=self.device, generator=self.generator, rng=self.rng),
        }
        return state | ({"curve": self.curve.history} if self.curve is not None else {})

    def load_state_dict(self, state: dict) -> None:
        for model, optimizer, model_state, optimizer_state in zip(
            self.models, self.optimizers, state["models"], state["optimizers"], strict=True
        ):
            model.load_state_dict(model_state)
            optimizer.load_state_dict(optimizer_state)
        self.best.load_state_dict(state["best"])
        if self.curve is not None:
            self.curve.history = list(state["curve"])
        set_random_states(state["random"], device=self.device, generator=self.generator, rng=self.rng)
        self.train_loss, self.step = [list(state["train_loss"])], state["step"]

    def result(self) -> TrainingResult:
        """The networks with the best epoch's weights (eval mode), and the history."""
        self.best.restore(self.models)
        return TrainingResult(
            model=self.models[0],
            best_epoch=self.recipe.epochs if self.best.best_epoch is None else self.best.best_epoch,
            train_loss=self.train_loss[0],
            validation_accuracy=self.best.history,
            curve_accuracy=self.curve.history if self.curve is not None else [],
            peer=self.models[1] if self.co_teaching else None,
            bf16=self.bf16,
            cuda_graphs=self.cuda_graphs,
        )


def train_model(
    *,
    recipe: Recipe,
    x: Inputs,
    targets: np.ndarray,
    seed: int,
    validation: tuple[Inputs, np.ndarray] | None = None,
    device: torch.device | None = None,
    execution: Execution | None = None,
    loss: str = "ce",
    loss_params: dict[str, float] | None = None,
    co_teaching: CoTeaching | None = None,
    resume: PathLike | None = None,
    curve: tuple[Inputs, np.ndarray] | None = None,
    on_epoch: Callable[[int], None] | None = None,
) -> TrainingResult:
    """Train a fresh model of ``recipe.model`` with a milestone lr schedule, and mixup when ``recipe.mixup_alpha``
    is set (which methods mix is decided per method: :func:`enkcvs.training.final.final_recipe`).

    Parameters
    ----------
    recipe : the dataset's training recipe.
    x : the N training inputs: images (N, C, H, W) float32 in [0, 1] or uint8, token ids (N, 2, L) int64 (ids and
        attention mask), or a torch Dataset of (input, position in 0..N-1) streamed by a DataLoader.
    targets : (N, Q) soft targets, each row scaled by the sample's loss weight (one-hot rows for plain CE).
    seed : seeds initialisation, batch order, augmentation and mixup.
    validation : optional (inputs as ``x`` (V, ...), labels (V,)); the epoch with the best accuracy on it is kept
        (Appendix, Eq. para_val). Without it the last epoch is kept.
    device : the device, where ``execution`` is not given; default :func:`enkcvs.training.device.default_device`.
    execution : how it runs (:class:`enkcvs.training.device.Execution`: device, DataLoader workers, CUDA graphs,
        checkpoint interval); default on ``device`` with the defaults.
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
    resume : an epoch checkpoint file (:mod:`enkcvs.training.resume`): written every ``execution.checkpoint_every``
        epochs but after the last, removed at the end; a training started again with the same arguments goes on after
        the epoch it holds, and ends with the same weights and history as one never interrupted. Inputs streamed from
        disk are not checkpointed.
    curve : optional labelled data (inputs as ``x`` (C, ...), labels (C,)) scored after every epoch and only recorded
        (:class:`enkcvs.training.evaluate.EpochCurve`); training and the weights kept are the same without it.
    on_epoch : called with the epoch's number after each (progress).

    Returns
    -------
    The model (eval mode) with the kept weights, and the per-epoch history (``curve_accuracy`` with ``curve``); with
    co-teaching, network 1 as ``model`` and network 2 (same kept epoch) as ``peer``.
    """
    execution = execution or Execution(device=device or default_device())
    check_training(recipe, x, loss=loss, loss_params=loss_params, co_teaching=co_teaching)
    training = ModelTraining(
        recipe=recipe,
        x=x,
        targets=targets,
        seed=seed,
        validation=validation,
        execution=execution,
        loss_function=losses.make_loss(loss, **(loss_params or {})),
        co_teaching=co_teaching,
        curve=curve,
    )
    checkpoint = epoch_checkpoint(
        resume,
        recipe=recipe,
        arrays={"x": x, "targets": targets, "validation": validation},
        settings={
            "seed": seed,
            "loss": loss,
            "loss_params": loss_params,
            "bf16": training.bf16,
            "device": execution.device.type,
            "curve": curve is not None,
            "co_teaching": dataclasses.asdict(co_teaching) if co_teaching else None,
            "cuda_graphs": training.cuda_graphs,
        },
    )
    run_epochs(training, checkpoint=checkpoint, checkpoint_every=execution.checkpoint_every, on_epoch=on_epoch)
    return training.result()
