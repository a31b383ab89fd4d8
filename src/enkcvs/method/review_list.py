"""The review list: the samples a person should check first, as many as there are estimated label errors.

The paper's selection (Eq. contains) keeps a clean training set: a sample is left out as soon as fewer than t of the M
iterations predict its label, so the not-kept set is long (about every sample the classifier gets wrong) and a poor
list of label errors to hand a person. The review list is precision-first instead: the not-kept samples the ranking
puts first, as many as confident learning finds among them (Northcutt, Jiang and Chuang, "Confident Learning:
Estimating Uncertainty in Dataset Labels", JAIR 70, 2021: the calibrated confident joint, Section 3.1, pruned by
noise rate, Section 3.2; ``cleanlab.filter.find_label_issues``'s default) on the M iterations' mean out-of-fold
probabilities once they are calibrated. Calibrated, because the confident joint counts a sample in an off-diagonal
cell when its probability of a class reaches that class's mean: fold models trained with mixup are underconfident and
those trained without it often overconfident, and either way the count drifts from the number of errors. The count
from confident learning, the samples from the ranking: on flipped labels the ranking's first samples are more often
the errors than those confident learning picks itself (benchmarks/find_issues_vs_cleanlab.py).
"""

import warnings

import numpy as np

#: The temperatures :func:`calibrated_probabilities` searches, as log T, and the step log T is rounded to: the fitted
#: T is then the same for probabilities that differ only in float rounding (a CSV read back, columns reordered).
LOG_TEMPERATURE_BOUNDS = (-4.0, 4.0)
LOG_TEMPERATURE_STEP = 0.01


def calibrated_probabilities(*, probabilities: np.ndarray, given: np.ndarray) -> np.ndarray:
    """Temperature scaling (Guo, Pleiss, Sun and Weinberger, "On Calibration of Modern Neural Networks", ICML 2017,
    Section 4.2): softmax(log P / T) with the one T that maximises the likelihood of the given labels. Out-of-fold
    probabilities were predicted by models that never saw the sample, so fitting T on them does not overfit; fitted to
    the given labels, the result estimates the probability of the given (noisy) label, which is what confident
    learning counts with. ``probabilities`` (N, Q), ``given`` (N,) in 0..Q-1 -> (N, Q), each row's order of classes
    kept."""
    from scipy.optimize import minimize_scalar
    from scipy.special import log_softmax

    logits = np.log(np.clip(np.asarray(probabilities, dtype=np.float64), 1e-12, 1.0))  # (N, Q)
    rows = np.arange(len(given))

    def negative_log_likelihood(log_temperature: float) -> float:
        return -log_softmax(logits / np.exp(log_temperature), axis=1)[rows, given].mean()

    fitted = minimize_scalar(
        negative_log_likelihood, bounds=LOG_TEMPERATURE_BOUNDS, method="bounded", options={"xatol": 1e-6}
    )
    log_temperature = round(fitted.x / LOG_TEMPERATURE_STEP) * LOG_TEMPERATURE_STEP
    return np.exp(log_softmax(logits / np.exp(log_temperature), axis=1))


def review_list(*, probabilities: np.ndarray, given: np.ndarray, not_kept: np.ndarray, score: np.ndarray) -> np.ndarray:
    """The likely label errors: of the ``not_kept`` samples, the n with the lowest ``score`` (ties by sample index, as
    :func:`enkcvs.method.ranking.issue_ranks`), n the number of them that ``cleanlab.filter.find_label_issues`` (its
    default, ``prune_by_noise_rate``) flags on the calibrated ``probabilities`` (:func:`calibrated_probabilities`).
    Where fewer than two classes are labelled, which cleanlab refuses, n counts the not-kept samples whose most
    probable class is not their label. ``probabilities`` (N, Q) mean out-of-fold probabilities, ``given`` (N,) in
    0..Q-1, ``not_kept`` (N,) bool, ``score`` (N,) low = likely mislabelled -> (N,) bool."""
    given, probabilities = np.asarray(given), np.asarray(probabilities)
    not_kept = np.asarray(not_kept, dtype=bool)
    count = int((not_kept & confident_learning_issues(probabilities=probabilities, given=given)).sum())
    listed = np.zeros(len(given), dtype=bool)
    candidates = np.flatnonzero(not_kept)
    listed[candidates[np.argsort(np.asarray(score)[candidates], kind="stable")[:count]]] = True
    return listed


def confident_learning_issues(*, probabilities: np.ndarray, given: np.ndarray) -> np.ndarray:
    """``cleanlab.filter.find_label_issues`` (``prune_by_noise_rate``) on the calibrated ``probabilities`` (N, Q) and
    ``given`` (N,); where fewer than two classes are labelled, the samples whose most probable class is not their
    label. -> (N,) bool."""
    if len(np.unique(given)) < 2:
        return probabilities.argmax(axis=1) != given
    from cleanlab.filter import find_label_issues  # imports scikit-learn: only where a review list is made

    calibrated = calibrated_probabilities(probabilities=probabilities, given=given)
    # cleanlab rounds its per-class counts with ties broken by column: classes in an order of their own (labels, then
    # probability mass) make the list the same whatever order the probability columns came in.
    order = np.lexsort((calibrated.sum(axis=0), np.bincount(given, minlength=calibrated.shape[1])))
    calibrated, given = calibrated[:, order], np.argsort(order)[given]
    with warnings.catch_warnings():  # cleanlab's note on small classes: the command checks class sizes itself
        warnings.filterwarnings("ignore", message="May not flag all label issues in class")
        # n_jobs=1: the result does not depend on it, and a process pool per call costs more than it saves here
        return find_label_issues(labels=given, pred_probs=calibrated, n_jobs=1)
