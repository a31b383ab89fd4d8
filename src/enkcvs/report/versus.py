"""``enkcvs find-issues --data`` and E-NKCVS on a logistic regression's probabilities beside cleanlab on data with
labels flipped on purpose, from the records that ``benchmarks/find_issues_vs_cleanlab.py`` writes: each arm's scores
per data set and noise setting (means over the seeds) and each E-NKCVS arm's lead, at its K and M, with its interval and ordered by the
paired t-test over the (data, noise, seed) triples, the table's leads one family
(:func:`enkcvs.report.statistics.ordering_verdicts`); and what each ingredient adds, one arm to the next."""

import numpy as np
import pandas as pd

from enkcvs.labelissues.oof import DEFAULT_FOLDS, DEFAULT_REPETITIONS
from enkcvs.report.statistics import CONFIDENCE, ordering_verdicts, paired_difference

#: What is compared: each run's field for E-NKCVS and cleanlab, and its name in the tables.
MEASURES = {
    "f1": "review list F1 against cleanlab's flags' F1",
    "precision_at_errors": "ranking's P@k against cleanlab's",
}
#: The arms of a run, each by its key and its name in the tables, in the order of :data:`INGREDIENTS`' steps.
ARMS = {
    "enkcvs": "E-NKCVS",
    "enkcvs_lr": "E-NKCVS + LR",
    "cleanlab_calibrated": "cleanlab + LR, M x K, calibrated",
    "cleanlab_m": "cleanlab + LR, M x K",
    "cleanlab": "cleanlab + LR",
    "cleanlab_tfidf": "cleanlab + TF-IDF LR",
}
#: What the E-NKCVS arms are held against: per data set and measure, the better of cleanlab's two pipelines over the
#: data set's runs (texts: LR on the embeddings or TF-IDF + LR on the texts; tables and images: LR alone).
BEST = "cleanlab, the better pipeline"
#: The E-NKCVS arms each set against cleanlab's (:func:`verdicts`).
LEADS = ("enkcvs", "enkcvs_lr")
#: What each step from cleanlab to the command changes: (arm, the arm before it, the ingredient).
INGREDIENTS = (
    ("cleanlab_m", "cleanlab", "M cross-validations of K folds averaged (cleanlab: one of its own)"),
    ("cleanlab_calibrated", "cleanlab_m", "those probabilities calibrated"),
    ("enkcvs_lr", "cleanlab_calibrated", "E-NKCVS's selection and ranking in place of cleanlab's"),
    # the ranking: E-NKCVS + LR ranks the uncalibrated mean again (by the default score), undoing some of the
    # calibrated step's P@k
    ("enkcvs", "enkcvs_lr", "the command's own models and features in place of LR's"),
)
#: What the means table shows of each arm beside the measures: the list's length over the number of flips.
LENGTH = "length_over_errors"
#: A verdict's side as the tables phrase it before "cleanlab".
AGAINST = {
    "above": "above",
    "below": "below",
    "unordered": "unordered against",
    "untested": "untested against",
}


def selection(record: dict) -> tuple[int, int]:
    """The K and M both E-NKCVS arms of a record ran with: its settings', or, where they name none, the defaults of
    :mod:`enkcvs.labelissues.oof` (the script passes neither to the command nor to ``enkcvs.find_issues``)."""
    settings = record["settings"]
    return int(settings.get("K", DEFAULT_FOLDS)), int(settings.get("M", DEFAULT_REPETITIONS))


def runs_frame(record: dict) -> pd.DataFrame:
    """One row per (data, noise, seed) of a record: kind, data, noise, seed, E-NKCVS's K and M, and each measure and
    list length of each arm (NaN for an arm an older record lacks)."""
    K, M = selection(record)
    return pd.DataFrame(
        [
            {
                "kind": run["kind"],
                "data": run["data"],
                "noise": run.get("noise", record["settings"]["noise"]),
                "seed": run["seed"],
                "K": K,
                "M": M,
                **{
                    f"{measure} {name}": run[arm][measure] if arm in run else np.nan
                    for measure in (*MEASURES, LENGTH)
                    for arm, name in ARMS.items()
                },
            }
            for run in record["runs"]
        ]
    )


def with_best(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with each measure of :data:`BEST`: on each row, the cleanlab arm whose mean over the runs of the
    row's data set is higher (chosen per data set, not per run, so no run's noise picks it)."""
    frame = frame.copy()
    for measure in MEASURES:
        lr, tfidf = (frame.get(f"{measure} {ARMS[arm]}") for arm in ("cleanlab", "cleanlab_tfidf"))
        if tfidf is not None:
            data = frame["data"]
            lr = tfidf.where(tfidf.groupby(data).transform("mean") > lr.groupby(data).transform("mean"), lr)
        frame[f"{measure} {BEST}"] = lr
    return frame


def means(frame: pd.DataFrame) -> pd.DataFrame:
    """Each data set's measures of every arm at each noise setting, means over its seeds."""
    means = frame.drop(columns=["seed", "K", "M"]).groupby(["kind", "data", "noise"], sort=False).mean()
    return means.dropna(axis="columns", how="all").reset_index()


def verdicts(frame: pd.DataFrame) -> pd.DataFrame:
    """Per kind of data and over all (``all``), per E-NKCVS arm of :data:`LEADS` (with its K and M) and measure: its
    lead over cleanlab's better pipeline (:func:`with_best`; mean of the paired differences), the lead's interval,
    and the side and Holm-adjusted p-value of the paired t-test, the table's rows one family."""
    theirs, frame = BEST, with_best(frame)
    rows, differences = [], []
    for kind, pairs in [*frame.groupby("kind", sort=False), ("all", frame)]:
        for arm in (ARMS[key] for key in LEADS):
            for measure, name in MEASURES.items():
                differences.append(_paired(pairs[f"{measure} {arm}"] - pairs[f"{measure} {theirs}"]))
                K, M = (", ".join(map(str, pairs[column].unique())) for column in ("K", "M"))
                rows.append({"data": kind, "arm": arm, "K": K, "M": M, "measure": name, "pairs": len(pairs)})
    return _read(rows, differences, lambda side, p: f"{AGAINST[side]} {theirs} (p = {p})")


def ingredients(frame: pd.DataFrame) -> pd.DataFrame:
    """Over all (data, noise, seed) triples, per step of :data:`INGREDIENTS` and measure: what the step's ingredient
    adds (the arm minus the arm before it, mean of the paired differences), its interval, and the side and
    Holm-adjusted p-value of the paired t-test, the table's rows one family."""
    rows, differences = [], []
    for arm, before, ingredient in INGREDIENTS:
        for measure in MEASURES:
            differences.append(_paired(frame[f"{measure} {ARMS[arm]}"] - frame[f"{measure} {ARMS[before]}"]))
            rows.append({"ingredient": ingredient, "from": ARMS[before], "measure": measure, "triples": len(frame)})
    return _read(rows, differences, lambda side, p: f"{side} (p = {p})")


def _paired(lead: pd.Series):
    """The paired difference of one arm over another: mean, interval and p over the pairs."""
    lead = lead.to_numpy(dtype=float)
    std = float(np.std(lead, ddof=1)) if len(lead) > 1 else float("nan")
    return paired_difference(mean=float(lead.mean()), std=std, seeds=len(lead))


def _read(rows: list[dict], differences: list, verdict_text) -> pd.DataFrame:
    """``rows`` with each difference's lead, interval and verdict, the rows one family."""
    interval = f"{100 * CONFIDENCE:g} % interval"
    for row, verdict in zip(rows, ordering_verdicts(differences=differences)):
        p = "n/a" if verdict.p is None else f"{verdict.p:.2g}"
        row["lead"] = verdict.gap
        row[interval] = "n/a" if verdict.low is None else f"{verdict.low:+.3f} to {verdict.high:+.3f}"
        row["is"] = verdict_text(verdict.side, p)
    return pd.DataFrame(rows)
