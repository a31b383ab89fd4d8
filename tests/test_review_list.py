"""The review list (enkcvs.method.review_list): the not-kept samples the ranking puts first, as many as confident
learning finds among them on the calibrated mean probabilities."""

import numpy as np
import pytest
from scipy.special import softmax

from enkcvs.labelissues.oof import select
from enkcvs.method.review_list import calibrated_probabilities, confident_learning_issues, review_list
from tests.test_oof import make_planted


def tempered(probabilities: np.ndarray, temperature: float) -> np.ndarray:
    """``probabilities`` made over- (T < 1) or underconfident (T > 1), each row's order of classes kept."""
    return softmax(np.log(probabilities) / temperature, axis=-1)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_list_is_near_the_planted_number_of_flips_and_inside_the_not_kept_set(seed):
    probabilities, given, true = make_planted(seed=seed)
    result = select(probabilities=probabilities, labels=given, true_labels=true)
    flips = (given != true).sum()
    assert abs(result.in_review_list.sum() - flips) <= 0.25 * flips
    assert not (result.in_review_list & result.selected).any()
    assert result.in_review_list.sum() < (~result.selected).sum()


@pytest.mark.parametrize("temperature", [np.exp(-1.2), np.exp(1.1)])  # on the grid log T is rounded to
def test_calibration_undoes_over_and_underconfidence(temperature):
    probabilities, given, _ = make_planted(seed=4)
    mean = probabilities.mean(axis=0)
    calibrated = calibrated_probabilities(probabilities=mean, given=given)
    recalibrated = calibrated_probabilities(probabilities=tempered(mean, temperature), given=given)
    np.testing.assert_allclose(recalibrated, calibrated, atol=1e-6)
    np.testing.assert_array_equal(calibrated.argmax(axis=1), mean.argmax(axis=1))
    np.testing.assert_allclose(calibrated.sum(axis=1), 1.0)
    np.testing.assert_array_equal(
        confident_learning_issues(probabilities=tempered(mean, temperature), given=given),
        confident_learning_issues(probabilities=mean, given=given),
    )


def test_the_list_is_the_ranking_s_first_not_kept_samples_as_many_as_cleanlab_finds_among_them():
    from cleanlab.filter import find_label_issues

    probabilities, given, _ = make_planted(seed=5)
    mean = probabilities.mean(axis=0)
    not_kept = np.random.default_rng(0).random(len(given)) < 0.5
    score = np.random.default_rng(1).random(len(given))
    issues = find_label_issues(labels=given, pred_probs=calibrated_probabilities(probabilities=mean, given=given))
    listed = review_list(probabilities=mean, given=given, not_kept=not_kept, score=score)
    assert listed.sum() == (issues & not_kept).sum() > 0 and not (listed & ~not_kept).any()
    assert score[listed].max() < score[not_kept & ~listed].min()  # the lowest scores of the not kept


def test_ties_in_the_score_are_cut_by_sample_index_as_the_ranking():
    probabilities = np.array([[0.9, 0.1], [0.2, 0.8], [0.1, 0.9], [0.3, 0.7], [0.8, 0.2], [0.4, 0.6]])
    given = np.array([0, 0, 0, 0, 1, 1])
    count = confident_learning_issues(probabilities=probabilities, given=given).sum()
    assert count > 0
    score = np.full(6, 0.5)
    listed = review_list(probabilities=probabilities, given=given, not_kept=np.ones(6, bool), score=score)
    np.testing.assert_array_equal(np.flatnonzero(listed), np.arange(count))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_on_planted_flips_the_review_list_is_more_precise_than_the_plain_flag(seed):
    probabilities, given, true = make_planted(seed=seed)
    result = select(probabilities=probabilities, labels=given, true_labels=true)
    wrong = given != true
    flag_precision = wrong[~result.selected].mean()
    assert result.review_precision == pytest.approx(wrong[result.in_review_list].mean())
    assert result.review_recall == pytest.approx(wrong[result.in_review_list].sum() / wrong.sum())
    assert result.review_precision > flag_precision + 0.05


def test_scores_are_named_for_the_set_they_measure():
    probabilities, given, true = make_planted(seed=4)
    result = select(probabilities=probabilities, labels=given, true_labels=true)
    clean, kept = given == true, result.selected
    assert result.kept_precision == pytest.approx(clean[kept].mean())
    assert result.kept_recall == pytest.approx(kept[clean].mean())
    assert not hasattr(result, "precision") and not hasattr(result, "recall")
    unscored = select(probabilities=probabilities, labels=given)
    assert unscored.kept_precision is None and unscored.review_precision is None


def test_with_one_labelled_class_the_count_is_the_not_kept_samples_predicted_otherwise():
    probabilities = np.array([[0.2, 0.8], [0.9, 0.1], [0.4, 0.6]])
    listed = review_list(
        probabilities=probabilities,
        given=np.array([0, 0, 0]),
        not_kept=np.array([True, True, False]),
        score=probabilities[:, 0],
    )
    np.testing.assert_array_equal(listed, [True, False, False])
