"""The GPU check (``make gpu-check``), in parts, each its own process with its own timeout, each writing its JSON
into ``--out-dir`` as soon as it ends, so that a hang or a queue's time limit loses at most the part it stopped.

The parts, in order (``--plan`` prints them with their estimated seconds on an H100 or H200, from the last measured
figures where a committed check has them, and the total):

- ``smoke``: the versions (torch, CUDA, the device), and two steps of each training path on the device (fp32, bf16,
  stacked, stacked with CUDA graphs), so that a version difference shows before the long parts run;
- ``selection_stack``: a full-MNIST K = 10, M = 5 selection as ``train_stack`` trains it, its 50 cnn4 fold models
  stacked with their validation splits and the stack's epoch checkpoint; the first epoch and two more timed, the
  selection projected to the paper's epochs, and the share of the device's bf16 matrix-product peak it reaches;
- ``cnn8_stack``: CIFAR-10's K = 10 cnn8 fold models of one iteration stacked, a fold's time at the paper's epochs
  amortised over the stack;
- ``tiny_workflow``: the tiny config end to end through Snakemake with the GPU-node profile's resources;
- ``fold_cnn4``, ``fold_cnn8``: one fold as a ``train_fold`` job trains it, beside a plain eager step loop
  (benchmarks/fold_speed.py).

``--budget-seconds`` skips, with a line, each part whose estimate would pass what is left of it; ``--parts``
selects. ``--device cpu --quick`` runs the same parts at a tiny size (the test suite's rehearsal). Exit status 1 when
a part failed or timed out.
"""

import argparse
import json
import math
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import yaml

REPOSITORY = Path(__file__).resolve().parent.parent
PAPER = yaml.safe_load((REPOSITORY / "config" / "paper.yaml").read_text())


@dataclass(frozen=True)
class Context:
    device: str
    quick: bool
    workdir: Path


@dataclass(frozen=True)
class Part:
    what: str
    estimate_s: float  # on an H100 or H200, where no committed check measured it
    run: Callable[[Context], dict]


def _torch_device(context: Context):
    import torch

    return torch.device(context.device)


def _images(count: int, shape: tuple[int, ...], classes: int, *, seed: int = 0):
    import numpy as np

    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, (count, *shape), dtype=np.uint8), rng.integers(0, classes, count)


def _recipe(dataset: str, **changes):
    from enkcvs.training.recipe import Recipe

    return Recipe.from_dict({**PAPER["datasets"][dataset]["recipe"], **changes})


def smoke(context: Context) -> dict:
    """The versions, and two steps of each training path on the device."""
    import numpy as np
    import torch
    import torchvision
    import transformers
    from fold_speed import synchronize

    from enkcvs.training.device import Execution
    from enkcvs.training.stacked import train_stacked
    from enkcvs.training.train import train_model

    device = _torch_device(context)
    x, labels = _images(2 * 32, (1, 12, 12), 10)
    targets = np.eye(10, dtype=np.float32)[labels]
    timed = {}
    for name, bf16, stacked, graphs in [
        ("fp32", False, False, False),
        ("bf16", True, False, False),
        ("stacked", False, True, False),
        ("stacked graphs", False, True, True),
    ]:
        recipe = _recipe("mnist", epochs=1, batch_size=32, bf16=bf16, milestones=[])
        execution = Execution(device=device, cuda_graphs=graphs)
        started = time.perf_counter()
        if stacked:
            train_stacked(
                recipe=recipe,
                xs=[x, x],
                targets=[targets, targets],
                seeds=[1, 2],
                validations=[None, None],
                execution=execution,
            )
        else:
            train_model(recipe=recipe, x=x, targets=targets, seed=1, execution=execution)
        synchronize(device)
        timed[name] = round(time.perf_counter() - started, 2)
    gpu = torch.cuda.get_device_properties(device) if device.type == "cuda" else None
    return {
        "versions": {
            "torch": torch.__version__,
            "cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version(),
            "torchvision": torchvision.__version__,
            "transformers": transformers.__version__,
        },
        "gpu": None
        if gpu is None
        else {
            "name": gpu.name,
            "capability": f"{gpu.major}.{gpu.minor}",
            "memory_gib": round(gpu.total_memory / 2**30, 1),
            "bf16": torch.cuda.is_bf16_supported(),
        },
        "two_steps_s": timed,
    }


def _stack(
    context: Context, *, dataset: str, samples: int, shape: tuple, folds: int, iterations: int, epochs: int, **recipe
) -> dict:
    """``folds`` x ``iterations`` fold models of ``dataset``'s paper recipe stacked as ``train_stack`` trains them
    (each fold's own training part and validation split, the stack's checkpoint every epoch, CUDA graphs on a GPU),
    for ``epochs`` epochs; each epoch's seconds."""
    import numpy as np
    from fold_speed import synchronize

    from enkcvs.method.folds import fold_indices
    from enkcvs.training.device import Execution
    from enkcvs.training.stacked import train_stacked

    device = _torch_device(context)
    recipe = _recipe(dataset, epochs=epochs, **recipe)
    classes = 10
    x, labels = _images(samples, shape, classes)
    targets = np.eye(classes, dtype=np.float32)[labels]
    xs, ys, validations = [], [], []
    for iteration in range(1, iterations + 1):
        for fold in range(1, folds + 1):
            train, validation, _ = fold_indices(
                num_samples=samples,
                num_folds=folds,
                seed=1,
                iteration=iteration,
                fold=fold,
                validation_fraction=recipe.validation_fraction,
            )
            xs.append(x[train])
            ys.append(targets[train])
            validations.append((x[validation], labels[validation]))
    ends = []

    def on_epoch(epoch: int) -> None:
        synchronize(device)
        ends.append(time.perf_counter())

    started = time.perf_counter()
    results = train_stacked(
        recipe=recipe,
        xs=xs,
        targets=ys,
        seeds=list(range(1, len(xs) + 1)),
        validations=validations,
        resume=context.workdir / "stack.resume.pt",
        execution=Execution(device=device, cuda_graphs=device.type == "cuda"),
        on_epoch=on_epoch,
    )
    epoch_s = np.diff([started, *ends]).tolist()
    return {
        "recipe": recipe.to_dict(),
        "models": len(xs),
        "train_samples_per_model": len(xs[0]),
        "epoch_s": [round(s, 3) for s in epoch_s],
        "bf16": results[0].bf16,
        "cuda_graphs": results[0].cuda_graphs,
    }


def selection_stack(context: Context) -> dict:
    """The 50 cnn4 fold models of a full-MNIST K = 10, M = 5 selection stacked, projected to the paper's epochs."""
    import torch
    from training_speed import forward_flops, matmul_gflops

    from enkcvs.training.models import create_model

    quick = context.quick
    shape = (1, 12, 12) if quick else (1, 28, 28)
    paper_epochs = PAPER["datasets"]["mnist"]["recipe"]["epochs"]
    stack = _stack(
        context,
        dataset="mnist",
        samples=256 if quick else 60_000,
        shape=shape,
        folds=2 if quick else 10,
        iterations=2 if quick else 5,
        epochs=3,
        **({"batch_size": 32} if quick else {}),
    )
    first, steady = stack["epoch_s"][0], sum(stack["epoch_s"][1:]) / len(stack["epoch_s"][1:])
    samples_per_s = stack["models"] * stack["train_samples_per_model"] / steady
    flops = forward_flops(create_model("cnn4", input_shape=shape, num_classes=10), shape)
    achieved = 3 * flops * samples_per_s / 1e12  # forward + backward
    sizes = (512,) if quick else (4096, 8192)
    peak = matmul_gflops(torch.bfloat16, sizes, device=torch.device(context.device)) / 1000
    return {
        **stack,
        "paper_epochs": paper_epochs,
        "steady_epoch_s": round(steady, 3),
        "projected_selection_s": round(first + (paper_epochs - 1) * steady, 1),
        "training_tflops": round(achieved, 3),
        "bf16_peak_tflops": round(peak, 1),
        "share_of_bf16_peak": round(achieved / peak, 4),
    }


def cnn8_stack(context: Context) -> dict:
    """CIFAR-10's K = 10 cnn8 fold models of one iteration stacked for a few steps an epoch; a fold at the paper's
    epochs and full epochs, amortised over the stack."""
    quick = context.quick
    steps = 2 if quick else 50
    samples = 256 if quick else 50_000
    stack = _stack(
        context,
        dataset="cifar10",
        samples=samples,
        shape=(3, 16, 16) if quick else (3, 32, 32),
        folds=2 if quick else 10,
        iterations=1,
        epochs=3,
        steps_per_epoch=steps,
        **({"batch_size": 32} if quick else {}),
    )
    step_s = sum(stack["epoch_s"][1:]) / (len(stack["epoch_s"][1:]) * steps)
    full_steps = math.ceil(stack["train_samples_per_model"] / stack["recipe"]["batch_size"])
    paper_epochs = PAPER["datasets"]["cifar10"]["recipe"]["epochs"]
    once = stack["epoch_s"][0] - steps * step_s  # the first epoch's one-off costs (graph capture, warm-up)
    return {
        **stack,
        "steps_per_epoch_timed": steps,
        "stacked_step_s": round(step_s, 5),
        "full_epoch_steps": full_steps,
        "paper_epochs": paper_epochs,
        "projected_fold_s": round((once + paper_epochs * full_steps * step_s) / stack["models"], 1),
    }


def tiny_workflow(context: Context) -> dict:
    """The tiny config (one seed, no ablation, confident learning or sensitivity study) through Snakemake, every
    training job on the device; its wall time, training jobs and the devices its epochs ran on."""
    from enkcvs.training.train import epoch_device

    config = yaml.safe_load((REPOSITORY / "tests" / "config" / "tiny.yaml").read_text())
    config.update(seeds=[1], ablation=False, compare_confident_learning=False, sensitivity={"enabled": False})
    workdir = context.workdir / "tiny"
    workdir.mkdir()
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    command = [
        sys.executable,
        "-m",
        "snakemake",
        "-s",
        str(REPOSITORY / "workflow" / "Snakefile"),
        "-d",
        str(workdir),
        "--configfile",
        str(workdir / "config.yaml"),
        "--cores",
        "4",
    ]
    if context.device == "cuda":
        command += ["--profile", str(REPOSITORY / "profiles" / "gpu-node")]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"the tiny workflow failed ({' '.join(command)}):\n{done.stderr[-3000:]}")
    lines = [line for log in (workdir / "logs").rglob("*.log") for line in log.read_text().splitlines()]
    devices = Counter(device for device in map(epoch_device, lines) if device is not None)
    return {
        "seconds": round(time.perf_counter() - started, 1),
        "command": command[3:],
        "training_jobs": len(list((workdir / "results" / "benchmarks").rglob("*.tsv"))),
        "epoch_lines_by_device": dict(devices),
        "table2": (workdir / "results" / "report" / "table2.md").read_text(),
    }


#: The folds fold_speed.py measures: the paper's MNIST and CIFAR-10 recipes at their datasets' sizes.
FOLDS = {
    "cnn4": ["--dataset", "mnist", "--shape", "1,28,28", "--samples", "60000", "--folds", "4", "--epochs", "3"],
    "cnn8": ["--dataset", "cifar10", "--shape", "3,32,32", "--samples", "50000", "--folds", "10", "--epochs", "2"],
}
QUICK_FOLD = {"cnn4": "1,12,12", "cnn8": "3,16,16"}


def fold(model: str) -> Callable[[Context], dict]:
    def run(context: Context) -> dict:
        out = context.workdir / f"fold_speed-{model}.json"
        quick = (
            ["--samples", "128", "--epochs", "1", "--steps", "3", "--compile-modes", "", "--shape", QUICK_FOLD[model]]
            if context.quick
            else []
        )
        command = [
            sys.executable,
            str(REPOSITORY / "benchmarks" / "fold_speed.py"),
            "--device",
            context.device,
            *FOLDS[model],
            *quick,
            "--out",
            str(out),
        ]
        subprocess.run(command, check=True, capture_output=True, text=True)
        return json.loads(out.read_text())

    run.__doc__ = f"One {model} fold as a train_fold job trains it, beside a plain eager step loop."
    return run


PARTS = {
    "smoke": Part("versions, two steps of each training path", 30, smoke),
    "selection_stack": Part("a full-MNIST K = 10, M = 5 selection: 50 cnn4 fold models stacked", 60, selection_stack),
    "cnn8_stack": Part("CIFAR-10's cnn8 folds stacked: a fold at the paper's epochs, amortised", 45, cnn8_stack),
    "tiny_workflow": Part("the tiny config through Snakemake, training jobs on the GPU", 60, tiny_workflow),
    "fold_cnn4": Part("a cnn4 fold as its job trains it, beside an eager loop", 30, fold("cnn4")),
    "fold_cnn8": Part("a cnn8 fold as its job trains it, beside an eager loop", 30, fold("cnn8")),
}


def estimates(results: Path = REPOSITORY / "benchmarks" / "results") -> dict[str, float]:
    """Each part's estimated seconds on a GPU: the newest committed check's measurement of it, else its estimate."""
    found = {name: part.estimate_s for name, part in PARTS.items()}
    for folder in sorted(results.glob("gpu-check-*/")):
        for name in PARTS:
            path = folder / f"{name}.json"
            if path.is_file() and (record := json.loads(path.read_text())).get("status") == "done":
                if record["device"] == "cuda" and not record["quick"]:
                    found[name] = record["seconds"]
    return found


def fits(*, elapsed: float, estimate: float, budget: float) -> bool:
    """Whether a part estimated at ``estimate`` seconds ends within ``budget`` after ``elapsed`` seconds."""
    return elapsed + estimate <= budget


def run_here(name: str, context: Context) -> dict:
    """Run part ``name`` in this process: its record, with what it measured, the machine and its seconds."""
    from enkcvs import machine

    started = time.perf_counter()
    measured = PARTS[name].run(context)
    return {
        "part": name,
        "status": "done",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "device": context.device,
        "quick": context.quick,
        "cpu": machine.cpu_model(),
        "cpu_flags": machine.cpu_flags(),
        "seconds": round(time.perf_counter() - started, 1),
        **measured,
    }


def run_part(name: str, *, args: argparse.Namespace, timeout: float) -> dict:
    """Run part ``name`` in a process of its own, killed after ``timeout`` seconds; its record."""
    out = args.out_dir / f"{name}.json"
    command = [
        sys.executable,
        __file__,
        "--in-process",
        "--parts",
        name,
        "--device",
        args.device,
        "--out-dir",
        str(args.out_dir),
        *(["--quick"] if args.quick else []),
    ]
    started = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        record = {"part": name, "status": "timeout", "timeout_s": timeout}
    else:
        if done.returncode == 0 and out.is_file():
            return json.loads(out.read_text())
        record = {"part": name, "status": "failed", "error": done.stderr[-3000:]}
    record.update(device=args.device, quick=args.quick, seconds=round(time.perf_counter() - started, 1))
    out.write_text(json.dumps(record, indent=2) + "\n")
    return record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"), help="where to train (default cuda)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes: the wiring only, e.g. on the CPU")
    parser.add_argument("--out-dir", type=Path, help="the folder each part's JSON is written to")
    parser.add_argument(
        "--parts", default=",".join(PARTS), help=f"comma-separated parts (default all: {', '.join(PARTS)})"
    )
    parser.add_argument("--budget-seconds", type=float, default=300, help="skip parts that would end after it")
    parser.add_argument("--part-timeout", type=float, help="seconds before a part is stopped (default 3x its estimate)")
    parser.add_argument("--plan", action="store_true", help="print the parts and their estimated seconds, run none")
    parser.add_argument("--in-process", action="store_true", help="run the parts in this process, without timeouts")
    args = parser.parse_args(argv)
    names = args.parts.split(",")
    if unknown := [name for name in names if name not in PARTS]:
        parser.error(f"--parts: no part {', '.join(unknown)}; the parts are {', '.join(PARTS)}")
    planned = estimates()
    if args.plan:
        for name in names:
            print(f"{name:<16} {planned[name]:>6.0f} s  {PARTS[name].what}")
        print(f"total {sum(planned[name] for name in names):.0f} s")
        return 0
    if args.out_dir is None:
        parser.error("--out-dir is required to run the check")
    args.out_dir.mkdir(parents=True, exist_ok=True)
    if args.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            parser.error(f"--device cuda: torch {torch.__version__} sees no GPU; on a CPU use --device cpu --quick")
    if args.in_process:
        for name in names:
            with tempfile.TemporaryDirectory() as folder:
                record = run_here(name, Context(args.device, args.quick, Path(folder)))
            (args.out_dir / f"{name}.json").write_text(json.dumps(record, indent=2) + "\n")
        return 0
    started, failed = time.perf_counter(), False
    for name in names:
        elapsed = time.perf_counter() - started
        if not fits(elapsed=elapsed, estimate=planned[name], budget=args.budget_seconds):
            print(
                f"{name}: skipped, its {planned[name]:.0f} s would pass the budget ({args.budget_seconds - elapsed:.0f} s left)"
            )
            record = {
                "part": name,
                "status": "skipped",
                "estimate_s": planned[name],
                "device": args.device,
                "quick": args.quick,
            }
            (args.out_dir / f"{name}.json").write_text(json.dumps(record, indent=2) + "\n")
            continue
        record = run_part(name, args=args, timeout=args.part_timeout or 3 * planned[name])
        failed |= record["status"] != "done"
        print(f"{name}: {record['status']} in {record['seconds']} s -> {args.out_dir / f'{name}.json'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
