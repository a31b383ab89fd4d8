"""Table 2 (test accuracy of the final models) reproduced, beside the paper's cells."""

from collections.abc import Mapping

import numpy as np
import pandas as pd

from enkcvs.report.comparison import (
    DELTA,
    MISSING,
    NO_NUMBER,
    NOISE_TITLES,
    PAPER,
    Bold,
    check_bold,
    check_names,
    dataset_rank,
    dataset_titles,
    embolden,
    format_mean_std,
    format_number,
    method_rank,
    noise_sort,
    rate_key,
    rate_label,
)
from enkcvs.report.output_provenance import DIFFERS_MARK
from enkcvs.report.paper import published_results
from enkcvs.report.readings import LAST_EPOCHS, READINGS
from enkcvs.report.titles import METHOD_TITLES

#: The columns of :func:`enkcvs.report.tables.table2` holding the readings besides the last epoch's (``mean``,
#: ``std``), which a frame of results recorded before every final model kept its curve may lack.
READING_COLUMNS = ["last10_mean", "last10_std", "last10_epochs", "best_mean", "best_std"]
#: The columns of :func:`enkcvs.report.tables.table2` saying what a cell cost and ran with, which a frame of results
#: recorded before Table 2 kept them lacks.
COST_COLUMNS = ["trainings", "differs", "provenance"]


def compare_table2(
    reproduced: pd.DataFrame, *, paper_names: Mapping[str, str | None], all_published: bool = False
) -> pd.DataFrame:
    """Reproduced Table 2 cells beside the paper's.

    Parameters
    ----------
    reproduced : pandas.DataFrame
        :func:`enkcvs.report.tables.table2`'s long frame: columns ``dataset``, ``noise_kind``, ``noise_rate``,
        ``method``, ``mean``, ``std`` (test accuracy at the last epoch, %), ``runs`` (0 for a configured method without
        results), ``sources``, the other readings' :data:`READING_COLUMNS` and :data:`COST_COLUMNS` (NaN where absent).
    paper_names : mapping of str to str or None
        Our dataset name (config key, e.g. ``"mnist5k"``) to the paper's (``"MNIST"``), or None for no comparison.
        Every dataset of ``reproduced`` needs an entry.
    all_published : bool
        Also add the paper's cells of each mapped dataset that ``reproduced`` lacks, as missing runs.

    Returns
    -------
    pandas.DataFrame
        One row per reproduced cell (plus, with ``all_published``, per unmatched paper cell), columns ``dataset``,
        ``paper_dataset`` (None when unmapped), ``noise_kind``, ``noise_rate``, ``method``, ``mean``, ``std``,
        ``runs``, ``published``, ``published_std`` (NaN where the paper has no such cell), ``published_decimals``
        (Int64, as printed), ``difference`` (``mean - published``; NaN where either is missing), the other readings
        (:data:`READING_COLUMNS`) with their differences ``last10_difference`` and ``best_difference``,
        :data:`COST_COLUMNS`, ``sources``.
    """
    frame = reproduced.reindex(
        columns=[
            "dataset",
            "noise_kind",
            "noise_rate",
            "method",
            "mean",
            "std",
            "runs",
            *READING_COLUMNS,
            *COST_COLUMNS,
            "sources",
        ]
    )
    frame = frame.astype({"dataset": object, "noise_kind": object, "method": object})
    mapping = dict(zip(frame["dataset"], check_names(frame["dataset"], paper_names)))
    frame["_rate"] = rate_key(frame["noise_rate"])
    paper = _published_table2()

    if all_published:
        extra = []
        for dataset, paper_dataset in mapping.items():
            if paper_dataset is None:
                continue
            cells = paper.loc[paper["paper_dataset"] == paper_dataset, ["noise_kind", "_rate", "method"]]
            extra.append(cells.assign(dataset=dataset, noise_rate=cells["_rate"]))
        frame = pd.concat([frame, *extra], ignore_index=True)
        frame = frame.drop_duplicates(["dataset", "noise_kind", "_rate", "method"], keep="first")

    # Complete the grid (every setting x every method), so a hole reads "missing" and never disappears.
    settings = frame.drop_duplicates(["dataset", "noise_kind", "_rate"])[
        ["dataset", "noise_kind", "_rate", "noise_rate"]
    ]
    methods = pd.DataFrame({"method": list(dict.fromkeys(frame["method"]))}, dtype=object)
    grid = settings.merge(methods, how="cross")
    frame = grid.merge(
        frame.drop(columns="noise_rate"),
        how="left",
        on=["dataset", "noise_kind", "_rate", "method"],
        validate="one_to_one",
    )
    frame["runs"] = frame["runs"].fillna(0).astype(int)
    frame["sources"] = frame["sources"].fillna("").astype(object)
    frame["paper_dataset"] = pd.Series([mapping[name] for name in frame["dataset"]], index=frame.index, dtype=object)

    # Unmapped rows (paper_dataset None) never match: the paper's keys are never null.
    merged = frame.merge(
        paper, how="left", on=["paper_dataset", "noise_kind", "_rate", "method"], validate="many_to_one"
    )
    merged["difference"] = merged["mean"] - merged["published"]
    for reading in ("last10", "best"):
        merged[f"{reading}_difference"] = merged[f"{reading}_mean"] - merged["published"]
    columns = [
        "dataset",
        "paper_dataset",
        "noise_kind",
        "noise_rate",
        "method",
        "mean",
        "std",
        "runs",
        "published",
        "published_std",
        "published_decimals",
        "difference",
        *READING_COLUMNS,
        "last10_difference",
        "best_difference",
        *COST_COLUMNS,
        "sources",
    ]
    return noise_sort(merged[columns], ["dataset", "noise_kind", "noise_rate"])


def _published_table2() -> pd.DataFrame:
    """The paper's Table 2 keyed for joining: ``paper_dataset``, ``noise_kind``, ``_rate``, ``method``."""
    paper = published_results().query("table == 2")
    return pd.DataFrame(
        {
            "paper_dataset": paper["dataset"].astype(object),
            "noise_kind": paper["noise_kind"].astype(object),
            "_rate": rate_key(paper["noise_rate"]),
            "method": paper["method"].astype(object),
            "published": paper["value"],
            "published_std": paper["std"],
            "published_decimals": paper["printed_decimals"].astype("Int64"),
        }
    )


#: Each reading's columns of :func:`compare_table2`'s frame: its mean, its std and its difference to the paper's cell.
_READING_VALUES = {
    "last": ("mean", "std", "difference"),
    "last10": ("last10_mean", "last10_std", "last10_difference"),
    "best": ("best_mean", "best_std", "best_difference"),
}


def reading_text(cell: pd.Series, reading: str, *, decimals: int) -> str:
    """One reading (a key of :data:`~enkcvs.report.readings.READINGS`) of a cell that ran, a row holding the readings'
    columns (:func:`compare_table2`, :func:`enkcvs.report.gathered.gathered_row`): "mean ± std" to ``decimals``
    digits, the epochs averaged named where the models trained fewer than
    :data:`~enkcvs.report.readings.LAST_EPOCHS`; "—" where its results have no curve to read."""
    mean, std, _ = _READING_VALUES[reading]
    if np.isnan(cell[mean]):
        return NO_NUMBER
    text = format_mean_std(cell[mean], cell[std], decimals)
    if reading == "last10" and cell["last10_epochs"] < LAST_EPOCHS:
        return f"{text} (all {cell['last10_epochs']:.0f} epochs)"
    return text


def _trainings_texts(frame: pd.DataFrame) -> dict[tuple[str, str], str]:
    """Each dataset's and method's ``trainings`` of :func:`compare_table2`'s frame as text: the count, the counts
    joined by "/" where its settings differ in it, "—" where no cell knows it."""
    texts = {}
    for (dataset, method), counts in frame.groupby(["dataset", "method"], sort=False)["trainings"]:
        known = sorted({int(count) for count in counts.dropna()})
        texts[dataset, method] = "/".join(map(str, known)) or NO_NUMBER
    return texts


def format_table2(frame: pd.DataFrame, *, decimals: int, bold: Bold = "markdown") -> pd.DataFrame:
    """Table 2 as the paper prints it, from :func:`compare_table2`'s frame, each cell read three ways alike for every
    method (:data:`~enkcvs.report.readings.READINGS`).

    Parameters
    ----------
    frame : pandas.DataFrame
        :func:`compare_table2`'s output.
    decimals : int
        Digits after the point of reproduced values and differences (published values keep the paper's digits).
    bold : {"markdown", "latex", None}
        Mark the best reproduced last-epoch mean of each dataset and noise setting (all ties at ``decimals``) as
        ``**x**`` or ``\\textbf{x}``, or not.

    Returns
    -------
    pandas.DataFrame
        One row per dataset, method and reading: datasets in the paper's order (those without a paper dataset last),
        methods in the paper's order with E-NKCVS last (:data:`enkcvs.report.titles.METHOD_TITLES`), the readings in
        the order of :data:`~enkcvs.report.readings.READINGS` (the last epoch, the protocol, first; the best epoch
        titled as optimistic). Two-level columns: ``("", "dataset")``, ``("", "method")``, ``("", "trainings")``
        (the models a seed of the method trains, :func:`enkcvs.report.trainings.trainings`; "—" where unknown; the
        values joined by "/" where the dataset's settings differ in it; left out where no cell knows it, a frame of
        results recorded before Table 2 counted them), ``("", "reading")``, then
        one column per noise setting grouped under ``symmetric`` / ``asymmetric`` / ``real`` with the rate as label
        (rates ascending), holding "mean ± std" ("missing" for a configured run without results, "—" for a reading of
        results recorded without their curve, "" where the dataset has no such setting); a setting where the paper has
        a number is followed by ``"<rate> paper"`` (as printed, "—" where the paper has none) and ``"<rate> Δ"``
        (the row's reading minus published). A cell whose outputs differ in what they ran with (``differs``, not
        empty) carries :data:`~enkcvs.report.output_provenance.DIFFERS_MARK` after each reading it has a number of.
    """
    check_bold(bold)
    frame = frame.reset_index(drop=True)
    has_run = (frame["runs"] > 0) & frame["mean"].notna()
    rounded = frame["mean"].round(decimals).where(has_run)
    labels = frame["noise_rate"].map(rate_label)
    best = rounded.groupby([frame["dataset"], frame["noise_kind"], labels], dropna=False).transform("max")

    settings = noise_sort(frame[["noise_kind", "noise_rate"]].drop_duplicates(), ["noise_kind", "noise_rate"])
    compared = set(zip(frame.loc[frame["published"].notna(), "noise_kind"], labels[frame["published"].notna()]))
    costs = _trainings_texts(frame) if frame["trainings"].notna().any() else None
    columns = [("", "dataset"), ("", "method"), *([("", "trainings")] if costs else []), ("", "reading")]
    for kind, rate in zip(settings["noise_kind"], settings["noise_rate"]):
        group, label = NOISE_TITLES.get(kind, kind), rate_label(rate)
        columns.append((group, label))
        if (kind, label) in compared:
            columns += [(group, f"{label} {PAPER}".strip()), (group, f"{label} {DELTA}".strip())]

    titles = dataset_titles(frame)
    records = {}
    for i in frame.index:
        dataset, method, kind = frame.at[i, "dataset"], frame.at[i, "method"], frame.at[i, "noise_kind"]
        group, label = NOISE_TITLES.get(kind, kind), labels[i]
        published, digits = frame.at[i, "published"], frame.at[i, "published_decimals"]
        for reading, title in READINGS.items():
            record = records.setdefault(
                (dataset, method, reading),
                {
                    ("", "dataset"): titles[dataset],
                    ("", "method"): METHOD_TITLES.get(method, method),
                    **({("", "trainings"): costs[dataset, method]} if costs else {}),
                    ("", "reading"): title,
                },
            )
            text = reading_text(frame.loc[i], reading, decimals=decimals) if has_run[i] else MISSING
            if text != NO_NUMBER and has_run[i] and isinstance(frame.at[i, "differs"], str) and frame.at[i, "differs"]:
                text = f"{text} {DIFFERS_MARK}"
            # bold reads the protocol alone: the best epoch is not a result to rank methods by
            record[(group, label)] = embolden(text, bold) if reading == "last" and rounded[i] == best[i] else text
            if (kind, label) in compared:
                difference = frame.at[i, _READING_VALUES[reading][2]]
                record[(group, f"{label} {PAPER}".strip())] = (
                    NO_NUMBER
                    if np.isnan(published)
                    else format_mean_std(published, frame.at[i, "published_std"], int(digits))
                )
                record[(group, f"{label} {DELTA}".strip())] = (
                    NO_NUMBER if np.isnan(difference) else format_number(difference, decimals, sign=True)
                )
    datasets, methods, readings = dataset_rank(frame), method_rank(frame), list(READINGS)
    order = sorted(records, key=lambda key: (datasets[key[0]], methods[key[1]], readings.index(key[2])))
    table = pd.DataFrame([records[key] for key in order], columns=pd.MultiIndex.from_tuples(columns))
    return table.fillna("")
