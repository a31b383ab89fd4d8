"""Reproduced results side by side with the paper's published numbers (:mod:`enkcvs.paper`).

Pandas only (no torch). The ``compare_*`` functions return long numeric frames (full precision, with the result files
behind each row in ``sources``); the ``format_*`` functions turn them into readable wide string tables that
:func:`enkcvs.tabular.write_table` can write as Markdown and LaTeX. A reproduced setting without runs stays missing
(NaN, ``runs`` 0) and reads "missing"; a cell the paper does not have reads "—".
"""

from collections.abc import Mapping
from typing import Literal

import numpy as np
import pandas as pd

from enkcvs.methods import METHOD_TITLES
from enkcvs.paper import METHOD_NAMES, OWN_SOURCE, TABLE1_SELECTION, published_results

NO_NUMBER = "—"
MISSING = "missing"
NOT_RUN = "not run"
TABLE1_METRICS = ("CS", "SS", "CSS", "precision", "recall")
_COUNT_METRICS = ("CS", "SS", "CSS")
_NOISE_ORDER = {"sym": 0, "asym": 1, "real": 2}
#: Column-group titles of the noise kinds in the paper-shaped tables.
NOISE_TITLES = {"sym": "symmetric", "asym": "asymmetric", "real": "real"}
#: Sub-column labels beside a reproduced value: the paper's number, the difference, corrected Theorem 1's expectation.
PAPER, DELTA, THEOREM = "paper", "Δ", "Theorem 1"

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


def _noise_sort(frame: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Sort by ``by`` with noise kinds in the paper's order (sym, asym, real) and datasets in order of appearance."""
    order = {name: i for i, name in enumerate(dict.fromkeys(frame["dataset"]))} if "dataset" in by else {}
    keys = {"dataset": lambda s: s.map(order), "noise_kind": lambda s: s.map(_NOISE_ORDER).fillna(len(_NOISE_ORDER))}
    return frame.sort_values(by, key=lambda s: keys.get(s.name, lambda x: x)(s), kind="stable", ignore_index=True)


def compare_table2(
    reproduced: pd.DataFrame, *, paper_names: Mapping[str, str | None], all_published: bool = False
) -> pd.DataFrame:
    """Reproduced Table 2 cells beside the paper's.

    Parameters
    ----------
    reproduced : pandas.DataFrame
        :func:`enkcvs.tables.table2`'s long frame: columns ``dataset``, ``noise_kind``, ``noise_rate``, ``method``,
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


def format_table2(frame: pd.DataFrame, *, decimals: int, bold: Bold = "markdown") -> pd.DataFrame:
    """Table 2 as the paper prints it, from :func:`compare_table2`'s frame.

    Parameters
    ----------
    frame : pandas.DataFrame
        :func:`compare_table2`'s output.
    decimals : int
        Digits after the point of reproduced values and differences (published values keep the paper's digits).
    bold : {"markdown", "latex", None}
        Mark the best reproduced mean of each dataset and noise setting (all ties at ``decimals``) as ``**x**`` or
        ``\\textbf{x}``, or not.

    Returns
    -------
    pandas.DataFrame
        One row per dataset and method: datasets in the paper's order (those without a paper dataset last), methods in
        the paper's order with E-NKCVS last (:data:`enkcvs.methods.METHOD_TITLES`). Two-level columns: ``("",
        "dataset")``, ``("", "method")``, then one column per noise setting grouped under ``symmetric`` /
        ``asymmetric`` / ``real`` with the rate as label (rates ascending), holding "mean ± std" ("missing" for a
        configured run without results, "" where the dataset has no such setting); a setting where the paper has a
        number is followed by ``"<rate> paper"`` (as printed, "—" where the paper has none) and ``"<rate> Δ"``
        (reproduced minus published).
    """
    _check_bold(bold)
    frame = frame.reset_index(drop=True)
    has_run = (frame["runs"] > 0) & frame["mean"].notna()
    rounded = frame["mean"].round(decimals).where(has_run)
    labels = frame["noise_rate"].map(_rate_label)
    best = rounded.groupby([frame["dataset"], frame["noise_kind"], labels], dropna=False).transform("max")

    settings = _noise_sort(frame[["noise_kind", "noise_rate"]].drop_duplicates(), ["noise_kind", "noise_rate"])
    compared = set(zip(frame.loc[frame["published"].notna(), "noise_kind"], labels[frame["published"].notna()]))
    columns = [("", "dataset"), ("", "method")]
    for kind, rate in zip(settings["noise_kind"], settings["noise_rate"]):
        group, label = NOISE_TITLES.get(kind, kind), _rate_label(rate)
        columns.append((group, label))
        if (kind, label) in compared:
            columns += [(group, f"{label} {PAPER}".strip()), (group, f"{label} {DELTA}".strip())]

    titles = dataset_titles(frame)
    records = {}
    for i in frame.index:
        dataset, method, kind = frame.at[i, "dataset"], frame.at[i, "method"], frame.at[i, "noise_kind"]
        group, label = NOISE_TITLES.get(kind, kind), labels[i]
        record = records.setdefault((dataset, method), {("", "dataset"): titles[dataset],
                                                        ("", "method"): METHOD_TITLES.get(method, method)})
        if has_run[i]:
            text = _mean_std(frame.at[i, "mean"], frame.at[i, "std"], decimals)
            record[(group, label)] = _embolden(text, bold) if rounded[i] == best[i] else text
        else:
            record[(group, label)] = MISSING
        if (kind, label) in compared:
            published, digits = frame.at[i, "published"], frame.at[i, "published_decimals"]
            difference = frame.at[i, "difference"]
            record[(group, f"{label} {PAPER}".strip())] = (
                NO_NUMBER if np.isnan(published) else _mean_std(published, frame.at[i, "published_std"], int(digits)))
            record[(group, f"{label} {DELTA}".strip())] = (
                NO_NUMBER if np.isnan(difference) else _fmt(difference, decimals, sign=True))
    datasets, methods = _dataset_rank(frame), method_rank(frame)
    order = sorted(records, key=lambda key: (datasets[key[0]], methods[key[1]]))
    table = pd.DataFrame([records[key] for key in order], columns=pd.MultiIndex.from_tuples(columns))
    return table.fillna("")


def _rate_label(rate: float) -> str:
    """A noise rate as a column label ("0.2"); none for real-world noise."""
    return "" if pd.isna(rate) else f"{rate:g}"


def dataset_titles(frame: pd.DataFrame) -> dict[str, str]:
    """How tables title each dataset: its name, with the paper dataset it is compared with ("mnist5k (MNIST)")."""
    pairs = frame[["dataset", "paper_dataset"]].drop_duplicates("dataset")
    return {name: name if pd.isna(paper) or paper == name else f"{name} ({paper})"
            for name, paper in zip(pairs["dataset"], pairs["paper_dataset"])}


def _dataset_rank(frame: pd.DataFrame) -> dict[str, tuple]:
    """Datasets compared with the paper in the paper's order (MNIST, CIFAR-10, CIFAR-100, TREC, then Table 3's), the
    others after them in order of appearance."""
    paper = published_results().sort_values("table", kind="stable").query("table > 1")
    order = {name: i for i, name in enumerate(dict.fromkeys(paper["dataset"]))}
    pairs = frame[["dataset", "paper_dataset"]].drop_duplicates("dataset").reset_index(drop=True)
    return {name: (order.get(paper, len(order)), i) for i, (name, paper) in enumerate(zip(pairs["dataset"],
                                                                                         pairs["paper_dataset"]))}


def method_rank(frame: pd.DataFrame) -> dict[str, tuple]:
    """The paper's baselines in its order (CE, Co-teaching, SL), then other methods in order of appearance, E-NKCVS
    last."""
    paper = [m for m in dict.fromkeys(published_results().query("table == 2")["method"]) if m != OWN_SOURCE]
    methods = list(dict.fromkeys(frame["method"]))
    return {m: (2, 0) if m == OWN_SOURCE else (0, paper.index(m)) if m in paper else (1, methods.index(m))
            for m in methods}


def compare_table1(
    reproduced_table1: pd.DataFrame, *, paper_names: Mapping[str, str | None], match_selection: bool = False
) -> pd.DataFrame:
    """Reproduced Table 1 (selection quality) beside the paper's CIFAR-10 numbers, one row per metric.

    Parameters
    ----------
    reproduced_table1 : pandas.DataFrame
        :func:`enkcvs.tables.table1`'s frame: columns ``dataset``, ``noise_kind``, ``noise_rate``, ``K``, ``M``,
        ``t``, ``seeds``, ``CS``, ``SS``, ``CSS`` (mean counts), ``precision``, ``recall``,
        ``theorem1_precision``, ``theorem1_recall`` (%), ``sources``.
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
        ``reproduced``, ``theorem1`` (corrected Theorem 1's precision or recall; NaN for the set sizes),
        ``published`` (NaN where the paper has none), ``difference``, ``published_note`` (the transcription's note,
        e.g. that the paper's eps = 0.4 recall disagrees with its own counts), ``sources``.
    """
    theorem = ["theorem1_precision", "theorem1_recall"]
    ids = ["dataset", "noise_kind", "noise_rate", "K", "M", "t", "seeds", "sources"]
    long = reproduced_table1[ids + theorem + list(TABLE1_METRICS)].melt(
        id_vars=ids + theorem, value_vars=list(TABLE1_METRICS), var_name="metric", value_name="reproduced"
    )
    long["theorem1"] = np.select([long["metric"] == "precision", long["metric"] == "recall"],
                                 [long["theorem1_precision"], long["theorem1_recall"]], np.nan)
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
               "reproduced", "theorem1", "published", "difference", "published_note", "sources"]
    merged = _noise_sort(merged[columns], ["dataset", "noise_kind", "noise_rate", "K", "M", "t", "metric"])
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
        return missing if np.isnan(value) else _fmt(value, places, sign=sign)

    parts = {
        "ours": [cell(v, d, missing=MISSING) for v, d in zip(frame["reproduced"], digits)],
        THEOREM: [cell(v, d, missing=NO_NUMBER) for v, d in zip(frame["theorem1"], digits)],
        PAPER: [cell(v, d, missing=NO_NUMBER) for v, d in zip(frame["published"], digits)],
        DELTA: [cell(v, d, sign=True, missing=NO_NUMBER) for v, d in zip(frame["difference"], digits)],
    }
    has_values = {THEOREM: frame["theorem1"].notna(), PAPER: frame["published"].notna(),
                  DELTA: frame["published"].notna()}
    keys = ["dataset", "noise_kind", "noise_rate", "K", "M", "t", "seeds"]
    titles = dataset_titles(frame)
    ranks = _dataset_rank(frame)
    rows = _noise_sort(frame[keys].drop_duplicates(), ["noise_kind", "noise_rate", "K", "M", "t"]).sort_values(
        "dataset", key=lambda names: names.map(ranks), kind="stable", ignore_index=True)
    table = pd.DataFrame({
        ("", "dataset"): rows["dataset"].map(titles),
        ("", "noise"): [f"{kind} {_rate_label(rate)}".strip() for kind, rate in zip(rows["noise_kind"],
                                                                                     rows["noise_rate"])],
        **{("", key): rows[key] for key in ("K", "M", "t", "seeds")},
    })
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


def _source_text(source: str) -> str:
    return "published (this paper)" if source == OWN_SOURCE else f"quoted from {source}"


def table3(
    reproduced: pd.DataFrame | None, *, decimals: int, paper_names: Mapping[str, str | None] | None = None
) -> pd.DataFrame:
    """The paper's Table 3 (real-world noise) with every row, each number's provenance, and reproduced results.

    Parameters
    ----------
    reproduced : pandas.DataFrame or None
        Long frame with columns ``dataset``, ``method``, ``mean``, ``std``, ``runs`` (e.g. :func:`enkcvs.tables.table2`
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
