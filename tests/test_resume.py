"""A run killed in the middle of a fold job and resumed with the README's command ends byte-identical to an
uninterrupted run; so do runs on 1 and on 2 cores."""

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


def run_command(workdir: Path, cores: int) -> list[str]:
    """What `make run` executes (workflow/run.sh), pointed at this test's config and working directory."""
    return [str(REPO / "workflow" / "run.sh"), "-s", str(REPO / "Snakefile"), "--configfile", str(CONFIG),
            "--cores", str(cores)]


def test_killed_run_resumes_to_byte_identical_results_and_cores_do_not_matter(tmp_path, result_files):
    environment = {**os.environ, "SNAKEMAKE": SNAKEMAKE}
    reference = tmp_path / "reference"
    reference.mkdir()
    done = subprocess.run(run_command(reference, 1), cwd=reference, env=environment, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]

    killed = tmp_path / "killed"
    killed.mkdir()
    run = subprocess.Popen(run_command(killed, 2), cwd=killed, env=environment, start_new_session=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    fold_logs = killed / "logs" / "folds"
    deadline = time.monotonic() + 120
    while not any(fold_logs.rglob("*.log")) and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(1.0)  # inside the fold job: importing torch or training
    assert run.poll() is None, "the run ended before it could be killed"
    os.killpg(run.pid, signal.SIGKILL)
    run.wait()
    assert not (killed / "results" / "report" / "table2.csv").exists()
    assert (killed / ".snakemake" / "locks").exists() and any((killed / ".snakemake" / "locks").iterdir())

    resumed = subprocess.run(run_command(killed, 2), cwd=killed, env=environment, capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    expected, got = result_files(reference), result_files(killed)
    assert sorted(got) == sorted(expected)
    assert [name for name in expected if expected[name] != got[name]] == []
    assert not list((killed / "results").rglob("*.tmp")), "no temporary file may survive"


def test_a_second_run_while_one_is_alive_is_refused(tmp_path):
    environment = {**os.environ, "SNAKEMAKE": SNAKEMAKE}
    (tmp_path / ".snakemake").mkdir()
    with open(tmp_path / ".snakemake" / "run.flock", "w") as handle:
        subprocess.run(["flock", "--nonblock", str(handle.fileno())], pass_fds=[handle.fileno()], check=True)
        refused = subprocess.run(run_command(tmp_path, 1), cwd=tmp_path, env=environment, capture_output=True,
                                 text=True)
    assert refused.returncode == 1
    assert "another run of this workflow is still going" in refused.stderr
