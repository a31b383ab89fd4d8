"""Finished fold models kept across runs: each fold's held-out probabilities saved as it ends, so that a stopped
cross-validation started again with the same data and settings trains only the folds it had not finished (and a
stacked one goes on from the epoch checkpoint of its stack).

A cache is a folder named by a key, the SHA-256 of everything the probabilities depend on (the inputs, the labels and
the settings, the packages' versions among them): other data or settings find another folder, never stale files.
"""

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from enkcvs.io import atomic_path, cache_dir, package_versions


def cache_key(*, inputs: Any, labels: np.ndarray, settings: dict[str, Any]) -> str:
    """The SHA-256 (hex) of ``inputs`` (an array, a pandas frame, or a sequence of strings such as image paths),
    ``labels`` (N,) and ``settings`` (JSON-serialisable; the versions of the packages that shape results are added)."""
    import pandas as pd

    digest = hashlib.sha256()
    if isinstance(inputs, pd.DataFrame):
        digest.update(pd.util.hash_pandas_object(inputs, index=False).to_numpy().tobytes())
        digest.update(json.dumps([str(c) for c in inputs.columns]).encode())
    elif isinstance(inputs, np.ndarray) and inputs.dtype.kind in "biuf":
        digest.update(f"{inputs.dtype}{inputs.shape}".encode())
        digest.update(np.ascontiguousarray(inputs).tobytes())
    else:
        digest.update(json.dumps([str(item) for item in inputs]).encode())
    digest.update(np.asarray(labels, dtype=np.int64).tobytes())
    digest.update(json.dumps({**settings, "versions": package_versions()}, sort_keys=True, default=str).encode())
    return digest.hexdigest()


class FoldCache:
    """The held-out probabilities of finished fold models in ``folder``: ``fold-<m>-<k>.npz`` with their sample
    indices; and the path of a stack's epoch checkpoint."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)

    @classmethod
    def for_key(cls, key: str) -> "FoldCache":
        """The cache of ``key`` under the library's cache folder (:func:`enkcvs.io.cache_dir`)."""
        return cls(cache_dir() / "folds" / key)

    def _path(self, iteration: int, fold: int) -> Path:
        return self.folder / f"fold-{iteration}-{fold}.npz"

    def load(self, *, iteration: int, fold: int) -> tuple[np.ndarray, np.ndarray] | None:
        """(held_out (n_k,), probabilities (n_k, Q)) of fold k of iteration m, or None where it did not finish."""
        path = self._path(iteration, fold)
        if not path.is_file():
            return None
        with np.load(path) as saved:
            return saved["held_out"], saved["probabilities"]

    def save(self, *, iteration: int, fold: int, held_out: np.ndarray, probabilities: np.ndarray) -> None:
        """Keep fold k of iteration m's held-out sample indices and probabilities (written atomically)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        with atomic_path(self._path(iteration, fold)) as tmp, open(tmp, "wb") as handle:
            np.savez(handle, held_out=held_out, probabilities=probabilities)

    @property
    def stack_checkpoint(self) -> Path:
        """Where a stacked training of all the folds keeps its epoch checkpoint."""
        self.folder.mkdir(parents=True, exist_ok=True)
        return self.folder / "stack.ckpt"
