"""Clean test curves (enkcvs.report.curves): each final model's accuracy per epoch, its peak and last epoch beside
the paper's cell."""

import numpy as np
import pandas as pd

from enkcvs.io import write_json
from enkcvs.report.curves import curve_summary, epoch_curves
from enkcvs.report.render import render_test_curves
from enkcvs.report.tables import collect_records


def _results(tmp_path, curves: dict[tuple[str, str, int], list[float]]):
    paths = []
    for (dataset, noise, seed), accuracy in curves.items():
        path = tmp_path / f"{dataset}-{noise}-{seed}.json"
        write_json(
            {
                "dataset": dataset,
                "noise": noise,
                "seed": str(seed),
                "method": "ce",
                "test_accuracy": accuracy[-1],
                "test_accuracy_by_epoch": accuracy,
            },
            path,
        )
        paths.append(path)
    return paths


def test_the_summary_keeps_the_first_peak_the_last_epoch_and_the_papers_cell_only_where_it_has_one(tmp_path):
    paths = _results(
        tmp_path,
        {
            ("mnist", "sym0.8", 1): [0.5, 0.9, 0.9, 0.2],
            ("mnist", "sym0.8", 2): [0.4, 0.6, 0.7, 0.8],
            ("mine", "sym0.8", 1): [0.3, 0.1, 0.2, 0.25],
        },
    )
    curves = epoch_curves(collect_records(paths))
    assert len(curves) == 12 and curves.groupby("seed")["epoch"].max().eq(4).all()
    summary = curve_summary(curves, paper_names={"mnist": "MNIST", "mine": None}).set_index(["dataset", "seed"])
    assert summary.loc[("mnist", 1), ["peak", "peak_epoch", "last"]].tolist() == [90.0, 2, 20.0]
    assert summary.loc[("mnist", 2), ["peak", "peak_epoch", "last"]].tolist() == [80.0, 4, 80.0]
    assert summary.loc[("mnist", 1), "published"] == summary.loc[("mnist", 2), "published"] == 81.5
    assert np.isnan(summary.loc[("mine", 1), "published"])


def test_render_writes_every_epoch_the_summary_and_the_figure(tmp_path):
    paths = _results(tmp_path, {("mnist", "asym0.4", 1): [0.7, 0.95, 0.8]})
    outputs = {
        "markdown": tmp_path / "c.md",
        "csv": tmp_path / "c.csv",
        "png": tmp_path / "c.png",
        "pdf": tmp_path / "c.pdf",
    }
    render_test_curves(results=paths, paper_names={"mnist": "MNIST"}, dpi=50, decimals=2, **outputs)
    written = pd.read_csv(outputs["csv"])
    assert written["test_accuracy"].round(6).tolist() == [70.0, 95.0, 80.0]
    table = outputs["markdown"].read_text()
    assert "| mnist " in table and "81.10" in table and "95.00" in table  # the paper's CE cell at asymmetric 0.4
    assert outputs["png"].stat().st_size > 0 and outputs["pdf"].stat().st_size > 0
