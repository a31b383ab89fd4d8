"""A sitting of bounded length (make gpu-sitting): a run stopped at its deadline, its whole process group with it,
and carried; a run that finishes recorded; either packed into one archive that unpacks in place."""

import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from enkcvs.io import git_state
from enkcvs.machine import machine_description
from enkcvs.runs.carry import run_until
from enkcvs.runs.sitting import main, pack_folder, sit, unpack

REPO = Path(__file__).resolve().parents[1]


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
    """The command runs in a process group of its own (to be stopped whole), so a ``kill`` of the caller must stop
    it too instead of leaving it running."""
    caller = subprocess.Popen([sys.executable, "-c", (
        "from enkcvs.runs.carry import run_until; "
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


def _files(archive: Path) -> list[str]:
    """The regular files an archive holds, by path."""
    with tarfile.open(archive) as tar:
        return [member.name for member in tar.getmembers() if member.isfile()]


@pytest.mark.parametrize("limits", [{}, {"max_pack_bytes": 1}, {"max_pack_files": 0}], ids=["fits", "bytes", "files"])
def test_a_run_stopped_at_the_time_limit_is_carried_and_the_next_is_left(limits, tmp_path, monkeypatch,
                                                                          stand_in_workflow):
    """Over what the machine gives back (in bytes or in files), the carried run is packed without its checkpoints."""
    monkeypatch.chdir(tmp_path)
    snakemake = str(stand_in_workflow(tmp_path, hang=True))
    (tmp_path / "pack").mkdir()
    outcomes = sit(runs=[["demo", "config.yaml"], ["later", "config.yaml"]], seconds=3, cores="1",
                   snakemake=snakemake, pack=tmp_path / "pack", **limits)
    dropped = bool(limits)  # over a limit: packed again without its checkpoint
    carried = "stopped at the time limit and carried" + (" without its 1 epoch checkpoints" if dropped else "")
    assert [outcome["outcome"] for outcome in outcomes] == [carried, "not started: the time was up"]
    assert _gone(int((tmp_path / "job.pid").read_text()))
    assert not (tmp_path / "results" / "recorded").exists()
    manifest = json.loads((tmp_path / "results" / "carried" / "demo" / "manifest.json").read_text())
    kept = ["results/folds/a.parquet"] + ([] if dropped else ["results/folds/b.resume.pt"])
    assert sorted(manifest["files"]) == kept
    assert manifest["saves"][-1]["in_flight_checkpoints"] == len(kept) - 1
    assert manifest["saves"][-1]["machine"] == machine_description()
    [archive] = outcomes[0]["archives"]
    assert sorted(path.name for path in (tmp_path / "pack").iterdir()) == [archive.name]  # the dropped one is gone
    files = _files(archive)
    assert "results/carried/demo/manifest.json" in files  # unpacks in place in the root
    folder = "results/carried/demo/files/"
    assert sorted(name.removeprefix(folder) for name in files if name.startswith(folder)) == kept


def test_a_second_call_on_a_machine_still_holding_the_run_goes_on_from_it_and_keeps_every_save(tmp_path, monkeypatch,
                                                                                                 stand_in_workflow):
    """A lent machine's next call is sent the carried folder its first call began from, older than the run it still
    holds: the run goes on from what it holds, and the next save lists the first call's save too."""
    monkeypatch.chdir(tmp_path)
    snakemake = str(stand_in_workflow(tmp_path, hang=True))
    (tmp_path / "pack").mkdir()
    folder = tmp_path / "results" / "carried" / "demo"

    def call() -> list[dict]:
        sit(runs=[["demo", "config.yaml"]], seconds=3, cores="1", snakemake=snakemake, pack=tmp_path / "pack")
        return json.loads((folder / "manifest.json").read_text())["saves"]

    [earlier] = call()  # the save the folder sent to the machine holds
    sent = tmp_path / "sent"
    shutil.copytree(folder, sent)
    first_call = call()
    shutil.rmtree(folder)
    shutil.copytree(sent, folder)  # the next call's copy of the repository
    assert call()[:2] == first_call and first_call[0] == earlier


def test_what_a_device_run_is_sent_is_made_to_fit_by_dropping_carried_checkpoints(tmp_path, monkeypatch):
    from enkcvs.runs.sitting import fit_send, send_bytes

    monkeypatch.chdir(tmp_path)
    for name, size in {"code.py": 100, "gone.py": 50, "results/carried/big/files/results/folds/a.resume.pt": 3000,
                       "results/carried/big/files/results/folds/b.parquet": 200,
                       "results/carried/small/files/results/folds/c.resume.pt": 1000,
                       ".whl/snakemake.whl": 400, "untracked.txt": 10, ".venv/huge": 10**6}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"x" * size)
    for run, files in {"big": ["results/folds/a.resume.pt", "results/folds/b.parquet"],
                       "small": ["results/folds/c.resume.pt"]}.items():
        (tmp_path / "results" / "carried" / run / "manifest.json").write_text(json.dumps(
            {"files": dict.fromkeys(files, "-"), "saves": [{"in_flight_checkpoints": 1}]}))
    (tmp_path / ".gitignore").write_text(".whl/\n.venv/\n")
    subprocess.run("git init -q && git add code.py gone.py results .gitignore && rm gone.py", shell=True, check=True)
    manifests = sum(len((tmp_path / "results" / "carried" / run / "manifest.json").read_bytes())
                    for run in ("big", "small"))
    sent = 100 + 3000 + 200 + 1000 + 10 + 400 + manifests + len(".whl/\n.venv/\n")
    assert send_bytes(carry=[".whl"]) == sent  # neither the deleted file nor an ignored path not carried

    with pytest.raises(ValueError, match="more than the carried runs' epoch checkpoints"):
        fit_send(max_bytes=sent - 4001, carry=[".whl"])
    assert (tmp_path / "results" / "carried" / "big" / "files" / "results" / "folds" / "a.resume.pt").exists()
    assert fit_send(max_bytes=sent, carry=[".whl"]) == []
    assert fit_send(max_bytes=sent - 1, carry=[".whl"]) == ["big"]  # the largest first, and no more
    manifest = json.loads((tmp_path / "results" / "carried" / "big" / "manifest.json").read_text())
    assert manifest["files"] == {"results/folds/b.parquet": "-"} and manifest["saves"][-1]["in_flight_checkpoints"] == 0
    assert (tmp_path / "results" / "carried" / "small" / "files" / "results" / "folds" / "c.resume.pt").exists()


def test_a_run_that_finishes_within_the_time_is_recorded_and_packed(tmp_path, monkeypatch, stand_in_workflow):
    monkeypatch.chdir(tmp_path)
    snakemake = str(stand_in_workflow(tmp_path))
    (tmp_path / "pack").mkdir()
    [outcome] = sit(runs=[["demo", "config.yaml", "a.json"]], seconds=60, cores="1", snakemake=snakemake,
                    pack=tmp_path / "pack")
    assert outcome["outcome"] == "finished and recorded"
    assert "results/recorded/demo/provenance.json" in _files(outcome["archives"][0])
    assert (tmp_path / "invocations.txt").read_text().splitlines()[0].startswith("--rerun-incomplete a.json")


def test_an_archive_unpacks_in_place_and_a_record_retires_the_carried_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for home, content in (("results/carried/demo", "carried"), ("results/recorded/demo", "recorded")):
        (tmp_path / home / "files").mkdir(parents=True)
        (tmp_path / home / "files" / "a.txt").write_text(content)
        pack_folder(Path(home), into=tmp_path / home.split("/")[1])
    shutil.rmtree(tmp_path / "results")
    (tmp_path / "results" / "carried" / "demo").mkdir(parents=True)
    (tmp_path / "results" / "carried" / "demo" / "stale.txt").write_text("an older save")
    assert main(["--unpack", "carried/demo.tar.gz"]) == 0
    assert sorted(path.name for path in (tmp_path / "results" / "carried" / "demo").rglob("*")) == ["a.txt", "files"]
    assert unpack("recorded/demo.tar.gz") == Path("results/recorded/demo")
    assert (tmp_path / "results" / "recorded" / "demo" / "files" / "a.txt").read_text() == "recorded"
    assert not (tmp_path / "results" / "carried" / "demo").exists()  # the record holds the run now


def test_an_archive_over_the_size_a_file_may_have_travels_in_volumes_that_unpack_from_the_first(tmp_path,
                                                                                                 monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    folder = Path("results/carried/demo")
    (folder / "files").mkdir(parents=True)
    payload = np.random.default_rng(0).bytes(5000)  # incompressible: the archive stays over 5000 bytes
    (folder / "files" / "a.bin").write_bytes(payload)
    (tmp_path / "pack").mkdir()
    volumes = pack_folder(folder, into=tmp_path / "pack", volume_bytes=2048)
    assert [volume.name for volume in volumes] == [f"demo.tar.gz.{number}" for number in range(1, len(volumes) + 1)]
    assert len(volumes) >= 3 and all(volume.stat().st_size <= 2048 for volume in volumes)
    assert sorted(path.name for path in (tmp_path / "pack").iterdir()) == [volume.name for volume in volumes]
    shutil.rmtree("results")
    assert main(["--unpack", str(volumes[1])]) == 2  # a later volume alone: its first one brings it
    assert "unpack its volume 1" in capsys.readouterr().err and not Path("results").exists()
    assert main(["--unpack", *map(str, reversed(volumes))]) == 0  # all of them, in any order: unpacked once
    assert capsys.readouterr().out.count(" -> ") == 1
    assert (folder / "files" / "a.bin").read_bytes() == payload
    assert pack_folder(folder, into=tmp_path, volume_bytes=10**6) == [tmp_path / "demo.tar.gz"]  # fits: whole


@pytest.mark.parametrize("name", ["results/carried/demo/../../../outside.txt", "outside.txt", "results/demo/a.txt"])
def test_an_archive_of_anything_but_one_runs_folder_is_refused_before_anything_is_written(name, tmp_path,
                                                                                           monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.txt").write_text("payload")
    with tarfile.open(tmp_path / "bad.tar.gz", "w:gz") as tar:
        tar.add(tmp_path / "a.txt", arcname=name)
    assert main(["--unpack", "bad.tar.gz"]) == 2
    assert "not one run's folder under results/recorded/ or results/carried/" in capsys.readouterr().err
    assert sorted(path.name for path in tmp_path.iterdir()) == ["a.txt", "bad.tar.gz"]


@pytest.mark.parametrize("arguments, problem", [
    (["--run", "demo", "--seconds", "5", "--pack", "."], "give the run's name and its config file"),
    (["--run", "demo", "missing.yaml", "--seconds", "5", "--pack", "."], "config file missing.yaml does not exist"),
    (["--run", "demo", "config.yaml", "--seconds", "0", "--pack", "."], "give a positive number of seconds"),
    (["--run", "demo", "config.yaml", "--seconds", "5", "--pack", "nowhere"], "give a folder that exists"),
    (["--run", "demo", "config.yaml", "--pack", "."], "give a positive number of seconds"),
    (["--seconds", "5", "--pack", "."], "one of the arguments --run --unpack --fit-send is required"),
])
def test_bad_arguments_are_refused_before_anything_runs(arguments, problem, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "config.yaml").write_text("seeds: [1]\n")
    with pytest.raises(SystemExit):
        main(arguments)
    assert problem in capsys.readouterr().err
    assert sorted(path.name for path in tmp_path.iterdir()) == ["config.yaml"]


def test_a_copy_without_git_names_the_commit_it_is_told(tmp_path):
    """On a lent machine the repository travels without .git: ENKCVS_GIT_COMMIT names the commit."""
    probe = "from pathlib import Path; from enkcvs.io import git_state; print(git_state(root=Path('.')))"
    told = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True,
                          env={**os.environ, "ENKCVS_GIT_COMMIT": "abc1234"}).stdout
    assert told.strip() == "{'commit': 'abc1234', 'dirty': None}"
    assert git_state(root=tmp_path) == {"commit": "unknown"}


@pytest.mark.workflow
def test_make_gpu_sitting_records_a_run_it_finishes_and_names_the_commit_it_is_told(tmp_path):
    """The target's wiring on the CPU, in a copy of the repository without .git (as a lent machine gets it): the
    tiny workflow at one seed and one setting runs within the time, is recorded and packed."""
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    copy = tmp_path / "copy"
    for path in tracked.splitlines():
        if not path.startswith(("results/", "benchmarks/results/", "docs/")) and (REPO / path).is_file():
            (copy / path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / path, copy / path)
    config = yaml.safe_load((copy / "tests" / "config" / "tiny.yaml").read_text())
    config.update(seeds=[1], ablation=False, compare_confident_learning=False, sensitivity={"enabled": False})
    config["datasets"]["digits"]["noise"] = config["datasets"]["digits"]["noise"][:1]
    (copy / "quick.yaml").write_text(yaml.safe_dump(config))
    (copy / "pack").mkdir()
    environment = {**os.environ, "ENKCVS_GIT_COMMIT": "abc1234",
                   "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    done = subprocess.run(["make", "gpu-sitting", "RUNS=quick=quick.yaml", "PACK=pack", "TRAIN_SECONDS=900",
                           "JOBS=2", f"GPU_PYTHON={sys.executable}"], cwd=copy, env=environment,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "quick: finished and recorded -> pack/quick.tar.gz" in done.stdout
    with tarfile.open(copy / "pack" / "quick.tar.gz") as tar:
        provenance = json.load(tar.extractfile("results/recorded/quick/provenance.json"))
    assert provenance["git"] == {"commit": "abc1234", "dirty": None} and provenance["jobs"] > 0
