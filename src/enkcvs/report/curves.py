"""Clean test curves of final models (every final model records one; ``baselines.<method>.test_curve`` asks for a
method's to be drawn): the test accuracy after every epoch, only recorded, beside the last epoch's, the protocol's
reading (docs/paper-notes.md: no clean validation data picks an epoch). They show whether a paper's cell could be an
earlier epoch of the same training."""

from collections.abc import Mapping

import numpy as np
import pandas as pd

from enkcvs.report.paper_table2 import compare_table2
from enkcvs.report.readings import best_epoch, last_epoch

SETTING = ["dataset", "noise_kind", "noise_rate"]


def epoch_curves(records: pd.DataFrame) -> pd.DataFrame:
    """The curves of final-model records (:func:`enkcvs.report.tables.collect_records` rows with
    ``test_accuracy_by_epoch``), long: ``dataset``, ``noise_kind``, ``noise_rate``, ``seed``, ``method``, ``epoch``
    (1-based), ``test_accuracy`` (%), ``source``."""
    rows = [
        {
            **{key: record[key] for key in [*SETTING, "seed", "method", "source"]},
            "epoch": epoch,
            "test_accuracy": 100.0 * accuracy,
        }
        for record in records.to_dict("records")
        for epoch, accuracy in enumerate(record["test_accuracy_by_epoch"], start=1)
    ]
    return pd.DataFrame(rows, columns=[*SETTING, "seed", "method", "epoch", "test_accuracy", "source"])


def curve_summary(curves: pd.DataFrame, *, paper_names: Mapping[str, str | None]) -> pd.DataFrame:
    """Per setting, seed and method of :func:`epoch_curves`: ``epochs``, the ``peak`` test accuracy (%) and the
    first epoch reaching it (``peak_epoch``), the ``last`` epoch's (what Table 2 reports), and the paper's Table 2
    cell (``published``; NaN where it has none)."""
    keys = [*SETTING, "seed", "method"]
    ordered = curves.sort_values([*keys, "epoch"])
    rows = []
    for key, part in ordered.groupby(keys, sort=False):
        accuracy = part["test_accuracy"].to_numpy()
        peak_epoch, peak = best_epoch(accuracy)
        rows.append(
            {
                **dict(zip(keys, key)),
                "epochs": len(accuracy),
                "peak": peak,
                "peak_epoch": int(part["epoch"].iloc[peak_epoch - 1]),
                "last": last_epoch(accuracy),
            }
        )
    summary = pd.DataFrame(rows, columns=[*keys, "epochs", "peak", "peak_epoch", "last"])
    methods = summary[[*SETTING, "method"]].drop_duplicates()
    cells = compare_table2(methods.assign(mean=np.nan, std=np.nan, runs=1, sources=""), paper_names=paper_names)
    return summary.merge(cells[[*SETTING, "method", "published"]], how="left", on=[*SETTING, "method"])
