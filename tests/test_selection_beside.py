"""The view that sets a larger selection (K = 10, M = 5) beside a smaller one (K = 4, M = 3) of the same seeds."""

import json
from pathlib import Path

import pandas as pd
import yaml
from scipy.stats import ttest_ind_from_stats

from enkcvs.report.pages.blocks import render_block


def _selection_run(root: Path, name: str, *, K: int, M: int, seeds: list[int], shift: float,
                   accuracy: tuple[float, float, int]) -> None:
    """A recorded run of dataset d at asymmetric 0.4 whose main selection is (K, M, t = 2), with a sensitivity row at
    K = 2 beside it, and E-NKCVS's Table 2 cell ``accuracy`` (mean, std, seeds)."""
    run = root / name
    run.mkdir(parents=True)
    config = {"selection": {"K": K, "M": M, "t": 2}, "datasets": {"d": {}}}
    (run / "provenance.json").write_text(json.dumps({"config": yaml.safe_dump(config)}))
    rows = [{"dataset": "d", "noise": "asym0.4", "seed": seed, "K": k, "M": M, "t": 2, "precision": 97.0 + shift,
             "recall": 95.0 + shift + seed, "theorem1_precision": 98.0 + shift / 2, "theorem1_recall": 97.0 + shift / 2}
            for seed in seeds for k in (K, 2)]
    pd.DataFrame(rows).to_csv(run / "theory.csv", index=False)
    mean, std, runs = accuracy
    pd.DataFrame([{"dataset": "d", "noise_kind": "asym", "noise_rate": 0.4, "method": method, "mean": mean,
                   "std": std, "runs": runs} for method in ("enkcvs", "ce")]).to_csv(run / "table2.csv", index=False)


def test_selection_beside_shows_what_k_and_m_buy_measured_and_as_theorem1_expects(tmp_path):
    _selection_run(tmp_path, "k4", K=4, M=3, seeds=[1, 2, 3], shift=0.0, accuracy=(97.9, 0.3, 3))
    _selection_run(tmp_path, "k10", K=10, M=5, seeds=[1, 2, 3], shift=1.0, accuracy=(98.6, 0.1, 3))
    text = render_block("k10/selection-beside:k4", root=tmp_path)
    assert text.startswith("From `k4` to `k10` over 3 selection(s) of a setting and seed: precision +1.00 points "
                           "(Theorem 1 expects +0.50), recall +1.00 (expects +0.50). ")
    p = ttest_ind_from_stats(98.6, 0.1, 3, 97.9, 0.3, 3, equal_var=False).pvalue
    assert f"d asym0.4: +0.70 points, `k10` {'above' if p < 0.05 else 'not distinguishable from'} `k4` " \
           f"(Welch's t-test, p = {p:.2g}, 3 and 3 seeds)" in text
    rows = [[cell.strip() for cell in line.split("|")[1:-1]] for line in text.splitlines() if line.startswith("| `")]
    # per seed the smaller run first, at each run's main (K, M) only: the K = 2 rows are the sensitivity study's
    assert [(row[0], row[3], row[4], row[5]) for row in rows] == [
        (run, str(seed), K, M) for seed in (1, 2, 3) for run, K, M in (("`k4`", "4", "3"), ("`k10`", "10", "5"))]


def test_selection_beside_orders_no_accuracy_from_one_seed(tmp_path):
    _selection_run(tmp_path, "k4", K=4, M=3, seeds=[1, 2], shift=0.0, accuracy=(97.9, 0.3, 2))
    _selection_run(tmp_path, "k10", K=10, M=5, seeds=[1], shift=2.0, accuracy=(99.9, float("nan"), 1))
    text = render_block("k10/selection-beside:k4", root=tmp_path)
    assert "over 1 selection(s)" in text and "d asym0.4: +2.00 points, from one seed: not ordered." in text
    _selection_run(tmp_path, "other", K=10, M=5, seeds=[7], shift=0.0, accuracy=(99.0, float("nan"), 1))
    assert render_block("other/selection-beside:k4", root=tmp_path) == (
        "`other` and `k4` share no main selection of a seed.\n")
