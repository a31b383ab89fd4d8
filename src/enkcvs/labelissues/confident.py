"""E-NKCVS side by side with confident learning (cleanlab) on the very same out-of-fold probabilities.

The two score different sets (docs/paper-notes.md, "Precision and recall"): the paper's precision and recall are those of the *kept* (clean
selected) set, cleanlab's those of the *flagged* (detected label errors) set. Every row here carries both, so the
methods compare on either scale. cleanlab is imported only where it is called: nothing else in the package needs it.
"""

import numpy as np
import pandas as pd

from enkcvs.labelissues.oof import CLEANLAB_SCORES, FILTERS, select
from enkcvs.method.metrics import precision_recall, selection_set_sizes
from enkcvs.method.ranking import LABEL_QUALITY, VOTES_ORDER, ranking_quality

#: ``filter_by`` values of :func:`cleanlab.filter.find_label_issues` compared here (its default first, the one
#: prune-and-retrain, method ``cl_prune``, uses); the rankings compared are :data:`CLEANLAB_SCORES`'.
CLEANLAB_METHODS = FILTERS[:5]
CLEANLAB_DEFAULT_FILTER = FILTERS[0]
SCORE_COLUMNS = ("kept", "flagged", "kept_precision", "kept_recall", "flagged_precision", "flagged_recall")
#: The top-k sizes at which two rankings of labels whose errors are unknown (``real`` noise) are set side by side.
AGREEMENT_TOPS = (36, 100, 1000)


def cleanlab_flags(*, probabilities: np.ndarray, labels: np.ndarray, method: str) -> np.ndarray:
    """(N,) bool, the label issues ``cleanlab.filter.find_label_issues(filter_by=method)`` finds from ``probabilities``
    (N, Q) and ``labels`` (N,) in 0..Q-1; ``method`` one of :data:`CLEANLAB_METHODS`."""
    if method not in CLEANLAB_METHODS:
        raise ValueError(f"unknown cleanlab method {method!r}: choose one of {CLEANLAB_METHODS}")
    from cleanlab.filter import find_label_issues

    # n_jobs=1: the result does not depend on it, and a process pool per call costs more than it saves at these sizes
    return find_label_issues(labels=labels, pred_probs=probabilities, filter_by=method, n_jobs=1)


def kept_and_flagged_scores(*, flagged: np.ndarray, given: np.ndarray, true: np.ndarray) -> dict[str, float]:
    """Both scorings of one detection: the kept set (not flagged) as the paper scores SS, the flagged set as cleanlab.

    ``kept_precision`` = clean kept / kept and ``kept_recall`` = clean kept / clean (Eq. prec-rec);
    ``flagged_precision`` = noisy flagged / flagged and ``flagged_recall`` = noisy flagged / noisy. NaN where a
    denominator is 0. ``flagged``, ``given``, ``true`` are (N,).
    """
    flagged = np.asarray(flagged, dtype=bool)
    sizes = selection_set_sizes(selected=~flagged, given=given, true=true)
    kept = precision_recall(sizes=sizes)
    noisy = np.asarray(given) != np.asarray(true)
    hits = int((noisy & flagged).sum())
    return {
        "kept": sizes["SS"],
        "flagged": int(flagged.sum()),
        "kept_precision": kept["precision"],
        "kept_recall": kept["recall"],
        "flagged_precision": hits / flagged.sum() if flagged.any() else float("nan"),
        "flagged_recall": hits / noisy.sum() if noisy.any() else float("nan"),
    }


def compare_with_confident_learning(
    *, probabilities: np.ndarray, given: np.ndarray, true: np.ndarray, threshold: int | None = None
) -> pd.DataFrame:
    """E-NKCVS and each cleanlab method on the same (M, N, Q) ``probabilities``, scored both ways against (N,)
    ``given`` and ``true`` labels: rows ``E-NKCVS (M=1)`` (iteration 1, t = 1), ``E-NKCVS (M=<M>, t=<t>)``,
    ``cleanlab <method>`` on iteration 1 and, for M > 1, ``cleanlab <method> (mean of <M>)``; columns ``method`` and
    :func:`kept_and_flagged_scores`'."""
    ensemble = select(probabilities=probabilities, labels=given, threshold=threshold, true_labels=true)  # checks all
    stack = np.asarray(probabilities, dtype=float)  # (M, N, Q)
    stack = stack[None] if stack.ndim == 2 else stack
    iterations = len(stack)
    single = ensemble if iterations == 1 else select(probabilities=stack[0], labels=given, threshold=1)
    flags = {"E-NKCVS (M=1)": ~single.selected}
    if iterations > 1:
        flags[f"E-NKCVS (M={iterations}, t={ensemble.threshold})"] = ~ensemble.selected
    sources = {"": stack[0]} | ({f" (mean of {iterations})": stack.mean(axis=0)} if iterations > 1 else {})
    for suffix, source in sources.items():
        for method in CLEANLAB_METHODS:
            flags[f"cleanlab {method}{suffix}"] = cleanlab_flags(probabilities=source, labels=given, method=method)
    rows = [{"method": name, **kept_and_flagged_scores(flagged=f, given=given, true=true)} for name, f in flags.items()]
    return pd.DataFrame(rows, columns=["method", *SCORE_COLUMNS])


def compare_rankings(*, probabilities: np.ndarray, given: np.ndarray, true: np.ndarray) -> pd.DataFrame:
    """How well each score ranks the true label errors first on the same (M, N, Q) or (N, Q) ``probabilities`` and
    (N,) ``given`` and ``true`` labels: E-NKCVS's label quality, its votes then P(given), and each of cleanlab's
    :data:`CLEANLAB_SCORES` on the mean probabilities; one row per score, the keys of
    :func:`enkcvs.method.ranking.ranking_quality`."""
    from cleanlab.rank import get_label_quality_scores

    result = select(probabilities=probabilities, labels=given, true_labels=true, score="label_quality")  # checks all
    stack = np.asarray(probabilities, dtype=float)
    mean = stack.mean(axis=0) if stack.ndim == 3 else stack
    mean = mean / mean.sum(axis=1, keepdims=True)  # float16-stored rows, as select() accepts them
    votes_order = np.lexsort((result.prob_given, result.votes)).argsort()  # position in the order = its score
    scores = {
        LABEL_QUALITY: result.label_quality,
        VOTES_ORDER: votes_order.astype(float),
        **{f"cleanlab {m}": get_label_quality_scores(labels=given, pred_probs=mean, method=m) for m in CLEANLAB_SCORES},
    }
    is_error = np.asarray(given) != np.asarray(true)
    return pd.DataFrame(
        [{"method": name, **ranking_quality(label_quality=score, is_error=is_error)} for name, score in scores.items()]
    )


def agreement_on_real_labels(
    *, probabilities: np.ndarray, given: np.ndarray, threshold: int, tops: tuple[int, ...] = AGREEMENT_TOPS
) -> pd.DataFrame:
    """E-NKCVS beside cleanlab's defaults on the same (M, N, Q) ``probabilities`` and (N,) ``given`` labels where no
    true labels exist (``real`` noise): rows ``flagged`` (E-NKCVS's not kept at t = ``threshold``, cleanlab's
    ``find_label_issues`` on the mean probabilities) and ``top <k>`` for each k of ``tops`` up to N (the k lowest
    E-NKCVS label quality, the k lowest cleanlab self-confidence); columns ``set``, ``E-NKCVS``, ``cleanlab`` (sizes) and
    ``both`` (the samples in both)."""
    from cleanlab.rank import get_label_quality_scores

    ensemble = select(probabilities=probabilities, labels=given, threshold=threshold)  # checks all inputs
    mean = np.asarray(probabilities, dtype=float).mean(axis=0)
    mean = mean / mean.sum(axis=1, keepdims=True)  # float16-stored rows, as select() accepts them
    flags = {
        "E-NKCVS": ~ensemble.selected,
        "cleanlab": cleanlab_flags(probabilities=mean, labels=given, method=CLEANLAB_DEFAULT_FILTER),
    }
    orders = {
        "E-NKCVS": np.argsort(ensemble.label_quality, kind="stable"),
        "cleanlab": np.argsort(get_label_quality_scores(labels=given, pred_probs=mean), kind="stable"),
    }
    rows = [
        {
            "set": "flagged",
            **{name: int(flag.sum()) for name, flag in flags.items()},
            "both": int((flags["E-NKCVS"] & flags["cleanlab"]).sum()),
        }
    ]
    for k in (k for k in tops if k <= len(given)):
        shared = np.intersect1d(orders["E-NKCVS"][:k], orders["cleanlab"][:k]).size
        rows.append({"set": f"top {k}", "E-NKCVS": k, "cleanlab": k, "both": shared})
    return pd.DataFrame(rows, columns=["set", "E-NKCVS", "cleanlab", "both"])
