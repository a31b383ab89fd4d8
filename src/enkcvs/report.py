"""Tables and figures of the paper, rendered from the workflow's result files (no number typed by hand)."""

import itertools
import re
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from enkcvs.comparison import (
    compare_table1,
    compare_table2,
    dataset_summary,
    describe_dataset,
    format_table1,
    format_table2,
    table3,
)
from enkcvs.datasets import load_dataset
from enkcvs.io import atomic_path, read_json, read_table
from enkcvs.methods import ABLATION_LADDER, METHOD_TITLES
from enkcvs.noise import parse_noise
from enkcvs.paper import TABLE1_SELECTION, published_results

PathLike = str | Path


def collect_records(paths: list[PathLike]) -> pd.DataFrame:
    """One row per result JSON; nested mappings become ``outer.inner`` columns, noise kind and rate are added."""
    frame = pd.json_normalize([read_json(path) for path in paths])
    if frame.empty:
        return frame
    frame["source"] = [str(path) for path in paths]
    specs = frame["noise"].map(parse_noise)
    frame["noise_kind"] = specs.map(lambda spec: spec.kind)
    frame["noise_rate"] = specs.map(lambda spec: spec.rate)
    for column in ("seed", "K", "M", "t"):
        if column in frame:
            frame[column] = pd.to_numeric(frame[column]).astype("Int64")
    return frame


def _join_sources(paths: pd.Series) -> str:
    """The result files behind one table row, so every cell can be traced (and audited) back to them."""
    return ";".join(sorted(paths))


def table1(metrics: pd.DataFrame) -> pd.DataFrame:
    """Table 1: |CS|, |SS|, |CSS|, precision and recall (%) per dataset and noise, mean over seeds, with the
    corrected Theorem 1's prediction beside the measured values."""
    grouped = metrics.groupby(["dataset", "noise_kind", "noise_rate", "K", "M", "t"], sort=True)
    table = grouped.agg(
        seeds=("seed", "nunique"),
        CS=("CS", "mean"),
        SS=("SS", "mean"),
        CSS=("CSS", "mean"),
        precision=("precision", "mean"),
        recall=("recall", "mean"),
        theorem1_precision=("theorem1.precision", "mean"),
        theorem1_recall=("theorem1.recall", "mean"),
        sources=("source", _join_sources),
    ).reset_index()
    for column in ("precision", "recall", "theorem1_precision", "theorem1_recall"):
        table[column] *= 100.0
    return table


def table2(results: pd.DataFrame, *, methods: list[str]) -> pd.DataFrame:
    """Table 2 in long form: test accuracy (%) mean, std (over seeds, ddof=1) and run count per dataset, noise and
    method. Every configured method appears for every setting; a method without runs has count 0 and NaN values."""
    results = results.assign(accuracy=results["test_accuracy"] * 100.0)
    stats = (
        results.groupby(["dataset", "noise_kind", "noise_rate", "method"], dropna=False)  # real noise: rate NaN
        .agg(mean=("accuracy", "mean"), std=("accuracy", "std"), runs=("accuracy", "count"),
             sources=("source", _join_sources))
        .reset_index()
    )
    settings = results[["dataset", "noise_kind", "noise_rate"]].drop_duplicates()
    grid = settings.merge(pd.DataFrame({"method": methods}), how="cross")
    table = grid.merge(stats, how="left", on=["dataset", "noise_kind", "noise_rate", "method"])
    table["runs"] = table["runs"].fillna(0).astype(int)
    table["sources"] = table["sources"].fillna("")
    return table.sort_values(["dataset", "noise_kind", "noise_rate", "method"], ignore_index=True)


#: Column titles of the ablation ladder's rungs (:data:`enkcvs.methods.ABLATION_LADDER`): the methods' titles, with
#: what tells the two ends apart.
ABLATION_RUNGS = {**{method: METHOD_TITLES[method] for method in ABLATION_LADDER},
                  "ce": "CE, noisy labels", "ce_mixup": "CE + mixup, noisy labels", "enkcvs": "E-NKCVS (beta, gamma)"}


def ablation_table(results: pd.DataFrame, metrics: pd.DataFrame, *, rungs: list[str]) -> pd.DataFrame:
    """The ablation ladder, one row per dataset and noise setting (mean over seeds): the fold models' out-of-fold
    accuracy against the true labels (mean over iterations), the selection's precision, its lowest precision within one
    given class, its recall, and the pseudo labels' accuracy on the non-selected samples (all of them, those with a
    wrong given label, those with a right one), in %, then each rung's test accuracy mean and std (%) over seeds, and
    the sources."""
    keys = ["dataset", "noise_kind", "noise_rate"]
    by_class = metrics.filter(like="precision_by_given_class.")
    metrics = metrics.assign(
        oof_accuracy=metrics["iteration_accuracy"].map(np.mean),
        worst_class_precision=by_class.min(axis=1),
    )
    selection = metrics.groupby(keys).agg(
        seeds=("seed", "nunique"),
        oof_accuracy=("oof_accuracy", "mean"),
        precision=("precision", "mean"),
        worst_class_precision=("worst_class_precision", "mean"),
        recall=("recall", "mean"),
        non_selected=("pseudo_label_accuracy.samples", "mean"),
        non_selected_noisy=("pseudo_label_accuracy.noisy", "mean"),
        pseudo_accuracy=("pseudo_label_accuracy.all", "mean"),
        pseudo_accuracy_noisy=("pseudo_label_accuracy.on_noisy", "mean"),
        pseudo_accuracy_clean=("pseudo_label_accuracy.on_clean", "mean"),
    )
    selection[[c for c in selection if c.startswith(("oof", "precision", "worst", "recall", "pseudo"))]] *= 100.0
    stats = table2(results, methods=rungs).set_index(keys + ["method"])
    rung_columns = stats[["mean", "std"]].unstack("method")
    rung_columns.columns = [f"{method}_{stat}" for stat, method in rung_columns.columns]
    rung_columns = rung_columns[[f"{method}_{stat}" for method in rungs for stat in ("mean", "std")]]
    selections = metrics.groupby(keys)["source"].agg(_join_sources)
    models = stats["sources"].groupby(keys).agg(";".join)
    sources = pd.concat([selections, models], axis=1).agg(";".join, axis=1).rename("sources")
    return selection.join(rung_columns).join(sources).reset_index()


def format_ablation(table: pd.DataFrame, *, rungs: list[str], decimals: int) -> pd.DataFrame:
    """Readable ablation ladder: the setting, out-of-fold accuracy, precision (lowest class) / recall, pseudo-label
    accuracy (all; on wrong labels; on right ones) and "mean ± std" per rung under its title
    (:data:`ABLATION_RUNGS`)."""
    def pct(value: float) -> str:
        return "—" if pd.isna(value) else f"{value:.{decimals}f}"

    readable = pd.DataFrame({
        "dataset": table["dataset"],
        "noise": [f"{kind} {rate:g}" for kind, rate in zip(table["noise_kind"], table["noise_rate"])],
        "seeds": table["seeds"],
        "out-of-fold acc. %": [pct(value) for value in table["oof_accuracy"]],
        "precision (lowest class) / recall %": [
            f"{pct(p)} ({pct(w)}) / {pct(r)}" for p, w, r in
            zip(table["precision"], table["worst_class_precision"], table["recall"])
        ],
        "not selected (wrong label)": [f"{n:.0f} ({w:.0f})" for n, w in
                                      zip(table["non_selected"], table["non_selected_noisy"])],
        "pseudo label acc. % (on wrong / right labels)": [
            f"{pct(a)} ({pct(w)} / {pct(r)})" for a, w, r in
            zip(table["pseudo_accuracy"], table["pseudo_accuracy_noisy"], table["pseudo_accuracy_clean"])
        ],
    })
    for method in rungs:
        readable[ABLATION_RUNGS[method]] = [
            "missing" if pd.isna(mean) else f"{mean:.{decimals}f} ± {'n/a' if pd.isna(std) else f'{std:.{decimals}f}'}"
            for mean, std in zip(table[f"{method}_mean"], table[f"{method}_std"])
        ]
    return readable


_LATEX_SPECIALS = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                   "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                   # outside pdfLaTeX's default input encoding
                   "±": r"$\pm$", "Δ": r"$\Delta$", "—": "---", "×": r"$\times$"}
_LATEX_BOLD = re.compile(r"\\textbf\{(.*)\}", re.DOTALL)


def latex_escape(value: Any) -> Any:
    """A table cell or header as LaTeX text: special characters escaped, a ``\\textbf{...}`` wrapper (the best
    cell of a row) kept; numbers unchanged."""
    if not isinstance(value, str):
        return value
    bold = _LATEX_BOLD.fullmatch(value)
    text = bold[1] if bold else value
    text = "".join(_LATEX_SPECIALS.get(char, char) for char in text)
    return rf"\textbf{{{text}}}" if bold else text


def _flat_header(frame: pd.DataFrame) -> pd.DataFrame:
    """Two-level columns as one header line: ``("asymmetric", "0.4 paper")`` -> ``"asymmetric 0.4 paper"``."""
    if not isinstance(frame.columns, pd.MultiIndex):
        return frame
    return frame.set_axis([" ".join(part for part in column if part) for column in frame.columns], axis=1)


def latex_tabular(frame: pd.DataFrame, *, decimals: int, group_rows: bool = False) -> str:
    r"""A booktabs ``tabular``: cells escaped (:func:`latex_escape`), two-level columns as centred groups each
    underlined by a ``\cmidrule``; with ``group_rows``, the first column's value only on the first row of each run of
    equal values, runs separated by ``\midrule`` (the paper's dataset blocks)."""
    escaped = frame.map(latex_escape).rename(columns=latex_escape)
    starts = []
    if group_rows:
        first = escaped.iloc[:, 0]
        starts = [i for i in range(1, len(first)) if first.iloc[i] != first.iloc[i - 1]]
        escaped.iloc[:, 0] = first.where(first.ne(first.shift()), "")
    text = escaped.to_latex(index=False, float_format=f"%.{decimals}f", escape=False, multicolumn=True,
                            multicolumn_format="c")
    lines = text.splitlines()
    top, middle = lines.index(r"\toprule"), lines.index(r"\midrule")
    if isinstance(frame.columns, pd.MultiIndex):
        rules, column = [], 1
        for group, span in itertools.groupby(frame.columns.get_level_values(0)):
            width = len(list(span))
            if group:
                rules.append(rf"\cmidrule(lr){{{column}-{column + width - 1}}}")
            column += width
        lines.insert(top + 2, " ".join(rules))
        middle += 1
    for start in reversed(starts):
        lines.insert(middle + 1 + start, r"\midrule")
    return "\n".join(lines) + "\n"


def write_table(frame: pd.DataFrame, *, markdown: PathLike, csv: PathLike, latex: PathLike, decimals: int,
                readable: pd.DataFrame | None = None, readable_latex: pd.DataFrame | None = None,
                caption: str = "", group_rows: bool = False) -> None:
    """Write ``frame`` as CSV (full precision, with its ``sources``), ``readable`` (default: ``frame`` rounded,
    without sources) as Markdown with ``caption`` below it, and ``readable_latex`` (default: ``readable``, e.g. with
    LaTeX bold instead of Markdown's) as a booktabs tabular (:func:`latex_tabular`) with the caption as a comment."""
    if readable is None:
        readable = frame.drop(columns="sources", errors="ignore").round(decimals)
    if readable_latex is None:
        readable_latex = readable
    with atomic_path(csv) as tmp:
        frame.to_csv(tmp, index=False)
    with atomic_path(markdown) as tmp:
        # formatted text ("+0.40", "0.4 paper") stays as written; only float columns are formatted here
        numbers = any(pd.api.types.is_float_dtype(dtype) for dtype in readable.dtypes)
        table = _flat_header(readable).to_markdown(index=False, floatfmt=f".{decimals}f", disable_numparse=not numbers)
        tmp.write_text(table + (f"\n\n{caption}" if caption else "") + "\n")
    with atomic_path(latex) as tmp:
        comment = "".join(f"% {line}\n" for line in textwrap.wrap(caption, 116))
        packages = "% needs \\usepackage{booktabs}\n"
        tmp.write_text(packages + comment + latex_tabular(readable_latex, decimals=decimals, group_rows=group_rows))


def _save_figure(figure, *, png: PathLike, pdf: PathLike, dpi: int) -> None:
    # No creation date in the PDF, so identical runs (and resumed ones) write identical bytes.
    for path, kwargs in ((png, {"dpi": dpi}), (pdf, {"metadata": {"CreationDate": None}})):
        with atomic_path(path) as tmp:
            figure.savefig(tmp, format=Path(path).suffix[1:], bbox_inches="tight", **kwargs)


def sensitivity_table(metrics: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """Figure 1's points: per noise setting and (K, M, t), the mean and std over seeds (ddof=1; NaN for one seed) of
    precision, recall and the SS-only model's test accuracy (%), with the number of seeds."""
    keys = ["noise", "K", "M", "t"]
    frame = metrics[keys + ["seed", "precision", "recall"]].merge(
        results[keys + ["seed", "test_accuracy"]].rename(columns={"test_accuracy": "accuracy"}), on=keys + ["seed"],
        how="left", validate="one_to_one",
    )
    values = ["precision", "recall", "accuracy"]
    frame[values] *= 100.0
    table = frame.groupby(keys)[values].agg(["mean", "std"])
    table.columns = [f"{value}_{stat}" for value, stat in table.columns]
    return table.join(frame.groupby(keys)["seed"].nunique().rename("seeds")).reset_index()


def draw_sensitivity(
    points: pd.DataFrame, *, K: int, M: int, t: int, published: pd.DataFrame | None = None
):
    """Figure 1 as the paper draws it: one column of panels per swept parameter (K at M = t = 1 and at the main
    (M, t); M at the main K with t = M - 1; t at the main K and M), rows precision, recall and the test accuracy of a
    model trained on SS alone; one colour per noise setting, mean ± std over seeds as error bars, integer ticks.

    Parameters
    ----------
    points : :func:`sensitivity_table`'s frame.
    K, M, t : the main selection.
    published : the paper's Table 1 numbers of the study's dataset (columns ``noise``, ``metric``, ``value``; the
        paper's K = 10, M = 5, t = 2), drawn as stars where a panel passes through that selection; None for none.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    paper = TABLE1_SELECTION
    sweeps = [  # (x, title, [(points on the line, line style, what is fixed, where the paper's point lies)])
        ("K", "(a) varying K", [
            ((points["M"] == 1) & (points["t"] == 1), ":", "M = t = 1", False),
            ((points["M"] == M) & (points["t"] == t), "-", f"M = {M}, t = {t}", (M, t) == (paper["M"], paper["t"])),
        ]),
        ("M", f"(b) varying M (K = {K}, t = M - 1)", [
            ((points["K"] == K) & (points["t"] == points["M"] - 1), "-", "", False),
        ]),
        ("t", f"(c) varying t (K = {K}, M = {M})", [
            ((points["K"] == K) & (points["M"] == M), "-", "", (K, M) == (paper["K"], paper["M"])),
        ]),
    ]
    rows = [("precision", "precision (%)"), ("recall", "recall (%)"), ("accuracy", "test accuracy, SS only (%)")]
    noises = list(dict.fromkeys(points.sort_values("noise")["noise"]))
    colours = dict(zip(noises, plt.get_cmap("tab10").colors))
    figure, axes = plt.subplots(len(rows), len(sweeps), figsize=(4.2 * len(sweeps), 3.2 * len(rows)), squeeze=False)
    for column, (x, title, lines) in enumerate(sweeps):
        for row, (value, ylabel) in enumerate(rows):
            ax = axes[row, column]
            ticks = set()
            for mask, style, _, paper_line in lines:
                for noise, part in points[mask].groupby("noise"):
                    part = part.sort_values(x)
                    ticks |= set(part[x])
                    ax.errorbar(part[x], part[f"{value}_mean"], yerr=part[f"{value}_std"].fillna(0.0),
                                color=colours[noise], linestyle=style, marker="o", markersize=4, capsize=3)
                    star = published is not None and paper_line and value in ("precision", "recall")
                    cell = published[(published["noise"] == noise) & (published["metric"] == value)] if star else []
                    if len(cell):
                        at = paper[x]
                        ticks.add(at)
                        ax.plot([at], cell["value"], marker="*", markersize=13, color=colours[noise],
                                markeredgecolor="black", linestyle="none")
            ax.set_xticks(sorted(ticks))
            ax.set_xlabel(x)
            ax.set_ylabel(ylabel)
            ax.grid(alpha=0.3)
        axes[0, column].set_title(title)
    handles = [Line2D([], [], color=colours[noise], marker="o", label=noise) for noise in noises]
    handles += [Line2D([], [], color="grey", linestyle=style, label=f"K sweep at {fixed}")
                for _, style, fixed, _ in sweeps[0][2]]
    if published is not None and len(published):
        handles.append(Line2D([], [], marker="*", markersize=13, color="white", markeredgecolor="black",
                              linestyle="none", label=f"paper, Table 1 (K = {paper['K']}, M = {paper['M']}, "
                                                        f"t = {paper['t']})"))
    seeds = sorted(set(points["seeds"]))
    figure.suptitle(f"mean ± std over {' or '.join(map(str, seeds))} seeds", fontsize="small")
    figure.tight_layout()
    figure.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=min(len(handles), 4),
                  fontsize="small")
    return figure


def theory_figure(metrics: pd.DataFrame, *, png: PathLike, pdf: PathLike, dpi: int) -> None:
    """Corrected Theorem 1's expected precision and recall against the measured ones, one point per selection."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 2, figsize=(9, 4.2))
    for ax, value in zip(axes, ("precision", "recall")):
        for (dataset, kind), part in metrics.groupby(["dataset", "noise_kind"]):
            ax.scatter(100.0 * part[f"theorem1.{value}"], 100.0 * part[value], label=f"{dataset}, {kind}", alpha=0.8)
        low = 100.0 * min(metrics[value].min(), metrics[f"theorem1.{value}"].min())
        ax.plot([low, 100], [low, 100], color="grey", linestyle="--", linewidth=1, label="measured = predicted")
        ax.set_xlabel(f"Theorem 1 {value} (%)")
        ax.set_ylabel(f"measured {value} (%)")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize="small")
    figure.tight_layout()
    _save_figure(figure, png=png, pdf=pdf, dpi=dpi)
    plt.close(figure)


TABLE1_CAPTION = (
    "Selection quality at (K, M, t): sizes of the clean set CS, the selected set SS and their intersection CSS "
    "(means over seeds), precision = |CSS| / |SS| and recall = |CSS| / |CS| (%, means over seeds), each beside the "
    "corrected Theorem 1's expectation from the measured fold accuracies. Where a row matches the paper's Table 1 "
    "(CIFAR-10, K = 10, M = 5, t = 2) its number and the difference (ours - paper) follow."
)
TABLE2_CAPTION = (
    "Test accuracy (%) of the final models on the clean test set, mean ± std over seeds (runs per cell: table2.csv). "
    "A dataset in parentheses is compared with that paper dataset: 'paper' is the paper's Table 2 cell as printed "
    "(mean ± std over 5 runs), Δ = ours - paper. Bold: the best mean of each dataset and noise setting. 'missing': a "
    "configured run without a result."
)


def render_table1(
    *, metrics: list[PathLike], paper_names: dict[str, str | None], markdown: PathLike, csv: PathLike,
    latex: PathLike, decimals: int
) -> None:
    """Table 1 from the selection metrics JSONs: CSV of the reproduced rows (with their sources); Markdown and LaTeX
    in the paper's layout (:func:`enkcvs.comparison.format_table1`): set sizes, precision and recall with the
    corrected Theorem 1's expectation and, where the paper has the row, its number and the difference."""
    reproduced = table1(collect_records(metrics))
    readable = format_table1(compare_table1(reproduced, paper_names=paper_names), decimals=decimals)
    write_table(reproduced, markdown=markdown, csv=csv, latex=latex, decimals=decimals, readable=readable,
                caption=TABLE1_CAPTION, group_rows=True)


def render_table2(
    *, results: list[PathLike], methods: list[str], paper_names: dict[str, str | None], markdown: PathLike,
    csv: PathLike, latex: PathLike, decimals: int
) -> None:
    """Table 2 from the final-model JSONs: long CSV (reproduced, published, difference, sources); Markdown and LaTeX
    in the paper's layout (:func:`enkcvs.comparison.format_table2`: a row per dataset and method, a column per noise
    setting, the paper's number and the difference beside each reproduced one, the best mean in bold)."""
    comparison = compare_table2(table2(collect_records(results), methods=methods), paper_names=paper_names)
    write_table(
        comparison, markdown=markdown, csv=csv, latex=latex, decimals=decimals,
        readable=format_table2(comparison, decimals=decimals),
        readable_latex=format_table2(comparison, decimals=decimals, bold="latex"),
        caption=TABLE2_CAPTION, group_rows=True,
    )


def render_ablation(
    *, results: list[PathLike], metrics: list[PathLike], rungs: list[str], markdown: PathLike, csv: PathLike,
    latex: PathLike, decimals: int
) -> None:
    """The ablation ladder from the main selections' metrics and the final models of every rung."""
    table = ablation_table(collect_records(results), collect_records(metrics), rungs=rungs)
    write_table(table, markdown=markdown, csv=csv, latex=latex, decimals=decimals,
                readable=format_ablation(table, rungs=rungs, decimals=decimals))


def render_table3(
    *, results: list[PathLike], methods: list[str], paper_names: dict[str, str | None], markdown: PathLike,
    csv: PathLike, latex: PathLike, decimals: int
) -> None:
    """Table 3 (Clothing-1M, WebVision) as published, each row's source marked, beside the final-model JSONs of the
    real-noise runs (none until the user enables those datasets)."""
    reproduced = table2(collect_records(results), methods=methods) if results else None
    frame = table3(reproduced, decimals=decimals, paper_names=paper_names)
    write_table(frame, markdown=markdown, csv=csv, latex=latex, decimals=decimals)


def render_dataset_summary(
    *, datasets: dict[str, PathLike], markdown: PathLike, csv: PathLike, latex: PathLike
) -> None:
    """Sizes, classes and input shape of every prepared dataset."""
    summary = dataset_summary({name: describe_dataset(load_dataset(path)) for name, path in datasets.items()})
    write_table(summary, markdown=markdown, csv=csv, latex=latex, decimals=0)


def render_sensitivity_figure(
    *, metrics: list[PathLike], results: list[PathLike], selection: dict[str, int], paper_name: str | None,
    png: PathLike, pdf: PathLike, dpi: int
) -> None:
    """Figure 1 (:func:`draw_sensitivity`) from the sensitivity selections and their SS-only final models, with the
    paper's Table 1 numbers of ``paper_name`` (the study's dataset as the paper names it, or None)."""
    import matplotlib.pyplot as plt

    records = collect_records(metrics)
    published = None
    if paper_name is not None:
        paper = published_results().query("table == 1 and dataset == @paper_name")
        specs = {noise: parse_noise(noise) for noise in dict.fromkeys(records["noise"])}
        cells = [paper[(paper["noise_kind"] == spec.kind) & np.isclose(paper["noise_rate"], spec.rate)].assign(
            noise=noise) for noise, spec in specs.items()]
        published = pd.concat(cells)[["noise", "metric", "value"]]
    figure = draw_sensitivity(sensitivity_table(records, collect_records(results)), K=selection["K"],
                              M=selection["M"], t=selection["t"], published=published)
    _save_figure(figure, png=png, pdf=pdf, dpi=dpi)
    plt.close(figure)


RESOURCES_CAPTION = (
    "Wall time (s) and peak resident memory (MB) of the training jobs behind the report, per rule, from Snakemake's "
    "benchmark files (results/benchmarks/), on the machine that ran them."
)


def resource_table(benchmarks: dict[str, list[PathLike]]) -> pd.DataFrame:
    """Time and memory per rule from Snakemake's ``benchmark:`` files (tab-separated, one row per job run).

    Parameters
    ----------
    benchmarks : mapping of str to list of path
        Rule name to its jobs' benchmark files; rules without files are left out.

    Returns
    -------
    pandas.DataFrame
        One row per rule, in the given order: ``rule``, ``jobs``, ``wall_s_total``, ``wall_s_mean``, ``wall_s_max``,
        ``max_rss_mb_mean``, ``max_rss_mb_max`` (Snakemake's ``max_rss``; NaN where a job ended before it was
        sampled) and ``cpu_s_total``.
    """
    rows = []
    for rule, paths in benchmarks.items():
        if not paths:
            continue
        jobs = pd.concat([pd.read_csv(path, sep="\t") for path in paths], ignore_index=True)
        wall, rss = jobs["s"].astype(float), pd.to_numeric(jobs["max_rss"], errors="coerce")
        rows.append({"rule": rule, "jobs": len(paths), "wall_s_total": wall.sum(), "wall_s_mean": wall.mean(),
                     "wall_s_max": wall.max(), "max_rss_mb_mean": rss.mean(), "max_rss_mb_max": rss.max(),
                     "cpu_s_total": pd.to_numeric(jobs["cpu_time"], errors="coerce").sum()})
    return pd.DataFrame(rows, columns=["rule", "jobs", "wall_s_total", "wall_s_mean", "wall_s_max",
                                       "max_rss_mb_mean", "max_rss_mb_max", "cpu_s_total"])


def render_resource_usage(
    *, benchmarks: dict[str, list[PathLike]], markdown: PathLike, csv: PathLike, latex: PathLike, decimals: int
) -> None:
    """:func:`resource_table` as Markdown (with a caption), CSV and LaTeX."""
    write_table(resource_table(benchmarks), markdown=markdown, csv=csv, latex=latex, decimals=decimals,
                caption=RESOURCES_CAPTION)


def theory_table(metrics: pd.DataFrame) -> pd.DataFrame:
    """One row per selection: measured precision and recall, the corrected Theorem 1's, the gaps (Theorem 1 minus
    measured) and how dependent the M iterations are (:func:`enkcvs.theory.iteration_dependence`; empty at M = 1),
    all in %."""
    percent = {
        "precision": "precision", "recall": "recall", "theorem1_precision": "theorem1.precision",
        "theorem1_recall": "theorem1.recall",
        **{name: f"iteration_dependence.{name}" for name in
           ("agreement", "agreement_independent", "all_wrong", "all_wrong_independent")},
    }
    table = metrics[["dataset", "noise", "seed", "K", "M", "t"]].copy()
    for column, source in percent.items():
        table[column] = 100.0 * metrics[source] if source in metrics else np.nan
    table["precision_gap"] = table["theorem1_precision"] - table["precision"]
    table["recall_gap"] = table["theorem1_recall"] - table["recall"]
    table["sources"] = metrics["source"]
    return table.sort_values(["dataset", "noise", "seed", "K", "M", "t"], ignore_index=True)


def render_theory_figure(
    *, metrics: list[PathLike], png: PathLike, pdf: PathLike, markdown: PathLike, csv: PathLike, dpi: int,
    decimals: int
) -> None:
    """Theory-vs-measured figure and table (:func:`theory_table`; Markdown and CSV) from every selection metrics
    JSON."""
    records = collect_records(metrics)
    theory_figure(records, png=png, pdf=pdf, dpi=dpi)
    table = theory_table(records)
    with atomic_path(csv) as tmp:
        table.to_csv(tmp, index=False)
    with atomic_path(markdown) as tmp:
        tmp.write_text(table.drop(columns="sources").to_markdown(index=False, floatfmt=f".{decimals}f") + "\n")


CONFIDENT_LEARNING_SCORES = ["kept_precision", "kept_recall", "flagged_precision", "flagged_recall"]


def _means_over_seeds(frames: list[pd.DataFrame], **aggregations: tuple[str, str]) -> pd.DataFrame:
    """Per-setting comparison tables joined and averaged over seeds: one row per dataset, noise and method (methods in
    their first order of appearance), with ``seeds`` and the named pandas ``aggregations``."""
    frame = pd.concat(frames, ignore_index=True)
    order = list(dict.fromkeys(frame["method"]))
    table = (
        frame.groupby(["dataset", "noise", "method"], sort=False)
        .agg(seeds=("seed", "nunique"), **aggregations)
        .reset_index()
    )
    table["method"] = pd.Categorical(table["method"], categories=order, ordered=True)
    return table.sort_values(["dataset", "noise", "method"], ignore_index=True).astype({"method": str})


def confident_learning_table(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """The E-NKCVS vs confident-learning comparison: per dataset, noise and method, the mean over seeds of the kept
    and flagged sets' sizes, precision and recall (fractions), with the number of seeds."""
    return _means_over_seeds(frames, kept=("kept", "mean"), flagged=("flagged", "mean"),
                             **{score: (score, "mean") for score in CONFIDENT_LEARNING_SCORES})


def render_confident_learning(
    *, tables: list[PathLike], markdown: PathLike, csv: PathLike, latex: PathLike, png: PathLike, pdf: PathLike,
    decimals: int, dpi: int
) -> None:
    """The comparison table (precision and recall in %; Markdown, CSV, LaTeX) and figure from every setting's
    comparison file."""
    from enkcvs.confident import comparison_figure

    table = confident_learning_table([read_table(path)[0] for path in tables])
    percent = table.assign(**{score: table[score] * 100.0 for score in CONFIDENT_LEARNING_SCORES})
    write_table(percent, markdown=markdown, csv=csv, latex=latex, decimals=decimals)
    comparison_figure(table, png=png, pdf=pdf, dpi=dpi)


RANKING_SCORES = ["precision_at_20", "precision_at_100", "precision_at_errors", "auroc", "auprc"]


def ranking_table(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """How well each score ranks the true label errors first: per dataset, noise and score, the mean over seeds of
    precision at 20, at 100 and at the number of errors, AUROC and AUPRC (fractions), with the number of seeds and
    the mean number of errors. ``frames``: :func:`enkcvs.confident.compare_rankings` tables with their setting."""
    return _means_over_seeds(frames, errors=("errors", "mean"), **{s: (s, "mean") for s in RANKING_SCORES})


def render_ranking(
    *, tables: list[PathLike], markdown: PathLike, csv: PathLike, latex: PathLike, decimals: int
) -> None:
    """The ranking comparison (scores in %; Markdown, CSV, LaTeX) from every setting's ranking file."""
    table = ranking_table([read_table(path)[0] for path in tables])
    write_table(table.assign(**{score: table[score] * 100.0 for score in RANKING_SCORES}),
                markdown=markdown, csv=csv, latex=latex, decimals=decimals)


def render_label_issue_grid(*, dataset: PathLike, table: PathLike, top: int, png: PathLike, dpi: int) -> None:
    """The ``top`` most likely mislabeled images in a grid, each titled "given -> pseudo" with its rank."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = load_dataset(dataset)
    issues = read_table(table)[0].head(top)
    columns = min(len(issues), 8)
    rows = -(-len(issues) // columns)
    figure, axes = plt.subplots(rows, columns, figsize=(1.6 * columns, 1.9 * rows), squeeze=False)
    for axis in axes.flat:
        axis.axis("off")
    for axis, row in zip(axes.flat, issues.itertuples()):
        axis.imshow(_image(data, row.sample), cmap="gray")
        axis.set_title(f"#{row.rank}: {row.given_label} -> {row.suggested_label}", fontsize=7)
    with atomic_path(png) as tmp:
        figure.savefig(tmp, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(figure)


def _image(data, sample: int) -> np.ndarray:
    """A training image as (H, W) or (H, W, 3) for display: from memory, or read from its file."""
    if data.modality == "image_files":
        from PIL import Image

        with Image.open(Path(data.image_root) / data.x_train[sample]) as image:
            return np.asarray(image.convert("RGB"))
    image = np.moveaxis(data.x_train[sample], 0, -1)
    return image[..., 0] if image.shape[-1] == 1 else image
