"""The report's figures (matplotlib): Figure 1's parameter sweep, Theorem 1 against the measured selection, and E-NKCVS
beside confident learning (the review sheet of the most likely mislabelled images is
:mod:`enkcvs.labelissues.review`'s).

``draw_*`` functions return the figure (for tests to inspect); the others write it to disk. matplotlib is imported
inside each function: the workflow starts a process per report job, and most of them draw nothing.
"""

import re

import pandas as pd

from enkcvs.io import PathLike, save_figure
from enkcvs.report.curves import SETTING
from enkcvs.report.paper import TABLE1_SELECTION


def draw_sensitivity(points: pd.DataFrame, *, K: int, M: int, t: int, published: pd.DataFrame | None = None):
    """Figure 1 as the paper draws it: one column of panels per swept parameter (K at M = t = 1 and at the main
    (M, t); M at the main K with t = M - 1; t at the main K and M), rows precision, recall and the test accuracy of a
    model trained on SS alone; one colour per noise setting, mean ± std over seeds as error bars, integer ticks.

    Parameters
    ----------
    points : :func:`enkcvs.report.tables.sensitivity_table`'s frame.
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
        (
            "K",
            "(a) varying K",
            [
                ((points["M"] == 1) & (points["t"] == 1), ":", "M = t = 1", False),
                ((points["M"] == M) & (points["t"] == t), "-", f"M = {M}, t = {t}", (M, t) == (paper["M"], paper["t"])),
            ],
        ),
        (
            "M",
            f"(b) varying M (K = {K}, t = M - 1)",
            [
                ((points["K"] == K) & (points["t"] == points["M"] - 1), "-", "", False),
            ],
        ),
        (
            "t",
            f"(c) varying t (K = {K}, M = {M})",
            [
                ((points["K"] == K) & (points["M"] == M), "-", "", (K, M) == (paper["K"], paper["M"])),
            ],
        ),
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
                    ax.errorbar(
                        part[x],
                        part[f"{value}_mean"],
                        yerr=part[f"{value}_std"].fillna(0.0),
                        color=colours[noise],
                        linestyle=style,
                        marker="o",
                        markersize=4,
                        capsize=3,
                    )
                    star = published is not None and paper_line and value in ("precision", "recall")
                    cell = published[(published["noise"] == noise) & (published["metric"] == value)] if star else []
                    if len(cell):
                        at = paper[x]
                        ticks.add(at)
                        ax.plot(
                            [at],
                            cell["value"],
                            marker="*",
                            markersize=13,
                            color=colours[noise],
                            markeredgecolor="black",
                            linestyle="none",
                        )
            ax.set_xticks(sorted(ticks))
            ax.set_xlabel(x)
            ax.set_ylabel(ylabel)
            ax.grid(alpha=0.3)
        axes[0, column].set_title(title)
    handles = [Line2D([], [], color=colours[noise], marker="o", label=noise) for noise in noises]
    handles += [
        Line2D([], [], color="grey", linestyle=style, label=f"K sweep at {fixed}")
        for _, style, fixed, _ in sweeps[0][2]
    ]
    if published is not None and len(published):
        handles.append(
            Line2D(
                [],
                [],
                marker="*",
                markersize=13,
                color="white",
                markeredgecolor="black",
                linestyle="none",
                label=f"paper, Table 1 (K = {paper['K']}, M = {paper['M']}, t = {paper['t']})",
            )
        )
    seeds = sorted(set(points["seeds"]))
    figure.suptitle(f"mean ± std over {' or '.join(map(str, seeds))} seeds", fontsize="small")
    figure.tight_layout()
    figure.legend(
        handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=min(len(handles), 4), fontsize="small"
    )
    return figure


def sensitivity_figure(
    points: pd.DataFrame,
    *,
    K: int,
    M: int,
    t: int,
    published: pd.DataFrame | None,
    png: PathLike,
    pdf: PathLike,
    dpi: int,
) -> None:
    """:func:`draw_sensitivity`'s figure as PNG and PDF."""
    import matplotlib.pyplot as plt

    figure = draw_sensitivity(points, K=K, M=M, t=t, published=published)
    save_figure(figure, png=png, pdf=pdf, dpi=dpi)
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
    save_figure(figure, png=png, pdf=pdf, dpi=dpi)
    plt.close(figure)


def test_curve_figure(curves: pd.DataFrame, summary: pd.DataFrame, *, png: PathLike, pdf: PathLike, dpi: int) -> None:
    """Clean test accuracy per epoch of each final model with a curve (:func:`enkcvs.report.curves.epoch_curves`),
    a panel per dataset and noise setting, a line per method and seed, and the paper's cell of each method
    (``summary``'s ``published``, :func:`enkcvs.report.curves.curve_summary`) dashed in its colour."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = list(curves.groupby(SETTING, sort=True))
    published = dict(list(summary.drop_duplicates([*SETTING, "method"]).groupby(SETTING)))
    figure, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4.2), squeeze=False)
    colours = {method: f"C{index}" for index, method in enumerate(dict.fromkeys(curves["method"]))}
    for ax, ((dataset, kind, rate), panel) in zip(axes[0], panels):
        for (method, seed), line in panel.groupby(["method", "seed"], sort=True):
            ax.plot(line["epoch"], line["test_accuracy"], color=colours[method], label=f"{method}, seed {seed}")
        for cell in published[(dataset, kind, rate)].dropna(subset="published").itertuples():
            ax.axhline(
                cell.published,
                color=colours[cell.method],
                linestyle="--",
                linewidth=1,
                label=f"{cell.method}, the paper's cell",
            )
        ax.set_title(f"{dataset}, {kind} {rate:g}")
        ax.set_xlabel("epoch")
        ax.set_ylabel("clean test accuracy (%)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")
    figure.tight_layout()
    save_figure(figure, png=png, pdf=pdf, dpi=dpi)
    plt.close(figure)


def _family(method: str) -> str:
    """A comparison method without its "(mean of M)" suffix: the colour it shares with its single-iteration twin."""
    return re.sub(r" \(mean of \d+\)$", "", method)


def draw_comparison(frame: pd.DataFrame):
    """Precision against recall of every method, one row of panels per dataset and noise setting (titled): the
    flagged set (cleanlab's scoring) on the left, the kept set (the paper's) on the right. Each method family has one
    colour; a single iteration's point is a square, a mean over M iterations a diamond, E-NKCVS a hollow circle (dark
    at the configured M, light at M = 1); the legend names every method.

    Parameters
    ----------
    frame : the columns of :func:`enkcvs.labelissues.confident.compare_with_confident_learning` with ``dataset`` and
        ``noise``; scores as fractions in [0, 1] (plotted as %).

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    settings = list(dict.fromkeys(zip(frame["dataset"], frame["noise"])))
    panels = [("flagged", "flagged set (detected label errors)"), ("kept", "kept set (selected samples)")]
    figure, axes = plt.subplots(len(settings), len(panels), figsize=(9, 3.4 * len(settings)), squeeze=False)
    families = list(dict.fromkeys(map(_family, frame["method"])))
    colours = dict(zip(families, plt.get_cmap("tab10").colors * 4))
    enkcvs = [name for name in families if name.startswith("E-NKCVS")]
    for row, (dataset, noise) in enumerate(settings):
        part = frame[(frame["dataset"] == dataset) & (frame["noise"] == noise)]
        for ax, (kind, title) in zip(axes[row], panels):
            for name, recall, precision in zip(part["method"], part[f"{kind}_recall"], part[f"{kind}_precision"]):
                family = _family(name)
                if family in enkcvs:  # large hollow circles: a cleanlab point on the same spot stays visible
                    shade = "tab:blue" if family == enkcvs[-1] else "lightsteelblue"
                    style = {"s": 120, "facecolors": "none", "edgecolors": shade, "linewidths": 2, "zorder": 3}
                else:
                    style = {"s": 36, "color": colours[family], "marker": "D" if family != name else "s"}
                ax.scatter(100.0 * recall, 100.0 * precision, label=name, **style)
            ax.set_title(f"{dataset}, {noise}: {title}", fontsize="medium")
            ax.set_xlabel(f"{kind}-set recall (%)")
            ax.set_ylabel(f"{kind}-set precision (%)")
            ax.grid(alpha=0.3)
    handles = {}
    for ax in axes.flat:
        handles.update(zip(*reversed(ax.get_legend_handles_labels())))  # one entry per method
    figure.tight_layout()
    figure.legend(
        handles.values(), handles.keys(), loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=3, fontsize="small"
    )
    return figure


def comparison_figure(frame: pd.DataFrame, *, png: PathLike, pdf: PathLike, dpi: int) -> None:
    """:func:`draw_comparison`'s figure as PNG and PDF."""
    import matplotlib.pyplot as plt

    figure = draw_comparison(frame)
    save_figure(figure, png=png, pdf=pdf, dpi=dpi)
    plt.close(figure)
