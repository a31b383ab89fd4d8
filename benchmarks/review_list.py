"""The review list beside cleanlab's ``find_label_issues`` and the paper's plain flag (not kept), on identical
out-of-fold probabilities of data with known label errors: a table, images and texts, each with ~10% of the labels
flipped; and how well each score ranks the flips.

Out-of-fold probabilities come from M repetitions of K-fold cross-validation with a scikit-learn logistic regression
(fast on two cores; the point is the selection rule, not the model). The three sets and the four rankings all read the
same probabilities: E-NKCVS's from the M repetitions, cleanlab's from their mean. Run
``python benchmarks/review_list.py --out benchmarks/results/review_list-<date>.json``; it prints the view
``review-list`` renders from the JSON (benchmarks/README.md). Reports numbers, asserts nothing.
"""

import argparse
import json
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd

from enkcvs import machine
from enkcvs.io import package_versions
from enkcvs.labelissues.confident import CLEANLAB_DEFAULT_FILTER, cleanlab_flags, compare_rankings
from enkcvs.labelissues.oof import select
from enkcvs.method.metrics import error_list_scores
from enkcvs.method.noise import inject_noise
from enkcvs.method.noise_settings import parse_noise
from enkcvs.rng import Purpose, derive_seed, generator

#: The synthetic texts' topics: each text draws about a quarter of its words from its topic's vocabulary, a tenth
#: from any topic's, the rest from words shared by all, so that the classifier errs on some texts as on real ones.
TOPICS, TOPIC_WORDS, SHARED_WORDS, TEXTS = 4, 25, 200, 1200


def synthetic_texts(*, seed: int, count: int = TEXTS) -> tuple[np.ndarray, np.ndarray]:
    """(texts (N,) object, labels (N,)): ``count`` short synthetic topic texts (no text set ships with the installed
    packages; scikit-learn's 20 newsgroups needs a download)."""
    rng = generator(seed, Purpose.INIT)
    labels = rng.integers(0, TOPICS, count)
    texts = []
    for topic in labels:
        draws = rng.random(rng.integers(6, 14))
        words = [
            f"topic{topic}word{rng.integers(TOPIC_WORDS)}"
            if u < 0.25
            else f"topic{rng.integers(TOPICS)}word{rng.integers(TOPIC_WORDS)}"
            if u < 0.35
            else f"shared{rng.integers(SHARED_WORDS)}"
            for u in draws
        ]
        texts.append(" ".join(words))
    return np.array(texts, dtype=object), labels


def datasets(*, seed: int) -> dict[str, tuple[np.ndarray, np.ndarray, str, object]]:
    """Each kind of data: (features, true labels, what it is, a factory of its scikit-learn model)."""
    from sklearn.datasets import load_breast_cancer, load_digits
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    def logistic():
        return LogisticRegression(max_iter=2000)

    table, images, texts = load_breast_cancer(return_X_y=True), load_digits(return_X_y=True), synthetic_texts(seed=seed)
    return {
        "table": (
            *table,
            "scikit-learn's breast cancer (569 x 30 features, 2 classes)",
            lambda: make_pipeline(StandardScaler(), logistic()),
        ),
        "images": (images[0] / 16.0, images[1], "scikit-learn's digits (1,797 images 8 x 8, 10 classes)", logistic),
        "text": (
            *texts,
            f"synthetic topic texts ({TEXTS:,} texts, {TOPICS} topics; no packaged text set offline)",
            lambda: make_pipeline(TfidfVectorizer(), logistic()),
        ),
    }


def out_of_fold(features: np.ndarray, given: np.ndarray, *, model, repetitions: int, folds: int, seed: int):
    """(M, N, Q) probabilities: each repetition a K-fold split of its own (seeded), each sample predicted by the model
    of the fold that held it out."""
    from sklearn.model_selection import KFold

    stack = np.zeros((repetitions, len(given), given.max() + 1))
    for m in range(repetitions):
        split = KFold(folds, shuffle=True, random_state=derive_seed(seed, Purpose.FOLDS, folds, m) % 2**31)
        for train, held_out in split.split(features):
            fitted = model().fit(features[train], given[train])
            stack[m][np.ix_(held_out, fitted.classes_)] = fitted.predict_proba(features[held_out])
    return stack


def sets_row(name: str, listed: np.ndarray, *, given: np.ndarray, true: np.ndarray) -> dict:
    """One list of label errors, ``listed`` (N,) bool: its length, precision, recall and F1 against the flips."""
    scores = error_list_scores(listed=listed, given=given, true=true)
    both = scores["precision"] + scores["recall"]
    return {
        "set": name,
        "listed": int(listed.sum()),
        **scores,
        "f1": 2 * scores["precision"] * scores["recall"] / both if both else float("nan"),
    }


def one_run(kind: str, data: tuple, *, seed: int, repetitions: int, folds: int, noise: str) -> dict:
    """Both E-NKCVS sets, cleanlab's flags and the four rankings of one kind of data and seed."""
    features, true, _, model = data
    given = inject_noise(true, spec=parse_noise(noise), num_classes=true.max() + 1, seed=seed)
    started = time.perf_counter()
    stack = out_of_fold(features, given, model=model, repetitions=repetitions, folds=folds, seed=seed)
    result = select(probabilities=stack, labels=given, true_labels=true)
    cleanlab = cleanlab_flags(probabilities=stack.mean(axis=0), labels=given, method=CLEANLAB_DEFAULT_FILTER)
    rankings = compare_rankings(probabilities=stack, given=given, true=true)
    return {
        "kind": kind,
        "seed": seed,
        "errors": int((given != true).sum()),
        "threshold": result.threshold,
        "seconds": round(time.perf_counter() - started, 1),
        "sets": [
            sets_row("E-NKCVS review list", result.in_review_list, given=given, true=true),
            sets_row(f"cleanlab find_label_issues ({CLEANLAB_DEFAULT_FILTER})", cleanlab, given=given, true=true),
            sets_row("E-NKCVS not kept (votes < t)", ~result.selected, given=given, true=true),
        ],
        "rankings": rankings[["method", "auprc", "precision_at_errors", "auroc"]].to_dict("records"),
    }


def summary(results: dict) -> str:
    """Each set's length, precision, recall and F1 per kind of data, and each score's average precision, as means
    over the seeds (Markdown)."""
    sets = pd.DataFrame([{"data": run["kind"], **row} for run in results["runs"] for row in run["sets"]])
    rankings = pd.DataFrame(
        [{"data": run["kind"], **row} for run in results["runs"] for row in run["rankings"]]
    ).pivot_table(index="data", columns="method", values="auprc", sort=False)
    means = sets.groupby(["data", "set"], sort=False)[["listed", "precision", "recall", "f1"]].mean().reset_index()
    return f"{means.to_markdown(index=False, floatfmt='.3f')}\n\n{rankings.to_markdown(floatfmt='.3f')}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=lambda text: [int(s) for s in text.split(",")], default=[1, 2, 3])
    parser.add_argument("--repetitions", "-M", type=int, default=5)
    parser.add_argument("--folds", "-K", type=int, default=5)
    parser.add_argument("--noise", default="sym0.1")
    parser.add_argument("--out", type=Path, required=True, help="the JSON written")
    arguments = parser.parse_args()
    started = time.perf_counter()
    runs = []
    for seed in arguments.seeds:
        for kind, data in datasets(seed=seed).items():
            runs.append(
                one_run(
                    kind,
                    data,
                    seed=seed,
                    repetitions=arguments.repetitions,
                    folds=arguments.folds,
                    noise=arguments.noise,
                )
            )
    described = {kind: data[2] for kind, data in datasets(seed=arguments.seeds[0]).items()}
    results = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "seconds": round(time.perf_counter() - started, 1),
        "settings": {
            "seeds": arguments.seeds,
            "M": arguments.repetitions,
            "K": arguments.folds,
            "noise": arguments.noise,
            "model": "scikit-learn LogisticRegression(max_iter=2000)",
        },
        "data": described,
        "cpu": machine.cpu_model(),
        "cpu_flags": machine.cpu_flags(),
        "versions": package_versions(),
        "runs": runs,
    }
    arguments.out.parent.mkdir(parents=True, exist_ok=True)
    arguments.out.write_text(json.dumps(results, indent=2) + "\n")
    print(summary(results))


if __name__ == "__main__":
    main()
