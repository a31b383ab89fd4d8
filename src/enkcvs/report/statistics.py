"""The statistics behind every comparison the pages state: the difference between two results with its confidence
interval and two-sided p-value (Welch's, from two cells' means, stds and seed counts; the paired t-test's, where both
scored the same seeds), Holm's adjustment of the p-values of a family of comparisons, and two readings of a family:

- against the paper's cells, an equivalence verdict at :data:`MARGIN` on simultaneous intervals (Bonferroni over
  the family): ``within`` where the whole interval lies inside ±margin, ``outside`` where it lies wholly beyond it,
  ``undecided`` otherwise;
- between two methods, an ordering: ``above`` or ``below`` where the Holm-adjusted p < :data:`SIGNIFICANCE`, else
  ``unordered``.

A cell of a single seed is never tested (``untested``). Every function returns data; the templates phrase it."""

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import t as student_t
from scipy.stats import ttest_ind_from_stats

#: The level below which a Holm-adjusted p-value orders two results.
SIGNIFICANCE = 0.05
#: The level of every interval the pages print, alone or, for the equivalence verdicts against the paper, for a
#: family's intervals together (:func:`family_confidence`). The verdict reads the interval the row shows: two
#: one-sided tests at (1 - CONFIDENCE) / 2 a side over the family, stricter than a TOST at 5 %, checkable on the row.
CONFIDENCE = 0.95
#: The equivalence margin against the paper, in points of test accuracy, one for every table. The paper's five runs of
#: a full-MNIST cell (the only data reproduced here with several seeds) have a std of at most 0.5 points; twice that
#: is where about 95 % of its own single runs fall around its mean, so a reproduction whose whole interval lies
#: inside it is as close to the paper as the paper's runs are to one another. The wider 2 points often used would
#: accept MNIST cells off by four of the paper's largest stds, where the paper has E-NKCVS lead SL by half a point at
#: most; data of wider spread (TREC's stds reach 7.5) stay undecided until more seeds narrow their intervals.
MARGIN = 1.0


@dataclass(frozen=True)
class Cell:
    """A result over seeds: mean, std (ddof=1; NaN for one seed) and how many seeds."""

    mean: float
    std: float
    runs: int


@dataclass(frozen=True)
class Difference:
    """One result minus another (``gap``), its :data:`CONFIDENCE` interval (``low``, ``high``) and the two-sided
    p-value of no difference; the three None where untested. ``error`` and ``df``, the gap's standard error and
    degrees of freedom, give its interval at another level (:func:`margin_verdicts`)."""

    gap: float
    low: float | None
    high: float | None
    p: float | None
    error: float | None = None
    df: float | None = None


@dataclass(frozen=True)
class Verdict:
    """A :class:`Difference` read within its family: ``side`` (``within``, ``outside`` or ``undecided`` against a
    margin; ``above``, ``below`` or ``unordered`` between methods; ``untested``), and ``p`` Holm-adjusted over the
    family (None where untested)."""

    side: str
    gap: float
    low: float | None
    high: float | None
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


def _interval(gap: float, error: float, df: float, confidence: float) -> tuple[float, float]:
    half = 0.0 if error == 0 else float(student_t.ppf((1 + confidence) / 2, df)) * error
    return gap - half, gap + half


def welch_difference(*, ours: Cell, theirs: Cell, confidence: float = CONFIDENCE) -> Difference:
    """``ours`` minus ``theirs`` with its Welch–Satterthwaite interval (the standard error of the two means and the
    degrees of freedom from both cells' variances and counts) and :func:`welch_p`; untested where either cell has a
    single seed or no std."""
    gap = ours.mean - theirs.mean
    if min(ours.runs, theirs.runs) < 2 or math.isnan(ours.std) or math.isnan(theirs.std):
        return Difference(gap, None, None, None)
    shares = (ours.std**2 / ours.runs, theirs.std**2 / theirs.runs)  # each mean's variance
    error = math.sqrt(sum(shares))
    df = (
        sum(shares) ** 2 / sum(share**2 / (cell.runs - 1) for share, cell in zip(shares, (ours, theirs)))
        if error
        else 0
    )
    return Difference(gap, *_interval(gap, error, df, confidence), welch_p(ours, theirs), error, df)


def paired_difference(*, mean: float, std: float, seeds: int, confidence: float = CONFIDENCE) -> Difference:
    """A per-seed lead of ``mean`` ± ``std`` (ddof=1) over ``seeds`` seeds with its paired t interval and
    :func:`paired_p`; untested for one seed."""
    if seeds < 2:
        return Difference(mean, None, None, None)
    error = std / math.sqrt(seeds)
    low, high = _interval(mean, error, seeds - 1, confidence)
    return Difference(mean, low, high, paired_p(mean=mean, std=std, seeds=seeds), error, seeds - 1)


def holm(*, p: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjustment of a family's p-values, (n,) -> (n,) in the same order: the i-th smallest
    multiplied by n - i + 1 (i from 1), made non-decreasing in that order and capped at 1. It holds the chance of
    any false ordering in the family at the level, whatever the tests' dependence."""
    values = np.asarray(p, dtype=float)
    order = np.argsort(values, kind="stable")
    stepped = np.maximum.accumulate((len(values) - np.arange(len(values))) * values[order])
    adjusted = np.empty_like(values)
    adjusted[order] = np.minimum(stepped, 1.0)
    return adjusted


def _adjusted(differences: Sequence[Difference]) -> list[float | None]:
    """Each difference's p Holm-adjusted over the tested ones of the family; None where untested."""
    tested = [i for i, difference in enumerate(differences) if difference.p is not None]
    adjusted: list[float | None] = [None] * len(differences)
    for i, p in zip(tested, holm(p=[differences[i].p for i in tested])):
        adjusted[i] = float(p)
    return adjusted


def family_confidence(*, tested: int) -> float:
    """The level of each of ``tested`` intervals that holds them all at :data:`CONFIDENCE` together (Bonferroni):
    1 - (1 - CONFIDENCE) / tested; :data:`CONFIDENCE` itself for a family of one."""
    return 1 - (1 - CONFIDENCE) / max(tested, 1)


def margin_verdicts(*, differences: Sequence[Difference], margin: float = MARGIN) -> list[Verdict]:
    """Each difference of a family (a table's cells against the paper's) read at the equivalence margin ±``margin``
    on its simultaneous interval, the family's tested differences held at :data:`CONFIDENCE` together
    (:func:`family_confidence`): ``within`` where the interval lies inside, ``outside`` where it lies wholly beyond,
    ``undecided`` where it crosses an edge, ``untested`` without an interval; the verdict carries that interval and
    its p Holm-adjusted over the family."""
    level = family_confidence(tested=sum(difference.p is not None for difference in differences))
    verdicts = []
    for difference, p in zip(differences, _adjusted(differences)):
        low, high = difference.low, difference.high
        if p is not None and difference.error is not None:
            low, high = _interval(difference.gap, difference.error, difference.df, level)
        if p is None:
            side = "untested"
        elif -margin < low and high < margin:
            side = "within"
        elif low > margin or high < -margin:
            side = "outside"
        else:
            side = "undecided"
        verdicts.append(Verdict(side, difference.gap, low, high, p))
    return verdicts


def ordering_verdicts(*, differences: Sequence[Difference]) -> list[Verdict]:
    """Each difference of a family (one method against others) as an ordering: ``above`` or ``below`` where its
    Holm-adjusted p < :data:`SIGNIFICANCE`, ``unordered`` otherwise, ``untested`` without a p."""
    verdicts = []
    for difference, p in zip(differences, _adjusted(differences)):
        if p is None:
            side = "untested"
        elif p < SIGNIFICANCE:
            side = "above" if difference.gap > 0 else "below"
        else:
            side = "unordered"
        verdicts.append(Verdict(side, difference.gap, difference.low, difference.high, p))
    return verdicts
