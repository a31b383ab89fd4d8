"""Choosing a baseline's hyperparameters where the paper gives none, on noisy validation data only.

Symmetric cross-entropy (Wang et al. 2019) has no (alpha, beta) that fits every dataset, and the paper gives none for
TREC; its authors advise tuning them on noisy validation data for a new dataset. This scores a small grid on the
split a fold job trains on (fold 1 of iteration 1, its held-out validation share, noisy labels), so no clean label and
no test sample is looked at::

    snakemake --configfile config/experiments/trec-full.yaml --cores all \\
        results/noise/trec/sym0.4/seed1.parquet ...
    python -m enkcvs.pipeline.tuning --configfile config/experiments/trec-full.yaml --dataset trec \\
        --noise sym0.0 sym0.4 --alpha 0.1 1.0 --beta 0.1 1.0 --output results/recorded/trec-sl-grid

The output folder holds ``grid.csv`` (a row per noise setting and pair, the mean over settings ranked in
``mean.csv``), ``grid.md`` (both as the pages show them) and ``provenance.json`` (the config slice, seed, versions,
commit, machine, wall time).
"""

import argparse
import itertools
import logging
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from enkcvs.data.checkpoints import DEFAULT_CHECKPOINT, checkpoint_slug
from enkcvs.data.datasets import load_dataset
from enkcvs.io import PathLike, atomic_path, provenance, write_json
from enkcvs.machine import machine_description
from enkcvs.pipeline import layout
from enkcvs.pipeline.predictions import read_label_table
from enkcvs.training.final import final_recipe, final_training
from enkcvs.training.inputs import split_inputs, subset_inputs
from enkcvs.training.recipe import Recipe

log = logging.getLogger(__name__)


def symmetric_ce_validation_grid(
    *,
    dataset: PathLike,
    labels: PathLike,
    recipe: dict[str, Any],
    seed: int,
    num_folds: int,
    grid: list[tuple[float, float]],
    tokens: PathLike | None = None,
    mixup: bool = False,
) -> pd.DataFrame:
    """Symmetric cross-entropy's (alpha, beta) scored as Wang et al. (2019) advise for a new dataset: on noisy
    validation data. Each pair trains the model of fold 1, iteration 1 (the split a fold job uses) with SL, as SL's
    final model trains (without the recipe's mixup unless ``mixup``: :func:`enkcvs.training.final.final_training`), and
    scores its best epoch on that fold's held-out validation share against the given (noisy) labels.

    Returns one row per pair: ``alpha``, ``beta``, ``best_epoch``, ``validation_accuracy`` (at the best epoch) and
    ``per_epoch`` (every epoch's, as text).
    """
    from enkcvs.training.crossval import fold_probabilities

    data = load_dataset(dataset)
    x_train = split_inputs(data, tokens, split="train")
    label_table, num_classes = read_label_table(labels)
    rows = []
    for alpha, beta in grid:
        training = final_training(method="sl", options={"alpha": alpha, "beta": beta, "mixup": mixup})
        _, _, result = fold_probabilities(
            recipe=final_recipe(Recipe.from_dict(recipe), training=training),
            inputs=lambda indices, train: subset_inputs(data, x_train, indices, train=train),
            given=label_table["given"].to_numpy(),
            num_classes=num_classes,
            seed=seed,
            num_folds=num_folds,
            iteration=1,
            fold=1,
            loss=training.loss,
            loss_params=training.loss_params,
        )
        rows.append(
            {
                "alpha": alpha,
                "beta": beta,
                "best_epoch": result.best_epoch,
                "validation_accuracy": max(result.validation_accuracy),
                "per_epoch": " ".join(f"{value:.4f}" for value in result.validation_accuracy),
            }
        )
        log.info(
            "SL alpha %g beta %g: noisy-validation accuracy %.4f (epoch %d)",
            alpha,
            beta,
            rows[-1]["validation_accuracy"],
            result.best_epoch,
        )
    return pd.DataFrame(rows)


def grid_markdown(*, table: pd.DataFrame, mean: pd.DataFrame) -> str:
    """The grid as the pages show it: the pairs ranked by their mean noisy-validation accuracy (%), one column per noise
    setting, and the best epoch's accuracy per epoch below."""
    wide = table.pivot_table(index=["alpha", "beta"], columns="noise", values="validation_accuracy") * 100
    ranked = (
        mean.set_index(["alpha", "beta"])[["validation_accuracy"]].rename(columns={"validation_accuracy": "mean"}) * 100
    )
    frame = ranked.join(wide).reset_index()
    return (
        frame.to_markdown(index=False, floatfmt=".2f") + "\n\nNoisy-validation accuracy (%) of fold 1, iteration 1, "
        "at its best epoch, per pair of symmetric cross-entropy's (alpha, beta) and noise setting; pairs ranked "
        "by the mean over the settings.\n"
    )


def workflow_inputs(*, config: dict, dataset: str, noise: str, seed: int) -> dict[str, Path]:
    """The workflow's files a grid over ``dataset`` reads: the prepared data, the noisy labels of (noise, seed) and,
    for text, the tokens; a missing one raises ``FileNotFoundError`` naming the Snakemake command that builds it."""
    entry = config["datasets"][dataset]
    paths = {
        "dataset": Path(layout.DATASET.format(dataset=dataset)),
        "labels": Path(layout.NOISE_LABELS.format(dataset=dataset, noise=noise, seed=seed)),
    }
    if entry["recipe"]["model"] == "text_classifier":
        checkpoint = entry["recipe"].get("model_options", {}).get("checkpoint", DEFAULT_CHECKPOINT)
        paths["tokens"] = Path(layout.TOKENS.format(dataset=dataset, tokenizer=checkpoint_slug(checkpoint)))
    missing = [str(path) for path in paths.values() if not path.exists()]
    if missing:
        raise FileNotFoundError(
            f"missing {missing}: build them first with snakemake --configfile <this config> "
            f"--cores all {' '.join(missing)}"
        )
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m enkcvs.pipeline.tuning", description=__doc__.split("\n\n")[0])
    parser.add_argument("--configfile", required=True, type=Path, help="the workflow config naming the dataset")
    parser.add_argument("--dataset", required=True, help="a dataset under the config's datasets")
    parser.add_argument("--noise", nargs="+", required=True, help="noise settings to score the grid on")
    parser.add_argument("--alpha", nargs="+", type=float, required=True, help="SL's CE weights to try")
    parser.add_argument("--beta", nargs="+", type=float, required=True, help="SL's reverse-CE weights to try")
    parser.add_argument("--seed", type=int, default=None, help="the run's seed (default: the config's first)")
    parser.add_argument("--output", required=True, type=Path, help="folder for grid.csv, mean.csv, provenance.json")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    config = yaml.safe_load(args.configfile.read_text())
    if args.dataset not in config.get("datasets", {}):
        parser.error(
            f"--dataset {args.dataset!r} is not under datasets of {args.configfile}: choose one of "
            f"{sorted(config.get('datasets', {}))}"
        )
    entry = config["datasets"][args.dataset]
    unknown = sorted(set(args.noise) - set(entry["noise"]))
    if unknown:
        parser.error(f"--noise {unknown} are not noise settings of {args.dataset} in {args.configfile}")
    seed = config["seeds"][0] if args.seed is None else args.seed
    num_folds = entry.get("selection", config["selection"])["K"]
    try:
        inputs = {
            noise: workflow_inputs(config=config, dataset=args.dataset, noise=noise, seed=seed) for noise in args.noise
        }
    except FileNotFoundError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    grid = list(itertools.product(args.alpha, args.beta))
    mixup = bool(entry.get("baselines", {}).get("sl", {}).get("mixup", False))  # as SL's final model trains
    # what produced the grid, taken before it runs (the commit that trains it, not the one checked out at its end)
    record = provenance(
        configfile=str(args.configfile),
        dataset=args.dataset,
        recipe=entry["recipe"],
        mixup=mixup,
        seed=seed,
        num_folds=num_folds,
        split="fold 1 of iteration 1, noisy validation share",
        grid=[list(pair) for pair in grid],
        noise=args.noise,
        machine=machine_description(),
    )
    started, frames = time.perf_counter(), []
    for noise, paths in inputs.items():
        frame = symmetric_ce_validation_grid(
            **paths, recipe=entry["recipe"], seed=seed, num_folds=num_folds, grid=grid, mixup=mixup
        )
        frames.append(frame.assign(noise=noise))
    table = pd.concat(frames, ignore_index=True)[
        ["noise", "alpha", "beta", "best_epoch", "validation_accuracy", "per_epoch"]
    ]
    mean = (
        table.groupby(["alpha", "beta"], as_index=False)["validation_accuracy"]
        .mean()
        .sort_values("validation_accuracy", ascending=False, kind="stable")
    )
    for name, frame in (("grid.csv", table), ("mean.csv", mean)):
        with atomic_path(args.output / name) as tmp:
            frame.to_csv(tmp, index=False)
    with atomic_path(args.output / "grid.md") as tmp:
        tmp.write_text(grid_markdown(table=table, mean=mean))
    write_json({**record, "wall_seconds": round(time.perf_counter() - started, 1)}, args.output / "provenance.json")
    best = mean.iloc[0]
    print(
        f"best on noisy validation (mean over {args.noise}): alpha {best['alpha']:g}, beta {best['beta']:g} "
        f"({best['validation_accuracy']:.4f})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
