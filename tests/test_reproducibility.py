"""Two records of one config at one commit under two CPU classes' kernels: each Table 2 cell's move set against its
spread over seeds, and the refusal of records that differ in more than the kernels."""

import json
from pathlib import Path

import pandas as pd
import pytest

from enkcvs.report.reproducibility import kernel_classes

CELL = {"dataset": "digits", "noise_kind": "sym", "noise_rate": 0.5}


def _record(records: Path, name: str, means: dict[str, tuple[float, float]], **facts) -> None:
    run = records / name
    run.mkdir(parents=True)
    provenance = {"config": "seeds: [1, 2]\n", "git": {"commit": "abc", "dirty": False}, "versions": {"torch": "2"}}
    (run / "provenance.json").write_text(json.dumps(provenance | facts))
    rows = [CELL | {"method": method, "mean": mean, "std": std, "runs": 2} for method, (mean, std) in means.items()]
    pd.DataFrame(rows).to_csv(run / "table2.csv", index=False)


def test_a_cells_move_between_kernels_is_set_against_its_seed_spread(tmp_path):
    _record(tmp_path, "full", {"ce": (76.0, 1.0), "sl": (91.0, 0.2), "enkcvs": (93.0, 0.0)})
    limits = {"ATEN_CPU_CAPABILITY": "avx2"}
    _record(
        tmp_path,
        "avx2",
        {"ce": (75.5, 1.2), "sl": (91.5, 0.1), "enkcvs": (93.0, 0.0)},
        instruction_set_limits=limits,
    )
    found = kernel_classes(records=tmp_path, first="full", second="avx2")
    assert found.limits == {"full": {}, "avx2": limits} and found.commit == "abc"
    moves = found.cells.set_index("method")
    assert moves.loc["ce", "difference"] == -0.5 and moves.loc["ce", "seed_spread"] == 1.2
    assert moves.loc["sl", "difference"] == 0.5 and moves.loc["sl", "seed_spread"] == 0.2
    assert found.beyond_spread == 1  # SL moved past its spread; CE within; E-NKCVS did not move
    (table,) = found.tables.to_dict("records")  # numeric columns noise_rate, mean, std, runs: two moved
    assert (table["table"], table["columns"], table["columns_differ"], table["cells_differ"]) == ("table2.csv", 4, 2, 4)
    assert table["max_abs_difference"] == 0.5


@pytest.mark.parametrize(
    "facts",
    [
        {"git": {"commit": "def", "dirty": False}},
        {"config": "seeds: [1]\n"},
        {"versions": {"torch": "3"}},
    ],
)
def test_records_that_differ_in_more_than_the_kernels_are_refused(tmp_path, facts):
    _record(tmp_path, "full", {"ce": (76.0, 1.0)})
    _record(tmp_path, "other", {"ce": (76.0, 1.0)}, **facts)
    with pytest.raises(ValueError, match="record both"):
        kernel_classes(records=tmp_path, first="full", second="other")


def test_records_with_uncommitted_changes_are_refused(tmp_path):
    dirty = {"git": {"commit": "abc", "dirty": True}}
    _record(tmp_path, "full", {"ce": (76.0, 1.0)}, **dirty)
    _record(tmp_path, "other", {"ce": (76.0, 1.0)}, **dirty)
    with pytest.raises(ValueError, match="one clean commit"):
        kernel_classes(records=tmp_path, first="full", second="other")
