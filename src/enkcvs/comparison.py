"""Reproduced results side by side with the paper's published numbers (:mod:`enkcvs.paper`).

Pandas only (no torch). The ``compare_*`` functions return long numeric frames (full precision, with the result files
behind each row in ``sources``); the ``format_*`` functions turn them into readable wide string tables that
:func:`enkcvs.report.write_table` can write as Markdown and LaTeX. A reproduced setting without runs stays missing
(NaN, ``runs`` 0) and reads "missing"; a cell the paper does not have reads "—".
"""

from collections.abc import Mapping
from typing import Literal

import numpy as np
import pandas as pd

from enkcvs.paper import METHOD_NAMES, OWN_SOURCE, TABLE1_SELECTION, published_results

NO_NUMBER = "—"
MISSING = "missing"
NOT_RUN = "not run"
TABLE1_METRICS = ("CS", "SS", "CSS", "precision", "recall")
_COUNT_METRICS = ("CS", "SS", "CSS")
_NOISE_ORDER = {"sym": 0, "asym": 1, "real": 2}

Bold = Literal["markdown", "latex"] | None


def _check_names(datasets: pd.Series, paper_names: Mapping[str, str | None]) -> pd.Series:
    """Map our dataset names to the paper's; every dataset needs an entry, every target must be a paper dataset."""
    unknown = sorted(set(datasets) - set(paper_names))
    if unknown:
        raise KeyError(f"paper_names has no entry for {unknown}: map each dataset to a paper dataset or None")
    known = set(published_results()["dataset"])
    bad = sorted({name for name in paper_names.values() if name is not None and name not in known})
    if bad:
        raise ValueError(f"paper_names maps to {bad}, which the paper does not have; known: {sorted(known)}")
    return pd.Series([paper_names[name] for name in datasets], index=datasets.index, dtype=object)


def _rate_key(rates: pd.Series) -> pd.Series:
    """Noise rates rounded for joining (0.1 + 0.2 style float noise must not break a match)."""
    return pd.to_numeric(rates).astype(float).round(6)


def _fmt(value: float, decimals: int, *, sign: bool = False) -> str:
    return f"{value:+.{decimals}f}" if sign else f"{value:.{decimals}f}"


def _mean_std(mean: float, std: float, decimals: int) -> str:
    spread = "n/a" if np.isnan(std) else _fmt(std, decimals)
    return f"{_fmt(mean, decimals)} ± {spread}"


def _embolden(text: str, bold: Bold) -> str:
    if bold == "markdown":
        return f"**{text}**"
    if bold == "latex":
        return f"\\textbf{{{text}}}"
    return text


def _check_bold(bold: Bold) -> None:
    if bold not in ("markdown", "latex", None):
        raise ValueError(f"bold must be 'markdown', 'latex' or None, not {bold!r}")


def _noise_sort(frame: pd.DataFrame, by: list[str], *, datasets: list[str] | None = None) -> pd.DataFrame:
    """Sort by ``by`` with noise kinds in the paper's order (sym, asym, real) and datasets in the order given
    (default: of appearance)."""
    order = {name: i for i, name in enumerate(datasets or dict.fromkeys(frame["dataset"]))}
    keys = {"dataset": lambda s: s.map(order), "noise_kind": lambda s: s.map(_NOISE_ORDER).fillna(len(_NOISE_ORDER))}
    return frame.sort_values(by, key=lambda s: keys.get(s.name, lambda x: x)(s), kind="stable", ignore_index=True)


def compare_table2(
    reproduced: pd.DataFrame, *, paper_names: Mapping[str, str | None], all_published: bool = False
) -> pd.DataFrame:
    """Reproduced Table 2 cells beside the paper's.

    Parameters
    ----------
    reproduced : pandas.DataFrame
        :func:`enkcvs.report.table2`'s long frame: columns ``dataset``, ``noise_kind``, ``noise_rate``, ``method``,
        ``mean``, ``std`` (test accuracy, %), ``runs`` (0 for a configured method without results), ``sources``.
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
        (Int64, as printed), ``difference`` (``mean - published``; NaN where either is missing), ``sources``.
    """
    frame = reproduced[["dataset", "noise_kind", "noise_rate", "method", "mean", "std", "runs", "sources"]].copy()
    frame = frame.astype({"dataset": object, "noise_kind": object, "method": object})
    mapping = dict(zip(frame["dataset"], _check_names(frame["dataset"], paper_names)))
    frame["_rate"] = _rate_key(frame["noise_rate"])
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
    settings = frame.drop_duplicates(["dataset", "noise_kind", "_rate"])[["dataset", "noise_kind", "_rate",
                                                                          "noise_rate"]]
    methods = pd.DataFrame({"method": list(dict.fromkeys(frame["method"]))}, dtype=object)
    grid = settings.merge(methods, how="cross")
    frame = grid.merge(frame.drop(columns="noise_rate"), how="left", on=["dataset", "noise_kind", "_rate", "method"],
                       validate="one_to_one")
    frame["runs"] = frame["runs"].fillna(0).astype(int)
    frame["sources"] = frame["sources"].fillna("").astype(object)
    frame["paper_dataset"] = pd.Series([mapping[name] for name in frame["dataset"]], index=frame.index, dtype=object)

    # Unmapped rows (paper_dataset None) never match: the paper's keys are never null.
    merged = frame.merge(paper, how="left", on=["paper_dataset", "noise_kind", "_rate", "method"],
                         validate="many_to_one")
    merged["difference"] = merged["mean"] - merged["published"]
    columns = ["dataset", "paper_dataset", "noise_kind", "noise_rate", "method", "mean", "std", "runs", "published",
               "published_std", "published_decimals", "difference", "sources"]
    return _noise_sort(merged[columns], ["dataset", "noise_kind", "noise_rate"])


def _published_table2() -> pd.DataFrame:
    """The paper's Table 2 keyed for joining: ``paper_dataset``, ``noise_kind``, ``_rate``, ``method``."""
    paper = published_results().query("table == 2")
    return pd.DataFrame(
        {
            "paper_dataset": paper["dataset"].astype(object),
            "noise_kind": paper["noise_kind"].astype(object),
            "_rate": _rate_key(paper["noise_rate"]),
            "method": paper["method"].astype(object),
            "published": paper["value"],
            "published_std": paper["std"],
            "published_decimals": paper["printed_decimals"].astype("Int64"),
        }
    )


def format_comparison(frame: pd.DataFrame, *, decimals: int, bold: Bold = "markdown") -> pd.DataFrame:
    """Readable wide Table 2 comparison from :func:`compare_table2`'s frame.

    Parameters
    ----------
    frame : pandas.DataFrame
        :func:`compare_table2`'s output.
    decimals : int
        Digits after the point of reproduced values and differences (published values keep the paper's digits).
    bold : {"markdown", "latex", None}
        Mark the best reproduced mean of each row (all ties at ``decimals``) as ``**x**`` or ``\\textbf{x}``, or not.

    Returns
    -------
    pandas.DataFrame
        One row per (dataset, noise); columns ``dataset``, ``paper dataset``, ``noise_kind``, ``noise_rate``, then per
        method (in order of appearance) ``<method> reproduced`` ("m ± s", or "missing"), ``<method> published``
        ("m ± s", or "—" where the paper has no number) and ``<method> diff`` (signed, or "—").
    """
    _check_bold(bold)
    frame = frame.reset_index(drop=True)
    has_run = (frame["runs"] > 0) & frame["mean"].notna()
    rounded = frame["mean"].round(decimals).where(has_run)
    rows = ["dataset", "noise_kind", "noise_rate"]
    best = rounded.groupby([frame[c] for c in rows], dropna=False).transform("max")

    def reproduced_cell(i: int) -> str:
        if not has_run[i]:
            return MISSING
        text = _mean_std(frame.at[i, "mean"], frame.at[i, "std"], decimals)
        return _embolden(text, bold) if rounded[i] == best[i] else text

    def published_cell(i: int) -> str:
        if np.isnan(frame.at[i, "published"]):
            return NO_NUMBER
        digits = int(frame.at[i, "published_decimals"])
        return _mean_std(frame.at[i, "published"], frame.at[i, "published_std"], digits)

    def diff_cell(i: int) -> str:
        value = frame.at[i, "difference"]
        return NO_NUMBER if np.isnan(value) else _fmt(value, decimals, sign=True)

    cells = frame[rows + ["paper_dataset", "method"]].assign(
        reproduced=[reproduced_cell(i) for i in frame.index],
        published=[published_cell(i) for i in frame.index],
        diff=[diff_cell(i) for i in frame.index],
    )
    cells["paper_dataset"] = cells["paper_dataset"].map(lambda name: NO_NUMBER if pd.isna(name) else name)
    wide = cells.pivot(index=["dataset", "paper_dataset", "noise_kind", "noise_rate"], columns="method",
                       values=["reproduced", "published", "diff"])
    methods = list(dict.fromkeys(frame["method"]))
    wide.columns = [f"{method} {part}" for part, method in wide.columns]
    for column in wide.columns:  # holes only in hand-built frames: compare_table2 completes the grid
        wide[column] = wide[column].fillna(MISSING if column.endswith(" reproduced") else NO_NUMBER)
    wide = wide[[f"{m} {part}" for m in methods for part in ("reproduced", "published", "diff")]].reset_index()
    wide = _noise_sort(wide, ["dataset", "noise_kind", "noise_rate"], datasets=list(dict.fromkeys(frame["dataset"])))
    return wide.rename(columns={"paper_dataset": "paper dataset"}).rename_axis(columns=None)


def compare_table1(
    reproduced_table1: pd.DataFrame, *, paper_names: Mapping[str, str | None], match_selection: bool = False
) -> pd.DataFrame:
    """Reproduced Table 1 (selection quality) beside the paper's CIFAR-10 numbers, one row per metric.

    Parameters
    ----------
    reproduced_table1 : pandas.DataFrame
        :func:`enkcvs.report.table1`'s frame: columns ``dataset``, ``noise_kind``, ``noise_rate``, ``K``, ``M``,
        ``t``, ``seeds``, ``CS``, ``SS``, ``CSS`` (mean counts), ``precision``, ``recall`` (%), ``sources``.
    paper_names : mapping of str to str or None
        Our dataset name to the paper's, or None. The paper's Table 1 has ``CIFAR-10`` only.
    match_selection : bool
        Only compare rows run at the paper's selection (:data:`enkcvs.paper.TABLE1_SELECTION`, K=10, M=5, t=2).
        By default every (K, M, t) is compared; the output keeps K, M and t so the difference stays visible.

    Returns
    -------
    pandas.DataFrame
        One row per reproduced row and metric (``CS``, ``SS``, ``CSS``, ``precision``, ``recall``): columns
        ``dataset``, ``paper_dataset``, ``noise_kind``, ``noise_rate``, ``K``, ``M``, ``t``, ``seeds``, ``metric``,
        ``reproduced``, ``published`` (NaN where the paper has none), ``difference``, ``published_note`` (the
        transcription's note, e.g. that the paper's eps = 0.4 recall disagrees with its own counts), ``sources``.
    """
    ids = ["dataset", "noise_kind", "noise_rate", "K", "M", "t", "seeds", "sources"]
    long = reproduced_table1[ids + list(TABLE1_METRICS)].melt(
        id_vars=ids, value_vars=list(TABLE1_METRICS), var_name="metric", value_name="reproduced"
    )
    long["paper_dataset"] = _check_names(long["dataset"], paper_names)
    long["_rate"] = _rate_key(long["noise_rate"])
    paper = published_results().query("table == 1")
    paper = pd.DataFrame(
        {
            "paper_dataset": paper["dataset"].astype(object),
            "noise_kind": paper["noise_kind"].astype(object),
            "_rate": _rate_key(paper["noise_rate"]),
            "metric": paper["metric"].astype(object),
            "published": paper["value"],
            "published_note": paper["note"].astype(object),
        }
    )
    long = long.astype({"noise_kind": object, "metric": object})
    merged = long.merge(paper, how="left", on=["paper_dataset", "noise_kind", "_rate", "metric"],
                        validate="many_to_one")
    if match_selection:
        same = np.logical_and.reduce([merged[k] == v for k, v in TABLE1_SELECTION.items()])
        merged.loc[~same, "published"] = np.nan
        merged.loc[~same, "published_note"] = ""
    merged["difference"] = merged["reproduced"] - merged["published"]
    merged["published_note"] = merged["published_note"].fillna("")
    merged["metric"] = pd.Categorical(merged["metric"], categories=TABLE1_METRICS, ordered=True)
    columns = ["dataset", "paper_dataset", "noise_kind", "noise_rate", "K", "M", "t", "seeds", "metric",
               "reproduced", "published", "difference", "published_note", "sources"]
    merged = _noise_sort(merged[columns], ["dataset", "noise_kind", "noise_rate", "K", "M", "t", "metric"])
    return merged.astype({"metric": object})


def format_comparison_table1(frame: pd.DataFrame, *, decimals: int) -> pd.DataFrame:
    """Readable wide Table 1 comparison from :func:`compare_table1`'s frame.

    Set sizes (``CS``, ``SS``, ``CSS``, means over seeds) are shown to whole samples, precision and recall (%) to
    ``decimals`` digits. Returns one row per (dataset, noise, K, M, t); columns ``dataset``, ``paper dataset``,
    ``noise_kind``, ``noise_rate``, ``K``, ``M``, ``t``, ``seeds``, then per metric ``<metric> reproduced``,
    ``<metric> published`` ("—" where the paper has none; the paper's row is K=10, M=5, t=2) and ``<metric> diff``.
    """
    frame = frame.reset_index(drop=True)
    digits = frame["metric"].map(lambda metric: 0 if metric in _COUNT_METRICS else decimals)

    def cell(value: float, places: int, *, sign: bool = False, missing: str) -> str:
        return missing if np.isnan(value) else _fmt(value, places, sign=sign)

    cells = frame.assign(
        paper_dataset=frame["paper_dataset"].map(lambda name: NO_NUMBER if pd.isna(name) else name),
        reproduced=[cell(v, d, missing=MISSING) for v, d in zip(frame["reproduced"], digits)],
        published=[cell(v, d, missing=NO_NUMBER) for v, d in zip(frame["published"], digits)],
        diff=[cell(v, d, sign=True, missing=NO_NUMBER) for v, d in zip(frame["difference"], digits)],
    )
    rows = ["dataset", "paper_dataset", "noise_kind", "noise_rate", "K", "M", "t", "seeds"]
    wide = cells.pivot(index=rows, columns="metric", values=["reproduced", "published", "diff"])
    wide.columns = [f"{metric} {part}" for part, metric in wide.columns]
    metrics = [m for m in TABLE1_METRICS if m in set(frame["metric"])]
    wide = wide[[f"{m} {part}" for m in metrics for part in ("reproduced", "published", "diff")]].reset_index()
    wide = _noise_sort(wide, ["dataset", "noise_kind", "noise_rate", "K", "M", "t"],
                       datasets=list(dict.fromkeys(frame["dataset"])))
    return wide.rename(columns={"paper_dataset": "paper dataset"}).rename_axis(columns=None)


def _source_text(source: str) -> str:
    return "published (this paper)" if source == OWN_SOURCE else f"quoted from {source}"


def table3(
    reproduced: pd.DataFrame | None, *, decimals: int, paper_names: Mapping[str, str | None] | None = None
) -> pd.DataFrame:
    """The paper's Table 3 (real-world noise) with every row, each number's provenance, and reproduced results.

    Parameters
    ----------
    reproduced : pandas.DataFrame or None
        Long frame with columns ``dataset``, ``method``, ``mean``, ``std``, ``runs`` (e.g. :func:`enkcvs.report.table2`
        on the real-world datasets; one row per dataset and method), or None when nothing was run.
    decimals : int
        Digits after the point of reproduced values (published values keep the paper's digits).
    paper_names : mapping of str to str or None, optional
        Our dataset name to the paper's (``Clothing-1M``, ``WebVision``); by default ``reproduced`` already uses the
        paper's names. Datasets mapped to None, or to a dataset not in Table 3, are left out.

    Returns
    -------
    pandas.DataFrame
        One row per method, in the paper's order, then any reproduced method the paper does not list. Columns
        ``method`` (as printed) and, per paper dataset, ``<dataset> published`` (the number, or "—"),
        ``<dataset> source`` ("published (this paper)" / "quoted from <citation key>" / "—") and
        ``<dataset> reproduced`` ("m ± s", "missing" for a configured run without results, or "not run").
    """
    paper = published_results().query("table == 3")
    datasets = list(dict.fromkeys(paper["dataset"]))
    methods = list(dict.fromkeys(paper["method"]))
    published = {(row.dataset, row.method): row for row in paper.itertuples()}

    runs: dict[tuple[str, str], str] = {}
    if reproduced is not None and not reproduced.empty:
        names = reproduced["dataset"].map(
            (lambda name: name) if paper_names is None else (lambda name: paper_names.get(name, name))
        )
        keep = names.isin(datasets)
        part = reproduced[keep].assign(dataset=names[keep])
        duplicated = part.duplicated(["dataset", "method"])
        if duplicated.any():
            raise ValueError(f"reproduced has several rows for {part.loc[duplicated, ['dataset', 'method']].values}")
        for row in part.itertuples():
            ran = row.runs > 0 and not np.isnan(row.mean)
            runs[(row.dataset, row.method)] = _mean_std(row.mean, row.std, decimals) if ran else MISSING
        methods += [m for m in dict.fromkeys(part["method"]) if m not in methods]

    records = []
    for method in methods:
        record = {"method": METHOD_NAMES.get(method, method)}
        for dataset in datasets:
            cell = published.get((dataset, method))
            record[f"{dataset} published"] = NO_NUMBER if cell is None else f"{cell.value:.{cell.printed_decimals}f}"
            record[f"{dataset} source"] = NO_NUMBER if cell is None else _source_text(cell.source)
            record[f"{dataset} reproduced"] = runs.get((dataset, method), NOT_RUN)
        records.append(record)
    return pd.DataFrame.from_records(records)


def describe_dataset(dataset) -> dict:
    """The :func:`dataset_summary` entry of an :class:`enkcvs.datasets.Dataset`: the input shape is (C, H, W) of
    in-memory images, (3, crop, crop) of image files, and None for text."""
    if dataset.modality == "text":
        shape = None
    elif dataset.modality == "image_files":
        shape = (3, dataset.image_transform["crop"], dataset.image_transform["crop"])
    else:
        shape = tuple(int(n) for n in dataset.x_train.shape[1:])
    return {"train": len(dataset.y_train), "test": len(dataset.y_test), "classes": dataset.num_classes, "shape": shape}


def dataset_summary(datasets: Mapping[str, Mapping]) -> pd.DataFrame:
    """The dataset summary table (the paper's appendix table), for the datasets actually used.

    Parameters
    ----------
    datasets : mapping of str to mapping
        Dataset name to ``{"train": int, "test": int, "classes": int, "shape": (C, H, W) or None}`` (see
        :func:`describe_dataset`); None (e.g. text) reads "—".

    Returns
    -------
    pandas.DataFrame
        One row per dataset, in the given order; columns ``dataset`` (str), ``train``, ``test``, ``classes`` (int) and
        ``input shape`` (str, "C × H × W").
    """
    rows = []
    for name, info in datasets.items():
        missing = sorted({"train", "test", "classes", "shape"} - set(info))
        if missing:
            raise KeyError(f"dataset {name!r} lacks {missing}")
        shape = info["shape"]
        rows.append(
            {
                "dataset": name,
                "train": int(info["train"]),
                "test": int(info["test"]),
                "classes": int(info["classes"]),
                "input shape": NO_NUMBER if shape is None else " × ".join(str(int(n)) for n in shape),
            }
        )
    return pd.DataFrame(rows, columns=["dataset", "train", "test", "classes", "input shape"])
