"""What a GPU check measured (view ``gpu-check``: the block ``<file stem>/gpu-check`` of a JSON that
``benchmarks/gpu_check.py`` wrote under ``benchmarks/results/``): the tiny workflow on the GPU, then one fold of the
paper's MNIST and CIFAR-10 models as a workflow job trains it, eager and compiled, each projected to the paper's
epochs."""

import json
from pathlib import Path

import pandas as pd
import yaml


def _paper_epochs(paper_config: Path) -> dict[str, int]:
    """The epochs the paper's recipe trains each model for (config/paper.yaml), by model name."""
    datasets = yaml.safe_load(paper_config.read_text())["datasets"]
    return {spec["recipe"]["model"]: spec["recipe"]["epochs"] for spec in datasets.values()}


def _epochs_by_device(workflow: dict) -> str:
    counted = workflow.get("epoch_lines_by_device")
    if counted is None:  # the first check's counter looked for lines ending in the device; they end in " bf16"
        return f"{workflow['epoch_lines']} epochs, their device not counted by that version of the check"
    return ", ".join(f"{lines} of {workflow['epoch_lines']} epochs on {device}" for device, lines in counted.items())


def _engine_rate(fold: dict) -> float:
    """The engine fold's training samples per second (validation and prediction included in its time)."""
    return fold["recipe"]["epochs"] * fold["fold"]["train"] / fold["engine_fold"]["seconds"]


def _fold_row(model: str, fold: dict, paper_epochs: int) -> dict:
    """One model's fold: whether its steps replayed as CUDA graphs, the engine's time per epoch (one-off costs
    included) and projected to the paper's epochs, its training samples per second against the eager loop's, then each
    step loop's rate, its ratio to eager and its compilation's seconds."""
    epochs, seconds = fold["recipe"]["epochs"], fold["engine_fold"]["seconds"]
    row = {
        "model": model,
        "samples (train / validation / held out)": f"{fold['fold']['train']:,} / {fold['fold']['validation']:,} / {fold['fold']['held_out']:,}",
        "precision": "bf16" if fold["engine_fold"]["bf16"] else "fp32",
        "CUDA graphs": {True: "yes", False: "no"}.get(fold["engine_fold"].get("cuda_graphs"), "not in this check"),
        "epochs timed": epochs,
        "engine fold: s per epoch": f"{seconds / epochs:.2f}",
        "engine fold at the paper's epochs (s)": f"{seconds / epochs * paper_epochs:.0f} ({paper_epochs})",
        "engine / eager loop": f"{_engine_rate(fold) / fold['step_loops']['eager']['samples_per_s']:.2f}x",
    }
    for name, loop in fold["step_loops"].items():
        rate = f"{loop['samples_per_s']:,.0f}"
        row[f"{name} (samples/s)"] = (
            rate
            if name == "eager"
            else (f"{rate} ({loop['ratio_to_eager']:.2f}x; {loop['warmup_s']:.0f} s to compile)")
        )
    return row


def gpu_check_view(path: Path, *, paper_config: Path) -> str:
    """The block of one GPU check's JSON ``path`` (``benchmarks/gpu_check.py``), its folds projected to the epochs of
    ``paper_config``'s recipes."""
    check = json.loads(path.read_text())
    workflow, folds = check["tiny_workflow"], check["folds"]
    first = next(iter(folds.values()))
    paper_epochs = _paper_epochs(paper_config)
    table = pd.DataFrame([_fold_row(model, fold, paper_epochs[model]) for model, fold in folds.items()])
    runtime = (
        f"CUDA {first['cuda']}"
        if "cuda" in first
        # a check's wiring run on a CPU (--device cpu)
        else f"{first['threads']} threads, {' '.join(first['cpu_flags'])}"
    )
    return (
        f"GPU check of {check['date'][:10]} (`{path.name}`) on an {first['device']}, torch {first['torch']}, "
        f"{runtime}: {check['seconds']:.0f} s in all. The tiny workflow ran "
        f"{workflow['training_jobs']} training jobs, {workflow['config']['gpu']['per_training_job']} GPU each, in "
        f"{workflow['seconds']:.0f} s ({_epochs_by_device(workflow)}). One fold of each paper model as a "
        "`train_fold` job trains it (the engine, a job's one-off costs included"
        + (", after a one-epoch fold that made `auto`'s once-per-machine probes" if "probe_fold" in first else "")
        + "), then its training step as a plain "
        f"loop, eager and under `torch.compile`:\n\n{table.to_markdown(index=False)}\n"
        + _stacked(check, paper_epochs=paper_epochs)
        + _finals(check)
        + _grid(check)
    )


def _side_by_side(run: dict | None) -> str:
    """The summed rate of K per-fold processes side by side, or why it was not measured."""
    if run is None:
        return "not in this check"
    return f"{run['samples_per_s']:,.0f}" if "samples_per_s" in run else f"not measured: {run['unavailable']}"


def _fold_sample_epochs(run: dict) -> float:
    """A stacked run's training samples of one fold in one epoch (its ``samples`` sum every fold's, every epoch)."""
    return run["samples"] / run["folds"] / run["recipe"]["epochs"]


def _stacked(check: dict, *, paper_epochs: dict[str, int]) -> str:
    """The check's iterations trained stacked against per fold, one after another and side by side (with and without
    CUDA MPS), and against one eager loop of the same model, and one fold at the paper's epochs as stacked training
    takes it, its share of the stacked time (``stacked_folds``; checks from before it: nothing)."""
    if "stacked" not in check:
        return ""
    rows = [
        {
            "model": model,
            "folds": run["folds"],
            "stacked iterations": run.get("iterations", 1),
            "epochs": run["recipe"]["epochs"],
            "per fold, one after another (samples/s)": f"{run['per_fold_samples_per_s']:,.0f}",
            "per fold, side by side (samples/s)": _side_by_side(run.get("side_by_side")),
            "per fold, side by side under MPS (samples/s)": _side_by_side(run.get("side_by_side_mps")),
            "stacked (samples/s)": f"{run['stacked_samples_per_s']:,.0f}",
            "stacked / per fold": f"{run['speedup']:.2f}x",
            "stacked in CUDA graphs": _graphs(run, "stacked"),
            "stacked / one eager loop": (
                f"{run['stacked_samples_per_s'] / eager:.2f}x"
                if (eager := check["folds"].get(model, {}).get("step_loops", {}).get("eager", {}).get("samples_per_s"))
                else "no eager loop"
            ),
            "one fold at the paper's epochs, stacked (s)": f"{_fold_sample_epochs(run) * paper_epochs[model] / run['stacked_samples_per_s']:.0f} "
            f"({paper_epochs[model]})",
        }
        for model, run in check["stacked"].items()
    ]
    return (
        "\nM iterations' K folds of each, trained stacked (one job, `stacked_folds: true`; checks before it "
        "stacked one iteration) against an iteration's K trained per fold, one after another in one process and "
        "as K processes side by side (summed training samples per second, validation and prediction included), "
        "and against the eager loop above:\n\n" + pd.DataFrame(rows).to_markdown(index=False) + "\n"
    )


def _graphs(run: dict, way: str) -> str:
    return {True: "yes", False: "no"}.get(run.get("cuda_graphs", {}).get(way), "not in this check")


def _finals(check: dict) -> str:
    """A setting's final models trained stacked against one after another and side by side, with and without CUDA
    MPS (``stacked_finals``; checks from before it: nothing)."""
    if "finals" not in check:
        return ""
    rows = [
        {
            "model": model,
            "final models": run["models"],
            "epochs": run["recipe"]["epochs"],
            "one after another (samples/s)": f"{run['alone_samples_per_s']:,.0f}",
            "side by side (samples/s)": _side_by_side(run.get("side_by_side")),
            "side by side under MPS (samples/s)": _side_by_side(run.get("side_by_side_mps")),
            "stacked (samples/s)": f"{run['stacked_samples_per_s']:,.0f}",
            "stacked / one after another": f"{run['speedup']:.2f}x",
            "stacked in CUDA graphs": _graphs(run, "stacked"),
        }
        for model, run in check["finals"].items()
    ]
    return (
        "\nA setting's final models (every sample, plain cross-entropy), trained stacked (one job, "
        "`stacked_finals: true`) against one after another in one process and as processes side by side (summed "
        "training samples per second):\n\n" + pd.DataFrame(rows).to_markdown(index=False) + "\n"
    )


def _job_samples(entry: dict) -> float:
    """Training samples per epoch of one job of a grid entry: a fold model's share of the dataset less its
    validation split, a final model's whole training set."""
    if entry["K"] is None:
        return entry["train_size"]
    return entry["train_size"] * (1 - 1 / entry["K"]) * (1 - entry["validation_fraction"])


def _grid(check: dict) -> str:
    """The grid's training jobs (``check["grid"]``: the paper's, or the tiny config's in a quick run) projected to
    GPU-hours from the check's measured rates, per dataset: one job at a time at the engine fold's rate, and with the
    fold models stacked at the stacked rate; models the check did not measure are counted, not projected."""
    if "grid" not in check:
        return ""
    per_dataset: dict[str, dict] = {}
    for entry in check["grid"]["training_jobs"]:
        row = per_dataset.setdefault(
            entry["dataset"],
            {"dataset": entry["dataset"], "model": entry["model"], "training jobs": 0, "engine": 0.0, "stacked": 0.0},
        )
        row["training jobs"] += entry["jobs"]
        fold, stacked = check["folds"].get(entry["model"]), check.get("stacked", {}).get(entry["model"])
        if fold is None or entry["train_size"] is None:
            row["engine"] = row["stacked"] = None
            continue
        sample_epochs = entry["jobs"] * entry["epochs"] * _job_samples(entry)
        engine_rate = _engine_rate(fold)
        if row["engine"] is not None:
            row["engine"] += sample_epochs / engine_rate / 3600
        if entry["K"] is not None and stacked is None:  # a check from before stacked folds
            row["stacked"] = None
        elif row["stacked"] is not None:
            rate = engine_rate if entry["K"] is None else stacked["stacked_samples_per_s"]
            row["stacked"] += sample_epochs / rate / 3600
    rows = [
        {
            "dataset": row["dataset"],
            "model": row["model"],
            "training jobs": f"{row['training jobs']:,}",
            "GPU-hours, one job at a time": "not measured" if row["engine"] is None else f"{row['engine']:,.1f}",
            "GPU-hours, fold models stacked": "not measured" if row["stacked"] is None else f"{row['stacked']:,.1f}",
        }
        for row in per_dataset.values()
    ]
    return (
        f"\nThe grid of `{check['grid']['config']}` projected from these rates: its training jobs as a dry run "
        "plans them, each job's training samples times its epochs at the engine fold's measured rate of its "
        "model (one job at a time), and with each iteration's fold models stacked at the stacked rate (final "
        "models at the engine's); linear in samples and epochs, co-teaching's two networks counted as one, a "
        "projection, not a run:\n\n" + pd.DataFrame(rows).to_markdown(index=False) + "\n"
    )
