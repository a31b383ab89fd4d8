"""Several models of one recipe trained together as one stacked program (:class:`StackTraining`, driven by the one
epoch loop, :func:`enkcvs.training.train.run_epochs`): their weights stacked along a leading model axis
(``torch.func.stack_module_state``), every step one ``torch.vmap`` over ``torch.func.functional_call``, so that a GPU
runs the M x K small fold models of a selection in one pass instead of M x K processes taking turns.

Each model is still its own training, the one :func:`enkcvs.training.train.train_model` trains from the same
arguments: the same initial weights (``torch.manual_seed(seed)``, then the network), its own batch order,
augmentation and mixup draws (its own generators, drawn at each epoch's start exactly as a training of one draws
them: :func:`enkcvs.training.batches.epoch_draws`), its own batch-norm statistics and noisy-validation best epoch. The
weights equal train_model's up to float rounding (a stacked convolution sums in another order; tests/test_stacked.py).

What a step costs the host does not grow with the number of models G: every model's batch is gathered from the
stacked inputs in one indexing, mixed and augmented from the epoch's (G, steps, B) draws in a few kernels, and one
stacked optimizer (:mod:`enkcvs.training.optimizer`) updates all weights at once. On a GPU, where the job asks for CUDA graphs,
the whole step is captured as one graph (:class:`enkcvs.training.graphs.StepGraph`). The steps where every model has a
full batch are all but an epoch's last: there the models' batches differ in size (folds of unequal size), and each
size runs once on the models concerned, eager; a model without a batch in a step is not touched by it.

The stack saves one epoch checkpoint of all its models (not one per model), every ``checkpoint_every`` epochs.
"""

import copy
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch.func import functional_call, stack_module_state, vmap

from enkcvs.io import PathLike
from enkcvs.method.losses import cross_entropy_per_sample
from enkcvs.method.mixup import partner_index
from enkcvs.training.augment import AUGMENTATIONS
from enkcvs.training.batches import batch_sizes, epoch_draws, input_shape, model_input, resident
from enkcvs.training.device import Execution, default_device, upload
from enkcvs.training.graphs import StepGraph, graphs_apply
from enkcvs.training.optimizer import STACKED_OPTIMIZERS
from enkcvs.training.precision import autocast, uses_bf16
from enkcvs.training.recipe import STATIC_MODELS, Recipe
from enkcvs.training.state import epoch_checkpoint
from enkcvs.training.train import TrainingResult, check_training, new_network, run_epochs

log = logging.getLogger(__name__)

#: Samples of each model a stacked evaluation takes at once (validation scores and predictions).
EVALUATION_CHUNK = 1024


def stacking_problem(recipe: Recipe, *, xs: Sequence, validations: Sequence) -> str | None:
    """Why models of ``recipe`` on inputs ``xs`` cannot be trained stacked, or None when they can."""
    inputs = [*xs, *(validation[0] for validation in validations if validation is not None)]
    if not all(isinstance(x, np.ndarray) for x in inputs):
        return "stream image files from disk (each model would need its own DataLoader)"
    if any(x.dtype.kind in "iu" and x.ndim != 4 for x in inputs):
        return "train on token ids (a text model cuts each batch to its own length and draws dropout)"
    if recipe.model not in STATIC_MODELS:
        return f"train {recipe.model}, whose dropout or changing shapes no vmapped step can share"
    if recipe.lr_step_decay or recipe.lr_linear_decay_from:
        return "train with a time-based or linear lr decay (a stack steps on the recipe's milestone schedule)"
    if len({input_shape(x) for x in inputs}) > 1:
        return "train inputs of different shapes"
    return None


def _normalize_in_fp32(norm: nn.Module) -> None:
    """Batch norm of a bf16 input in fp32, its output handed back in bf16: what the unstacked kernel does under
    autocast (bf16 in and out, fp32 statistics and affine weights). vmap's batch-norm rule has no such mixed kernel and
    refuses a bf16 input beside fp32 weights ("expected scalar type BFloat16 but found Float"). An input of the
    weights' own precision (fp32, or fp64 where a network is built in it) is left as it is."""
    forward = norm.forward

    def mixed_forward(x: torch.Tensor) -> torch.Tensor:
        return forward(x.float()).to(x.dtype) if x.dtype == torch.bfloat16 else forward(x)

    norm.forward = mixed_forward


def _padded(arrays: Sequence[np.ndarray | torch.Tensor], *, device: torch.device) -> torch.Tensor:
    """``arrays`` (n_i, ...) as one (G, max n_i, ...) device tensor, zero past each one's end; held once when every
    array is the same one."""
    if all(array is arrays[0] for array in arrays):
        return resident(arrays[0], device).unsqueeze(0).expand(len(arrays), *arrays[0].shape)
    return torch.nn.utils.rnn.pad_sequence(
        [torch.as_tensor(array, device=device) for array in arrays], batch_first=True
    )


@dataclass
class _Stacked:
    """Per-model inputs as one padded tensor each (G, max n, ...), with each model's count."""

    x: torch.Tensor
    counts: list[int]
    y: torch.Tensor | None = None  # (G, max n) labels (validation), -1 past each model's end

    @classmethod
    def of(cls, arrays: Sequence[np.ndarray], *, device: torch.device, labels: Sequence[np.ndarray] | None = None):
        y = None
        if labels is not None:
            y = torch.full((len(labels), max(len(label) for label in labels)), -1, dtype=torch.long, device=device)
            for index, label in enumerate(labels):
                y[index, : len(label)] = torch.as_tensor(label, device=device)
        return cls(x=_padded(arrays, device=device), counts=[len(array) for array in arrays], y=y)


class StackTraining:
    """G models of one recipe trained together (the module's docstring), as :func:`run_epochs` drives a training."""

    def __init__(
        self,
        *,
        recipe: Recipe,
        xs: Sequence[np.ndarray],
        targets: Sequence[np.ndarray],
        seeds: Sequence[int],
        validations: Sequence[tuple[np.ndarray, np.ndarray] | None],
        execution: Execution,
    ):
        device = self.device = execution.device
        self.recipe, self.models = recipe, len(xs)
        self.names = [f"model {index + 1}/{self.models}" for index in range(self.models)]
        self.train_loss: list[list[float]] = [[] for _ in range(self.models)]
        self.generators, self.rngs, networks = [], [], []
        shape, num_classes = input_shape(xs[0]), targets[0].shape[1]
        for seed in seeds:  # each model built as train_model builds it: the global seed set first
            torch.manual_seed(seed)
            self.rngs.append(np.random.default_rng(seed))
            self.generators.append(torch.Generator(device="cpu").manual_seed(seed))
            networks.append(new_network(recipe, shape=shape, num_classes=num_classes, device=device))
        self.params, self.buffers = stack_module_state(networks)
        # functional_call swaps every tensor of the network for the stack's: a copy on the meta device holds none
        self.network = copy.deepcopy(networks[0]).to("meta")
        for module in self.network.modules():
            if isinstance(module, nn.modules.batchnorm._BatchNorm):
                _normalize_in_fp32(module)
        self.bf16 = uses_bf16(recipe.bf16, device=device)
        self.data = _Stacked.of(xs, device=device)
        self.targets = _padded(targets, device=device)
        self.sizes = [
            batch_sizes(count, batch_size=recipe.batch_size, limit=recipe.steps_per_epoch) for count in self.data.counts
        ]
        self.full_steps = min(sum(size == recipe.batch_size for size in sizes) for sizes in self.sizes)
        scored = [index for index, validation in enumerate(validations) if validation is not None]
        self.validation = (
            None
            if not scored
            else _Stacked.of(
                [validations[index][0] for index in scored],
                device=device,
                labels=[validations[index][1] for index in scored],
            )
        )
        self.scored = scored  # the models with validation data; the others keep their last epoch
        self.history = [[] for _ in range(self.models)]  # noisy-validation accuracy per epoch
        self.best_accuracy = torch.full((self.models,), -1.0, dtype=torch.float64, device=device)
        self.best_epoch = [None] * self.models
        self.best = {name: tensor.detach().clone() for name, tensor in {**self.params, **self.buffers}.items()}
        self.cuda_graphs = graphs_apply(execution.cuda_graphs, model=recipe.model, device=device)
        self.optimizer = STACKED_OPTIMIZERS[recipe.optimizer](
            self.params, recipe=recipe, device=device, captured=self.cuda_graphs
        )
        self.steps = 0  # full steps taken in the epoch so far, a tensor so that a captured step reads it
        self.step_index = torch.zeros((), dtype=torch.long, device=device)
        self.every = torch.arange(self.models, device=device)
        longest = max(len(sizes) for sizes in self.sizes)
        self.epoch_losses = torch.full((self.models, longest), float("nan"), dtype=torch.float32, device=device)
        self.draws: dict[str, torch.Tensor] = {}
        self.full_step = StepGraph(self._full_step) if self.cuda_graphs else self._full_step

    def _forward(self, params: dict, buffers: dict, xb: torch.Tensor) -> torch.Tensor:
        """Logits (g, B, Q) of g stacked models on their batches (g, B, ...): one vmap over ``functional_call``;
        in train mode batch norm updates the statistics in place."""
        return vmap(lambda own_params, own_buffers, x: functional_call(self.network, (own_params, own_buffers), (x,)))(
            params, buffers, xb
        )

    def _draw_epoch(self) -> None:
        """Every model's draws of the epoch (:func:`enkcvs.training.batches.epoch_draws`, each from its own
        generators), stacked (G, steps, ...) into the tensors the steps read, at fixed addresses."""
        draws = [
            epoch_draws(count, recipe=self.recipe, generator=generator, rng=rng, device=self.device)
            for count, generator, rng in zip(self.data.counts, self.generators, self.rngs)
        ]
        stacked = {"order": _padded([drawn.order for drawn in draws], device=self.device)}
        if self.recipe.mixup_alpha:
            stacked["partners"] = _padded([drawn.partners for drawn in draws], device=self.device)
            stacked["lambdas"] = _padded([drawn.lambdas for drawn in draws], device=self.device)
        for name in draws[0].augment:
            stacked[name] = _padded([drawn.augment[name] for drawn in draws], device=self.device)
        for name, tensor in stacked.items():
            if name in self.draws and self.draws[name].shape == tensor.shape:
                self.draws[name].copy_(tensor)  # where a captured step reads them
            else:
                self.draws[name] = tensor.clone()
        self.epoch_losses.fill_(float("nan"))

    def _step_loss(self, rows: torch.Tensor | None, step: torch.Tensor, size: int) -> torch.Tensor:
        """The losses (g,) of one step of the models ``rows`` (None: all) on their batches of ``size``: gathered,
        augmented and mixed from the epoch's draws of ``step`` (a 0-d device tensor), forward and backward."""
        every = self.every if rows is None else rows
        draws = {name: drawn if rows is None else drawn[rows] for name, drawn in self.draws.items()}
        positions = step * self.recipe.batch_size + torch.arange(size, device=self.device)
        batch = draws["order"][:, positions]  # (g, B)
        xb = model_input(self.data.x[every[:, None], batch].flatten(0, 1)).unflatten(0, batch.shape)
        tb = self.targets[every[:, None], batch]
        if self.recipe.augment:
            _, augment = AUGMENTATIONS[self.recipe.augment]
            row = {
                name: draws[name].index_select(1, step.view(1)).squeeze(1)[..., :size]
                for name in draws
                if name not in ("order", "partners", "lambdas")
            }  # (g, ..., B)
            xb = augment(
                xb.flatten(0, 1), **{name: drawn.movedim(0, -2).flatten(-2) for name, drawn in row.items()}
            ).unflatten(0, batch.shape)
        if self.recipe.mixup_alpha:
            partner = partner_index(draws["partners"].index_select(1, step.view(1)).squeeze(1), size=size)
            lam = draws["lambdas"].index_select(1, step.view(1))  # (g, 1)
            lam_x = lam.view(-1, *[1] * (xb.ndim - 1))
            gathered = torch.arange(len(batch), device=self.device)[:, None]
            xb = lam_x * xb + (1.0 - lam_x) * xb[gathered, partner]
            tb = lam[:, :, None] * tb + (1.0 - lam[:, :, None]) * tb[gathered, partner]
        params = self.params if rows is None else {name: param[rows] for name, param in self.params.items()}
        buffers = self.buffers if rows is None else {name: buffer[rows] for name, buffer in self.buffers.items()}
        with autocast(self.device, enabled=self.bf16):
            logits = self._forward(params, buffers, xb)
        losses = vmap(lambda logit, target: cross_entropy_per_sample(logit, target).mean())(logits.float(), tb)
        losses.sum().backward()  # each model's loss depends on its own weights only: its gradient is its own
        if rows is not None:
            with torch.no_grad():
                for name, gathered_buffer in buffers.items():
                    self.buffers[name][rows] = gathered_buffer  # batch norm's statistics of the models stepped
        return losses.detach()

    def _full_step(self) -> None:
        """A step of every model on a full batch, its inputs and outputs at fixed addresses (capturable)."""
        for param in self.params.values():
            if param.grad is not None:
                param.grad.zero_()
        losses = self._step_loss(None, self.step_index, self.recipe.batch_size)
        self.optimizer.step()
        self.epoch_losses.index_copy_(1, self.step_index.view(1), losses[:, None])
        self.step_index += 1

    def train_epoch(self, epoch: int) -> tuple[list[torch.Tensor], list[int]]:
        self._draw_epoch()
        self.network.train()
        self.step_index.zero_()
        try:
            for _ in range(self.full_steps):
                self.full_step()
            for step in range(self.full_steps, max(len(sizes) for sizes in self.sizes)):
                sizes = {
                    index: self.sizes[index][step] for index in range(self.models) if step < len(self.sizes[index])
                }
                for size in sorted(set(sizes.values()), reverse=True):
                    rows = upload(
                        torch.tensor([index for index, own in sizes.items() if own == size]), device=self.device
                    )
                    for param in self.params.values():
                        if param.grad is not None:  # zeroed, not dropped: a captured full step writes into them
                            param.grad.zero_()
                    losses = self._step_loss(rows, upload(torch.tensor(step), device=self.device), size)
                    self.optimizer.step(rows)
                    self.epoch_losses[rows, step] = losses
        except torch.OutOfMemoryError as error:
            raise MemoryError(
                f"out of {self.device.type} memory at epoch {epoch} training {self.models} models "
                f"stacked, batch_size {self.recipe.batch_size}: lower recipe.batch_size, or train each "
                "model in a job of its own (the default: no stacked_folds)"
            ) from error
        watched = [self.epoch_losses[index, : len(self.sizes[index]), None] for index in range(self.models)]
        return watched, [sum(sizes) for sizes in self.sizes]

    @torch.no_grad()
    def _logits(self, data: _Stacked, rows: list[int]) -> torch.Tensor:
        """Logits (len(rows), max n, Q) of the models ``rows`` in eval mode on ``data`` (one row each), in chunks."""
        self.network.eval()
        index = torch.tensor(rows, device=self.device)
        params = {name: param[index] for name, param in self.params.items()}
        buffers = {name: buffer[index] for name, buffer in self.buffers.items()}
        chunks = []
        for start in range(0, data.x.shape[1], EVALUATION_CHUNK):
            xb = data.x[:, start : start + EVALUATION_CHUNK]
            xb = model_input(xb.flatten(0, 1)).unflatten(0, xb.shape[:2])
            with autocast(self.device, enabled=self.bf16):
                chunks.append(self._forward(params, buffers, xb).float())
        self.network.train()
        return torch.cat(chunks, dim=1)

    def end_epoch(self, epoch: int) -> list[float | None]:
        """Schedule advanced; each model with validation data scored, and its weights kept where they are its
        best (the first epoch of its highest accuracy)."""
        self.optimizer.end_epoch()
        accuracies = [None] * self.models
        if self.validation is None:
            return accuracies
        correct = (self._logits(self.validation, self.scored).argmax(dim=2) == self.validation.y).sum(dim=1)
        accuracy = correct.double() / torch.tensor(self.validation.counts, dtype=torch.float64, device=self.device)
        improved = torch.zeros(self.models, dtype=torch.bool, device=self.device)
        rows = torch.tensor(self.scored, device=self.device)
        improved[rows] = accuracy > self.best_accuracy[rows]
        self.best_accuracy[rows] = torch.where(improved[rows], accuracy, self.best_accuracy[rows])
        with torch.no_grad():
            for name, tensor in {**self.params, **self.buffers}.items():
                mask = improved.view(-1, *[1] * (tensor.ndim - 1))
                self.best[name].copy_(torch.where(mask, tensor, self.best[name]))
        for index, value, better in zip(self.scored, accuracy.tolist(), improved[rows].tolist()):
            self.history[index].append(value)
            accuracies[index] = value
            if better:
                self.best_epoch[index] = epoch
        return accuracies

    def state_dict(self) -> dict:
        return {
            "train_loss": self.train_loss,
            "history": self.history,
            "best_epoch": self.best_epoch,
            "best_accuracy": self.best_accuracy.clone(),
            "best": {k: v.clone() for k, v in self.best.items()},
            "params": {k: v.detach().clone() for k, v in self.params.items()},
            "buffers": {k: v.clone() for k, v in self.buffers.items()},
            "optimizer": self.optimizer.state_dict(),
            "random": {
                "batches": [generator.get_state() for generator in self.generators],
                "numpy": [rng.bit_generator.state for rng in self.rngs],
            },
        }

    def load_state_dict(self, state: dict) -> None:
        with torch.no_grad():
            for source, target in (
                (state["params"], self.params),
                (state["buffers"], self.buffers),
                (state["best"], self.best),
            ):
                for name, tensor in source.items():
                    target[name].copy_(tensor)
        self.optimizer.load_state_dict(state["optimizer"])
        self.best_accuracy.copy_(state["best_accuracy"])
        self.train_loss, self.history = [list(h) for h in state["train_loss"]], [list(h) for h in state["history"]]
        self.best_epoch = list(state["best_epoch"])
        for generator, saved in zip(self.generators, state["random"]["batches"]):
            generator.set_state(saved)
        for rng, saved in zip(self.rngs, state["random"]["numpy"]):
            rng.bit_generator.state = saved

    def model(self, index: int, *, weights: dict[str, torch.Tensor]) -> nn.Module:
        """Model ``index`` as a network of its own, with ``weights`` (stacked, e.g. the best epoch's) row ``index``."""
        shape, num_classes = tuple(self.data.x.shape[2:]), self.targets.shape[2]
        with torch.random.fork_rng(devices=[]):
            network = new_network(self.recipe, shape=shape, num_classes=num_classes, device=self.device)
        network.load_state_dict({name: tensor[index] for name, tensor in weights.items()})
        return network.eval()

    def results(self) -> list[TrainingResult]:
        """Each model with its best epoch's weights (its last where it has no validation data)."""
        kept = {
            name: torch.where(self._scored_mask(tensor), self.best[name], tensor)
            for name, tensor in {**self.params, **self.buffers}.items()
        }
        return [
            TrainingResult(
                model=self.model(index, weights=kept),
                best_epoch=self.best_epoch[index] or self.recipe.epochs,
                train_loss=self.train_loss[index],
                validation_accuracy=self.history[index],
                bf16=self.bf16,
                cuda_graphs=self.cuda_graphs,
            )
            for index in range(self.models)
        ]

    def _scored_mask(self, tensor: torch.Tensor) -> torch.Tensor:
        scored = torch.zeros(self.models, dtype=torch.bool, device=self.device)
        scored[self.scored] = True
        return scored.view(-1, *[1] * (tensor.ndim - 1))


def train_stacked(
    *,
    recipe: Recipe,
    xs: Sequence[np.ndarray],
    targets: Sequence[np.ndarray],
    seeds: Sequence[int],
    validations: Sequence[tuple[np.ndarray, np.ndarray] | None],
    device: torch.device | None = None,
    execution: Execution | None = None,
    resume: PathLike | None = None,
    on_epoch: Callable[[int], None] | None = None,
) -> list[TrainingResult]:
    """Train G models of ``recipe`` together, each as ``train_model(recipe=recipe, x=xs[i], targets=targets[i],
    seed=seeds[i], validation=validations[i])`` trains it with plain cross-entropy.

    Parameters
    ----------
    recipe : the training recipe all G models share (SGD or Adam on milestones, a model of
        :data:`~enkcvs.training.recipe.STATIC_MODELS`).
    xs : G arrays of training inputs held in memory (N_i, ...) of one shape (N_i may differ; the same array given G
        times is held once).
    targets : G (N_i, Q) soft targets.
    seeds : G seeds, each seeding its model's initialisation, batch order, augmentation and mixup.
    validations : G (inputs (V_i, ...), labels (V_i,)) picking each model's best epoch, or None (its last).
    device, execution : as :func:`enkcvs.training.train.train_model` takes them.
    resume : the stack's epoch checkpoint file (one for all G models): written every ``execution.checkpoint_every``
        epochs; started again with the same arguments, the stack goes on after the epoch it holds.
    on_epoch : called with the epoch's number (1-based) after each epoch (progress).

    Returns
    -------
    G :class:`enkcvs.training.train.TrainingResult`, in the order given.

    Raises
    ------
    ValueError : inputs or a recipe this cannot train stacked (streamed image files, token ids, dropout, a time-based
        lr decay): the message names the fix.
    """
    execution = execution or Execution(device=device or default_device())
    if not len(xs) == len(targets) == len(seeds) == len(validations):
        raise ValueError(
            f"one of each per model: got {len(xs)} xs, {len(targets)} targets, {len(seeds)} seeds, "
            f"{len(validations)} validations"
        )
    for x in xs:
        check_training(recipe, x, loss="ce", loss_params=None, co_teaching=None)
    if (problem := stacking_problem(recipe, xs=xs, validations=validations)) is not None:
        raise ValueError(
            f"models trained stacked cannot {problem}: train each model on its own (no stacked_folds; stacked=False)"
        )
    training = StackTraining(
        recipe=recipe, xs=xs, targets=targets, seeds=seeds, validations=validations, execution=execution
    )
    checkpoint = epoch_checkpoint(
        resume,
        recipe=recipe,
        arrays={"xs": list(xs), "targets": list(targets), "validations": list(validations)},
        settings={
            "seeds": list(seeds),
            "bf16": training.bf16,
            "stacked": True,
            "device": execution.device.type,
            "cuda_graphs": training.cuda_graphs,
        },
    )
    run_epochs(training, checkpoint=checkpoint, checkpoint_every=execution.checkpoint_every, on_epoch=on_epoch)
    return training.results()
