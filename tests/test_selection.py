"""Selection (Algorithm 1, lines 10-11), E-NKCVS voting (Eq. contains), the outcome of the votes (Algorithm 2) and
assembling an iteration's folds."""

import numpy as np
import pandas as pd
import pytest

from enkcvs.selection import (
    assemble_iteration,
    ensemble_outcome,
    ensemble_selection,
    selected_in_iteration,
    selection_votes,
)

# Hand-checked: M = 3 iterations, N = 5 samples.
GIVEN = np.array([0, 1, 2, 1, 0])
PREDICTED = np.array(
    [
        [0, 1, 0, 1, 2],
        [0, 2, 1, 1, 0],
        [0, 1, 1, 0, 2],
    ]
)
VOTES = np.array([3, 2, 0, 2, 1])


def test_selected_in_iteration_hand_checked():
    expected = np.array(
        [
            [True, True, False, True, False],
            [True, False, False, True, True],
            [True, True, False, False, False],
        ]
    )
    np.testing.assert_array_equal(selected_in_iteration(predicted=PREDICTED, given=GIVEN), expected)
    # One iteration, 1-D input: NKCVS's T_i directly.
    np.testing.assert_array_equal(selected_in_iteration(predicted=PREDICTED[0], given=GIVEN), expected[0])


def test_selection_votes_hand_checked():
    votes = selection_votes(predicted=PREDICTED, given=GIVEN)
    np.testing.assert_array_equal(votes, VOTES)
    assert votes.shape == (5,)


@pytest.mark.parametrize(
    ("threshold", "expected"),
    [
        (0, [True, True, True, True, True]),
        (1, [True, True, False, True, True]),
        (2, [True, True, False, True, False]),
        (3, [True, False, False, False, False]),
        (4, [False, False, False, False, False]),
    ],
)
def test_ensemble_selection_keeps_at_least_t_votes(threshold, expected):
    np.testing.assert_array_equal(ensemble_selection(votes=VOTES, threshold=threshold), expected)


def test_selection_shrinks_as_t_grows():
    """Eq. contains: SS(t+1) is a subset of SS(t)."""
    rng = np.random.default_rng(0)
    votes = selection_votes(predicted=rng.integers(0, 3, (5, 200)), given=rng.integers(0, 3, 200))
    for t in range(1, 5):
        larger, smaller = ensemble_selection(votes=votes, threshold=t), ensemble_selection(votes=votes, threshold=t + 1)
        assert np.all(larger | ~smaller) and smaller.sum() <= larger.sum()


def test_m_equals_t_equals_one_is_nkcvs():
    """E-NKCVS with M = t = 1 is NKCVS: select exactly where the prediction equals the given label."""
    votes = selection_votes(predicted=PREDICTED[:1], given=GIVEN)
    np.testing.assert_array_equal(ensemble_selection(votes=votes, threshold=1), PREDICTED[0] == GIVEN)


def test_assemble_iteration_returns_sorted_complete_rows(make_prediction_folds):
    folds = make_prediction_folds(seed=0, num_samples=23, num_folds=4, num_classes=3)
    assembled = assemble_iteration(folds, num_samples=23, num_classes=3)
    np.testing.assert_array_equal(assembled["sample"], np.arange(23))
    assert list(assembled.index) == list(range(23))
    # Rows travel whole: each sample keeps its own given, predicted and probabilities.
    original = pd.concat(folds).set_index("sample").sort_index()
    pd.testing.assert_frame_equal(assembled.set_index("sample"), original, check_like=True)


def test_assemble_iteration_raises_on_missing_sample(make_prediction_folds):
    folds = make_prediction_folds(seed=1, num_samples=20, num_folds=4, num_classes=3)
    folds[2] = folds[2].iloc[1:]
    with pytest.raises(ValueError, match="1 missing, 0 repeated"):
        assemble_iteration(folds, num_samples=20, num_classes=3)


def test_assemble_iteration_raises_on_duplicated_sample(make_prediction_folds):
    folds = make_prediction_folds(seed=2, num_samples=20, num_folds=4, num_classes=3)
    folds[3] = pd.concat([folds[3], folds[0].iloc[:1]])
    with pytest.raises(ValueError, match="0 missing, 1 repeated"):
        assemble_iteration(folds, num_samples=20, num_classes=3)


def test_assemble_iteration_raises_on_a_fold_given_twice(make_prediction_folds):
    """A fold file listed twice (and another forgotten) must not pass as complete."""
    folds = make_prediction_folds(seed=3, num_samples=20, num_folds=4, num_classes=3)
    folds[1] = folds[0]
    with pytest.raises(ValueError, match="exactly once"):
        assemble_iteration(folds, num_samples=20, num_classes=3)


def test_assemble_iteration_raises_on_out_of_range_sample(make_prediction_folds):
    folds = make_prediction_folds(seed=4, num_samples=20, num_folds=4, num_classes=3)
    folds[0].loc[folds[0].index[0], "sample"] = 20
    with pytest.raises(ValueError, match="1 out of range"):
        assemble_iteration(folds, num_samples=20, num_classes=3)


def test_assemble_iteration_raises_on_missing_prob_columns(make_prediction_folds):
    folds = make_prediction_folds(seed=5, num_samples=20, num_folds=4, num_classes=3)
    folds = [fold.drop(columns="prob_2") for fold in folds]
    with pytest.raises(ValueError, match=r"lack columns \['prob_2'\]"):
        assemble_iteration(folds, num_samples=20, num_classes=3)


def test_assemble_iteration_raises_when_q_is_larger_than_the_tables(make_prediction_folds):
    """Tables of Q = 3 read as Q = 4 lack prob_3: a Q mismatch is an error, not a silent truncation."""
    folds = make_prediction_folds(seed=6, num_samples=20, num_folds=4, num_classes=3)
    with pytest.raises(ValueError, match="prob_3"):
        assemble_iteration(folds, num_samples=20, num_classes=4)


def test_ensemble_outcome_hand_checked():
    """Votes and SS as above; the majority label, its entropy and beta = H(P) / log Q from the 3 predictions."""
    mean_probabilities = np.full((5, 3), 1 / 3)
    outcome = ensemble_outcome(predicted=PREDICTED, mean_probabilities=mean_probabilities, given=GIVEN, threshold=2)
    assert list(outcome) == ["votes", "selected", "pseudo", "entropy", "beta", "prob_given", "label_quality"]
    np.testing.assert_array_equal(outcome["votes"], VOTES)
    np.testing.assert_array_equal(outcome["selected"], VOTES >= 2)
    np.testing.assert_array_equal(outcome["pseudo"], [0, 1, 1, 1, 2])
    split = -(2 / 3 * np.log(2 / 3) + 1 / 3 * np.log(1 / 3))  # two predictions agree, one differs
    np.testing.assert_allclose(outcome["entropy"], [0.0, split, split, split, split])
    np.testing.assert_allclose(outcome["beta"], outcome["entropy"] / np.log(3))
    np.testing.assert_allclose(outcome["prob_given"], 1 / 3)
