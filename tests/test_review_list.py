"""The review list (enkcvs.method.review_list): confident learning's count of label errors, and the list it cuts from
the label-quality ranking, beside the paper's kept set."""

import numpy as np
import pytest

from enkcvs.labelissues.oof import select
from enkcvs.method.ranking import issue_ranks
from enkcvs.method.review_list import estimated_error_count, review_list
from tests.test_oof import make_planted


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_count_is_near_the_planted_number_of_flips(seed):
    probabilities, given, true = make_planted(seed=seed)
    estimate = estimated_error_count(probabilities=probabilities.mean(axis=0), given=given)
    assert abs(estimate - (given != true).sum()) <= 0.25 * (given != true).sum()


def test_the_review_list_is_the_prefix_of_the_ranking_as_long_as_the_estimate():
    probabilities, given, true = make_planted(seed=3)
    result = select(probabilities=probabilities, labels=given, true_labels=true)
    estimate = estimated_error_count(probabilities=probabilities.mean(axis=0), given=given)
    assert result.in_review_list.sum() == estimate > 0
    np.testing.assert_array_equal(result.in_review_list, result.rank <= estimate)
    frame = result.to_frame()
    assert frame["in_review_list"].head(estimate).all() and not frame["in_review_list"].iloc[estimate:].any()
    assert frame["kept"].equals(frame["votes"] >= result.threshold)


def test_ties_in_label_quality_are_cut_by_sample_index_as_the_ranking():
    quality = np.array([0.2, 0.1, 0.2, 0.2, 0.9])
    np.testing.assert_array_equal(review_list(label_quality=quality, size=3), [True, True, True, False, False])
    np.testing.assert_array_equal(review_list(label_quality=quality, size=3), issue_ranks(label_quality=quality) <= 3)
    assert not review_list(label_quality=quality, size=0).any()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_on_planted_flips_the_review_list_is_more_precise_than_the_plain_flag(seed):
    probabilities, given, true = make_planted(seed=seed)
    result = select(probabilities=probabilities, labels=given, true_labels=true)
    wrong = given != true
    flag_precision = wrong[~result.selected].mean()
    assert result.review_precision == pytest.approx(wrong[result.in_review_list].mean())
    assert result.review_recall == pytest.approx(wrong[result.in_review_list].sum() / wrong.sum())
    assert result.review_precision > flag_precision + 0.05
    assert result.in_review_list.sum() < (~result.selected).sum()


def test_scores_are_named_for_the_set_they_measure():
    probabilities, given, true = make_planted(seed=4)
    result = select(probabilities=probabilities, labels=given, true_labels=true)
    clean, kept = given == true, result.selected
    assert result.kept_precision == pytest.approx(clean[kept].mean())
    assert result.kept_recall == pytest.approx(kept[clean].mean())
    assert not hasattr(result, "precision") and not hasattr(result, "recall")
    unscored = select(probabilities=probabilities, labels=given)
    assert unscored.kept_precision is None and unscored.review_precision is None


def test_with_one_labelled_class_the_count_is_the_samples_predicted_otherwise():
    probabilities = np.array([[0.2, 0.8], [0.9, 0.1], [0.4, 0.6]])
    assert estimated_error_count(probabilities=probabilities, given=np.array([0, 0, 0])) == 2
