"""A run carried to another machine through a folder or archive of the user's: saved from one working directory and
restored into an empty one, it trains nothing again and ends with the same results; a damaged or clashing carry, or
a save into the working directory, is refused first."""

import json
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml

from enkcvs.continuing.carry import (
    TRAINING_RULES,
    benchmark_file,
    carried_saves,
    is_training_rule,
    restore_run,
    save_run,
    saves_file,
    training_rules,
    upstream_rules,
)
from enkcvs.runs.cli import main
from enkcvs.training.resume import checkpoint_path

REPO = Path(__file__).resolve().parents[1]
TINY_CONFIG = REPO / "tests" / "config" / "tiny.yaml"
SNAKEMAKE = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile")]


def planned_rules(dry_run_output: str) -> set[str]:
    return set(re.findall(r"^rule (\w+):", dry_run_output, re.MULTILINE))


@pytest.mark.workflow
def test_a_carried_run_trains_nothing_again_and_ends_with_the_same_results(tiny_run, tmp_path, monkeypatch,
                                                                           run_snakemake, result_files):
    first = tmp_path / "first"
    shutil.copytree(tiny_run, first)  # keeps modification times; tiny_run is only read
    shutil.rmtree(first / "results" / "report")  # the run is not finished: its report is still to be rendered
    (first / ".snakemake" / "recorded").mkdir()
    (first / ".snakemake" / "recorded" / "tiny.since").write_text("2000-01-01T00:00:00\n")
    trained = sorted(str(path.relative_to(first)) for stage in ("folds", "final")
                     for path in (first / "results" / stage).rglob("*") if path.is_file())
    monkeypatch.chdir(first)
    folder = save_run(name="tiny", snakemake=SNAKEMAKE, configfile=TINY_CONFIG, to=tmp_path / "carried" / "tiny")
    manifest = json.loads((folder / "manifest.json").read_text())
    assert trained and set(trained) <= set(manifest["files"])
    assert not [path for path in manifest["files"] if path.startswith(("results/data/", "results/noise/"))]
    assert manifest["saves"][0]["training_jobs"] == len(trained)
    assert manifest["saves"][0]["in_flight_checkpoints"] == 0
    assert manifest["saves"][0]["invocations"]  # the invocations the recorder times the run over travel with it

    second = tmp_path / "second"
    second.mkdir()
    monkeypatch.chdir(second)
    assert restore_run(name="tiny", snakemake=SNAKEMAKE, configfile=TINY_CONFIG, cores="2",
                       source=folder) == len(manifest["files"])
    dry = run_snakemake(second, "-n")
    assert dry.returncode == 0, dry.stderr[-3000:]
    rerun = planned_rules(dry.stdout + dry.stderr)
    assert "table2" in rerun and not rerun & {*TRAINING_RULES, "select_samples", "confident_learning_selection"}
    assert (second / ".snakemake" / "recorded" / "tiny.since").read_text() == "2000-01-01T00:00:00\n"
    assert sorted(path.name for path in (second / ".snakemake" / "log").glob("*.snakemake.log")) \
        >= manifest["saves"][0]["invocations"]

    done = run_snakemake(second)
    assert done.returncode == 0, done.stderr[-3000:]
    expected, got = result_files(tiny_run), result_files(second)
    assert sorted(got) == sorted(expected)
    assert [name for name in expected if expected[name] != got[name]] == []


@pytest.mark.workflow
def test_a_carry_takes_the_checkpoints_of_its_own_unfinished_jobs_and_no_other(tiny_run, tmp_path, monkeypatch):
    """A job still training when the run is saved travels with its epoch checkpoint and goes on from it after the
    restore; a checkpoint of a job outside the run (another config trained in the same working directory) stays.
    Saved as an archive this time."""
    first = tmp_path / "first"
    shutil.copytree(tiny_run, first)
    fold = sorted((first / "results" / "folds").rglob("*.parquet"))[0]
    fold.unlink()  # its job is still training
    in_flight = str(checkpoint_path(fold.relative_to(first)))
    foreign = str(fold.relative_to(first).with_name("k9.resume.pt"))
    (first / in_flight).write_bytes(b"epoch 3 of 10")
    (first / foreign).write_bytes(b"epoch 5 of 10")
    monkeypatch.chdir(first)
    archive = save_run(name="tiny", snakemake=SNAKEMAKE, configfile=TINY_CONFIG, to=tmp_path / "saves" / "tiny.tgz")
    with tarfile.open(archive) as opened:
        manifest = json.load(opened.extractfile("./manifest.json"))
    assert [path for path in manifest["files"] if path.endswith(".resume.pt")] == [in_flight]
    assert manifest["saves"][0]["in_flight_checkpoints"] == 1

    second = tmp_path / "second"
    second.mkdir()
    monkeypatch.chdir(second)
    restore_run(name="tiny", snakemake=SNAKEMAKE, configfile=TINY_CONFIG, cores="2", source=archive)
    assert (second / in_flight).read_bytes() == b"epoch 3 of 10"  # its job goes on from that epoch
    assert not (second / foreign).exists()


def carried_by_hand(root: Path, files: dict[str, bytes], digests: dict[str, str], saves: list[dict] = ()) -> None:
    """A carried run ``root/run/`` holding ``files`` whose manifest claims ``digests``."""
    (root / "run").mkdir(parents=True, exist_ok=True)
    for path, content in files.items():
        (root / "run" / "files" / path).parent.mkdir(parents=True, exist_ok=True)
        (root / "run" / "files" / path).write_bytes(content)
    (root / "run" / "manifest.json").write_text(json.dumps({"name": "run", "files": digests, "saves": [*saves]}))


EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def test_a_damaged_carried_file_is_refused_before_anything_is_written(tmp_path, monkeypatch):
    carried_by_hand(tmp_path / "carried", {"results/folds/k1.parquet": b"changed"},
                    {"results/folds/k1.parquet": EMPTY_SHA256})
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=r"differ from their SHA-256 .* results/folds/k1.parquet"):
        restore_run(name="run", snakemake=["false"], configfile="c.yaml", source=tmp_path / "carried" / "run")
    assert not (tmp_path / "results").exists()


def test_a_restore_over_another_version_of_the_run_is_refused(tmp_path, monkeypatch):
    carried_by_hand(tmp_path / "carried", {"results/folds/k1.parquet": b""},
                    {"results/folds/k1.parquet": EMPTY_SHA256})
    (tmp_path / "results" / "folds").mkdir(parents=True)
    (tmp_path / "results" / "folds" / "k1.parquet").write_bytes(b"trained here")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=r"differ from the carried run run, e.g. results/folds/k1.parquet.*make clean"):
        restore_run(name="run", snakemake=["false"], configfile="c.yaml", source=tmp_path / "carried" / "run")
    assert (tmp_path / "results" / "folds" / "k1.parquet").read_bytes() == b"trained here"


def _save(saved: str, jobs: int, checkpoints: int) -> dict:
    return {"saved": saved, "training_jobs": jobs, "in_flight_checkpoints": checkpoints, "git": {"commit": "c"}}


def test_a_run_that_went_on_here_is_not_restored_over_from_the_folder_it_began_with(tmp_path, monkeypatch):
    """A working directory that restored a run, trained and saved it, and then holds the carried folder it began
    from again (a job script that restores before every run, a checkout of the commit it started from): restoring
    it would bring back older copies of what went on (an epoch checkpoint) and lose the later save from the record.
    Both are kept; after `make clean` it restores again."""
    first, second = _save("10:00 UTC", 1, 1), _save("11:00 UTC", 3, 1)
    files = {"results/folds/k1.parquet": b"", "results/folds/k2.resume.pt": b""}
    carried_by_hand(tmp_path / "carried", files, dict.fromkeys(files, EMPTY_SHA256), saves=[first])
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results" / "folds").mkdir(parents=True)
    (tmp_path / "results" / "folds" / "k1.parquet").write_bytes(b"")
    (tmp_path / "results" / "folds" / "k2.resume.pt").write_bytes(b"epoch 9 of 10")  # trained on since
    saves_file("run").parent.mkdir(parents=True)
    saves_file("run").write_text(json.dumps([first, second]))

    assert restore_run(name="run", snakemake=["false"], configfile="c.yaml", source=tmp_path / "carried" / "run") == 0
    assert (tmp_path / "results" / "folds" / "k2.resume.pt").read_bytes() == b"epoch 9 of 10"
    assert carried_saves("run") == [first, second]

    shutil.rmtree(tmp_path / "results")  # make clean
    with pytest.raises(RuntimeError):  # the restore starts: its Snakemake here is `false`
        restore_run(name="run", snakemake=["false"], configfile="c.yaml", source=tmp_path / "carried" / "run")


def test_restoring_a_run_never_carried_names_the_command_that_saves_one(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text("{}\n")
    assert main(["restore", "--name", "nothing", "--configfile", "c.yaml", "--from", "../saves/nothing"]) == 2
    assert ("../saves/nothing holds no saved run: save one with `python -m enkcvs.runs carry --name nothing "
            "--configfile c.yaml --to ../saves/nothing`") in capsys.readouterr().err


def test_a_restore_of_another_runs_save_is_refused_with_its_name(tmp_path, monkeypatch):
    carried_by_hand(tmp_path / "carried", {}, {})
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="holds the run 'run', not 'other': restore it with --name run"):
        restore_run(name="other", snakemake=["false"], configfile="c.yaml", source=tmp_path / "carried" / "run")


@pytest.mark.parametrize("inside", ["saves/run", "results/carried/run.tar.gz", "."])
def test_a_save_into_the_working_directory_is_refused_before_anything_is_written(inside, tmp_path, monkeypatch,
                                                                                 capsys):
    """A checkout would carry its checkpoints in git's history, and `make clean` would remove it."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text("{}\n")
    assert main(["carry", "--name", "run", "--configfile", "c.yaml", "--to", inside, "--snakemake", "false"]) == 2
    assert f"--to {inside} lies inside the working directory" in capsys.readouterr().err
    assert sorted(path.name for path in tmp_path.iterdir()) == ["c.yaml"]


def test_the_rules_that_train_several_models_are_carried_as_training_rules(tmp_path, monkeypatch):
    """With ``training_jobs: setting`` the training rules are named after their settings: a save still leaves them
    out of what a restore rebuilds, and finds each output's benchmark file where its job writes it."""
    config = yaml.safe_load(TINY_CONFIG.read_text()) | {"training_jobs": "setting"}
    (configfile := tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    monkeypatch.chdir(tmp_path)
    rules = training_rules(snakemake=SNAKEMAKE, configfile=configfile)
    assert any(rule.startswith("train_selection_digits_") for rule in rules)
    assert any(rule.startswith("train_finals_digits_") for rule in rules)
    upstream = upstream_rules(snakemake=SNAKEMAKE, configfile=configfile)
    assert "inject_noise" in upstream and not [rule for rule in upstream if is_training_rule(rule)]
    assert "select_samples" not in upstream
    dry = subprocess.run([*SNAKEMAKE, "--configfile", str(configfile), "-n"], capture_output=True, text=True)
    assert dry.returncode == 0, dry.stderr[-3000:]
    jobs = re.findall(r"^rule (train_(?:selection|finals)_\w+):\n(.*?)(?=^\S|\Z)", dry.stdout, re.MULTILINE | re.DOTALL)
    assert len(jobs) >= 2
    for rule, block in jobs:
        fields = dict(re.findall(r"^\s+(\w+): (.*)$", block, re.MULTILINE))
        outputs = [path.strip() for path in fields["output"].split(",")]
        assert {benchmark_file(output, rule) for output in outputs} == {fields["benchmark"]}, rule
