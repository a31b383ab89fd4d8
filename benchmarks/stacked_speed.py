"""The M x K fold models of a selection trained stacked (one process, one vmapped program:
:func:`enkcvs.training.crossval.selection_probabilities`; ``--iterations 1``: one iteration's K) against the K of
iteration 1 trained as the per-fold jobs train them
(:func:`enkcvs.training.crossval.fold_probabilities`): one after another in one process, and as K processes side by
side on the device, as K workflow jobs sharing it would run (on a GPU also under CUDA MPS, which lets their kernels
run at once), all on the same device in one run: the summed training samples per second of each, validation and
prediction included (side by side: each process's start-up too, as each job pays it). ``--finals N`` measures a
setting's final models instead (``stacked_finals``): N models of the recipe on every sample, trained stacked against
one after another in one process and as N processes side by side.

Run ``python benchmarks/stacked_speed.py --help``. Reports numbers, asserts nothing.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import torch
from fold_speed import REPOSITORY, device_description, paper_recipe, synchronize

from enkcvs.method.folds import fold_indices
from enkcvs.training.crossval import fold_probabilities, selection_probabilities
from enkcvs.training.stacked import train_stacked
from enkcvs.training.train import train_model


def timed(train, *, device: torch.device) -> float:
    """Wall seconds of ``train()``, the device's queued work included."""
    synchronize(device)
    started = time.perf_counter()
    train()
    synchronize(device)
    return time.perf_counter() - started


def training_samples(*, num_samples: int, num_folds: int, iterations: int, recipe) -> int:
    """Training samples of iterations 1..M's K folds over the recipe's epochs (each fold's training set)."""
    return recipe.epochs * sum(
        len(
            fold_indices(
                num_samples=num_samples,
                num_folds=num_folds,
                seed=1,
                iteration=m,
                fold=k,
                validation_fraction=recipe.validation_fraction,
            )[0]
        )
        for m in range(1, iterations + 1)
        for k in range(1, num_folds + 1)
    )


def stacked_against_per_fold(
    recipe,
    images: np.ndarray,
    labels: np.ndarray,
    *,
    num_classes: int,
    num_folds: int,
    iterations: int,
    device: torch.device,
) -> dict[str, float]:
    """Summed training samples/s of iteration 1's K folds trained per fold, one after another, and of iterations
    1..M's K folds trained stacked (each fold's training set times the recipe's epochs, over the wall time of all);
    ``samples`` are iteration 1's, ``stacked_samples`` all M's; ``bf16``, whether they trained under bf16 autocast;
    ``cuda_graphs``, whether each way replayed its full steps as CUDA graphs (``recipe.cuda_graphs``)."""
    fold = {
        "recipe": recipe,
        "inputs": lambda indices, train: images[indices],
        "given": labels,
        "num_classes": num_classes,
        "seed": 1,
        "num_folds": num_folds,
        "device": device,
    }
    samples = training_samples(num_samples=len(labels), num_folds=num_folds, iterations=1, recipe=recipe)
    stacked_samples = training_samples(
        num_samples=len(labels), num_folds=num_folds, iterations=iterations, recipe=recipe
    )
    selection = range(1, iterations + 1)
    # Untimed warm-up of both paths on two steps: one-off costs (bf16 auto's probe, first kernels) paid by neither
    warm = {**fold, "recipe": replace(recipe, epochs=1, steps_per_epoch=2)}
    _, _, warmed = fold_probabilities(**warm, iteration=1, fold=1)
    selection_probabilities(**warm, iterations=selection)
    trained = {}
    per_fold = timed(
        lambda: trained.update(
            per_fold=[fold_probabilities(**fold, iteration=1, fold=k) for k in range(1, num_folds + 1)]
        ),
        device=device,
    )
    stacked = timed(
        lambda: trained.update(stacked=selection_probabilities(**fold, iterations=selection)), device=device
    )
    return {
        "samples": samples,
        "stacked_samples": stacked_samples,
        "iterations": iterations,
        "bf16": warmed.bf16,
        "cuda_graphs": {way: trained[way][0][2].cuda_graphs for way in ("per_fold", "stacked")},
        "per_fold_seconds": per_fold,
        "stacked_seconds": stacked,
        "per_fold_samples_per_s": samples / per_fold,
        "stacked_samples_per_s": stacked_samples / stacked,
        "speedup": stacked_samples / stacked / (samples / per_fold),
    }


def finals_stacked_against_alone(
    recipe, images: np.ndarray, labels: np.ndarray, *, num_classes: int, models: int, device: torch.device
) -> dict[str, float]:
    """Summed training samples/s of ``models`` final models of the recipe (plain cross-entropy on every sample, seeds
    1..N, as a setting's final models of one recipe train; no test set scored) trained one after another and trained
    stacked; ``bf16`` and ``cuda_graphs`` as :func:`stacked_against_per_fold`'s."""
    targets = np.eye(num_classes, dtype=np.float32)[labels]
    seeds = list(range(1, models + 1))

    def alone(recipe_):
        return [train_model(recipe=recipe_, x=images, targets=targets, seed=seed, device=device) for seed in seeds]

    def stacked(recipe_):
        return train_stacked(
            recipe=recipe_,
            xs=[images] * models,
            targets=[targets] * models,
            seeds=seeds,
            validations=[None] * models,
            device=device,
        )

    warm = replace(recipe, epochs=1, steps_per_epoch=2)  # one-off costs (probes, first kernels) paid by neither
    [warmed, *_], _ = alone(warm), stacked(warm)
    trained = {}
    alone_seconds = timed(lambda: trained.update(alone=alone(recipe)), device=device)
    stacked_seconds = timed(lambda: trained.update(stacked=stacked(recipe)), device=device)
    samples = models * recipe.epochs * len(labels)
    return {
        "models": models,
        "samples": samples,
        "bf16": warmed.bf16,
        "cuda_graphs": {way: trained[way][0].cuda_graphs for way in ("alone", "stacked")},
        "alone_seconds": alone_seconds,
        "stacked_seconds": stacked_seconds,
        "alone_samples_per_s": samples / alone_seconds,
        "stacked_samples_per_s": samples / stacked_seconds,
        "speedup": alone_seconds / stacked_seconds,
    }


def side_by_side(arguments: list[str], *, processes: int, flag: str, samples: int, mps: bool) -> dict[str, float | str]:
    """Summed training samples/s of ``processes`` processes of this script at once, each training one model (``flag``
    ``--fold k``: iteration 1's fold k; ``--final k``: final model k) with the same ``arguments``, under a CUDA MPS
    control daemon started for them and stopped after when ``mps``; where MPS cannot start, why."""
    environment = dict(os.environ)
    with tempfile.TemporaryDirectory() as folder:
        if mps:
            control = shutil.which("nvidia-cuda-mps-control")
            if control is None:
                return {"unavailable": "nvidia-cuda-mps-control is not on PATH"}
            environment.update(CUDA_MPS_PIPE_DIRECTORY=f"{folder}/pipe", CUDA_MPS_LOG_DIRECTORY=f"{folder}/log")
            os.makedirs(f"{folder}/pipe"), os.makedirs(f"{folder}/log")
            started = subprocess.run([control, "-d"], env=environment, capture_output=True, text=True)
            if started.returncode != 0:
                return {"unavailable": f"nvidia-cuda-mps-control -d failed: {started.stderr.strip()[-300:]}"}
        try:
            began = time.perf_counter()
            jobs = [
                subprocess.Popen([sys.executable, __file__, *arguments, flag, str(k)], env=environment)
                for k in range(1, processes + 1)
            ]
            failed = [k for k, job in enumerate(jobs, start=1) if job.wait() != 0]
            seconds = time.perf_counter() - began
        finally:
            if mps:
                subprocess.run([control], input="quit\n", env=environment, capture_output=True, text=True)
    if failed:
        raise SystemExit(f"the side-by-side processes {failed} ({flag}) failed")
    return {"seconds": seconds, "samples_per_s": samples / seconds}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu", help="torch device")
    parser.add_argument(
        "--config",
        type=Path,
        default=REPOSITORY / "config" / "paper.yaml",
        help="workflow config holding the recipe (default config/paper.yaml)",
    )
    parser.add_argument("--dataset", default="mnist", help="dataset whose recipe trains the folds (default mnist)")
    parser.add_argument("--shape", default="1,28,28", help="image shape C,H,W (default 1,28,28)")
    parser.add_argument("--classes", type=int, default=10, help="number of classes Q (default 10)")
    parser.add_argument("--samples", type=int, default=60_000, help="samples N (default 60,000)")
    parser.add_argument("--folds", type=int, default=4, help="K (default 4)")
    parser.add_argument(
        "--iterations",
        type=int,
        default=1,
        help="M: iterations trained stacked, M x K models in one program (default 1)",
    )
    parser.add_argument(
        "--finals", type=int, help="measure N final models on every sample instead of folds (stacked_finals)"
    )
    parser.add_argument("--epochs", type=int, help="override the recipe's epochs")
    parser.add_argument("--out", type=Path, help="write the results to this JSON file")
    parser.add_argument("--fold", type=int, help=argparse.SUPPRESS)  # one side-by-side process: train fold k only
    parser.add_argument("--final", type=int, help=argparse.SUPPRESS)  # one side-by-side process: final model k only
    args = parser.parse_args(argv)
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise SystemExit(f"--device {args.device}: torch {torch.__version__} sees no GPU; use --device cpu")
    recipe = paper_recipe(args.config, args.dataset)
    recipe = replace(recipe, epochs=args.epochs) if args.epochs else recipe
    shape = tuple(int(size) for size in args.shape.split(","))
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (args.samples, *shape), dtype=np.uint8)
    labels = rng.integers(0, args.classes, args.samples)
    if args.fold:
        fold_probabilities(
            recipe=recipe,
            inputs=lambda indices, train: images[indices],
            given=labels,
            num_classes=args.classes,
            seed=1,
            num_folds=args.folds,
            iteration=1,
            fold=args.fold,
            device=device,
        )
        return
    if args.final:
        train_model(
            recipe=recipe,
            x=images,
            targets=np.eye(args.classes, dtype=np.float32)[labels],
            seed=args.final,
            device=device,
        )
        return
    passed_on = [
        "--device",
        args.device,
        "--config",
        str(args.config),
        "--dataset",
        args.dataset,
        "--shape",
        args.shape,
        "--classes",
        str(args.classes),
        "--samples",
        str(args.samples),
        "--folds",
        str(args.folds),
        *(["--epochs", str(args.epochs)] if args.epochs else []),
    ]
    if args.finals:
        result = finals_stacked_against_alone(
            recipe, images, labels, num_classes=args.classes, models=args.finals, device=device
        )
        processes, flag, measured = args.finals, "--final", f"{args.finals} final models"
        one_way = f"one after another {result['alone_samples_per_s']:,.0f} samples/s,"
    else:
        result = stacked_against_per_fold(
            recipe,
            images,
            labels,
            num_classes=args.classes,
            num_folds=args.folds,
            iterations=args.iterations,
            device=device,
        )
        processes, flag, measured = args.folds, "--fold", f"{args.folds} folds"
        one_way = f"per fold {result['per_fold_samples_per_s']:,.0f} samples/s, {args.iterations} x {args.folds}"
    result["side_by_side"] = side_by_side(
        passed_on, processes=processes, flag=flag, samples=result["samples"], mps=False
    )
    if device.type == "cuda":
        result["side_by_side_mps"] = side_by_side(
            passed_on, processes=processes, flag=flag, samples=result["samples"], mps=True
        )
    ways = {"side by side": result["side_by_side"], "side by side, MPS": result.get("side_by_side_mps", {})}
    print(
        f"{device_description(device)['device']}: {measured} of {recipe.model}, {recipe.epochs} epochs: {one_way} "
        f"stacked {result['stacked_samples_per_s']:,.0f} samples/s ({result['speedup']:.2f}x)"
        + "".join(f", {way} {run['samples_per_s']:,.0f} samples/s" for way, run in ways.items() if "seconds" in run)
    )
    if args.out:
        args.out.write_text(
            json.dumps(
                {
                    "date": datetime.now(UTC).isoformat(timespec="seconds"),
                    "torch": torch.__version__,
                    **device_description(device),
                    "recipe": recipe.to_dict(),
                    **({} if args.finals else {"folds": args.folds}),
                    "samples": args.samples,
                    **result,
                },
                indent=2,
            )
            + "\n"
        )


if __name__ == "__main__":
    main()
