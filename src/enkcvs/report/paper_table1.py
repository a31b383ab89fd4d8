"""Table 1 (selection quality) reproduced, beside the paper's CIFAR-10 numbers and the corrected Theorem 1."""

from collections.abc import Mapping

import numpy as np
import pandas as pd

from enkcvs.report.comparison import (
    DELTA,
    MISSING,
    NO_NUMBER,
    PAPER,
    THEOREM,
    check_names,
    dataset_rank,
    dataset_titles,
    format_number,
    noise_sort,
    rate_key,
    rate_label,
)
from enkcvs.report.paper import TABLE1_SELECTION, published_results

TABLE1_METRICS = ("CS", "SS", "CSS", "precision", "recall")
_COUNT_METRICS = ("CS", "SS", "CSS")


def compare_table1(
    reproduced_table1: pd.DataFrame, *, paper_names: Mapping[str, str | None], match_selection: bool = False
) -> pd.DataFrame:
    """Reproduced Table 1 (selection quality) beside the paper's CIFAR-10 numbers, one row per metric.

    Parameters
    ----------
    reproduced_table1 : pandas.DataFrame
        :func:`enkcvs.report.tables.table1`'s frame: columns ``dataset``, ``noise_kind``, ``noise_rate``, ``K``, ``M``,
        ``t``, ``seeds``, ``CS``, ``SS``, ``CSS`` (mean counts), ``precision``, ``recall``,
        ``theorem1_precision``, ``theorem1_recall`` (%), ``sources``.
    paper_names : mapping of str to str or None
        Our dataset name to the paper's, or None. The paper's Table 1 has ``CIFAR-10`` only.
    match_selection : bool
        Only compare rows run at the paper's selection (:data:`enkcvs.report.paper.TABLE1_SELECTION`, K=10, M=5, t=2).
        By default every (K, M, t) is compared; the output keeps K, M and t so the difference stays visible.

    Returns
    -------
    pandas.DataFrame
        One row per reproduced row and metric (``CS``, ``SS``, ``CSS``, ``precision``, ``recall``): columns
        ``dataset``, ``paper_dataset``, ``noise_kind``, ``noise_rate``, ``K``, ``M``, ``t``, ``seeds``, ``metric``,
        ``reproduced``, ``theorem1`` (corrected Theorem 1's precision or recall; NaN for the set sizes),
        ``published`` (NaN where the paper has none), ``difference``, ``published_note`` (the transcription's note,
        e.g. that the paper's eps = 0.4 recall disagrees with its own counts), ``sources``.
    """
    theorem = ["theorem1_precision", "theorem1_recall"]
    ids = ["dataset", "noise_kind", "noise_rate", "K", "M", "t", "seeds", "sources"]
    long = reproduced_table1[ids + theorem + list(TABLE1_METRICS)].melt(
        id_vars=ids + theorem, value_vars=list(TABLE1_METRICS), var_name="metric", value_name="reproduced"
    )
    long["theorem1"] = np.select(
        [long["metric"] == "precision", long["metric"] == "recall"],
        [long["theorem1_precision"], long["theorem1_recall"]],
        np.nan,
    )
    long["paper_dataset"] = check_names(long["dataset"], paper_names)
    long["_rate"] = rate_key(long["noise_rate"])
    paper = published_results().query("table == 1")
    paper = pd.DataFrame(
        {
            "paper_dataset": paper["dataset"].astype(object),
            "noise_kind": paper["noise_kind"].astype(object),
            "_rate": rate_key(paper["noise_rate"]),
            "metric": paper["metric"].astype(object),
            "published": paper["value"],
            "published_note": paper["note"].astype(object),
        }
    )
    long = long.astype({"noise_kind": object, "metric": object})
    merged = long.merge(
        paper, how="left", on=["paper_dataset", "noise_kind", "_rate", "metric"], validate="many_to_one"
    )
    if match_selection:
        same = np.logical_and.reduce([merged[k] == v for k, v in TABLE1_SELECTION.items()])
        merged.loc[~same, "published"] = np.nan
        merged.loc[~same, "published_note"] = ""
    merged["difference"] = merged["reproduced"] - merged["published"]
    merged["published_note"] = merged["published_note"].fillna("")
    merged["metric"] = pd.Categorical(merged["metric"], categories=TABLE1_METRICS, ordered=True)
    columns = [
        "dataset",
        "paper_dataset",
        "noise_kind",
        "noise_rate",
        "K",
        "M",
        "t",
        "seeds",
        "metric",
        "reproduced",
        "theorem1",
        "published",
        "difference",
        "published_note",
        "sources",
    ]
    merged = noise_sort(merged[columns], ["dataset", "noise_kind", "noise_rate", "K", "M", "t", "metric"])
    return merged.astype({"metric": object})


def format_table1(frame: pd.DataFrame, *, decimals: int) -> pd.DataFrame:
    """Table 1 as the paper prints it (set sizes, precision, recall per noise setting), from :func:`compare_table1`'s
    frame.

    Set sizes (``CS``, ``SS``, ``CSS``, means over seeds) are shown to whole samples, precision and recall (%) to
    ``decimals`` digits. Returns one row per (dataset, noise, K, M, t): datasets in the paper's order, sym before
    asym, rates ascending. Two-level columns: ``("", c)`` for ``dataset``, ``noise`` ("sym 0.2"), ``K``, ``M``,
    ``t``, ``seeds``; then per metric a plain ``("", metric)`` column, or, where the metric has a Theorem 1 value
    or a published number in any row, the group ``(metric, "ours")``, ``(metric, "Theorem 1")`` (corrected Theorem
    1's expectation), ``(metric, "paper")`` and ``(metric, "Δ")`` (only those that have values; "—" where a row has
    none; the paper's row is CIFAR-10 at K=10, M=5, t=2).
    """
    frame = frame.reset_index(drop=True)
    digits = frame["metric"].map(lambda metric: 0 if metric in _COUNT_METRICS else decimals)

    def cell(value: float, places: int, *, sign: bool = False, missing: str) -> str:
        return missing if np.isnan(value) else format_number(value, places, sign=sign)

    parts = {
        "ours": [cell(v, d, missing=MISSING) for v, d in zip(frame["reproduced"], digits)],
        THEOREM: [cell(v, d, missing=NO_NUMBER) for v, d in zip(frame["theorem1"], digits)],
        PAPER: [cell(v, d, missing=NO_NUMBER) for v, d in zip(frame["published"], digits)],
        DELTA: [cell(v, d, sign=True, missing=NO_NUMBER) for v, d in zip(frame["difference"], digits)],
    }
    has_values = {
        THEOREM: frame["theorem1"].notna(),
        PAPER: frame["published"].notna(),
        DELTA: frame["published"].notna(),
    }
    keys = ["dataset", "noise_kind", "noise_rate", "K", "M", "t", "seeds"]
    titles = dataset_titles(frame)
    ranks = dataset_rank(frame)
    rows = noise_sort(frame[keys].drop_duplicates(), ["noise_kind", "noise_rate", "K", "M", "t"]).sort_values(
        "dataset", key=lambda names: names.map(ranks), kind="stable", ignore_index=True
    )
    table = pd.DataFrame(
        {
            ("", "dataset"): rows["dataset"].map(titles),
            ("", "noise"): [
                f"{kind} {rate_label(rate)}".strip() for kind, rate in zip(rows["noise_kind"], rows["noise_rate"])
            ],
            **{("", key): rows[key] for key in ("K", "M", "t", "seeds")},
        }
    )
    row_of = {tuple(row): i for i, row in enumerate(rows[keys].itertuples(index=False))}
    position = [row_of[tuple(row)] for row in frame[keys].itertuples(index=False)]
    for metric in [m for m in TABLE1_METRICS if m in set(frame["metric"])]:
        mine = (frame["metric"] == metric).to_numpy()
        shown = ["ours"] + [part for part in has_values if has_values[part][mine].any()]
        for part in shown:
            column = ("", metric) if shown == ["ours"] else (metric, part)
            values = pd.Series(NO_NUMBER, index=rows.index, dtype=object)
            values.iloc[np.asarray(position)[mine]] = np.asarray(parts[part], dtype=object)[mine]
            table[column] = values
    table.columns = pd.MultiIndex.from_tuples(table.columns)
    return table
