"""Several models of one recipe trained together as one stacked program: their weights stacked along a leading model
axis (``torch.func.stack_module_state``) and every step one ``torch.vmap`` over ``torch.func.functional_call``, so
that a GPU runs the K small fold models of an iteration in one pass instead of K processes taking turns.

Each model is still its own training, the one :func:`enkcvs.training.train.train_model` trains from the same
arguments: the same initial weights (``torch.manual_seed(seed)``, then the network), its own batch order,
augmentation and mixup draws (its own generators), its own optimizer, batch-norm statistics, noisy-validation best
epoch and epoch checkpoint (in train_model's format, so either can resume the other's). The weights equal train_model's
up to float rounding (a stacked convolution sums in another order), within 1e-5 after a few epochs in fp32
and within bf16's rounding under bf16 autocast (tests/test_stacked.py). A step where the models' batches differ in
size (the last batch of an epoch over unequal folds) runs once per size on the models concerned; a model without a batch in a step is not touched by it.

On a GPU the stack's full steps (every model on a full batch) replay as CUDA graphs where ``recipe.cuda_graphs``
says so (``auto``: where a probe of this stack's forward and backward passes shows they pay, as for one model:
:mod:`enkcvs.training.graphs`); the other steps run eager on the same weights.
"""

import copy
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn
from torch.func import functional_call, stack_module_state, vmap

from enkcvs.io import PathLike
from enkcvs.method.losses import soft_cross_entropy
from enkcvs.training.batches import Inputs, batch_source, probe_batch
from enkcvs.training.device import training_device, upload
from enkcvs.training.graphs import begin_step, compiled, resolve_cuda_graphs
from enkcvs.training.precision import autocast
from enkcvs.training.recipe import Recipe
from enkcvs.training.resume import EpochCheckpoint
from enkcvs.training.state import restore_training, training_state
from enkcvs.training.train import (TrainingResult, check_training, epoch_loss, full_batch_steps, log_epoch,
                                   mixed_batch, new_networks, training_checkpoint, training_parts)

log = logging.getLogger(__name__)


@dataclass
class _Member:
    """One model of the stack and what its training draws from and keeps, as :func:`train_model` holds them."""

    model: nn.Module  # its parameters and buffers are views of the stack's (:func:`_stack`)
    generator: torch.Generator  # batch order, augmentation, mixup partners
    rng: np.random.Generator  # mixup's lambda
    epoch_batches: Callable[[], Iterator]
    parts: dict = field(default_factory=dict)  # train.py's training_parts: optimizers, best epoch, randomness
    checkpoint: EpochCheckpoint | None = None
    train_loss: list[float] = field(default_factory=list)
    step: int = 0  # optimizer steps taken
    done: int = 0  # epochs done (more than 0 when resumed)


@dataclass
class _Stack:
    """The models' parameters and buffers stacked (K, ...), and a weightless copy of the network to call them with."""

    params: dict[str, torch.Tensor]
    buffers: dict[str, torch.Tensor]
    network: nn.Module
    graphed: Callable[[torch.Tensor], torch.Tensor] | None = None  # the full steps' forward pass, as CUDA graphs


def _forward(network: nn.Module, params: dict[str, torch.Tensor], buffers: dict[str, torch.Tensor],
             xb: torch.Tensor) -> torch.Tensor:
    """Logits (G, B, Q) of G stacked models (``params`` and ``buffers`` (G, ...)) on their batches ``xb`` (G, B, ...):
    one vmap over ``functional_call`` of the weightless ``network``; batch norm updates the statistics in place."""
    return vmap(lambda own_params, own_buffers, x: functional_call(network, (own_params, own_buffers), (x,)))(
        params, buffers, xb)


class StackedForward(nn.Module):
    """A stack's forward pass as a module, inputs (G, B, ...) -> logits (G, B, Q) on the stack's own weights: what
    CUDA graphs replay and their probe times (:func:`enkcvs.training.graphs.compiled`). The weights stay at fixed
    addresses (marked static), as a graph replaying them needs."""

    def __init__(self, stack: _Stack):
        super().__init__()
        self.stack = stack
        for tensor in (*stack.params.values(), *stack.buffers.values()):
            torch._dynamo.mark_static_address(tensor)

    def forward(self, xb: torch.Tensor) -> torch.Tensor:
        return _forward(self.stack.network, self.stack.params, self.stack.buffers, xb)

    def zero_grad(self, set_to_none: bool = True) -> None:
        for stacked in self.stack.params.values():
            stacked.grad = None


def stacking_problem(recipe: Recipe, *, x: Inputs, validation: tuple[Inputs, np.ndarray] | None,
                     model: nn.Module | None = None) -> str | None:
    """Why models of ``recipe`` on inputs ``x`` cannot be trained stacked (:func:`train_stacked`), or None when they
    can; ``model``, one of the built networks, is checked for draws inside its forward pass."""
    if not isinstance(x, np.ndarray) or (validation is not None and not isinstance(validation[0], np.ndarray)):
        return "stream image files from disk (each model would need its own DataLoader)"
    if x.dtype.kind in "iu" and x.ndim != 4:
        return "train on token ids (a text model cuts each batch to its own length and draws dropout)"
    if model is not None and any(isinstance(module, nn.modules.dropout._DropoutNd) for module in model.modules()):
        return f"train {recipe.model}, whose dropout draws from one random generator shared by all models"
    return None


def _refuse(problem: str | None) -> None:
    if problem is not None:
        raise ValueError(f"models trained stacked cannot {problem}: set stacked_folds: false (stacked_finals: "
                         "false for final models) to train each model on its own")


def _stack(models: list[nn.Module]) -> _Stack:
    """The models' parameters and buffers stacked along a new first axis, each model's own now views of them: its
    optimizer steps, checkpoint loads and best-epoch restores write into the stack, and it evaluates with the
    stack's current weights."""
    params, buffers = stack_module_state(models)
    for index, model in enumerate(models):
        for name, stacked in params.items():
            owner, _, leaf = name.rpartition(".")
            model.get_submodule(owner)._parameters[leaf] = nn.Parameter(stacked.detach()[index])
        for name, stacked in buffers.items():
            owner, _, leaf = name.rpartition(".")
            model.get_submodule(owner)._buffers[leaf] = stacked[index]
    # functional_call swaps every tensor of the network for the stack's: a copy on the meta device holds no memory
    network = copy.deepcopy(models[0]).to("meta").train()
    for module in network.modules():
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            _normalize_in_fp32(module)
    return _Stack(params=params, buffers=buffers, network=network)


def _normalize_in_fp32(norm: nn.Module) -> None:
    """Batch norm of a bf16 input in fp32, its output handed back in bf16: what the unstacked kernel does under
    autocast (bf16 in and out, fp32 statistics and affine weights). vmap's batch-norm rule has no such mixed kernel and
    refuses a bf16 input beside fp32 weights ("expected scalar type BFloat16 but found Float"). An input of the
    weights' own precision (fp32, or fp64 where a network is built in it) is left as it is."""
    forward = norm.forward

    def mixed_forward(x: torch.Tensor) -> torch.Tensor:
        return forward(x.float()).to(x.dtype) if x.dtype == torch.bfloat16 else forward(x)

    norm.forward = mixed_forward


def _stacked_step(stack: _Stack, members: list[_Member], group: list[int], batches: dict, *, bf16: bool,
                  device: torch.device, batch_size: int) -> torch.Tensor:
    """One optimizer step of the models ``group`` (indices into ``members``) on their ``batches`` (inputs (B, ...),
    targets (B, Q), the same B): one vmapped forward and backward over their stacked weights (replayed from the
    stack's CUDA graphs where it has them, every model is in the group and B is ``batch_size``), then each model's
    own optimizer on its gradient. Returns their losses (len(group),), left on the device."""
    whole = len(group) == len(members)
    index = None if whole else upload(torch.tensor(group), device=device)  # queued, not waited for
    params = stack.params if whole else {name: p[index] for name, p in stack.params.items()}
    buffers = stack.buffers if whole else {name: b[index] for name, b in stack.buffers.items()}
    xb = torch.stack([batches[i][0] for i in group])  # (G, B, ...)
    tb = torch.stack([batches[i][1] for i in group])  # (G, B, Q)
    graphed = stack.graphed is not None and whole and tb.shape[1] == batch_size
    if graphed:
        begin_step()
    with autocast(device, enabled=bf16):
        logits = stack.graphed(xb) if graphed else _forward(stack.network, params, buffers, xb)
    losses = vmap(soft_cross_entropy)(logits.float(), tb)  # (G,)
    for stacked in stack.params.values():
        stacked.grad = None
    losses.sum().backward()  # each model's loss depends on its own weights only: its gradient is its own
    with torch.no_grad():
        if not whole:
            for name, gathered in buffers.items():
                stack.buffers[name][index] = gathered
        for i in group:
            for name, parameter in members[i].model.named_parameters():
                parameter.grad = stack.params[name].grad[i]
            members[i].parts["optimizers"][0].step()
    return losses.detach()


def _stacked_epoch(stack: _Stack, members: list[_Member], active: list[int], *, alpha: float | None, bf16: bool,
                   device: torch.device, batch_size: int, epoch: int) -> tuple[dict[int, list], dict[int, int]]:
    """One epoch of the models ``active``: each step draws every model's next batch (mixed with its own draws, as
    train_model's step), then steps the models grouped by batch size, largest first. Returns each model's batch
    losses (for train.py's epoch_loss) and samples trained on."""
    batches = {i: members[i].epoch_batches() for i in active}
    watched, samples = {i: [] for i in active}, dict.fromkeys(active, 0)
    while batches:
        drawn = {}
        for i in list(batches):
            if (batch := next(batches[i], None)) is None:
                del batches[i]
            elif alpha:
                drawn[i] = mixed_batch(*batch, alpha=alpha, generator=members[i].generator, rng=members[i].rng,
                                       device=device)
            else:
                drawn[i] = batch
        for size in sorted({len(tb) for _, tb in drawn.values()}, reverse=True):
            group = [i for i in drawn if len(drawn[i][1]) == size]
            try:
                losses = _stacked_step(stack, members, group, drawn, bf16=bf16, device=device, batch_size=batch_size)
            except torch.OutOfMemoryError as error:
                raise MemoryError(f"out of {device.type} memory at epoch {epoch} training {len(group)} models "
                                  f"stacked, batch_size {batch_size}: lower recipe.batch_size or set stacked_folds "
                                  "(stacked_finals for final models): false") from error
            for position, i in enumerate(group):
                watched[i].append(losses[position:position + 1])
                samples[i] += size
                members[i].step += 1
    return watched, samples


def _end_epoch(member: _Member, loss: float, *, epoch: int, recipe: Recipe, samples: int, started: float,
               training_seconds: float, device: torch.device, bf16: bool, cuda_graphs: bool, name: str) -> None:
    """What train.py's epoch loop does after a model's epoch: its mean batch ``loss`` recorded, its schedule
    advanced, its noisy-validation accuracy scored, logged, and its state saved (every epoch but the last)."""
    member.train_loss.append(loss)
    member.parts["optimizers"][0].end_epoch()
    accuracy = member.parts["best"].update([member.model], epoch=epoch)
    log_epoch(epoch, epochs=recipe.epochs, loss=member.train_loss[-1], accuracy=accuracy, samples=samples,
               training_seconds=training_seconds, seconds=time.perf_counter() - started, device=device, bf16=bf16,
               model=name, cuda_graphs=cuda_graphs)
    member.done = epoch
    if member.checkpoint is not None and epoch < recipe.epochs:
        member.checkpoint.save(training_state(epoch=epoch, train_loss=member.train_loss, step=member.step,
                                              **member.parts))


def _new_member(recipe: Recipe, *, x: np.ndarray, targets: np.ndarray, seed: int,
                validation: tuple[Inputs, np.ndarray] | None, device: torch.device) -> tuple[_Member, bool]:
    """A model built as :func:`train_model` builds it from ``seed`` (the global seed set first, as there), with its
    own generators and batches; and whether it trains under bf16."""
    check_training(recipe, x, loss="ce", loss_params=None, co_teaching=None)
    _refuse(stacking_problem(recipe, x=x, validation=validation))
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    generator = torch.Generator(device="cpu").manual_seed(seed)
    [model], bf16 = new_networks(recipe, x, num_classes=targets.shape[1], seed=seed, device=device,
                                  co_teaching=None)
    _refuse(stacking_problem(recipe, x=x, validation=validation, model=model))
    batches = batch_source(x, targets, recipe=recipe, seed=seed, device=device, generator=generator)
    return _Member(model=model, generator=generator, rng=rng, epoch_batches=batches), bf16


def train_stacked(
    *,
    recipe: Recipe,
    xs: Sequence[np.ndarray],
    targets: Sequence[np.ndarray],
    seeds: Sequence[int],
    validations: Sequence[tuple[np.ndarray, np.ndarray] | None],
    device: torch.device | None = None,
    resumes: Sequence[PathLike | None] | None = None,
    on_epoch: Callable[[int], None] | None = None,
) -> list[TrainingResult]:
    """Train K models of ``recipe`` together, each as ``train_model(recipe=recipe, x=xs[i], targets=targets[i],
    seed=seeds[i], validation=validations[i], device=device, resume=resumes[i])`` trains it with plain cross-entropy.

    Parameters
    ----------
    recipe : the training recipe all K models share.
    xs : K arrays of training inputs held in memory, images (N_i, C, H, W) of one shape (N_i may differ).
    targets : K (N_i, Q) soft targets.
    seeds : K seeds, each seeding its model's initialisation, batch order, augmentation and mixup.
    validations : K (inputs (V_i, C, H, W), labels (V_i,)) picking each model's best epoch, or None (its last).
    device : defaults to :func:`enkcvs.training.device.default_device`.
    resumes : K epoch checkpoint files (or None each), in train_model's format: a model goes on after the epoch its
        file holds, whether train_model or this function wrote it.
    on_epoch : called with the epoch's number (1-based) after each epoch the models train (progress).

    Returns
    -------
    K :class:`enkcvs.training.train.TrainingResult`, in the order given.

    Raises
    ------
    ValueError : inputs or a model this cannot train stacked (streamed image files, token ids, dropout): the message
        names the fix.
    """
    device = training_device(device)
    resumes = [None] * len(xs) if resumes is None else list(resumes)
    if not len(xs) == len(targets) == len(seeds) == len(validations) == len(resumes):
        raise ValueError(f"one of each per model: got {len(xs)} xs, {len(targets)} targets, {len(seeds)} seeds, "
                         f"{len(validations)} validations, {len(resumes)} resumes")
    members, bf16 = [], False
    for x, t, seed, validation in zip(xs, targets, seeds, validations):
        member, bf16 = _new_member(recipe, x=x, targets=t, seed=seed, validation=validation, device=device)
        members.append(member)
    stack = _stack([member.model for member in members])
    cuda_graphs = _graph_stack(stack, models=[member.model for member in members], recipe=recipe, xs=xs,
                               device=device, bf16=bf16)
    for member, x, t, seed, validation, resume in zip(members, xs, targets, seeds, validations, resumes):
        member.checkpoint = training_checkpoint(resume, recipe=recipe, x=x, targets=t, validation=validation,
                                                seed=seed, loss="ce", loss_params=None, bf16=bf16, device=device,
                                                co_teaching=None, curve=False, cuda_graphs=cuda_graphs)
        member.parts = training_parts([member.model], recipe=recipe, validation=validation, curve=None,
                                       device=device, bf16=bf16, generator=member.generator, rng=member.rng)
        if member.checkpoint is not None and (saved := member.checkpoint.load()) is not None:
            member.train_loss, member.step, member.done = restore_training(saved, **member.parts)
    _train_stacked_epochs(stack, members, recipe=recipe, device=device, bf16=bf16, cuda_graphs=cuda_graphs,
                          on_epoch=on_epoch)
    return [_result(member, recipe=recipe, bf16=bf16, cuda_graphs=cuda_graphs) for member in members]


def _graph_stack(stack: _Stack, *, models: list[nn.Module], recipe: Recipe, xs: Sequence[np.ndarray],
                 device: torch.device, bf16: bool) -> bool:
    """Whether the stack's full steps replay as CUDA graphs (``recipe.cuda_graphs`` resolved as for one model, its
    probe timing this stack's forward and backward passes on a full batch of each model:
    :func:`enkcvs.training.graphs.resolve_cuda_graphs`); if so, the stack's graphed forward pass is set."""
    graphs = resolve_cuda_graphs(
        recipe.cuda_graphs, model_name=recipe.model, device=device, bf16=bf16,
        steps=full_batch_steps(recipe, num_samples=min(len(x) for x in xs)),  # every model on a full batch
        build=lambda: StackedForward(_stack([copy.deepcopy(model) for model in models])),
        batch=lambda: torch.stack([probe_batch(x, size=recipe.batch_size, device=device) for x in xs]),
        probe_name=f"{recipe.model}, {len(models)} stacked")
    if graphs:
        stack.graphed = compiled(StackedForward(stack))
    return graphs


def _train_stacked_epochs(stack: _Stack, members: list[_Member], *, recipe: Recipe, device: torch.device,
                          bf16: bool, cuda_graphs: bool, on_epoch: Callable[[int], None] | None) -> None:
    """The epochs each model has still to train, from the first any of them has to; a model resumed further along
    joins at its own next epoch."""
    for epoch in range(min(member.done for member in members) + 1, recipe.epochs + 1):
        active = [i for i, member in enumerate(members) if member.done < epoch]
        started = time.perf_counter()
        watched, samples = _stacked_epoch(stack, members, active, alpha=recipe.mixup_alpha, bf16=bf16,
                                          device=device, batch_size=recipe.batch_size, epoch=epoch)
        losses = {i: epoch_loss(watched[i], epoch=epoch) for i in active}  # waits for the last step: timed
        training_seconds = time.perf_counter() - started
        for i in active:
            _end_epoch(members[i], losses[i], epoch=epoch, recipe=recipe, samples=samples[i], started=started,
                       training_seconds=training_seconds, device=device, bf16=bf16, cuda_graphs=cuda_graphs,
                       name=f"model {i + 1}/{len(members)}")
        if on_epoch is not None:
            on_epoch(epoch)


def _result(member: _Member, *, recipe: Recipe, bf16: bool, cuda_graphs: bool) -> TrainingResult:
    """A model's checkpoint removed, its best epoch's weights restored, and its result as train_model returns it."""
    if member.checkpoint is not None:
        member.checkpoint.remove()
    (best := member.parts["best"]).restore([member.model])
    return TrainingResult(model=member.model, best_epoch=recipe.epochs if best.best_epoch is None else best.best_epoch,
                          train_loss=member.train_loss, validation_accuracy=best.history, bf16=bf16,
                          cuda_graphs=cuda_graphs)
