"""``enkcvs find-issues --data`` beside cleanlab on data with labels flipped on purpose, from the records that
``benchmarks/find_issues_vs_cleanlab.py`` writes: both methods' scores per data set (means over the seeds) and
E-NKCVS's lead ordered by the paired t-test over the (data, seed) pairs (:func:`enkcvs.report.statistics.paired_verdict`)."""

import numpy as np
import pandas as pd

from enkcvs.report.statistics import paired_verdict

#: What is compared: each run's field for E-NKCVS and cleanlab, and its name in the tables.
MEASURES = {
    "f1": "review list F1 against cleanlab's flags' F1",
    "precision_at_errors": "ranking's P@k against cleanlab's",
}
#: A verdict's side as the tables phrase it before "cleanlab".
AGAINST = {
    "above": "above",
    "below": "below",
    "not distinguishable": "not distinguishable from",
    "untested": "untested against",
}


def runs_frame(record: dict) -> pd.DataFrame:
    """One row per (data, seed) of a record: kind, data, seed and each measure of both methods."""
    return pd.DataFrame(
        [
            {
                "kind": run["kind"],
                "data": run["data"],
                "seed": run["seed"],
                **{f"{measure} {side}": run[side][measure] for measure in MEASURES for side in ("enkcvs", "cleanlab")},
            }
            for run in record["runs"]
        ]
    )


def means(frame: pd.DataFrame) -> pd.DataFrame:
    """Each data set's measures of both methods, means over its seeds."""
    return frame.drop(columns="seed").groupby(["kind", "data"], sort=False).mean().reset_index()


def verdicts(frame: pd.DataFrame) -> pd.DataFrame:
    """Per kind of data and over all (``all``), per measure: E-NKCVS's lead (mean of the paired differences) and the
    paired t-test's side and p-value."""
    rows = []
    for kind, pairs in [*frame.groupby("kind", sort=False), ("all", frame)]:
        for measure, name in MEASURES.items():
            lead = (pairs[f"{measure} enkcvs"] - pairs[f"{measure} cleanlab"]).to_numpy()
            std = float(np.std(lead, ddof=1)) if len(lead) > 1 else float("nan")
            verdict = paired_verdict(mean=float(lead.mean()), std=std, seeds=len(lead))
            p = "n/a" if verdict.p is None else f"{verdict.p:.2g}"
            rows.append(
                {
                    "data": kind,
                    "measure": name,
                    "pairs": len(lead),
                    "lead": verdict.gap,
                    "E-NKCVS is": f"{AGAINST[verdict.side]} cleanlab (p = {p})",
                }
            )
    return pd.DataFrame(rows)
