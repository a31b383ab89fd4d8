"""How the result tables of two recorded runs differ, cell by cell (``python -m enkcvs.runs compare``), and by how
much their Tables 1-2 moved beside the spread over seeds (:func:`table_shifts`): what the view ``diff`` states
(:func:`difference`), kept as data where a run is retired (:mod:`enkcvs.recording.retire`)."""

import math
from pathlib import Path

import numpy as np
import pandas as pd

from enkcvs.io import PathLike

#: Tables of measurements of the run itself (job time and memory), which differ between any two runs: not results.
MEASURED_TABLES = ("resources.csv",)


def compare_runs(first: PathLike, second: PathLike) -> pd.DataFrame:
    """Every numeric column of every CSV result table two runs share (:data:`MEASURED_TABLES` left out): how many
    cells differ and by how much at most."""
    rows = []
    for path in sorted(Path(first).glob("*.csv")):
        other = Path(second) / path.name
        if not other.exists() or path.name in MEASURED_TABLES:
            continue
        a, b = pd.read_csv(path), pd.read_csv(other)
        if a.shape != b.shape:
            rows.append(
                {
                    "table": path.name,
                    "column": "(shape)",
                    "cells": a.size,
                    "differ": a.size,
                    "max_abs_difference": np.nan,
                }
            )
            continue
        for column in a.select_dtypes("number"):
            x, y = a[column].to_numpy(float), b[column].to_numpy(float)
            differ = ~((x == y) | (np.isnan(x) & np.isnan(y)))
            rows.append(
                {
                    "table": path.name,
                    "column": column,
                    "cells": len(x),
                    "differ": int(differ.sum()),
                    "max_abs_difference": float(np.nanmax(np.abs(x - y))) if differ.any() else 0.0,
                }
            )
    return pd.DataFrame(rows)


def table_shifts(first: PathLike, second: PathLike) -> dict[str, dict[str, float]]:
    """How far two runs' Tables 1-2 moved, where both have the table with the same rows: ``table2``, the means'
    largest and median shift beside the first run's std over seeds (largest and median); ``table1``, the largest
    shift of precision or recall and of |SS|."""
    first, second = Path(first), Path(second)
    shifts = {}
    if (first / "table2.csv").exists() and (second / "table2.csv").exists():
        a, b = pd.read_csv(first / "table2.csv"), pd.read_csv(second / "table2.csv")
        if len(a) == len(b):
            shift = (a["mean"] - b["mean"]).abs()
            shifts["table2"] = {
                "mean_shift_max": shift.max(),
                "mean_shift_median": shift.median(),
                "std_max": a["std"].max(),
                "std_median": a["std"].median(),
            }
    if (first / "table1.csv").exists() and (second / "table1.csv").exists():
        a, b = pd.read_csv(first / "table1.csv"), pd.read_csv(second / "table1.csv")
        if len(a) == len(b):
            shifts["table1"] = {
                "rate_shift_max": max((a[c] - b[c]).abs().max() for c in ("precision", "recall")),
                "ss_shift_max": (a["SS"] - b["SS"]).abs().max(),
            }
    return {
        table: {key: None if math.isnan(value) else float(value) for key, value in values.items()}
        for table, values in shifts.items()
    }


def difference(first: Path, second: Path) -> dict:
    """What the view ``diff`` states of two recorded runs, as data (JSON's): their names, every compared column
    (:func:`compare_runs`; None for the largest difference of a table whose shape changed) and how far Tables 1-2
    moved (:func:`table_shifts`)."""
    columns = compare_runs(first, second).astype({"max_abs_difference": object})
    columns["max_abs_difference"] = [None if pd.isna(value) else value for value in columns["max_abs_difference"]]
    return {
        "first": Path(first).name,
        "second": Path(second).name,
        "columns": columns.to_dict("records"),
        "shifts": table_shifts(first, second),
    }
