"""Pseudo labels and entropy weights for the non-selected samples, and the final loss's weights (Section 3.2).

All functions are numpy-only; the training loop consumes their soft targets and per-sample weights.
"""

import numpy as np


def predicted_label_distribution(*, predicted: np.ndarray, num_classes: int) -> np.ndarray:
    """P: the empirical distribution of each sample's M predicted labels. ``predicted`` (M, N) -> (N, Q)."""
    predicted = np.asarray(predicted)
    counts = np.zeros((predicted.shape[1], num_classes))
    np.add.at(counts, (np.arange(predicted.shape[1])[None, :].repeat(len(predicted), 0), predicted), 1.0)
    return counts / len(predicted)


def pseudo_labels(*, distribution: np.ndarray, mean_probabilities: np.ndarray) -> np.ndarray:
    """y_hat: the most frequent predicted label; ties go to the tied class with the highest mean probability.

    Parameters
    ----------
    distribution : (N, Q) output of :func:`predicted_label_distribution`.
    mean_probabilities : (N, Q) predicted class probabilities averaged over the M iterations.

    Returns
    -------
    (N,) int64 pseudo labels.
    """
    tied = distribution == distribution.max(axis=1, keepdims=True)
    return np.where(tied, mean_probabilities, -np.inf).argmax(axis=1).astype(np.int64)


def label_entropy(distribution: np.ndarray) -> np.ndarray:
    """H(P) = -E_P[log P] in nats (Section 3.2). (N, Q) -> (N,)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(distribution > 0, distribution * np.log(distribution), 0.0)
    return 0.0 - terms.sum(axis=1)  # not -sum: a certain sample's entropy is +0.0, never printed as -0.000


def entropy_weight(*, entropy: np.ndarray, num_classes: int) -> np.ndarray:
    """Eq. beta: beta = H(P) / log Q, the weight of the given label's loss for a non-selected sample. (N,) -> (N,)."""
    return np.asarray(entropy) / np.log(num_classes)


def reweighted_targets(
    *, given: np.ndarray, pseudo: np.ndarray, beta: np.ndarray, selected: np.ndarray, num_classes: int
) -> np.ndarray:
    """Soft targets whose cross-entropy is the per-sample loss of Eq. full-loss.

    Cross-entropy is linear in the target, so beta * L(x, y) + (1 - beta) * L(x, y_hat) = L(x, beta e_y +
    (1 - beta) e_y_hat). Selected samples keep their one-hot given label.

    Parameters
    ----------
    given, pseudo : (N,) int labels y and y_hat.
    beta : (N,) entropy weights.
    selected : (N,) bool, membership of SS.
    num_classes : Q.

    Returns
    -------
    (N, Q) float32 rows summing to 1.
    """
    rows = np.arange(len(given))
    beta = np.where(selected, 1.0, beta)
    targets = np.zeros((len(given), num_classes))
    np.add.at(targets, (rows, given), beta)
    np.add.at(targets, (rows, pseudo), 1.0 - beta)
    return targets.astype(np.float32)


def full_loss_sample_weights(*, selected: np.ndarray, gamma: float) -> np.ndarray:
    """Per-sample weights w with mean_i w_i L_i equal to Eq. full-loss.

    Eq. full-loss is (1/|SS|) sum_SS L + gamma/(|D|-|SS|) sum_notSS L', so w_i = N/|SS| on SS and
    gamma N/(N-|SS|) elsewhere. A uniformly drawn mini-batch's mean of w_i L_i is then an unbiased estimate of the
    full loss, whatever the batch's mix of selected and non-selected samples. An empty set's term vanishes.
    (N,) bool -> (N,) float32.
    """
    selected = np.asarray(selected, dtype=bool)
    n, n_selected = len(selected), int(selected.sum())
    on_selected = n / n_selected if n_selected else 0.0
    off_selected = gamma * n / (n - n_selected) if n_selected < n else 0.0
    return np.where(selected, on_selected, off_selected).astype(np.float32)
