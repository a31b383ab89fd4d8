"""E-NKCVS beside confident learning (enkcvs.confident): both scorings, cleanlab's methods, the comparison and figure."""

import math

import numpy as np
import pandas as pd
import pytest
from test_oof import make_planted

from enkcvs.confident import (
    CLEANLAB_METHODS,
    cleanlab_flags,
    compare_with_confident_learning,
    comparison_figure,
    draw_comparison,
    kept_and_flagged_scores,
)
from enkcvs.oof import select

COLUMNS = ["method", "kept", "flagged", "kept_precision", "kept_recall", "flagged_precision", "flagged_recall"]


def test_kept_and_flagged_scores_hand_checked():
    # Samples 2 and 4 are mislabelled; 1, 2 and 4 are flagged: kept {0, 3, 5} is all clean, 3 of the 4 clean samples.
    given, true = np.array([0, 1, 2, 0, 1, 2]), np.array([0, 1, 1, 0, 2, 2])
    flagged = np.array([False, True, True, False, True, False])
    scores = kept_and_flagged_scores(flagged=flagged, given=given, true=true)
    assert scores == pytest.approx(
        {"kept": 3, "flagged": 3, "kept_precision": 1.0, "kept_recall": 0.75, "flagged_precision": 2 / 3,
         "flagged_recall": 1.0}
    )
    clean = kept_and_flagged_scores(flagged=np.zeros(6, bool), given=given, true=given)
    assert math.isnan(clean["flagged_precision"]) and math.isnan(clean["flagged_recall"])
    assert math.isnan(kept_and_flagged_scores(flagged=np.ones(6, bool), given=given, true=true)["kept_precision"])


@pytest.fixture(scope="module")
def planted():
    """(probabilities (3, 200, 3), given, true) with 15% planted label errors."""
    return make_planted(seed=4, num_samples=200, num_classes=3)


@pytest.mark.parametrize("method", CLEANLAB_METHODS)
def test_cleanlab_flags_each_method(planted, method):
    probabilities, given, true = planted
    flags = cleanlab_flags(probabilities=probabilities[0], labels=given, method=method)
    assert flags.shape == (200,) and flags.dtype == bool
    assert kept_and_flagged_scores(flagged=flags, given=given, true=true)["flagged_recall"] > 0.5


def test_cleanlab_flags_rejects_an_unknown_method(planted):
    with pytest.raises(ValueError, match=r"unknown cleanlab method 'low_self_confidence': choose one of"):
        cleanlab_flags(probabilities=planted[0][0], labels=planted[1], method="low_self_confidence")


def test_comparison_rows_and_columns(planted):
    probabilities, given, true = planted
    single = compare_with_confident_learning(probabilities=probabilities[:1], given=given, true=true)
    assert list(single.columns) == COLUMNS
    assert single["method"].tolist() == ["E-NKCVS (M=1)", *(f"cleanlab {m}" for m in CLEANLAB_METHODS)]
    ensemble = compare_with_confident_learning(probabilities=probabilities, given=given, true=true, threshold=2)
    assert ensemble["method"].tolist() == [
        "E-NKCVS (M=1)",
        "E-NKCVS (M=3, t=2)",
        *(f"cleanlab {m}" for m in CLEANLAB_METHODS),
        *(f"cleanlab {m} (mean of 3)" for m in CLEANLAB_METHODS),
    ]
    rows = ensemble.set_index("method")
    # Both M = 1 rows read iteration 1, and NKCVS flags exactly where the prediction differs from the given label.
    assert rows.loc["E-NKCVS (M=1)"].tolist() == rows.loc["cleanlab predicted_neq_given"].tolist()
    assert rows.loc["E-NKCVS (M=3, t=2)", "kept_precision"] == pytest.approx(
        select(probabilities=probabilities, labels=given, true_labels=true).precision
    )
    assert (rows["kept"] + rows["flagged"] == 200).all()


def test_comparison_figure_writes_png_and_pdf(planted, tmp_path):
    probabilities, given, true = planted
    frame = compare_with_confident_learning(probabilities=probabilities[:2], given=given, true=true)
    frame = pd.concat([frame.assign(dataset="digits", noise="sym0.2"),
                       frame.assign(dataset="digits", noise="asym0.3", kept_precision=frame["kept_precision"] - 0.01)])
    comparison_figure(frame, png=tmp_path / "cl.png", pdf=tmp_path / "cl.pdf", dpi=60)
    assert (tmp_path / "cl.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "cl.pdf").read_bytes()[:4] == b"%PDF"


def test_comparison_figure_tells_settings_and_methods_apart(planted):
    """One titled row of panels per setting (flagged, kept), every method in the legend, a mean over M drawn with
    another marker than its single-iteration twin but the same colour."""
    import matplotlib.pyplot as plt

    probabilities, given, true = planted
    frame = compare_with_confident_learning(probabilities=probabilities, given=given, true=true, threshold=2)
    frame = pd.concat([frame.assign(dataset="digits", noise=noise) for noise in ("sym0.2", "asym0.3")])
    figure = draw_comparison(frame)
    titles = [ax.get_title() for ax in figure.axes]
    assert titles == ["digits, sym0.2: flagged set (detected label errors)", "digits, sym0.2: kept set (selected samples)",
                      "digits, asym0.3: flagged set (detected label errors)", "digits, asym0.3: kept set (selected samples)"]
    assert [text.get_text() for text in figure.legends[0].get_texts()] == list(dict.fromkeys(frame["method"]))
    single, mean = (next(c for c in figure.axes[0].collections if c.get_label() == name)
                    for name in ("cleanlab both", "cleanlab both (mean of 3)"))
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
