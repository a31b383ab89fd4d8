"""How the tables of two recorded runs differ: cell by cell, beside the spread over seeds; computed from both runs'
folders (:func:`enkcvs.recording.compare.difference`), or read back from a history where one of them is retired
(:mod:`enkcvs.report.views.retired`)."""

from pathlib import Path

import numpy as np
import pandas as pd

from enkcvs.recording.compare import difference


def run_difference(first: Path, second: Path) -> str:
    """How the tables of two recorded runs differ (view ``<second>/diff:<first>``): :func:`difference_text` of
    :func:`enkcvs.recording.compare.difference`."""
    return difference_text(difference(first, second))


def difference_text(compared: dict) -> str:
    """A summary line, the differences in Tables 1-2 beside the spread over seeds, then per table the differing cells
    and the largest difference, from :func:`enkcvs.recording.compare.difference`'s data."""
    frame = pd.DataFrame(compared["columns"]).astype({"max_abs_difference": float})
    cells, differ = int(frame["cells"].sum()), int(frame["differ"].sum())
    summary = (
        f"`{compared['second']}` against `{compared['first']}`: {differ} of {cells} numeric table cells "
        f"differ ({len(frame['table'].unique())} tables).\n"
    )
    changed = frame[frame["differ"] > 0]
    if changed.empty:
        return summary
    # a table whose shape changed has no largest difference (NaN): it still gets its row
    order = changed["max_abs_difference"].fillna(-np.inf)
    largest = changed.loc[order.groupby(changed["table"]).idxmax()].set_index("table")
    per_table = (
        pd.DataFrame(
            {
                "cells": frame.groupby("table")["cells"].sum(),
                "differ": frame.groupby("table")["differ"].sum(),
                "largest difference": largest["max_abs_difference"],
                "in column": largest["column"],
            }
        )
        .dropna(subset=["in column"])
        .reset_index()
    )  # tables without a differing cell have no column
    return summary + _tolerance(compared["shifts"]) + "\n" + per_table.to_markdown(index=False, floatfmt=".4g") + "\n"


def _tolerance(shifts: dict[str, dict[str, float | None]]) -> str:
    """The differences a reader of Tables 1-2 meets, beside the spread over seeds of the same Table 2 cells."""
    lines = []
    if "table2" in shifts:
        table2 = {key: np.nan if value is None else value for key, value in shifts["table2"].items()}
        lines.append(
            f"Table 2 test accuracy: means differ by up to {table2['mean_shift_max']:.2f} points (median "
            f"{table2['mean_shift_median']:.2f}); the std over seeds of the same cells is up to "
            f"{table2['std_max']:.2f} (median {table2['std_median']:.2f})."
        )
    if "table1" in shifts:
        table1 = {key: np.nan if value is None else value for key, value in shifts["table1"].items()}
        lines.append(
            f"Table 1 selection: precision and recall differ by up to {table1['rate_shift_max']:.2f} points, "
            f"|SS| by up to {table1['ss_shift_max']:g} samples (mean over seeds)."
        )
    return "".join(f"- {line}\n" for line in lines)
