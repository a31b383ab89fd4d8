"""One Table 2 row gathered from several recorded runs of the same data and recipe (view ``row``: the block
``<run>/row:<run>+<run>...``): each run adds the settings, seeds or methods it trained, a later run's cell replacing
an earlier one's where they share a seed (a baseline retrained another way), and seeds pooled into mean ± std.

E-NKCVS is set against each method by Welch's t-test over seeds (:func:`enkcvs.report.views.common.tested_verdict`);
no cell of a single seed is ordered.
"""

from pathlib import Path

import numpy as np
import pandas as pd

from enkcvs.report.comparison import method_rank
from enkcvs.report.titles import METHOD_TITLES
from enkcvs.report.views.common import SETTING, SIGNIFICANCE, several_seeds, tested_verdict
from enkcvs.recording.provenance import recorded_config


def _seeds(run: Path) -> list[int]:
    """The seeds a recorded run trained, from the config its provenance keeps."""
    return list(recorded_config(run)["seeds"])


def pooled(cells: pd.DataFrame) -> pd.Series:
    """The mean, std (ddof=1) and count over every seed of ``cells`` (rows of Table 2: ``mean``, ``std``, ``runs``
    over disjoint seeds), exactly as if computed from the seeds' values: the within- and between-part sums of
    squares."""
    n, mean = cells["runs"].to_numpy(float), cells["mean"].to_numpy(float)
    total = n.sum()
    grand = float((n * mean).sum() / total)
    squares = (np.nan_to_num(cells["std"].to_numpy(float)) ** 2 * (n - 1)).sum() + (n * (mean - grand) ** 2).sum()
    return pd.Series({"mean": grand, "std": float(np.sqrt(squares / (total - 1))) if total > 1 else float("nan"),
                      "runs": int(total), "published": cells["published"].iloc[0],
                      "runs_from": ", ".join(dict.fromkeys(cells["run"]))})


def gathered_row(runs: list[tuple[Path, set[str] | None]]) -> pd.DataFrame:
    """The Table 2 cells of ``runs`` (in order; each with the methods taken from it, None: all) pooled per setting
    and method: a later run's cell replaces an earlier one's where their seeds meet; the others' seeds pool
    (:func:`pooled`). Columns: the setting, ``method``, ``mean``, ``std``, ``runs`` (seeds), ``published`` (the
    paper's cell) and ``runs_from`` (the runs it came from)."""
    parts: dict[tuple, list[tuple[set[int], pd.Series]]] = {}
    for run, methods in runs:
        seeds = set(_seeds(run))
        table = pd.read_csv(run / "table2.csv")
        taken = table["runs"] > 0 if methods is None else (table["runs"] > 0) & table["method"].isin(methods)
        for row in table[taken].itertuples(index=False):
            key = (row.dataset, row.noise_kind, row.noise_rate, row.method)
            kept = [(s, cell) for s, cell in parts.get(key, []) if not s & seeds]
            parts[key] = [*kept, (seeds, pd.Series({**row._asdict(), "run": run.name}))]
    rows = [{**dict(zip([*SETTING, "method"], key)), **pooled(pd.DataFrame([cell for _, cell in cells]))}
            for key, cells in parts.items()]
    return pd.DataFrame(rows)


def _verdict(cells: pd.DataFrame) -> str:
    """Per setting, where E-NKCVS stands among the paper's methods by Welch's t-test where every cell has several
    seeds; where one has a single seed, nothing is ordered and only the gaps are given."""
    phrases = []
    for (dataset, kind, rate), rows in cells.groupby(SETTING, sort=False):
        rows = rows[rows["published"].notna()].set_index("method")
        if "enkcvs" not in rows.index:
            continue
        ours, rivals = rows.loc["enkcvs"], rows.drop(index="enkcvs")
        setting = f"{dataset} {kind} {rate:g}"
        if not several_seeds(rows):
            gaps = ", ".join(f"{METHOD_TITLES.get(m, m)} {ours['mean'] - rivals.loc[m, 'mean']:+.1f}"
                             for m in rivals.index)
            phrases.append(f"{setting} (a single seed in some cell: not ordered): E-NKCVS minus {gaps}")
            continue
        phrases.append(f"{setting}: E-NKCVS is {tested_verdict(ours, rivals)}")
    return "; ".join(phrases)


def row_view(runs: list[tuple[Path, set[str] | None]]) -> str:
    """The gathered row beside the paper's (the view ``row``): a line per setting, a column per method of the
    paper, each cell mean ± std over seeds with the paper's mean in parentheses, the best mean in bold; then which
    E-NKCVS stands against each by Welch's t-test (:func:`_verdict`), and which runs gave which cells."""
    cells = gathered_row(runs)
    shown = cells[cells["published"].notna()].copy()
    shown["setting"] = [f"{d} {k} {r:g}" for d, k, r in zip(shown["dataset"], shown["noise_kind"],
                                                            shown["noise_rate"])]
    best = shown.groupby("setting")["mean"].transform("max")
    shown["cell"] = [("**{}**" if mean == top else "{}").format(
        f"{mean:.1f}" + ("" if np.isnan(std) else f" ± {std:.1f}")) + f" ({paper:.1f})"
        for mean, std, paper, top in zip(shown["mean"], shown["std"], shown["published"], best)]
    rank = method_rank(shown)
    frame = shown.pivot(index="setting", columns="method", values="cell")
    frame = frame.loc[shown["setting"].unique(), sorted(frame.columns, key=rank.get)].rename(columns=METHOD_TITLES)
    frame = frame.fillna("not recorded")
    sources = "; ".join(  # each run once per method, though a pooled cell names several
        f"{METHOD_TITLES.get(method, method)}: "
        + ", ".join(dict.fromkeys(run for cell in group["runs_from"] for run in cell.split(", ")))
        for method, group in shown.groupby("method", sort=False))
    seeds = sorted(set(shown["runs"]))
    return (f"Test accuracy (%) on the clean test set, mean ± std over {'/'.join(map(str, seeds))} seed(s) "
            "(no ± for one), beside the paper's mean of 5 runs in parentheses; bold: the best mean of the row "
            "here. E-NKCVS is ordered against a method by Welch's t-test over seeds (two-sided, ordered where p < "
            f"{SIGNIFICANCE:g}): "
            f"{_verdict(cells)}.\n\n" + frame.reset_index().to_markdown(index=False)
            + f"\n\nCells from the runs: {sources}.\n")
