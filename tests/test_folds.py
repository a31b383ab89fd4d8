"""K-fold assignment (Algorithm 1, line 2), the per-fold validation hold-out, and the derived seeds behind both."""

import numpy as np
import pytest

from enkcvs.method.folds import kfold_assignment, validation_split
from enkcvs.rng import Purpose, derive_seed, generator

SHAPES = [(10, 2), (10, 3), (7, 7), (50, 4), (101, 10)]


@pytest.mark.parametrize(("num_samples", "num_folds"), SHAPES)
def test_each_sample_in_exactly_one_fold_of_near_equal_size(num_samples, num_folds):
    folds = kfold_assignment(num_samples=num_samples, num_folds=num_folds, seed=0, iteration=1)
    assert folds.shape == (num_samples,) and folds.dtype == np.int64
    # One fold number per sample, all in 0..K-1: "exactly one fold" by construction of the array.
    assert folds.min() >= 0 and folds.max() < num_folds
    sizes = np.bincount(folds, minlength=num_folds)
    assert len(sizes) == num_folds and sizes.sum() == num_samples
    assert sizes.max() - sizes.min() <= 1
    assert sizes.min() >= 1  # every fold predicts something


def test_assignment_depends_only_on_seed_k_and_m():
    """Every fold job rebuilds the split alone, so the same (seed, K, m) must give the same split each call."""
    args = dict(num_samples=60, num_folds=5, seed=3, iteration=2)
    np.testing.assert_array_equal(kfold_assignment(**args), kfold_assignment(**args))


def test_assignment_differs_across_iterations_and_seeds():
    """Algorithm 2, line 3: a fresh split per iteration m; a different seed gives a different split."""
    base = kfold_assignment(num_samples=60, num_folds=5, seed=3, iteration=1)
    for other in (
        kfold_assignment(num_samples=60, num_folds=5, seed=3, iteration=2),
        kfold_assignment(num_samples=60, num_folds=5, seed=4, iteration=1),
    ):
        # Compare partitions, not fold numbers: relabelling the folds would not be a new split.
        same_fold = base[:, None] == base[None, :]
        assert not np.array_equal(same_fold, other[:, None] == other[None, :])


def test_iterations_are_not_a_relabelling_of_each_other():
    """Across m = 1..5 no two iterations produce the same partition (guards against a seed ignoring m)."""
    partitions = set()
    for m in range(1, 6):
        folds = kfold_assignment(num_samples=40, num_folds=4, seed=0, iteration=m)
        partitions.add(frozenset(frozenset(np.flatnonzero(folds == k)) for k in range(4)))
    assert len(partitions) == 5


@pytest.mark.parametrize(("num_samples", "num_folds"), [(10, 1), (10, 0), (10, -3), (5, 6)])
def test_invalid_number_of_folds_raises(num_samples, num_folds):
    with pytest.raises(ValueError, match=r"K = .* must lie in \[2, N"):
        kfold_assignment(num_samples=num_samples, num_folds=num_folds, seed=0, iteration=1)


@pytest.mark.parametrize(("n", "fraction"), [(100, 0.1), (37, 0.1), (20, 0.25), (9, 0.0), (5, 1.0)])
def test_validation_split_sizes_and_disjointness(n, fraction):
    # Non-contiguous, unsorted indices, as a fold's training part is.
    indices = np.random.default_rng(0).permutation(np.arange(0, 3 * n, 3))
    train, val = validation_split(indices, fraction=fraction, rng=np.random.default_rng(1))
    assert len(val) == round(fraction * n) and len(train) == n - len(val)
    assert np.intersect1d(train, val).size == 0
    np.testing.assert_array_equal(np.sort(np.concatenate([train, val])), np.sort(indices))
    assert np.all(np.diff(train) > 0) and np.all(np.diff(val) > 0)  # sorted, no repeats


def test_validation_split_is_seeded():
    indices = np.arange(50)
    first = validation_split(indices, fraction=0.2, rng=np.random.default_rng(5))
    again = validation_split(indices, fraction=0.2, rng=np.random.default_rng(5))
    other = validation_split(indices, fraction=0.2, rng=np.random.default_rng(6))
    np.testing.assert_array_equal(first[1], again[1])
    assert not np.array_equal(first[1], other[1])


def test_derived_seeds_are_deterministic_and_separate_streams():
    """Jobs rebuild their seeds alone; purposes and keys must not collide (noise vs folds vs init)."""
    assert derive_seed(1, Purpose.FOLDS, 10, 2) == derive_seed(1, Purpose.FOLDS, 10, 2)
    seeds = {derive_seed(1, purpose, *keys) for purpose in Purpose for keys in [(), (10,), (10, 1), (10, 2), (5, 1)]}
    assert len(seeds) == len(Purpose) * 5
    assert derive_seed(2, Purpose.NOISE) != derive_seed(1, Purpose.NOISE)
    assert 0 <= derive_seed(1, Purpose.INIT, 3) < 2**32
    np.testing.assert_array_equal(
        generator(1, Purpose.NOISE).integers(0, 1000, 5), generator(1, Purpose.NOISE).integers(0, 1000, 5)
    )
