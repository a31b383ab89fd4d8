"""A final model's clean test curve read three ways (enkcvs.report.readings) on hand-made curves, and Table 2 giving
every method the three readings alike, from result files with and without a curve: a result recorded before every
final model kept its curve shows its last epoch and the missing mark, never a made-up number."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from enkcvs.io import write_json
from enkcvs.report import claims
from enkcvs.report.comparison import MISSING, NO_NUMBER
from enkcvs.report.paper_table2 import compare_table2, format_table2
from enkcvs.report.readings import READINGS, best_epoch, epochs_averaged, last_epoch, mean_of_last_epochs
from enkcvs.report.tables import collect_records, table2

REPO = Path(__file__).resolve().parents[1]
#: Twelve epochs: a peak at epoch 3 (tied later at epoch 7, which does not count), then a fall.
CURVE = [0.50, 0.70, 0.90, 0.80, 0.60, 0.55, 0.90, 0.40, 0.30, 0.20, 0.25, 0.35]


def test_the_last_epoch_is_the_curves_end():
    assert last_epoch(CURVE) == 0.35


def test_the_mean_of_the_last_ten_epochs_leaves_the_first_out_and_takes_all_of_a_shorter_training():
    assert mean_of_last_epochs(CURVE) == pytest.approx(np.mean(CURVE[2:]))
    assert epochs_averaged(CURVE) == 10
    assert mean_of_last_epochs(CURVE[:4]) == pytest.approx((0.50 + 0.70 + 0.90 + 0.80) / 4)
    assert epochs_averaged(CURVE[:4]) == 4


def test_the_best_epoch_is_the_first_to_reach_the_highest_accuracy_one_based():
    assert best_epoch(CURVE) == (3, 0.90)
    assert best_epoch([0.1]) == (1, 0.1)


def test_the_optimistic_reading_says_so_where_it_is_titled():
    assert list(READINGS) == ["last", "last10", "best"]
    assert "optimistic" in READINGS["best"] and "optimistic" not in READINGS["last"]


def _result(folder: Path, name: str, *, method: str, seed: int, curve: list[float] | None) -> Path:
    """A final model's result as train_final writes it; ``curve`` None: recorded before curves were."""
    record = {"dataset": "digits", "noise": "sym0.4", "seed": seed, "method": method}
    record["test_accuracy"] = curve[-1] if curve else 0.5
    if curve is not None:
        record["test_accuracy_by_epoch"] = curve
    write_json(record, folder / name)
    return folder / name


def _table(tmp_path: Path) -> pd.DataFrame:
    """Table 2 of ce (two seeds, 12 and 12 epochs), sl (one seed, 4 epochs), gce (recorded without curves) and
    coteaching (configured, not run)."""
    paths = [
        _result(tmp_path, "ce1.json", method="ce", seed=1, curve=CURVE),
        _result(tmp_path, "ce2.json", method="ce", seed=2, curve=[value - 0.1 for value in CURVE]),
        _result(tmp_path, "sl1.json", method="sl", seed=1, curve=CURVE[:4]),
        _result(tmp_path, "gce1.json", method="gce", seed=1, curve=None),
        _result(tmp_path, "gce2.json", method="gce", seed=2, curve=None),
    ]
    return table2(collect_records(paths), methods=["ce", "sl", "gce", "coteaching"]).set_index("method")


def test_table2_reads_every_method_alike_and_a_result_without_its_curve_only_at_its_last_epoch(tmp_path):
    table = _table(tmp_path)
    ce = table.loc["ce"]
    assert ce["mean"] == pytest.approx(100 * np.mean([0.35, 0.25]))  # the protocol: test_accuracy, the last epoch
    assert ce["last10_mean"] == pytest.approx(100 * (np.mean(CURVE[2:]) - 0.05))
    assert ce["last10_epochs"] == 10
    assert ce["best_mean"] == pytest.approx(100 * (0.90 - 0.05)) and ce["best_std"] == pytest.approx(100 * 0.1 / 2**0.5)
    sl = table.loc["sl"]
    assert (sl["mean"], sl["last10_mean"], sl["last10_epochs"], sl["best_mean"]) == pytest.approx((80.0, 72.5, 4, 90.0))
    gce = table.loc["gce"]
    assert gce["mean"] == 50.0 and gce["runs"] == 2
    assert np.isnan(gce["last10_mean"]) and np.isnan(gce["best_mean"]) and np.isnan(gce["last10_epochs"])
    assert table.loc["coteaching", "runs"] == 0


def test_a_cell_with_one_seed_lacking_its_curve_reads_no_mean_of_the_others(tmp_path):
    paths = [
        _result(tmp_path, "ce1.json", method="ce", seed=1, curve=CURVE),
        _result(tmp_path, "ce2.json", method="ce", seed=2, curve=None),
    ]
    ce = table2(collect_records(paths), methods=["ce"]).iloc[0]
    assert ce["runs"] == 2 and np.isnan(ce["last10_mean"]) and np.isnan(ce["best_mean"])


def test_the_table_shows_three_readings_a_method_the_missing_mark_where_a_result_has_no_curve(tmp_path):
    wide = format_table2(
        compare_table2(_table(tmp_path).reset_index(), paper_names={"digits": "MNIST"}), decimals=2, bold=None
    )
    cells = {
        (row[("", "method")], row[("", "reading")]): tuple(
            row[("symmetric", f"0.4{part}")] for part in ("", " paper", " Δ")
        )
        for _, row in wide.iterrows()
    }
    last, last10, best = READINGS.values()
    assert cells["GCE (not in the paper)", last] == ("50.00 ± 0.00", "—", "—")
    assert cells["GCE (not in the paper)", last10][0] == NO_NUMBER
    assert cells["GCE (not in the paper)", best][0] == NO_NUMBER
    # SL at MNIST sym 0.4: the paper's 99.0 ± 0.1, each reading's own difference to it
    assert cells["SL", last] == ("80.00 ± n/a", "99.0 ± 0.1", "-19.00")
    assert cells["SL", last10] == ("72.50 ± n/a (all 4 epochs)", "99.0 ± 0.1", "-26.50")
    assert cells["SL", best] == ("90.00 ± n/a", "99.0 ± 0.1", "-9.00")
    assert "epochs)" not in cells["CE", last10][0]  # ten epochs averaged, as the title says
    assert {cells["Co-teaching", reading][0] for reading in READINGS.values()} == {MISSING}


def test_the_readmes_largest_gap_is_read_off_the_recorded_curve_of_its_training():
    """CE at full MNIST sym 0.8: the last epoch the record reports, and the curve the same training recorded."""
    cells = claims.row_cells(REPO, claims.mnist_row(REPO))
    gap = claims.largest_gap_reading(REPO, cells)
    if gap is None:
        pytest.skip("the curve's record is not in this checkout")
    curve = pd.read_csv(REPO / "results/recorded" / gap.run / "test_curves.csv").sort_values("epoch")
    accuracy = curve["test_accuracy"].to_numpy()
    assert (gap.method, gap.setting, gap.run) == ("CE", "sym 0.8", "mnist-full-sym0.8-ce-curve")
    assert gap.gap == pytest.approx(cells["difference"].abs().max() * np.sign(gap.gap))
    assert (gap.best_epoch, gap.best) == (int(np.argmax(accuracy)) + 1, accuracy.max())
    assert gap.last == accuracy[-1] == pytest.approx(gap.published + gap.gap)
    assert gap.nearest == READINGS["best"]
