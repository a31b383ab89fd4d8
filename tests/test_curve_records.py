"""What docs/paper-scale-mnist-full.md says of the recorded clean test curves, checked against the records it cites:
the prose around their generated blocks quotes no number, so its claims are tested here."""

from pathlib import Path

import pandas as pd
import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
RECORDED = REPO / "results" / "recorded"


def _curve(run: str) -> tuple[pd.Series, float, dict]:
    """The one curve of a recorded run (test accuracy by epoch, %), the paper's cell and the run's dataset config."""
    record = RECORDED / run
    if not record.exists():
        pytest.skip(f"{run} is not recorded")
    curves = pd.read_csv(record / "test_curves.csv")
    assert curves[["dataset", "noise_kind", "noise_rate", "seed", "method"]].drop_duplicates().shape[0] == 1
    summary = (record / "test_curves.md").read_text().splitlines()[2].split("|")
    config = yaml.safe_load(yaml.safe_load((record / "provenance.json").read_text())["config"])
    return curves.set_index("epoch")["test_accuracy"], float(summary[-2]), config["datasets"]["mnist"]


def test_ce_at_symmetric_08_passes_through_the_papers_cell_and_ends_at_the_records_last_epoch():
    curve, paper, dataset = _curve("mnist-full-sym0.8-ce-curve")
    first_milestone = dataset["recipe"]["milestones"][0]
    assert curve.iloc[0] < paper < curve.max(), "starts just below the paper's cell and peaks above it"
    assert curve.idxmax() <= 3, "within a few epochs"
    assert curve.loc[first_milestone - 1] < paper - 20, "far below it before the first milestone"
    table2 = pd.read_csv(RECORDED / "mnist-full-sym0.8" / "table2.csv")
    ce = table2.loc[table2["method"] == "ce", "mean"].item()
    assert curve.iloc[-1] == pytest.approx(ce, abs=1e-9), "the training mnist-full-sym0.8 reports"


def test_coteaching_at_asymmetric_04_never_comes_down_to_the_papers_cell():
    curve, paper, dataset = _curve("mnist-full-coteaching-curve")
    ramp = dataset["baselines"]["coteaching"]["warmup_epochs"]
    assert curve.min() > paper, "no epoch comes down to the paper's cell"
    assert curve.idxmin() <= ramp, "its lowest point falls inside the forget rate's ramp"
    assert (curve.loc[ramp:] - curve.iloc[-1]).abs().max() < 2, "from the ramp's end on, near its last epoch"
