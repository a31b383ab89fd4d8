"""Fold splitting for NKCVS (Algorithm 1, line 2) and the 10% validation hold-out inside each fold."""

import numpy as np

from enkcvs.rng import Purpose, generator


def kfold_assignment(*, num_samples: int, num_folds: int, seed: int, iteration: int) -> np.ndarray:
    """Assign each sample to one of K equal-sized folds (sizes differ by at most one).

    The split depends on ``(seed, K, m)`` only, so iteration m of a run is the same whatever M is and every fold job
    can be rebuilt alone; a new iteration m gives a fresh permutation (Algorithm 2, line 3).

    Parameters
    ----------
    num_samples : N.
    num_folds : K, 2 <= K <= N.
    seed : the run's seed.
    iteration : m, 1-based.

    Returns
    -------
    (N,) int64 array of 0-based fold numbers.
    """
    if not 2 <= num_folds <= num_samples:
        raise ValueError(f"K = {num_folds} must lie in [2, N = {num_samples}]")
    order = generator(seed, Purpose.FOLDS, num_folds, iteration).permutation(num_samples)
    folds = np.empty(num_samples, dtype=np.int64)
    folds[order] = np.arange(num_samples) % num_folds
    return folds


def validation_split(
    indices: np.ndarray, *, fraction: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Split ``indices`` (shape (n,)) into (train, validation) with ``round(fraction * n)`` validation samples."""
    shuffled = rng.permutation(indices)
    num_val = round(fraction * len(indices))
    return np.sort(shuffled[num_val:]), np.sort(shuffled[:num_val])


def fold_indices(
    *, num_samples: int, num_folds: int, seed: int, iteration: int, fold: int, validation_fraction: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fold k of iteration m (both 1-based): (train, validation, held_out) sample indices, each sorted. The model of
    the fold trains on D minus D_k with ``validation_fraction`` of it held out to pick the best epoch, and predicts
    D_k (Algorithm 1, lines 4-9)."""
    folds = kfold_assignment(num_samples=num_samples, num_folds=num_folds, seed=seed, iteration=iteration)
    train, validation = validation_split(
        np.flatnonzero(folds != fold - 1),
        fraction=validation_fraction,
        rng=generator(seed, Purpose.VALIDATION, num_folds, iteration, fold),
    )
    return train, validation, np.flatnonzero(folds == fold - 1)
