"""Pseudo labels, entropy weights beta, soft targets and the final loss's per-sample weights (Section 3.2)."""

from itertools import combinations

import numpy as np
import pytest

from enkcvs.method.weights import (
    entropy_weight,
    full_loss_sample_weights,
    label_entropy,
    predicted_label_distribution,
    pseudo_labels,
    reweighted_targets,
)


def _beta(predicted, num_classes):
    distribution = predicted_label_distribution(predicted=np.asarray(predicted), num_classes=num_classes)
    return entropy_weight(entropy=label_entropy(distribution), num_classes=num_classes)


def test_hand_checked_entropy_and_beta():
    """M = 5 predictions [a, a, a, b, c], Q = 10: P = (0.6, 0.2, 0.2), H = 0.9503 nats, beta = H / ln 10 = 0.4127."""
    predicted = np.array([[3], [3], [3], [7], [0]])  # (M, N) = (5, 1): a = 3, b = 7, c = 0
    distribution = predicted_label_distribution(predicted=predicted, num_classes=10)
    expected = np.zeros(10)
    expected[[3, 7, 0]] = [0.6, 0.2, 0.2]
    np.testing.assert_allclose(distribution[0], expected)
    entropy = label_entropy(distribution)
    assert entropy[0] == pytest.approx(0.9503, abs=5e-5)
    assert entropy_weight(entropy=entropy, num_classes=10)[0] == pytest.approx(0.4127, abs=5e-5)


def test_distribution_rows_are_per_sample():
    """Columns of ``predicted`` are samples: each sample's row counts its own M labels only."""
    predicted = np.array([[0, 1, 2], [0, 1, 1], [1, 1, 0], [0, 1, 2]])
    distribution = predicted_label_distribution(predicted=predicted, num_classes=3)
    np.testing.assert_allclose(distribution, [[0.75, 0.25, 0.0], [0.0, 1.0, 0.0], [0.25, 0.25, 0.5]])


def test_all_agree_gives_beta_zero():
    assert _beta([[4, 1]] * 5, num_classes=6) == pytest.approx([0.0, 0.0])


@pytest.mark.parametrize(("num_iterations", "num_classes"), [(5, 10), (10, 3), (3, 100)])
def test_beta_bounded_by_log_m_over_log_q(num_iterations, num_classes):
    """beta in [0, 1] and beta <= log M / log Q (docs/paper-notes.md): M labels cannot spread over more than M classes."""
    predicted = np.random.default_rng(0).integers(0, num_classes, (num_iterations, 300))
    beta = _beta(predicted, num_classes)
    assert np.all(beta >= 0) and np.all(beta <= 1 + 1e-12)
    assert np.all(beta <= np.log(num_iterations) / np.log(num_classes) + 1e-12)


def test_pseudo_label_is_majority_even_against_mean_probability():
    predicted = np.array([[2], [2], [2], [0], [1]])
    distribution = predicted_label_distribution(predicted=predicted, num_classes=3)
    mean_probabilities = np.array([[0.5, 0.4, 0.1]])  # favours 0, but 2 has the votes
    np.testing.assert_array_equal(pseudo_labels(distribution=distribution, mean_probabilities=mean_probabilities), [2])


@pytest.mark.parametrize(("mean_probabilities", "expected"), [([0.2, 0.3, 0.5], 1), ([0.35, 0.3, 0.35], 0)])
def test_pseudo_label_tie_broken_by_highest_mean_probability_among_tied(mean_probabilities, expected):
    """Classes 0 and 1 tie with two votes each; class 2 (one vote) never wins even with the highest probability."""
    predicted = np.array([[0], [0], [1], [1], [2]])
    distribution = predicted_label_distribution(predicted=predicted, num_classes=3)
    pseudo = pseudo_labels(distribution=distribution, mean_probabilities=np.array([mean_probabilities]))
    np.testing.assert_array_equal(pseudo, [expected])
    assert pseudo.dtype == np.int64


def _targets_case(seed=0, n=12, num_classes=4):
    rng = np.random.default_rng(seed)
    return dict(
        given=rng.integers(0, num_classes, n),
        pseudo=rng.integers(0, num_classes, n),
        beta=rng.uniform(0, 1, n),
        selected=rng.uniform(size=n) < 0.5,
        num_classes=num_classes,
    )


def test_reweighted_targets_rows_sum_to_one_and_selected_are_one_hot():
    case = _targets_case()
    targets = reweighted_targets(**case)
    assert targets.shape == (12, 4) and targets.dtype == np.float32
    np.testing.assert_allclose(targets.sum(axis=1), 1.0, rtol=1e-6)
    np.testing.assert_array_equal(targets[case["selected"]], np.eye(4)[case["given"][case["selected"]]])


def test_reweighted_targets_give_the_mixed_cross_entropy():
    """CE(x, target) = beta CE(x, y) + (1 - beta) CE(x, y_hat) for non-selected samples (CE is linear in the target)."""
    case = _targets_case(seed=1)
    targets = reweighted_targets(**case).astype(float)
    log_p = np.log(np.random.default_rng(2).dirichlet(np.ones(4), size=12))
    rows = np.arange(12)
    expected = -(case["beta"] * log_p[rows, case["given"]] + (1 - case["beta"]) * log_p[rows, case["pseudo"]])
    expected = np.where(case["selected"], -log_p[rows, case["given"]], expected)
    np.testing.assert_allclose(-(targets * log_p).sum(axis=1), expected, rtol=1e-6)


def test_reweighted_target_is_one_hot_when_pseudo_equals_given():
    targets = reweighted_targets(
        given=np.array([2]), pseudo=np.array([2]), beta=np.array([0.3]), selected=np.array([False]), num_classes=3
    )
    np.testing.assert_allclose(targets, [[0.0, 0.0, 1.0]])


def _full_loss(losses, selected, gamma):
    """Eq. full-loss by hand: mean over SS + gamma * mean over the rest (an empty set's term is 0)."""
    on = losses[selected].mean() if selected.any() else 0.0
    off = losses[~selected].mean() if (~selected).any() else 0.0
    return on + gamma * off


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("gamma", [0.2, 1.0])
def test_full_loss_weights_reproduce_eq_full_loss(seed, gamma):
    rng = np.random.default_rng(seed)
    losses = rng.exponential(size=50)
    selected = rng.uniform(size=50) < rng.uniform(0.1, 0.9)
    weights = full_loss_sample_weights(selected=selected, gamma=gamma)
    assert weights.shape == (50,) and weights.dtype == np.float32
    assert np.mean(weights * losses) == pytest.approx(_full_loss(losses, selected, gamma), rel=1e-6)


@pytest.mark.parametrize("batch_size", [1, 2, 3, 5])
def test_batch_mean_is_unbiased_over_all_minibatches(batch_size):
    """Averaging the batch mean of w_i L_i over every possible batch (exact enumeration) gives the full loss, for any
    batch composition, including batches with no selected or no non-selected sample."""
    rng = np.random.default_rng(7)
    losses = rng.exponential(size=7)
    selected = np.array([True, False, True, False, False, True, False])
    weights = full_loss_sample_weights(selected=selected, gamma=0.2).astype(float)
    batch_means = [np.mean(weights[list(b)] * losses[list(b)]) for b in combinations(range(7), batch_size)]
    assert np.mean(batch_means) == pytest.approx(_full_loss(losses, selected, 0.2), rel=1e-6)


@pytest.mark.parametrize("all_selected", [False, True])
def test_full_loss_weights_edge_cases(all_selected):
    """|SS| = 0: only gamma * mean L remains; |SS| = N: plain mean L. No division by zero, no NaN."""
    losses = np.random.default_rng(3).exponential(size=9)
    selected = np.full(9, all_selected)
    weights = full_loss_sample_weights(selected=selected, gamma=0.2)
    assert np.all(np.isfinite(weights))
    np.testing.assert_allclose(weights, 1.0 if all_selected else 0.2)
    assert np.mean(weights * losses) == pytest.approx(_full_loss(losses, selected, 0.2), rel=1e-6)
