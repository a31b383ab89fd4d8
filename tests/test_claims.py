"""The statistics that order results on the pages, and the data of the README's claims: Welch's and the paired
t-test as scipy computes them from the values, Table 2 cells gathered over several records, the paper's ordering
tested only where every cell has several seeds and naming E-NKCVS's K and M, and what an unrun config would train.
The intervals, margins and Holm's adjustment themselves: tests/test_intervals.py."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy.stats import ttest_ind, ttest_rel

from enkcvs.report import claims
from enkcvs.report.gathered import gathered_row
from enkcvs.report.statistics import (
    SIGNIFICANCE,
    Cell,
    margin_verdicts,
    ordering_verdicts,
    paired_difference,
    paired_p,
    welch_difference,
    welch_p,
)

REPO = Path(__file__).resolve().parents[1]


def _cell(values: np.ndarray) -> Cell:
    return Cell(float(values.mean()), float(values.std(ddof=1)), len(values))


def _side(difference) -> str:
    """A difference ordered on its own (a family of one)."""
    return ordering_verdicts(differences=[difference])[0].side


def test_welchs_p_equals_scipys_on_the_values_and_a_gap_just_past_the_spread_orders_nothing():
    ours, theirs = np.array([98.18, 97.65, 97.88]), np.array([98.05, 98.41, 98.22])
    assert welch_p(_cell(ours), _cell(theirs)) == pytest.approx(ttest_ind(ours, theirs, equal_var=False).pvalue)
    first, second = Cell(97.90, 0.27, 3), Cell(98.186, 0.17, 3)  # a gap past the larger std, three seeds each
    assert abs(first.mean - second.mean) > max(first.std, second.std)
    difference = welch_difference(ours=first, theirs=second)
    assert _side(difference) == "unordered" and difference.low < 0 < difference.high
    assert welch_p(Cell(1.0, 0.0, 2), Cell(2.0, 0.0, 2)) == 0 and welch_p(Cell(1.0, 0.0, 2), Cell(1.0, 0.0, 2)) == 1


def test_a_single_seed_is_never_ordered_nor_read_at_the_margin():
    difference = welch_difference(ours=Cell(99.0, float("nan"), 1), theirs=Cell(90.0, 0.1, 5))
    assert (difference.gap, difference.low, difference.high, difference.p) == (9.0, None, None, None)
    verdict = margin_verdicts(differences=[difference])[0]
    assert (verdict.side, verdict.p, verdict.gap) == ("untested", None, 9.0)
    assert _side(paired_difference(mean=5.0, std=float("nan"), seeds=1)) == "untested"


def test_the_paired_p_equals_scipys_on_the_seeds_differences():
    ours, theirs = np.array([91.2, 92.0, 91.7]), np.array([91.0, 91.9, 91.3])
    gaps = ours - theirs
    p = paired_p(mean=gaps.mean(), std=gaps.std(ddof=1), seeds=3)
    assert p == pytest.approx(ttest_rel(ours, theirs).pvalue)
    difference = paired_difference(mean=gaps.mean(), std=gaps.std(ddof=1), seeds=3)
    assert _side(difference) == ("above" if p < SIGNIFICANCE else "unordered")
    assert _side(paired_difference(mean=-0.5, std=0.0, seeds=2)) == "below"


def _record(root: Path, name: str, seeds: list[int], cells: list[tuple], selection=(4, 3), meta=None) -> None:
    """A recorded run of ``seeds`` whose Table 2 holds ``cells``: (rate, method, mean, std, runs), each beside the
    paper's cell 98.0 ± 0.5 at asymmetric noise; ``meta``: more of its provenance (commit, machine, versions)."""
    run = root / "results" / "recorded" / name
    run.mkdir(parents=True)
    config = {"seeds": seeds, "selection": {"K": selection[0], "M": selection[1], "t": 2}}
    (run / "provenance.json").write_text(json.dumps({"config": yaml.safe_dump(config), **(meta or {})}))
    rows = [
        {
            "dataset": "mnist",
            "noise_kind": "asym",
            "noise_rate": rate,
            "method": method,
            "mean": mean,
            "std": std,
            "runs": runs,
            "published": 98.0,
            "published_std": 0.5,
        }
        for rate, method, mean, std, runs in cells
    ]
    pd.DataFrame(rows).to_csv(run / "table2.csv", index=False)


def test_cells_pool_disjoint_seeds_exactly_a_later_run_replaces_a_shared_seed_and_selections_stay_apart(tmp_path):
    first, more = np.array([97.0]), np.array([98.0, 99.0])
    _record(
        tmp_path,
        "a",
        [1],
        [(0.4, "ce", 97.0, np.nan, 1), (0.4, "sl", 90.0, np.nan, 1), (0.4, "enkcvs", 97.5, np.nan, 1)],
    )
    _record(tmp_path, "b", [2, 3], [(0.4, "ce", more.mean(), more.std(ddof=1), 2)])
    _record(tmp_path, "c", [1], [(0.4, "sl", 96.0, np.nan, 1)])
    _record(tmp_path, "d", [1], [(0.4, "enkcvs", 98.5, np.nan, 1)], selection=(10, 5))
    runs = [(tmp_path / "results" / "recorded" / name, None) for name in "abcd"]
    row = gathered_row(runs).set_index(["method", "selection"])
    pooled = np.concatenate([first, more])
    assert row.loc[("ce", None), "mean"] == pytest.approx(pooled.mean())
    assert row.loc[("ce", None), "std"] == pytest.approx(pooled.std(ddof=1)) and row.loc[("ce", None), "runs"] == 3
    assert row.loc[("sl", None), "mean"] == 96.0  # run c retrained seed 1's SL
    assert row.loc[[("enkcvs", (4, 3)), ("enkcvs", (10, 5))], "mean"].tolist() == [97.5, 98.5]


def test_the_ordering_is_tested_only_where_every_cell_has_several_seeds(tmp_path):
    _record(
        tmp_path,
        "a",
        [1, 2, 3],
        [
            (0.4, method, mean, 0.1, 3)
            for method, mean in (("ce", 90.0), ("coteaching", 95.0), ("sl", 98.0), ("enkcvs", 98.05))
        ]
        + [(0.2, "ce", 97.0, np.nan, 1), (0.2, "enkcvs", 99.0, 0.1, 3)],
    )
    cells = claims.row_cells(tmp_path, [("a", None)])
    found = {(order.setting, order.method): order.verdict.side for order in claims.orderings(cells)}
    assert found == {
        ("asym 0.4", "CE"): "above",
        ("asym 0.4", "Co-teaching"): "above",
        ("asym 0.4", "SL"): "unordered",
    }
    assert {order.selection for order in claims.orderings(cells)} == {"K = 4, M = 3"}
    summary = claims.row_summary(cells)
    assert summary.cells == 6 and summary.settings == 2 and summary.sides["untested"] == 1


def test_an_unrun_config_is_estimated_from_its_planned_models_and_the_measured_rate(tmp_path):
    """CIFAR-10's experiment: its fold and final models as the workflow plans them, the GPU-hours from the rate its
    model's record measured, and how much longer the engine's own fold took than that rate says (a lower bound)."""
    estimate = claims.estimate(REPO, "config/experiments/cifar10.yaml")
    config = yaml.safe_load((REPO / "config" / "experiments" / "cifar10.yaml").read_text())
    cifar = config["datasets"]["cifar10"]
    K, M = config["selection"]["K"], config["selection"]["M"]
    main = len(cifar["noise"]) * len(config["seeds"]) * K * M
    assert estimate.fold_models >= main and estimate.final_models > 0
    record = json.loads((REPO / claims.GPU_RATES["cnn8"]).read_text())
    rate, samples = record["step_loops"]["eager"]["samples_per_s"], record["fold"]["samples"]
    one_fold = cifar["recipe"]["epochs"] * samples * (K - 1) / K * 0.9 / rate / 3600
    assert estimate.gpu_hours > main * one_fold and estimate.device == record["device"]
    engine = record["engine_fold"]["seconds"] / record["step_loops"]["eager"]["projected_fold_s"]
    assert estimate.engine_ratio == engine > 1  # the rate is a lower bound: the engine's fold took longer


def test_reweighting_reads_enkcvs_minus_ss_only_per_setting_of_a_runs_table2_by_welch(tmp_path):
    cells = [(0.2, "enkcvs", 95.0, 0.5, 3), (0.2, "ss_only", 90.0, 0.5, 3), (0.2, "ce", 80.0, 1.0, 3)]
    cells += [(0.4, "enkcvs", 91.0, 1.0, 3), (0.4, "ss_only", 91.2, 1.2, 3)]
    cells += [(0.6, "enkcvs", 85.0, 1.0, 3)]  # no SS only cell: no comparison
    _record(tmp_path, "default", [1, 2, 3], cells, selection=(3, 3))
    found = claims.reweighting(tmp_path, "default")
    assert (found.run, found.selection, found.seeds) == ("default", "K = 3, M = 3", 3)
    expected = ordering_verdicts(
        differences=[
            welch_difference(ours=Cell(95.0, 0.5, 3), theirs=Cell(90.0, 0.5, 3)),
            welch_difference(ours=Cell(91.0, 1.0, 3), theirs=Cell(91.2, 1.2, 3)),
        ]
    )
    assert found.settings == list(zip(["mnist asym 0.2", "mnist asym 0.4"], expected))
    assert [verdict.side for _, verdict in found.settings] == ["above", "unordered"]


def test_places_read_enkcvs_among_the_methods_as_printed_with_ties_and_the_leader():
    rows = [("sym", 0.4, "ce", 95.6), ("sym", 0.4, "sl", 94.8), ("sym", 0.4, "enkcvs", 91.4)]
    rows += [("asym", 0.4, "ce", 91.8), ("asym", 0.4, "sl", 94.19999), ("asym", 0.4, "enkcvs", 94.2)]
    cells = pd.DataFrame(rows, columns=["noise_kind", "noise_rate", "method", "mean"])
    third, tied = claims.places(cells)
    assert (third.setting, third.place, third.tied, third.leader) == ("sym 0.4", 3, [], "CE")
    assert (third.leader_mean, third.enkcvs_mean) == (95.6, 91.4)
    assert (tied.setting, tied.place, tied.tied, tied.leader, tied.leader_mean) == ("asym 0.4", 1, ["SL"], None, None)


def _provenance(commit: str, torch: str) -> dict:
    return {
        "git": {"commit": commit, "dirty": False},
        "machine": {"cpu": "AMD EPYC", "cores": 2},
        "versions": {"torch": torch},
    }


def test_a_cell_pooling_outputs_that_ran_differently_is_marked_and_one_pooling_alike_ones_is_not(tmp_path):
    cell = [(0.4, "ce", 97.0, np.nan, 1)]
    _record(tmp_path, "a", [1], cell, meta=_provenance("a" * 40, "2.11.0"))
    _record(tmp_path, "b", [2], cell, meta=_provenance("b" * 40, "2.15.0"))
    _record(tmp_path, "c", [3], cell, meta=_provenance("a" * 40, "2.11.0"))
    _record(
        tmp_path, "d", [4], [(0.4, "enkcvs", 97.0, np.nan, 1)], selection=(10, 5), meta=_provenance("d" * 40, "2.11.0")
    )
    home = tmp_path / "results" / "recorded"
    differing = gathered_row([(home / "a", None), (home / "b", None)]).iloc[0]
    alike = gathered_row([(home / "a", None), (home / "c", None)]).iloc[0]
    assert differing["differs"] == "commit, torch" and alike["differs"] == ""
    assert [(fact["run"], fact["seed"], fact["commit"], fact["torch"]) for fact in differing["facts"]] == [
        ("a", 1, "aaaaaaa", "2.11.0"),
        ("b", 2, "bbbbbbb", "2.15.0"),
    ]
    assert {fact["precision"] for fact in differing["facts"]} == {"not recorded"}  # older records lack it
    assert alike["trainings"] == "1" and gathered_row([(home / "d", None)]).iloc[0]["trainings"] == "51"
