"""A training's state between epochs, as its epoch checkpoint keeps it (:mod:`enkcvs.training.resume`): which
training a checkpoint belongs to, and every random generator it draws from."""

import logging
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from enkcvs.io import PathLike
from enkcvs.training.recipe import Recipe
from enkcvs.training.resume import EpochCheckpoint, training_key

log = logging.getLogger(__name__)


def _arrays(name: str, value: Any) -> dict[str, np.ndarray] | None:
    """The arrays of an input ``value`` (an array, a tuple of them, a list of either, or None) by name; None where
    one is streamed from disk (a DataLoader's order cannot be resumed mid-run)."""
    if value is None:
        return {}
    if isinstance(value, np.ndarray):
        return {name: value}
    if isinstance(value, tuple | list):
        found = {}
        for index, item in enumerate(value):
            arrays = _arrays(f"{name}.{index}", item)
            if arrays is None:
                return None
            found |= arrays
        return found
    return None


def epoch_checkpoint(
    path: PathLike | None, *, recipe: Recipe, arrays: Mapping[str, Any], settings: dict
) -> EpochCheckpoint | None:
    """The epoch checkpoint of a training at ``path``, keyed by ``settings`` and the input ``arrays`` (by name: an
    array, a tuple or list of them, or None); None without a path or for inputs streamed from disk."""
    if path is None:
        return None
    found = {}
    for name, value in arrays.items():
        if (named := _arrays(name, value)) is None:
            log.info("no epoch checkpoints: the inputs are streamed from disk")
            return None
        found |= named
    settings = {**settings, "recipe": recipe.to_dict(), "torch": torch.__version__}
    return EpochCheckpoint(path, key=training_key(arrays=found, settings=settings))


def random_states(*, device: torch.device, generator: torch.Generator, rng: np.random.Generator) -> dict:
    """The state of every random generator a training draws from (initialisation and dropout, batch order,
    augmentation and mixup partners, mixup's lambda)."""
    states = {"torch": torch.get_rng_state(), "batches": generator.get_state(), "numpy": rng.bit_generator.state}
    if device.type == "cuda":
        states["cuda"] = torch.cuda.get_rng_state(device)
    return states


def set_random_states(
    states: dict, *, device: torch.device, generator: torch.Generator, rng: np.random.Generator
) -> None:
    """Put every random generator of a training back where :func:`random_states` found it."""
    torch.set_rng_state(states["torch"])
    generator.set_state(states["batches"])
    rng.bit_generator.state = states["numpy"]
    if "cuda" in states:
        torch.cuda.set_rng_state(states["cuda"], device)
