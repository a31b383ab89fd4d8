"""Jobs side by side on one node each claim GPUs of their own (enkcvs.training.device), without a GPU: the node's GPUs
are the entries of CUDA_VISIBLE_DEVICES the jobs start with, and the jobs are processes that claim them at once."""

import os
import queue
import subprocess
import sys
import threading

import pytest
import torch

from enkcvs.training.device import claim_gpus, job_device

NODE = "0,1,2,3"  # the node's GPUs as the run started: CUDA_VISIBLE_DEVICES
PATIENCE = 120  # seconds a line of a claimant may take before the test fails rather than hangs; no assertion on time
#: A training job's start: it asks for one GPU, says which it sees, and holds it until a line on stdin.
JOB = """
import logging, os, sys
logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="%(message)s")
from enkcvs.training.device import job_device
job_device(gpus=1, allow_cpu_fallback=True)
print("sees", os.environ["CUDA_VISIBLE_DEVICES"], flush=True)
sys.stdin.readline()
"""


class Job:
    """A job process started on the node of :data:`NODE`, its lock files in ``folder`` (its TMPDIR), whose output the
    test reads line by line as it comes."""

    def __init__(self, folder):
        self.process = subprocess.Popen(
            [sys.executable, "-c", JOB],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "CUDA_VISIBLE_DEVICES": NODE, "TMPDIR": str(folder)},
        )
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)  # the process ended

    def line(self, start: str) -> str:
        """The next line that begins with ``start``."""
        while True:
            line = self.lines.get(timeout=PATIENCE)
            assert line is not None, f"the job ended (exit status {self.process.wait()}) before a line '{start}...'"
            if line.startswith(start):
                return line

    def gpu(self) -> str:
        return self.line("sees ").split()[1]

    def end(self, *, crash: bool) -> None:
        """The job finishes (its line on stdin) or crashes (SIGKILL, no chance to clean up)."""
        if crash:
            self.process.kill()
        else:
            self.process.stdin.write("\n")
            self.process.stdin.flush()
        self.process.wait()


@pytest.mark.parametrize("crash", [False, True], ids=["it finishes", "it crashes"])
def test_jobs_started_at_once_each_claim_a_gpu_and_a_fifth_waits_for_the_one_a_job_sets_free(tmp_path, crash):
    jobs = [Job(tmp_path) for _ in range(4)]
    try:
        gpus = [job.gpu() for job in jobs]
        assert sorted(gpus) == NODE.split(",")
        jobs.append(Job(tmp_path))
        assert "free slot among 0,1,2,3" in jobs[4].line("waiting for 1 GPU(s)")
        jobs[gpus.index("2")].end(crash=crash)
        assert jobs[4].gpu() == "2"
    finally:
        for job in jobs:
            job.process.kill()
            job.process.wait()


def test_claims_take_the_least_used_gpu_up_to_jobs_per_gpu_and_a_released_one_is_claimed_again(tmp_path):
    shared = [claim_gpus(count=1, devices=["0", "1"], jobs_per_gpu=2, lock_dir=tmp_path) for _ in range(3)]
    assert [claim.devices for claim in shared] == [("0",), ("1",), ("0",)]
    shared[0].release()
    pair = claim_gpus(count=2, devices=["0", "1"], jobs_per_gpu=2, lock_dir=tmp_path)
    assert pair.devices == ("0", "1")  # a job asking for two gets two different GPUs
    for claim in (*shared[1:], pair):
        claim.release()
    with pytest.raises(ValueError, match=r"cannot claim 3 GPU\(s\) from the 2 the node offers \(0, 1\)"):
        claim_gpus(count=3, devices=["0", "1"], lock_dir=tmp_path)


@pytest.mark.parametrize(("visible", "gpus"), [("3", 1), ("1,3", 2), ("", 1)])
def test_a_job_that_sees_no_more_gpus_than_it_asked_for_takes_them_as_a_scheduler_set_them(
    tmp_path, monkeypatch, visible, gpus
):
    """SLURM sets CUDA_VISIBLE_DEVICES to a job's --gpus: the job claims nothing and changes nothing."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert job_device(gpus=gpus, allow_cpu_fallback=True) == torch.device("cpu")
    assert os.environ["CUDA_VISIBLE_DEVICES"] == visible
    assert list(tmp_path.iterdir()) == []  # no lock taken
