"""What the views of recorded runs share: the columns that name a setting, a label per setting, a count of settings,
the span of values, a difference in points, and the test that orders two methods' cells.

Two methods are ordered only by a t-test over their seeds, where p < :data:`SIGNIFICANCE`: Welch's between two cells
(two-sided, unequal variances, from each cell's mean, std and seed count: :func:`scipy.stats.ttest_ind_from_stats`),
or the paired one where both scored the same seed's data (:func:`paired_p`); a verdict prints each p-value and the
seeds behind it, says "not distinguishable" where p >= :data:`SIGNIFICANCE`, and orders no cell of a single seed.
"""

import math

import pandas as pd
from scipy.stats import t as student_t
from scipy.stats import ttest_ind_from_stats

from enkcvs.report.paper import TABLE2_RUNS
from enkcvs.report.titles import METHOD_TITLES

#: The columns that name a setting in a run's tables.
SETTING = ["dataset", "noise_kind", "noise_rate"]


def setting_labels(frame: pd.DataFrame) -> list[str]:
    """One label per row for a Table 2 setting: ``mnist5k asym 0.4``."""
    return [f"{d} {k} {r:g}" for d, k, r in zip(frame["dataset"], frame["noise_kind"], frame["noise_rate"])]


def settings_phrase(count: int) -> str:
    """A count of settings in words: ``1 setting``, ``3 settings``."""
    return "1 setting" if count == 1 else f"{count} settings"


def span(values: pd.Series, *, spec: str = ".1f", joiner: str = "-") -> str:
    """The values' lowest and highest, formatted with ``spec``, or one of them where they read the same."""
    low, high = f"{values.min():{spec}}", f"{values.max():{spec}}"
    return low if low == high else f"{low}{joiner}{high}"


def points(value: float) -> str:
    """A difference in points of test accuracy as the tables print it: to two decimals, a trailing zero dropped
    (``0.38``, ``7.7``, ``1.0``), since a one-seed cell on 10,000 test images moves by 0.01."""
    text = f"{abs(value):.2f}"
    return text[:-1] if text.endswith("0") else text


#: The level below which Welch's t-test orders two methods' cells.
SIGNIFICANCE = 0.05
#: The sides of a tested verdict, in the order a sentence names them.
SIDES = ("above", "below", "not distinguishable from")


def several_seeds(rows: pd.DataFrame) -> bool:
    """Whether every cell of ``rows`` (Table 2 rows) has the seeds Welch's t-test needs: two or more, with a std."""
    return "std" in rows and int(rows["runs"].min()) >= 2


def paper_verdict(cell: pd.Series) -> str:
    """A Table 2 cell (``mean``, ``std``, ``runs``) against the paper's own (``published``, ``published_std`` over
    its :data:`~enkcvs.report.paper.TABLE2_RUNS` runs) by Welch's t-test from both means and stds: ``not
    distinguishable from the paper's (+0.9, p = 0.41)``, ``above the paper's (+6.9, p = 0.0001)``, or, for a single
    seed or a paper cell without a std, the gap untested."""
    gap = cell["mean"] - cell["published"]
    if int(cell["runs"]) < 2 or pd.isna(cell.get("published_std")):
        return f"{gap:+.1f}, not tested ({'one seed' if int(cell['runs']) < 2 else 'no std in the paper'})"
    side, p = tested_side(
        cell, pd.Series({"mean": cell["published"], "std": cell["published_std"], "runs": TABLE2_RUNS})
    )
    return f"{side} the paper's ({gap:+.1f}, p = {p:.2g})"


def welch_p(first: pd.Series, second: pd.Series) -> float:
    """Two-sided p-value of Welch's t-test between two cells of several seeds each (``mean``, ``std`` with ddof=1,
    ``runs``); 0 where both stds are 0 and the means differ, 1 where they are equal."""
    if first["std"] == 0 == second["std"]:
        return 1.0 if first["mean"] == second["mean"] else 0.0
    return float(
        ttest_ind_from_stats(
            first["mean"], first["std"], first["runs"], second["mean"], second["std"], second["runs"], equal_var=False
        ).pvalue
    )


def paired_p(*, mean: float, std: float, seeds: int) -> float:
    """Two-sided p-value of the paired t-test over ``seeds`` paired differences of mean ``mean`` and std ``std``
    (ddof=1): the one-sample t-test of the differences against 0, with ``seeds - 1`` degrees of freedom; 0 where
    every difference is the same non-zero one, 1 where all are 0."""
    if std == 0:
        return 1.0 if mean == 0 else 0.0
    return float(2 * student_t.sf(abs(mean) / (std / math.sqrt(seeds)), seeds - 1))


def _side(p: float, lead: float) -> str:
    """The side of a tested verdict: "not distinguishable from" where p >= :data:`SIGNIFICANCE`, else by the lead's
    sign."""
    return SIDES[2] if p >= SIGNIFICANCE else SIDES[0] if lead > 0 else SIDES[1]


def paired_side(*, mean: float, std: float, seeds: int) -> tuple[str, float]:
    """Which of :data:`SIDES` a method stands on against another by :func:`paired_p` of its per-seed lead ``mean`` ±
    ``std`` over ``seeds`` seeds, and the p-value."""
    p = paired_p(mean=mean, std=std, seeds=seeds)
    return _side(p, mean), p


def tested_side(ours: pd.Series, other: pd.Series) -> tuple[str, float]:
    """Which of :data:`SIDES` ``ours`` stands on against ``other`` (two cells of several seeds), by :func:`welch_p`,
    and the p-value."""
    p = welch_p(ours, other)
    return _side(p, ours["mean"] - other["mean"]), p


def tested_sides(ours: pd.Series, rivals: pd.DataFrame) -> dict[str, list[str]]:
    """Each rival (rows indexed by method) on its side of ``ours`` (:func:`tested_side`): ``above`` (ours is above
    it), ``below`` or ``not distinguishable from``, each as its title with the p-value and both cells' seed counts."""
    sides: dict[str, list[str]] = {side: [] for side in SIDES}
    for method, rival in rivals.iterrows():
        side, p = tested_side(ours, rival)
        sides[side].append(
            f"{METHOD_TITLES.get(method, method)} (p = {p:.2g}, {int(ours['runs'])} and {int(rival['runs'])} seeds)"
        )
    return sides


def tested_verdict(ours: pd.Series, rivals: pd.DataFrame) -> str:
    """:func:`tested_sides` as one clause: ``above CE (p = ...), ...; not distinguishable from SL (p = ...)``."""
    return "; ".join(f"{side} {', '.join(cells)}" for side, cells in tested_sides(ours, rivals).items() if cells)
