"""E-NKCVS beside confident learning (enkcvs.labelissues.confident): both scorings, cleanlab's methods, the
comparison."""

import math

import numpy as np
import pytest
from test_oof import make_planted

from enkcvs.labelissues.confident import (
    CLEANLAB_METHODS,
    cleanlab_flags,
    compare_with_confident_learning,
    kept_and_flagged_scores,
)
from enkcvs.labelissues.oof import select

COLUMNS = ["method", "kept", "flagged", "kept_precision", "kept_recall", "flagged_precision", "flagged_recall"]


def test_kept_and_flagged_scores_hand_checked():
    # Samples 2 and 4 are mislabelled; 1, 2 and 4 are flagged: kept {0, 3, 5} is all clean, 3 of the 4 clean samples.
    given, true = np.array([0, 1, 2, 0, 1, 2]), np.array([0, 1, 1, 0, 2, 2])
    flagged = np.array([False, True, True, False, True, False])
    scores = kept_and_flagged_scores(flagged=flagged, given=given, true=true)
    assert scores == pytest.approx(
        {
            "kept": 3,
            "flagged": 3,
            "kept_precision": 1.0,
            "kept_recall": 0.75,
            "flagged_precision": 2 / 3,
            "flagged_recall": 1.0,
        }
    )
    clean = kept_and_flagged_scores(flagged=np.zeros(6, bool), given=given, true=given)
    assert math.isnan(clean["flagged_precision"]) and math.isnan(clean["flagged_recall"])
    assert math.isnan(kept_and_flagged_scores(flagged=np.ones(6, bool), given=given, true=true)["kept_precision"])


@pytest.fixture(scope="module")
def planted():
    """(probabilities (3, 200, 3), given, true) with 15% planted label errors."""
    return make_planted(seed=4, num_samples=200, num_classes=3)


@pytest.mark.parametrize("method", CLEANLAB_METHODS)
def test_cleanlab_flags_each_method(planted, method):
    probabilities, given, true = planted
    flags = cleanlab_flags(probabilities=probabilities[0], labels=given, method=method)
    assert flags.shape == (200,) and flags.dtype == bool
    assert kept_and_flagged_scores(flagged=flags, given=given, true=true)["flagged_recall"] > 0.5


def test_cleanlab_flags_rejects_an_unknown_method(planted):
    with pytest.raises(ValueError, match=r"unknown cleanlab method 'low_self_confidence': choose one of"):
        cleanlab_flags(probabilities=planted[0][0], labels=planted[1], method="low_self_confidence")


def test_comparison_rows_and_columns(planted):
    probabilities, given, true = planted
    single = compare_with_confident_learning(probabilities=probabilities[:1], given=given, true=true)
    assert list(single.columns) == COLUMNS
    assert single["method"].tolist() == ["E-NKCVS (M=1)", *(f"cleanlab {m}" for m in CLEANLAB_METHODS)]
    ensemble = compare_with_confident_learning(probabilities=probabilities, given=given, true=true, threshold=2)
    assert ensemble["method"].tolist() == [
        "E-NKCVS (M=1)",
        "E-NKCVS (M=3, t=2)",
        *(f"cleanlab {m}" for m in CLEANLAB_METHODS),
        *(f"cleanlab {m} (mean of 3)" for m in CLEANLAB_METHODS),
    ]
    rows = ensemble.set_index("method")
    # Both M = 1 rows read iteration 1, and NKCVS flags exactly where the prediction differs from the given label.
    assert rows.loc["E-NKCVS (M=1)"].tolist() == rows.loc["cleanlab predicted_neq_given"].tolist()
    assert rows.loc["E-NKCVS (M=3, t=2)", "kept_precision"] == pytest.approx(
        select(probabilities=probabilities, labels=given, true_labels=true).kept_precision
    )
    assert (rows["kept"] + rows["flagged"] == 200).all()


def test_agreement_on_real_labels_counts_each_methods_flags_and_the_shared_top_k(planted):
    from cleanlab.rank import get_label_quality_scores

    from enkcvs.labelissues.confident import CLEANLAB_DEFAULT_FILTER, agreement_on_real_labels

    probabilities, given, _ = planted
    frame = agreement_on_real_labels(probabilities=probabilities, given=given, threshold=2, tops=(20, 100, 500))
    assert frame["set"].tolist() == ["flagged", "top 20", "top 100"]  # 500 > N = 200: left out
    ours = ~select(probabilities=probabilities, labels=given, threshold=2).selected
    mean = probabilities.mean(axis=0)
    theirs = cleanlab_flags(
        probabilities=mean / mean.sum(axis=1, keepdims=True), labels=given, method=CLEANLAB_DEFAULT_FILTER
    )
    assert frame.iloc[0, 1:].tolist() == [ours.sum(), theirs.sum(), (ours & theirs).sum()]
    ranked = select(probabilities=probabilities, labels=given, threshold=2).label_quality.argsort(kind="stable")
    cleanlab_ranked = get_label_quality_scores(labels=given, pred_probs=mean / mean.sum(axis=1, keepdims=True))
    cleanlab_ranked = cleanlab_ranked.argsort(kind="stable")
    for row, k in zip(frame.iloc[1:].itertuples(), (20, 100)):
        assert (row._2, row.cleanlab, row.both) == (k, k, len(set(ranked[:k]) & set(cleanlab_ranked[:k])))
    # planted errors are found by both: most of each top 20 is shared
    assert frame.loc[1, "both"] >= 15
