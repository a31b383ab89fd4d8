"""Where E-NKCVS stands in a recorded run's Table 2, per setting: against every other method by Welch's t-test where
each cell has several seeds, its gaps otherwise, never an order from a single seed (view ``standing``), and the same
in one line per run over several runs (the block ``<run>/standing:<run>+<run>...``)."""

from pathlib import Path

import pandas as pd

from enkcvs.report.comparison import method_rank
from enkcvs.report.titles import METHOD_TITLES
from enkcvs.report.views.common import SETTING, SIGNIFICANCE, points, several_seeds, tested_verdict


def _title(method: str, *, short: bool = False) -> str:
    """How the view names a method: its report title, in a run's one-line summary without the parenthesis that
    says the paper has no such row (``CL prune + retrain``)."""
    title = METHOD_TITLES.get(method, method)
    return title.split(" (")[0] if short else title


def _results(run: Path) -> pd.DataFrame:
    """The run's Table 2 cells, means rounded to 1e-6 so that two means of the same test images tie exactly."""
    table = pd.read_csv(run / "table2.csv")
    table = table[table["runs"] > 0].copy()
    table["mean"] = table["mean"].round(6)
    return table


def _compared(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows a setting's order is read over: the paper's methods where the setting has the paper's cells, every
    method otherwise (as :func:`enkcvs.report.views.table2.table2_ordering` reads it)."""
    published = rows["published"] if "published" in rows else pd.Series(float("nan"), index=rows.index)
    return rows[published.notna() | (rows["method"] == "enkcvs")] if published.notna().any() else rows


def _gaps(rows: pd.DataFrame, rank: dict, *, short: bool = False) -> str:
    """E-NKCVS's mean minus every other method's in one setting, the methods from the highest mean: values, not an
    ordering (a single seed in some cell)."""
    means = rows.set_index("method")["mean"]
    ours = means["enkcvs"]
    others = sorted(means.drop(index="enkcvs").index, key=lambda method: (-means[method], rank[method]))
    return ", ".join(
        f"{_title(m, short=short)} {'+' if ours >= means[m] else '-'}{points(ours - means[m])}" for m in others
    )


def _said(rows: pd.DataFrame, rank: dict, *, short: bool = False) -> str:
    """Where E-NKCVS stands in one setting: against each other method by Welch's t-test where every cell has
    several seeds, else only its gaps, not ordered."""
    if not several_seeds(rows):
        return f"a single seed in some cell, not ordered; E-NKCVS minus {_gaps(rows, rank, short=short)}"
    indexed = rows.set_index("method")
    return f"E-NKCVS is {tested_verdict(indexed.loc['enkcvs'], indexed.drop(index='enkcvs'))}"


def _settings(table: pd.DataFrame):
    for (dataset, kind, rate), rows in table.groupby(SETTING, sort=False):
        if "enkcvs" in set(rows["method"]) and len(rows) > 1:
            yield f"{dataset} {kind} {rate:g}", rows


def _seeds(table: pd.DataFrame) -> str:
    low, high = int(table["runs"].min()), int(table["runs"].max())
    return (f"{low}" if low == high else f"{low}-{high}") + (" seed" if high == 1 else " seeds")


#: How the views say what orders a setting.
TESTED = (
    f"E-NKCVS against each method by Welch's t-test over seeds (two-sided, ordered where p < {SIGNIFICANCE:g}, "
    "with the p-value and both cells' seed counts), or where some cell has a single seed, not ordered: its test "
    "accuracy minus each other method's, in points"
)


def standing(run: Path) -> str:
    """Per setting of the run's Table 2, E-NKCVS against every other method: by Welch's t-test where every cell has
    several seeds, its gaps in points of test accuracy otherwise."""
    table = _results(run)
    rank = method_rank(table)
    lines = [f"- {setting}: {_said(rows, rank)}." for setting, rows in _settings(table)]
    if not lines:
        return f"`{run.name}` has no Table 2 setting with E-NKCVS and another method.\n"
    return (
        f"Where E-NKCVS stands in run `{run.name}` ({_seeds(table)} per cell), per setting: {TESTED}.\n\n"
        + "\n".join(lines)
        + "\n"
    )


def standing_over(runs: list[tuple[Path, set[str] | None]]) -> str:
    """One line per run (view ``standing`` over several runs): per setting, E-NKCVS against the paper's methods
    (every method where a setting has no paper cell), as :func:`standing` says it."""
    lines = []
    for run, methods in runs:
        table = _results(run)
        if methods is not None:
            table = table[table["method"].isin(methods | {"enkcvs"})]
        rank = method_rank(table)
        said = "; ".join(f"{setting}: {_said(_compared(rows), rank, short=True)}" for setting, rows in _settings(table))
        lines.append(f"- `{run.name}` ({_seeds(table)} per cell): {said or 'no setting with E-NKCVS and another'}.")
    return (
        f"Per run and setting, {TESTED}; among the paper's methods (every method where a setting has no paper "
        "cell):\n\n" + "\n".join(lines) + "\n"
    )
