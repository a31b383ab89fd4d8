"""Seeded tiny factories shared by the unit tests.

Every factory takes an explicit seed so each test is reproducible and independent of test order. Nothing here reads
outside the repository. Factories are exposed as fixtures that return callables (``make_labels(seed=..., ...)``), so
tests can build several variants without importing from ``conftest``.
"""

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pytest


def _make_labels(*, seed: int, n_per_class: int | Sequence[int], num_classes: int) -> np.ndarray:
    """Shuffled int64 labels with exactly ``n_per_class`` samples of each class (an int, or one count per class)."""
    counts = [n_per_class] * num_classes if np.isscalar(n_per_class) else list(n_per_class)
    assert len(counts) == num_classes
    labels = np.repeat(np.arange(num_classes, dtype=np.int64), counts)
    return np.random.default_rng(seed).permutation(labels)


def _make_prediction_folds(
    *, seed: int, num_samples: int, num_folds: int, num_classes: int
) -> list[pd.DataFrame]:
    """K held-out prediction tables (``sample``, ``given``, ``predicted``, ``prob_*``) covering 0..N-1 once, each
    fold's rows in shuffled order, as one NKCVS iteration would write them."""
    rng = np.random.default_rng(seed)
    given = rng.integers(0, num_classes, size=num_samples)
    probabilities = rng.dirichlet(np.ones(num_classes), size=num_samples)
    fold_of = rng.permutation(np.arange(num_samples) % num_folds)
    tables = []
    for fold in range(num_folds):
        members = rng.permutation(np.flatnonzero(fold_of == fold))
        table = pd.DataFrame(
            {"sample": members, "given": given[members], "predicted": probabilities[members].argmax(axis=1)}
        )
        for c in range(num_classes):
            table[f"prob_{c}"] = probabilities[members, c]
        tables.append(table)
    return tables


def _make_separable_images(
    *, seed: int, num_samples: int, num_classes: int, shape: tuple[int, int, int] = (1, 8, 8)
) -> tuple[np.ndarray, np.ndarray]:
    """Float32 images (N, C, H, W) whose class c lights up a distinct pixel block, plus small noise: linearly
    separable, so a tiny model must fit them."""
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.arange(num_samples) % num_classes).astype(np.int64)
    x = rng.normal(0.0, 0.1, size=(num_samples, *shape)).astype(np.float32)
    flat = x.reshape(num_samples, -1)
    block = flat.shape[1] // num_classes
    for c in range(num_classes):
        flat[labels == c, c * block : (c + 1) * block] += 1.0
    return flat.reshape(num_samples, *shape), labels


@pytest.fixture
def make_labels():
    """Factory: ``make_labels(seed=, n_per_class=, num_classes=)`` -> shuffled labels with exact class counts."""
    return _make_labels


@pytest.fixture
def make_prediction_folds():
    """Factory: ``make_prediction_folds(seed=, num_samples=, num_folds=, num_classes=)`` -> K prediction tables."""
    return _make_prediction_folds


@pytest.fixture
def make_separable_images():
    """Factory: ``make_separable_images(seed=, num_samples=, num_classes=)`` -> (x (N,1,8,8), labels (N,))."""
    return _make_separable_images


REPO = Path(__file__).resolve().parents[1]
TINY_CONFIG = REPO / "tests" / "config" / "tiny.yaml"


def _run_snakemake(workdir: Path, *args: str, config: Path = TINY_CONFIG) -> subprocess.CompletedProcess:
    """Run Snakemake on the repository's workflow in ``workdir`` (2 cores unless ``args`` say otherwise)."""
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(workdir),
               "--configfile", str(config), "--cores", "2", *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=workdir)


@pytest.fixture(scope="session")
def run_snakemake():
    """``run_snakemake(workdir, *args, config=...)`` -> CompletedProcess."""
    return _run_snakemake


@pytest.fixture(scope="session")
def tiny_config() -> Path:
    return TINY_CONFIG


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory) -> Path:
    """The tiny config run once to completion (a working directory with results/); tests only read it."""
    workdir = tmp_path_factory.mktemp("tiny")
    done = _run_snakemake(workdir)
    assert done.returncode == 0, done.stderr[-4000:]
    return workdir


@pytest.fixture
def tiny_inputs(tmp_path):
    """A prepared seeded 3-class dataset of 60 (1, 4, 4) images (``data.npz``) with symmetric noise
    (``labels.parquet``, seed 3) in ``tmp_path``."""
    from enkcvs.datasets import Dataset, save_dataset
    from enkcvs.steps import make_noisy_labels

    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(3), 20)
    x = (rng.normal(size=(60, 1, 4, 4)) + y[:, None, None, None]).astype(np.float32)
    save_dataset(Dataset(x, y, x[:9], y[:9], ("a", "b", "c")), tmp_path / "data.npz")
    make_noisy_labels(dataset=tmp_path / "data.npz", noise="sym0.2", seed=3, asymmetric_map=None,
                      output=tmp_path / "labels.parquet")
    return tmp_path


@pytest.fixture
def single_thread():
    """Bit-identical CPU runs need a fixed thread count; restore the caller's afterwards."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
