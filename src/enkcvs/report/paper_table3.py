"""Table 3 (real-world noise): the paper's rows with each number's provenance, beside reproduced results."""

from collections.abc import Mapping

import numpy as np
import pandas as pd

from enkcvs.report.comparison import MISSING, NO_NUMBER, NOT_RUN, format_mean_std
from enkcvs.report.paper import METHOD_NAMES, OWN_SOURCE, published_results


def _source_text(source: str) -> str:
    return "published (this paper)" if source == OWN_SOURCE else f"quoted from {source}"


def table3(
    reproduced: pd.DataFrame | None, *, decimals: int, paper_names: Mapping[str, str | None] | None = None
) -> pd.DataFrame:
    """The paper's Table 3 (real-world noise) with every row, each number's provenance, and reproduced results.

    Parameters
    ----------
    reproduced : pandas.DataFrame or None
        Long frame with columns ``dataset``, ``method``, ``mean``, ``std``, ``runs`` (e.g.
        :func:`enkcvs.report.tables.table2` on the real-world datasets; one row per dataset and method), or None when
        nothing was run.
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
            runs[(row.dataset, row.method)] = format_mean_std(row.mean, row.std, decimals) if ran else MISSING
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
