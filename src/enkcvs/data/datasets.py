"""The project's prepared dataset: one ``.npz`` per dataset, written once by the data rule and read by every job.

Where the data come from is :mod:`enkcvs.data.sources`; this module only fixes the prepared form.
"""

import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from enkcvs.io import atomic_path

#: What ``x_train``/``x_test`` hold, by modality.
MODALITIES = {
    "image": "images (N, C, H, W): float32 in [0, 1] or uint8 in 0..255 (scaled by 1/255 on the device)",
    "text": "strings (N,): one text per sample, tokenised by the tokenise rule",
    "image_files": "strings (N,): image paths relative to image_root, streamed from disk while training",
}


@dataclass(frozen=True)
class Dataset:
    """A training split with the labels as published (noise is added later) and a clean test split.

    ``superclasses`` (Q,) gives each class's super-class where the source defines one (CIFAR-100's 20 coarse labels);
    ``image_root`` and ``image_transform`` describe how ``image_files`` samples are read (resize, crop);
    ``sample_ids`` (N,) are the user's own row ids from the column named ``id_column`` (own tables), carried into the
    label-issue tables; ``feature_names`` (F,) name a table's features (stored as (N, 1, 1, F) images), for its review
    sheet.
    """

    x_train: np.ndarray
    y_train: np.ndarray  # (N,) int64
    x_test: np.ndarray
    y_test: np.ndarray  # (N_test,) int64
    class_names: tuple[str, ...]
    modality: str = "image"
    superclasses: np.ndarray | None = None
    image_root: str = ""
    image_transform: dict[str, Any] = field(default_factory=dict)
    sample_ids: np.ndarray | None = None  # (N,) int64 or str, unique
    id_column: str = ""
    feature_names: tuple[str, ...] | None = None

    def __post_init__(self):
        if self.modality not in MODALITIES:
            raise ValueError(f"unknown modality {self.modality!r}; use one of {sorted(MODALITIES)}")
        if (self.sample_ids is None) != (not self.id_column):
            raise ValueError("sample_ids and id_column go together: give both or neither")

    @property
    def num_classes(self) -> int:
        return len(self.class_names)


def save_dataset(dataset: Dataset, path: str | Path, *, metadata: dict[str, Any] | None = None) -> None:
    """Write ``dataset`` to an ``.npz`` file atomically; ``metadata`` (provenance) is kept as a JSON string."""
    optional = {} if dataset.superclasses is None else {"superclasses": np.asarray(dataset.superclasses, np.int64)}
    if dataset.sample_ids is not None:
        optional |= {"sample_ids": dataset.sample_ids, "id_column": np.array(dataset.id_column)}
    if dataset.feature_names is not None:
        optional |= {"feature_names": np.array(dataset.feature_names, dtype=str)}
    with atomic_path(path) as tmp, open(tmp, "wb") as handle:
        np.savez(
            handle,
            x_train=dataset.x_train,
            y_train=dataset.y_train,
            x_test=dataset.x_test,
            y_test=dataset.y_test,
            class_names=np.array(dataset.class_names),
            modality=np.array(dataset.modality),
            image_root=np.array(dataset.image_root),
            image_transform=np.array(json.dumps(dataset.image_transform, sort_keys=True)),
            provenance=np.array(json.dumps(metadata or {}, sort_keys=True)),
            **optional,
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
                modality=str(arrays["modality"]),
                superclasses=arrays.get("superclasses", None),
                image_root=str(arrays["image_root"]),
                image_transform=json.loads(str(arrays["image_transform"])),
                sample_ids=arrays.get("sample_ids", None),
                id_column=str(arrays.get("id_column", "")),
                feature_names=tuple(str(name) for name in arrays["feature_names"])
                if "feature_names" in arrays
                else None,
            )
    except (zipfile.BadZipFile, EOFError, KeyError, ValueError, OSError) as error:
        raise ValueError(
            f"{path} is truncated or corrupt ({type(error).__name__}: {error}): delete it and rerun to rebuild it"
        ) from error
    labels = np.concatenate([dataset.y_train, dataset.y_test])
    if labels.min() < 0 or labels.max() >= dataset.num_classes:
        raise ValueError(f"{path} has labels outside 0..{dataset.num_classes - 1}: delete it and rerun")
    return dataset
