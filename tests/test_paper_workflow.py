"""The paper config's DAG, and the workflow on the paper's data paths: a user-supplied Clothing-1M copy (layout
check, image files streamed from disk, 'real' noise, Table 3) and TREC through the tokenise rule and the shipped
MiniLM weights. The data are the format-faithful fixtures of ``source_fixtures``."""

import json
import os
import re
from pathlib import Path
from unittest import mock

import numpy as np
import pandas as pd
import pytest
import yaml
from source_fixtures import write_clothing1m_tree, write_trec_files

from enkcvs.data.datasets import load_dataset, save_dataset

pytestmark = pytest.mark.workflow

REPO = Path(__file__).resolve().parents[1]
PAPER = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())


def _job_counts(output: str) -> dict[str, int]:
    """Snakemake's dry-run job table as {rule: count}."""
    return {rule: int(count) for rule, count in re.findall(r"^(\w+)\s+(\d+)$", output, flags=re.M)}


def _write_config(path: Path, config: dict) -> Path:
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


@pytest.mark.parametrize(
    "profile",
    [[], ["--profile", str(REPO / "profiles" / "slurm")], ["--profile", str(REPO / "profiles" / "gpu-node")]],
    ids=["local", "slurm", "gpu-node"],
)
def test_paper_dag_builds_without_data_and_counts_every_job(tmp_path, run_snakemake, profile):
    """Every shipped profile plans the same jobs: one a fold model."""
    done = run_snakemake(tmp_path, "-n", "--quiet", "rules", *profile, config=REPO / "config" / "paper.yaml")
    assert done.returncode == 0, done.stderr[-3000:]
    counts = _job_counts(done.stdout + done.stderr)
    enabled = {name: d for name, d in PAPER["datasets"].items() if d.get("enabled", True)}
    K, M = PAPER["selection"]["K"], PAPER["selection"]["M"]
    main_folds = sum(len(d["noise"]) for d in enabled.values()) * len(PAPER["seeds"]) * M * K
    sensitivity = PAPER["sensitivity"]
    extra_k = [k for k in sensitivity["K"] if k != K]  # K = 10 iterations 1..5 are the main run's
    assert max(sensitivity["M"]) <= M and set(sensitivity["seeds"]) <= set(PAPER["seeds"])
    sweep_folds = len(sensitivity["noise"]) * len(sensitivity["seeds"]) * M * sum(extra_k)
    assert counts["train_fold"] == main_folds + sweep_folds == 7600
    assert counts["prepare_dataset"] == len(enabled) == 4
    assert counts["tokenize"] == 1  # TREC, once for its checkpoint
    assert counts["compare_confident_learning"] == counts["inject_noise"] == 140
    assert "check_layout" not in counts  # Clothing-1M and WebVision stay off until the user points at their data
    assert {"table1", "table2", "table3", "sensitivity_figure", "theory_figure", "dataset_summary"} <= set(counts)
    # every rule's jobs, in parts that add up to the total
    finals = counts["train_final_baseline"] + counts["train_final_selected"] + counts.get("train_final_pruned", 0)
    report_rules = set(
        re.findall(r"^rule (\w+):", (REPO / "workflow" / "rules" / "report.smk").read_text(), flags=re.M)
    ) | {rule for rule in counts if rule.endswith("_report")}
    reports = sum(count for rule, count in counts.items() if rule in report_rules)
    parts = [counts[rule] for rule in ("train_fold", "inject_noise", "select_samples", "compare_confident_learning")]
    parts += [finals, counts["prepare_dataset"], counts["tokenize"], reports, counts["all"]]
    assert sum(parts) == counts["total"]


def test_enabling_clothing1m_without_its_folder_is_a_config_error(tmp_path, run_snakemake):
    config = json.loads(json.dumps(PAPER))
    config["datasets"]["clothing1m"]["enabled"] = True
    del config["datasets"]["clothing1m"]["source_options"]["root"]
    done = run_snakemake(tmp_path, "-n", config=_write_config(tmp_path / "paper.yaml", config))
    assert done.returncode != 0
    assert (
        "set datasets.clothing1m.source_options.root to your copy in the official layout" in done.stdout + done.stderr
    )


def _clothing_config(root: Path) -> dict:
    """Clothing-1M's paper entry on a miniature copy: small crops and a tiny CNN, so it runs in seconds."""
    entry = json.loads(json.dumps(PAPER["datasets"]["clothing1m"]))
    entry.update(enabled=True, selection={"K": 2, "M": 2, "t": 1})
    entry["source_options"] = {"root": str(root), "resize": 14, "crop": 12}
    entry["recipe"].update(model="cnn4", epochs=2, batch_size=8, validation_fraction=0.2)
    entry["baselines"]["coteaching"]["warmup_epochs"] = 1
    return {
        "datasets": {"clothing": entry},
        "seeds": [1],
        "selection": {"K": 2, "M": 2, "t": 1},
        "methods": ["ce", "coteaching", "enkcvs"],
        "report": {"decimals": 1},
    }


def test_clothing1m_runs_from_a_user_folder_through_table3(tmp_path, run_snakemake):
    written = write_clothing1m_tree(tmp_path / "clothing", num_train=40, num_test=12)
    done = run_snakemake(tmp_path, config=_write_config(tmp_path / "c.yaml", _clothing_config(tmp_path / "clothing")))
    assert done.returncode == 0, done.stderr[-4000:]
    assert "check_layout" in done.stderr
    data = load_dataset(tmp_path / "results" / "data" / "clothing.npz")
    assert data.modality == "image_files" and data.image_transform["crop"] == 12
    np.testing.assert_array_equal(data.y_train, written.y_train)
    labels = pd.read_parquet(tmp_path / "results" / "noise" / "clothing" / "real" / "seed1.parquet")
    assert (labels["true"] == -1).all() and (labels["given"].to_numpy() == written.y_train).all()
    metrics = json.loads(next((tmp_path / "results" / "selection").rglob("metrics.json")).read_text())
    assert metrics["true_labels_known"] is False and "precision" not in metrics
    table3 = pd.read_csv(tmp_path / "results" / "report" / "table3.csv")
    ours = table3.set_index("method").loc["E-NKCVS", "Clothing-1M reproduced"]
    result = json.loads(
        (
            tmp_path / "results" / "final" / "clothing" / "real" / "seed1" / "K2" / "M2" / "t1" / "enkcvs.json"
        ).read_text()
    )
    assert ours.startswith(f"{100 * result['test_accuracy']:.1f}")
    assert table3.set_index("method").loc["DivideMix", "Clothing-1M reproduced"] == "not run"


def test_a_broken_clothing1m_layout_stops_before_any_training(tmp_path, run_snakemake):
    write_clothing1m_tree(tmp_path / "clothing", num_train=8, num_test=4)
    (tmp_path / "clothing" / "clean_test_key_list.txt").unlink()
    done = run_snakemake(tmp_path, config=_write_config(tmp_path / "c.yaml", _clothing_config(tmp_path / "clothing")))
    assert done.returncode != 0
    log = (tmp_path / "logs" / "data" / "clothing.layout.log").read_text()
    assert "clean_test_key_list.txt" in log
    assert (
        not (tmp_path / "results" / "folds").exists() and not (tmp_path / "results" / "data" / "clothing.npz").exists()
    )


def test_trec_runs_through_the_tokenise_rule_with_the_shipped_minilm(tmp_path, run_snakemake, monkeypatch):
    from enkcvs.data.sources import load_source, trec

    written = write_trec_files(tmp_path / "trec", num_train=36, num_test=12)
    # The fixture is not the official file, so its md5 differs: accept it here, in-process only, to write the
    # prepared dataset that the workflow then takes as given (the data rule's checksum path is tested elsewhere).
    monkeypatch.setattr(trec, "MD5", written.md5)
    save_dataset(
        load_source("trec", root=str(tmp_path / "trec"), download=False), tmp_path / "results" / "data" / "trec.npz"
    )
    paper_trec = PAPER["datasets"]["trec"]
    entry = {
        **paper_trec,
        "source_options": {"root": str(tmp_path / "trec"), "download": False},
        "noise": ["sym0.4"],
        "max_length": 16,
        "recipe": {**paper_trec["recipe"], "model_options": {}, "epochs": 1, "batch_size": 12},
    }
    config = {
        "datasets": {"trec": entry},
        "seeds": [1],
        "selection": {"K": 2, "M": 1, "t": 1},
        "methods": ["ce", "enkcvs"],
    }
    done = run_snakemake(tmp_path, config=_write_config(tmp_path / "t.yaml", config))
    assert done.returncode == 0, done.stderr[-4000:]
    assert not re.search(r"rule prepare_dataset", done.stderr)  # the prepared file was taken as given
    with np.load(tmp_path / "results" / "tokens" / "trec" / "all-MiniLM-L6-v2.npz") as tokens:
        assert tokens["train"].shape[:2] == (36, 2) and tokens["train"].shape[2] <= 16
        assert tokens["test"].shape[:2] == (12, 2)
    for method in ("ce", "enkcvs"):
        path = tmp_path / "results" / "final" / "trec" / "sym0.4" / "seed1"
        result = json.loads(next(path.rglob(f"{method}.json")).read_text())
        assert 0.0 <= result["test_accuracy"] <= 1.0 and result["recipe"]["model"] == "text_classifier"


def _planned_jobs(workdir: Path, config: dict) -> dict[tuple, tuple]:
    """Every job of ``config``'s DAG (built through Snakemake's API, no job run) as {(rule, outputs): (params,
    inputs)}."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import ConfigSettings, DAGSettings, OutputSettings, ResourceSettings, StorageSettings

    configfile = _write_config(workdir / f"config-{len(list(workdir.glob('config-*')))}.yaml", config)
    # planning in this process sets PYTHONPATH for the jobs (workflow/rules/common.smk): not for the tests after it
    with mock.patch.dict(os.environ), SnakemakeApi(OutputSettings()) as api:
        planned = api.workflow(
            snakefile=REPO / "workflow" / "Snakefile",
            resource_settings=ResourceSettings(cores=1),
            config_settings=ConfigSettings(configfiles=[configfile]),
            storage_settings=StorageSettings(),
            workdir=workdir,
        ).dag(DAGSettings())
        workflow = planned.workflow_api._workflow
        workflow._prepare_dag(forceall=False, ignore_incomplete=False, lock_warn_only=False)
        workflow._build_dag()
        return {
            (job.rule.name, tuple(job.output)): (repr(sorted(dict(job.params.items()).items())), tuple(job.input))
            for job in workflow.dag.jobs
        }


def _affected(before: dict[tuple, tuple], after: dict[tuple, tuple]) -> set[tuple]:
    """The jobs of ``after`` that a run finished under ``before`` would rerun: new outputs, changed params or inputs,
    and every job downstream of one of those."""
    affected = {job for job, planned in after.items() if before.get(job) != planned}
    producer = {output: job for job in after for output in job[1]}
    changed = True
    while changed:
        changed = False
        for job, (_, inputs) in after.items():
            if job not in affected and any(producer.get(path) in affected for path in inputs):
                affected.add(job)
                changed = True
    return affected


@pytest.fixture(scope="module")
def paper_plan(tmp_path_factory) -> dict[tuple, tuple]:
    return _planned_jobs(tmp_path_factory.mktemp("paper-plan"), PAPER)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ("trec epochs", lambda job: "/trec/" in job[1][0]),
        ("gamma", lambda job: job[0] == "train_final_selected" and job[1][0].endswith(("/enkcvs.json",))),
        ("a new seed", lambda job: "/seed6" in job[1][0]),
    ],
)
def test_one_changed_value_of_the_paper_config_plans_exactly_its_targets(tmp_path, paper_plan, change, expected):
    """Dry-run planning of config/paper.yaml: after one changed value, the jobs whose outputs, params or inputs
    differ (and their downstream) are exactly that value's targets, beside the report rules that gather them. The
    two plans are made in different folders, as a working directory moved elsewhere: that alone changes nothing."""
    changed = json.loads(json.dumps(PAPER))
    if change == "trec epochs":
        changed["datasets"]["trec"]["recipe"]["epochs"] += 1
    elif change == "gamma":
        changed["gamma"] = 0.3
    else:
        changed["seeds"] = [*PAPER["seeds"], 6]
    affected = _affected(paper_plan, _planned_jobs(tmp_path, changed))
    computed = {job for job in affected if job[0] != "all" and not job[1][0].startswith("results/report/")}
    assert computed and [job for job in computed if not expected(job)] == []
    if change == "trec epochs":  # every training job of TREC, not one of another dataset
        trained = {job for job in paper_plan if job[0].startswith("train_") and "/trec/" in job[1][0]}
        assert trained <= computed
