"""The benchmarks' code paths, run on the CPU at a tiny size (benchmarks/fold_speed.py, benchmarks/gpu_check.py,
`make gpu-check`, the ranking and cleanlab comparisons; no timing checked)."""

import importlib.util
import json
import re
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


def benchmark_module(name: str = "gpu_check"):
    """benchmarks/<name>.py as a module (gpu_check's parts, run one by one; workflow_speed's bare workflow)."""
    spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_gpu_check(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "gpu_check.py"), *arguments], capture_output=True, text=True
    )


def test_the_gpu_checks_plan_lists_every_part_and_totals_within_five_minutes():
    done = run_gpu_check("--plan")
    assert done.returncode == 0, done.stderr
    *parts, total = done.stdout.splitlines()
    assert [line.split()[0] for line in parts] == list(benchmark_module().PARTS)
    assert parts[0].startswith("smoke") and re.fullmatch(r"total \d+ s", total)
    assert int(total.split()[1]) <= 300
    assert sum(float(line.split()[1]) for line in parts) == pytest.approx(int(total.split()[1]), abs=1)


@pytest.mark.workflow
def test_the_gpu_check_rehearsed_on_the_cpu_writes_each_parts_json(tmp_path):
    """The command a GPU node runs, at its quick size on the CPU: every part's JSON, each with what it measured."""
    done = run_gpu_check("--device", "cpu", "--quick", "--out-dir", str(tmp_path), "--budget-seconds", "100000")
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    records = {path.stem: json.loads(path.read_text()) for path in tmp_path.glob("*.json")}
    assert set(records) == set(benchmark_module().PARTS)
    assert all(record["status"] == "done" and record["cpu_flags"] is not None for record in records.values())
    assert set(records["smoke"]["two_steps_s"]) == {"fp32", "bf16", "stacked", "stacked graphs"}
    selection = records["selection_stack"]
    assert selection["models"] == 4 and len(selection["epoch_s"]) == 3 and selection["projected_selection_s"] > 0
    assert 0 < selection["share_of_bf16_peak"] and selection["cuda_graphs"] is False  # no graphs on a CPU
    assert records["cnn8_stack"]["models"] == 2 and records["cnn8_stack"]["projected_fold_s"] > 0
    workflow = records["tiny_workflow"]
    assert workflow["training_jobs"] > 0 and set(workflow["epoch_lines_by_device"]) == {"cpu"}
    assert [records[f"fold_{model}"]["recipe"]["model"] for model in ("cnn4", "cnn8")] == ["cnn4", "cnn8"]
    assert all(f"{name}: done in " in done.stdout for name in records)


def test_a_budget_no_part_fits_skips_each_part_with_a_line_and_a_record(tmp_path):
    done = run_gpu_check("--device", "cpu", "--quick", "--out-dir", str(tmp_path), "--budget-seconds", "0")
    assert done.returncode == 0, done.stderr
    names = list(benchmark_module().PARTS)
    assert [line.split(":")[0] for line in done.stdout.splitlines()] == names
    assert all("skipped" in line for line in done.stdout.splitlines())
    assert {json.loads((tmp_path / f"{name}.json").read_text())["status"] for name in names} == {"skipped"}


def test_a_part_past_its_timeout_is_stopped_and_recorded_and_the_check_fails(tmp_path):
    done = run_gpu_check(
        "--device", "cpu", "--quick", "--parts", "smoke", "--out-dir", str(tmp_path), "--part-timeout", "0.1"
    )
    assert done.returncode == 1 and "smoke: timeout in " in done.stdout
    assert json.loads((tmp_path / "smoke.json").read_text())["status"] == "timeout"


def test_a_part_fits_when_it_ends_within_the_budget():
    fits = benchmark_module().fits
    assert fits(elapsed=100, estimate=200, budget=300) and not fits(elapsed=100.5, estimate=200, budget=300)


def test_make_gpu_check_runs_in_the_projects_environment_and_writes_under_benchmarks_results():
    dry = subprocess.run(["make", "-n", "gpu-check"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    assert ".venv/bin/python benchmarks/gpu_check.py --out-dir benchmarks/results/gpu-check-" in dry
    assert "--budget-seconds 300" in dry


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
    data = ["wine", "breast cancer", "breast cancer, messy", "digits, as a table", "synthetic texts"]
    binary = {"breast cancer", "breast cancer, messy"}  # the pair flip of two classes is the symmetric flip: once
    noises = {name: ["sym0.12"] if name in binary else ["sym0.12", "asym0.12"] for name in data}
    expected = [(name, noise, seed) for seed in (1, 2) for name in data for noise in noises[name]]
    assert [(run["data"], run["noise"], run["seed"]) for run in found["runs"]] == expected
    for run in found["runs"]:
        assert run["errors"] > 0
        arms = ("enkcvs", "enkcvs_lr", "cleanlab_calibrated", "cleanlab_m", "cleanlab")
        for arm in (*arms, "cleanlab_tfidf") if run["kind"] == "texts" else arms:
            assert 0 <= run[arm]["f1"] <= 1 and 0 <= run[arm]["precision_at_errors"] <= 1
            assert run[arm]["length_over_errors"] == pytest.approx(run[arm]["listed"] / run["errors"])
    assert done.stdout.count("cleanlab, the better pipeline (p = ") == 2 * 2 * 3  # two arms, two measures: 3 rows
    assert done.stdout.count("| M cross-validations of K folds averaged") == 2  # each ingredient, both measures


def test_given_probabilities_runs_the_command_with_every_score_beside_cleanlab_on_the_same_sets(tmp_path):
    out = tmp_path / "given.json"
    arguments = ["--seeds", "1", "--noise", "sym0.12,asym0.12", "--texts", "120", "--out", str(out)]
    arguments += ["--data", "wine,synthetic texts"]
    script = REPO / "benchmarks" / "given_probabilities.py"
    done = subprocess.run([sys.executable, str(script), *arguments], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(out.read_text())
    sources = {(run["data"], run["probabilities"]) for run in found["runs"]}
    assert ("wine", "logistic regression, published (T = 0.03, 2 decimals)") in sources
    assert ("synthetic texts", "naive Bayes") in sources and len(sources) == 6 + 4
    rounded = [run for run in found["runs"] if "published" in run["probabilities"]]
    assert max(run["given_probability_zero"] for run in rounded) > 0  # the rounded files give some labels P = 0
    for run in found["runs"]:
        assert set(run["command"]) == {
            "self_confidence",
            "normalized_margin",
            "confidence_weighted_entropy",
            "logit_margin",
        }
        assert all(0 <= scores["f1"] <= 1 for scores in run["command"].values())
    assert done.stdout.count("| --score ") == 8  # four scores, two measures


def test_the_floor_holds_a_set_where_both_ratios_reach_it_and_counts_each_scores_sets_below():
    from enkcvs.report.floor import floor_table, runs_frame, score_table

    def run(data, ours_f1, ours_pak, theirs_f1, theirs_pak):
        command = {
            score: {"f1": ours_f1, "precision_at_errors": ours_pak - shift}
            for score, shift in (("logit_margin", 0.0), ("self_confidence", 0.2))
        }
        cleanlab = {"find_label_issues": {"f1": theirs_f1}, "self_confidence": theirs_pak, "normalized_margin": 0.1}
        row = {"data": data, "probabilities": "lr", "kind": "table", "noise": "sym0.12", "seed": 1}
        return {**row, "given_probability_zero": 0.0, "command": command, "cleanlab": cleanlab}

    record = {
        "settings": {"default_score": "logit_margin"},
        "runs": [run("a", 0.95, 0.8, 1.0, 0.8), run("b", 0.9, 0.8, 1.0, 0.8)],
    }
    table = floor_table(record).set_index("data")
    assert table.loc["a", "F1 ratio"] == pytest.approx(0.95) and table.loc["a", "its score"] == "self_confidence"
    assert table["at least 0.95 x"].tolist() == [True, False]
    scores = score_table(runs_frame(record)).set_index(["score", "of"])["sets below 0.95 x"]
    assert scores[("--score logit_margin", "list F1")] == 1 and scores[("--score logit_margin", "ranking P@k")] == 0
    assert scores[("--score self_confidence", "ranking P@k")] == 2
    assert scores[("cleanlab's normalized_margin", "ranking P@k")] == 2


def test_a_lead_on_every_pair_is_above_and_a_mixed_one_unordered():
    from enkcvs.report.versus import verdicts

    lead = [0.10, 0.12, 0.11, 0.09]
    frame = pd.DataFrame(
        {
            "kind": ["table"] * 2 + ["texts"] * 2,
            "K": 4,
            "M": 3,
            "f1 E-NKCVS": [0.5 + x for x in lead],
            "f1 E-NKCVS + LR": [0.5 - x for x in lead],
            "f1 cleanlab + LR": [0.5] * 4,
            "precision_at_errors E-NKCVS": [0.6, 0.4, 0.7, 0.3],
            "precision_at_errors E-NKCVS + LR": [0.5] * 4,
            "precision_at_errors cleanlab + LR": [0.5] * 4,
        }
    )
    found = verdicts(frame).set_index(["data", "arm", "measure"])["is"]
    assert found[("all", "E-NKCVS", "review list F1 against cleanlab's flags' F1")].startswith(
        "above cleanlab, the better pipeline (p = "
    )
    assert found[("all", "E-NKCVS + LR", "review list F1 against cleanlab's flags' F1")].startswith("below")
    assert found[("all", "E-NKCVS", "ranking's P@k against cleanlab's")].startswith("unordered against")
    assert found[("all", "E-NKCVS + LR", "ranking's P@k against cleanlab's")].startswith("unordered")  # all 0


def test_the_better_cleanlab_pipeline_is_chosen_per_data_set_by_its_mean_not_per_run():
    from enkcvs.report.versus import BEST, with_best

    frame = pd.DataFrame(
        {
            "data": ["texts"] * 3 + ["table"] * 2,
            "f1 cleanlab + LR": [0.5, 0.5, 0.9, 0.4, 0.6],
            "f1 cleanlab + TF-IDF LR": [0.7, 0.7, 0.1, None, None],  # mean 0.5 < 0.633: LR on every texts run
            "precision_at_errors cleanlab + LR": [0.5, 0.5, 0.5, 0.4, 0.6],
            "precision_at_errors cleanlab + TF-IDF LR": [0.6, 0.4, 0.8, None, None],
        }
    )
    best = with_best(frame)
    assert best[f"f1 {BEST}"].tolist() == [0.5, 0.5, 0.9, 0.4, 0.6]
    assert best[f"precision_at_errors {BEST}"].tolist() == [0.6, 0.4, 0.8, 0.4, 0.6]


def test_the_bare_workflow_of_a_dags_shape_plans_as_many_jobs_with_each_selections_fan_in(tmp_path):
    """workflow_speed's yardstick: a Snakefile of shell rules shaped as a config's DAG dry-runs to the same job count,
    each selection reading ``votes`` fold files."""
    speed = benchmark_module("workflow_speed")
    shape = {"jobs": 40, "folds": 24, "selections": 5, "noise": 3, "votes": 6}
    (tmp_path / "Snakefile").write_text(speed.bare_snakefile(**shape))
    dry = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--cores", "1", "--printshellcmds"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert dry.returncode == 0, dry.stdout[-2000:] + dry.stderr[-2000:]
    counts = dict(re.findall(r"^(\w+)\s+(\d+)$", dry.stdout + dry.stderr, flags=re.MULTILINE))
    assert counts == {"all": "1", "noise": "3", "fold": "24", "selection": "5", "rest": "7", "total": "40"}
    selection_block = re.search(r"rule selection:\n\s+input: ([^\n]+)", dry.stdout + dry.stderr)
    assert len(selection_block.group(1).split(", ")) == shape["votes"]
