"""How the tables of two recorded runs differ: cell by cell, beside the spread over seeds."""

from pathlib import Path

import numpy as np
import pandas as pd

from enkcvs.recording.compare import compare_runs


def run_difference(first: Path, second: Path) -> str:
    """How the tables of two recorded runs differ (view ``<second>/diff:<first>``): a summary line, the differences
    in Tables 1-2 beside the spread over seeds, then per table the differing cells and the largest difference."""
    frame = compare_runs(first, second)
    cells, differ = int(frame["cells"].sum()), int(frame["differ"].sum())
    summary = (f"`{second.name}` against `{first.name}`: {differ} of {cells} numeric table cells differ "
               f"({len(frame['table'].unique())} tables).\n")
    changed = frame[frame["differ"] > 0]
    if changed.empty:
        return summary
    # a table whose shape changed has no largest difference (NaN): it still gets its row
    order = changed["max_abs_difference"].fillna(-np.inf)
    largest = changed.loc[order.groupby(changed["table"]).idxmax()].set_index("table")
    per_table = pd.DataFrame({
        "cells": frame.groupby("table")["cells"].sum(),
        "differ": frame.groupby("table")["differ"].sum(),
        "largest difference": largest["max_abs_difference"],
        "in column": largest["column"],
    }).dropna(subset=["in column"]).reset_index()  # tables without a differing cell have no column
    return summary + _tolerance(first, second) + "\n" + per_table.to_markdown(index=False, floatfmt=".4g") + "\n"


def _tolerance(first: Path, second: Path) -> str:
    """The differences a reader of Tables 1-2 meets, beside the spread over seeds of the same Table 2 cells."""
    lines = []
    if (first / "table2.csv").exists() and (second / "table2.csv").exists():
        a, b = pd.read_csv(first / "table2.csv"), pd.read_csv(second / "table2.csv")
        if len(a) == len(b):
            shift = (a["mean"] - b["mean"]).abs()
            lines.append(f"Table 2 test accuracy: means differ by up to {shift.max():.2f} points (median "
                         f"{shift.median():.2f}); the std over seeds of the same cells is up to "
                         f"{a['std'].max():.2f} (median {a['std'].median():.2f}).")
    if (first / "table1.csv").exists() and (second / "table1.csv").exists():
        a, b = pd.read_csv(first / "table1.csv"), pd.read_csv(second / "table1.csv")
        if len(a) == len(b):
            rates = max((a[c] - b[c]).abs().max() for c in ("precision", "recall"))
            lines.append(f"Table 1 selection: precision and recall differ by up to {rates:.2f} points, "
                         f"|SS| by up to {(a['SS'] - b['SS']).abs().max():g} samples (mean over seeds).")
    return "".join(f"- {line}\n" for line in lines)
