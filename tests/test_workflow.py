"""The workflow end to end on the tiny config: every rule runs for real and the outputs' contents are checked."""

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import yaml

from enkcvs.io import read_json, read_table
from enkcvs.method.methods import ABLATION_LADDER, SELECTION_METHODS

pytestmark = pytest.mark.workflow

REPO = Path(__file__).resolve().parents[1]
SHIPPED_PROFILES = sorted(path.name for path in (REPO / "profiles").iterdir() if path.is_dir())


def planned_jobs(dry_run_output: str) -> list[tuple[str, str]]:
    """(rule, wildcards) of every job a dry run lists."""
    jobs, rule = [], None
    for line in dry_run_output.splitlines():
        line = line.strip()
        if line.startswith("rule ") or line.startswith("localrule "):
            rule = line.split()[1].rstrip(":")
        elif line.startswith("wildcards:") and rule:
            jobs.append((rule, line))
    return jobs


def test_fold_predictions_cover_each_sample_once_per_iteration(tiny_run):
    labels, noise_meta = read_table(tiny_run / "results/noise/digits/sym0.4/seed1.parquet")
    with np.load(tiny_run / "results/data/digits.npz") as arrays:
        data_meta = json.loads(str(arrays["provenance"]))
    # the data and noise jobs record their code too, each its own script's fingerprint
    assert re.fullmatch(r"[0-9a-f]{16,}", noise_meta["code"]) and re.fullmatch(r"[0-9a-f]{16,}", data_meta["code"])
    assert noise_meta["code"] != data_meta["code"]
    for m in (1, 2):
        folds = [read_table(tiny_run / f"results/folds/digits/sym0.4/seed1/K2/m{m}/k{k}.parquet") for k in (1, 2)]
        samples = np.concatenate([frame["sample"].to_numpy() for frame, _ in folds])
        assert np.array_equal(np.sort(samples), labels["sample"].to_numpy())
        for frame, meta in folds:
            assert {meta[key] for key in ("dataset", "noise", "seed", "K", "m")} == {
                "digits",
                "sym0.4",
                "1",
                "2",
                str(m),
            }
            assert meta["recipe"]["model"] == "cnn4" and "torch" in meta["versions"]
            # what it ran: the rule's code fingerprint, and torch on the job's one thread (rule train_fold)
            assert re.fullmatch(r"[0-9a-f]{16,}", meta["code"]) and meta["torch_threads"] == 1
            probabilities = frame[[f"prob_{c}" for c in range(10)]].to_numpy()
            np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, rtol=1e-5)
            assert np.array_equal(probabilities.argmax(axis=1), frame["predicted"].to_numpy())
            assert np.array_equal(frame["given"].to_numpy(), labels["given"].to_numpy()[frame["sample"]])
    iteration_folds = [
        read_table(tiny_run / f"results/folds/digits/sym0.4/seed1/K2/m{m}/k1.parquet")[0]["sample"] for m in (1, 2)
    ]
    assert not np.array_equal(np.sort(iteration_folds[0]), np.sort(iteration_folds[1])), "folds must differ across m"
    final = read_json(tiny_run / "results/final/digits/sym0.4/seed1/K2/M2/t1/enkcvs.json")
    assert re.fullmatch(r"[0-9a-f]{16,}", final["code"]) and final["torch_threads"] == 1
    assert (final["device"], final["bf16"]) == ("cpu", False)  # what the model trained on, and in what precision
    assert final["code"] != meta["code"]  # each script its own fingerprint


def test_selection_metrics_match_the_selection_table(tiny_run):
    base = tiny_run / "results/selection/digits/asym0.3/seed2/K2/M2/t1"
    selection, _ = read_table(base / "selection.parquet")
    metrics = read_json(base / "metrics.json")
    labels, _ = read_table(tiny_run / "results/noise/digits/asym0.3/seed2.parquet")
    clean = labels["true"].to_numpy() == labels["given"].to_numpy()
    selected = selection["selected"].to_numpy()
    assert metrics["SS"] == selected.sum() and metrics["CS"] == clean.sum()
    assert metrics["CSS"] == (selected & clean).sum()
    assert metrics["precision"] == pytest.approx(metrics["CSS"] / metrics["SS"])
    assert metrics["recall"] == pytest.approx(metrics["CSS"] / metrics["CS"])
    assert np.array_equal(selected, selection["votes"].to_numpy() >= 1)
    assert ((selection["beta"] >= 0) & (selection["beta"] <= np.log(2) / np.log(10) + 1e-12)).all()
    assert 0 < metrics["theorem1"]["precision"] <= 1 and 0 < metrics["theorem1"]["recall"] <= 1


def test_table2_cells_are_mean_and_std_of_the_seed_results(tiny_run):
    table = pd.read_csv(tiny_run / "results/report/table2.csv")
    for method, path in (("ce", "ce.json"), ("enkcvs", "K2/M2/t1/enkcvs.json")):
        accuracies = [
            100 * read_json(tiny_run / f"results/final/digits/sym0.4/seed{seed}/{path}")["test_accuracy"]
            for seed in (1, 2)
        ]
        row = table[(table["method"] == method) & (table["noise_kind"] == "sym")].iloc[0]
        assert row["mean"] == pytest.approx(np.mean(accuracies))
        assert row["std"] == pytest.approx(np.std(accuracies, ddof=1))
        assert row["runs"] == 2
        assert (
            f"{np.mean(accuracies):.3f} ± {np.std(accuracies, ddof=1):.3f}"
            in (tiny_run / "results/report/table2.md").read_text()
        )
    assert "\\toprule" in (tiny_run / "results/report/table2.tex").read_text()


def test_ablation_ladder_rows_come_from_the_rungs_and_the_selections(tiny_run):
    table = pd.read_csv(tiny_run / "results/report/ablation.csv")
    row = table[table["noise_kind"] == "asym"].iloc[0]
    base = "results/final/digits/asym0.3/seed{seed}/"
    for method in ABLATION_LADDER:
        selected = method in SELECTION_METHODS
        path = f"K2/M2/t1/{method}.json" if selected else f"{method}.json"
        runs = [read_json(tiny_run / (base + path).format(seed=seed)) for seed in (1, 2)]
        assert row[f"{method}_mean"] == pytest.approx(100 * np.mean([run["test_accuracy"] for run in runs]))
        assert row[f"{method}_std"] == pytest.approx(100 * np.std([run["test_accuracy"] for run in runs], ddof=1))
    ceiling, noisy = (read_json(tiny_run / (base + f"{m}.json").format(seed=1)) for m in ("ce_true", "ce"))
    assert ceiling["train_samples"] == noisy["train_samples"] == 1500  # every sample, true vs given labels
    selection, _ = read_table(tiny_run / "results/selection/digits/asym0.3/seed1/K2/M2/t1/selection.parquet")
    labels, _ = read_table(tiny_run / "results/noise/digits/asym0.3/seed1.parquet")
    metrics = read_json(tiny_run / "results/selection/digits/asym0.3/seed1/K2/M2/t1/metrics.json")
    oracles = [read_json(tiny_run / (base + p).format(seed=1)) for p in ("cs_only.json", "K2/M2/t1/css_only.json")]
    assert [oracle["train_samples"] for oracle in oracles] == [metrics["CS"], metrics["CSS"]]
    rest = ~selection["selected"].to_numpy()
    pseudo, true = selection["pseudo"].to_numpy()[rest], labels["true"].to_numpy()[rest]
    assert metrics["pseudo_label_accuracy"]["samples"] == rest.sum()
    assert metrics["pseudo_label_accuracy"]["all"] == pytest.approx(np.mean(pseudo == true))
    assert "SS + pseudo rest" in (tiny_run / "results/report/ablation.md").read_text()


def test_final_models_mix_as_their_method_says_and_prune_and_retrain_trains_on_cleanlabs_kept_set(tiny_run):
    """tiny.yaml's recipe mixes (alpha 0.3, the default): the baselines train without it, CE + mixup and E-NKCVS
    with it; prune-and-retrain trains on the samples confident learning does not flag."""
    base = tiny_run / "results/final/digits/sym0.4/seed1"
    mixup = {
        method: read_json(base / path)["trained_with"]["mixup_alpha"]
        for method, path in (
            ("ce", "ce.json"),
            ("sl", "sl.json"),
            ("coteaching", "coteaching.json"),
            ("ce_mixup", "ce_mixup.json"),
            ("enkcvs", "K2/M2/t1/enkcvs.json"),
            ("cl_prune", "K2/M2/cl_prune.json"),
        )
    }
    assert mixup == {"ce": None, "sl": None, "coteaching": None, "ce_mixup": 0.3, "enkcvs": 0.3, "cl_prune": 0.3}
    kept, meta = read_table(tiny_run / "results/comparison/digits/sym0.4/seed1/K2/M2/cl_selection.parquet")
    assert meta["filter_by"] == "prune_by_noise_rate" and len(kept) == 1500
    assert read_json(base / "K2/M2/cl_prune.json")["train_samples"] == kept["selected"].sum() < 1500


def test_table1_rows_are_seed_means_of_the_metrics(tiny_run):
    table = pd.read_csv(tiny_run / "results/report/table1.csv")
    metrics = [read_json(tiny_run / f"results/selection/digits/sym0.4/seed{s}/K2/M2/t1/metrics.json") for s in (1, 2)]
    row = table[table["noise_kind"] == "sym"].iloc[0]
    assert row["SS"] == pytest.approx(np.mean([m["SS"] for m in metrics]))
    assert row["precision"] == pytest.approx(100 * np.mean([m["precision"] for m in metrics]))
    assert row["theorem1_recall"] == pytest.approx(100 * np.mean([m["theorem1"]["recall"] for m in metrics]))
    shown = (tiny_run / "results/report/table1.md").read_text().splitlines()
    header = [cell.strip() for cell in shown[0].split("|")[1:-1]]
    assert header[header.index("precision ours") + 1] == "precision Theorem 1"
    assert header[header.index("recall ours") + 1] == "recall Theorem 1"
    sym = [cell.strip() for cell in next(line for line in shown[2:] if "| sym " in line).split("|")[1:-1]]
    assert sym[header.index("recall Theorem 1")] == f"{row['theorem1_recall']:.3f}"  # tiny.yaml: decimals 3
    assert sym[header.index("precision Theorem 1")] == f"{row['theorem1_precision']:.3f}"


def test_noise_table_gives_the_share_of_wrong_labels_and_both_forget_rates(tiny_run):
    table = pd.read_csv(tiny_run / "results/report/noise.csv").set_index("noise_kind")
    assert table.index.tolist() == ["sym", "asym"]  # tests/config/tiny.yaml: digits sym0.4, asym0.3
    for kind, noise in (("sym", "sym0.4"), ("asym", "asym0.3")):
        shares = [
            100 * np.mean(labels["given"] != labels["true"])
            for labels, _ in (
                read_table(tiny_run / f"results/noise/digits/{noise}/seed{seed}.parquet") for seed in (1, 2)
            )
        ]
        assert table.loc[kind, "wrong_share_mean"] == pytest.approx(np.mean(shares))
        assert table.loc[kind, "forget_rate_actual"] == pytest.approx(np.mean(shares) / 100)
    asym = table.loc["asym"]
    assert (asym["asymmetric_map"], asym["flipped_classes"], asym["classes"]) == ("mnist", 5, 10)
    assert asym["wrong_share_mean"] < 20.0 and asym["forget_rate_nominal"] == 0.3  # MNIST's map flips 5 of 10
    coteaching = read_json(tiny_run / "results/final/digits/asym0.3/seed1/coteaching.json")
    trained = coteaching["trained_with"]["co_teaching"]["forget_rate"]  # tiny.yaml: the default, actual, resolved
    labels, _ = read_table(tiny_run / "results/noise/digits/asym0.3/seed1.parquet")  # by the job on its labels
    assert trained == pytest.approx(np.mean(labels["given"] != labels["true"])) and trained < 0.3
    shown = (tiny_run / "results/report/noise.md").read_text()
    assert (
        "| 5 of 10 " in shown
        and "forget rate actual" in shown
        and "\\toprule" in (tiny_run / "results/report/noise.tex").read_text()
    )


def test_figures_are_rendered(tiny_run):
    for name in ("sensitivity", "theory"):
        assert (tiny_run / f"results/report/{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert (tiny_run / f"results/report/{name}.pdf").read_bytes()[:5] == b"%PDF-"


def test_the_test_curves_end_at_the_test_accuracy_of_the_model_kept(tiny_run):
    """CE asks for its curve to be drawn in the tiny config (no other method does): an epoch per row, the last one
    the final model's own accuracy, the paper's cell beside it. Every final model records its curve."""
    curves = pd.read_csv(tiny_run / "results/report/test_curves.csv")
    assert set(curves["method"]) == {"ce"} and len(curves) == 2 * 2 * 3  # noise settings x seeds x epochs
    for (kind, rate, seed), curve in curves.groupby(["noise_kind", "noise_rate", "seed"]):
        result = read_json(tiny_run / f"results/final/digits/{kind}{rate:g}/seed{seed}/ce.json")
        assert curve.sort_values("epoch")["test_accuracy"].tolist() == pytest.approx(
            [100 * accuracy for accuracy in result["test_accuracy_by_epoch"]]
        )
        assert curve["epoch"].max() == 3 and curve.sort_values("epoch")["test_accuracy"].iloc[-1] == pytest.approx(
            100 * result["test_accuracy"]
        )
    for result in (tiny_run / "results/final").rglob("*.json"):
        record = read_json(result)
        assert len(record["test_accuracy_by_epoch"]) == 3 and record["test_accuracy_by_epoch"][-1] == pytest.approx(
            record["test_accuracy"]
        ), result
    assert "| digits " in (tiny_run / "results/report/test_curves.md").read_text()
    assert (tiny_run / "results/report/test_curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_resource_table_counts_every_training_job_from_its_benchmark_file(tiny_run):
    table = pd.read_csv(tiny_run / "results/report/resources.csv").set_index("rule")
    benchmarks = tiny_run / "results/benchmarks"
    folds = sorted((benchmarks / "folds").rglob("*.tsv"))
    assert len(folds) == len(list((tiny_run / "results/folds").rglob("*.parquet"))) > 0  # one per fold job
    assert table.loc["train_fold", "jobs"] == len(folds)
    finals = list((benchmarks / "final").rglob("*.tsv"))
    assert (
        sum(table.loc[rule, "jobs"] for rule in ("train_final_baseline", "train_final_selected", "train_final_pruned"))
        == len(finals)
        == len(list((tiny_run / "results/final").rglob("*.json")))
    )
    wall = [pd.read_csv(path, sep="\t")["s"].iloc[0] for path in folds]
    assert table.loc["train_fold", "wall_s_total"] == pytest.approx(sum(wall))
    assert (table["max_rss_mb_max"] > 50).all()  # torch alone takes more


def test_training_logs_show_what_was_read_every_epoch_and_what_was_written(tiny_run):
    epochs = 3  # tests/config/tiny.yaml
    for log, written in [
        ("logs/folds/digits/sym0.4/seed1/K2/m1/k1.log", "results/folds/digits/sym0.4/seed1/K2/m1/k1.parquet"),
        ("logs/final/digits/sym0.4/seed1/ce.log", "results/final/digits/sym0.4/seed1/ce.json"),
        (
            "logs/final/digits/sym0.4/seed1/K2/M2/t1/enkcvs.log",
            "results/final/digits/sym0.4/seed1/K2/M2/t1/enkcvs.json",
        ),
    ]:
        lines = (tiny_run / log).read_text().splitlines()
        curve = [line.split(": ")[0].split()[-1] for line in lines if "curve accuracy after epoch" in line]
        lines = [line for line in lines if "curve accuracy after epoch" not in line]
        # every final model records its clean test accuracy after each epoch, a fold model none
        final = log.startswith("logs/final")
        assert curve == ([f"{epoch}/{epochs}" for epoch in range(1, epochs + 1)] if final else []), log
        assert "read results/data/digits.npz and results/noise/digits/sym0.4/seed1.parquet" in lines[0], log
        if log.startswith("logs/folds"):  # then the fold's split
            split = lines.pop(1)
            assert "fold 1 of 2, iteration 1: training on" in split and "predicting 750" in split, log
        assert [line.split("  ")[0].split(" ")[-2:] for line in lines[1:-1]] == [
            ["epoch", f"{epoch}/{epochs}"] for epoch in range(1, epochs + 1)
        ], log
        assert f"wrote {written}" in lines[-1], log


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without a GPU")
def test_a_training_job_that_asked_for_a_gpu_fails_on_a_cpu_with_the_fix_in_its_log(tmp_path, run_snakemake):
    fold = "results/folds/digits/sym0.4/seed1/K2/m1/k1.parquet"
    done = run_snakemake(tmp_path, fold, "--set-resources", "train_fold:gpu=1")
    assert done.returncode != 0 and not (tmp_path / fold).exists()
    log = (tmp_path / "logs/folds/digits/sym0.4/seed1/K2/m1/k1.log").read_text()
    assert "asked for 1 GPU(s) (its gpu resource) but torch" in log
    assert "allow training on the CPU with the resource cpu_fallback=1" in log


def test_latex_tables_escape_special_characters_and_keep_bold(tiny_run):
    tables = sorted((tiny_run / "results/report").glob("*.tex"))
    assert len(tables) >= 4
    for table in tables:
        text = table.read_text()
        body = "".join(line for line in text.splitlines(keepends=True) if not line.startswith("%"))
        assert "_" not in body.replace("\\_", ""), table.name  # every underscore escaped (kept_precision, ...)
        assert not {"±", "Δ", "—"} & set(body), table.name  # outside pdfLaTeX's default input encoding
        assert "\\toprule" in text and "\\bottomrule" in text, table.name
    assert "kept\\_precision" in (tiny_run / "results/report/confident_learning.tex").read_text()
    table2 = (tiny_run / "results/report/table2.tex").read_text()
    assert "\\textbf{" in table2 and "$\\pm$" in table2 and "0.4 $\\Delta$" in table2


def declared_outputs() -> set[str]:
    """Every ``results/...`` path (with its ``{wildcards}``) a rule of the workflow declares."""
    declared = set()
    for rules_file in (REPO / "workflow" / "rules").glob("*.smk"):
        declared |= set(re.findall(r'"(results/[^"]+)"', rules_file.read_text()))
    return declared


def test_results_readme_describes_every_file_the_workflow_writes():
    """Each ``results/...`` path a rule declares matches a row of results/README.md, where ``{a,b}`` in a row means
    either, ``...`` any path, and ``{wildcard}`` that wildcard."""
    rows = re.findall(r"^\| `([^`]+)` \|", (REPO / "results" / "README.md").read_text(), flags=re.MULTILINE)
    patterns = []
    for row in rows:
        pattern = re.escape(row).replace(r"\.\.\.", ".+")
        pattern = re.sub(r"\\\{([\w,]+,[\w,]+)\\\}", lambda m: "(" + m[1].replace(",", "|") + ")", pattern)
        patterns.append(re.compile(pattern + ("" if row.endswith("/") else "$")))
    declared = {path.removeprefix("results/") for path in declared_outputs()}
    assert len(declared) > 30
    undescribed = sorted(path for path in declared if not any(pattern.match(path) for pattern in patterns))
    assert undescribed == []


def test_make_clean_removes_every_file_the_workflow_writes(tmp_path):
    for path in [*declared_outputs(), "logs/folds/x/k1.log"]:
        written = tmp_path / re.sub(r"\{\w+\}", "x", path)
        written.parent.mkdir(parents=True, exist_ok=True)
        written.write_text("output")
    (tmp_path / "results" / "recorded" / "run").mkdir(parents=True)
    (tmp_path / "results" / "recorded" / "run" / "provenance.json").write_text("{}")
    done = subprocess.run(["make", "-f", str(REPO / "Makefile"), "clean"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    left = sorted(str(path.relative_to(tmp_path)) for path in tmp_path.rglob("*") if path.is_file())
    assert left == ["results/recorded/run/provenance.json"]  # recorded runs are committed, not outputs


def test_rerun_after_a_complete_run_has_nothing_to_do(tiny_run, run_snakemake):
    done = run_snakemake(tiny_run, "-n")
    assert done.returncode == 0 and "Nothing to be done" in done.stdout + done.stderr


def test_changing_one_datasets_epochs_reruns_only_its_jobs(tiny_run, tmp_path, run_snakemake, tiny_config):
    config = yaml.safe_load(tiny_config.read_text())
    config["datasets"]["other"] = json.loads(json.dumps(config["datasets"]["digits"]))
    # safe_dump sorts keys: reordering a config's keys must not rerun anything either.
    base = tmp_path / "base.yaml"
    base.write_text(yaml.safe_dump(config))
    added = [
        (rule, w)
        for rule, w in planned_jobs(run_snakemake(tiny_run, "-n", config=base).stdout)
        if rule.startswith("train")
    ]
    assert added and all("dataset=other" in w for _, w in added)
    config["datasets"]["digits"]["recipe"]["epochs"] = 4
    changed = tmp_path / "changed.yaml"
    changed.write_text(yaml.safe_dump(config))
    trained = [
        (rule, w)
        for rule, w in planned_jobs(run_snakemake(tiny_run, "-n", config=changed).stdout)
        if rule.startswith("train")
    ]
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    every_digits_job = [
        job
        for job in planned_jobs(run_snakemake(fresh, "-n", config=changed).stdout)
        if job[0].startswith("train") and "dataset=digits" in job[1]
    ]
    assert sorted(job for job in trained if "dataset=digits" in job[1]) == sorted(every_digits_job)
    assert sorted(job for job in trained if "dataset=other" in job[1]) == sorted(added)
    assert len(trained) == len(every_digits_job) + len(added)


@pytest.mark.parametrize("profile", SHIPPED_PROFILES)
def test_changing_a_report_setting_retrains_nothing(tiny_run, tmp_path, run_snakemake, tiny_config, profile):
    def edit(config):
        config["report"]["decimals"] = 1

    done = dry_run_after(run_snakemake, tiny_run, tmp_path, tiny_config, edit, profile)
    rules = set(re.findall(r"^(?:local)?rule (\w+):", done.stdout, flags=re.MULTILINE))
    assert {"table1", "table2"} <= rules
    assert not any(rule.startswith("train") or rule == "select_samples" for rule in rules)


@pytest.mark.parametrize(
    "profile",
    [
        ["--profile", str(REPO / "profiles" / "default")],
        ["--profile", str(REPO / "profiles" / "slurm")],
        ["--profile", str(REPO / "profiles" / "gpu-node")],
        ["--profile", str(REPO / "profiles" / "slurm-gpu")],
        [
            "--set-resources",
            "train_fold:gpu=2",
            "train_fold:loader_workers=0",
            "train_fold:cuda_graphs=1",
            "train_final_baseline:checkpoint_every=5",
            "--set-threads",
            "train_fold=4",
            "--resources",
            "gpu=3",
        ],
    ],
    ids=["default profile", "slurm profile", "gpu-node profile", "slurm-gpu profile", "resources and threads"],
)
def test_a_profile_reruns_nothing(tiny_run, run_snakemake, profile):
    """Execution lives in profiles and on the command line (resources, threads, executors are no rerun trigger), and
    every shipped profile keeps a target per fold: a finished local run moves to a cluster or a GPU node, or back,
    without retraining."""
    done = run_snakemake(tiny_run, "-n", *profile)
    assert done.returncode == 0 and "Nothing to be done" in done.stdout + done.stderr, done.stderr[-3000:]


def test_lint_is_clean():
    done = subprocess.run([sys.executable, "-m", "snakemake", "--lint"], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Congratulations, your workflow is in a good condition!" in done.stdout + done.stderr


def dry_run_after(run_snakemake, tiny_run, tmp_path, tiny_config, edit, profile="default"):
    """A dry run under ``profile`` (one of profiles/) over the finished tiny run after ``edit(config)``."""
    config = yaml.safe_load(tiny_config.read_text())
    edit(config)
    changed = tmp_path / "changed.yaml"
    changed.write_text(yaml.safe_dump(config))
    done = run_snakemake(tiny_run, "-n", "--profile", str(REPO / "profiles" / profile), config=changed)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def planned_after(run_snakemake, tiny_run, tmp_path, tiny_config, edit, profile="default") -> list[tuple[str, str]]:
    """(rule, wildcards) of the jobs with wildcards that :func:`dry_run_after` plans."""
    return planned_jobs(dry_run_after(run_snakemake, tiny_run, tmp_path, tiny_config, edit, profile).stdout)


@pytest.mark.parametrize("profile", SHIPPED_PROFILES)
def test_raising_m_trains_only_the_new_iteration(tiny_run, tmp_path, run_snakemake, tiny_config, profile):
    planned = planned_after(
        run_snakemake, tiny_run, tmp_path, tiny_config, lambda config: config["selection"].update(M=3), profile
    )
    folds = [w for rule, w in planned if rule == "train_fold"]
    assert folds and all("m=3," in w for w in folds)
    assert len(folds) == 2 * 2 * 2  # K = 2 folds x 2 noise settings x 2 seeds
    assert all("M=3" in w for rule, w in planned if rule in {"select_samples", "train_final_selected"})


@pytest.mark.parametrize("profile", SHIPPED_PROFILES)
def test_adding_a_seed_adds_only_its_jobs(tiny_run, tmp_path, run_snakemake, tiny_config, profile):
    planned = planned_after(
        run_snakemake, tiny_run, tmp_path, tiny_config, lambda config: config.update(seeds=[1, 2, 3]), profile
    )
    work = [w for rule, w in planned if rule not in {"table1", "table2", "theory_figure", "all"}]
    assert work and all("seed=3" in w for w in work)


@pytest.mark.parametrize("profile", SHIPPED_PROFILES)
@pytest.mark.parametrize(("key", "value"), [("t", 2), ("gamma", 0.5)])
def test_changing_t_or_gamma_retrains_no_model_that_does_not_use_it(
    tiny_run, tmp_path, run_snakemake, tiny_config, key, value, profile
):
    def edit(config):
        if key == "t":
            config["selection"]["t"] = value
        else:
            config["gamma"] = value

    rules = {rule for rule, _ in planned_after(run_snakemake, tiny_run, tmp_path, tiny_config, edit, profile)}
    assert "train_final_selected" in rules
    # fold models, baselines and prune-and-retrain (confident learning's kept set has no t) use neither
    assert not {"train_fold", "train_final_baseline", "confident_learning_selection", "train_final_pruned"} & rules


def test_asking_for_a_baselines_test_curve_retrains_nothing(tiny_run, tmp_path, run_snakemake, tiny_config):
    """Every final model records its curve: ``test_curve`` only asks the report to draw it."""

    def edit(config):
        config["datasets"]["digits"]["baselines"]["sl"]["test_curve"] = True  # the tiny config draws CE's alone

    dry = dry_run_after(run_snakemake, tiny_run, tmp_path, tiny_config, edit).stdout
    rules = set(re.findall(r"^(?:local)?rule (\w+):", dry, flags=re.MULTILINE))
    assert "test_curves" in rules and not {rule for rule in rules if rule.startswith("train_")}


def test_table2_sets_reproduced_beside_published(tiny_run):
    table = pd.read_csv(tiny_run / "results/report/table2.csv")
    row = table[(table["method"] == "sl") & (table["noise_kind"] == "sym")].iloc[0]
    assert row["paper_dataset"] == "MNIST" and row["published"] == 99.0  # the paper's MNIST sym 0.4 SL cell
    assert row["difference"] == pytest.approx(row["mean"] - 99.0)
    asym = table[(table["method"] == "sl") & (table["noise_kind"] == "asym")].iloc[0]
    assert np.isnan(asym["published"]) and np.isnan(asym["difference"])  # the paper has no asym 0.3 column
    assert set(table["method"]) == {"ce", "ce_mixup", "sl", "gce", "coteaching", "cl_prune", "enkcvs"}
    text = (tiny_run / "results/report/table2.md").read_text()
    lines = text.splitlines()
    header = [cell.strip() for cell in lines[0].split("|")[1:-1]]
    assert header == [
        "dataset",
        "method",
        "trainings",
        "reading",
        "symmetric 0.4",
        "symmetric 0.4 paper",
        "symmetric 0.4 Δ",
        "asymmetric 0.3",
    ]
    rows = [[cell.strip() for cell in line.split("|")[1:-1]] for line in lines[2:] if line.startswith("|")]
    assert [row[1] for row in rows[::3]] == [
        "CE",
        "Co-teaching",
        "SL",
        "CE + mixup (not in the paper)",  # the paper's
        "CL prune + retrain (not in the paper)",
        "GCE (not in the paper)",
        "E-NKCVS",
    ]
    assert [row[2] for row in rows[::3]] == ["1", "2", "1", "1", "5", "1", "5"]  # K·M + 1 at K = M = 2
    assert [row[3] for row in rows[:3]] == ["last epoch", "mean of last 10 epochs", "best epoch (optimistic)"]
    sl = rows[6]
    assert sl[0] == "digits (MNIST)" and sl[5] == "99.0 ± 0.1" and sl[6] == f"{row['difference']:+.3f}"
    assert row["last10_epochs"] == 3 and rows[7][4].endswith("(all 3 epochs)")  # fewer than ten: said in the cell
    assert rows[8][6] == f"{row['best_difference']:+.3f}"
    assert any("**" in cell for row in rows for cell in row)
    assert "The protocol is the last epoch" in text


def test_baseline_results_record_their_options(tiny_run):
    coteaching = read_json(tiny_run / "results/final/digits/sym0.4/seed1/coteaching.json")
    # forget rate = the labels' share of wrong ones (actual), resolved by the job; 10 warm-up epochs ramp per epoch
    # (auto)
    assert coteaching["options"] == {"forget_rate": "actual", "warmup_epochs": 10, "ramp": "auto", "mixup": False}
    labels, _ = read_table(tiny_run / "results/noise/digits/sym0.4/seed1.parquet")
    assert coteaching["trained_with"]["co_teaching"] == {
        "forget_rate": pytest.approx(np.mean(labels["given"] != labels["true"])),
        "warmup_epochs": 10,
        "ramp": "auto",
        "per_step": False,
    }
    sl = read_json(tiny_run / "results/final/digits/sym0.4/seed1/sl.json")
    assert sl["options"] == {"alpha": 0.01, "beta": 1.0, "mixup": False}
    assert sl["trained_with"]["loss"] == {"name": "sl", "alpha": 0.01, "beta": 1.0}


def test_table3_and_dataset_summary(tiny_run):
    table3 = pd.read_csv(tiny_run / "results/report/table3.csv")
    divide_mix = table3[table3["method"] == "DivideMix"].iloc[0]
    assert (
        divide_mix["Clothing-1M source"].startswith("quoted from") and divide_mix["Clothing-1M reproduced"] == "not run"
    )
    summary = pd.read_csv(tiny_run / "results/report/datasets.csv")
    assert summary.set_index("dataset").loc["digits", ["train", "test", "classes"]].tolist() == [1500, 297, 10]


def test_dataset_summary_names_only_the_enabled_datasets(tmp_path, run_snakemake, tiny_config):
    """A disabled dataset sorted before an enabled one must not lend its name to the enabled one's row."""
    config = yaml.safe_load(tiny_config.read_text())
    config["datasets"]["alpha"] = {**config["datasets"]["digits"], "enabled": False}
    changed = tmp_path / "disabled.yaml"
    changed.write_text(yaml.safe_dump(config))
    done = run_snakemake(tmp_path, "results/report/datasets.csv", config=changed)
    assert done.returncode == 0, done.stderr[-2000:]
    assert pd.read_csv(tmp_path / "results/report/datasets.csv")["dataset"].tolist() == ["digits"]


def test_every_output_is_the_format_its_suffix_says(tiny_run):
    """A .parquet is parquet and a .csv is comma-separated text with a header (the confident-learning table was
    once CSV text in a .parquet file)."""
    outputs = sorted(tiny_run.glob("results/**/*.parquet")) + sorted(tiny_run.glob("results/**/*.csv"))
    assert any(path.name == "confident_learning.csv" for path in outputs)
    for path in outputs:
        head = path.read_bytes()[:4]
        if path.suffix == ".parquet":
            assert head == b"PAR1", path
        else:
            assert head != b"PAR1" and not pd.read_csv(path).empty, path


def test_snakemake_report_gathers_tables_and_figures(tiny_run, run_snakemake, tmp_path):
    report = tmp_path / "report.html"
    done = run_snakemake(tiny_run, "--report", str(report))
    assert done.returncode == 0, done.stderr[-3000:]
    html = report.read_text(errors="replace")
    for name in (
        "table1.csv",
        "table2.csv",
        "table3.csv",
        "datasets.csv",
        "noise.csv",
        "sensitivity.png",
        "theory.png",
    ):
        assert name in html
    # the paper's results under their own categories, which the report's menu lists first (tests/test_conventions.py)
    for category in (
        "Paper - Table 1 (selection)",
        "Paper - Table 2 (test accuracy)",
        "Paper - Figure 1 (sensitivity)",
        "Paper - Theorem 1",
        "Supplement - Datasets and noise",
    ):
        assert json.dumps(category) in html, category
    assert "System Message" not in html  # the workflow description and captions render as reST without a warning


def test_a_run_of_baselines_alone_trains_no_fold_model_and_sl_trains_on_its_authors_schedule(
    tmp_path, run_snakemake, tiny_config
):
    config = yaml.safe_load(tiny_config.read_text())
    digits = config["datasets"]["digits"]
    digits["noise"], digits["baselines"]["sl"]["schedule"] = ["sym0.4"], "authors"
    config.update(
        seeds=[1], methods=["sl"], ablation=False, compare_confident_learning=False, sensitivity={"enabled": False}
    )
    baselines = tmp_path / "baselines.yaml"
    baselines.write_text(yaml.safe_dump(config))
    done = run_snakemake(tmp_path, config=baselines)
    assert done.returncode == 0, done.stderr[-2000:]
    assert not (tmp_path / "results/folds").exists() and not (tmp_path / "results/report/table1.csv").exists()
    sl = read_json(tmp_path / "results/final/digits/sym0.4/seed1/sl.json")
    assert sl["options"] == {"alpha": 0.01, "beta": 1.0, "mixup": False}  # the schedule went into the recipe
    assert {key: sl["recipe"][key] for key in ("lr", "lr_step_decay", "milestones", "epochs", "weight_decay")} == {
        "lr": 0.1,
        "lr_step_decay": 5e-3,
        "milestones": [11, 31],
        "epochs": 50,
        "weight_decay": 0.0,
    }
    assert sl["recipe"]["model"] == "cnn4" and sl["trained_with"]["mixup_alpha"] is None
    table2 = pd.read_csv(tmp_path / "results/report/table2.csv")
    assert table2[["method", "runs"]].values.tolist() == [["sl", 1]]
    assert table2["mean"].iloc[0] == pytest.approx(100 * sl["test_accuracy"])


def test_folds_trained_stacked_write_the_fold_tables_a_job_per_fold_writes(tiny_run, run_snakemake, tmp_path):
    """``--config stacked_folds=True`` (an explicit choice, which no shipped profile makes): one train_stack job per
    (dataset, noise, seed, K) trains its M x K folds, M the most iterations any selection of it votes over (Figure
    1's M = 2 and the main one here), and each fold's table, unstacked where train_fold writes it, holds the same
    samples and labels as the per-fold run's, the same best epoch, marked ``stacked``; the selections read them as
    they read the per-fold ones."""
    selection = "results/selection/digits/sym0.4/seed1/K2/M2/t1/metrics.json"
    done = run_snakemake(tmp_path, selection, "--config", "stacked_folds=True")
    assert done.returncode == 0, done.stderr[-3000:]
    output = done.stdout + done.stderr
    assert re.search(r"^train_stack +1$", output, flags=re.MULTILINE) and "train_fold" not in output
    assert re.search(r"^unstack_fold +4$", output, flags=re.MULTILINE)
    for m in (1, 2):
        for k in (1, 2):
            fold = f"results/folds/digits/sym0.4/seed1/K2/m{m}/k{k}.parquet"
            (got, got_meta), (expected, expected_meta) = read_table(tmp_path / fold), read_table(tiny_run / fold)
            assert got_meta["stacked"] is True and got_meta["stack"].endswith("stacks/digits/sym0.4/seed1/K2.parquet")
            assert (got_meta["m"], got_meta["k"]) == (str(m), str(k)) and got_meta["recipe"] == expected_meta["recipe"]
            assert got[["sample", "given"]].equals(expected[["sample", "given"]])
            assert got.columns.tolist() == expected.columns.tolist()
    assert read_json(tmp_path / selection)["SS"] > 0


def test_under_stacked_folds_raising_m_retrains_the_whole_stack(tiny_run, tmp_path, run_snakemake, tiny_config):
    """The stated cost of the stacked route: a stack trains M iterations at once, so raising M retrains every stack
    of the settings it changes (a job per fold would train only the new iteration)."""
    config = yaml.safe_load(tiny_config.read_text())
    config["selection"]["M"] = 3
    changed = tmp_path / "changed.yaml"
    changed.write_text(yaml.safe_dump(config))
    planned = planned_jobs(run_snakemake(tmp_path, "-n", "--config", "stacked_folds=True", config=changed).stdout)
    stacks = sorted(w for rule, w in planned if rule == "train_stack")
    assert len(stacks) == 2 * 2  # two noise settings x two seeds, each its whole M = 3 stack
    assert not [rule for rule, _ in planned if rule == "train_fold"]
