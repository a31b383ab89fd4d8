"""Precision and recall of the selected set (Eq. prec-rec), confusion matrices and accuracy."""

import numpy as np


def selection_set_sizes(*, selected: np.ndarray, given: np.ndarray, true: np.ndarray) -> dict[str, int]:
    """|CS|, |SS| and |CSS| (Eq. tp): clean samples, selected samples, clean selected samples."""
    clean = np.asarray(given) == np.asarray(true)
    selected = np.asarray(selected, dtype=bool)
    return {"CS": int(clean.sum()), "SS": int(selected.sum()), "CSS": int((clean & selected).sum())}


def precision_recall(*, sizes: dict[str, int]) -> dict[str, float]:
    """Eq. prec-rec: precision = |CSS|/|SS|, recall = |CSS|/|CS| (NaN where a denominator is 0)."""
    return {
        "precision": sizes["CSS"] / sizes["SS"] if sizes["SS"] else float("nan"),
        "recall": sizes["CSS"] / sizes["CS"] if sizes["CS"] else float("nan"),
    }


def confusion_matrix(*, true: np.ndarray, predicted: np.ndarray, num_classes: int) -> np.ndarray:
    """C_jk = P(y_hat = k | y* = j) estimated from counts; rows of absent classes are 0. Shape (Q, Q)."""
    counts = np.zeros((num_classes, num_classes))
    np.add.at(counts, (np.ravel(true), np.ravel(predicted)), 1.0)
    return counts / np.maximum(counts.sum(axis=1, keepdims=True), 1.0)


def class_prior(*, true: np.ndarray, num_classes: int) -> np.ndarray:
    """p_i = P(y* = i) estimated from the true labels. Shape (Q,)."""
    return np.bincount(true, minlength=num_classes) / len(true)


def accuracy(*, true: np.ndarray, predicted: np.ndarray) -> float:
    """Fraction of predictions equal to the true label."""
    return float(np.mean(np.asarray(true) == np.asarray(predicted)))
