"""``enkcvs find-issues --data`` and ``enkcvs.find_issues`` beside cleanlab on data with labels flipped on purpose,
from the records that ``benchmarks/find_issues_vs_cleanlab.py`` writes: each arm's scores per data set (means over the
seeds) and each E-NKCVS arm's lead, at its K and M, with its interval and ordered by the paired t-test over the
(data, seed) pairs, the table's leads one family (:func:`enkcvs.report.statistics.ordering_verdicts`)."""

import numpy as np
import pandas as pd

from enkcvs.labelissues.oof import DEFAULT_FOLDS, DEFAULT_REPETITIONS
from enkcvs.report.statistics import CONFIDENCE, ordering_verdicts, paired_difference

#: What is compared: each run's field for E-NKCVS and cleanlab, and its name in the tables.
MEASURES = {
    "f1": "review list F1 against cleanlab's flags' F1",
    "precision_at_errors": "ranking's P@k against cleanlab's",
}
#: The arms of a run, each by its key and its name in the tables; the last is what the others are compared with.
ARMS = {
    "enkcvs": "E-NKCVS",
    "enkcvs_lr": "E-NKCVS + LR",
    "cleanlab": "cleanlab + LR",
}
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
    """One row per (data, seed) of a record: kind, data, seed, E-NKCVS's K and M, and each measure and list length
    of each arm."""
    K, M = selection(record)
    return pd.DataFrame(
        [
            {
                "kind": run["kind"],
                "data": run["data"],
                "seed": run["seed"],
                "K": K,
                "M": M,
                **{
                    f"{measure} {name}": run[arm][measure]
                    for measure in (*MEASURES, LENGTH)
                    for arm, name in ARMS.items()
                },
            }
            for run in record["runs"]
        ]
    )


def means(frame: pd.DataFrame) -> pd.DataFrame:
    """Each data set's measures of every arm, means over its seeds."""
    return frame.drop(columns=["seed", "K", "M"]).groupby(["kind", "data"], sort=False).mean().reset_index()


def verdicts(frame: pd.DataFrame) -> pd.DataFrame:
    """Per kind of data and over all (``all``), per E-NKCVS arm (with its K and M) and measure: its lead over
    cleanlab (mean of the paired differences), the lead's interval, and the side and Holm-adjusted p-value of the
    paired t-test, the table's rows one family."""
    *ours, theirs = ARMS.values()
    rows, differences = [], []
    for kind, pairs in [*frame.groupby("kind", sort=False), ("all", frame)]:
        for arm in ours:
            for measure, name in MEASURES.items():
                lead = (pairs[f"{measure} {arm}"] - pairs[f"{measure} {theirs}"]).to_numpy()
                std = float(np.std(lead, ddof=1)) if len(lead) > 1 else float("nan")
                differences.append(paired_difference(mean=float(lead.mean()), std=std, seeds=len(lead)))
                K, M = (", ".join(map(str, pairs[column].unique())) for column in ("K", "M"))
                rows.append({"data": kind, "arm": arm, "K": K, "M": M, "measure": name, "pairs": len(lead)})
    interval = f"{100 * CONFIDENCE:g} % interval"
    for row, verdict in zip(rows, ordering_verdicts(differences=differences)):
        p = "n/a" if verdict.p is None else f"{verdict.p:.2g}"
        row["lead"] = verdict.gap
        row[interval] = "n/a" if verdict.low is None else f"{verdict.low:+.3f} to {verdict.high:+.3f}"
        row["is"] = f"{AGAINST[verdict.side]} {theirs} (p = {p})"
    return pd.DataFrame(rows)
