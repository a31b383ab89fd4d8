"""Precision and recall of the selected set (Eq. prec-rec) and of a list of label errors, confusion matrices and
accuracy."""

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


def error_list_scores(*, listed: np.ndarray, given: np.ndarray, true: np.ndarray) -> dict[str, float]:
    """A list of label errors scored as cleanlab and Confident Learning score theirs: ``precision`` = wrong labels
    listed / listed, ``recall`` = wrong labels listed / wrong labels (NaN where a denominator is 0). (N,) arrays."""
    listed, wrong = np.asarray(listed, dtype=bool), np.asarray(given) != np.asarray(true)
    hits = int((listed & wrong).sum())
    return {
        "precision": hits / listed.sum() if listed.any() else float("nan"),
        "recall": hits / wrong.sum() if wrong.any() else float("nan"),
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


def pseudo_label_accuracy(*, pseudo: np.ndarray, given: np.ndarray, true: np.ndarray) -> dict[str, float | int]:
    """How well the pseudo labels y_hat repair the samples they are given to (the non-selected ones, Section 3.2).

    Parameters
    ----------
    pseudo, given, true : (n,) labels of the non-selected samples.

    Returns
    -------
    ``samples`` and ``noisy`` (how many of them carry a wrong given label), ``all`` (accuracy of y_hat against y* on
    all n), ``on_noisy`` (on those with y != y*: labels repaired) and ``on_clean`` (on those with y = y*: a correct
    label the pseudo label keeps); NaN where a group is empty.
    """
    pseudo, given, true = (np.asarray(labels) for labels in (pseudo, given, true))
    correct, noisy = pseudo == true, given != true

    def share(mask: np.ndarray) -> float:
        return float(correct[mask].mean()) if mask.any() else float("nan")

    return {
        "samples": len(true),
        "noisy": int(noisy.sum()),
        "all": share(np.ones_like(noisy)),
        "on_noisy": share(noisy),
        "on_clean": share(~noisy),
    }


def precision_by_given_class(*, selected: np.ndarray, given: np.ndarray, true: np.ndarray) -> dict[str, float]:
    """Precision of the selected set within each given label j: |CSS_j| / |SS_j| (classes with no selected sample
    left out). Asymmetric noise puts a selection's wrong labels into a few classes, which the overall precision hides.
    Keys are the classes as text (JSON)."""
    selected, given, true = np.asarray(selected, dtype=bool), np.asarray(given), np.asarray(true)
    return {
        str(label): float((true[selected & (given == label)] == label).mean()) for label in np.unique(given[selected])
    }
