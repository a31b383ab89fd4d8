"""Sample selection by voting: NKCVS (Algorithm 1, lines 10-11) and E-NKCVS (Algorithm 2, Eq. contains), with the
per-sample outcome of the M iterations' votes (Section 3.2's pseudo labels and entropy weights) and, beside the
selection, the review list of likely label errors (:mod:`enkcvs.method.review_list`).

Numpy only: the selection steps of the workflow start hundreds of processes, none of which needs torch.
"""

import numpy as np

from enkcvs.method.ranking import label_quality
from enkcvs.method.review_list import estimated_error_count, review_list
from enkcvs.method.weights import entropy_weight, label_entropy, predicted_label_distribution, pseudo_labels


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
    Each (N,): ``votes`` (:func:`selection_votes`), ``selected`` (Eq. contains: kept for training), ``pseudo``
    (the majority label), ``entropy`` (H(P)), ``beta`` (H(P) / log Q), ``prob_given`` (the mean probability of the
    given label), ``label_quality`` (:func:`enkcvs.method.ranking.label_quality`) and ``in_review_list`` (the
    lowest-quality samples, as many as confident learning estimates label errors:
    :func:`enkcvs.method.review_list.review_list`), in that order.
    """
    num_classes = mean_probabilities.shape[1]
    votes = selection_votes(predicted=predicted, given=given)
    distribution = predicted_label_distribution(predicted=predicted, num_classes=num_classes)
    entropy = label_entropy(distribution)
    pseudo = pseudo_labels(distribution=distribution, mean_probabilities=mean_probabilities)
    quality = label_quality(mean_probabilities=mean_probabilities, given=given, pseudo=pseudo)
    errors = estimated_error_count(probabilities=mean_probabilities, given=given)
    return {
        "votes": votes,
        "selected": ensemble_selection(votes=votes, threshold=threshold),
        "pseudo": pseudo,
        "entropy": entropy,
        "beta": entropy_weight(entropy=entropy, num_classes=num_classes),
        "prob_given": mean_probabilities[np.arange(len(given)), given],
        "label_quality": quality,
        "in_review_list": review_list(label_quality=quality, size=errors),
    }
