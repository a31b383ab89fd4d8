"""Which ``--text-recipe`` ``enkcvs find-issues --data texts.csv --text-column text`` uses by default: the command
with each of its own text recipes beside cleanlab as a practitioner runs it on texts, on data whose flipped labels are
known.

Five arms on each data set, noise setting and flip seed, on the same CSV of texts and given labels:

- ``enkcvs_frozen``, ``enkcvs_tfidf``, ``enkcvs_both``: ``enkcvs find-issues --data`` with ``--text-recipe`` frozen
  (mlp heads on the packaged MiniLM's frozen embeddings), tfidf (a TF-IDF and logistic regression pipeline on the
  raw texts, the vectoriser fitted in each fold) and both (TF-IDF beside the embeddings, z-scored and scaled to unit
  length, one logistic regression); the command's defaults otherwise (K, M, t), every fold model trained afresh
  (``--no-cache``: the seconds are the command's; frozen runs first, and its seconds include encoding the texts where
  the cache holds no embeddings of them yet);
- ``cleanlab_tfidf``, ``cleanlab_minilm``: ``cleanlab.filter.find_label_issues`` and
  ``cleanlab.rank.get_label_quality_scores``, defaults, on ``cleanlab.count.estimate_cv_predicted_probabilities``
  (5 folds) by scikit-learn's ``make_pipeline(TfidfVectorizer(), LogisticRegression(max_iter=2000))`` on the raw
  texts, and by ``LogisticRegression(max_iter=2000)`` on the MiniLM embeddings.

Data: TREC's questions (the first 1,500 of ``train_5500.label``, ``--trec``) under their 6 coarse and their fine
labels (fine: classes of fewer than 10 questions left out), and the synthetic topic texts of benchmarks/review_list.py; flips as benchmarks/find_issues_vs_cleanlab.py
draws them (``sym``: to any other class; ``asym``: the pair flip c -> c + 1 mod Q), 12% at seeds 1, 2, 3. Per run: each
review list's F1 against the flips, each ranking's precision at the number of flips (P@k) and each arm's seconds;
printed as each arm's mean per data set and over the sets, with the command's recipe of the best mean F1 and of the
best mean P@k. Run ``python benchmarks/text_recipes.py --trec <folder of train_5500.label> --out
benchmarks/results/text_recipes-<date>.json``. Reports numbers, asserts nothing.
"""

import argparse
import json
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
from find_issues_vs_cleanlab import (
    CLEANLAB_FOLDS,
    TREC_QUESTIONS,
    cleanlab_outcome,
    flipped,
    logistic_inputs,
    scored,
    tfidf_logistic,
    trec_questions,
    write_files,
)
from review_list import synthetic_texts

from enkcvs import machine
from enkcvs.io import git_state, package_versions
from enkcvs.labelissues.find import write_issues
from enkcvs.labelissues.oof import DEFAULT_FOLDS, DEFAULT_REPETITIONS
from enkcvs.labelissues.owndata import DEFAULT_TEXT_RECIPE, text_pipeline
from enkcvs.labelissues.request import Request

RECIPES = ("frozen", "tfidf", "both")  # the command's own text recipes (raw and finetune: a user's model, hours)
SCORES = {"f1": "F1", "precision_at_errors": "P@k", "seconds": "seconds"}  # per run, as the table names them


def text_sets(*, texts: int, seed: int, trec: Path | None) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each set of texts by name: (texts (N,), true labels (N,))."""
    sets = {"synthetic texts": synthetic_texts(seed=seed, count=texts)}
    for fine in (False, True) if trec is not None else ():
        sets[f"TREC {'fine' if fine else 'coarse'}"] = trec_questions(trec, fine=fine)
    return sets


def timed(outcome, **arguments) -> tuple[dict, float]:
    """``outcome(**arguments)`` and its seconds."""
    started = time.perf_counter()
    return outcome(**arguments), round(time.perf_counter() - started, 1)


def command_outcome(*, path: Path, recipe: str, seed: int, folder: Path) -> dict[str, np.ndarray]:
    """``enkcvs find-issues --data path --text-column text --text-recipe recipe``: (N,) ``flagged`` and ``rank``."""
    out = folder / f"{recipe}.csv"
    write_issues(Request(data=path, out=out, seed=seed, text_column="text", text_recipe=recipe, no_cache=True))
    issues = pd.read_csv(out)  # one row per text, in the file's order
    return {"flagged": issues["is_label_issue"].to_numpy(), "order": np.argsort(issues["rank"].to_numpy())}


def one_run(name: str, texts: np.ndarray, true: np.ndarray, *, seed: int, noise: str) -> dict:
    """The five arms on one set of texts, noise setting and seed: each arm's scores and seconds."""
    true = np.asarray(true, dtype=np.int64)
    given = flipped(true, noise=noise, seed=seed)
    arms = {}
    with tempfile.TemporaryDirectory() as folder:
        path, _ = write_files("texts", texts, given, folder=Path(folder))
        for recipe in RECIPES:
            arms[f"enkcvs_{recipe}"] = timed(command_outcome, path=path, recipe=recipe, seed=seed, folder=path.parent)
    for arm, (features, classifier) in {
        "cleanlab_tfidf": (texts, tfidf_logistic()),
        "cleanlab_minilm": logistic_inputs("texts", texts),  # the command's cached embeddings, LR
    }.items():
        outcome, seconds = timed(cleanlab_outcome, features=features, classifier=classifier, given=given, seed=seed)
        order = np.argsort(outcome["quality"], kind="stable")
        arms[arm] = ({"flagged": outcome["flagged"], "order": order}, seconds)
    return {
        "data": name,
        "noise": noise,
        "seed": seed,
        "samples": len(true),
        "classes": int(true.max()) + 1,
        "errors": int((given != true).sum()),
        **{
            arm: {**scored(outcome["flagged"], outcome["order"], given=given, true=true), "seconds": seconds}
            for arm, (outcome, seconds) in arms.items()
        },
    }


def mean_table(runs: list[dict]) -> pd.DataFrame:
    """Each arm's mean F1, P@k and seconds per data set (over its noise settings and seeds), and over the sets."""
    arms = [key for key in runs[0] if key.startswith(("enkcvs_", "cleanlab_"))]
    long = pd.DataFrame(
        [
            {"data": run["data"], "arm": arm, **{label: run[arm][score] for score, label in SCORES.items()}}
            for run in runs
            for arm in arms
        ]
    )
    per_set = long.groupby(["data", "arm"], sort=False).mean().unstack("arm")
    per_set.loc["mean over the sets"] = per_set.mean()
    per_set.columns = [f"{label} {arm}" for label, arm in per_set.columns]
    return per_set


def best(table: pd.DataFrame) -> dict[str, str]:
    """The command's text recipe of the best mean over the sets, by F1 and by P@k."""
    over_sets = table.loc["mean over the sets"]
    return {label: max(RECIPES, key=lambda recipe: over_sets[f"{label} enkcvs_{recipe}"]) for label in ("F1", "P@k")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=lambda text: [int(s) for s in text.split(",")], default=[1, 2, 3])
    parser.add_argument("--noise", type=lambda text: text.split(","), default=["sym0.12", "asym0.12"])
    parser.add_argument("--texts", type=int, default=1500, help="synthetic texts per seed")
    parser.add_argument("--trec", type=Path, help="a folder holding TREC's train_5500.label (none: no TREC)")
    parser.add_argument("--out", type=Path, required=True, help="the JSON written")
    arguments = parser.parse_args()
    started = time.perf_counter()
    runs = []
    for seed in arguments.seeds:
        for name, (texts, true) in text_sets(texts=arguments.texts, seed=seed, trec=arguments.trec).items():
            for noise in arguments.noise:
                runs.append(one_run(name, texts, true, seed=seed, noise=noise))
                print(json.dumps({key: runs[-1][key] for key in ("data", "noise", "seed")}), flush=True)
    table = mean_table(runs)
    results = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "seconds": round(time.perf_counter() - started, 1),
        "settings": {
            "seeds": arguments.seeds,
            "noise": arguments.noise,
            "texts": arguments.texts,
            "trec_questions": TREC_QUESTIONS if arguments.trec else None,
            "K": DEFAULT_FOLDS,
            "M": DEFAULT_REPETITIONS,
            "pipelines": {recipe: repr(text_pipeline(recipe)) for recipe in ("tfidf", "both")},
            "cleanlab": f"find_label_issues and get_label_quality_scores, defaults; {CLEANLAB_FOLDS}-fold "
            "estimate_cv_predicted_probabilities",
            "default_when_run": DEFAULT_TEXT_RECIPE,
        },
        "cpu": machine.cpu_model(),
        "cpu_flags": machine.cpu_flags(),
        "versions": package_versions(),
        "git": git_state(),
        "means": json.loads(table.to_json(orient="index")),
        "best": best(table),
        "runs": runs,
    }
    arguments.out.parent.mkdir(parents=True, exist_ok=True)
    arguments.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"{table.T.to_markdown(floatfmt='.3f')}\n\nthe command's best recipe over the sets: {results['best']}")


if __name__ == "__main__":
    main()
