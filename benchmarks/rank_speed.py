"""How long ``enkcvs find-issues --data`` takes to rank a user's data, per kind: 10,000 table rows, images and texts
by default, each with a tenth of the labels flipped, written as the files a user gives it (a CSV of features, a folder
of PNG images per class, a CSV of texts) and ranked with the command's default recipe for tables and images
(:data:`enkcvs.labelissues.owndata.DEFAULT_RECIPES`) and for texts ``--text-recipe frozen``, whose heads on the
frozen embeddings it times fold by fold (the texts' default pipeline of TF-IDF and embeddings it does not time).

Per kind it measures reading and preparing the files (as the command does: :func:`~enkcvs.labelissues.owndata.
read_data`) and one of the M x K fold models (iteration 1, fold 1: its training, best epoch by validation and
held-out prediction); the whole ranking is that preparation plus M x K such fold models, which the JSON states as a
projection beside the measured parts (where the inputs are features in memory, a table's or the texts' embeddings,
all M x K fold models are also timed, one by one and stacked as the command trains them), and, run on fewer samples
(``--samples``), scaled linearly to ``--project-to`` samples (every epoch passes once over each training sample,
every prediction once over each held-out one).
``--whole KIND`` also runs that kind's whole command and times it, end to end: ``enkcvs find-issues`` in a process
of its own, from its start to its exit. Reading and preparing and the whole command each start from an empty cache
(:func:`enkcvs.io.cache_dir`: texts' embeddings, bf16 probes), as a first run on the machine does. Run
``python benchmarks/rank_speed.py --out benchmarks/results/rank_speed-<date>.json`` (``--threads 2`` for two CPU
cores); the JSON names the CPU, its instruction sets (and any limit set on the ones used, e.g.
``ATEN_CPU_CAPABILITY=avx2``), the threads and the load average while it ran. Reports numbers,
asserts nothing.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from unittest import mock

import numpy as np
import pandas as pd
from review_list import synthetic_texts

from enkcvs import machine
from enkcvs.io import CACHE_VARIABLE, package_versions
from enkcvs.labelissues.oof import DEFAULT_FOLDS, DEFAULT_REPETITIONS
from enkcvs.labelissues.owndata import DEFAULT_RECIPES, read_data
from enkcvs.labelissues.request import Request
from enkcvs.method.noise import inject_noise
from enkcvs.method.noise_settings import parse_noise
from enkcvs.rng import Purpose, generator

KINDS = ("table", "images", "texts")
CLASSES = 4
FEATURES = 20  # a table's feature columns
IMAGE_SIDE = 28  # pixels of the written PNG images (the recipe resizes them)


def write_table(folder: Path, *, samples: int, seed: int) -> tuple[Path, dict]:
    """A CSV of FEATURES Gaussian features around one centre per class and a ``label`` column: the file, the
    command's options."""
    rng = generator(seed, Purpose.INIT)
    true = rng.integers(0, CLASSES, samples)
    centres = rng.normal(scale=1.5, size=(CLASSES, FEATURES))
    frame = pd.DataFrame(
        centres[true] + rng.normal(size=(samples, FEATURES)), columns=[f"x{i}" for i in range(FEATURES)]
    )
    frame["label"] = _flipped(true, seed=seed)
    frame.to_csv(path := folder / "table.csv", index=False)
    return path, {}


def write_images(folder: Path, *, samples: int, seed: int) -> tuple[Path, dict]:
    """A folder of IMAGE_SIDE-pixel grey PNG images, one sub-folder per (given) class: each class a bar at its own
    angle, shifted and noisy."""
    from PIL import Image

    rng = generator(seed, Purpose.INIT)
    true = rng.integers(0, CLASSES, samples)
    given = _flipped(true, seed=seed)
    rows, columns = np.mgrid[:IMAGE_SIDE, :IMAGE_SIDE] - IMAGE_SIDE / 2
    root = folder / "images"
    for index, (label, shown) in enumerate(zip(true, given)):
        angle = np.pi * label / CLASSES
        shift = rng.normal(scale=2.0, size=2)
        distance = np.abs((columns - shift[0]) * np.sin(angle) - (rows - shift[1]) * np.cos(angle))
        pixels = np.clip(255 * np.exp(-(distance**2) / 4) + rng.normal(scale=30, size=distance.shape), 0, 255)
        (root / f"class{shown}").mkdir(parents=True, exist_ok=True)
        Image.fromarray(pixels.astype(np.uint8)).save(root / f"class{shown}" / f"{index:05d}.png")
    return root, {}


def write_texts(folder: Path, *, samples: int, seed: int) -> tuple[Path, dict]:
    """A CSV of synthetic topic texts (``text``) and their ``label`` (benchmarks/review_list.py's texts)."""
    texts, true = synthetic_texts(seed=seed, count=samples)
    pd.DataFrame({"text": texts, "label": _flipped(true, seed=seed)}).to_csv(path := folder / "texts.csv", index=False)
    return path, {"text_column": "text", "text_recipe": "frozen"}  # the heads this script times fold by fold


def _flipped(true: np.ndarray, *, seed: int) -> np.ndarray:
    """``true`` with a tenth of the labels flipped to another class."""
    return inject_noise(true, spec=parse_noise("sym0.1"), num_classes=CLASSES, seed=seed)


WRITERS = {"table": write_table, "images": write_images, "texts": write_texts}


def one_fold_seconds(own_data, *, seed: int) -> float:
    """Seconds of fold model (iteration 1, fold 1) of ``own_data``: training, best epoch and held-out prediction."""
    from enkcvs.training.crossval import fold_probabilities
    from enkcvs.training.inputs import subset_inputs

    data = own_data.data
    inputs = own_data.inputs if isinstance(own_data.inputs, np.ndarray) else data.x_train
    started = time.perf_counter()
    fold_probabilities(
        recipe=own_data.recipe,
        given=data.y_train,
        num_classes=data.num_classes,
        seed=seed,
        num_folds=DEFAULT_FOLDS,
        iteration=1,
        fold=1,
        inputs=lambda indices, train: subset_inputs(data, inputs, indices, train=train),
    )
    return time.perf_counter() - started


def all_folds_seconds(own_data, *, seed: int) -> dict[str, float]:
    """Seconds of all M x K fold models of ``own_data`` (features in memory: a table, texts' embeddings), trained one
    by one and stacked (:func:`~enkcvs.training.crossval.out_of_fold_probabilities`), each from the same inputs."""
    from enkcvs.training.crossval import out_of_fold_probabilities

    seconds = {}
    for way, stacked in (("one by one", False), ("stacked", True)):
        started = time.perf_counter()
        out_of_fold_probabilities(
            x=own_data.inputs,
            labels=own_data.data.y_train,
            recipe=own_data.recipe,
            num_folds=DEFAULT_FOLDS,
            iterations=DEFAULT_REPETITIONS,
            seed=seed,
            num_classes=own_data.data.num_classes,
            standardize=own_data.kind == "table",
            stacked=stacked,
        )
        seconds[way] = round(time.perf_counter() - started, 1)
    return seconds


def empty_cache(folder: Path):
    """The library's caches in ``folder``, new and empty, for a ``with`` block."""
    return mock.patch.dict(os.environ, {CACHE_VARIABLE: str(folder)})


def whole_seconds(path: Path, *, options: dict, out: Path, seed: int, threads: int | None) -> float:
    """Seconds of the whole ``enkcvs find-issues --data path`` in a process of its own, from its start to its exit,
    its caches empty, on ``threads`` CPU threads (None: torch's own choice)."""
    flags = [part for name, value in options.items() for part in (f"--{name.replace('_', '-')}", str(value))]
    command = [
        sys.executable,
        "-m",
        "enkcvs.labelissues.cli",
        "find-issues",
        "--data",
        str(path),
        *flags,
        "--seed",
        str(seed),
        "--out",
        str(out),
    ]
    with empty_cache(out.with_name(f"{out.stem}-cache")):
        environment = {**os.environ, **({"OMP_NUM_THREADS": str(threads)} if threads else {})}
        started = time.perf_counter()
        subprocess.run(command, check=True, env=environment)
        return time.perf_counter() - started


def one_kind(
    kind: str, *, samples: int, seed: int, whole: bool, folder: Path, target: int, threads: int | None
) -> dict:
    """The measured parts of ranking ``samples`` of ``kind``, the projected whole, and that scaled to ``target``
    samples (the whole measured too with ``whole``)."""
    path, options = WRITERS[kind](folder, samples=samples, seed=seed)
    with empty_cache(folder / f"{kind}-cache"):
        started = time.perf_counter()
        own_data = read_data(Request(data=path, **options))
        prepare = time.perf_counter() - started
    fold = one_fold_seconds(own_data, seed=seed)
    models = DEFAULT_FOLDS * DEFAULT_REPETITIONS
    found = {
        "kind": kind,
        "samples": samples,
        "recipe": DEFAULT_RECIPES[kind],
        "fold_models": models,
        "prepare_seconds": round(prepare, 3),
        "fold_model_seconds": round(fold, 3),
        "projected_seconds": round(prepare + models * fold, 1),
        "projected_to": target,
        "projected_seconds_at_target": round((prepare + models * fold) * target / samples),
        **({"text_recipe": own_data.text_recipe} if own_data.text_recipe else {}),
    }
    if isinstance(own_data.inputs, np.ndarray) and own_data.inputs.dtype.kind == "f":  # the command stacks these
        found["all_fold_models_seconds"] = all_folds_seconds(own_data, seed=seed)
    if whole:
        found["whole_seconds"] = round(
            whole_seconds(path, options=options, out=folder / f"{kind}-issues.csv", seed=seed, threads=threads), 1
        )
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", type=lambda text: text.split(","), default=list(KINDS))
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--project-to", type=int, default=10_000, help="samples the whole ranking is projected to")
    parser.add_argument(
        "--whole",
        type=lambda text: text.split(","),
        default=[],
        metavar="KIND,...",
        help="kinds whose whole command is run and timed too",
    )
    parser.add_argument("--threads", type=int, help="torch's CPU threads (default: torch's own choice)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, required=True, help="the JSON written")
    arguments = parser.parse_args()
    import torch

    if arguments.threads:
        torch.set_num_threads(arguments.threads)
    runs = []
    with tempfile.TemporaryDirectory() as folder:
        for kind in arguments.kinds:
            runs.append(
                one_kind(
                    kind,
                    samples=arguments.samples,
                    seed=arguments.seed,
                    whole=kind in arguments.whole,
                    folder=Path(folder),
                    target=arguments.project_to,
                    threads=arguments.threads,
                )
            )
            print(json.dumps(runs[-1]), flush=True)
    results = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "K": DEFAULT_FOLDS,
        "M": DEFAULT_REPETITIONS,
        "threads": torch.get_num_threads(),
        "load_average": os.getloadavg(),
        "cpu": machine.cpu_model(),
        "cpu_flags": machine.cpu_flags(),
        "instruction_set_limits": machine.instruction_set_limits(),
        "device": "cpu" if not torch.cuda.is_available() else torch.cuda.get_device_name(0),
        "versions": package_versions(),
        "runs": runs,
    }
    arguments.out.parent.mkdir(parents=True, exist_ok=True)
    arguments.out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
