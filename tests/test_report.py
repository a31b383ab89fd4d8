"""Rendering of the paper-shaped tables and figures on small hand-built frames."""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from enkcvs.report import draw_sensitivity, latex_tabular, resource_table, sensitivity_table, write_table


def _grouped() -> pd.DataFrame:
    columns = pd.MultiIndex.from_tuples([("", "dataset"), ("", "method"), ("symmetric", "0.2"),
                                         ("asymmetric", "0.4"), ("asymmetric", "0.4 paper"), ("asymmetric", "0.4 Δ")])
    rows = [["mnist5k (MNIST)", "CE", "90.00 ± 1.00", "80.00 ± 2.00", "81.1 ± 0.5", "-1.10"],
            ["mnist5k (MNIST)", "E-NKCVS", "91.00 ± 1.00", "99.00 ± 0.10", "98.4 ± 0.2", "+0.60"],
            ["digits_small", "CE", "70.00 ± 1.00", "", "—", "—"]]
    return pd.DataFrame(rows, columns=columns)


def test_latex_tabular_groups_columns_and_rows_like_the_paper():
    lines = latex_tabular(_grouped(), decimals=2, group_rows=True).splitlines()
    assert lines[:4] == [
        r"\begin{tabular}{llllll}", r"\toprule",
        r"\multicolumn{2}{c}{} & symmetric & \multicolumn{3}{c}{asymmetric} \\",
        r"\cmidrule(lr){3-3} \cmidrule(lr){4-6}",
    ]
    body = lines[lines.index(r"\midrule") + 1:lines.index(r"\bottomrule")]
    assert body == [
        r"mnist5k (MNIST) & CE & 90.00 $\pm$ 1.00 & 80.00 $\pm$ 2.00 & 81.1 $\pm$ 0.5 & -1.10 \\",
        r" & E-NKCVS & 91.00 $\pm$ 1.00 & 99.00 $\pm$ 0.10 & 98.4 $\pm$ 0.2 & +0.60 \\",  # dataset named once
        r"\midrule",  # between the dataset blocks
        r"digits\_small & CE & 70.00 $\pm$ 1.00 &  & --- & --- \\",
    ]
    assert r"0.4 $\Delta$" in lines[4]


def test_write_table_keeps_formatted_cells_and_flattens_grouped_headers(tmp_path):
    frame = _grouped()
    write_table(frame.droplevel(0, axis=1), markdown=tmp_path / "t.md", csv=tmp_path / "t.csv",
                latex=tmp_path / "t.tex", decimals=2, readable=frame, caption="Table X: a caption.", group_rows=True)
    markdown = (tmp_path / "t.md").read_text()
    header = [cell.strip() for cell in markdown.splitlines()[0].split("|")[1:-1]]
    assert header == ["dataset", "method", "symmetric 0.2", "asymmetric 0.4", "asymmetric 0.4 paper",
                      "asymmetric 0.4 Δ"]
    assert "+0.60" in markdown and "-1.10" in markdown  # text, not re-parsed as numbers
    assert markdown.endswith("\n\nTable X: a caption.\n")
    latex = (tmp_path / "t.tex").read_text()
    assert latex.startswith("% needs \\usepackage{booktabs}\n% Table X: a caption.\n\\begin{tabular}")


def _sweep_records(seeds=(1, 2)) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Selection metrics and SS-only results of Figure 1's points at the main K = 4, M = 3, t = 2."""
    points = sorted({(K, 1, 1) for K in (2, 3, 4)} | {(K, 3, 2) for K in (2, 3, 4)} | {(4, M, M - 1) for M in (2, 3, 4)}
                    | {(4, 3, t) for t in (1, 2, 3)})
    rng = np.random.default_rng(0)
    rows = [{"noise": noise, "seed": seed, "K": K, "M": M, "t": t, "precision": rng.uniform(0.9, 1.0),
             "recall": rng.uniform(0.8, 1.0), "test_accuracy": rng.uniform(0.8, 0.95)}
            for noise in ("sym0.2", "sym0.8") for seed in seeds for K, M, t in points]
    frame = pd.DataFrame(rows)
    return frame.drop(columns="test_accuracy"), frame.drop(columns=["precision", "recall"])


def test_sensitivity_table_is_mean_and_std_over_seeds():
    metrics, results = _sweep_records()
    table = sensitivity_table(metrics, results)
    point = (metrics["noise"] == "sym0.8") & (metrics["K"] == 3) & (metrics["M"] == 1)
    row = table[(table["noise"] == "sym0.8") & (table["K"] == 3) & (table["M"] == 1)].iloc[0]
    assert row["precision_mean"] == pytest.approx(100 * metrics.loc[point, "precision"].mean())
    assert row["recall_std"] == pytest.approx(100 * metrics.loc[point, "recall"].std(ddof=1))
    assert row["accuracy_mean"] == pytest.approx(100 * results.loc[point, "test_accuracy"].mean())
    assert row["seeds"] == 2 and len(table) == 2 * 10  # 10 distinct (K, M, t) per noise


def test_sensitivity_figure_has_a_titled_panel_per_parameter_with_error_bars_and_integer_ticks():
    table = sensitivity_table(*_sweep_records())
    figure = draw_sensitivity(table, K=4, M=3, t=2)
    axes = np.array(figure.axes).reshape(3, 3)
    assert [ax.get_title() for ax in axes[0]] == ["(a) varying K", "(b) varying M (K = 4, t = M - 1)",
                                                  "(c) varying t (K = 4, M = 3)"]
    assert [ax.get_xlabel() for ax in axes[2]] == ["K", "M", "t"]
    assert [list(ax.get_xticks()) for ax in axes[0]] == [[2, 3, 4], [2, 3, 4], [1, 2, 3]]
    # one error-bar line per noise setting, two in the K panel (at M = t = 1 and at the main M, t)
    assert [len(ax.containers) for ax in axes[0]] == [4, 2, 2]
    bars = axes[0, 2].containers[0]
    assert bars.has_yerr and len(bars.lines[2][0].get_segments()) == 3
    assert not any(line.get_marker() == "*" for ax in figure.axes for line in ax.lines)  # no paper points given
    plt.close(figure)


def test_sensitivity_figure_draws_the_papers_table1_point_where_a_panel_passes_through_it():
    metrics, results = _sweep_records()
    metrics[["K", "M", "t"]] = metrics[["K", "M", "t"]].replace({4: 10, 3: 5})  # main K = 10, M = 5
    results[["K", "M", "t"]] = results[["K", "M", "t"]].replace({4: 10, 3: 5})
    published = pd.DataFrame({"noise": ["sym0.2", "sym0.2"], "metric": ["precision", "recall"],
                              "value": [99.59, 92.40]})
    figure = draw_sensitivity(sensitivity_table(metrics, results), K=10, M=5, t=2, published=published)
    axes = np.array(figure.axes).reshape(3, 3)
    stars = {(row, column): [(line.get_xdata()[0], line.get_ydata()[0]) for line in axes[row, column].lines
                             if line.get_marker() == "*"]
             for row in range(3) for column in range(3)}
    assert stars[0, 0] == [(10, 99.59)] and stars[1, 0] == [(10, 92.40)]  # K panel, main (M, t) = the paper's
    assert stars[0, 2] == [(2, 99.59)] and stars[1, 2] == [(2, 92.40)]  # t panel at K = 10, M = 5
    assert stars[0, 1] == [] and stars[2, 0] == []  # M panel has t = M - 1; no published SS-only accuracy
    plt.close(figure)


def test_resource_table_sums_and_ranges_the_benchmark_files(tmp_path):
    header = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
    files = {}
    for name, (seconds, rss, cpu) in {"a": (2.0, 300.5, 1.5), "b": (4.0, "NA", 3.5), "c": (1.0, 100.0, 0.9)}.items():
        files[name] = tmp_path / f"{name}.tsv"
        files[name].write_text(header + f"{seconds}\t0:00:0{int(seconds)}\t{rss}\t1\t1\t1\t0\t0\t50\t{cpu}\n")
    table = resource_table({"train_fold": [files["a"], files["b"]], "train_final_selected": [files["c"]],
                            "train_final_baseline": []})
    assert table["rule"].tolist() == ["train_fold", "train_final_selected"]  # a rule without jobs is left out
    fold = table.iloc[0]
    assert (fold["jobs"], fold["wall_s_total"], fold["wall_s_mean"], fold["wall_s_max"]) == (2, 6.0, 3.0, 4.0)
    assert (fold["max_rss_mb_mean"], fold["max_rss_mb_max"], fold["cpu_s_total"]) == (300.5, 300.5, 5.0)  # NA: unsampled
