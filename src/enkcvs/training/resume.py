"""Epoch checkpoints: a training killed mid-way (a job's time limit, a preempted node) goes on from its last
finished epoch when it is started again, and ends with the same weights, bit for bit, as one never interrupted.

:func:`enkcvs.training.train.train_model` writes the whole state after every epoch (weights, optimizer and schedule, the
best epoch so far and its weights, the loss history, every random generator it draws from) to one file, replaced
atomically, and removes it when the training is done. A checkpoint is used only by the training it was made for:
its key is a digest of the recipe, seed, loss, device kind, torch version and the training and validation arrays, so
a changed config or dataset starts afresh instead of resuming someone else's weights.
"""

import hashlib
import json
import logging
import pickle
from pathlib import Path
from typing import Any

import numpy as np

from enkcvs.io import PathLike, atomic_path

log = logging.getLogger(__name__)

#: The checkpoint file of a job's output: ``results/folds/.../k3.parquet`` -> ``results/folds/.../k3.resume.pt``.
SUFFIX = ".resume.pt"


def checkpoint_path(output: PathLike) -> Path:
    """Where the job writing ``output`` keeps its epoch checkpoint: beside it, named after it (:data:`SUFFIX`)."""
    return Path(output).with_suffix(SUFFIX)


def training_key(*, arrays: dict[str, np.ndarray], settings: dict[str, Any]) -> str:
    """SHA-256 over ``settings`` (JSON-serialisable: recipe, seed, loss, ...) and the bytes, dtype and shape of each
    array: what a checkpoint must have been made with to be resumed."""
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True, default=repr).encode())
    for name, array in sorted(arrays.items()):
        array = np.ascontiguousarray(array)
        digest.update(f"{name}:{array.dtype.str}:{array.shape}".encode())
        digest.update(memoryview(array).cast("B"))
    return digest.hexdigest()


class EpochCheckpoint:
    """The checkpoint file of one training (``key``: :func:`training_key`)."""

    def __init__(self, path: PathLike, *, key: str) -> None:
        self.path, self.key = Path(path), key

    def load(self) -> dict[str, Any] | None:
        """The saved state, or None when there is none, it cannot be read or it was made for another training
        (then it is left to be overwritten by this one's first epoch). Removes what a save cut short left behind."""
        import torch

        for unfinished in self.path.parent.glob(f".{self.path.name}.*.tmp"):  # io.atomic_path's, killed mid-save
            unfinished.unlink(missing_ok=True)
        if not self.path.is_file():
            return None
        try:
            state = torch.load(self.path, map_location="cpu", weights_only=True)
        except (OSError, RuntimeError, EOFError, pickle.UnpicklingError) as error:
            log.warning("%s cannot be read (%s): starting afresh", self.path, error)
            return None
        if not isinstance(state, dict) or state.get("key") != self.key:
            log.warning("%s was made for another training (other config, data or torch): starting afresh", self.path)
            return None
        log.info("resuming from %s after epoch %d", self.path, state["epoch"])
        return state

    def save(self, state: dict[str, Any]) -> None:
        """Replace the checkpoint with ``state`` (which must hold ``epoch``), atomically: a kill while saving
        leaves the previous epoch's."""
        import torch

        with atomic_path(self.path) as tmp:
            torch.save({**state, "key": self.key}, tmp)

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)
