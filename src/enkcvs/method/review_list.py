"""The review list: the samples a person should check first, as many as there are estimated label errors.

The paper's selection (Eq. contains) keeps a clean training set: a sample is left out as soon as fewer than t of the M
iterations predict its label, so the not-kept set is long (about every sample the classifier gets wrong) and a poor
list of label errors to hand a person. The review list is precision-first instead: the n lowest-ranked samples of the
label-quality ranking (:func:`enkcvs.method.ranking.label_quality`), n the number of label errors that confident
learning estimates from the same mean out-of-fold probabilities (Northcutt, Jiang and Chuang, "Confident Learning:
Estimating Uncertainty in Dataset Labels", JAIR 70, 2021, Section 3.1: per-class thresholds, the confident joint, its
calibration), counted by cleanlab's ``cleanlab.count.num_label_issues(estimation_method="off_diagonal_calibrated")``,
which cleanlab's documentation names as the cut-off for a custom ranking score.
"""

import numpy as np


def estimated_error_count(*, probabilities: np.ndarray, given: np.ndarray) -> int:
    """The number of label errors confident learning estimates: N times the off-diagonal share of the calibrated
    confident joint (Section 3.1, "estimating the joint"), as cleanlab counts it. ``probabilities`` (N, Q) mean
    out-of-fold probabilities, ``given`` (N,) in 0..Q-1. Where fewer than two classes are labelled, which cleanlab
    refuses, the samples whose most probable class is not their label."""
    given, probabilities = np.asarray(given), np.asarray(probabilities)
    if len(np.unique(given)) < 2:  # cleanlab needs two labelled classes: count its predicted_neq_given instead
        return int((probabilities.argmax(axis=1) != given).sum())
    from cleanlab.count import num_label_issues  # imports scikit-learn: only where a review list is made

    return int(num_label_issues(labels=given, pred_probs=probabilities, estimation_method="off_diagonal_calibrated"))


def review_list(*, label_quality: np.ndarray, size: int) -> np.ndarray:
    """The first ``size`` samples of the label-quality ranking (lowest first, ties by sample index, as
    :func:`enkcvs.method.ranking.issue_ranks`). ``label_quality`` (N,) -> (N,) bool."""
    listed = np.zeros(len(label_quality), dtype=bool)
    listed[np.argsort(label_quality, kind="stable")[:size]] = True
    return listed
