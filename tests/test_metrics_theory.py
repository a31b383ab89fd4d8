"""Precision/recall of the selected set (Eq. prec-rec), confusion matrices, and Theorem 1 / Corollary 1."""

import math

import numpy as np
import pytest
from scipy.stats import binom

from enkcvs.method.metrics import (
    accuracy,
    class_prior,
    confusion_matrix,
    precision_by_given_class,
    precision_recall,
    pseudo_label_accuracy,
    selection_set_sizes,
)
from enkcvs.method.noise import symmetric_transition_matrix
from enkcvs.method.theory import (
    corollary_precision_recall,
    iteration_dependence,
    selection_probability,
    theorem1_precision_recall,
)


def test_selection_set_sizes_and_precision_recall_hand_checked():
    # clean = given == true: samples 0, 1, 3, 5 (|CS| = 4); selected: 0, 1, 2 (|SS| = 3); clean selected: 0, 1.
    given = np.array([0, 1, 2, 0, 1, 2])
    true = np.array([0, 1, 1, 0, 2, 2])
    selected = np.array([True, True, True, False, False, False])
    sizes = selection_set_sizes(selected=selected, given=given, true=true)
    assert sizes == {"CS": 4, "SS": 3, "CSS": 2}
    scores = precision_recall(sizes=sizes)
    assert scores["precision"] == pytest.approx(2 / 3)
    assert scores["recall"] == pytest.approx(2 / 4)


@pytest.mark.parametrize(
    ("sizes", "nan_key"), [({"CS": 4, "SS": 0, "CSS": 0}, "precision"), ({"CS": 0, "SS": 3, "CSS": 0}, "recall")]
)
def test_precision_recall_nan_on_empty_denominator(sizes, nan_key):
    scores = precision_recall(sizes=sizes)
    assert math.isnan(scores[nan_key])
    assert not math.isnan(scores[{"precision": "recall", "recall": "precision"}[nan_key]])


def test_confusion_matrix_hand_checked_and_rows_sum_to_one():
    true = np.array([0, 0, 0, 0, 1, 1, 3])
    predicted = np.array([0, 0, 1, 3, 1, 0, 3])
    matrix = confusion_matrix(true=true, predicted=predicted, num_classes=4)
    np.testing.assert_allclose(matrix, [[0.5, 0.25, 0, 0.25], [0.5, 0.5, 0, 0], [0, 0, 0, 0], [0, 0, 0, 1]])
    present = np.bincount(true, minlength=4) > 0
    np.testing.assert_allclose(matrix.sum(axis=1)[present], 1.0)
    np.testing.assert_array_equal(matrix[~present], 0.0)  # absent class 2: zero row, no NaN


def test_confusion_matrix_over_stacked_iterations():
    """(M, N) predictions with the true labels tiled M times, as select_samples builds it."""
    rng = np.random.default_rng(0)
    true = rng.integers(0, 3, 40)
    predicted = rng.integers(0, 3, (4, 40))
    matrix = confusion_matrix(true=np.tile(true, 4), predicted=predicted, num_classes=3)
    np.testing.assert_allclose(matrix.sum(axis=1), 1.0)
    expected = np.mean([confusion_matrix(true=true, predicted=row, num_classes=3) for row in predicted], axis=0)
    np.testing.assert_allclose(matrix, expected, atol=0.15)  # pooled vs averaged rates; same ballpark
    assert matrix[1, 2] == pytest.approx(np.sum(predicted[:, true == 1] == 2) / (4 * np.sum(true == 1)))


def test_class_prior_and_accuracy():
    true = np.array([0, 2, 2, 1, 2])
    np.testing.assert_allclose(class_prior(true=true, num_classes=4), [0.2, 0.2, 0.6, 0.0])
    assert accuracy(true=true, predicted=np.array([0, 2, 1, 1, 0])) == pytest.approx(0.6)


@pytest.mark.parametrize("iterations", [1, 2, 5, 10])
def test_selection_probability_is_binomial_tail(iterations):
    c = np.linspace(0.0, 1.0, 11)
    for threshold in range(1, iterations + 1):
        np.testing.assert_allclose(
            selection_probability(c, iterations=iterations, threshold=threshold),
            binom.sf(threshold - 1, iterations, c),
            atol=1e-12,
        )


def test_selection_probability_keeps_shape():
    c = np.random.default_rng(0).uniform(size=(3, 3))
    assert selection_probability(c, iterations=5, threshold=2).shape == (3, 3)


def _symmetric_confusion(q, num_classes):
    """C_ii = q, C_ij = (1 - q)/(Q - 1): the symmetric classifier of Corollary 1."""
    return symmetric_transition_matrix(rate=1.0 - q, num_classes=num_classes)


@pytest.mark.parametrize("num_classes", [2, 3, 10])
@pytest.mark.parametrize("q", [0.3, 0.7, 0.95])
@pytest.mark.parametrize("eps", [0.0, 0.2, 0.5, 0.8])
def test_theorem1_with_m_t_one_reduces_to_corollary(eps, q, num_classes):
    prior = np.random.default_rng(num_classes).dirichlet(np.ones(num_classes))  # any prior: T and C are symmetric
    theory = theorem1_precision_recall(
        prior=prior,
        transition=symmetric_transition_matrix(rate=eps, num_classes=num_classes),
        confusion=_symmetric_confusion(q, num_classes),
        iterations=1,
        threshold=1,
    )
    corollary = corollary_precision_recall(rate=eps, accuracy=q, num_classes=num_classes)
    assert theory["precision"] == pytest.approx(corollary["precision"], rel=1e-12)
    assert theory["recall"] == pytest.approx(corollary["recall"], rel=1e-12)


def test_corollary_hand_checked():
    # eps = 0.2, q = 0.9, Q = 10: 0.72 / (0.72 + 0.2 * 0.1 / 9).
    scores = corollary_precision_recall(rate=0.2, accuracy=0.9, num_classes=10)
    assert scores["precision"] == pytest.approx(0.72 / (0.72 + 0.02 / 9))
    assert scores["recall"] == 0.9


def test_theorem1_recall_is_q_for_m_t_one_with_any_noise():
    """Recall = sum p_i T_ii C_ii / sum p_i T_ii = q whenever every C_ii = q, whatever T (here random)."""
    rng = np.random.default_rng(1)
    transition = rng.dirichlet(np.ones(5), size=5)
    theory = theorem1_precision_recall(
        prior=rng.dirichlet(np.ones(5)),
        transition=transition,
        confusion=_symmetric_confusion(0.65, 5),
        iterations=1,
        threshold=1,
    )
    assert theory["recall"] == pytest.approx(0.65)


def test_theorem1_precision_rises_and_recall_falls_with_t():
    """With a better-than-chance classifier (q > (1 - q)/(Q - 1)), voting harder trades recall for precision."""
    scores = [
        theorem1_precision_recall(
            prior=np.full(10, 0.1),
            transition=symmetric_transition_matrix(rate=0.4, num_classes=10),
            confusion=_symmetric_confusion(0.8, 10),
            iterations=5,
            threshold=t,
        )
        for t in range(1, 6)
    ]
    precision = [s["precision"] for s in scores]
    recall = [s["recall"] for s in scores]
    assert np.all(np.diff(precision) > 0)
    assert np.all(np.diff(recall) < 0)


def test_theorem1_matches_simulation_of_its_assumptions():
    """Draw y* ~ p, y ~ T[y*], M independent predictions ~ C[y*]; select with >= t hits of y. The measured precision
    and recall must match the formula (its assumptions hold exactly here), up to sampling error."""
    rng = np.random.default_rng(2)
    num_classes, n, iterations, threshold = 4, 40_000, 5, 2
    prior = np.array([0.1, 0.2, 0.3, 0.4])
    transition = np.array([[0.6, 0.4, 0.0, 0.0], [0.0, 0.8, 0.2, 0.0], [0.1, 0.1, 0.7, 0.1], [0.0, 0.0, 0.0, 1.0]])
    confusion = rng.dirichlet(np.ones(num_classes), size=num_classes) * 0.5 + np.eye(num_classes) * 0.5

    def draw(rows):  # one categorical draw per row of probabilities
        return (rng.uniform(size=(len(rows), 1)) > rows.cumsum(axis=1)).sum(axis=1)

    true = draw(np.broadcast_to(prior, (n, num_classes)))
    given = draw(transition[true])
    predicted = np.stack([draw(confusion[true]) for _ in range(iterations)])
    selected = (predicted == given).sum(axis=0) >= threshold
    measured = precision_recall(sizes=selection_set_sizes(selected=selected, given=given, true=true))
    theory = theorem1_precision_recall(
        prior=prior, transition=transition, confusion=confusion, iterations=iterations, threshold=threshold
    )
    assert measured["precision"] == pytest.approx(theory["precision"], abs=0.015)
    assert measured["recall"] == pytest.approx(theory["recall"], abs=0.015)


def test_pseudo_label_accuracy_splits_repaired_and_kept_labels():
    true = np.array([0, 1, 2, 3, 0, 1])
    given = np.array([1, 1, 0, 3, 2, 1])  # wrong at 0, 2, 4
    pseudo = np.array([0, 2, 2, 3, 1, 1])  # repairs 0 and 2, not 4; keeps 3 and 5, breaks 1
    scores = pseudo_label_accuracy(pseudo=pseudo, given=given, true=true)
    assert scores == {
        "samples": 6,
        "noisy": 3,
        "all": pytest.approx(4 / 6),
        "on_noisy": pytest.approx(2 / 3),
        "on_clean": pytest.approx(2 / 3),
    }
    empty = pseudo_label_accuracy(pseudo=pseudo[:0], given=given[:0], true=true[:0])
    assert empty["samples"] == 0 and math.isnan(empty["all"]) and math.isnan(empty["on_noisy"])


def test_iteration_dependence_tells_independent_from_repeated_mistakes():
    rng = np.random.default_rng(3)
    true = rng.integers(0, 3, 20000)
    wrong = (true + rng.integers(1, 3, (3, 20000))) % 3

    def predictions(mistakes):  # (3, N): an iteration errs where ``mistakes`` is True
        return np.where(mistakes, wrong, true)

    independent = iteration_dependence(true=true, predicted=predictions(rng.random((3, 20000)) < 0.2), num_classes=3)
    assert independent["all_wrong"] == pytest.approx(0.2**3, abs=0.003)
    assert independent["all_wrong_independent"] == pytest.approx(0.2**3, abs=0.003)
    assert independent["agreement"] == pytest.approx(independent["agreement_independent"], abs=0.01)
    repeated = iteration_dependence(
        true=true, predicted=predictions(np.tile(rng.random(20000) < 0.2, (3, 1))), num_classes=3
    )  # the same 20 % are missed by every iteration
    assert repeated["all_wrong"] == pytest.approx(0.2, abs=0.01)
    assert repeated["all_wrong_independent"] == pytest.approx(0.2**3, abs=0.003)
    with pytest.raises(ValueError, match="M >= 2"):
        iteration_dependence(true=true, predicted=predictions(rng.random((3, 20000)) < 0.2)[:1], num_classes=3)


def test_precision_by_given_class_finds_where_wrong_labels_sit():
    given = np.array([7, 7, 7, 7, 1, 1, 2])
    true = np.array([7, 7, 2, 2, 1, 1, 2])
    selected = np.array([True, True, True, False, True, True, False])
    # given 7: 3 selected, one of them a true 2; given 1: both right; given 2: nothing selected, so no entry
    assert precision_by_given_class(selected=selected, given=given, true=true) == {"1": 1.0, "7": pytest.approx(2 / 3)}
