"""How the result tables of two recorded runs differ, cell by cell (``python -m enkcvs.runs compare``)."""

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
