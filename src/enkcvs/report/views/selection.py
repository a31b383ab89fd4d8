"""Views of a recorded run's selection: its Table 1 beside the paper's trend and the corrected Theorem 1, where and by
how much Theorem 1 is off, and how well its label-quality ranking finds the true label errors."""

from pathlib import Path

import pandas as pd

from enkcvs.method.ranking import LABEL_QUALITY, VOTES_ORDER
from enkcvs.recording.provenance import recorded_config
from enkcvs.report.paper import published_results
from enkcvs.report.views.common import SIDES, paired_side, settings_phrase, span, tested_side
from enkcvs.report.views.gathered import gathered_row, selection_title

#: Where Theorem 1 counts as missing a measured precision or recall: by more than this many points.
MISS_POINTS = 2


def table1_agreement(run: Path) -> str:
    """Whether the run's Table 1 reads like the paper's (high precision) and how close the corrected Theorem 1
    comes to the measured precision and recall."""
    table = pd.read_csv(run / "table1.csv")
    recall_miss = table["theorem1_recall"] - table["recall"]
    precision_miss = table["theorem1_precision"] - table["precision"]
    misses = precision_miss.abs().gt(MISS_POINTS) | recall_miss.abs().gt(MISS_POINTS)
    if len(table) == 1:
        agreement = (
            f"misses one of them by more than {MISS_POINTS} points"
            if misses.any()
            else f"is within {MISS_POINTS} points of both"
        )
    else:
        agreement = f"is within {MISS_POINTS} points of both in {int((~misses).sum())} of them"
    return (
        f"Selection precision is {span(table['precision'])} % and recall {span(table['recall'])} % over "
        f"{settings_phrase(len(table))}; the corrected Theorem 1 {agreement} (Theorem 1 minus measured recall: "
        f"{span(recall_miss, spec='+.1f', joiner=' to ')} points).\n"
    )


def _falls(values: pd.Series) -> bool:
    return bool((values.diff().dropna() <= 0).all())


def table1_trend(run: Path) -> str:
    """Whether the run's selection follows the paper's Table 1 (CIFAR-10 only): precision and recall falling as the
    symmetric noise rate rises, per dataset of the run with at least two symmetric rates."""
    paper = published_results()
    paper = paper[(paper["table"] == 1) & (paper["noise_kind"] == "sym")]
    rates = sorted(paper["noise_rate"].unique())
    ends = {
        metric: paper[paper["metric"] == metric].set_index("noise_rate")["value"] for metric in ("precision", "recall")
    }
    lines = [
        f"The paper's Table 1 (CIFAR-10, K = 10, M = 5, t = 2): from symmetric noise {rates[0]:g} to "
        f"{rates[-1]:g}, precision falls from {ends['precision'][rates[0]]:.2f} to "
        f"{ends['precision'][rates[-1]]:.2f} % and recall from {ends['recall'][rates[0]]:.2f} to "
        f"{ends['recall'][rates[-1]]:.2f} %."
    ]
    table = pd.read_csv(run / "table1.csv")
    for dataset, rows in table[table["noise_kind"] == "sym"].groupby("dataset", sort=False):
        rows = rows.sort_values("noise_rate")
        if len(rows) < 2:
            continue
        falls = [metric for metric in ("precision", "recall") if _falls(rows[metric])]
        verdict = (
            "the paper's trend holds"
            if len(falls) == 2
            else f"only {falls[0]} falls throughout"
            if falls
            else "neither falls throughout"
        )
        lines.append(
            f"- {dataset} (K = {rows['K'].iloc[0]}, M = {rows['M'].iloc[0]}, t = {rows['t'].iloc[0]}), symmetric "
            f"{' / '.join(f'{rate:g}' for rate in rows['noise_rate'])}: precision "
            f"{' / '.join(f'{value:.2f}' for value in rows['precision'])}, recall "
            f"{' / '.join(f'{value:.2f}' for value in rows['recall'])}: {verdict}."
        )
    if len(lines) == 1:
        lines.append("- This run has no dataset with two or more symmetric noise rates.")
    return lines[0] + "\n\n" + "\n".join(lines[1:]) + "\n"


def theory_misses(run: Path) -> str:
    """Every selection of the run where the corrected Theorem 1 misses the measured precision or recall by more than
    2 points, beside the evidence of correlated iterations (agreement and all-wrong shares, measured against their
    values under independence)."""
    table = pd.read_csv(run / "theory.csv")
    missed = table[(table["precision_gap"].abs() > MISS_POINTS) | (table["recall_gap"].abs() > MISS_POINTS)]
    if missed.empty:
        return f"Theorem 1 is within {MISS_POINTS} points of every measured precision and recall of this run.\n"
    columns = {
        "dataset": "dataset",
        "noise": "noise",
        "seed": "seed",
        "K": "K",
        "M": "M",
        "t": "t",
        "precision_gap": "precision: Theorem 1 - measured",
        "recall_gap": "recall: Theorem 1 - measured",
        "agreement": "agreement %",
        "agreement_independent": "if independent %",
        "all_wrong": "all wrong %",
        "all_wrong_independent": "if independent % ",
    }
    return missed[list(columns)].rename(columns=columns).to_markdown(index=False, floatfmt=".2f") + "\n"


def _paired_cell(row: pd.Series, seeds: int) -> tuple[str | None, float]:
    """A score's row of ``ranking.csv`` set against E-NKCVS's label quality (:func:`paired_side` of the per-seed
    AUPRC gaps): the side label quality stands on and the p-value, or ``None`` and NaN where it cannot be tested (one
    seed, or a record from before the gaps)."""
    if seeds < 2 or pd.isna(row.get("auprc_gap_std", float("nan"))):
        return None, float("nan")
    return paired_side(mean=row["auprc_gap_mean"], std=row["auprc_gap_std"], seeds=seeds)


def _side_counts(rival: str, sides: list[str | None]) -> str:
    """How many settings put label quality on each side of ``rival`` (``None``: untested), as a clause:
    ``above the order of the votes in 1 and not distinguishable from it in 3``."""
    present = [(side, word) for side, word in zip((*SIDES, None), (*SIDES, "untested against")) if side in sides]
    return " and ".join(
        f"{word} {'it' if index else rival} in {sides.count(side)}" for index, (side, word) in enumerate(present)
    )


def ranking_verdict(run: Path) -> str:
    """Per setting, E-NKCVS's label-quality AUPRC (mean over seeds) against the order of the votes and against the
    best cleanlab score (the highest mean, picked after the fact), each ordered by the paired t-test over the seeds
    (:func:`enkcvs.report.views.common.paired_p`: at a seed, every score ranks the same probabilities and labels)."""
    table = pd.read_csv(run / "ranking.csv")
    rows, verdicts = [], {"the order of the votes": [], "the best cleanlab score": []}
    for (dataset, noise), group in table.groupby(["dataset", "noise"], sort=False):
        scores = group.set_index("method")
        seeds = int(scores["seeds"].min())
        cleanlab = scores[scores.index.str.startswith("cleanlab")]
        best = cleanlab["auprc"].idxmax()
        quality = scores.loc[LABEL_QUALITY, "auprc"]
        # every number formatted here: a p-value keeps its two significant digits in the table
        row = {
            "setting": f"{dataset} {noise}",
            "seeds": seeds,
            "E-NKCVS label quality": f"{quality:.2f}",
            "votes, then P(given)": f"{scores.loc[VOTES_ORDER, 'auprc']:.2f}",
            "best cleanlab": f"{cleanlab.loc[best, 'auprc']:.2f}",
            "which": best.removeprefix("cleanlab "),
        }
        for rival, name, column in (
            (VOTES_ORDER, "the order of the votes", "votes"),
            (best, "the best cleanlab score", "cleanlab"),
        ):
            side, p = _paired_cell(scores.loc[rival], seeds)
            row[f"lead over {column}"] = f"{quality - scores.loc[rival, 'auprc']:+.2f}"
            row[f"p ({column})"] = "-" if side is None else f"{p:.2g}"
            verdicts[name].append(side)
        rows.append(row)
    count = len(rows)
    if all(side is None for sides in verdicts.values() for side in sides):
        reason = (
            "one seed per setting, and the paired t-test needs two or more"
            if all(row["seeds"] < 2 for row in rows)
            else "this record's ranking.csv keeps no per-seed gaps: it predates them"
        )
        tested = f"; no setting is ordered ({reason})"
    else:
        tested = "; by the paired t-test over seeds (p < 0.05), E-NKCVS's label quality is " + "; ".join(
            f"{_side_counts(name, sides)} of {count} settings" for name, sides in verdicts.items()
        )
    summary = (
        "AUPRC (%) of each ranking of the true label errors, mean over seeds, E-NKCVS's label quality beside "
        "the order of its votes and the best cleanlab score of each setting (the highest mean, picked after "
        f"the fact){tested}. A lead is label quality's AUPRC minus the other's, in points."
    )
    return summary + "\n\n" + pd.DataFrame(rows).to_markdown(index=False, disable_numparse=True) + "\n"


def _main_selections(run: Path, table: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``theory.csv`` at each dataset's main (K, M, t) of the run's config (a dataset's own
    ``selection`` over the global one), not the sensitivity study's sweep."""
    config = recorded_config(run)
    main = {
        name: {**config.get("selection", {}), **(entry.get("selection") or {})}
        for name, entry in config["datasets"].items()
    }
    keep = [
        all(row[key] == main.get(row["dataset"], {}).get(key) for key in ("K", "M", "t")) for _, row in table.iterrows()
    ]
    return table[keep]


def _dependence(rows: pd.DataFrame) -> str:
    """The iterations' agreement and all-wrong shares against independence, as ranges over ``rows``."""
    ratio = rows["all_wrong"] / rows["all_wrong_independent"]
    return (
        f"agree on {span(rows['agreement'])} % of the samples ({span(rows['agreement_independent'])} % if "
        f"independent) and are all wrong together on {span(rows['all_wrong'], spec='.2f')} % "
        f"({span(rows['all_wrong_independent'], spec='.2f')} %: {span(ratio)} times as often)"
    )


def theory_summary(run: Path) -> str:
    """How far the corrected Theorem 1 is off at the run's main selections and how far the M iterations are from
    independent (view ``theory-summary``): the gaps, the agreement and all-wrong shares against their values under
    independence; where several selections, the one nearest independence (the smallest all-wrong ratio) apart."""
    table = _main_selections(run, pd.read_csv(run / "theory.csv"))
    if table.empty:
        return f"`{run.name}` has no selection at its main (K, M, t).\n"
    if len(table) == 1:
        row = table.iloc[0]
        return (
            f"At the one main selection of run `{run.name}` ({row['dataset']} {row['noise']}, K = {row['K']}, "
            f"M = {row['M']}, t = {row['t']}) the corrected Theorem 1 expects {row['theorem1_precision']:.2f} % "
            f"precision and {row['theorem1_recall']:.2f} % recall, against {row['precision']:.2f} and "
            f"{row['recall']:.2f} % measured; the iterations {_dependence(table)}.\n"
        )
    nearest = (table["all_wrong"] / table["all_wrong_independent"]).idxmin()
    others, alone = table.drop(index=nearest), table.loc[nearest]
    return (
        f"Over the {len(table)} main selections of run `{run.name}` the corrected Theorem 1 minus the measured "
        f"recall is {span(table['recall_gap'], spec='+.1f', joiner=' to ')} points and minus the measured "
        f"precision {span(table['precision_gap'], spec='+.1f', joiner=' to ')}. Nearest independence, at "
        f"{alone['dataset']} {alone['noise']}, the iterations {_dependence(table.loc[[nearest]])}, and Theorem 1 "
        f"misses recall by {alone['recall_gap']:+.1f}; at the other {len(others)} they {_dependence(others)}.\n"
    )


def _run_selections(run: Path) -> pd.DataFrame:
    """A run's main selections per setting and seed (``theory.csv``), each named by its run."""
    return _main_selections(run, pd.read_csv(run / "theory.csv")).assign(run=f"`{run.name}`")


def _enkcvs_cells(runs: list[tuple[Path, set[str] | None]]) -> dict[tuple, pd.Series]:
    """E-NKCVS's test accuracy cells by (dataset, noise as in ``theory.csv``, K, M), each selection's seeds pooled
    over ``runs`` (:func:`~enkcvs.report.views.gathered.gathered_row`)."""
    cells = gathered_row(runs)
    return {
        (cell["dataset"], f"{cell['noise_kind']}{cell['noise_rate']:g}", *cell["selection"]): cell
        for _, cell in cells.iterrows()
        if cell["method"] == "enkcvs" and cell["selection"] is not None
    }


def selection_beside(runs: list[tuple[Path, set[str] | None]]) -> str:
    """What a larger selection buys (view ``<run>/selection-beside:<run>+<run>...``, e.g. K = 10, M = 5 beside
    K = 4, M = 3): the main selections of the runs gathered per setting, seed and (K, M, t), the first run's set
    against every other at the seeds both made: per seed, measured precision and recall beside the corrected
    Theorem 1's; then the changes, measured and as Theorem 1 expects them, and E-NKCVS's test accuracy at each
    selection over all the seeds its runs hold (mean ± std, seeds pooled), ordered by Welch's t-test, never from
    one seed."""
    keys, selection = ["dataset", "noise", "seed"], ["K", "M", "t"]
    per_run = [_run_selections(run) for run, _ in runs]
    # a later run's selection replaces an earlier one's of the same seed and (K, M, t)
    selections = pd.concat(per_run).drop_duplicates([*keys, *selection], keep="last")
    head = runs[0][0]
    larger = per_run[0][["dataset", "noise", *selection]]
    ours = selections.merge(larger.drop_duplicates(), on=["dataset", "noise", *selection])
    others = selections.merge(larger[["dataset", "noise"]].drop_duplicates(), on=["dataset", "noise"])
    others = others[
        ~others.set_index(["dataset", "noise", *selection]).index.isin(
            ours.set_index(["dataset", "noise", *selection]).index
        )
    ]
    both = others.merge(ours, on=keys, suffixes=("_first", "_second"))
    if both.empty:
        return f"`{head.name}` and the runs beside it share no seed of a setting at another main selection.\n"
    accuracy = _enkcvs_cells(runs)
    parts, tables = [], []
    sides = [f"{column}_{side}" for side in ("first", "second") for column in selection]
    for pair, pairs in both.groupby(sides, sort=False):
        first, second = pair[:3], pair[3:]
        change = {
            column: pairs[f"{column}_second"] - pairs[f"{column}_first"]
            for column in ("precision", "recall", "theorem1_precision", "theorem1_recall")
        }
        named = [
            f"{selection_title(chosen)} ({', '.join(dict.fromkeys(pairs[f'run_{side}']))})"
            for chosen, side in ((first, "first"), (second, "second"))
        ]
        parts.append(
            f"From {named[0]} to {named[1]} over {len(pairs)} selection(s) of a setting and seed: precision "
            f"{span(change['precision'], spec='+.2f', joiner=' to ')} points (Theorem 1 expects "
            f"{span(change['theorem1_precision'], spec='+.2f', joiner=' to ')}), recall "
            f"{span(change['recall'], spec='+.2f', joiner=' to ')} (expects "
            f"{span(change['theorem1_recall'], spec='+.2f', joiner=' to ')}). "
            + _accuracy_verdict(accuracy, pairs, first=first, second=second)
        )
        for order, side in enumerate(("first", "second")):
            columns = {
                f"{column}_{side}": column
                for column in ["run", *selection, "precision", "theorem1_precision", "recall", "theorem1_recall"]
            }
            tables.append(pairs[[*keys, *columns]].rename(columns=columns).assign(order=order))
    table = pd.concat(tables).sort_values([*keys, "order"], kind="stable")  # per seed, the first run's selection last
    shown = table[["run", *keys, *selection, "precision", "theorem1_precision", "recall", "theorem1_recall"]]
    shown = shown.rename(columns={"theorem1_precision": "Theorem 1 precision", "theorem1_recall": "Theorem 1 recall"})
    return "\n".join(parts) + "\n\n" + shown.to_markdown(index=False, floatfmt=".2f") + "\n"


def _accuracy_verdict(accuracy: dict[tuple, pd.Series], pairs: pd.DataFrame, *, first: tuple, second: tuple) -> str:
    """Per setting of ``pairs``, E-NKCVS's test accuracy (``accuracy``: cells by setting, K and M) at the
    ``second`` selection against the ``first``: each cell with its seeds, the change, and the verdict of Welch's
    t-test where both cells have several seeds."""
    verdicts = []
    for dataset, noise in pairs[["dataset", "noise"]].drop_duplicates().itertuples(index=False):
        cells = [accuracy.get((dataset, noise, int(values[0]), int(values[1]))) for values in (first, second)]
        if any(cell is None for cell in cells):
            continue
        shown = [
            f"{cell['mean']:.2f}"
            + ("" if cell["runs"] < 2 else f" ± {cell['std']:.2f}")
            + f" ({_seeds_phrase(cell['seeds'])})"
            for cell in cells
        ]
        difference = f"{shown[1]} against {shown[0]}, {cells[1]['mean'] - cells[0]['mean']:+.2f} points"
        if min(cells[0]["runs"], cells[1]["runs"]) < 2:
            verdicts.append(f"{dataset} {noise}: {difference}, a single seed in a cell: not ordered")
            continue
        side, p = tested_side(cells[1], cells[0])
        verdicts.append(
            f"{dataset} {noise}: {difference}, {selection_title(second)} {side} "
            f"{selection_title(first)} (Welch's t-test, p = {p:.2g}, {int(cells[1]['runs'])} and "
            f"{int(cells[0]['runs'])} seeds)"
        )
    return ("E-NKCVS test accuracy: " + "; ".join(verdicts) + ".") if verdicts else ""


def _seeds_phrase(seeds: list[int]) -> str:
    """``seed 1`` or ``seeds 1, 2, 3``."""
    return f"seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))}"
