"""The audit of the report tables (enkcvs.report.audit) on the tiny run: clean as produced, and each kind of tampering
found.

``tiny_run`` is shared by the session and only read here: every test that tampers copies its ``results/`` first.
"""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from enkcvs.io import read_json
from enkcvs.pipeline import layout
from enkcvs.report.audit import TABLE1_VALUES, TABLE2_VALUES, audit_results

pytestmark = pytest.mark.workflow

SUMMARY = re.compile(r"audit: 2 tables, (\d+) rows, (\d+) cells traced to (\d+) result files, 0 problems")


def audit_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "enkcvs.report.audit", *args], capture_output=True, text=True, cwd=cwd)


@pytest.fixture
def copied_run(tiny_run, tmp_path) -> Path:
    """A private copy of the tiny run's results/, safe to tamper with."""
    shutil.copytree(tiny_run / "results", tmp_path / "results")
    return tmp_path


def tamper_cell(workdir: Path, table: str, select, column: str, delta: float) -> int:
    """Add ``delta`` to ``column`` of the one row where ``select(frame)`` holds; the row's number as the audit counts
    rows (1-based, header not counted)."""
    path = workdir / "results/report" / table
    frame = pd.read_csv(path, dtype={"sources": str})
    (index,) = np.flatnonzero(select(frame))
    frame.loc[index, column] += delta
    frame.to_csv(path, index=False)
    return index + 1


def sources_of(workdir: Path, table: str) -> list[str]:
    frame = pd.read_csv(workdir / "results/report" / table, dtype={"sources": str})
    return [source for sources in frame["sources"].dropna() for source in sources.split(";")]


def test_clean_run_audits_clean_via_the_cli(tiny_run, tmp_path):
    tables = [pd.read_csv(tiny_run / f"results/report/table{n}.csv") for n in (1, 2)]
    files = set(sources_of(tiny_run, "table1.csv")) | set(sources_of(tiny_run, "table2.csv"))
    for args, cwd in (((), tiny_run), ((str(tiny_run),), tmp_path)):
        done = audit_cli(*args, cwd=cwd)
        assert done.returncode == 0, done.stdout + done.stderr
        lines = done.stdout.splitlines()
        assert len(lines) == 1 and (match := SUMMARY.fullmatch(lines[0])), done.stdout
        rows, cells, result_files = map(int, match.groups())
        assert rows == sum(len(table) for table in tables)
        assert cells == len(TABLE1_VALUES) * len(tables[0]) + len(TABLE2_VALUES) * len(tables[1])
        assert result_files == len(files) > 0
    assert audit_results(workdir=tiny_run) == []


def test_tampered_table2_cell_is_reported_with_file_row_and_column(copied_run):
    row = tamper_cell(
        copied_run, "table2.csv", lambda t: (t["method"] == "enkcvs") & (t["noise_kind"] == "sym"), "mean", 0.5
    )
    done = audit_cli(str(copied_run), cwd=copied_run)
    assert done.returncode == 1, done.stdout + done.stderr
    problems = done.stdout.splitlines()[:-1]
    assert len(problems) == 1, done.stdout
    assert "results/report/table2.csv" in problems[0] and f"row {row} " in problems[0]
    assert "method=enkcvs" in problems[0] and "column 'mean'" in problems[0]
    assert done.stdout.splitlines()[-1].endswith(", 1 problems")


def test_tampered_table1_cell_is_reported_with_file_row_and_column(copied_run):
    row = tamper_cell(copied_run, "table1.csv", lambda t: t["noise_kind"] == "asym", "precision", 1e-3)
    (problem,) = audit_results(workdir=copied_run)
    assert "results/report/table1.csv" in problem and f"row {row} " in problem and "column 'precision'" in problem
    assert "noise_kind=asym" in problem


def test_deleted_source_metrics_json_is_reported_missing(copied_run):
    source = sources_of(copied_run, "table1.csv")[0]
    (copied_run / source).unlink()
    problems = audit_results(workdir=copied_run)
    assert problems and all(source in problem for problem in problems), problems
    assert any("source missing" in problem and "table1.csv row 1 " in problem for problem in problems)


def test_deleted_fold_behind_a_metrics_json_is_reported(copied_run):
    source = sources_of(copied_run, "table1.csv")[-1]
    metrics = read_json(copied_run / source)
    fold = (
        f"results/folds/{metrics['dataset']}/{metrics['noise']}/seed{metrics['seed']}/K{metrics['K']}"
        f"/m{metrics['M']}/k{metrics['K']}.parquet"
    )
    (copied_run / fold).unlink()
    (problem,) = audit_results(workdir=copied_run)
    assert source in problem and fold in problem and "input missing" in problem


@pytest.mark.parametrize(
    ("result", "kept_set"),
    [
        ("enkcvs.json", layout.SELECTION),
        # prune-and-retrain trains from confident learning's kept set, not from E-NKCVS's selection
        ("cl_prune.json", layout.CL_SELECTION),
    ],
)
def test_deleted_selection_behind_a_final_result_is_reported(copied_run, result, kept_set):
    source = next(path for path in sources_of(copied_run, "table2.csv") if path.endswith(result))
    selection = kept_set.format(**read_json(copied_run / source))
    (copied_run / selection).unlink()
    problems = audit_results(workdir=copied_run)
    assert any(source in problem and selection in problem for problem in problems), problems


def test_row_without_runs_needs_empty_sources_and_nan_values(copied_run):
    path = copied_run / "results/report/table2.csv"
    table = pd.read_csv(path, dtype={"sources": str})
    readings = {value: np.nan for value in TABLE2_VALUES if value != "runs"}  # every reading, last epoch's included
    empty = table.iloc[[0]].assign(method="ss_only", **readings, runs=0, sources="")
    pd.concat([table, empty], ignore_index=True).to_csv(path, index=False)
    assert audit_results(workdir=copied_run) == []
    stale = empty.assign(mean=50.0, sources=table["sources"].iloc[0])
    pd.concat([table, stale], ignore_index=True).to_csv(path, index=False)
    problems = audit_results(workdir=copied_run)
    assert len(problems) == 2 and all(f"table2.csv row {len(table) + 1} " in problem for problem in problems)
    assert any("column 'mean'" in problem for problem in problems)
    assert any("lists sources" in problem for problem in problems)


def test_missing_report_exits_2_and_says_to_run_the_workflow(tmp_path):
    (tmp_path / "results").mkdir()
    done = audit_cli(cwd=tmp_path)
    assert done.returncode == 2
    assert "results/report not found" in done.stderr and "Run the workflow" in done.stderr
    assert done.stdout == ""


def test_audit_does_not_import_torch(tmp_path):
    code = "import sys, enkcvs.report.audit; assert 'torch' not in sys.modules, 'torch imported'"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
