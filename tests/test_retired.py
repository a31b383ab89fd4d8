"""Retired recorded runs: the history benchmarks/retire_runs.py writes from their folders keeps what the pages cite,
and the pages' blocks over it read as the blocks over the folders did."""

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from enkcvs.recording.record import record_run
from enkcvs.recording.retire import run_history
from enkcvs.report.pages.blocks import render_block

REPO = Path(__file__).resolve().parents[1]


def _record(home: Path, tmp_path: Path, name: str, *, means: list[float], wall_seconds: float = 60.0) -> Path:
    """A recorded run of one setting: Table 2 with two methods' means, a training rule's job times."""
    report = tmp_path / f"report-{name}"
    report.mkdir()
    pd.DataFrame(
        {
            "dataset": ["d", "d"],
            "noise_kind": ["sym", "sym"],
            "noise_rate": [0.2, 0.2],
            "method": ["ce", "enkcvs"],
            "mean": means,
            "std": [1.0, float("nan")],
            "runs": [2, 1],
        }
    ).to_csv(report / "table2.csv", index=False)
    (report / "table2.md").write_text("| a |\n|---|\n| 1 |\n")
    pd.DataFrame({"rule": ["train_fold"], "jobs": [4], "wall_s_total": [12.5]}).to_csv(
        report / "resources.csv", index=False
    )
    config = tmp_path / "config.yaml"
    config.write_text("seeds: [1, 2]\nsensitivity: {K: [2, 3, 4]}\n")
    return record_run(
        name=name,
        configfile=config,
        report=report,
        wall_seconds=wall_seconds,
        jobs=7,
        command=["workflow/run.sh", "--cores", "2"],
        root=home,
    )


@pytest.fixture
def runs(tmp_path):
    home = tmp_path / "results" / "recorded"
    return {
        name: _record(home, tmp_path, name, means=means, wall_seconds=seconds)
        for name, means, seconds in (
            ("before", [80.0, 90.0], 90.0),
            ("after", [80.0, 90.5], 45.0),
            ("current", [81.0, 92.0], 30.0),
        )
    }


def test_a_history_keeps_each_runs_provenance_config_job_times_and_table2(runs):
    history = run_history(
        what="a pair", runs=[runs["before"], runs["after"]], differences=[(runs["after"], runs["before"])]
    )
    before = history["runs"]["before"]
    provenance = json.loads((runs["before"] / "provenance.json").read_text())
    assert {key: before[key] for key in ("recorded", "machine", "git", "wall_seconds", "jobs")} == {
        key: provenance[key] for key in ("recorded", "machine", "git", "wall_seconds", "jobs")
    }
    assert before["config"] == {"seeds": [1, 2], "sensitivity": {"K": [2, 3, 4]}}
    assert before["training_jobs_by_rule"] == [{"rule": "train_fold", "jobs": 4, "wall_s_total": 12.5}]
    assert [cell["std"] for cell in before["table2"]] == [1.0, None]
    assert json.loads(json.dumps(history, allow_nan=False)) == history  # strict JSON: no NaN
    with pytest.raises(ValueError, match="named twice"):
        run_history(what="twice", runs=[runs["before"], runs["before"]])


def test_blocks_over_a_history_read_as_those_over_the_runs_did(runs, tmp_path):
    home = runs["before"].parent
    results = tmp_path / "benchmarks" / "results"
    results.mkdir(parents=True)
    (results / "history.json").write_text(
        json.dumps(
            run_history(
                what="a pair",
                runs=[runs["before"], runs["after"]],
                differences=[(runs["after"], runs["before"]), (runs["current"], runs["after"])],
            )
        )
    )
    recorded = {
        key: render_block(key, root=home, results=results)
        for key in ("after/diff:before", "current/diff:after", "current/table2-beside:before")
    }
    assert recorded["after/diff:before"].startswith("`after` against `before`: 1 of ")
    for name in ("before", "after"):
        (runs[name] / "provenance.json").unlink()  # retired: no longer a recorded run
    assert render_block("history/diff:after:before", root=home, results=results) == recorded["after/diff:before"]
    assert render_block("history/diff:current:after", root=home, results=results) == recorded["current/diff:after"]
    assert (
        render_block("history/table2-beside:current:before", root=home, results=results)
        == recorded["current/table2-beside:before"]
    )
    line = render_block("history/run:after", root=home, results=results)
    assert line.startswith("Run `after` (`") and "7 jobs in 45.0 s of `snakemake` on 2 of the " in line
    assert line.endswith("; its folder retired, its provenance kept in `benchmarks/results/history.json`.\n")
    with pytest.raises(KeyError, match="no retired run 'elsewhere'.*'after', 'before'"):
        render_block("history/run:elsewhere", root=home, results=results)
    with pytest.raises(KeyError, match="no difference of before against after"):
        render_block("history/diff:before:after", root=home, results=results)
    with pytest.raises(ValueError, match="<history>/run:<retired run>"):
        render_block("history/diff:after", root=home, results=results)


def test_retire_runs_writes_the_history_with_the_command_that_made_it(runs, tmp_path):
    out = tmp_path / "history.json"
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "retire_runs.py"),
            "--out",
            str(out),
            "--what",
            "a pair",
            "--runs",
            str(runs["before"]),
            str(runs["after"]),
            "--diff",
            f"{runs['after']}:{runs['before']}",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "after against before: 1 of " in done.stdout
    history = json.loads(out.read_text())
    assert list(history["runs"]) == ["before", "after"] and history["what"] == "a pair"
    assert history["made_by"].startswith("python benchmarks/retire_runs.py --out ")
    assert [(item["second"], item["first"]) for item in history["differences"]] == [("after", "before")]
