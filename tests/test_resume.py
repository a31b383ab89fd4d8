"""A run killed (SIGKILL) or stopped (SIGTERM, as a scheduler's time limit stops a job) while a fold model trains,
then started again with the README's command, goes on from the training's epoch checkpoint and ends byte-identical
to an uninterrupted run; so do runs on 1 and on 2 cores."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.workflow

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "tests" / "config" / "resume.yaml"
SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")
ENVIRONMENT = {**os.environ, "SNAKEMAKE": SNAKEMAKE}


def run_command(workdir: Path, cores: int) -> list[str]:
    """What `make run` executes (workflow/run.sh), pointed at this test's config and working directory."""
    return [
        str(REPO / "workflow" / "run.sh"),
        "-s",
        str(REPO / "workflow" / "Snakefile"),
        "--configfile",
        str(CONFIG),
        "--cores",
        str(cores),
    ]


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    """An uninterrupted run on one core."""
    workdir = tmp_path_factory.mktemp("reference")
    done = subprocess.run(run_command(workdir, 1), cwd=workdir, env=ENVIRONMENT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return workdir


@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGTERM], ids=["killed", "stopped"])
def test_a_run_stopped_mid_training_resumes_from_its_checkpoints_to_byte_identical_results(
    reference, tmp_path, result_files, stop
):
    run = subprocess.Popen(
        run_command(tmp_path, 2),
        cwd=tmp_path,
        env=ENVIRONMENT,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    folds = tmp_path / "results" / "folds"
    deadline = time.monotonic() + 300
    while not any(folds.rglob("*.resume.pt")) and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)  # a fold model has finished an epoch of the config's 20: it is mid-training now
    assert run.poll() is None, "the run ended before it could be stopped"
    os.killpg(run.pid, stop)
    run.wait(timeout=120)
    assert not (tmp_path / "results" / "report" / "table2.csv").exists()
    assert any(folds.rglob("*.resume.pt")), "the stopped training's epoch checkpoint must stay"

    resumed = subprocess.run(run_command(tmp_path, 2), cwd=tmp_path, env=ENVIRONMENT, capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    logs = [path.read_text() for path in (tmp_path / "logs" / "folds").rglob("*.log")]
    assert any("resuming from" in log for log in logs), "some fold job must have gone on from its checkpoint"
    expected, got = result_files(reference), result_files(tmp_path)
    assert sorted(got) == sorted(expected)
    assert [name for name in expected if expected[name] != got[name]] == []
    assert not list((tmp_path / "results").rglob("*.tmp")), "no temporary file may survive"
    assert not list((tmp_path / "results").rglob("*.resume.pt")), "a finished training removes its checkpoint"


def test_a_second_run_while_one_is_alive_is_refused(tmp_path):
    (tmp_path / ".snakemake").mkdir()
    with open(tmp_path / ".snakemake" / "run.flock", "w") as handle:
        subprocess.run(["flock", "--nonblock", str(handle.fileno())], pass_fds=[handle.fileno()], check=True)
        refused = subprocess.run(
            run_command(tmp_path, 1), cwd=tmp_path, env=ENVIRONMENT, capture_output=True, text=True
        )
    assert refused.returncode == 1
    assert "another run of this workflow is still going" in refused.stderr
