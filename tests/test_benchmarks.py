"""The GPU fold benchmark's code path, run on the CPU at a tiny size (benchmarks/fold_speed.py; no timing checked)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from enkcvs.folds import fold_indices

REPO = Path(__file__).resolve().parent.parent
FOLD_SPEED = REPO / "benchmarks" / "fold_speed.py"


def run_fold_speed(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(FOLD_SPEED), *arguments], capture_output=True, text=True)


def test_fold_speed_trains_the_fold_a_job_trains_and_compares_compiled_step_loops(tmp_path):
    """Fold 1 of K = 10 of the paper's MNIST recipe (cnn4) on 400 synthetic images for one epoch: the engine's fold
    has a job's split and predicts its held-out samples; the step loop runs eager and under torch.compile."""
    out = tmp_path / "fold.json"
    done = run_fold_speed("--device", "cpu", "--dataset", "mnist", "--shape", "1,28,28", "--samples", "400",
                          "--epochs", "1", "--bf16", "false", "--steps", "2", "--compile-modes", "default",
                          "--out", str(out))
    assert done.returncode == 0, done.stderr
    results = json.loads(out.read_text())
    train, validation, held_out = fold_indices(num_samples=400, num_folds=10, seed=1, iteration=1, fold=1,
                                               validation_fraction=0.1)
    assert (results["fold"]["train"], results["fold"]["validation"], results["fold"]["held_out"]) == (
        len(train), len(validation), len(held_out))
    assert results["recipe"]["model"] == "cnn4" and results["recipe"]["epochs"] == 1
    assert results["engine_fold"]["held_out"] == len(held_out) and results["engine_fold"]["bf16"] is False
    assert results["device"] and "cpu_flags" in results
    loops = results["step_loops"]
    assert list(loops) == ["eager", "torch.compile default"]
    assert loops["eager"]["ratio_to_eager"] == 1.0
    for loop in loops.values():
        assert loop["samples_per_s"] > 0
        assert loop["projected_fold_s"] == pytest.approx(loop["warmup_s"] + len(train) / loop["samples_per_s"])
    assert "engine fold:" in done.stdout and "torch.compile default" in done.stdout


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (("--dataset", "imagenet"), "has no dataset 'imagenet'"),
        pytest.param(("--device", "cuda"), "sees no GPU; use --device cpu",
                     marks=pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without a GPU")),
    ],
)
def test_fold_speed_names_bad_arguments_before_training(arguments, message, tmp_path):
    out = tmp_path / "fold.json"
    done = run_fold_speed(*arguments, "--out", str(out))
    assert done.returncode != 0 and message in done.stderr
    assert not out.exists() and "engine fold" not in done.stdout
