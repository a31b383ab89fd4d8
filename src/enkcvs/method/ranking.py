"""Ranking samples from most to least likely mislabelled: E-NKCVS's label-quality score, and how well a score ranks.

The paper decides only *which* samples to keep (votes >= t); a practitioner reading a list of label issues also needs
an order. :func:`label_quality` gives one from the same ensemble the selection votes with, and :func:`ranking_quality`
measures any score's order against known label errors (results/report/ranking.md compares it with cleanlab's).
"""

import numpy as np

#: The names :func:`label_quality`'s ranking and the order of the paper's votes (fewest first, ties by the given
#: label's probability) go by in the comparisons' tables.
LABEL_QUALITY = "E-NKCVS label quality"
VOTES_ORDER = "E-NKCVS votes, then P(given)"
#: The scores a ranking can go by (``score`` of :func:`enkcvs.method.selection.ensemble_outcome`): the
#: ``label_quality`` margin against the suggested label, cleanlab's default ``self_confidence``, and the
#: ``logit_margin``, every label-issue table's unless told (chosen by benchmarks/given_probabilities.py).
SCORES = ("label_quality", "self_confidence", "logit_margin")


def label_quality(*, mean_probabilities: np.ndarray, given: np.ndarray, pseudo: np.ndarray) -> np.ndarray:
    """The label-quality score: q_i = (1 + P_i[y_i] - P_i[c_i]) / 2 in [0, 1], low = likely mislabelled.

    P_i is the mean of the M iterations' probabilities of sample i, y_i its given label, and c_i the label the
    ensemble suggests instead: the pseudo label (Section 3.2, the majority of the M predictions) where it differs from
    y_i, else the most probable other class. So q_i < 1/2 when the suggested label is more probable than the given
    one. With M = 1 it is cleanlab's ``normalized_margin``; with M > 1 the rival class is the majority vote, as in the
    pseudo labels. Chosen over the mean probability of the given label (cleanlab's ``self_confidence``) and over
    votes-then-probability by measurement on the default run (docs/your-data.md).

    Parameters
    ----------
    mean_probabilities : (N, Q) mean out-of-fold class probabilities over the M iterations.
    given : (N,) given labels in 0..Q-1.
    pseudo : (N,) pseudo labels in 0..Q-1 (:func:`enkcvs.method.weights.pseudo_labels`).

    Returns
    -------
    (N,) float in [0, 1].
    """
    rows = np.arange(len(given))
    others = mean_probabilities.copy()
    others[rows, given] = -np.inf
    rival = np.where(pseudo != given, pseudo, others.argmax(axis=1))
    return (1.0 + mean_probabilities[rows, given] - mean_probabilities[rows, rival]) / 2.0


def self_confidence(*, mean_probabilities: np.ndarray, given: np.ndarray) -> np.ndarray:
    """cleanlab's default label-quality score on the ensemble: the mean over the M iterations of the given label's
    out-of-fold probability, P_i[y_i] in [0, 1], low = likely mislabelled. ``mean_probabilities`` (N, Q), ``given``
    (N,) -> (N,)."""
    return mean_probabilities[np.arange(len(given)), given]


def logit_margin(*, mean_probabilities: np.ndarray, given: np.ndarray) -> np.ndarray:
    """The margin of Pleiss, Zhang, Elenberg and Weinberger ("Identifying Mislabeled Data using the Area Under the
    Margin Ranking", NeurIPS 2020, Eq. 1: z_y - max_{k != y} z_k) read from probabilities, where it equals
    log P_i[y_i] - max_{k != y_i} log P_i[k], low = likely mislabelled. On the log scale the given label's probability
    keeps its order where it is tiny (self-confidence's strength on overconfident models), and where it is 0 (a file
    rounded) the samples are told apart by how probable their rival class is (the normalized margin's).
    ``mean_probabilities`` (N, Q), ``given`` (N,) -> (N,) float64, log(0) read as log of the smallest float."""
    logs = np.log(np.maximum(np.asarray(mean_probabilities, dtype=np.float64), np.finfo(np.float64).tiny))  # (N, Q)
    rows = np.arange(len(given))
    given_log = logs[rows, given]
    logs[rows, given] = -np.inf
    return given_log - logs.max(axis=1)


def issue_ranks(*, label_quality: np.ndarray) -> np.ndarray:
    """Rank 1..N from most to least likely mislabelled: the lowest label quality first, ties by sample index.
    ``label_quality`` (N,) -> (N,) int64."""
    rank = np.empty(len(label_quality), dtype=np.int64)
    rank[np.argsort(label_quality, kind="stable")] = np.arange(1, len(label_quality) + 1)
    return rank


def ranking_quality(*, label_quality: np.ndarray, is_error: np.ndarray, top: tuple[int, ...] = (20, 100)) -> dict:
    """How well ``label_quality`` puts the true label errors first, reading rows from the lowest score up.

    Returns ``errors`` (their number), ``precision_at_<k>`` for each k in ``top`` and ``precision_at_errors`` (k = the
    number of errors): the share of errors among the k lowest-scored rows (ties by sample index); ``auroc`` and
    ``auprc`` (average precision) of the score as a detector of errors (scikit-learn). NaN where undefined (no error,
    or no clean row for ``auroc``). ``label_quality``, ``is_error`` (N,).
    """
    from sklearn.metrics import average_precision_score, roc_auc_score

    is_error = np.asarray(is_error, dtype=bool)
    order = np.argsort(label_quality, kind="stable")
    errors = int(is_error.sum())

    def precision_at(k: int) -> float:
        return float(is_error[order[:k]].mean()) if 0 < k <= len(order) else float("nan")

    scores = {"errors": errors, **{f"precision_at_{k}": precision_at(k) for k in top}}
    scores["precision_at_errors"] = precision_at(errors)
    both = 0 < errors < len(is_error)
    scores["auroc"] = float(roc_auc_score(is_error, -label_quality)) if both else float("nan")
    scores["auprc"] = float(average_precision_score(is_error, -label_quality)) if errors else float("nan")
    return scores
