"""Ranking label issues (enkcvs.method.ranking): the label-quality score, its ranks, and how a ranking is measured."""

import numpy as np
import pytest
from cleanlab.rank import get_label_quality_scores
from test_oof import make_planted

from enkcvs.labelissues.confident import CLEANLAB_SCORES, compare_rankings
from enkcvs.labelissues.oof import select
from enkcvs.method.ranking import issue_ranks, label_quality, logit_margin, ranking_quality


def test_rival_is_the_pseudo_label_not_the_most_probable_class():
    # M = 3 predictions 1, 1, 2 of a sample labelled 0: the majority (pseudo label) is 1 although class 2 has the
    # highest mean probability; the score measures the given label against the label E-NKCVS suggests.
    stack = np.array([[[0.2, 0.5, 0.3]], [[0.2, 0.45, 0.35]], [[0.0, 0.1, 0.9]]])
    result = select(probabilities=stack, labels=[0], threshold=2, score="label_quality")
    assert result.pseudo_labels.tolist() == [1]
    mean = stack.mean(axis=0)
    assert result.label_quality == pytest.approx([(1 + mean[0, 0] - mean[0, 1]) / 2])
    # A selected sample's rival is the most probable other class.
    assert label_quality(mean_probabilities=mean, given=np.array([2]), pseudo=np.array([2])) == pytest.approx(
        [(1 + mean[0, 2] - mean[0, 1]) / 2]
    )


def test_the_default_score_is_the_logit_margin_of_the_mean_and_self_confidence_is_cleanlabs():
    probabilities, given, _ = make_planted(seed=4, iterations=3)
    mean = probabilities.mean(axis=0)
    ours = select(probabilities=probabilities, labels=given).label_quality
    np.testing.assert_allclose(ours, logit_margin(mean_probabilities=mean, given=given), atol=1e-12)
    confidence = select(probabilities=probabilities, labels=given, score="self_confidence").label_quality
    theirs = get_label_quality_scores(labels=given, pred_probs=mean, method="self_confidence")
    np.testing.assert_allclose(confidence, theirs, atol=1e-12)


def test_the_logit_margin_is_the_margin_of_the_logits_behind_softmax_probabilities():
    logits = np.random.default_rng(3).normal(scale=4.0, size=(50, 5))  # (N, Q)
    given = np.arange(50) % 5
    probabilities = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    others = np.where(np.arange(5) == given[:, None], -np.inf, logits)
    expected = logits[np.arange(50), given] - others.max(axis=1)
    np.testing.assert_allclose(logit_margin(mean_probabilities=probabilities, given=given), expected, atol=1e-9)


def test_the_logit_margin_orders_tiny_probabilities_and_zeros_by_their_rival():
    # A tiny probability of the given label keeps its order (self-confidence's); where it is 0 (a rounded file), the
    # more probable the rival, the lower the score (the normalized margin's); all without ties.
    probabilities = np.array([[1e-30, 1.0, 0.0], [1e-20, 1.0, 0.0], [0.0, 0.6, 0.4], [0.0, 0.9, 0.1]])
    given = np.zeros(4, dtype=int)
    score = logit_margin(mean_probabilities=probabilities, given=given)
    assert np.isfinite(score).all() and issue_ranks(label_quality=score).tolist() == [3, 4, 2, 1]
    confidence = get_label_quality_scores(labels=given, pred_probs=probabilities, method="self_confidence")
    assert confidence[2] == confidence[3]  # the tie the logit margin breaks


def test_m1_order_is_cleanlabs_normalized_margin():
    probabilities, given, _ = make_planted(seed=4, iterations=1)
    ours = select(probabilities=probabilities[0], labels=given, score="label_quality").label_quality
    theirs = get_label_quality_scores(labels=given, pred_probs=probabilities[0], method="normalized_margin")
    np.testing.assert_allclose(ours, theirs, atol=1e-12)
    np.testing.assert_array_equal(issue_ranks(label_quality=ours), issue_ranks(label_quality=theirs))


def test_planted_errors_come_first_and_more_iterations_rank_better():
    probabilities, given, true = make_planted(seed=5, iterations=5)
    planted = given != true
    single = ranking_quality(
        label_quality=select(probabilities=probabilities[0], labels=given).label_quality, is_error=planted
    )
    ensemble = ranking_quality(
        label_quality=select(probabilities=probabilities, labels=given).label_quality, is_error=planted
    )
    assert ensemble["precision_at_errors"] > 0.85 and ensemble["auprc"] > 0.9
    assert ensemble["auprc"] > single["auprc"] and ensemble["precision_at_errors"] > single["precision_at_errors"]


def test_ranking_quality_by_hand():
    # Lowest score first: rows 3, 0, 2, 1, 4; errors are rows 0 and 1.
    scores = ranking_quality(
        label_quality=np.array([0.2, 0.7, 0.4, 0.1, 0.9]),
        is_error=np.array([True, True, False, False, False]),
        top=(1, 2, 9),
    )
    assert scores["errors"] == 2
    assert (scores["precision_at_1"], scores["precision_at_2"], scores["precision_at_errors"]) == (0.0, 0.5, 0.5)
    assert np.isnan(scores["precision_at_9"])  # fewer rows than k
    assert scores["auroc"] == pytest.approx(3 / 6)  # of the 6 (error, clean) pairs, the error scores lower in 3
    assert scores["auprc"] == pytest.approx((1 / 2 + 2 / 4) / 2)  # precision where each error is reached
    assert issue_ranks(label_quality=np.array([0.5, 0.1, 0.5])).tolist() == [2, 1, 3]  # ties by index


def test_compare_rankings_rows_and_m1_parity():
    probabilities, given, true = make_planted(seed=6, num_samples=300, iterations=1)
    frame = compare_rankings(probabilities=probabilities[0], given=given, true=true).set_index("method")
    assert list(frame.index) == [
        "E-NKCVS label quality",
        "E-NKCVS votes, then P(given)",
        *(f"cleanlab {m}" for m in CLEANLAB_SCORES),
    ]
    assert (frame["errors"] == (given != true).sum()).all()
    ours, theirs = frame.loc["E-NKCVS label quality"], frame.loc["cleanlab normalized_margin"]
    assert ours.to_dict() == pytest.approx(theirs.to_dict())
