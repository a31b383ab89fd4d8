"""The K = 10, M = 5 cells of the full-MNIST row (:mod:`enkcvs.recording.cells`): written from their parent config
and the GPU rate of a named record, dry-run through ``python -m enkcvs.runs cells``, and never recorded from a changed
tree or beside cells of another commit."""

import json
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from enkcvs.recording import cells
from enkcvs.runs.cli import main

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))


def test_the_shipped_cells_are_the_ones_written_from_their_parent_config_and_the_records_rate():
    """`python -m enkcvs.runs cells --write` makes them: a changed parent, rate or header shows here."""
    written = cells.cell_files(root=REPO)
    assert sorted(written) == sorted(path.name for path in cells.cells(root=REPO))
    for name, text in written.items():
        assert (REPO / cells.CELLS / name).read_text() == text, f"{name}: run `python -m enkcvs.runs cells --write`"


def test_the_gpu_rate_is_the_named_records_gpu_part():
    """results/recorded/mnist-full-k10 was begun on a 2-core CPU, which had trained 6 models (2 more in flight) at its
    last save; an H200 ran the rest, its 44 fold models and 6 final ones, in the invocations after that save:
    6.4 + 492.8 + 41.5 s."""
    rate = cells.gpu_rate(record=REPO / "results" / "recorded" / "mnist-full-k10")
    assert (rate.gpu, rate.models, rate.resumed, rate.gpu_jobs, rate.bf16) == ("NVIDIA H200", 50, 2, 12, True)
    assert rate.seconds == pytest.approx(6.4 + 492.8 + 41.5)


@pytest.mark.parametrize("cell", cells.cells(root=REPO), ids=lambda path: path.stem)
def test_each_headers_expected_minutes_are_its_models_at_the_named_records_rate(cell):
    """The header names the record and its GPU, and its minutes are the cell's models (its folds, a final model of
    each method, Co-teaching's two networks) at that record's seconds a model, under an hour; bf16's rate, so the
    fp32 cell's time is a lower bound."""
    config = yaml.safe_load(cell.read_text())
    text = " ".join(line[2:] for line in cell.read_text().splitlines() if line.startswith("# "))
    (record,) = re.findall(r"results/recorded/([\w.-]+) measured", text)
    rate = cells.gpu_rate(record=REPO / "results" / "recorded" / record)
    assert record == cells.RATE_RECORD and rate.bf16 and "lower bound" in text and f"one {rate.gpu} with" in text
    K, M = config["selection"]["K"], config["selection"]["M"]
    models = len(config["seeds"]) * (M * K + 4 + 1)
    (minutes,) = map(int, re.findall(r"Expected: at least (\d+) min", text))
    assert minutes == math.ceil(models * rate.seconds / rate.models / 60) <= 60
    assert f"its {models} models" in text


def test_the_guide_names_the_command_and_the_rate_the_headers_times_come_from():
    """docs/running.md's paragraph on the cells (which leaves the figures to the headers): the command, what a cell
    holds, and the record, GPU and jobs side by side of the rate behind every header's time, each under an hour."""
    guide = " ".join((REPO / "docs" / "running.md").read_text().split())
    rate = cells.gpu_rate(record=REPO / cells.RUN_HOME / cells.RATE_RECORD)
    assert "make record-cells PROFILE=profiles/gpu-node" in guide and "DRY_RUN=1" in guide
    assert "seven full-MNIST noise settings" in guide and len(cells.SETTINGS) == 7
    assert "seeds 1, 2 and 3" in guide and cells.SEEDS == (1, 2, 3) and "`bf16: false`" in guide
    assert f"`results/recorded/{rate.record}` measured on one {rate.gpu} with {rate.gpu_jobs} training jobs" in guide
    assert "under an hour" in guide and "lower bound" in guide
    config = yaml.safe_load(cells.cells(root=REPO)[0].read_text())
    assert cells.expected_seconds(config=config, rate=rate) <= cells.LIMIT_SECONDS


@pytest.fixture
def clone(repository_copy, commit_all, monkeypatch):
    """A committed copy of the repository with the record that times the cells, as the working directory."""
    record = Path(cells.RUN_HOME) / cells.RATE_RECORD
    shutil.copytree(REPO / record, repository_copy / record)
    commit = commit_all(repository_copy)
    monkeypatch.chdir(repository_copy)
    return repository_copy, commit


def test_the_dry_run_of_every_cell_succeeds_through_the_command_and_trains_nothing(clone, capsys):
    folder, _ = clone
    assert main(["cells", "--dry-run", "--snakemake", SNAKEMAKE]) == 0
    lines = capsys.readouterr().out.splitlines()
    shipped = cells.cells(root=folder)
    assert [line.split(":")[0] for line in lines] == [path.name for path in shipped]
    for line, cell in zip(lines, shipped):
        # per seed: 50 fold models and a final model of each of the four methods
        assert re.search(
            r": \d+ jobs, 162 of them training; expected at least \d+ min on one NVIDIA H200 with 12", line
        )
        minutes = re.search(r"Expected: at least (\d+) min", cell.read_text().replace("\n# ", " ")).group(1)
        assert f"at least {minutes} min" in line and line.endswith("to record")
    assert not (folder / "results" / "final").exists()


def test_a_changed_tree_records_nothing(clone, capsys):
    folder, _ = clone
    with (folder / "workflow" / "Snakefile").open("a") as handle:
        handle.write("\n# changed\n")
    assert main(["cells", "--snakemake", "/bin/false"]) == 2
    assert "commit or drop the changes first" in capsys.readouterr().err
    assert not list((folder / cells.RUN_HOME).glob(f"{cells.RECORD_PREFIX}*"))


def _recorded(folder: Path, cell: Path, commit: str) -> None:
    record = folder / cells.RUN_HOME / cells.record_name(cell=cell)
    record.mkdir(parents=True)
    (record / "provenance.json").write_text(json.dumps({"git": {"commit": commit, "dirty": False}}))


def test_a_cell_recorded_at_another_commit_stops_the_row(clone, capsys):
    folder, _ = clone
    _recorded(folder, cells.cells(root=folder)[0], "0" * 40)
    assert main(["cells", "--snakemake", "/bin/false"]) == 2
    error = capsys.readouterr().err
    assert f"{cells.RECORD_PREFIX}01-asym0.4 was recorded at 000000000000" in error and "at one commit" in error


def test_cells_recorded_at_the_checkouts_commit_are_skipped(clone, capsys):
    folder, commit = clone
    for cell in cells.cells(root=folder):
        _recorded(folder, cell, commit)
    # the snakemake given fails: nothing runs
    assert main(["cells", "--snakemake", "/bin/false"]) == 0
    assert capsys.readouterr().out.count("skipped") == len(cells.cells(root=folder))


def test_a_cell_runs_with_the_profile_and_twelve_gpu_jobs_on_the_command_line(clone, tmp_path):
    folder, _ = clone
    called = tmp_path / "called"
    fake = tmp_path / "snakemake"  # notes how it was called and fails: the first cell stops the command
    fake.write_text(f'#!/bin/sh\necho "$@" >> {called}\nexit 1\n')
    fake.chmod(0o755)
    assert main(["cells", "--profile", "profiles/gpu-node", "--snakemake", str(fake)]) == 2
    run = called.read_text().splitlines()[-1]
    assert "--profile profiles/gpu-node --resources gpu=12" in run
    assert run.endswith(f"--configfile {cells.CELLS}/01-asym0.4.yaml")


def test_the_make_target_runs_the_command():
    done = subprocess.run(
        ["make", "-n", "record-cells", "PROFILE=profiles/gpu-node", "DRY_RUN=1"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "-m enkcvs.runs cells --profile profiles/gpu-node --dry-run" in done.stdout
