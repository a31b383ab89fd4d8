"""Wall time of one cross-validation fold as a workflow job trains it (default: a CIFAR-10-shaped cnn8 fold with the
paper's recipe), on a GPU or the CPU, beside the same training step as a plain loop, eager and under torch.compile.

Run ``python benchmarks/fold_speed.py --help``; see benchmarks/README.md. Reports numbers, asserts nothing.
"""

import argparse
import json
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import torch
import yaml

from enkcvs import machine
from enkcvs.method.folds import fold_indices
from enkcvs.method.losses import soft_cross_entropy
from enkcvs.method.mixup import mixup, mixup_lambdas
from enkcvs.training.augment import AUGMENTATIONS
from enkcvs.training.batches import model_input, resident
from enkcvs.training.crossval import fold_probabilities
from enkcvs.training.models import create_model
from enkcvs.training.optimizer import recipe_optimizer
from enkcvs.training.recipe import Recipe

REPOSITORY = Path(__file__).resolve().parent.parent


def synchronize(device: torch.device) -> None:
    """Wait for the device's queued work, so that a clock read after it includes that work."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def device_description(device: torch.device) -> dict[str, object]:
    """What the figures ran on: the GPU's name and CUDA version, or the CPU's model and instruction sets."""
    if device.type == "cuda":
        return {"device": torch.cuda.get_device_name(device), "cuda": torch.version.cuda}
    return {"device": machine.cpu_model(), "cpu_flags": machine.cpu_flags(), "threads": torch.get_num_threads()}


def paper_recipe(config: Path, dataset: str) -> Recipe:
    """``datasets.<dataset>.recipe`` of a workflow config, as the dataset's fold jobs train with it."""
    with open(config) as handle:
        datasets = yaml.safe_load(handle)["datasets"]
    if dataset not in datasets:
        raise SystemExit(f"{config} has no dataset {dataset!r}; it has {sorted(datasets)}")
    return Recipe.from_dict(datasets[dataset]["recipe"])


def engine_fold(
    recipe: Recipe, images: np.ndarray, labels: np.ndarray, *, num_classes: int, num_folds: int, device: torch.device
) -> dict[str, float]:
    """Wall seconds of fold 1 of iteration 1 through :func:`enkcvs.training.crossval.fold_probabilities`, the call each
    ``train_fold`` job makes: training with validation every epoch, the best epoch's weights, the held-out
    predictions (a job's one-off costs included: the first steps, and the capture of CUDA graphs where asked)."""
    synchronize(device)
    started = time.perf_counter()
    _, probabilities, result = fold_probabilities(
        recipe=recipe,
        inputs=lambda indices, train: images[indices],
        given=labels,
        num_classes=num_classes,
        seed=1,
        num_folds=num_folds,
        iteration=1,
        fold=1,
        device=device,
    )
    synchronize(device)
    return {
        "seconds": time.perf_counter() - started,
        "bf16": result.bf16,
        "cuda_graphs": result.cuda_graphs,
        "best_epoch": result.best_epoch,
        "held_out": len(probabilities),
    }


def step_loop(
    recipe: Recipe,
    images: np.ndarray,
    *,
    num_classes: int,
    device: torch.device,
    bf16: bool,
    steps: int,
    mode: str | None,
) -> dict[str, float]:
    """The engine's training step (uint8 batch scaled, the recipe's augmentation, mixup with a random other
    sample, bf16 autocast when ``bf16``, soft cross-entropy, the recipe's optimizer) as a plain loop over one
    resident batch, without the engine's per-step check of the loss (which waits for the device); the model eager
    (``mode`` None) or under ``torch.compile(mode=mode)``. Samples/s over ``steps`` steps after three warm-up steps,
    and those warm-up steps' seconds (the compilation, under torch.compile). The loops run in the precision the
    engine's fold trained in."""
    torch.manual_seed(0)
    torch._dynamo.reset()  # each compiled loop compiles afresh, as a job does, untouched by the engine's compilations
    model = create_model(recipe.model, input_shape=images.shape[1:], num_classes=num_classes, **recipe.model_options)
    model = model.to(device).to(memory_format=torch.channels_last).train()
    forward = model if mode is None else torch.compile(model, mode=mode)
    optimizer = recipe_optimizer(recipe, model.parameters())
    draw, augment = AUGMENTATIONS[recipe.augment] if recipe.augment else (None, None)
    batch = resident(images[: recipe.batch_size], device)
    targets = torch.eye(num_classes, device=device)[torch.arange(len(batch), device=device) % num_classes]
    generator, rng = torch.Generator().manual_seed(0), np.random.default_rng(0)

    def step() -> None:
        xb, tb = model_input(batch), targets
        if augment is not None:
            xb = augment(
                xb, **{name: value[0].to(device) for name, value in draw(1, len(xb), generator=generator).items()}
            )
        if recipe.mixup_alpha:
            offsets = torch.randint(1, len(xb), (len(xb),), generator=generator)
            partner = ((torch.arange(len(xb)) + offsets) % len(xb)).to(device)
            xb, tb = mixup(
                xb, tb, lam=float(mixup_lambdas(alpha=recipe.mixup_alpha, rng=rng, size=1)[0]), partner=partner
            )
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
            logits = forward(xb)
        loss = soft_cross_entropy(logits.float(), tb)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    started = time.perf_counter()
    for _ in range(3):
        step()
    synchronize(device)
    warmup = time.perf_counter() - started
    started = time.perf_counter()
    for _ in range(steps):
        step()
    synchronize(device)
    return {"samples_per_s": steps * len(batch) / (time.perf_counter() - started), "warmup_s": warmup}


def main() -> None:
    """Parse the command line, measure, print the figures and optionally write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--device",
        default="cuda" if torch.cuda.is_available() else "cpu",
        help="torch device (default: cuda when present, else cpu)",
    )
    parser.add_argument(
        "--config",
        type=Path,
        default=REPOSITORY / "config" / "paper.yaml",
        help="workflow config holding the recipe (default config/paper.yaml)",
    )
    parser.add_argument("--dataset", default="cifar10", help="dataset whose recipe trains the fold (default cifar10)")
    parser.add_argument("--shape", default="3,32,32", help="image shape C,H,W (default 3,32,32: CIFAR's)")
    parser.add_argument("--classes", type=int, default=10, help="number of classes Q (default 10)")
    parser.add_argument(
        "--samples",
        type=int,
        default=50_000,
        help="samples N in the dataset; fold 1 of --folds trains on (1 - 1/K) N, a tenth of that "
        "held out for validation (default 50,000: with K = 10, 40,500 training samples)",
    )
    parser.add_argument("--folds", type=int, default=10, help="K (default 10)")
    parser.add_argument("--epochs", type=int, help="override the recipe's epochs (the paper's CIFAR recipe: 120)")
    parser.add_argument("--bf16", choices=("auto", "true", "false"), help="override the recipe's bf16 setting")
    parser.add_argument(
        "--cuda-graphs", choices=("auto", "true", "false"), help="override the recipe's cuda_graphs setting"
    )
    parser.add_argument(
        "--compile-modes",
        default="default,reduce-overhead",
        help="torch.compile modes for the step loop, comma-separated; '' for none "
        "(reduce-overhead adds CUDA graphs on a GPU)",
    )
    parser.add_argument("--steps", type=int, default=200, help="timed steps of each step loop (default 200)")
    parser.add_argument("--threads", type=int, help="torch threads on the CPU (default: torch's)")
    parser.add_argument("--out", type=Path, help="write all results to this JSON file")
    args = parser.parse_args()
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise SystemExit(f"--device {args.device}: torch {torch.__version__} sees no GPU; use --device cpu")
    if args.threads:
        torch.set_num_threads(args.threads)
    recipe = paper_recipe(args.config, args.dataset)
    setting = {"auto": "auto", "true": True, "false": False}
    overrides = {"epochs": args.epochs, "bf16": setting.get(args.bf16), "cuda_graphs": setting.get(args.cuda_graphs)}
    recipe = replace(recipe, **{key: value for key, value in overrides.items() if value is not None})
    shape = tuple(int(size) for size in args.shape.split(","))
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (args.samples, *shape), dtype=np.uint8)
    labels = rng.integers(0, args.classes, args.samples)
    train, validation, held_out = fold_indices(
        num_samples=args.samples,
        num_folds=args.folds,
        seed=1,
        iteration=1,
        fold=1,
        validation_fraction=recipe.validation_fraction,
    )
    described = device_description(device)
    print(
        f"{described['device']}, torch {torch.__version__}"
        + (
            f", CUDA {described['cuda']}"
            if "cuda" in described
            else f", {described['threads']} threads, {' '.join(described['cpu_flags'])}"
        )
    )
    print(
        f"recipe of {args.dataset} ({args.config.name}): {recipe.model}, {recipe.optimizer} lr {recipe.lr}, "
        f"{recipe.epochs} epochs, batch {recipe.batch_size}, mixup {recipe.mixup_alpha}, augment {recipe.augment}, "
        f"bf16 {recipe.bf16}"
    )
    print(
        f"fold 1 of {args.folds}: {len(train):,} training, {len(validation):,} validation, {len(held_out):,} "
        f"held out, {shape} uint8 images resident on {device.type}"
    )
    # a one-epoch fold first pays the process's one-off costs (lazy imports, kernel selection), so that a projection
    # to more epochs scales none of them
    warmup = engine_fold(
        replace(recipe, epochs=1), images, labels, num_classes=args.classes, num_folds=args.folds, device=device
    )
    print(f"one-epoch fold first, paying the one-off costs: {warmup['seconds']:.1f} s")
    fold = engine_fold(recipe, images, labels, num_classes=args.classes, num_folds=args.folds, device=device)
    trained = recipe.epochs * len(train)
    print(
        f"engine fold: {fold['seconds']:.1f} s ({trained / fold['seconds']:,.0f} training samples/s over "
        f"{recipe.epochs} epochs, validation and prediction included), bf16 {fold['bf16']}, CUDA graphs "
        f"{fold['cuda_graphs']}"
    )
    loops = {}
    print(f"{'step loop':<32} {'samples/s':>10} {'x eager':>8} {'warm-up s':>10} {'projected fold s':>17}")
    for mode in [None, *(mode for mode in args.compile_modes.split(",") if mode)]:
        name = "eager" if mode is None else f"torch.compile {mode}"
        loop = step_loop(
            recipe, images, num_classes=args.classes, device=device, bf16=fold["bf16"], steps=args.steps, mode=mode
        )
        # training steps only: the warm-up (compilation) once, then every epoch's samples at the loop's rate
        loop["projected_fold_s"] = loop["warmup_s"] + trained / loop["samples_per_s"]
        loop["ratio_to_eager"] = loop["samples_per_s"] / loops.get("eager", loop)["samples_per_s"]
        loops[name] = loop
        print(
            f"{name:<32} {loop['samples_per_s']:>10,.0f} {loop['ratio_to_eager']:>8.2f} {loop['warmup_s']:>10.1f} "
            f"{loop['projected_fold_s']:>17.1f}"
        )
    if args.out:
        results = {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "torch": torch.__version__,
            **described,
            "recipe": recipe.to_dict(),
            "fold": {
                "samples": args.samples,
                "folds": args.folds,
                "train": len(train),
                "validation": len(validation),
                "held_out": len(held_out),
                "shape": list(shape),
                "classes": args.classes,
            },
            "warmup_fold": warmup,
            "engine_fold": fold,
            "step_loop_steps": args.steps,
            "step_loops": loops,
        }
        args.out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
