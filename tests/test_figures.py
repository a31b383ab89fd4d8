"""The report's figures (enkcvs.report.figures): Figure 1's panels and the paper's points on them, and E-NKCVS beside
confident learning, drawn from small hand-built or planted frames."""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from test_oof import make_planted
from test_tables import _sweep_records

from enkcvs.labelissues.confident import compare_with_confident_learning
from enkcvs.report.figures import comparison_figure, draw_comparison, draw_sensitivity
from enkcvs.report.tables import sensitivity_table


def test_sensitivity_figure_has_a_titled_panel_per_parameter_with_error_bars_and_integer_ticks():
    table = sensitivity_table(*_sweep_records())
    figure = draw_sensitivity(table, K=4, M=3, t=2)
    axes = np.array(figure.axes).reshape(3, 3)
    assert [ax.get_title() for ax in axes[0]] == [
        "(a) varying K",
        "(b) varying M (K = 4, t = M - 1)",
        "(c) varying t (K = 4, M = 3)",
    ]
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
    published = pd.DataFrame(
        {"noise": ["sym0.2", "sym0.2"], "metric": ["precision", "recall"], "value": [99.59, 92.40]}
    )
    figure = draw_sensitivity(sensitivity_table(metrics, results), K=10, M=5, t=2, published=published)
    axes = np.array(figure.axes).reshape(3, 3)
    stars = {
        (row, column): [
            (line.get_xdata()[0], line.get_ydata()[0]) for line in axes[row, column].lines if line.get_marker() == "*"
        ]
        for row in range(3)
        for column in range(3)
    }
    assert stars[0, 0] == [(10, 99.59)] and stars[1, 0] == [(10, 92.40)]  # K panel, main (M, t) = the paper's
    assert stars[0, 2] == [(2, 99.59)] and stars[1, 2] == [(2, 92.40)]  # t panel at K = 10, M = 5
    assert stars[0, 1] == [] and stars[2, 0] == []  # M panel has t = M - 1; no published SS-only accuracy
    plt.close(figure)


@pytest.fixture(scope="module")
def planted():
    """(probabilities (3, 200, 3), given, true) with 15% planted label errors."""
    return make_planted(seed=4, num_samples=200, num_classes=3)


def test_comparison_figure_writes_png_and_pdf(planted, tmp_path):
    probabilities, given, true = planted
    frame = compare_with_confident_learning(probabilities=probabilities[:2], given=given, true=true)
    frame = pd.concat(
        [
            frame.assign(dataset="digits", noise="sym0.2"),
            frame.assign(dataset="digits", noise="asym0.3", kept_precision=frame["kept_precision"] - 0.01),
        ]
    )
    comparison_figure(frame, png=tmp_path / "cl.png", pdf=tmp_path / "cl.pdf", dpi=60)
    assert (tmp_path / "cl.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "cl.pdf").read_bytes()[:4] == b"%PDF"


def test_comparison_figure_tells_settings_and_methods_apart(planted):
    """One titled row of panels per setting (flagged, kept), every method in the legend, a mean over M drawn with
    another marker than its single-iteration twin but the same colour."""
    probabilities, given, true = planted
    frame = compare_with_confident_learning(probabilities=probabilities, given=given, true=true, threshold=2)
    frame = pd.concat([frame.assign(dataset="digits", noise=noise) for noise in ("sym0.2", "asym0.3")])
    figure = draw_comparison(frame)
    titles = [ax.get_title() for ax in figure.axes]
    assert titles == [
        "digits, sym0.2: flagged set (detected label errors)",
        "digits, sym0.2: kept set (selected samples)",
        "digits, asym0.3: flagged set (detected label errors)",
        "digits, asym0.3: kept set (selected samples)",
    ]
    assert [text.get_text() for text in figure.legends[0].get_texts()] == list(dict.fromkeys(frame["method"]))
    single, mean = (
        next(c for c in figure.axes[0].collections if c.get_label() == name)
        for name in ("cleanlab both", "cleanlab both (mean of 3)")
    )
    assert (single.get_facecolor() == mean.get_facecolor()).all()
    assert single.get_paths()[0].vertices.tolist() != mean.get_paths()[0].vertices.tolist()
    plt.close(figure)


def test_comparison_figure_bytes_are_the_same_on_every_render(planted, tmp_path):
    """No creation date in the PDF: a resumed or repeated run writes byte-identical figures."""
    probabilities, given, true = planted
    frame = compare_with_confident_learning(probabilities=probabilities[:2], given=given, true=true)
    frame = frame.assign(dataset="digits", noise="sym0.2")
    for name in ("first", "second"):
        (tmp_path / name).mkdir()
        comparison_figure(frame, png=tmp_path / name / "cl.png", pdf=tmp_path / name / "cl.pdf", dpi=60)
    for suffix in ("png", "pdf"):
        assert (tmp_path / "first" / f"cl.{suffix}").read_bytes() == (tmp_path / "second" / f"cl.{suffix}").read_bytes()
