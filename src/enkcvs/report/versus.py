"""``enkcvs find-issues --data`` and ``enkcvs.find_issues`` beside cleanlab on data with labels flipped on purpose,
from the records that ``benchmarks/find_issues_vs_cleanlab.py`` writes: each arm's scores per data set (means over the
seeds) and each E-NKCVS arm's lead ordered by the paired t-test over the (data, seed) pairs
(:func:`enkcvs.report.statistics.paired_verdict`)."""

import numpy as np
import pandas as pd

from enkcvs.report.statistics import paired_verdict

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
    "not distinguishable": "not distinguishable from",
    "untested": "untested against",
}


def runs_frame(record: dict) -> pd.DataFrame:
    """One row per (data, seed) of a record: kind, data, seed, and each measure and list length of each arm."""
    return pd.DataFrame(
        [
            {
                "kind": run["kind"],
                "data": run["data"],
                "seed": run["seed"],
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
    return frame.drop(columns="seed").groupby(["kind", "data"], sort=False).mean().reset_index()


def verdicts(frame: pd.DataFrame) -> pd.DataFrame:
    """Per kind of data and over all (``all``), per E-NKCVS arm and measure: its lead over cleanlab (mean of the
    paired differences) and the paired t-test's side and p-value."""
    *ours, theirs = ARMS.values()
    rows = []
    for kind, pairs in [*frame.groupby("kind", sort=False), ("all", frame)]:
        for arm in ours:
            for measure, name in MEASURES.items():
                lead = (pairs[f"{measure} {arm}"] - pairs[f"{measure} {theirs}"]).to_numpy()
                std = float(np.std(lead, ddof=1)) if len(lead) > 1 else float("nan")
                verdict = paired_verdict(mean=float(lead.mean()), std=std, seeds=len(lead))
                p = "n/a" if verdict.p is None else f"{verdict.p:.2g}"
                rows.append(
                    {
                        "data": kind,
                        "arm": arm,
                        "measure": name,
                        "pairs": len(lead),
                        "lead": verdict.gap,
                        "is": f"{AGAINST[verdict.side]} {theirs} (p = {p})",
                    }
                )
    return pd.DataFrame(rows)
