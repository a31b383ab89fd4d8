"""Intervals, margins and Holm's adjustment (:mod:`enkcvs.report.statistics`): each interval as scipy computes it from
the values, the verdict at the margin read off that interval (and the two one-sided tests it stands for), Holm's
adjusted p-values against the step-down procedure they summarise, and the pages stating the margin and each
ordering's K and M."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import ttest_1samp, ttest_ind, ttest_ind_from_stats

from enkcvs.report import versus
from enkcvs.report.statistics import (
    CONFIDENCE,
    MARGIN,
    SIGNIFICANCE,
    Cell,
    holm,
    margin_verdicts,
    ordering_verdicts,
    paired_difference,
    welch_difference,
)

REPO = Path(__file__).resolve().parents[1]


def _cell(values: np.ndarray) -> Cell:
    return Cell(float(values.mean()), float(values.std(ddof=1)), len(values))


def _random_cells(seed: int) -> tuple[Cell, Cell]:
    """Three seeds against five, means up to a few points apart, stds from tiny to wide: over seeds 0..29 some
    within, some outside and most undecided at the margin, about half with p below its level."""
    rng = np.random.default_rng(seed)
    return Cell(98 + rng.normal(0, 1.2), rng.uniform(0.02, 0.8), 3), Cell(98.0, rng.uniform(0.05, 0.5), 5)


def test_the_welch_interval_is_scipys_on_the_values():
    ours, theirs = np.array([98.18, 97.65, 97.88]), np.array([98.05, 98.41, 98.22, 98.30, 98.10])
    difference = welch_difference(ours=_cell(ours), theirs=_cell(theirs))
    expected = ttest_ind(ours, theirs, equal_var=False).confidence_interval(CONFIDENCE)
    assert (difference.low, difference.high) == pytest.approx((expected.low, expected.high))
    assert difference.gap == pytest.approx(ours.mean() - theirs.mean())
    assert (difference.low + difference.high) / 2 == pytest.approx(difference.gap)


def test_the_paired_interval_is_scipys_on_the_differences():
    lead = np.array([0.10, 0.12, 0.07, 0.15])
    difference = paired_difference(mean=lead.mean(), std=lead.std(ddof=1), seeds=len(lead))
    expected = ttest_1samp(lead, 0).confidence_interval(CONFIDENCE)
    assert (difference.low, difference.high) == pytest.approx((expected.low, expected.high))


@pytest.mark.parametrize("seed", range(30))
def test_the_interval_excludes_zero_exactly_where_welchs_p_is_below_its_level(seed):
    ours, theirs = _random_cells(seed)
    difference = welch_difference(ours=ours, theirs=theirs)
    assert (difference.p < 1 - CONFIDENCE) == (difference.low > 0 or difference.high < 0)


def test_a_close_tight_cell_is_within_a_far_one_outside_and_a_wide_one_undecided():
    paper = Cell(98.0, 0.1, 5)
    differences = [
        welch_difference(ours=Cell(98.2, 0.1, 5), theirs=paper),  # 0.2 off, narrow
        welch_difference(ours=Cell(90.0, 0.1, 5), theirs=paper),  # 8 off, narrow
        welch_difference(ours=Cell(98.0, 3.0, 3), theirs=paper),  # on the paper's mean, seeds far apart
        welch_difference(ours=Cell(99.0, 0.1, 5), theirs=paper),  # narrow, across the margin's edge
        welch_difference(ours=Cell(99.0, float("nan"), 1), theirs=paper),
    ]
    sides = [verdict.side for verdict in margin_verdicts(differences=differences, margin=1.0)]
    assert sides == ["within", "outside", "undecided", "undecided", "untested"]


@pytest.mark.parametrize("seed", range(30))
def test_within_is_the_two_one_sided_tests_at_half_the_level_a_side(seed):
    """Within ⇔ Welch's one-sided tests reject a gap at or below -margin and one at or above +margin, each at
    (1 - CONFIDENCE) / 2: scipy's tests on the cells shifted by the margin."""
    ours, theirs = _random_cells(seed)
    verdict = margin_verdicts(differences=[welch_difference(ours=ours, theirs=theirs)], margin=MARGIN)[0]
    stats = (ours.std, ours.runs, theirs.mean, theirs.std, theirs.runs)
    above = ttest_ind_from_stats(ours.mean + MARGIN, *stats, equal_var=False, alternative="greater").pvalue
    below = ttest_ind_from_stats(ours.mean - MARGIN, *stats, equal_var=False, alternative="less").pvalue
    level = (1 - CONFIDENCE) / 2
    assert (verdict.side == "within") == (above < level and below < level)
    if verdict.side == "outside":
        assert verdict.low > MARGIN or verdict.high < -MARGIN


def test_holm_on_a_worked_family():
    # sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1: 0.02, 0.03, 0.06, 0.04, made non-decreasing: 0.06 for the last
    assert holm(p=[0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm(p=[0.5, 0.9]) == pytest.approx([1.0, 1.0])  # capped at 1
    assert holm(p=[0.2]) == pytest.approx([0.2])  # a family of one is not adjusted


def _step_down(p: np.ndarray, level: float) -> np.ndarray:
    """Holm's procedure as he states it: reject the smallest p while it is below level / (n - i), i from 0."""
    rejected = np.zeros(len(p), dtype=bool)
    for i, index in enumerate(np.argsort(p, kind="stable")):
        if p[index] >= level / (len(p) - i):
            break
        rejected[index] = True
    return rejected


@pytest.mark.parametrize("seed", range(10))
def test_holm_is_at_least_the_raw_p_monotone_and_rejects_what_the_step_down_procedure_rejects(seed):
    rng = np.random.default_rng(seed)
    raw = np.concatenate([rng.uniform(0, 0.02, 3), rng.uniform(0, 1, 7)])
    adjusted = holm(p=raw)
    assert np.all(adjusted >= raw) and np.all(adjusted <= 1)
    order = np.argsort(raw)
    assert np.all(np.diff(adjusted[order]) >= 0)  # a smaller raw p never gets a larger adjusted one
    for level in (0.01, 0.05, 0.1):
        assert np.array_equal(adjusted < level, _step_down(raw, level))


def test_a_family_orders_by_its_adjusted_p_and_leaves_untested_cells_out():
    # alone each would be ordered (p < 0.05); as a family of three tested comparisons only the clearest one is
    differences = [
        welch_difference(ours=Cell(98.55, 0.2, 3), theirs=Cell(98.0, 0.2, 3)),
        welch_difference(ours=Cell(97.45, 0.2, 3), theirs=Cell(98.0, 0.2, 3)),
        welch_difference(ours=Cell(99.5, 0.2, 3), theirs=Cell(98.0, 0.2, 3)),
        welch_difference(ours=Cell(90.0, float("nan"), 1), theirs=Cell(98.0, 0.2, 3)),
    ]
    assert all(d.p < SIGNIFICANCE for d in differences[:3])
    verdicts = ordering_verdicts(differences=differences)
    assert [v.p for v in verdicts[:3]] == pytest.approx(holm(p=[d.p for d in differences[:3]]))
    assert [v.side for v in verdicts] == ["unordered", "unordered", "above", "untested"]


def test_the_cleanlab_table_names_k_and_m_and_gives_each_lead_an_interval():
    lead = [0.10, 0.12, 0.11, 0.09]
    frame = pd.DataFrame(
        {
            "kind": ["table"] * 2 + ["texts"] * 2,
            "K": 4,
            "M": 3,
            **{f"{measure} E-NKCVS": [0.5 + x for x in lead] for measure in versus.MEASURES},
            **{f"{measure} E-NKCVS + LR": [0.5, 0.4, 0.6, 0.5] for measure in versus.MEASURES},
            **{f"{measure} cleanlab + LR": [0.5] * 4 for measure in versus.MEASURES},
        }
    )
    table = versus.verdicts(frame)
    assert set(table["K"]) == {"4"} and set(table["M"]) == {"3"}
    interval = table[f"{100 * CONFIDENCE:g} % interval"]
    assert interval.str.fullmatch(r"[+-]\d\.\d{3} to [+-]\d\.\d{3}").all()
    both = table.set_index(["data", "arm"]).loc[("all", "E-NKCVS")]
    assert both["is"].str.startswith("above cleanlab, the better pipeline (p = ").all()
    assert not table["is"].str.contains("distinguishable").any()


def test_the_pages_state_the_margin_and_no_longer_read_a_large_p_as_a_match():
    readme, results = ((REPO / page).read_text() for page in ("README.md", "docs/results.md"))
    assert f"±{MARGIN:g} point" in readme and f"±{MARGIN:g}" in results
    assert "K = 4, M = 3 is" in readme or "E-NKCVS at K" in readme  # the ordering names its selection
    for text in (readme, results, (REPO / "benchmarks" / "README.md").read_text()):
        assert "distinguishable" not in text


@pytest.mark.parametrize("seed", range(20))
def test_in_a_family_within_is_the_two_one_sided_tests_at_the_level_shared_among_its_tested_cells(seed):
    """A family of n tested cells: within ⇔ each cell's one-sided tests reject at (1 - CONFIDENCE) / (2 n)
    (Bonferroni), so that every within of the family holds at CONFIDENCE together; an untested cell shares nothing."""
    cells = [_random_cells(seed * 3 + i) for i in range(3)]
    differences = [welch_difference(ours=ours, theirs=theirs) for ours, theirs in cells]
    differences.append(welch_difference(ours=Cell(99.0, float("nan"), 1), theirs=Cell(98.0, 0.1, 5)))
    verdicts = margin_verdicts(differences=differences, margin=MARGIN)
    level = (1 - CONFIDENCE) / 2 / 3
    for (ours, theirs), verdict, alone in zip(cells, verdicts, differences):
        stats = (ours.std, ours.runs, theirs.mean, theirs.std, theirs.runs)
        above = ttest_ind_from_stats(ours.mean + MARGIN, *stats, equal_var=False, alternative="greater").pvalue
        below = ttest_ind_from_stats(ours.mean - MARGIN, *stats, equal_var=False, alternative="less").pvalue
        assert (verdict.side == "within") == (above < level and below < level)
        assert verdict.low <= alone.low and verdict.high >= alone.high  # wider than the cell's own interval
    assert verdicts[-1].side == "untested"
