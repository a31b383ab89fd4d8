"""The tests that order two results on the pages: Welch's t-test between two cells of seeds (two-sided, unequal
variances, from each cell's mean, std and seed count: :func:`scipy.stats.ttest_ind_from_stats`), and the paired
t-test where both scored the same seeds. Two results are ordered only where p < :data:`SIGNIFICANCE`; a cell of a
single seed is never ordered. Every function returns data (a side and a p-value); the templates phrase it."""

import math
from dataclasses import dataclass

from scipy.stats import t as student_t
from scipy.stats import ttest_ind_from_stats

#: The level below which a test orders two results.
SIGNIFICANCE = 0.05


@dataclass(frozen=True)
class Cell:
    """A result over seeds: mean, std (ddof=1; NaN for one seed) and how many seeds."""

    mean: float
    std: float
    runs: int


@dataclass(frozen=True)
class Verdict:
    """How ``ours`` stands against another cell: ``side`` is ``above``, ``below``, ``not distinguishable`` or
    ``untested`` (a cell of one seed, or without a std), with the gap (ours minus theirs) and the p-value (None
    where untested)."""

    side: str
    gap: float
    p: float | None


def welch_p(first: Cell, second: Cell) -> float:
    """Two-sided p-value of Welch's t-test between two cells of several seeds each; 0 where both stds are 0 and the
    means differ, 1 where they are equal."""
    if first.std == 0 == second.std:
        return 1.0 if first.mean == second.mean else 0.0
    return float(
        ttest_ind_from_stats(
            first.mean, first.std, first.runs, second.mean, second.std, second.runs, equal_var=False
        ).pvalue
    )


def paired_p(*, mean: float, std: float, seeds: int) -> float:
    """Two-sided p-value of the paired t-test over ``seeds`` paired differences of mean ``mean`` and std ``std``
    (ddof=1): the one-sample t-test of the differences against 0; 0 where every difference is the same non-zero one,
    1 where all are 0."""
    if std == 0:
        return 1.0 if mean == 0 else 0.0
    return float(2 * student_t.sf(abs(mean) / (std / math.sqrt(seeds)), seeds - 1))


def _side(p: float, gap: float) -> str:
    return "not distinguishable" if p >= SIGNIFICANCE else "above" if gap > 0 else "below"


def welch_verdict(ours: Cell, theirs: Cell) -> Verdict:
    """``ours`` against ``theirs`` by :func:`welch_p`; untested where either has a single seed or no std."""
    gap = ours.mean - theirs.mean
    if min(ours.runs, theirs.runs) < 2 or math.isnan(ours.std) or math.isnan(theirs.std):
        return Verdict("untested", gap, None)
    p = welch_p(ours, theirs)
    return Verdict(_side(p, gap), gap, p)


def paired_verdict(*, mean: float, std: float, seeds: int) -> Verdict:
    """A per-seed lead of ``mean`` ± ``std`` over ``seeds`` seeds by :func:`paired_p`; untested for one seed."""
    if seeds < 2:
        return Verdict("untested", mean, None)
    p = paired_p(mean=mean, std=std, seeds=seeds)
    return Verdict(_side(p, mean), mean, p)
