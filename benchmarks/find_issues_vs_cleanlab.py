"""E-NKCVS as a practitioner runs it beside cleanlab as a practitioner runs it, on data whose flipped labels are known.

E-NKCVS: ``enkcvs find-issues --data`` on the files a user has (a CSV of raw table features, a CSV of texts, a folder
of PNG images per class), the command's defaults throughout (K, M, t, the recipe of each kind). cleanlab:
``find_label_issues`` (its default filter) and ``get_label_quality_scores`` on the K-fold cross-validated
probabilities of a scikit-learn logistic regression over the same inputs: a table's features z-scored, the texts'
embeddings by the same frozen MiniLM, the images' pixels. Per (data, seed), a share of the labels flipped
(``--noise``): the review list's F1 against cleanlab's flags' (both scored against the flips) and the ranking's
precision at the number of flips (P@k) against cleanlab's label-quality ranking's. Per kind of data and over all,
E-NKCVS's lead is ordered by the paired t-test over the (data, seed) pairs (the view ``vs-cleanlab``). Run
``python benchmarks/find_issues_vs_cleanlab.py --out benchmarks/results/find_issues_vs_cleanlab-<date>.json``;
it prints the view. Reports numbers, asserts nothing.
"""

import argparse
import json
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
from review_list import out_of_fold, sets_row, synthetic_texts

from enkcvs import machine
from enkcvs.io import package_versions
from enkcvs.labelissues.confident import CLEANLAB_DEFAULT_FILTER, cleanlab_flags
from enkcvs.labelissues.owndata import DEFAULT_FOLDS, find_issues_in_data
from enkcvs.method.noise import inject_noise, parse_noise
from enkcvs.report.statistics import SIGNIFICANCE
from enkcvs.report.versus import means, runs_frame, verdicts

KINDS = ("table", "texts", "images")


def datasets(*, texts: int, images: int, seed: int) -> list[tuple[str, str, object, np.ndarray]]:
    """(kind, name, inputs, true labels (N,)) of each data set: scikit-learn's wine and breast cancer tables (raw
    features), ``texts`` synthetic topic texts (benchmarks/review_list.py's; no text set ships offline) and the first
    ``images`` of scikit-learn's digits (8 x 8, grey levels 0..16)."""
    from sklearn.datasets import load_breast_cancer, load_digits, load_wine

    wine, cancer, digits = load_wine(return_X_y=True), load_breast_cancer(return_X_y=True), load_digits(return_X_y=True)
    words, topics = synthetic_texts(seed=seed, count=texts)
    return [
        ("table", "wine", *wine),
        ("table", "breast cancer", *cancer),
        ("texts", "synthetic texts", words, topics),
        ("images", "digits", digits[0][:images] / 16.0, digits[1][:images]),
    ]


def write_files(kind: str, inputs, given: np.ndarray, *, folder: Path) -> tuple[Path, dict]:
    """The files a user would give the command, and its options: a CSV of the features or texts and their given
    ``label``; a folder of PNG images, one sub-folder per given class, each image named by its row."""
    from PIL import Image

    if kind == "images":
        for row, (pixels, label) in enumerate(zip(inputs, given)):
            (folder / "images" / f"class{label}").mkdir(parents=True, exist_ok=True)
            Image.fromarray((255 * pixels.reshape(8, 8)).astype(np.uint8)).save(
                folder / "images" / f"class{label}" / f"{row:05d}.png"
            )
        return folder / "images", {}
    frame = (
        pd.DataFrame({"text": inputs})
        if kind == "texts"
        else pd.DataFrame(inputs, columns=[f"x{i}" for i in range(inputs.shape[1])])
    )
    frame["label"] = given
    frame.to_csv(path := folder / f"{kind}.csv", index=False)
    return path, {"text_column": "text"} if kind == "texts" else {}


def enkcvs_outcome(kind: str, inputs, given: np.ndarray, *, seed: int, folder: Path) -> pd.DataFrame:
    """``enkcvs find-issues --data`` on the written files: (N,) ``in_review_list`` and ``rank`` in row order."""
    path, options = write_files(kind, inputs, given, folder=folder)
    find_issues_in_data(data=path, out=folder / "issues.csv", seed=seed, **options)
    issues = pd.read_csv(folder / "issues.csv")
    rows = issues["path"].map(lambda name: int(Path(name).stem)) if kind == "images" else issues["sample"]
    return issues.set_index(rows.to_numpy()).sort_index()[["in_review_list", "rank"]]


def cleanlab_inputs(kind: str, inputs) -> tuple[np.ndarray, object]:
    """The features cleanlab's logistic regression reads and a factory of it: a table z-scored (inside each fold, a
    scikit-learn pipeline), the texts' embeddings by the command's own frozen encoder, the images' pixels."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if kind == "table":
        return inputs, lambda: make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    if kind == "texts":
        from enkcvs.data.embeddings import embed_texts
        from enkcvs.labelissues.owndata import MAX_TOKENS

        inputs = embed_texts(list(inputs), max_tokens=MAX_TOKENS)  # cached: the command encoded them already
    return inputs, lambda: LogisticRegression(max_iter=2000)


def cleanlab_outcome(kind: str, inputs, given: np.ndarray, *, seed: int) -> dict[str, np.ndarray]:
    """cleanlab on K-fold cross-validated probabilities (one repetition, as its docs run it): (N,) ``flagged`` by
    ``find_label_issues`` and ``quality`` by ``get_label_quality_scores`` (lower = more likely an error)."""
    from cleanlab.rank import get_label_quality_scores

    features, model = cleanlab_inputs(kind, inputs)
    [probabilities] = out_of_fold(features, given, model=model, repetitions=1, folds=DEFAULT_FOLDS, seed=seed)
    return {
        "flagged": cleanlab_flags(probabilities=probabilities, labels=given, method=CLEANLAB_DEFAULT_FILTER),
        "quality": get_label_quality_scores(given, probabilities),
    }


def precision_at_errors(order: np.ndarray, *, wrong: np.ndarray) -> float:
    """The share of flipped labels among the first ``wrong.sum()`` samples of ``order`` (most likely error first)."""
    return float(wrong[order[: int(wrong.sum())]].mean())


def one_run(kind: str, name: str, inputs, true: np.ndarray, *, seed: int, noise: str) -> dict:
    """Both methods on one data set and seed: each list's size, precision, recall and F1, each ranking's P@k."""
    given = inject_noise(true.astype(int), spec=parse_noise(noise), num_classes=int(true.max()) + 1, seed=seed)
    wrong = given != true
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        ours = enkcvs_outcome(kind, inputs, given, seed=seed, folder=Path(folder))
    ours_seconds = time.perf_counter() - started
    theirs = cleanlab_outcome(kind, inputs, given, seed=seed)
    return {
        "kind": kind,
        "data": name,
        "seed": seed,
        "samples": len(true),
        "errors": int(wrong.sum()),
        "enkcvs_seconds": round(ours_seconds, 1),
        "enkcvs": {
            **sets_row("review list", ours["in_review_list"].to_numpy(), given=given, true=true),
            "precision_at_errors": precision_at_errors(np.argsort(ours["rank"].to_numpy()), wrong=wrong),
        },
        "cleanlab": {
            **sets_row("find_label_issues", theirs["flagged"], given=given, true=true),
            "precision_at_errors": precision_at_errors(np.argsort(theirs["quality"], kind="stable"), wrong=wrong),
        },
    }


def summary(results: dict) -> str:
    """Both methods' scores per data set, then E-NKCVS's lead ordered by the paired t-test (Markdown)."""
    frame = runs_frame(results)
    return (
        f"{means(frame).to_markdown(index=False, floatfmt='.3f')}\n\nordered where p < {SIGNIFICANCE}:\n\n"
        f"{verdicts(frame).to_markdown(index=False, floatfmt='+.3f')}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=lambda text: [int(s) for s in text.split(",")], default=[1, 2, 3])
    parser.add_argument("--noise", default="sym0.15")
    parser.add_argument("--texts", type=int, default=2000, help="synthetic texts per seed")
    parser.add_argument("--images", type=int, default=600, help="digit images (the first of scikit-learn's)")
    parser.add_argument("--kinds", type=lambda text: text.split(","), default=list(KINDS))
    parser.add_argument("--out", type=Path, required=True, help="the JSON written")
    arguments = parser.parse_args()
    started = time.perf_counter()
    runs = []
    for seed in arguments.seeds:
        for kind, name, inputs, true in datasets(texts=arguments.texts, images=arguments.images, seed=seed):
            if kind in arguments.kinds:
                runs.append(one_run(kind, name, inputs, true, seed=seed, noise=arguments.noise))
                print(
                    json.dumps({key: runs[-1][key] for key in ("kind", "data", "seed", "enkcvs_seconds")}), flush=True
                )
    results = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "seconds": round(time.perf_counter() - started, 1),
        "settings": {
            "seeds": arguments.seeds,
            "noise": arguments.noise,
            "texts": arguments.texts,
            "images": arguments.images,
            "K": DEFAULT_FOLDS,
            "cleanlab_filter": CLEANLAB_DEFAULT_FILTER,
            "cleanlab_model": "scikit-learn LogisticRegression(max_iter=2000)",
        },
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
