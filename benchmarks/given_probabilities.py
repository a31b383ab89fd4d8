"""``enkcvs find-issues --probabilities`` given one set of out-of-fold probabilities (M = 1) beside cleanlab on the
very same probabilities: the review list against ``cleanlab.filter.find_label_issues``, the ranking against the best
of ``cleanlab.rank.get_label_quality_scores``' three scores (P@k with a tie across the k-th place counted by its share
of flips); and each ``--score`` measured alike, which chose the default.

Per data set, model and (noise, seed), a share of the labels flipped (``sym``: to any other class; ``asym``: the pair
flip c -> c + 1 mod Q, class-conditional; two-class data run ``sym`` only); the probabilities are
``cleanlab.count.estimate_cv_predicted_probabilities`` (5 folds) of a scikit-learn model on the flipped labels: a
logistic regression (tables z-scored, texts TF-IDF), naive Bayes (Gaussian on tables, multinomial on TF-IDF; on
some tables overconfident), and on tables a random forest and a multilayer perceptron without weight decay; and the logistic regression's probabilities as a paper or a model hub
publishes them, sharpened (softmax of log P / T, T = 0.1 and 0.03) and rounded to 3 and 2 decimals (many given
labels' probability 0). The command reads them as a user's ``.npy`` file with a labels CSV, each row first rescaled to sum 1 (the command
refuses rows that rounding left off by more than :data:`enkcvs.labelissues.oof.ROW_SUM_TOLERANCE`). Data: scikit-learn's wine,
breast cancer, iris and digits (as a table), synthetic topic texts, and with ``--trec`` TREC's first questions (6
coarse classes). Run ``python benchmarks/given_probabilities.py --trec <folder of train_5500.label> --out
benchmarks/results/given_probabilities-<date>.json``; it prints the tables (:mod:`enkcvs.report.floor`). Reports
numbers, asserts nothing.
"""

import argparse
import json
import tempfile
import time
import warnings
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
from find_issues_vs_cleanlab import TREC_QUESTIONS, flipped, scored, trec_questions
from review_list import synthetic_texts

from enkcvs import machine
from enkcvs.io import git_state, package_versions
from enkcvs.labelissues.find import write_issues
from enkcvs.labelissues.oof import CLEANLAB_SCORES, DEFAULT_SCORE, SCORES
from enkcvs.labelissues.request import Request
from enkcvs.report.floor import FLOOR, summary

CLEANLAB_FOLDS = 5  # estimate_cv_predicted_probabilities' default
#: The published versions of the logistic regression's probabilities: (temperature, decimals kept).
PUBLISHED = ((0.1, 3), (0.03, 2))
#: The command's scores measured: every --score but the margin against the suggested label, which at M = 1 is
#: cleanlab's normalized margin.
COMMAND_SCORES = tuple(score for score in SCORES if score != "label_quality")


def datasets(*, texts: int, seed: int, trec: Path | None) -> list[tuple[str, str, np.ndarray, np.ndarray]]:
    """(kind, name, inputs, true labels (N,)): tables as float features, texts as strings."""
    from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine

    sets = [
        ("table", name, *load(return_X_y=True))
        for name, load in (
            ("wine", load_wine),
            ("breast cancer", load_breast_cancer),
            ("iris", load_iris),
            ("digits, as a table", load_digits),
        )
    ]
    sets.append(("texts", "synthetic texts", *synthetic_texts(seed=seed, count=texts)))
    if trec is not None:
        sets.append(("texts", "TREC coarse", *trec_questions(trec, fine=False)))
    return sets


def models(kind: str) -> dict[str, object]:
    """The unfitted scikit-learn models whose out-of-fold probabilities are given, by name."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB, MultinomialNB
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    logistic = LogisticRegression(max_iter=2000)
    if kind == "texts":
        return {
            "logistic regression": make_pipeline(TfidfVectorizer(), logistic),
            "naive Bayes": make_pipeline(TfidfVectorizer(), MultinomialNB(alpha=0.01)),
        }
    return {
        "logistic regression": make_pipeline(StandardScaler(), logistic),
        "naive Bayes": GaussianNB(),
        "random forest": RandomForestClassifier(n_estimators=100, random_state=0),
        "perceptron, no decay": make_pipeline(
            StandardScaler(), MLPClassifier((100,), alpha=0.0, max_iter=2000, random_state=0)
        ),
    }


def published(probabilities: np.ndarray, *, temperature: float, decimals: int) -> np.ndarray:
    """``probabilities`` (N, Q) sharpened (softmax of log P / ``temperature``) and rounded as a published file."""
    logits = np.log(np.maximum(probabilities, np.finfo(np.float64).tiny)) / temperature
    sharp = np.exp(logits - logits.max(axis=1, keepdims=True))
    return np.round(sharp / sharp.sum(axis=1, keepdims=True), decimals)


def precision_at_errors(score: np.ndarray, wrong: np.ndarray) -> float:
    """P@k of ranking by ``score`` (N,), low first, k the number of ``wrong`` (N,) labels, a tie across the k-th place
    counted by its share of flips: the expected P@k over the tie's orders. Rounded probabilities tie many samples, and
    a tie broken by row or by digest would credit the order of the file, not the score."""
    k = int(wrong.sum())
    at_k = np.sort(score)[k - 1]
    above, tied = score < at_k, score == at_k
    return float((wrong[above].sum() + (k - above.sum()) * wrong[tied].mean()) / k)


def command_outcome(probabilities: np.ndarray, given: np.ndarray, *, score: str, folder: Path) -> pd.DataFrame:
    """``enkcvs find-issues --probabilities P.npy --labels labels.csv --score SCORE``: (N,) ``is_label_issue``,
    ``label_score`` and ``rank`` in row order."""
    np.save(folder / "probabilities.npy", probabilities)
    pd.DataFrame({"label": given}).to_csv(folder / "labels.csv", index=False)
    out = folder / "issues.csv"
    write_issues(
        Request(probabilities=folder / "probabilities.npy", labels=folder / "labels.csv", out=out, score=score)
    )
    return pd.read_csv(out)[["is_label_issue", "label_score", "rank"]]


def one_set(probabilities: np.ndarray, given: np.ndarray, true: np.ndarray) -> dict:
    """The command with each score and cleanlab's list and three rankings on one set of probabilities."""
    from cleanlab.filter import find_label_issues
    from cleanlab.rank import get_label_quality_scores

    probabilities = probabilities / probabilities.sum(axis=1, keepdims=True)  # rounded rows, as the command reads them
    wrong = given != true
    with tempfile.TemporaryDirectory() as folder, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the command's line on rows rescaled after rounding
        command = {}
        for score in COMMAND_SCORES:
            outcome = command_outcome(probabilities, given, score=score, folder=Path(folder))
            order = np.argsort(outcome["rank"].to_numpy())
            command[score] = scored(outcome["is_label_issue"].to_numpy(), order, given=given, true=true)
            command[score]["precision_at_errors"] = precision_at_errors(outcome["label_score"].to_numpy(), wrong)
    listed = find_label_issues(labels=given, pred_probs=probabilities, n_jobs=1)
    scores = {method: get_label_quality_scores(given, probabilities, method=method) for method in CLEANLAB_SCORES}
    return {
        "given_probability_zero": float(np.mean(probabilities[np.arange(len(given)), given] == 0)),
        "command": command,
        "cleanlab": {
            "find_label_issues": scored(listed, np.argsort(scores[CLEANLAB_SCORES[0]]), given=given, true=true),
            **{method: precision_at_errors(score, wrong) for method, score in scores.items()},
        },
    }


def main() -> None:
    from cleanlab.count import estimate_cv_predicted_probabilities

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=lambda text: [int(s) for s in text.split(",")], default=[1, 2, 3])
    parser.add_argument("--noise", type=lambda text: text.split(","), default=["sym0.12", "asym0.12"])
    parser.add_argument("--texts", type=int, default=1500, help="synthetic texts per seed")
    parser.add_argument("--trec", type=Path, help="a folder holding TREC's train_5500.label (none: no TREC)")
    parser.add_argument("--data", type=lambda text: text.split(","), help="the data sets run, by name (default: all)")
    parser.add_argument("--out", type=Path, required=True, help="the JSON written")
    arguments = parser.parse_args()
    started, runs = time.perf_counter(), []
    for seed in arguments.seeds:
        for kind, name, inputs, true in datasets(texts=arguments.texts, seed=seed, trec=arguments.trec):
            if arguments.data and name not in arguments.data:
                continue
            true = np.asarray(true, dtype=np.int64)
            for noise in (noise for noise in arguments.noise if true.max() > 1 or not noise.startswith("asym")):
                given = flipped(true, noise=noise, seed=seed)
                for model_name, model in models(kind).items():
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")  # convergence notes of the unregularised perceptron
                        oof = estimate_cv_predicted_probabilities(
                            inputs, given, clf=model, cv_n_folds=CLEANLAB_FOLDS, seed=seed
                        )
                    sets = {model_name: oof}
                    if model_name == "logistic regression":
                        for temperature, decimals in PUBLISHED:
                            sets[f"logistic regression, published (T = {temperature}, {decimals} decimals)"] = (
                                published(oof, temperature=temperature, decimals=decimals)
                            )
                    for source, probabilities in sets.items():
                        run = {"kind": kind, "data": name, "probabilities": source, "noise": noise, "seed": seed}
                        runs.append({**run, "samples": len(true), "errors": int((given != true).sum())})
                        runs[-1].update(one_set(probabilities, given, true))
                        print(json.dumps(run), flush=True)
    results = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "seconds": round(time.perf_counter() - started, 1),
        "settings": {
            "seeds": arguments.seeds,
            "noise": arguments.noise,
            "texts": arguments.texts,
            "trec_questions": TREC_QUESTIONS if arguments.trec else None,
            "probabilities": f"cleanlab.count.estimate_cv_predicted_probabilities, {CLEANLAB_FOLDS} folds",
            "published": [{"temperature": t, "decimals": d} for t, d in PUBLISHED],
            "cleanlab": "find_label_issues (defaults); get_label_quality_scores, each of its methods",
            "default_score": DEFAULT_SCORE,
            "floor": FLOOR,
        },
        "cpu": machine.cpu_model(),
        "cpu_flags": machine.cpu_flags(),
        "versions": package_versions(),
        "git": git_state(),
        "runs": runs,
    }
    arguments.out.parent.mkdir(parents=True, exist_ok=True)
    arguments.out.write_text(json.dumps(results, indent=2) + "\n")
    print(summary(results))


if __name__ == "__main__":
    main()
