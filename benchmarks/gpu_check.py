"""The GPU check (``make gpu-check``): on a GPU machine, the tiny workflow end to end with every training job on
the GPU, then one fold of the paper's MNIST model (cnn4) and CIFAR-10 model (cnn8) as a workflow job trains it
(benchmarks/fold_speed.py: the engine, with ``recipe.cuda_graphs: auto``, beside a plain eager loop), then a
selection's M x K folds of each trained stacked against an iteration's K one after another and as K processes side
by side, with and without CUDA MPS (benchmarks/stacked_speed.py, ``stacked_folds``), then a setting's final models
likewise (``--finals``, ``stacked_finals``), then the training jobs of the paper's grid as a dry run plans them (the
view projects their GPU-hours from the measured rates), all written to one JSON under benchmarks/results/.

Sized for a few minutes on one H100 (benchmarks/README.md gives its measured times). ``--device cpu --quick`` runs
the same code path at a tiny size (the test suite's check of its wiring). Reports numbers, asserts nothing but that
each part ran.
"""

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import yaml

from enkcvs.pipeline.plan import TRAINING_RULES
from enkcvs.training.train import epoch_device

REPOSITORY = Path(__file__).resolve().parent.parent
TINY_CONFIG = REPOSITORY / "tests" / "config" / "tiny.yaml"
#: The folds measured: the paper's MNIST and CIFAR-10 recipes at their datasets' sizes (config/paper.yaml).
FOLDS = {
    "cnn4": ["--dataset", "mnist", "--shape", "1,28,28", "--samples", "60000", "--folds", "4", "--epochs", "3"],
    "cnn8": ["--dataset", "cifar10", "--shape", "3,32,32", "--samples", "50000", "--folds", "10", "--epochs", "2"],
}
#: Iterations M whose M x K folds stacked_speed.py trains stacked, as one train_selection job does.
STACKED_ITERATIONS = {"cnn4": 5, "cnn8": 2}
#: A setting's final models the check trains stacked against one after another and side by side: cnn4 on full MNIST.
FINALS = ["--dataset", "mnist", "--shape", "1,28,28", "--samples", "60000", "--epochs", "1", "--finals", "4"]
#: ``--quick``: the same runs at a size the CPU finishes in seconds.
QUICK_FOLD = ["--samples", "128", "--epochs", "1", "--steps", "3", "--compile-modes", ""]
QUICK_STACKED = ["--samples", "128", "--epochs", "1", "--folds", "2", "--iterations", "2"]
QUICK_FINALS = ["--samples", "128", "--finals", "2"]
#: ``--quick`` images, a quarter of the pixels: the same layers (a bf16 CPU without bf16 hardware is slow at them).
QUICK_SHAPES = {"cnn4": "1,12,12", "cnn8": "3,16,16"}
#: The grid whose GPU-hours the check projects from its measured folds (``--quick``: the tiny config's).
PAPER_CONFIG = REPOSITORY / "config" / "paper.yaml"
#: How Snakemake's dry run names a job's rule and wildcards.
DRY_RUN_RULE = re.compile(r"^(?:local)?rule (\w+):$")
DRY_RUN_WILDCARDS = re.compile(r"^\s+wildcards: (.*)$")


def tiny_workflow(*, workdir: Path, gpu: bool, quick: bool, parallel_jobs: int) -> dict:
    """Run the tiny config with every training job asking for a GPU (``gpu.per_training_job: 1``, so that a job
    that sees none fails), ``parallel_jobs`` of them side by side; its wall time, job count and Table 2."""
    config = yaml.safe_load(TINY_CONFIG.read_text())
    config["gpu"] = {"per_training_job": 1 if gpu else 0}
    if quick:
        config.update(seeds=[1], ablation=False, compare_confident_learning=False, sensitivity={"enabled": False})
        config["datasets"]["digits"]["noise"] = config["datasets"]["digits"]["noise"][:1]
    path = workdir / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    command = [
        sys.executable,
        "-m",
        "snakemake",
        "-s",
        str(REPOSITORY / "workflow" / "Snakefile"),
        "-d",
        str(workdir),
        "--configfile",
        str(path),
        "--cores",
        str(parallel_jobs),
        "--resources",
        f"gpu={parallel_jobs}",
    ]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"the tiny workflow failed ({' '.join(command)}):\n{done.stderr[-3000:]}")
    lines = [line for log in (workdir / "logs").rglob("*.log") for line in log.read_text().splitlines()]
    devices = [device for device in map(epoch_device, lines) if device is not None]
    table2 = workdir / "results" / "report" / "table2.csv"
    return {
        "config": config,
        "seconds": round(seconds, 1),
        "training_jobs": len(list((workdir / "results" / "benchmarks").rglob("*.tsv"))),
        "epoch_lines": len(devices),
        "epoch_lines_by_device": dict(Counter(devices)),
        "table2": table2.read_text() if table2.exists() else None,
    }


def training_jobs(config: Path, *, workdir: Path) -> list[dict]:
    """The training jobs of ``config``'s whole grid as Snakemake plans them from scratch (a dry run): how many of
    each rule per dataset and K, with the dataset's model, epochs and training samples."""
    command = [
        sys.executable,
        "-m",
        "snakemake",
        "-s",
        str(REPOSITORY / "workflow" / "Snakefile"),
        "-d",
        str(workdir),
        "--configfile",
        str(config),
        "--dry-run",
    ]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"the dry run of {config} failed ({' '.join(command)}):\n{done.stderr[-3000:]}")
    counts, rule = Counter(), None
    for line in done.stdout.splitlines():
        if named := DRY_RUN_RULE.match(line):
            rule = named[1]
        elif (wildcards := DRY_RUN_WILDCARDS.match(line)) and rule in TRAINING_RULES:
            values = dict(pair.split("=", 1) for pair in wildcards[1].split(", "))
            counts[rule, values["dataset"], int(values["K"]) if "K" in values else None] += 1
            rule = None
    from enkcvs.data.sources import SOURCES

    datasets = yaml.safe_load(config.read_text())["datasets"]
    return [
        {
            "rule": rule,
            "dataset": dataset,
            "K": folds,
            "jobs": jobs,
            "model": datasets[dataset]["recipe"]["model"],
            "epochs": datasets[dataset]["recipe"]["epochs"],
            "train_size": SOURCES[datasets[dataset]["source"]].train_size,
            "validation_fraction": datasets[dataset]["recipe"].get("validation_fraction", 0.1),
        }
        for (rule, dataset, folds), jobs in sorted(counts.items(), key=str)
    ]


def fold_speed(*, device: str, model: str, quick: bool, workdir: Path) -> dict:
    """benchmarks/fold_speed.py's JSON for ``model``'s fold (:data:`FOLDS`)."""
    out = workdir / f"fold_speed-{model}.json"
    arguments = [*FOLDS[model], *(QUICK_FOLD + ["--shape", QUICK_SHAPES[model]] if quick else [])]
    subprocess.run(
        [
            sys.executable,
            str(REPOSITORY / "benchmarks" / "fold_speed.py"),
            "--device",
            device,
            *arguments,
            "--out",
            str(out),
        ],
        check=True,
    )
    return json.loads(out.read_text())


def stacked_speed(*, device: str, model: str, quick: bool, workdir: Path) -> dict:
    """benchmarks/stacked_speed.py's JSON for ``model``'s selection (:data:`FOLDS`' data, recipe and K; M of
    :data:`STACKED_ITERATIONS`)."""
    out = workdir / f"stacked_speed-{model}.json"
    subprocess.run(
        [
            sys.executable,
            str(REPOSITORY / "benchmarks" / "stacked_speed.py"),
            "--device",
            device,
            *FOLDS[model],
            "--iterations",
            str(STACKED_ITERATIONS[model]),
            *(QUICK_STACKED + ["--shape", QUICK_SHAPES[model]] if quick else []),
            "--out",
            str(out),
        ],
        check=True,
    )
    return json.loads(out.read_text())


def finals_speed(*, device: str, quick: bool, workdir: Path) -> dict:
    """benchmarks/stacked_speed.py's JSON for a setting's final models of cnn4 (:data:`FINALS`)."""
    out = workdir / "stacked_speed-finals.json"
    subprocess.run(
        [
            sys.executable,
            str(REPOSITORY / "benchmarks" / "stacked_speed.py"),
            "--device",
            device,
            *FINALS,
            *(QUICK_FINALS + ["--shape", QUICK_SHAPES["cnn4"]] if quick else []),
            "--out",
            str(out),
        ],
        check=True,
    )
    return json.loads(out.read_text())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"), help="where to train (default cuda)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes: the wiring only, e.g. on the CPU")
    parser.add_argument("--parallel-jobs", type=int, default=4, help="training jobs side by side (default 4)")
    parser.add_argument("--out", type=Path, required=True, help="the JSON written (its folder must exist)")
    args = parser.parse_args(argv)
    if not args.out.parent.is_dir():
        parser.error(f"--out {args.out}: folder {args.out.parent} does not exist")
    if args.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            parser.error(f"--device cuda: torch {torch.__version__} sees no GPU; on a CPU use --device cpu --quick")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        workdir = Path(folder)
        (workdir / "tiny").mkdir()
        results = {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "device": args.device,
            "quick": args.quick,
            "tiny_workflow": tiny_workflow(
                workdir=workdir / "tiny", gpu=args.device == "cuda", quick=args.quick, parallel_jobs=args.parallel_jobs
            ),
            "folds": {
                model: fold_speed(device=args.device, model=model, quick=args.quick, workdir=workdir) for model in FOLDS
            },
            "stacked": {
                model: stacked_speed(device=args.device, model=model, quick=args.quick, workdir=workdir)
                for model in FOLDS
            },
            "finals": {"cnn4": finals_speed(device=args.device, quick=args.quick, workdir=workdir)},
            "grid": {
                "config": str((TINY_CONFIG if args.quick else PAPER_CONFIG).relative_to(REPOSITORY)),
                "training_jobs": training_jobs(TINY_CONFIG if args.quick else PAPER_CONFIG, workdir=workdir / "grid"),
            },
        }
    results["seconds"] = round(time.perf_counter() - started, 1)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    workflow = results["tiny_workflow"]
    print(
        f"tiny workflow: {workflow['training_jobs']} training jobs in {workflow['seconds']} s, "
        f"{workflow['epoch_lines_by_device'].get('cuda', 0)} of {workflow['epoch_lines']} epochs on CUDA; folds: "
        + ", ".join(f"{model} {fold['engine_fold']['seconds']:.1f} s" for model, fold in results["folds"].items())
        + "; stacked against per fold: "
        + ", ".join(f"{model} {stacked['speedup']:.2f}x" for model, stacked in results["stacked"].items())
        + "; final models stacked against one after another: "
        + ", ".join(f"{model} {finals['speedup']:.2f}x" for model, finals in results["finals"].items())
        + f"; written to {args.out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
