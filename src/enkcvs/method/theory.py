"""Expected precision and recall of E-NKCVS: Theorem 1 (corrected, see docs/paper-notes.md, "Theorem 1") and Corollary 1."""

from math import comb

import numpy as np

from enkcvs.method.metrics import class_prior, confusion_matrix
from enkcvs.method.noise import empirical_transition_matrix


def selection_probability(c: np.ndarray, *, iterations: int, threshold: int) -> np.ndarray:
    """B(c) = sum_{k=t..M} binom(M, k) c^k (1 - c)^(M - k): the chance of >= t selections in M independent iterations.

    ``c`` is the per-iteration selection probability (C_ij for true class i, given label j); any shape.
    """
    c = np.asarray(c, dtype=float)
    return sum(comb(iterations, k) * c**k * (1.0 - c) ** (iterations - k) for k in range(threshold, iterations + 1))


def theorem1_precision_recall(
    *, prior: np.ndarray, transition: np.ndarray, confusion: np.ndarray, iterations: int, threshold: int
) -> dict[str, float]:
    """Theorem 1 (corrected): expected precision and recall of the set selected by Algorithm 2.

    P(SS) = sum_ij p_i T_ij B(C_ij), P(CSS) = sum_i p_i T_ii B(C_ii), P(CS) = sum_i p_i T_ii;
    precision = P(CSS)/P(SS), recall = P(CSS)/P(CS).

    Parameters
    ----------
    prior : (Q,) p_i = P(y* = i).
    transition : (Q, Q) noise matrix T_ij = P(y = j | y* = i).
    confusion : (Q, Q) classifier confusion C_ij = P(y_hat = j | y* = i).
    iterations, threshold : M and t.
    """
    prior, transition = np.asarray(prior, float), np.asarray(transition, float)
    selected = selection_probability(confusion, iterations=iterations, threshold=threshold)
    p_ss = float((prior[:, None] * transition * selected).sum())
    p_css = float((prior * np.diag(transition) * np.diag(selected)).sum())
    p_cs = float((prior * np.diag(transition)).sum())
    return {
        "precision": p_css / p_ss if p_ss else float("nan"),
        "recall": p_css / p_cs if p_cs else float("nan"),
    }


def empirical_theorem1(
    *, true: np.ndarray, given: np.ndarray, predicted: np.ndarray, threshold: int, num_classes: int
) -> dict[str, float]:
    """:func:`theorem1_precision_recall` at a run's own estimates: p and T counted from the true and given labels
    (N,), C from the M iterations' predictions (M, N) against the true labels."""
    return theorem1_precision_recall(
        prior=class_prior(true=true, num_classes=num_classes),
        transition=empirical_transition_matrix(true_labels=true, noisy_labels=given, num_classes=num_classes),
        confusion=confusion_matrix(true=np.tile(true, len(predicted)), predicted=predicted, num_classes=num_classes),
        iterations=len(predicted),
        threshold=threshold,
    )


def corollary_precision_recall(*, rate: float, accuracy: float, num_classes: int) -> dict[str, float]:
    """Corollary 1 (Eq. prec-rec-sym): symmetric T and C, M = t = 1.

    precision = (1-eps) q / ((1-eps) q + eps (1-q)/(Q-1)), recall = q.
    """
    clean = (1.0 - rate) * accuracy
    return {"precision": clean / (clean + rate * (1.0 - accuracy) / (num_classes - 1)), "recall": accuracy}


def iteration_dependence(*, true: np.ndarray, predicted: np.ndarray, num_classes: int) -> dict[str, float]:
    """How far the M iterations are from the independence Theorem 1 assumes (given the true class, each iteration
    predicts class k with probability C_ik, independently of the others).

    Parameters
    ----------
    true : (N,) true labels.
    predicted : (M, N) held-out predictions of the M iterations, M >= 2.
    num_classes : Q.

    Returns
    -------
    ``agreement``: share of (sample, pair of iterations) on which the two iterations predict the same label, and
    ``agreement_independent``: its expectation under independence, sum_i p_i sum_k C_ik^2; ``all_wrong``: share of
    samples every iteration predicts wrongly, and ``all_wrong_independent``: sum_i p_i (1 - C_ii)^M. Measured values
    above the independent ones mean correlated mistakes: the same samples are missed again and again, so fewer clean
    samples reach t votes than Theorem 1 expects (its recall is too high).
    """
    predicted = np.asarray(predicted)
    iterations = len(predicted)
    if iterations < 2:
        raise ValueError("iteration dependence needs M >= 2 iterations")
    pairs = [(a, b) for a in range(iterations) for b in range(a + 1, iterations)]
    prior = class_prior(true=true, num_classes=num_classes)
    confusion = confusion_matrix(true=np.tile(true, iterations), predicted=predicted, num_classes=num_classes)
    return {
        "agreement": float(np.mean([np.mean(predicted[a] == predicted[b]) for a, b in pairs])),
        "agreement_independent": float((prior * (confusion**2).sum(axis=1)).sum()),
        "all_wrong": float(np.mean((predicted != true).all(axis=0))),
        "all_wrong_independent": float((prior * (1.0 - np.diag(confusion)) ** iterations).sum()),
    }
