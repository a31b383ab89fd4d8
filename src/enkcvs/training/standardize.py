"""Features z-scored inside each fold of a cross-validation (``out_of_fold_probabilities(standardize=True)``,
``enkcvs find-issues --data`` on a table): each fold model sees its features scaled by the mean and standard
deviation of its own training part (D minus D_k), and its held-out samples scaled by the same, so that no statistic
of a held-out sample reaches the model that predicts it. The ``mlp``'s first layer is a plain linear map of the
numbers given: without this a feature in large units (grams beside ratios) drowns the others.
"""

import numpy as np


def standardized(x: np.ndarray, *, training: np.ndarray) -> np.ndarray:
    """``x`` (N, ..., F) z-scored per feature (the last axis) with the mean and standard deviation of the samples
    ``training`` (n,) alone; a feature constant on them is centred only (its standard deviation taken as 1). Returns
    float32 (N, ..., F)."""
    axes = tuple(range(x.ndim - 1))  # all but the features'
    fitted = x[training].astype(np.float64)
    mean, std = fitted.mean(axis=axes, keepdims=True), fitted.std(axis=axes, keepdims=True)  # (1, ..., F)
    return ((x - mean) / np.where(std == 0, 1.0, std)).astype(np.float32)
