"""Which head recipe ``enkcvs find-issues --data`` trains on frozen text embeddings by default: a few candidate
recipes of the ``mlp`` head, each run as the command runs it (M x K fold models on the packaged MiniLM's cached
embeddings, :func:`enkcvs.training.crossval.out_of_fold_probabilities`), scored on how well the E-NKCVS ranking puts
the flipped labels first (precision at the number of flips, AUPRC) and timed.

Two sets of texts with a share of the labels flipped (seeded): TREC's 5,452 training questions (6 coarse classes,
``--trec``: a folder with the official ``train_5500.label`` and ``TREC_10.label``), and the synthetic topic texts of
benchmarks/review_list.py that benchmarks/rank_speed.py times. Run
``python benchmarks/text_heads.py --trec data/raw/trec --threads 2 --out benchmarks/results/text_heads-<date>.json``;
the JSON names the CPU, its instruction sets, the threads and the load average while it ran. Reports numbers, asserts
nothing.
"""

import argparse
import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from review_list import synthetic_texts

from enkcvs import machine
from enkcvs.data.embeddings import embed_texts
from enkcvs.data.sources.trec import load_trec
from enkcvs.io import package_versions
from enkcvs.labelissues.oof import DEFAULT_FOLDS, DEFAULT_REPETITIONS, select
from enkcvs.labelissues.owndata import DEFAULT_RECIPES, MAX_TOKENS
from enkcvs.method.noise import inject_noise
from enkcvs.method.noise_settings import parse_noise
from enkcvs.method.ranking import ranking_quality

#: The candidates: the table's recipe, and shorter or larger-batch variants of it and of Adam (mixup throughout:
#: mixing embeddings is well defined).
HEAD = {"model": "mlp", "momentum": 0.9, "weight_decay": 5e-4, "mixup_alpha": 0.3}
CANDIDATES = {
    "sgd 20 epochs, batch 64 (a table's)": {**HEAD, "optimizer": "sgd", "lr": 0.05, "epochs": 20, "batch_size": 64},
    "sgd 10 epochs, batch 128": {**HEAD, "optimizer": "sgd", "lr": 0.05, "epochs": 10, "batch_size": 128},
    "sgd 10 epochs, batch 256, lr 0.1": {**HEAD, "optimizer": "sgd", "lr": 0.1, "epochs": 10, "batch_size": 256},
    "adam 10 epochs, batch 128": {**HEAD, "optimizer": "adam", "lr": 1e-3, "epochs": 10, "batch_size": 128},
}
SYNTHETIC = 2000  # synthetic texts (benchmarks/review_list.py)
#: A candidate ranks as well as the best when its precision at the number of flips, averaged over the sets, is at
#: most this far below the best's; the fastest of those is chosen.
TIE_POINTS = 1.0


def text_sets(*, trec: Path, seed: int) -> dict[str, tuple[list[str], np.ndarray, str]]:
    """Each set of texts: (texts, true labels, the noise flipped into its labels)."""
    questions = load_trec(root=str(trec), download=False)
    synthetic, topics = synthetic_texts(seed=seed, count=SYNTHETIC)
    return {
        "trec": (list(questions.x_train), questions.y_train, "sym0.2"),
        "synthetic": (list(synthetic), topics, "sym0.1"),
    }


def one_run(recipe: dict, *, embeddings: np.ndarray, given: np.ndarray, true: np.ndarray, seed: int) -> dict:
    """One candidate on one set: the ranking's quality against the flips, and the M x K fold models' seconds."""
    from enkcvs.training.crossval import out_of_fold_probabilities

    started = time.perf_counter()
    stack = out_of_fold_probabilities(
        x=embeddings.reshape(len(embeddings), 1, 1, -1),
        labels=given,
        recipe=recipe,
        num_folds=DEFAULT_FOLDS,
        iterations=DEFAULT_REPETITIONS,
        seed=seed,
        num_classes=int(true.max()) + 1,
    )
    seconds = time.perf_counter() - started
    result = select(probabilities=stack, labels=given)
    scores = ranking_quality(label_quality=result.label_quality, is_error=given != true)
    return {
        "fold_models_seconds": round(seconds, 1),
        "precision_at_errors": scores["precision_at_errors"],
        "auprc": scores["auprc"],
        "errors": scores["errors"],
        "accuracy_against_true": float((stack.mean(axis=0).argmax(axis=1) == true).mean()),
    }


def chosen(runs: list[dict]) -> str:
    """The fastest candidate (fold models' seconds summed over the sets) among those that rank within
    :data:`TIE_POINTS` of the best (precision at the number of flips, in points, averaged over the sets)."""
    precision = {
        name: 100 * np.mean([run["precision_at_errors"] for run in runs if run["candidate"] == name])
        for name in CANDIDATES
    }
    seconds = {name: sum(run["fold_models_seconds"] for run in runs if run["candidate"] == name) for name in CANDIDATES}
    best = max(precision.values())
    return min((name for name in CANDIDATES if precision[name] >= best - TIE_POINTS), key=seconds.get)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trec", type=Path, required=True, help="folder of train_5500.label and TREC_10.label")
    parser.add_argument("--threads", type=int, help="torch's CPU threads (default: torch's own choice)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, required=True, help="the JSON written")
    arguments = parser.parse_args()
    import torch

    if arguments.threads:
        torch.set_num_threads(arguments.threads)
    runs, encoding = [], {}
    for name, (texts, true, noise) in text_sets(trec=arguments.trec, seed=arguments.seed).items():
        started = time.perf_counter()
        embeddings = embed_texts(texts, max_tokens=MAX_TOKENS)  # cached: slow only on a machine's first run
        encoding[name] = round(time.perf_counter() - started, 1)
        given = inject_noise(true, spec=parse_noise(noise), num_classes=int(true.max()) + 1, seed=arguments.seed)
        for candidate, recipe in CANDIDATES.items():
            runs.append(
                {
                    "texts": name,
                    "samples": len(texts),
                    "noise": noise,
                    "candidate": candidate,
                    "recipe": recipe,
                    **one_run(recipe, embeddings=embeddings, given=given, true=true, seed=arguments.seed),
                }
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
        "versions": package_versions(),
        "encoding_seconds": encoding,
        "chosen": chosen(runs),
        "default_when_run": DEFAULT_RECIPES["texts"],
        "runs": runs,
    }
    arguments.out.parent.mkdir(parents=True, exist_ok=True)
    arguments.out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
