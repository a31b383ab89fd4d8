"""Selection (Algorithm 1, lines 10-11), E-NKCVS voting (Eq. contains) and the outcome of the votes (Algorithm 2)."""

import numpy as np
import pytest

from enkcvs.method.selection import ensemble_outcome, ensemble_selection, selected_in_iteration, selection_votes

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


def test_ensemble_outcome_hand_checked():
    """Votes and SS as above; the majority label, its entropy and beta = H(P) / log Q from the 3 predictions."""
    mean_probabilities = np.full((5, 3), 1 / 3)
    outcome = ensemble_outcome(predicted=PREDICTED, mean_probabilities=mean_probabilities, given=GIVEN, threshold=2)
    assert list(outcome) == [
        "votes",
        "selected",
        "pseudo",
        "predicted",
        "entropy",
        "beta",
        "prob_given",
        "label_quality",
        "in_review_list",
    ]
    np.testing.assert_array_equal(outcome["votes"], VOTES)
    np.testing.assert_array_equal(outcome["selected"], VOTES >= 2)
    np.testing.assert_array_equal(outcome["pseudo"], [0, 1, 1, 1, 2])
    split = -(2 / 3 * np.log(2 / 3) + 1 / 3 * np.log(1 / 3))  # two predictions agree, one differs
    np.testing.assert_allclose(outcome["entropy"], [0.0, split, split, split, split])
    np.testing.assert_allclose(outcome["beta"], outcome["entropy"] / np.log(3))
    np.testing.assert_allclose(outcome["prob_given"], 1 / 3)
