"""Where E-NKCVS stands in a recorded run's Table 2, per setting: its place and its gap to every other method (view
``standing``), and the same in one line per run over several runs (the block ``<run>/standing:<run>+<run>...``)."""

from pathlib import Path

import pandas as pd

from enkcvs.report.comparison import method_rank
from enkcvs.report.titles import METHOD_TITLES
from enkcvs.runs.views.common import SETTING, points

PLACES = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")


def _title(method: str, *, short: bool = False) -> str:
    """How the view names a method: its report title, in a run's one-line summary without the parenthesis that
    says the paper has no such row (``CL prune + retrain``)."""
    title = METHOD_TITLES.get(method, method)
    return title.split(" (")[0] if short else title


def _names(methods: list[str], *, short: bool = False) -> str:
    titles = [_title(method, short=short) for method in methods]
    return titles[0] if len(titles) == 1 else ", ".join(titles[:-1]) + " and " + titles[-1]


def _results(run: Path) -> pd.DataFrame:
    """The run's Table 2 cells, means rounded to 1e-6 so that two means of the same test images tie exactly."""
    table = pd.read_csv(run / "table2.csv")
    table = table[table["runs"] > 0].copy()
    table["mean"] = table["mean"].round(6)
    return table


def _compared(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows a setting's order is read over: the paper's methods where the setting has the paper's cells, every
    method otherwise (as :func:`enkcvs.runs.views.table2.table2_ordering` reads it)."""
    published = rows["published"] if "published" in rows else pd.Series(float("nan"), index=rows.index)
    return rows[published.notna() | (rows["method"] == "enkcvs")] if published.notna().any() else rows


def _place(rows: pd.DataFrame, *, short: bool = False) -> tuple[str, str]:
    """E-NKCVS's place among a setting's compared rows, and the detail that places it: the margin over the next
    method where it is first, the methods it ties, or its gap to the best."""
    compared = _compared(rows).set_index("method")["mean"]
    ours, others = compared["enkcvs"], compared.drop(index="enkcvs")
    above, level = others[others > ours], others[others == ours]
    if above.empty and not level.empty:
        return "tied first", f"with {_names(list(level.index), short=short)}"
    if above.empty:
        runner_up = others.idxmax()
        return "first", f"by {points(ours - others.max())} over {_title(runner_up, short=short)}"
    place = PLACES[len(above)] if len(above) < len(PLACES) else f"number {len(above) + 1}"
    return place, f"{points(above.max() - ours)} behind {_title(above.idxmax(), short=short)}"


def _gaps(rows: pd.DataFrame, rank: dict) -> str:
    """E-NKCVS's mean minus every other method's in one setting, grouped into behind, level and ahead."""
    means = rows.set_index("method")["mean"]
    ours = means["enkcvs"]
    others = sorted(means.drop(index="enkcvs").index, key=lambda method: (-means[method], rank[method]))
    parts = []
    for word, chosen in (("behind", [m for m in others if means[m] > ours]),
                         ("level with", [m for m in others if means[m] == ours]),
                         ("ahead of", [m for m in others if means[m] < ours])):
        if chosen:
            items = [f"{_title(m)}" + ("" if word == "level with" else f" by {points(abs(means[m] - ours))}")
                     for m in chosen]
            parts.append(f"{word} " + (items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]))
    return "; ".join(parts)


def _settings(table: pd.DataFrame):
    for (dataset, kind, rate), rows in table.groupby(SETTING, sort=False):
        if "enkcvs" in set(rows["method"]) and len(rows) > 1:
            yield f"{dataset} {kind} {rate:g}", rows


def _among(rows: pd.DataFrame) -> str:
    papers = "published" in rows and bool(rows["published"].notna().any())
    return f"the paper's {len(_compared(rows))} methods" if papers else f"all {len(rows)} methods"


def _seeds(table: pd.DataFrame) -> str:
    low, high = int(table["runs"].min()), int(table["runs"].max())
    return (f"{low}" if low == high else f"{low}-{high}") + (" seed" if high == 1 else " seeds")


def standing(run: Path) -> str:
    """Per setting of the run's Table 2, E-NKCVS's place among the methods the paper's ordering is read over (the
    paper's methods where the setting has the paper's cells, every method otherwise) and its mean minus every other
    method's, in points of test accuracy."""
    table = _results(run)
    rank = method_rank(table)
    lines = [f"- {setting}: {_place(rows)[0]} of {_among(rows)}; {_gaps(rows, rank)}."
             for setting, rows in _settings(table)]
    if not lines:
        return f"`{run.name}` has no Table 2 setting with E-NKCVS and another method.\n"
    return (f"Where E-NKCVS stands in run `{run.name}` ({_seeds(table)} per cell), per setting: its place among the "
            "paper's methods (among every method where the setting has no paper cell), then its test accuracy "
            "against each other method's, in points.\n\n" + "\n".join(lines) + "\n")


def standing_over(runs: list[tuple[Path, set[str] | None]]) -> str:
    """One line per run (view ``standing`` over several runs): in which settings E-NKCVS comes first, by how much
    over the next method, and where it does not, how far behind the best."""
    lines = []
    for run, methods in runs:
        table = _results(run)
        if methods is not None:
            table = table[table["method"].isin(methods | {"enkcvs"})]
        groups: dict[str, list[str]] = {}
        for setting, rows in _settings(table):
            place, detail = _place(rows, short=True)
            groups.setdefault(place, []).append(f"{setting} ({detail})")
        order = sorted(groups, key=lambda place: (place != "first", place != "tied first",
                                                  PLACES.index(place) if place in PLACES else len(PLACES)))
        said = "; ".join(f"{place} at {', '.join(groups[place])}" for place in order) or "no setting to place"
        lines.append(f"- `{run.name}` ({_seeds(table)} per cell): {said}.")
    return ("E-NKCVS's place among the paper's methods in each setting of each run (among every method where a "
            "setting has no paper cell), with its margin over the next where it is first and its gap to the best "
            "where it is not, in points of test accuracy:\n\n" + "\n".join(lines) + "\n")
