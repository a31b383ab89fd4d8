"""Tables and figures of the paper, rendered from the workflow's result files (no number typed by hand)."""

import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from enkcvs.comparison import (
    compare_table1,
    compare_table2,
    dataset_summary,
    describe_dataset,
    format_comparison,
    format_comparison_table1,
    table3,
)
from enkcvs.datasets import load_dataset
from enkcvs.io import atomic_path, read_json, read_table
from enkcvs.noise import parse_noise

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


#: Column titles of the ablation ladder's rungs (:data:`enkcvs.methods.ABLATION_LADDER`).
ABLATION_RUNGS = {
    "ce_true": "CE, true labels",
    "ce": "CE, noisy labels",
    "cs_only": "CS only (oracle)",
    "css_only": "CSS only (oracle)",
    "ss_only": "SS only",
    "ss_pseudo": "SS + pseudo rest",
    "enkcvs": "E-NKCVS (beta, gamma)",
}


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
                   "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
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


def write_table(frame: pd.DataFrame, *, markdown: PathLike, csv: PathLike, latex: PathLike, decimals: int,
                readable: pd.DataFrame | None = None, readable_latex: pd.DataFrame | None = None) -> None:
    """Write ``frame`` as CSV (full precision, with its ``sources``), ``readable`` (default: ``frame`` rounded,
    without sources) as Markdown, and ``readable_latex`` (default: ``readable``, e.g. with LaTeX bold instead of
    Markdown's) as booktabs LaTeX."""
    if readable is None:
        readable = frame.drop(columns="sources", errors="ignore").round(decimals)
    if readable_latex is None:
        readable_latex = readable
    with atomic_path(csv) as tmp:
        frame.to_csv(tmp, index=False)
    with atomic_path(markdown) as tmp:
        tmp.write_text(readable.to_markdown(index=False, floatfmt=f".{decimals}f") + "\n")
    with atomic_path(latex) as tmp:
        escaped = readable_latex.map(latex_escape).rename(columns=latex_escape)
        tmp.write_text(escaped.to_latex(index=False, float_format=f"%.{decimals}f", escape=False))


def _save_figure(figure, *, png: PathLike, pdf: PathLike, dpi: int) -> None:
    # No creation date in the PDF, so identical runs (and resumed ones) write identical bytes.
    for path, kwargs in ((png, {"dpi": dpi}), (pdf, {"metadata": {"CreationDate": None}})):
        with atomic_path(path) as tmp:
            figure.savefig(tmp, format=Path(path).suffix[1:], bbox_inches="tight", **kwargs)


def sensitivity_figure(
    metrics: pd.DataFrame, results: pd.DataFrame, *, K: int, M: int, t: int, png: PathLike, pdf: PathLike, dpi: int
) -> None:
    """Figure 1: precision, recall and the accuracy of a model trained on SS alone, against K at M = t = 1, against
    K at the main (M, t), and against M with t = M - 1 at the main K; one line per noise setting."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = ["noise", "K", "M", "t"]
    frame = metrics.groupby(keys)[["precision", "recall"]].mean().join(
        results.groupby(keys)["test_accuracy"].mean().rename("accuracy")
    ).reset_index()
    sweeps = [
        ("K", (frame["M"] == 1) & (frame["t"] == 1), "K (M = 1, t = 1)"),
        ("K", (frame["M"] == M) & (frame["t"] == t), f"K (M = {M}, t = {t})"),
        ("M", (frame["K"] == K) & (frame["t"] == frame["M"] - 1), f"M (K = {K}, t = M - 1)"),
    ]
    rows = [("precision", "precision (%)"), ("recall", "recall (%)"), ("accuracy", "test accuracy, SS only (%)")]
    figure, axes = plt.subplots(len(rows), len(sweeps), figsize=(4 * len(sweeps), 3 * len(rows)), squeeze=False)
    for column, (x, mask, xlabel) in enumerate(sweeps):
        for row, (value, ylabel) in enumerate(rows):
            ax = axes[row, column]
            for noise, part in frame[mask].groupby("noise"):
                part = part.sort_values(x)
                ax.plot(part[x], 100.0 * part[value], marker="o", label=noise)
            ax.set_xlabel(xlabel)
            ax.set_ylabel(ylabel)
            ax.grid(alpha=0.3)
    axes[0, 0].legend(title="noise")
    figure.tight_layout()
    _save_figure(figure, png=png, pdf=pdf, dpi=dpi)
    plt.close(figure)


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


def render_table1(
    *, metrics: list[PathLike], paper_names: dict[str, str | None], markdown: PathLike, csv: PathLike,
    latex: PathLike, decimals: int
) -> None:
    """Table 1 from the selection metrics JSONs: CSV of the reproduced rows (with their sources); Markdown and LaTeX
    with reproduced, published and difference side by side, and the corrected Theorem 1's expected precision and
    recall beside the measured ones."""
    reproduced = table1(collect_records(metrics))
    readable = format_comparison_table1(compare_table1(reproduced, paper_names=paper_names), decimals=decimals)
    keys = ["dataset", "noise_kind", "noise_rate", "K", "M", "t"]
    theorem = readable[keys].merge(reproduced, on=keys, how="left")  # in the readable table's row order
    for metric in ("precision", "recall"):
        readable.insert(readable.columns.get_loc(f"{metric} reproduced") + 1, f"{metric} Theorem 1",
                        [f"{value:.{decimals}f}" for value in theorem[f"theorem1_{metric}"]])
    write_table(reproduced, markdown=markdown, csv=csv, latex=latex, decimals=decimals, readable=readable)


def render_table2(
    *, results: list[PathLike], methods: list[str], paper_names: dict[str, str | None], markdown: PathLike,
    csv: PathLike, latex: PathLike, decimals: int
) -> None:
    """Table 2 from the final-model JSONs: long CSV (reproduced, published, difference, sources); wide Markdown and
    LaTeX with ``mean ± std`` beside the published value and the difference, the best reproduced mean in bold."""
    comparison = compare_table2(table2(collect_records(results), methods=methods), paper_names=paper_names)
    write_table(
        comparison, markdown=markdown, csv=csv, latex=latex, decimals=decimals,
        readable=format_comparison(comparison, decimals=decimals),
        readable_latex=format_comparison(comparison, decimals=decimals, bold="latex"),
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
    *, metrics: list[PathLike], results: list[PathLike], selection: dict[str, int], png: PathLike, pdf: PathLike,
    dpi: int
) -> None:
    """Figure 1 from the sensitivity selections and their SS-only final models."""
    sensitivity_figure(
        collect_records(metrics), collect_records(results), K=selection["K"], M=selection["M"], t=selection["t"],
        png=png, pdf=pdf, dpi=dpi,
    )


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
