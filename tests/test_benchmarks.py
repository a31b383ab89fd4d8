"""The GPU benchmarks' code paths, run on the CPU at a tiny size (benchmarks/fold_speed.py, benchmarks/gpu_check.py,
`make gpu-check`; no timing checked)."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import torch

from enkcvs.method.folds import fold_indices

REPO = Path(__file__).resolve().parent.parent
FOLD_SPEED = REPO / "benchmarks" / "fold_speed.py"


def run_fold_speed(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(FOLD_SPEED), *arguments], capture_output=True, text=True)


def test_fold_speed_trains_the_fold_a_job_trains_and_compares_compiled_step_loops(tmp_path):
    """Fold 1 of K = 10 of the paper's MNIST recipe (cnn4) on 400 synthetic images for one epoch: the engine's fold
    has a job's split and predicts its held-out samples; the step loop runs eager and under torch.compile."""
    out = tmp_path / "fold.json"
    done = run_fold_speed(
        "--device",
        "cpu",
        "--dataset",
        "mnist",
        "--shape",
        "1,28,28",
        "--samples",
        "400",
        "--epochs",
        "1",
        "--bf16",
        "false",
        "--steps",
        "2",
        "--compile-modes",
        "default",
        "--out",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    results = json.loads(out.read_text())
    train, validation, held_out = fold_indices(
        num_samples=400, num_folds=10, seed=1, iteration=1, fold=1, validation_fraction=0.1
    )
    assert (results["fold"]["train"], results["fold"]["validation"], results["fold"]["held_out"]) == (
        len(train),
        len(validation),
        len(held_out),
    )
    assert results["recipe"]["model"] == "cnn4" and results["recipe"]["epochs"] == 1
    assert results["engine_fold"]["held_out"] == len(held_out) and results["engine_fold"]["bf16"] is False
    assert results["warmup_fold"]["held_out"] == len(held_out) and results["warmup_fold"]["seconds"] > 0
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
        pytest.param(
            ("--device", "cuda"),
            "sees no GPU; use --device cpu",
            marks=pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without a GPU"),
        ),
    ],
)
def test_fold_speed_names_bad_arguments_before_training(arguments, message, tmp_path):
    out = tmp_path / "fold.json"
    done = run_fold_speed(*arguments, "--out", str(out))
    assert done.returncode != 0 and message in done.stderr
    assert not out.exists() and "engine fold" not in done.stdout


def gpu_check_module():
    """benchmarks/gpu_check.py as a module (its parts, run one by one)."""
    spec = importlib.util.spec_from_file_location("gpu_check", REPO / "benchmarks" / "gpu_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.workflow
def test_the_gpu_check_runs_the_tiny_workflow_and_both_folds_and_writes_one_json(tmp_path):
    """Its wiring on the CPU (--quick): every part runs and lands in the JSON; on a GPU the same code trains there.
    In fp32, whatever this CPU's probe would pick (bf16: the next test)."""
    bf16 = "false"
    out = tmp_path / "gpu-check.json"
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "gpu_check.py"),
            "--device",
            "cpu",
            "--quick",
            "--parallel-jobs",
            "2",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "ENKCVS_BF16_AUTO": bf16},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    check = json.loads(out.read_text())
    workflow = check["tiny_workflow"]
    assert workflow["config"]["gpu"] == {"per_training_job": 0} and workflow["training_jobs"] > 0
    assert workflow["epoch_lines"] > 0 and workflow["epoch_lines_by_device"] == {"cpu": workflow["epoch_lines"]}
    assert "enkcvs" in workflow["table2"]
    assert sorted(check["folds"]) == ["cnn4", "cnn8"]
    assert [check["folds"][model]["recipe"]["model"] for model in ("cnn4", "cnn8")] == ["cnn4", "cnn8"]
    stacked = check["stacked"]
    assert [stacked[model]["recipe"]["model"] for model in ("cnn4", "cnn8")] == ["cnn4", "cnn8"]
    assert all(
        stacked[model]["stacked_samples_per_s"] > 0 < stacked[model]["per_fold_samples_per_s"] for model in stacked
    )
    assert all(stacked[model]["side_by_side"]["samples_per_s"] > 0 for model in stacked)  # K processes at once
    assert all("side_by_side_mps" not in stacked[model] for model in stacked)  # MPS: a GPU's only
    assert all(check["folds"][model]["engine_fold"]["cuda_graphs"] is False for model in stacked)  # none on a CPU
    assert all(stacked[model]["cuda_graphs"] == {"per_fold": False, "stacked": False} for model in stacked)
    assert all(check["folds"][model]["engine_fold"]["bf16"] is (bf16 == "true") for model in stacked)
    finals = check["finals"]["cnn4"]
    assert finals["models"] == 2 and finals["samples"] == 2 * 128 * finals["recipe"]["epochs"]
    assert finals["stacked_samples_per_s"] > 0 < finals["alone_samples_per_s"]
    assert finals["side_by_side"]["samples_per_s"] > 0 and "side_by_side_mps" not in finals
    assert finals["cuda_graphs"] == {"alone": False, "stacked": False} and finals["bf16"] is (bf16 == "true")
    assert "stacked against per fold" in done.stdout and "final models stacked against" in done.stdout
    assert "written to" in done.stdout
    page = gpu_check_view(out, paper_config=REPO / "config" / "paper.yaml")
    header, _, cnn4, cnn8 = [line for line in page.splitlines() if line.startswith("|")][:4]
    columns = [cell.strip() for cell in header.strip("|").split("|")]
    for row in (cnn4, cnn8):
        cells = dict(zip(columns, (cell.strip() for cell in row.strip("|").split("|")), strict=True))
        assert cells["CUDA graphs"] == "no" and cells["engine / eager loop"].endswith("x")
    assert "per fold, side by side under MPS (samples/s)" in page and "not in this check" in page  # MPS: GPU only
    assert "A setting's final models" in page and "stacked / one after another" in page
    grid = check["grid"]
    assert grid["config"] == "tests/config/tiny.yaml"
    assert {entry["rule"] for entry in grid["training_jobs"]} == {
        "train_fold",
        "train_final_baseline",
        "train_final_selected",
    }
    digits = next(line for line in page.splitlines() if line.startswith("| digits "))
    assert float(digits.split("|")[4]) >= 0  # cnn4, measured: its jobs projected to GPU-hours (not "not measured")


def test_the_gpu_checks_fold_stacked_folds_and_finals_train_in_bf16(tmp_path, monkeypatch):
    """The check's training parts at its quick size with bf16 forced, whatever this CPU's probe would pick: its
    stacked folds once failed in bf16 only (batch norm inside the stacked program), on the CPUs whose probe picks it.
    cnn8, batch norm after every convolution; the whole check in fp32 is the test above."""
    bf16 = True
    monkeypatch.setenv("ENKCVS_BF16_AUTO", "true")
    check = gpu_check_module()
    fold = check.fold_speed(device="cpu", model="cnn8", quick=True, workdir=tmp_path)
    stacked = check.stacked_speed(device="cpu", model="cnn8", quick=True, workdir=tmp_path)
    assert fold["engine_fold"]["bf16"] is bf16 and stacked["bf16"] is bf16
    assert stacked["stacked_samples_per_s"] > 0 < stacked["per_fold_samples_per_s"]
    assert stacked["side_by_side"]["samples_per_s"] > 0
    finals = check.finals_speed(device="cpu", quick=True, workdir=tmp_path)
    assert finals["bf16"] is bf16 and finals["stacked_samples_per_s"] > 0 < finals["alone_samples_per_s"]


def test_make_gpu_check_runs_in_the_projects_environment_and_writes_under_benchmarks_results():
    dry = subprocess.run(["make", "-n", "gpu-check"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    assert ".venv/bin/python benchmarks/gpu_check.py --out benchmarks/results/gpu-check-" in dry


def test_rank_speed_measures_a_fold_model_per_kind_and_projects_the_whole_ranking(tmp_path):
    out = tmp_path / "rank.json"
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "rank_speed.py"),
            "--kinds",
            "table",
            "--samples",
            "80",
            "--project-to",
            "800",
            "--whole",
            "table",
            "--threads",
            "1",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(out.read_text())
    assert found["threads"] == 1 and found["cpu_flags"] is not None and len(found["load_average"]) == 3
    [run] = found["runs"]
    models = found["K"] * found["M"]
    assert run["kind"] == "table" and run["fold_models"] == models
    assert run["whole_seconds"] > run["fold_model_seconds"] > 0
    assert isinstance(found["instruction_set_limits"], dict)
    assert run["all_fold_models_seconds"].keys() == {"one by one", "stacked"}  # features: the command stacks them
    assert all(seconds > 0 for seconds in run["all_fold_models_seconds"].values())
    assert abs(run["projected_seconds"] - (run["prepare_seconds"] + models * run["fold_model_seconds"])) < 0.1
    assert abs(run["projected_seconds_at_target"] - 10 * run["projected_seconds"]) <= 1


def test_the_cleanlab_comparison_scores_both_methods_on_each_seed_and_orders_them_by_a_paired_test(tmp_path):
    out = tmp_path / "vs.json"
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "find_issues_vs_cleanlab.py"),
            "--kinds",
            "table,texts",
            "--texts",
            "120",
            "--seeds",
            "1,2",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(out.read_text())
    assert [(run["data"], run["seed"]) for run in found["runs"]] == [
        ("wine", 1),
        ("breast cancer", 1),
        ("synthetic texts", 1),
        ("wine", 2),
        ("breast cancer", 2),
        ("synthetic texts", 2),
    ]
    for run in found["runs"]:
        assert run["errors"] > 0
        for side in ("enkcvs", "cleanlab"):
            assert 0 <= run[side]["f1"] <= 1 and 0 <= run[side]["precision_at_errors"] <= 1
    assert done.stdout.count("cleanlab (p = ") == 2 * 3  # two measures for tables, texts and all


def test_a_lead_on_every_pair_is_above_and_a_mixed_one_not_distinguishable():
    from enkcvs.report.versus import verdicts

    lead = [0.10, 0.12, 0.11, 0.09]
    frame = pd.DataFrame(
        {
            "kind": ["table"] * 2 + ["texts"] * 2,
            "f1 enkcvs": [0.5 + x for x in lead],
            "f1 cleanlab": [0.5] * 4,
            "precision_at_errors enkcvs": [0.6, 0.4, 0.7, 0.3],
            "precision_at_errors cleanlab": [0.5] * 4,
        }
    )
    found = verdicts(frame).set_index(["data", "measure"])["E-NKCVS is"]
    assert found[("all", "review list F1 against cleanlab's flags' F1")].startswith("above cleanlab (p = ")
    assert found[("all", "ranking's P@k against cleanlab's")].startswith("not distinguishable from cleanlab")
