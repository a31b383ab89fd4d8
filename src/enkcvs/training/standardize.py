"""Features z-scored, and missing values imputed, inside each fold of a cross-validation
(``out_of_fold_probabilities(standardize=True)``, ``enkcvs find-issues --data`` on a table or embeddings): each fold
model sees its features scaled by the mean and standard deviation of its own training part (D minus D_k), and its
held-out samples scaled by the same, so that no statistic of a held-out sample reaches the model that predicts it.
The ``mlp``'s first layer is a plain linear map of the numbers given: without this a feature in large units (grams
beside ratios) drowns the others. A missing value (NaN) becomes its feature's mean on the training part, 0 once
z-scored (mean imputation, fitted as the scaling is).
"""

import numpy as np


def standardized(x: np.ndarray, *, training: np.ndarray) -> np.ndarray:
    """``x`` (N, ..., F) z-scored per feature (the last axis) with the mean and standard deviation of the samples
    ``training`` (n,) alone, over their values that are not missing; a feature constant on them is centred only (its
    standard deviation taken as 1); a missing value (NaN) becomes 0, the training mean, as is a feature missing on
    all of them. Returns float32 (N, ..., F)."""
    axes = tuple(range(x.ndim - 1))  # all but the features'
    fitted = x[training].astype(np.float64)
    present = ~np.isnan(fitted)
    count = present.sum(axis=axes, keepdims=True)  # (1, ..., F)
    mean = np.where(present, fitted, 0.0).sum(axis=axes, keepdims=True) / np.maximum(count, 1)
    std = np.sqrt(np.where(present, (fitted - mean) ** 2, 0.0).sum(axis=axes, keepdims=True) / np.maximum(count, 1))
    return np.nan_to_num((x - mean) / np.where(std == 0, 1.0, std), nan=0.0).astype(np.float32)
