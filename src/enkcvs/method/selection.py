"""Sample selection by voting: NKCVS (Algorithm 1, lines 10-11) and E-NKCVS (Algorithm 2, Eq. contains), with the
per-sample outcome of the M iterations' votes (Section 3.2's pseudo labels and entropy weights) and, beside the
selection, the review list of likely label errors (:mod:`enkcvs.method.review_list`).

Numpy only: the selection steps of the workflow start hundreds of processes, none of which needs torch.
"""

import numpy as np

from enkcvs.method.ranking import SCORES, label_quality, logit_margin, self_confidence
from enkcvs.method.review_list import review_list
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
    *,
    predicted: np.ndarray,
    mean_probabilities: np.ndarray,
    given: np.ndarray,
    threshold: int,
    score: str = "label_quality",
) -> dict[str, np.ndarray]:
    """Algorithm 2 and Section 3.2: what the M iterations' votes say about every sample.

    Parameters
    ----------
    predicted : (M, N) int, each iteration's held-out predicted labels.
    mean_probabilities : (N, Q) float, the class probabilities averaged over the M iterations.
    given : (N,) int, the given labels in 0..Q-1.
    threshold : t, the votes a sample needs to be selected.
    score : what ranks the samples, one of :data:`enkcvs.method.ranking.SCORES`:
        :func:`enkcvs.method.ranking.label_quality`, :func:`~enkcvs.method.ranking.self_confidence` or
        :func:`~enkcvs.method.ranking.logit_margin`.

    Returns
    -------
    Each (N,): ``votes`` (:func:`selection_votes`), ``selected`` (Eq. contains: kept for training), ``pseudo``
    (the majority label), ``predicted`` (the most probable class of the mean probabilities), ``entropy`` (H(P)),
    ``beta`` (H(P) / log Q), ``prob_given`` (the mean probability of the given label), ``label_quality`` (the
    ``score``, low = likely mislabelled) and ``in_review_list`` (the lowest-scored not-kept samples, as many as
    confident learning finds among them: :func:`enkcvs.method.review_list.review_list`), in that order.
    """
    if score not in SCORES:
        raise ValueError(f"score={score!r}: choose one of {', '.join(SCORES)}")
    num_classes = mean_probabilities.shape[1]
    votes = selection_votes(predicted=predicted, given=given)
    distribution = predicted_label_distribution(predicted=predicted, num_classes=num_classes)
    entropy = label_entropy(distribution)
    pseudo = pseudo_labels(distribution=distribution, mean_probabilities=mean_probabilities)
    quality = (
        label_quality(mean_probabilities=mean_probabilities, given=given, pseudo=pseudo)
        if score == "label_quality"
        else {"self_confidence": self_confidence, "logit_margin": logit_margin}[score](
            mean_probabilities=mean_probabilities, given=given
        )
    )
    selected = ensemble_selection(votes=votes, threshold=threshold)
    return {
        "votes": votes,
        "selected": selected,
        "pseudo": pseudo,
        "predicted": mean_probabilities.argmax(axis=1),
        "entropy": entropy,
        "beta": entropy_weight(entropy=entropy, num_classes=num_classes),
        "prob_given": mean_probabilities[np.arange(len(given)), given],
        "label_quality": quality,
        "in_review_list": review_list(probabilities=mean_probabilities, given=given, not_kept=~selected, score=quality),
    }
