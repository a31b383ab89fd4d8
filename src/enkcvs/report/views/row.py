"""One Table 2 row gathered from several recorded runs of the same data and recipe (view ``row``: the block
``<run>/row:<run>+<run>...``; the cells gathered by :func:`enkcvs.report.views.gathered.gathered_row`): E-NKCVS at
the paper's K = 10, M = 5 stands in a column of its own beside its K = 4, M = 3 cell, never pooled with it.

E-NKCVS is set against each method by Welch's t-test over seeds (:func:`enkcvs.report.views.common.tested_verdict`);
no cell of a single seed is ordered.
"""

from pathlib import Path

import numpy as np
import pandas as pd

from enkcvs.report.comparison import method_rank
from enkcvs.report.paper import TABLE2_RUNS
from enkcvs.report.titles import METHOD_TITLES
from enkcvs.report.views.common import SETTING, SIGNIFICANCE, paper_verdict, several_seeds, tested_verdict
from enkcvs.report.views.gathered import gathered_row, selection_title


def _columns(cells: pd.DataFrame) -> list[str]:
    """Each cell's column title: the method's, with its selection where the method has cells of several."""
    several = cells.groupby("method")["selection"].nunique(dropna=True) > 1
    return [
        f"{METHOD_TITLES.get(method, method)} ({selection_title(selection)})"
        if several[method]
        else METHOD_TITLES.get(method, method)
        for method, selection in zip(cells["method"], cells["selection"])
    ]


def _verdict(cells: pd.DataFrame) -> str:
    """Per setting, where E-NKCVS stands among the paper's methods by Welch's t-test where every cell has several
    seeds; where one has a single seed, nothing is ordered and only the gaps are given."""
    phrases = []
    for (dataset, kind, rate), rows in cells.groupby(SETTING, sort=False):
        rows = rows[rows["published"].notna()]
        rivals = rows[rows["method"] != "enkcvs"].set_index("method")
        for _, ours in rows[rows["method"] == "enkcvs"].iterrows():
            setting = f"{dataset} {kind} {rate:g}" + (
                f" at {selection_title(ours['selection'])}" if ours["title"] != METHOD_TITLES["enkcvs"] else ""
            )
            if not several_seeds(pd.concat([rivals, ours.to_frame().T])):
                gaps = ", ".join(
                    f"{METHOD_TITLES.get(m, m)} {ours['mean'] - rivals.loc[m, 'mean']:+.1f}" for m in rivals.index
                )
                phrases.append(f"{setting} (a single seed in some cell: not ordered): E-NKCVS minus {gaps}")
            else:
                phrases.append(f"{setting}: E-NKCVS is {tested_verdict(ours, rivals)}")
    return "; ".join(phrases)


def _against_paper(shown: pd.DataFrame) -> str:
    """Each cell against the paper's own (:func:`enkcvs.report.views.common.paper_verdict`), setting by setting."""
    return "; ".join(
        f"{setting}: "
        + ", ".join(
            f"{title} {paper_verdict(cell)}" for title, cell in zip(rows["title"], (row for _, row in rows.iterrows()))
        )
        for setting, rows in shown.groupby("setting", sort=False)
    )


def row_view(runs: list[tuple[Path, set[str] | None]]) -> str:
    """The gathered row beside the paper's (the view ``row``): a line per setting, a column per method of the
    paper, each cell mean ± std over seeds with the paper's mean in parentheses, the best mean in bold; then which
    E-NKCVS stands against each by Welch's t-test (:func:`_verdict`), and which runs gave which cells."""
    cells = gathered_row(runs)
    cells["title"] = _columns(cells)
    shown = cells[cells["published"].notna()].copy()
    shown["setting"] = [f"{d} {k} {r:g}" for d, k, r in zip(shown["dataset"], shown["noise_kind"], shown["noise_rate"])]
    best = shown.groupby("setting")["mean"].transform("max")
    shown["cell"] = [
        ("**{}**" if mean == top else "{}").format(f"{mean:.1f}" + ("" if np.isnan(std) else f" ± {std:.1f}"))
        + f" ({paper:.1f})"
        for mean, std, paper, top in zip(shown["mean"], shown["std"], shown["published"], best)
    ]
    rank = method_rank(shown)
    order = {
        title: (rank[method], selection or ())
        for title, method, selection in zip(shown["title"], shown["method"], shown["selection"])
    }
    frame = shown.pivot(index="setting", columns="title", values="cell")
    frame = frame.loc[shown["setting"].unique(), sorted(frame.columns, key=order.get)].fillna("not recorded")
    frame.columns.name = None
    sources = "; ".join(  # each run once per column, though a pooled cell names several
        f"{title}: " + ", ".join(dict.fromkeys(run for cell in group["runs_from"] for run in cell.split(", ")))
        for title, group in shown.groupby("title", sort=False)
    )
    seeds = sorted(set(shown["runs"]))
    return (
        f"Test accuracy (%) on the clean test set, mean ± std over {'/'.join(map(str, seeds))} seed(s) "
        "(no ± for one), beside the paper's mean of 5 runs in parentheses; bold: the best mean of the row "
        "here. E-NKCVS is ordered against a method by Welch's t-test over seeds (two-sided, ordered where p < "
        f"{SIGNIFICANCE:g}): "
        f"{_verdict(cells)}.\n\n"
        + frame.reset_index().to_markdown(index=False)
        + f"\n\nEach cell against the paper's own by Welch's t-test from both means and stds (the paper's over its "
        f"{TABLE2_RUNS} runs; two-sided, p < {SIGNIFICANCE:g} sets a cell above or below it): "
        f"{_against_paper(shown)}.\n\nCells from the runs: {sources}.\n"
    )
