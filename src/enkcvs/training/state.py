"""A training's state between epochs: what :func:`enkcvs.training.train.train_model` saves into its epoch checkpoint
(:mod:`enkcvs.training.resume`) after every epoch, and loads from it to go on where a killed training stopped: the
networks' weights, their optimizers and schedules, the best epoch so far, the loss history and every random generator
it draws from."""

import logging

import numpy as np
import torch
from torch import nn

from enkcvs.io import PathLike
from enkcvs.training.batches import Inputs
from enkcvs.training.evaluate import BestEpoch, EpochCurve
from enkcvs.training.recipe import Recipe
from enkcvs.training.resume import EpochCheckpoint, training_key

log = logging.getLogger(__name__)


def epoch_checkpoint(path: PathLike | None, *, recipe: Recipe, x: Inputs, targets: np.ndarray,
                     validation: tuple[Inputs, np.ndarray] | None, settings: dict) -> EpochCheckpoint | None:
    """The epoch checkpoint of this training at ``path`` (:mod:`enkcvs.training.resume`), keyed by ``settings`` and the
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


def random_states(*, device: torch.device, generator: torch.Generator, rng: np.random.Generator) -> dict:
    """The state of every random generator a training draws from (initialisation and dropout, batch order,
    augmentation and mixup partners, mixup's lambda)."""
    states = {"torch": torch.get_rng_state(), "batches": generator.get_state(), "numpy": rng.bit_generator.state}
    if device.type == "cuda":
        states["cuda"] = torch.cuda.get_rng_state(device)
    return states


def set_random_states(states: dict, *, device: torch.device, generator: torch.Generator,
                      rng: np.random.Generator) -> None:
    """Put every random generator of a training back where :func:`random_states` found it."""
    torch.set_rng_state(states["torch"])
    generator.set_state(states["batches"])
    rng.bit_generator.state = states["numpy"]
    if "cuda" in states:
        torch.cuda.set_rng_state(states["cuda"], device)


def training_state(*, epoch: int, train_loss: list[float], step: int, models: list[nn.Module], optimizers: list,
                   best: BestEpoch, randomness: dict, curve: EpochCurve | None = None) -> dict:
    """Everything a training needs to go on after ``epoch`` (:func:`restore_training`)."""
    # a stacked model's tensors are views of the whole stack, and torch.save writes a view's entire storage: each
    # model's checkpoint would hold every model's weights (enkcvs.training.stacked)
    state = {"epoch": epoch, "train_loss": train_loss, "step": step, "best": best.state_dict(),
             "models": [{name: tensor.clone() for name, tensor in model.state_dict().items()} for model in models],
             "optimizers": [optimizer.state_dict() for optimizer in optimizers],
             "random": random_states(**randomness)}
    return state | ({"curve": curve.history} if curve is not None else {})


def restore_training(saved: dict, *, models: list[nn.Module], optimizers: list, best: BestEpoch,
                     randomness: dict, curve: EpochCurve | None = None) -> tuple[list[float], int, int]:
    """Load a :func:`training_state` into the training's parts; returns its loss history, optimizer steps and
    epochs done."""
    for model, optimizer, model_state, optimizer_state in zip(models, optimizers, saved["models"],
                                                              saved["optimizers"], strict=True):
        model.load_state_dict(model_state)
        optimizer.load_state_dict(optimizer_state)
    best.load_state_dict(saved["best"])
    if curve is not None:
        curve.history = list(saved["curve"])
    set_random_states(saved["random"], **randomness)
    return list(saved["train_loss"]), saved["step"], saved["epoch"]
