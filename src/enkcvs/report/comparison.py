"""Reproduced results side by side with the paper's published numbers (:mod:`enkcvs.report.paper`): what the
paper-shaped tables share, namely how our datasets and noise rates are matched with the paper's, the order of datasets
and methods (the paper's first), and how numbers are printed.

Pandas only (no torch). The tables themselves: :mod:`enkcvs.report.paper_table1` (selection quality),
:mod:`enkcvs.report.paper_table2` (test accuracy), :mod:`enkcvs.report.paper_table3` (real-world noise). Their
``compare_*`` functions return long numeric frames (full precision, with the result files behind each row in
``sources``); their ``format_*`` functions turn them into readable wide string tables that
:func:`enkcvs.report.tabular.write_table` can write as Markdown and LaTeX. A reproduced setting without runs stays
missing (NaN, ``runs`` 0) and reads "missing"; a cell the paper does not have reads "—".
"""

from collections.abc import Mapping
from typing import Literal

import numpy as np
import pandas as pd

from enkcvs.report.paper import OWN_SOURCE, published_results

NO_NUMBER = "—"
MISSING = "missing"
NOT_RUN = "not run"
_NOISE_ORDER = {"sym": 0, "asym": 1, "real": 2}
#: Column-group titles of the noise kinds in the paper-shaped tables.
NOISE_TITLES = {"sym": "symmetric", "asym": "asymmetric", "real": "real"}
#: Sub-column labels beside a reproduced value: the paper's number, the difference, corrected Theorem 1's expectation.
PAPER, DELTA, THEOREM = "paper", "Δ", "Theorem 1"

Bold = Literal["markdown", "latex"] | None


def check_names(datasets: pd.Series, paper_names: Mapping[str, str | None]) -> pd.Series:
    """Map our dataset names to the paper's; every dataset needs an entry, every target must be a paper dataset."""
    unknown = sorted(set(datasets) - set(paper_names))
    if unknown:
        raise KeyError(f"paper_names has no entry for {unknown}: map each dataset to a paper dataset or None")
    known = set(published_results()["dataset"])
    bad = sorted({name for name in paper_names.values() if name is not None and name not in known})
    if bad:
        raise ValueError(f"paper_names maps to {bad}, which the paper does not have; known: {sorted(known)}")
    return pd.Series([paper_names[name] for name in datasets], index=datasets.index, dtype=object)


def rate_key(rates: pd.Series) -> pd.Series:
    """Noise rates rounded for joining (0.1 + 0.2 style float noise must not break a match)."""
    return pd.to_numeric(rates).astype(float).round(6)


def format_number(value: float, decimals: int, *, sign: bool = False) -> str:
    """``value`` to ``decimals`` digits after the point, with its sign (``+1.5``) when ``sign``."""
    return f"{value:+.{decimals}f}" if sign else f"{value:.{decimals}f}"


def format_mean_std(mean: float, std: float, decimals: int) -> str:
    """``mean ± std`` to ``decimals`` digits (``n/a`` for the spread of a single run)."""
    spread = "n/a" if np.isnan(std) else format_number(std, decimals)
    return f"{format_number(mean, decimals)} ± {spread}"


def embolden(text: str, bold: Bold) -> str:
    """``text`` in bold for Markdown or LaTeX, or unchanged (``bold`` None)."""
    if bold == "markdown":
        return f"**{text}**"
    if bold == "latex":
        return f"\\textbf{{{text}}}"
    return text


def check_bold(bold: Bold) -> None:
    """Refuse a ``bold`` other than ``"markdown"``, ``"latex"`` or None (ValueError)."""
    if bold not in ("markdown", "latex", None):
        raise ValueError(f"bold must be 'markdown', 'latex' or None, not {bold!r}")


def noise_sort(frame: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Sort by ``by`` with noise kinds in the paper's order (sym, asym, real) and datasets in order of appearance."""
    order = {name: i for i, name in enumerate(dict.fromkeys(frame["dataset"]))} if "dataset" in by else {}
    keys = {"dataset": lambda s: s.map(order), "noise_kind": lambda s: s.map(_NOISE_ORDER).fillna(len(_NOISE_ORDER))}
    return frame.sort_values(by, key=lambda s: keys.get(s.name, lambda x: x)(s), kind="stable", ignore_index=True)


def rate_label(rate: float) -> str:
    """A noise rate as a column label ("0.2"); none for real-world noise."""
    return "" if pd.isna(rate) else f"{rate:g}"


def dataset_titles(frame: pd.DataFrame) -> dict[str, str]:
    """How tables title each dataset: its name, with the paper dataset it is compared with ("mnist5k (MNIST)")."""
    pairs = frame[["dataset", "paper_dataset"]].drop_duplicates("dataset")
    return {
        name: name if pd.isna(paper) or paper == name else f"{name} ({paper})"
        for name, paper in zip(pairs["dataset"], pairs["paper_dataset"])
    }


def dataset_rank(frame: pd.DataFrame) -> dict[str, tuple]:
    """Datasets compared with the paper in the paper's order (MNIST, CIFAR-10, CIFAR-100, TREC, then Table 3's), the
    others after them in order of appearance."""
    paper = published_results().sort_values("table", kind="stable").query("table > 1")
    order = {name: i for i, name in enumerate(dict.fromkeys(paper["dataset"]))}
    pairs = frame[["dataset", "paper_dataset"]].drop_duplicates("dataset").reset_index(drop=True)
    return {
        name: (order.get(paper, len(order)), i)
        for i, (name, paper) in enumerate(zip(pairs["dataset"], pairs["paper_dataset"]))
    }


def method_rank(frame: pd.DataFrame) -> dict[str, tuple]:
    """The paper's baselines in its order (CE, Co-teaching, SL), then other methods in order of appearance, E-NKCVS
    last."""
    paper = [m for m in dict.fromkeys(published_results().query("table == 2")["method"]) if m != OWN_SOURCE]
    methods = list(dict.fromkeys(frame["method"]))
    return {
        m: (2, 0) if m == OWN_SOURCE else (0, paper.index(m)) if m in paper else (1, methods.index(m)) for m in methods
    }
