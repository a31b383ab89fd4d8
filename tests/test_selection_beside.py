"""The view that sets a larger selection (K = 10, M = 5) beside a smaller one (K = 4, M = 3) of the same seeds,
each gathered over the runs that recorded its seeds."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from scipy.stats import ttest_ind_from_stats

from enkcvs.report.pages.blocks import render_block


def _selection_run(
    root: Path, name: str, *, K: int, M: int, seeds: list[int], shift: float, accuracy: tuple[float, float, int]
) -> None:
    """A recorded run of dataset d at asymmetric 0.4 whose main selection is (K, M, t = 2), with a sensitivity row at
    K = 2 beside it, and E-NKCVS's Table 2 cell ``accuracy`` (mean, std, seeds)."""
    run = root / name
    run.mkdir(parents=True)
    config = {"seeds": seeds, "selection": {"K": K, "M": M, "t": 2}, "datasets": {"d": {}}}
    (run / "provenance.json").write_text(json.dumps({"config": yaml.safe_dump(config)}))
    rows = [
        {
            "dataset": "d",
            "noise": "asym0.4",
            "seed": seed,
            "K": k,
            "M": M,
            "t": 2,
            "precision": 97.0 + shift,
            "recall": 95.0 + shift + seed,
            "theorem1_precision": 98.0 + shift / 2,
            "theorem1_recall": 97.0 + shift / 2,
        }
        for seed in seeds
        for k in (K, 2)
    ]
    pd.DataFrame(rows).to_csv(run / "theory.csv", index=False)
    mean, std, runs = accuracy
    pd.DataFrame(
        [
            {
                "dataset": "d",
                "noise_kind": "asym",
                "noise_rate": 0.4,
                "method": method,
                "mean": mean,
                "std": std,
                "runs": runs,
                "published": 98.4,
                "published_std": 0.2,
            }
            for method in ("enkcvs", "ce")
        ]
    ).to_csv(run / "table2.csv", index=False)


def _rows(text: str) -> list[list[str]]:
    return [[cell.strip() for cell in line.split("|")[1:-1]] for line in text.splitlines() if line.startswith("| `")]


def test_selection_beside_shows_what_k_and_m_buy_measured_and_as_theorem1_expects(tmp_path):
    _selection_run(tmp_path, "k4", K=4, M=3, seeds=[1, 2, 3], shift=0.0, accuracy=(97.9, 0.3, 3))
    _selection_run(tmp_path, "k10", K=10, M=5, seeds=[1, 2, 3], shift=1.0, accuracy=(98.6, 0.1, 3))
    text = render_block("k10/selection-beside:k4", root=tmp_path)
    assert text.startswith(
        "From K = 4, M = 3, t = 2 (`k4`) to K = 10, M = 5, t = 2 (`k10`) over 3 selection(s) of a "
        "setting and seed: precision +1.00 points (Theorem 1 expects +0.50), recall +1.00 (expects "
        "+0.50). "
    )
    p = ttest_ind_from_stats(98.6, 0.1, 3, 97.9, 0.3, 3, equal_var=False).pvalue
    assert (
        f"d asym0.4: 98.60 ± 0.10 (seeds 1, 2, 3) against 97.90 ± 0.30 (seeds 1, 2, 3), +0.70 points, K = 10, "
        f"M = 5, t = 2 {'above' if p < 0.05 else 'not distinguishable from'} K = 4, M = 3, t = 2 (Welch's t-test, "
        f"p = {p:.2g}, 3 and 3 seeds)"
    ) in text
    # per seed the smaller selection first, at each run's main (K, M) only: the K = 2 rows are the sensitivity study's
    assert [(row[0], row[3], row[4], row[5]) for row in _rows(text)] == [
        (run, str(seed), K, M) for seed in (1, 2, 3) for run, K, M in (("`k4`", "4", "3"), ("`k10`", "10", "5"))
    ]


def test_selection_beside_gathers_each_selections_seeds_over_its_runs(tmp_path):
    """K = 10 at seed 1 in one run and seeds 2-3 in another, against K = 4 the same way: the accuracy cells pool
    three seeds each (exactly as from the seeds' values) and the test runs on them."""
    _selection_run(tmp_path, "k4", K=4, M=3, seeds=[1], shift=0.0, accuracy=(98.2, float("nan"), 1))
    _selection_run(tmp_path, "k4-seeds", K=4, M=3, seeds=[2, 3], shift=0.0, accuracy=(97.8, 0.2, 2))
    _selection_run(tmp_path, "k10", K=10, M=5, seeds=[1], shift=-1.0, accuracy=(97.9, float("nan"), 1))
    _selection_run(tmp_path, "k10-seeds", K=10, M=5, seeds=[2, 3], shift=-1.0, accuracy=(98.1, 0.4, 2))
    text = render_block("k10/selection-beside:k10-seeds+k4+k4-seeds", root=tmp_path)
    assert text.startswith(
        "From K = 4, M = 3, t = 2 (`k4`, `k4-seeds`) to K = 10, M = 5, t = 2 (`k10`, `k10-seeds`) over 3 selection(s)"
    )
    k4 = [98.2, 97.8 - 0.2 / 2**0.5, 97.8 + 0.2 / 2**0.5]
    k10 = [97.9, 98.1 - 0.4 / 2**0.5, 98.1 + 0.4 / 2**0.5]
    p = ttest_ind_from_stats(
        np.mean(k10), np.std(k10, ddof=1), 3, np.mean(k4), np.std(k4, ddof=1), 3, equal_var=False
    ).pvalue
    assert (
        f"d asym0.4: {np.mean(k10):.2f} ± {np.std(k10, ddof=1):.2f} (seeds 1, 2, 3) against {np.mean(k4):.2f} ± "
        f"{np.std(k4, ddof=1):.2f} (seeds 1, 2, 3), {np.mean(k10) - np.mean(k4):+.2f} points, K = 10, M = 5, t = 2 "
        f"not distinguishable from K = 4, M = 3, t = 2 (Welch's t-test, p = {p:.2g}, 3 and 3 seeds)"
    ) in text
    assert p >= 0.05
    assert [(row[0], row[3]) for row in _rows(text)] == [
        ("`k4`", "1"),
        ("`k10`", "1"),
        ("`k4-seeds`", "2"),
        ("`k10-seeds`", "2"),
        ("`k4-seeds`", "3"),
        ("`k10-seeds`", "3"),
    ]


def test_selection_beside_orders_no_accuracy_from_one_seed(tmp_path):
    _selection_run(tmp_path, "k4", K=4, M=3, seeds=[1, 2], shift=0.0, accuracy=(97.9, 0.3, 2))
    _selection_run(tmp_path, "k10", K=10, M=5, seeds=[1], shift=2.0, accuracy=(99.9, float("nan"), 1))
    text = render_block("k10/selection-beside:k4", root=tmp_path)
    assert "over 1 selection(s)" in text
    assert (
        "d asym0.4: 99.90 (seed 1) against 97.90 ± 0.30 (seeds 1, 2), +2.00 points, a single seed in a cell: not "
        "ordered."
    ) in text
    _selection_run(tmp_path, "other", K=10, M=5, seeds=[7], shift=0.0, accuracy=(99.0, float("nan"), 1))
    assert render_block("other/selection-beside:k4", root=tmp_path) == (
        "`other` and the runs beside it share no seed of a setting at another main selection.\n"
    )
