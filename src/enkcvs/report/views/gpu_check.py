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


def _fold_row(model: str, fold: dict, paper_epochs: int) -> dict:
    """One model's fold: whether its steps replayed as CUDA graphs, the engine's time per epoch (one-off costs
    included) and projected to the paper's epochs, its training samples per second against the eager loop's, then each
    step loop's rate, its ratio to eager and its compilation's seconds."""
    epochs, seconds = fold["recipe"]["epochs"], fold["engine_fold"]["seconds"]
    engine_rate = epochs * fold["fold"]["train"] / seconds  # training samples/s, validation and prediction included
    row = {"model": model, "samples (train / validation / held out)":
           f"{fold['fold']['train']:,} / {fold['fold']['validation']:,} / {fold['fold']['held_out']:,}",
           "precision": "bf16" if fold["engine_fold"]["bf16"] else "fp32",
           "CUDA graphs": {True: "yes", False: "no"}.get(fold["engine_fold"].get("cuda_graphs"), "not in this check"),
           "epochs timed": epochs, "engine fold: s per epoch": f"{seconds / epochs:.2f}",
           "engine fold at the paper's epochs (s)": f"{seconds / epochs * paper_epochs:.0f} ({paper_epochs})",
           "engine / eager loop": f"{engine_rate / fold['step_loops']['eager']['samples_per_s']:.2f}x"}
    for name, loop in fold["step_loops"].items():
        rate = f"{loop['samples_per_s']:,.0f}"
        row[f"{name} (samples/s)"] = rate if name == "eager" else (
            f"{rate} ({loop['ratio_to_eager']:.2f}x; {loop['warmup_s']:.0f} s to compile)")
    return row


def gpu_check_view(path: Path, *, paper_config: Path) -> str:
    """The block of one GPU check's JSON ``path`` (``benchmarks/gpu_check.py``), its folds projected to the epochs of
    ``paper_config``'s recipes."""
    check = json.loads(path.read_text())
    workflow, folds = check["tiny_workflow"], check["folds"]
    first = next(iter(folds.values()))
    paper_epochs = _paper_epochs(paper_config)
    table = pd.DataFrame([_fold_row(model, fold, paper_epochs[model]) for model, fold in folds.items()])
    runtime = (f"CUDA {first['cuda']}" if "cuda" in first else  # a check's wiring run on a CPU (--device cpu)
               f"{first['threads']} threads, {' '.join(first['cpu_flags'])}")
    return (f"GPU check of {check['date'][:10]} (`{path.name}`) on an {first['device']}, torch {first['torch']}, "
            f"{runtime}: {check['seconds']:.0f} s in all. The tiny workflow ran "
            f"{workflow['training_jobs']} training jobs, {workflow['config']['gpu']['per_training_job']} GPU each, in "
            f"{workflow['seconds']:.0f} s ({_epochs_by_device(workflow)}). One fold of each paper model as a "
            "`train_fold` job trains it (the engine, its one-off costs included), then its training step as a plain "
            f"loop, eager and under `torch.compile`:\n\n{table.to_markdown(index=False)}\n" + _stacked(check))


def _side_by_side(run: dict | None) -> str:
    """The summed rate of K per-fold processes side by side, or why it was not measured."""
    if run is None:
        return "not in this check"
    return f"{run['samples_per_s']:,.0f}" if "samples_per_s" in run else f"not measured: {run['unavailable']}"


def _stacked(check: dict) -> str:
    """The check's iterations trained stacked against per fold, one after another and side by side (with and without
    CUDA MPS), and against one eager loop of the same model (``stacked_folds``; checks from before it: nothing)."""
    if "stacked" not in check:
        return ""
    rows = [{"model": model, "folds": run["folds"], "epochs": run["recipe"]["epochs"],
             "per fold, one after another (samples/s)": f"{run['per_fold_samples_per_s']:,.0f}",
             "per fold, side by side (samples/s)": _side_by_side(run.get("side_by_side")),
             "per fold, side by side under MPS (samples/s)": _side_by_side(run.get("side_by_side_mps")),
             "stacked (samples/s)": f"{run['stacked_samples_per_s']:,.0f}",
             "stacked / per fold": f"{run['speedup']:.2f}x",
             "stacked / one eager loop": (f"{run['stacked_samples_per_s'] / eager:.2f}x" if (
                 eager := check["folds"].get(model, {}).get("step_loops", {}).get("eager", {}).get("samples_per_s"))
                 else "no eager loop")}
            for model, run in check["stacked"].items()]
    return ("\nAn iteration's K folds of each, trained stacked (one job, `stacked_folds: true`) against the same K "
            "trained per fold, one after another in one process and as K processes side by side (summed training "
            "samples per second, validation and prediction included), and against the eager loop above:\n\n"
            + pd.DataFrame(rows).to_markdown(index=False) + "\n")
