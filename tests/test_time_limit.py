"""A run under a time limit (``python -m enkcvs.runs run --time-limit``): stopped whole at its deadline, its
training jobs keeping their epoch checkpoints, started again where it stopped or carried; and a training job that
SLURM's SIGTERM stops at its ``--time`` goes on from its last epoch when the job is requeued."""

import json
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pandas as pd
import pytest

from enkcvs.io import read_table
from enkcvs.continuing.deadline import STOPPED_AT_LIMIT, parse_duration, run_until
from enkcvs.runs.cli import main
from enkcvs.recording.provenance import run_line
from enkcvs.training.resume import checkpoint_path


def _gone(pid: int, *, within: float = 10.0) -> bool:
    """Whether process ``pid`` has ended (or is a zombie) within ``within`` seconds."""
    stop = time.monotonic() + within
    while time.monotonic() < stop:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
        except FileNotFoundError:
            return True
        if state == "Z":
            return True
        time.sleep(0.1)
    return False


@pytest.mark.parametrize("text, seconds", [
    ("2h", 7200), ("1h30m", 5400), ("90m", 5400), ("45s", 45), ("1d", 86400), ("1.5h", 5400),
    ("1:30:00", 5400), ("90:00", 5400), ("2-00:00:00", 172800), ("2-12", 216000), ("1-1:30", 91800),
])
def test_a_time_limit_is_read_with_units_or_as_slurm_writes_it(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["3600", "", "0h", "two hours", "1:2:3:4"])
def test_a_time_limit_without_unit_or_of_nothing_is_refused(text):
    with pytest.raises(ValueError):
        parse_duration(text)


def test_run_until_stops_the_whole_process_group_at_the_deadline(tmp_path):
    script = f"sleep 600 & echo $! > {tmp_path / 'child.pid'}; wait"
    started = time.monotonic()
    assert run_until(["bash", "-c", script], deadline=time.monotonic() + 1.0) is False
    assert time.monotonic() - started < 30
    assert _gone(int((tmp_path / "child.pid").read_text()))  # the job it started, not only the command


def test_run_until_reports_a_command_that_ends_or_fails_by_itself():
    assert run_until(["true"], deadline=time.monotonic() + 60) is True
    assert run_until(["true"]) is True
    with pytest.raises(subprocess.CalledProcessError):
        run_until(["false"], deadline=time.monotonic() + 60)


def test_run_until_stops_the_whole_process_group_once_its_work_is_done(tmp_path):
    """``until`` holding stops the command as a deadline does, but reports it done: the next command takes over."""
    built = tmp_path / "built"
    script = f"sleep 600 & echo $! > {tmp_path / 'child.pid'}; touch {built}; wait"
    assert run_until(["bash", "-c", script], until=built.exists, poll=0.1) is True
    assert _gone(int((tmp_path / "child.pid").read_text()))
    started = time.monotonic()  # a deadline still stops a command whose work is never done
    assert run_until(["sleep", "600"], deadline=time.monotonic() + 1.0, until=lambda: False, poll=0.1) is False
    assert time.monotonic() - started < 30


def test_a_sigterm_to_the_caller_stops_the_command_it_started_in_its_own_group(tmp_path):
    """The command runs in a process group of its own (to be stopped whole), so a SIGTERM to the caller (SLURM's,
    at a job's time limit) must stop it too instead of leaving it running."""
    caller = subprocess.Popen([sys.executable, "-c", (
        "from enkcvs.continuing.deadline import run_until; "
        f"run_until(['bash', '-c', 'sleep 600 & echo $! > {tmp_path / 'child.pid'}; wait'], until=lambda: False, "
        "poll=0.1)")])
    child = tmp_path / "child.pid"
    for _ in range(300):
        if child.exists() and child.read_text().strip():
            break
        time.sleep(0.1)
    caller.send_signal(signal.SIGTERM)
    assert caller.wait(timeout=60) == 128 + signal.SIGTERM
    assert _gone(int(child.read_text()))


def test_a_sigterm_while_the_command_is_starting_stops_it_too(tmp_path):
    """A SIGTERM to the caller that lands before ``subprocess.Popen`` has returned (a loaded machine runs the
    command before its caller is scheduled again) must not leave the command running, unknown to the caller: it is
    held, then stops the command as soon as the caller knows it. Sent here from inside Popen, once the command runs."""
    child = tmp_path / "child.pid"
    caller = subprocess.run([sys.executable, "-c", (
        "import os, pathlib, signal, subprocess, time\n"
        "from enkcvs.continuing.deadline import run_until\n"
        "class Late(subprocess.Popen):\n"
        "    def __init__(self, *args, **kwargs):\n"
        "        super().__init__(*args, **kwargs)\n"
        f"        while not pathlib.Path({str(child)!r}).exists():\n"
        "            time.sleep(0.05)\n"
        "        os.kill(os.getpid(), signal.SIGTERM)\n"
        "subprocess.Popen = Late\n"
        f"run_until(['bash', '-c', 'echo $$ > {child}.tmp; mv {child}.tmp {child}; exec sleep 600'], "
        "until=lambda: False, poll=0.1)")], timeout=60)
    assert caller.returncode == 128 + signal.SIGTERM
    assert _gone(int(child.read_text()))


def test_a_run_stopped_at_its_time_limit_is_carried_then_goes_on_and_is_recorded(tmp_path, monkeypatch, capsys,
                                                                                 stand_in_workflow):
    """At the limit the run is stopped with the job it started, exits 124 and, with --carry-on-stop PATH, saves
    what it finished and its epoch checkpoint there; the same command started again goes on and records the run
    timed over both invocations, the save left to its owner."""
    monkeypatch.chdir(tmp_path)
    saved = tmp_path.parent / f"{tmp_path.name}-saves" / "demo.tar.gz"
    snakemake = str(stand_in_workflow(tmp_path, hang=True))
    run = ["run", "--name", "demo", "--configfile", "config.yaml", "--cores", "1", "--snakemake", snakemake,
           "--profile", "profiles/slurm", "--time-limit", "3s"]
    assert main([*run, "--carry-on-stop", str(saved)]) == STOPPED_AT_LIMIT
    assert "stopped at its time limit of 3s" in capsys.readouterr().err
    assert _gone(int((tmp_path / "job.pid").read_text()))
    assert not (tmp_path / "results" / "recorded").exists()
    with tarfile.open(saved) as archive:
        manifest = json.load(archive.extractfile("./manifest.json"))
    assert sorted(manifest["files"]) == ["results/folds/a.parquet", "results/folds/b.resume.pt"]
    assert manifest["saves"][-1]["in_flight_checkpoints"] == 1 and manifest["saves"][-1]["invocations"]
    assert "--profile profiles/slurm" in (tmp_path / "invocations.txt").read_text()

    finishing = tmp_path / "finishing"
    finishing.mkdir()
    shutil.copy(stand_in_workflow(finishing), tmp_path / "snakemake")  # this time the jobs end
    assert main(run) == 0
    provenance = json.loads((tmp_path / "results" / "recorded" / "demo" / "provenance.json").read_text())
    assert [invocation["seconds"] for invocation in provenance["invocations"]] == [30.0, 30.0]
    assert len(provenance["carried"]) == 1
    assert "(over 2 invocations, the run killed and resumed)" in run_line(tmp_path / "results" / "recorded" / "demo")
    assert saved.is_file() and not (tmp_path / "results" / "carried").exists()


def test_pending_records_each_config_whole_in_order_and_goes_on_where_it_stopped(tmp_path, monkeypatch, capsys,
                                                                               stand_in_workflow):
    """The first config is recorded within the limit, the second stopped there (saved outside the working
    directory), the third not started; the next call skips the first, restores the second from its save and
    records it, then the third. Nothing of the stopped run is written under results/recorded."""
    monkeypatch.chdir(tmp_path)
    snakemake = str(stand_in_workflow(tmp_path, hang=True, hang_on="slow.yaml"))
    for name in ("fast", "slow", "later"):
        shutil.copy(tmp_path / "config.yaml", tmp_path / f"{name}.yaml")
        (tmp_path / ".snakemake" / "recorded" / f"{name}.since").write_text("2026-11-24T00:00:00\n")
    saves = tmp_path.parent / f"{tmp_path.name}-saves"
    pending = ["pending", "fast.yaml", "slow.yaml", "later.yaml", "--time-limit", "5s", "--cores", "1",
               "--snakemake", snakemake, "--saves", str(saves)]
    assert main(pending) == STOPPED_AT_LIMIT
    assert capsys.readouterr().out.splitlines() == ["fast: recorded", "slow: stopped", "later: not started"]
    assert sorted(path.name for path in (tmp_path / "results" / "recorded").iterdir()) == ["fast"]
    assert (saves / "slow.tar.gz").is_file() and not (saves / "fast.tar.gz").exists()

    finishing = tmp_path / "finishing"
    finishing.mkdir()
    shutil.copy(stand_in_workflow(finishing), tmp_path / "snakemake")  # this time the jobs end
    assert main(pending) == 0
    assert capsys.readouterr().out.splitlines() == ["fast: recorded already", "slow: recorded", "later: recorded"]
    provenance = json.loads((tmp_path / "results" / "recorded" / "slow" / "provenance.json").read_text())
    assert len(provenance["carried"]) == 1 and provenance["configfile"] == "slow.yaml"


@pytest.mark.parametrize("arguments, problem", [
    (["a.yaml", "sub/a.yaml"], "configs recorded under one name: a; give each config its own file name"),
    (["a.yaml", "--saves", "saves"], "--saves saves lies inside the working directory"),
])
def test_pending_refuses_what_it_could_not_record_before_anything_runs(arguments, problem, tmp_path, monkeypatch,
                                                                       capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    for path in ("a.yaml", "sub/a.yaml"):
        (tmp_path / path).write_text("seeds: [1]\n")
    assert main(["pending", *arguments, "--time-limit", "1m", "--snakemake", "false"]) == 2
    assert problem in capsys.readouterr().err
    assert not (tmp_path / "results").exists() and not (tmp_path / ".snakemake").exists()


@pytest.mark.parametrize("arguments, problem", [
    (["--time-limit", "3600"], "--time-limit '3600' is no duration"),
    (["--carry-on-stop", "../saves/demo"], "--carry-on-stop needs --time-limit"),
])
def test_bad_time_limits_are_refused_before_anything_runs(arguments, problem, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "config.yaml").write_text("seeds: [1]\n")
    with pytest.raises(SystemExit):
        main(["run", "--name", "demo", "--configfile", "config.yaml", *arguments])
    assert problem in capsys.readouterr().err
    assert sorted(path.name for path in tmp_path.iterdir()) == ["config.yaml"]


FOLD_JOB = ("from enkcvs.pipeline.steps.folds import train_fold; import json, sys; "
            "train_fold(**json.loads(sys.argv[1]))")


@pytest.mark.usefixtures("single_thread")
def test_a_fold_job_sigtermed_mid_training_goes_on_from_its_last_epoch_when_started_again(tiny_inputs):
    """SLURM stops a job at its --time with SIGTERM (and the profile's retry, or a requeue, starts it again): the job
    process dies after some epoch, its checkpoint stays, and the next start ends with the table of an uninterrupted
    job, bit for bit."""
    from enkcvs.pipeline.steps.folds import train_fold

    recipe = {"model": "cnn4", "optimizer": "sgd", "lr": 0.05, "epochs": 12, "batch_size": 8, "mixup_alpha": 0.3}
    job = dict(dataset=str(tiny_inputs / "data.npz"), labels=str(tiny_inputs / "labels.parquet"), recipe=recipe,
               seed=1, num_folds=2, iteration=1, fold=2, threads=1, provenance_fields={})
    train_fold(**job, output=tiny_inputs / "reference.parquet")
    output = tiny_inputs / "k2.parquet"
    process = subprocess.Popen([sys.executable, "-c", FOLD_JOB, json.dumps({**job, "output": str(output)})])
    while not checkpoint_path(output).is_file() and process.poll() is None:
        time.sleep(0.01)
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=60) == -signal.SIGTERM
    assert checkpoint_path(output).is_file() and not output.exists()

    train_fold(**job, output=output)
    (got, got_meta), (expected, expected_meta) = read_table(output), read_table(tiny_inputs / "reference.parquet")
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    assert got_meta["validation_accuracy"] == expected_meta["validation_accuracy"]
    assert not checkpoint_path(output).exists()


def _documented_sbatch_script() -> str:
    """The sbatch script of docs/running.md's time-limit section, as a user copies it."""
    page = (Path(__file__).resolve().parents[1] / "docs" / "running.md").read_text()
    section = page.split("## A time limit", 1)[1].split("\n## ", 1)[0]
    (script,) = [block for block in re.findall(r"```bash\n(.*?)```", section, flags=re.DOTALL)
                 if block.startswith("#!/bin/bash")]
    return script


@pytest.mark.parametrize("status, requeued", [(STOPPED_AT_LIMIT, True), (0, False), (1, False)])
def test_the_documented_sbatch_script_requeues_its_job_only_when_the_run_stopped_at_its_limit(tmp_path, status,
                                                                                              requeued):
    """The script's own logic, with stand-ins for the run (exiting ``status``) and for SLURM's ``scontrol``: a run
    stopped at its limit (124) requeues the job and passes the status on; a finished or failed one does neither. That
    the requeued job's run goes on where it stopped is the tests above."""
    script = _documented_sbatch_script()
    assert "--time-limit" in script and "--profile profiles/slurm" in script
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    stand_in = tmp_path / ".venv" / "bin" / "python"
    stand_in.write_text(f'#!/bin/sh\necho "$@" > "{tmp_path}/run.txt"\nexit {status}\n')
    (tmp_path / "bin").mkdir()
    scontrol = tmp_path / "bin" / "scontrol"
    scontrol.write_text(f'#!/bin/sh\necho "$@" > "{tmp_path}/scontrol.txt"\n')
    for tool in (stand_in, scontrol):
        tool.chmod(0o755)
    (tmp_path / "job.sh").write_text(script)
    done = subprocess.run(["bash", "job.sh"], cwd=tmp_path, capture_output=True, text=True,
                          env={"PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin", "SLURM_JOB_ID": "4242"})
    assert done.returncode == status
    assert (tmp_path / "run.txt").read_text().split()[:4] == ["-m", "enkcvs.runs", "run", "--name"]
    assert (tmp_path / "scontrol.txt").exists() is requeued
    if requeued:
        assert (tmp_path / "scontrol.txt").read_text().split() == ["requeue", "4242"]


@pytest.mark.parametrize("command", [["run", "--name", "gpu"], ["pending"]])
def test_a_run_that_needs_a_gpu_this_machine_lacks_is_not_started(command, tmp_path, monkeypatch, capsys):
    """Its training jobs would each fail after the data were prepared (or, with a fallback, train on the CPU for far
    longer than its config says): refused before anything runs, naming the ways out."""
    import torch

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    (tmp_path / "gpu.yaml").write_text("seeds: [1]\ngpu: {per_training_job: 1}\n")
    arguments = [*command, *(["--configfile", "gpu.yaml"] if command[0] == "run" else ["gpu.yaml"]),
                 "--snakemake", "false", *(["--time-limit", "1m"] if command[0] == "pending" else [])]
    assert main(arguments) == 2
    assert ("gpu.yaml asks for a GPU for each training job (gpu.per_training_job: 1) and torch "
            in capsys.readouterr().err)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["gpu.yaml"]


def test_a_gpu_a_cluster_profile_or_leave_to_fall_back_lets_it_start(tmp_path, monkeypatch):
    import torch

    from enkcvs.recording.run import gpu_refusal

    (asks := tmp_path / "gpu.yaml").write_text("gpu: {per_training_job: 1}\n")
    (falls_back := tmp_path / "fallback.yaml").write_text("gpu: {per_training_job: 1, allow_cpu_fallback: true}\n")
    (cpu := tmp_path / "cpu.yaml").write_text("seeds: [1]\n")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert gpu_refusal(asks, profile=None) is not None
    assert gpu_refusal(asks, profile="profiles/slurm") is gpu_refusal(falls_back, profile=None) is None
    assert gpu_refusal(cpu, profile=None) is None
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert gpu_refusal(asks, profile=None) is None


def test_a_run_with_nothing_left_to_do_is_refused_and_records_nothing(tmp_path, monkeypatch, capsys,
                                                                      stand_in_workflow):
    """Every output is there already (an earlier run's): no invocation ran a job, so there is no run to time, and a
    record would claim one of 0 s."""
    monkeypatch.chdir(tmp_path)
    snakemake = stand_in_workflow(tmp_path)
    snakemake.write_text("#!/usr/bin/env bash\necho 'Nothing to be done'\n")
    run = ["run", "--name", "demo", "--configfile", "config.yaml", "--cores", "1", "--snakemake", str(snakemake)]
    assert main(run) == 2
    assert "no job of config.yaml ran here since 2026-11-24 00:00" in capsys.readouterr().err
    assert not (tmp_path / "results" / "recorded").exists()
