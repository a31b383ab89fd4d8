"""Host time of a stacked training step against the number of models stacked (G), on the CPU with tiny images, so
that the arithmetic is negligible and what is timed is what the host does per step: Python, dispatch, launches.

Each G trains ``enkcvs.training.stacked.train_stacked`` (mixup, 1 x 4 x 4 images, batches of 8, no validation) for
one epoch and for ``1 + --epochs`` epochs from the same start; the difference over the extra epochs' steps is the
time of one step, without the start's one-off costs. The ratio of G = max to G = 1 is the figure: a stack whose host
work does not grow with G keeps it near 1. ``mlp`` (the figure) is host-bound: its layers batch over G into one
kernel each. ``cnn4`` is reported beside it: on a CPU a convolution over G stacked models runs as G groups, whose
per-group cost grows with G as arithmetic does, not as host work.

``python benchmarks/stacked_host.py --out benchmarks/results/stacked_host-DATE.json`` (``--before FILE`` keeps
another run's figures beside these, e.g. the same script run against an earlier checkout with ``PYTHONPATH``).
"""

import argparse
import json
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import torch

from enkcvs import machine
from enkcvs.training.recipe import Recipe
from enkcvs.training.stacked import train_stacked

SHAPE, CLASSES, BATCH = (1, 4, 4), 4, 8


def seconds(network: str, models: int, *, epochs: int, steps: int) -> float:
    """Wall seconds of ``train_stacked`` on ``models`` models of ``network`` for ``epochs`` epochs of ``steps``
    steps each."""
    recipe = Recipe(
        model=network,
        optimizer="sgd",
        lr=0.01,
        momentum=0.9,
        epochs=epochs,
        batch_size=BATCH,
        mixup_alpha=0.3,
        validation_fraction=0.0,
    )
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, (steps * BATCH, *SHAPE), dtype=np.uint8)
    targets = np.eye(CLASSES, dtype=np.float32)[rng.integers(0, CLASSES, len(x))]
    started = time.perf_counter()
    train_stacked(
        recipe=recipe,
        xs=[x] * models,
        targets=[targets] * models,
        seeds=list(range(1, models + 1)),
        validations=[None] * models,
        device=torch.device("cpu"),
    )
    return time.perf_counter() - started


def step_ms(network: str, models: int, *, epochs: int, steps: int) -> float:
    """Milliseconds of one stacked step: (``1 + epochs`` epochs minus one epoch) / (``epochs`` x ``steps``)."""
    longer = seconds(network, models, epochs=1 + epochs, steps=steps)
    return 1000 * (longer - seconds(network, models, epochs=1, steps=steps)) / (epochs * steps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="1,2,5,10,20,50", help="comma-separated G values")
    parser.add_argument("--networks", default="mlp,cnn4", help="comma-separated models; the first gives the ratio")
    parser.add_argument("--epochs", type=int, default=2, help="timed epochs beyond the first")
    parser.add_argument("--steps", type=int, default=64, help="steps per epoch")
    parser.add_argument("--repeats", type=int, default=5, help="rounds over every G (the median is kept)")
    parser.add_argument("--label", default="", help="what was measured (e.g. a commit), kept in the JSON")
    parser.add_argument("--before", type=Path, help="an earlier run's JSON, kept beside these figures")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    torch.set_num_threads(1)
    runs, ratios, sizes = [], {}, [int(g) for g in args.models.split(",")]
    for network in args.networks.split(","):
        seconds(network, 1, epochs=1, steps=2)  # lazy imports and first-call setup
        # every G once a round, the median over the rounds: a change of the machine's load falls on all of them
        rounds = [
            [step_ms(network, g, epochs=args.epochs, steps=args.steps) for g in sizes] for _ in range(args.repeats)
        ]
        measured = [
            {
                "network": network,
                "models": g,
                "host_ms_per_step": float(np.median([row[i] for row in rounds])),
                "rounds_ms": [round(row[i], 3) for row in rounds],
            }
            for i, g in enumerate(sizes)
        ]
        for run in measured:
            print(f"{network} G = {run['models']:>3}: {run['host_ms_per_step']:.2f} ms a step")
        ratios[network] = measured[-1]["host_ms_per_step"] / measured[0]["host_ms_per_step"]
        print(f"{network} G = {sizes[-1]} over G = {sizes[0]}: {ratios[network]:.2f}x")
        runs += measured
    results = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "label": args.label,
        "torch": torch.__version__,
        "threads": 1,
        "cpu": machine.cpu_model(),
        "cpu_flags": machine.cpu_flags(),
        "setup": {
            "model": "cnn4",
            "shape": list(SHAPE),
            "batch_size": BATCH,
            "steps_per_epoch": args.steps,
            "timed_epochs": args.epochs,
            "repeats": args.repeats,
            "mixup_alpha": 0.3,
        },
        "runs": runs,
        "ratios": ratios,
        "ratio": ratios[args.networks.split(",")[0]],
    }
    if args.before:
        results["before"] = json.loads(args.before.read_text())
    if args.out:
        args.out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
