"""benchmarks/clone_size.py on a repository the test makes: a file an early commit carried and a later one removed
stays in a full clone's pack, and a clone of the last commit alone leaves it out."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
IDENTITY = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.org",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.org",
}


def _commit(repository: Path, message: str) -> None:
    subprocess.run(["git", "add", "-A"], cwd=repository, check=True)
    subprocess.run(
        ["git", "commit", "--quiet", "-m", message], cwd=repository, check=True, env={**os.environ, **IDENTITY}
    )


def test_clone_size_counts_what_history_keeps_and_a_last_commit_clone_leaves_out(tmp_path):
    repository = tmp_path / "repo"
    (repository / "results" / "carried").mkdir(parents=True)
    subprocess.run(["git", "init", "--quiet", "--initial-branch", "main"], cwd=repository, check=True)
    # random bytes do not compress: the checkpoint costs its full size in the pack
    checkpoint = np.random.default_rng(0).bytes(2 * 2**20)
    (repository / "results" / "carried" / "epoch.pt").write_bytes(checkpoint)
    (repository / "README.md").write_text("a project\n")
    _commit(repository, "carry a run")
    (repository / "results" / "carried" / "epoch.pt").unlink()
    _commit(repository, "the run leaves the repository")
    out = tmp_path / "clone.json"
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "clone_size.py"),
            "--repository",
            str(repository),
            "--prefix",
            "results/carried/",
            "--prefix",
            "src/",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(out.read_text())
    head = subprocess.run(["git", "rev-parse", "main"], cwd=repository, capture_output=True, text=True).stdout.strip()
    assert found["commit"] == head and found["commits"] == 2 and found["branch"] == "main"
    assert 2.0 <= found["history_mib_under"]["results/carried/"] <= 2.1
    assert found["history_mib_under"]["src/"] == 0
    assert found["full_clone_mib"] >= 2.0 > found["last_commit_clone_mib"]
