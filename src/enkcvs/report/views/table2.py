"""Views of a recorded run's Table 2: the methods' order beside the paper's, the run beside the paper or beside
another run, what the noise costs each method, and Co-teaching under two forget rates."""

from pathlib import Path

import numpy as np
import pandas as pd

from enkcvs.recording.provenance import recorded_config
from enkcvs.report.comparison import method_rank
from enkcvs.report.paper import published_results
from enkcvs.report.titles import METHOD_TITLES
from enkcvs.report.views.common import (
    SETTING,
    SIDES,
    SIGNIFICANCE,
    setting_labels,
    settings_phrase,
    several_seeds,
    span,
    tested_sides,
)


def _ranking(methods: pd.Series, values: pd.Series, *, order: bool = True) -> str:
    """Methods from the highest to the lowest value; with ``order`` (the paper's cells), ``>`` between them and ``=``
    between equal values (the paper prints one decimal), without it commas: values, not an ordering."""
    pairs = sorted(zip(values, methods), key=lambda pair: -pair[0])
    text = f"{METHOD_TITLES.get(pairs[0][1], pairs[0][1])} {pairs[0][0]:.1f}"
    for (before, _), (value, method) in zip(pairs, pairs[1:]):
        joiner = (" = " if value == before else " > ") if order else ", "
        text += f"{joiner}{METHOD_TITLES.get(method, method)} {value:.1f}"
    return text


def _tested_first(compared: pd.DataFrame) -> str | None:
    """Whether E-NKCVS comes first of ``compared`` (a setting's rows) by Welch's t-test: ``first`` (above every
    other), ``not first`` (another above it) or ``undecided``; None where a cell has a single seed."""
    if not several_seeds(compared):
        return None
    rows = compared.set_index("method")
    sides = tested_sides(rows.loc["enkcvs"], rows.drop(index="enkcvs"))
    return "not first" if sides["below"] else "first" if not sides[SIDES[2]] else "undecided"


def _ordering(table: pd.DataFrame) -> tuple[str, list[str]]:
    """The verdict sentence of :func:`table2_ordering` and its line per setting (means rounded to 1e-6 by the
    caller, so that two means of the same test images tie exactly)."""
    lines, claimed, verdicts = [], 0, []
    for (dataset, kind, rate), rows in table.groupby(SETTING, sort=False):
        line = f"- {dataset} {kind} {rate:g}: {_ranking(rows['method'], rows['mean'], order=False)}"
        published = rows["published"] if "published" in rows else pd.Series(float("nan"), index=rows.index)
        papers = bool(published.notna().any())
        # the paper's ordering is among its own methods: rows it does not print (e.g. CE + mixup) are listed only
        compared = rows[published.notna()] if papers else rows
        if papers:
            line += f" (paper: {_ranking(compared['method'], compared['published'])})"
        paper_first = not papers or bool(published[rows["method"] == "enkcvs"].max() == published.max())
        claimed += paper_first
        if paper_first:
            verdicts.append(_tested_first(compared))
        lines.append(line)
    claim = (
        f"The paper has E-NKCVS first of its methods (ties included) in {claimed} of "
        f"{settings_phrase(len(lines))} (of all methods where a setting has no paper cell)."
    )
    tested = [verdict for verdict in verdicts if verdict is not None]
    if not verdicts:
        return claim, lines
    if not tested:
        return (
            claim + " With a single seed in some cell of each of those, no two methods are ordered here "
            "(Welch's t-test needs two seeds or more per cell); the means follow per setting."
        ), lines
    counts = {verdict: tested.count(verdict) for verdict in ("first", "not first", "undecided")}
    return (
        claim + f" Welch's t-test over seeds (p < {SIGNIFICANCE:g}) puts it above every other method in "
        f"{counts['first']} of the {settings_phrase(len(tested))} with several seeds per cell, another method "
        f"above it in {counts['not first']}, and cannot order it against the best in {counts['undecided']}; "
        f"{len(verdicts) - len(tested)} more have a single seed in some cell and are not ordered."
    ), lines


def table2_ordering(run: Path) -> str:
    """Per setting of the run's Table 2: the methods' means from the highest, beside the paper's own ordering where
    the setting has a paper cell for every method, and whether Welch's t-test puts E-NKCVS first where the paper has
    it first (ties included) and every cell has several seeds. The paper does not have it first everywhere: at
    noise 0 CE ties or beats it (TREC: CE 96.5, E-NKCVS 96.4). A setting without paper cells counts as one where the paper's claim (E-NKCVS first) applies."""
    table = pd.read_csv(run / "table2.csv")
    summary, lines = _ordering(table[table["runs"] > 0].round({"mean": 6}))
    return summary + "\n\n" + "\n".join(lines) + "\n"


def _cells_by_setting_and_method(table: pd.DataFrame) -> pd.DataFrame:
    """The ``cell`` column of a Table 2 frame as a setting x method frame: the settings (column ``setting``) in the
    table's order, the methods in the paper's (:func:`enkcvs.report.comparison.method_rank`) under their titles."""
    frame = table.pivot(index="setting", columns="method", values="cell")
    rank = method_rank(table)
    return frame.loc[table["setting"].unique(), sorted(frame.columns, key=rank.get)].rename(columns=METHOD_TITLES)


def paper_beside(run: Path) -> str:
    """The run's Table 2 beside the paper's, compact (view ``paper-beside``): a row per setting with a paper cell, a
    column per method (the paper's order), each cell the run's mean with the paper's in parentheses, the best mean of
    the row here in bold; then :func:`table2_ordering`'s verdict."""
    table = pd.read_csv(run / "table2.csv")
    table = table[(table["runs"] > 0) & table["published"].notna()].round({"mean": 6})
    if table.empty:
        return f"`{run.name}` has no Table 2 cell beside a paper cell.\n"
    table["setting"] = setting_labels(table)
    best = table.groupby("setting")["mean"].transform("max")
    table["cell"] = [
        f"**{mean:.1f}** ({paper:.1f})" if mean == top else f"{mean:.1f} ({paper:.1f})"
        for mean, paper, top in zip(table["mean"], table["published"], best)
    ]
    frame = _cells_by_setting_and_method(table)
    low, high = int(table["runs"].min()), int(table["runs"].max())
    seeds = (f"{low}" if low == high else f"{low}-{high}") + (" seed" if high == 1 else " seeds")
    papers = ", ".join(dict.fromkeys(table["paper_dataset"]))
    summary, _ = _ordering(table)
    return (
        f"Test accuracy (%) on the clean test set: run `{run.name}` ({seeds} per cell) beside "
        f"the paper's Table 2 ({papers}, mean of 5 runs) in parentheses; bold: the best mean of the row here. "
        f"{summary}\n\n" + frame.reset_index().to_markdown(index=False) + "\n"
    )


def table2_beside(first: Path, second: Path) -> str:
    """Table 2 of two recorded runs side by side (view ``<second>/table2-beside:<first>``): :func:`tables_beside` of
    their ``table2.csv``."""
    return tables_beside(
        first=(first.name, pd.read_csv(first / "table2.csv")), second=(second.name, pd.read_csv(second / "table2.csv"))
    )


def tables_beside(*, first: tuple[str, pd.DataFrame], second: tuple[str, pd.DataFrame]) -> str:
    """Two runs' Table 2 cells (each a run's name and its Table 2 rows) side by side: a row per setting both ran, a
    column per method both trained (the paper's order), each cell the second run's mean, the first's in parentheses
    and the change; then per method the largest change, to tell a changed method from the spread of the unchanged
    ones."""
    keys = [*SETTING, "method"]
    tables = [table.query("runs > 0").set_index(keys)["mean"] for _, table in (first, second)]
    both = pd.concat(tables, axis=1, keys=["first", "second"], join="inner").reset_index()
    names = {"first": first[0], "second": second[0]}
    if both.empty:
        return f"`{names['second']}` and `{names['first']}` share no Table 2 cell.\n"
    both["change"] = both["second"] - both["first"]
    both["setting"] = setting_labels(both)
    both["cell"] = [
        f"{new:.1f} ({old:.1f}, {change:+.1f})"
        for new, old, change in zip(both["second"], both["first"], both["change"])
    ]
    rank = method_rank(both)
    frame = _cells_by_setting_and_method(both)
    largest = both.loc[both["change"].abs().groupby(both["method"]).idxmax()]
    changes = "; ".join(
        f"{METHOD_TITLES.get(row.method, row.method)} {row.change:+.1f} ({row.setting})"
        for row in largest.sort_values("method", key=lambda m: m.map(rank)).itertuples()
    )
    return (
        f"Test accuracy (%) of run `{names['second']}`, in parentheses `{names['first']}`'s and the change. "
        f"Largest change per method: {changes}.\n\n" + frame.reset_index().to_markdown(index=False) + "\n"
    )


def noise_cost(run: Path) -> str:
    """What the noise costs each method, with each side's own ceiling taken out (view ``noise-cost``): here, a method's
    test accuracy minus CE's on the true labels (the ablation ladder's ceiling of this data and recipe); in the paper,
    its cell minus the paper's CE at noise 0 on that dataset. Settings with a paper cell only."""
    ceiling = pd.read_csv(run / "ablation.csv")[[*SETTING, "ce_true_mean"]]
    results = pd.read_csv(run / "table2.csv").merge(ceiling, on=SETTING)
    results = results[results["published"].notna()]
    if results.empty:
        return f"`{run.name}` has no setting with both the ablation ladder and a paper cell.\n"
    paper = published_results()
    clean = paper[(paper["table"] == 2) & (paper["noise_rate"] == 0) & (paper["method"] == "ce")]
    results["paper_ceiling"] = results["paper_dataset"].map(clean.set_index("dataset")["value"])
    results["ours"] = results["mean"] - results["ce_true_mean"]
    results["paper"] = results["published"] - results["paper_ceiling"]
    results["setting"] = setting_labels(results)
    results["cell"] = [f"{ours:+.1f} ({paper:+.1f})" for ours, paper in zip(results["ours"], results["paper"])]
    frame = _cells_by_setting_and_method(results)
    ceilings = "; ".join(
        f"{dataset} {span(group['ce_true_mean'])} % here, {group['paper_dataset'].iloc[0]} "
        f"{group['paper_ceiling'].iloc[0]:.1f} % in the paper"
        for dataset, group in results.groupby("dataset", sort=False)
    )
    return (
        "Points each method loses to the noise: here its test accuracy minus CE's on the true labels, in "
        f"parentheses the paper's cell minus the paper's CE at noise 0 (ceilings: {ceilings}).\n\n"
        + frame.reset_index().to_markdown(index=False)
        + "\n"
    )


def _coteaching_cells(run: Path, table: pd.DataFrame) -> pd.DataFrame:
    """The Co-teaching cells of the run's Table 2 frame ``table`` with the paper's, the run's ``forget_rate`` choice
    (from its recorded config) and the share of each batch that choice forgot (%, from its noise table)."""
    config = recorded_config(run)
    frame = table.query("method == 'coteaching'").merge(pd.read_csv(run / "noise.csv"), on=SETTING, how="left")
    # a config that leaves it unset trained with the schema's default of its commit, which the record does not keep
    frame["choice"] = [
        str(((config["datasets"][name].get("baselines") or {}).get("coteaching") or {}).get("forget_rate", "unset"))
        for name in frame["dataset"]
    ]
    frame["forgets"] = 100 * np.select(
        [frame["choice"] == "actual", frame["choice"] == "nominal"],
        [frame["forget_rate_actual"], frame["forget_rate_nominal"]],
        pd.to_numeric(frame["choice"], errors="coerce"),
    )
    return frame[[*SETTING, "choice", "forgets", "mean", "published"]]


def forget_rate_beside(first: Path, second: Path) -> str:
    """Co-teaching's Table 2 cells of two runs that differ in its forget rate, beside the paper's (view
    ``<second>/forget-rate:<first>``): a row per setting both ran with a paper cell, the share of each batch each run
    forgot (the nominal epsilon or the labels' measured share of wrong ones), its test accuracy, which comes nearer
    the paper's and, where either run trained it, E-NKCVS on the same labels; then how often each rate comes nearer,
    and the mean distances from the paper."""
    tables = [pd.read_csv(run / "table2.csv").query("runs > 0") for run in (first, second)]
    both = (
        _coteaching_cells(first, tables[0])
        .merge(_coteaching_cells(second, tables[1]), on=SETTING, suffixes=("_1", "_2"))
        .dropna(subset=["published_1"])
    )
    if both.empty:
        return f"`{second.name}` and `{first.name}` share no Co-teaching cell beside a paper cell.\n"
    names = {side: both[f"choice_{side}"].iloc[0] for side in ("1", "2")}
    if names["1"] == names["2"]:
        return f"`{second.name}` and `{first.name}` both trained Co-teaching with forget rate `{names['1']}`.\n"
    runs = {"1": first.name, "2": second.name}
    distance = {side: (both[f"mean_{side}"] - both["published_1"]).abs() for side in names}
    nearer = np.select([distance["2"] < distance["1"], distance["1"] < distance["2"]], [names["2"], names["1"]], "tie")
    enkcvs = pd.concat(tables).query("method == 'enkcvs'").drop_duplicates(SETTING)[[*SETTING, "mean"]]
    both = both.merge(enkcvs.rename(columns={"mean": "enkcvs"}), on=SETTING, how="left")
    frame = pd.DataFrame(
        {
            "setting": setting_labels(both),
            "paper": both["published_1"],
            **{f"{names[side]}: forgets (%)": both[f"forgets_{side}"] for side in names},
            **{f"{names[side]}: accuracy": both[f"mean_{side}"] for side in names},
            "nearer the paper": nearer,
            "E-NKCVS": both["enkcvs"],
        }
    ).dropna(axis=1, how="all")
    counts = "; ".join(
        f"`{names[side]}` (run `{runs[side]}`) in {int((nearer == names[side]).sum())}, "
        f"{distance[side].mean():.1f} points from it on average"
        for side in names
    )
    return (
        f"Co-teaching's test accuracy (%) with two forget rates beside the paper's cell, over "
        f"{settings_phrase(len(frame))}; nearer the paper: {counts}. E-NKCVS's cell on the same labels is "
        "shown, not ordered against them (the `standing` view tests orderings over seeds).\n\n"
        + frame.to_markdown(index=False, floatfmt=".2f")
        + "\n"
    )


def _forget_rate_pair(first: Path, second: Path) -> pd.DataFrame:
    """Co-teaching's cells of two runs with different forget rates, one row per shared setting with a paper cell:
    the model, the paper's cell, each rate's accuracy and distance from it."""
    cells = [_coteaching_cells(run, pd.read_csv(run / "table2.csv").query("runs > 0")) for run in (first, second)]
    both = cells[0].merge(cells[1], on=SETTING, suffixes=("_1", "_2")).dropna(subset=["published_1"])
    config = recorded_config(first)
    rows = []
    for row in both.itertuples(index=False):
        accuracy = {row.choice_1: row.mean_1, row.choice_2: row.mean_2}
        if set(accuracy) != {"nominal", "actual"}:
            raise ValueError(
                f"runs {first.name} and {second.name} do not train Co-teaching with `nominal` and "
                f"`actual` at {row.dataset} {row.noise_kind} {row.noise_rate:g}"
            )
        rows.append(
            {
                "setting": f"{row.dataset} {row.noise_kind} {row.noise_rate:g}",
                "runs": f"`{first.name}`, `{second.name}`",
                "model": config["datasets"][row.dataset]["recipe"]["model"],
                "paper": row.published_1,
                "nominal": accuracy["nominal"],
                "actual": accuracy["actual"],
            }
        )
    return pd.DataFrame(rows)


def _tally(frame: pd.DataFrame) -> str:
    nearer = {
        rate: int((frame[f"{rate}: from the paper"] < frame[f"{other}: from the paper"]).sum())
        for rate, other in (("actual", "nominal"), ("nominal", "actual"))
    }
    return (
        f"`actual` nearer the paper in {nearer['actual']}, `nominal` in {nearer['nominal']}; on average "
        f"`actual` {frame['actual: from the paper'].mean():.1f} and `nominal` "
        f"{frame['nominal: from the paper'].mean():.1f} points from it"
    )


def forget_rate_tally(runs: list[tuple[Path, set[str] | None]]) -> str:
    """Co-teaching's cells under its two forget rates over several pairs of runs (the block
    ``<run>/forget-rate-tally:<run>+<run>+<run>...``, the runs taken in pairs that differ in the rate only): each
    cell beside the paper's, which rate comes nearer and by how much; then the tally per model and over all."""
    paths = [run for run, _ in runs]
    if len(paths) % 2:
        raise ValueError("forget-rate-tally takes runs in pairs, each trained with `nominal` and with `actual`")
    frame = pd.concat(
        [_forget_rate_pair(first, second) for first, second in zip(paths[::2], paths[1::2])], ignore_index=True
    )
    for rate in ("nominal", "actual"):
        frame[f"{rate}: from the paper"] = (frame[rate] - frame["paper"]).abs()
    gap = frame["actual: from the paper"] - frame["nominal: from the paper"]
    frame["nearer, by"] = [f"{'nominal' if g > 0 else 'actual' if g < 0 else 'tie'}, {abs(g):.2f}" for g in gap]
    models = "; ".join(
        f"`{model}` ({len(group)} {'cell' if len(group) == 1 else 'cells'}): {_tally(group)}"
        for model, group in frame.groupby("model", sort=False)
    )
    return (
        f"Co-teaching's test accuracy (%) forgetting the nominal rate and the labels' actual share of wrong ones, "
        f"beside the paper's cell, over {len(frame)} cells. Per model: {models}. Over all: "
        f"{_tally(frame)}.\n\n" + frame.to_markdown(index=False, floatfmt=".2f") + "\n"
    )
