"""Sample selection by voting: NKCVS (Algorithm 1, lines 10-11) and E-NKCVS (Algorithm 2, Eq. contains), with the
per-sample outcome of the M iterations' votes (Section 3.2's pseudo labels and entropy weights); and the checks of
the held-out prediction tables the votes are counted from.

Numpy only: the selection steps of the workflow start hundreds of processes, none of which needs torch.
"""

import numpy as np
import pandas as pd

from enkcvs.ranking import label_quality
from enkcvs.weights import entropy_weight, label_entropy, predicted_label_distribution, pseudo_labels


def prediction_table_problems(frame: pd.DataFrame, *, num_samples: int, num_classes: int) -> list[str]:
    """Defects of one fold's prediction table (empty when sound): missing columns, a class count other than Q,
    samples outside 0..N-1 or repeated, labels outside 0..Q-1, probability rows that are not distributions."""
    prob_columns = [f"prob_{c}" for c in range(num_classes)]
    missing = [c for c in ("sample", "given", "predicted", *prob_columns) if c not in frame.columns]
    extra = sorted(c for c in frame.columns if c.startswith("prob_") and c not in prob_columns)
    problems = []
    if missing:
        problems.append(f"missing columns {missing}")
    if extra:
        problems.append(f"has {len(prob_columns) + len(extra)} probability columns for Q = {num_classes} classes")
    if missing or extra:
        return problems
    samples = frame["sample"].to_numpy()
    if ((samples < 0) | (samples >= num_samples)).any():
        problems.append(f"sample indices outside 0..{num_samples - 1}")
    if len(np.unique(samples)) != len(samples):
        problems.append(f"{len(samples) - len(np.unique(samples))} duplicated samples")
    for column in ("given", "predicted"):
        labels = frame[column].to_numpy()
        if ((labels < 0) | (labels >= num_classes)).any():
            problems.append(f"'{column}' labels outside 0..{num_classes - 1}")
    probabilities = frame[prob_columns].to_numpy()
    if not np.isfinite(probabilities).all() or not np.allclose(probabilities.sum(axis=1), 1.0, atol=1e-3):
        problems.append("probability rows that are not finite or do not sum to 1")
    return problems


def assemble_iteration(folds: list[pd.DataFrame], *, num_samples: int, num_classes: int) -> pd.DataFrame:
    """Join the K held-out prediction tables of one iteration into one row per sample, checking completeness.

    Parameters
    ----------
    folds : K tables with columns ``sample``, ``given``, ``predicted`` and ``prob_0`` .. ``prob_{Q-1}``.
    num_samples : N, the number of training samples every iteration must cover exactly once.
    num_classes : Q.

    Returns
    -------
    Table of N rows sorted by ``sample``.
    """
    frame = pd.concat(folds, ignore_index=True)
    prob_columns = [f"prob_{c}" for c in range(num_classes)]
    missing_columns = {"sample", "given", "predicted", *prob_columns} - set(frame.columns)
    if missing_columns:
        raise ValueError(f"prediction tables lack columns {sorted(missing_columns)} (expected Q = {num_classes})")
    counts = np.bincount(frame["sample"].to_numpy(), minlength=num_samples)
    if len(counts) != num_samples or (counts != 1).any():
        raise ValueError(
            f"the folds of an iteration must predict each of the {num_samples} samples exactly once: "
            f"{int((counts[:num_samples] == 0).sum())} missing, {int((counts > 1).sum())} repeated, "
            f"{max(len(counts) - num_samples, 0)} out of range"
        )
    return frame.sort_values("sample", ignore_index=True)


def selected_in_iteration(*, predicted: np.ndarray, given: np.ndarray) -> np.ndarray:
    """Algorithm 1, lines 10-11: a sample enters T_i when its held-out prediction equals its given label.

    ``predicted`` and ``given`` have shape (N,) or (M, N) / (N,); returns a bool array of the broadcast shape.
    """
    return np.asarray(predicted) == np.asarray(given)


def selection_votes(*, predicted: np.ndarray, given: np.ndarray) -> np.ndarray:
    """Eq. contains, left-hand side: sum_{i=1..M} I(e in T_i) for every sample. ``predicted`` (M, N) -> (N,) int."""
    return selected_in_iteration(predicted=predicted, given=given).sum(axis=0)


def ensemble_selection(*, votes: np.ndarray, threshold: int) -> np.ndarray:
    """Eq. contains: keep a sample when it was selected in at least ``threshold`` (t) iterations. (N,) -> (N,) bool."""
    return np.asarray(votes) >= threshold


def ensemble_outcome(
    *, predicted: np.ndarray, mean_probabilities: np.ndarray, given: np.ndarray, threshold: int
) -> dict[str, np.ndarray]:
    """Algorithm 2 and Section 3.2: what the M iterations' votes say about every sample.

    Parameters
    ----------
    predicted : (M, N) int, each iteration's held-out predicted labels.
    mean_probabilities : (N, Q) float, the class probabilities averaged over the M iterations.
    given : (N,) int, the given labels in 0..Q-1.
    threshold : t, the votes a sample needs to be selected.

    Returns
    -------
    Each (N,): ``votes`` (:func:`selection_votes`), ``selected`` (Eq. contains), ``pseudo`` (the majority label),
    ``entropy`` (H(P)), ``beta`` (H(P) / log Q), ``prob_given`` (the mean probability of the given label) and
    ``label_quality`` (:func:`enkcvs.ranking.label_quality`), in that order.
    """
    num_classes = mean_probabilities.shape[1]
    votes = selection_votes(predicted=predicted, given=given)
    distribution = predicted_label_distribution(predicted=predicted, num_classes=num_classes)
    entropy = label_entropy(distribution)
    pseudo = pseudo_labels(distribution=distribution, mean_probabilities=mean_probabilities)
    return {
        "votes": votes,
        "selected": ensemble_selection(votes=votes, threshold=threshold),
        "pseudo": pseudo,
        "entropy": entropy,
        "beta": entropy_weight(entropy=entropy, num_classes=num_classes),
        "prob_given": mean_probabilities[np.arange(len(given)), given],
        "label_quality": label_quality(mean_probabilities=mean_probabilities, given=given, pseudo=pseudo),
    }
