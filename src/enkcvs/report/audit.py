"""Audit of the report tables: every cell of Table 1 and Table 2 traced back to result files that exist.

The tables' CSVs (``results/report/table{1,2}.csv``) list, per row, the result JSONs the row was computed from
(``sources``, ``;``-separated, relative to the workflow's working directory). The audit

* checks that every source exists, loads them with :func:`enkcvs.report.tables.collect_records` and recomputes the row
  with :func:`enkcvs.report.tables.table1` / :func:`enkcvs.report.tables.table2`: the recomputation must give exactly
  one row, with the same keys and the same numbers (relative tolerance 1e-9; NaN only where NaN);
* checks that each source sits where the workflow writes a file with its fields, and that its own inputs exist:
  a selection's noise labels, its M x K fold predictions and its ``selection.parquet``; a final model's noise labels
  and, for a selection method, the selection it trained from (``selection.parquet``; prune-and-retrain:
  confident learning's ``cl_selection.parquet``; INCV: its own), for CE + mixup's ensemble its members' files;
* for Table 2, checks that each source's dataset, noise and method are the row's, and that a row without runs has no
  sources and NaN in every reading (:mod:`enkcvs.report.readings`).

Problems name the table, the row (1-based, header not counted, so row ``i`` is line ``i + 1`` of the CSV), its keys,
and the column or file at fault. Run it from the working directory::

    python -m enkcvs.report.audit [WORKDIR]

Exit status: 0 if clean, 1 if there are problems, 2 on bad arguments (no ``results/report/`` in WORKDIR).
"""

import argparse
import math
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from enkcvs.method.ensemble import budget_members
from enkcvs.method.methods import BASELINE_METHODS, SELECTION_METHODS
from enkcvs.pipeline.layout import (
    CL_SELECTION,
    ENSEMBLE_MEMBER,
    FINAL_BASELINE,
    FINAL_ENSEMBLE,
    FINAL_INCV,
    FINAL_PRUNED,
    FINAL_SELECTED,
    FOLD,
    INCV_SELECTION,
    NOISE_LABELS,
    SELECTION,
    SELECTION_METRICS,
)
from enkcvs.report.tables import collect_records, table1, table2

REPORT = "results/report"
TABLE1 = f"{REPORT}/table1.csv"
TABLE2 = f"{REPORT}/table2.csv"
TABLE1_KEYS = ("dataset", "noise_kind", "noise_rate", "K", "M", "t")
TABLE1_VALUES = ("seeds", "CS", "SS", "CSS", "precision", "recall", "theorem1_precision", "theorem1_recall")
TABLE2_KEYS = ("dataset", "noise_kind", "noise_rate", "method")
TABLE2_VALUES = ("mean", "std", "runs", "last10_mean", "last10_std", "last10_epochs", "best_mean", "best_std")
#: Columns read as numbers (anything else in them is a problem of its own).
NUMERIC_COLUMNS = ("noise_rate", "K", "M", "t", *TABLE1_VALUES, *TABLE2_VALUES)
REL_TOL = 1e-9


@dataclass
class Audit:
    """What an audit found, and how much it checked.

    Attributes
    ----------
    workdir : the workflow's working directory; every path is relative to it.
    problems : human-readable problems, in the order found.
    tables : tables read.
    rows : table rows audited.
    cells : numeric cells compared with their recomputation (or, for a row without runs, checked to be empty).
    files : result files (the rows' sources) found and loaded.
    """

    workdir: Path
    problems: list[str] = field(default_factory=list)
    tables: int = 0
    rows: int = 0
    cells: int = 0
    files: set[str] = field(default_factory=set)

    def summary(self) -> str:
        """One line: how much was checked and how many problems were found."""
        return (
            f"audit: {self.tables} tables, {self.rows} rows, {self.cells} cells traced to {len(self.files)} "
            f"result files, {len(self.problems)} problems"
        )


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def _same(a: Any, b: Any) -> bool:
    """Numbers within :data:`REL_TOL` (NaN equals only NaN); anything else by its text."""
    if _is_number(a) and _is_number(b):
        a, b = float(a), float(b)
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=0.0)
    return str(a) == str(b)


def _show(value: Any) -> str:
    """A cell's value for a message: integers as such, floats in full precision, anything else quoted."""
    if isinstance(value, (int, np.integer)) and _is_number(value):
        return str(int(value))
    return repr(float(value)) if _is_number(value) else repr(value)


def _where(table: str, number: int, row: pd.Series, keys: Iterable[str]) -> str:
    """``results/report/table2.csv row 3 [dataset=digits, ...]``: how problems name a row."""
    return f"{table} row {number} [" + ", ".join(f"{key}={row[key]}" for key in keys) + "]"


def _read_report_table(audit: Audit, table: str, columns: Iterable[str]) -> pd.DataFrame | None:
    """Read one table's CSV, numbers at full precision and ``sources`` as text (``""`` where empty).

    Reports a missing or unreadable file, missing columns, and cells of a numeric column that are not numbers (those
    become NaN). Returns None where the table cannot be audited.
    """
    path = audit.workdir / table
    if not path.is_file():
        audit.problems.append(f"{table}: missing (run the workflow to produce it)")
        return None
    try:
        frame = pd.read_csv(path, dtype={"sources": str})
    except (OSError, ValueError) as error:
        audit.problems.append(f"{table}: cannot be read: {error}")
        return None
    missing = [column for column in columns if column not in frame]
    if missing:
        audit.problems.append(f"{table}: missing columns {missing}")
        return None
    audit.tables += 1
    frame["sources"] = frame["sources"].fillna("").astype(str)
    for column in NUMERIC_COLUMNS:
        if column not in frame:
            continue
        numbers = pd.to_numeric(frame[column], errors="coerce")
        for index in np.flatnonzero(numbers.isna() & frame[column].notna()):
            cell = frame[column].iloc[index]
            audit.problems.append(f"{table} row {index + 1}, column {column!r}: not a number: {cell!r}")
        frame[column] = numbers
    return frame


def _present_sources(audit: Audit, where: str, sources: str) -> tuple[list[str], bool]:
    """The row's sources that exist; reports a row without sources, missing sources and sources listed twice.

    Returns
    -------
    present : sources found, in the row's order, each once.
    complete : whether every listed source was found (and the row lists some).
    """
    listed = [source.strip() for source in sources.split(";") if source.strip()]
    if not listed:
        audit.problems.append(f"{where}: lists no sources")
        return [], False
    present = []
    for source in dict.fromkeys(listed):
        if listed.count(source) > 1:
            audit.problems.append(f"{where}: source listed {listed.count(source)} times: {source}")
        if (audit.workdir / source).is_file():
            present.append(source)
        else:
            audit.problems.append(f"{where}: source missing: {source}")
    return present, len(present) == len(listed)


def _load_records(audit: Audit, where: str, sources: list[str]) -> pd.DataFrame | None:
    """:func:`enkcvs.report.tables.collect_records` on the sources, their ``source`` column as listed in the table."""
    if not sources:
        return None
    try:
        records = collect_records([audit.workdir / source for source in sources])
    except (OSError, ValueError, KeyError, TypeError) as error:
        audit.problems.append(f"{where}: sources cannot be loaded: {error!r}")
        return None
    records["source"] = sources
    audit.files.update(sources)
    return records


def _recomputed_row(audit: Audit, where: str, recompute, records: pd.DataFrame) -> pd.Series | None:
    """The one row that ``recompute(records)`` must give; reports an error or any other number of rows."""
    try:
        recomputed = recompute(records)
    except (ValueError, KeyError, TypeError) as error:
        audit.problems.append(f"{where}: cannot be recomputed from its sources: {error!r}")
        return None
    if len(recomputed) != 1:
        audit.problems.append(f"{where}: its sources give {len(recomputed)} rows, not 1")
        return None
    return recomputed.iloc[0]


def _compare_row(
    audit: Audit, where: str, row: pd.Series, recomputed: pd.Series, keys: Iterable[str], values: Iterable[str]
) -> None:
    """Report each key and value of ``row`` that differs from the recomputation; count the values compared."""
    for key in keys:
        if not _same(row[key], recomputed[key]):
            audit.problems.append(
                f"{where}, key {key!r}: table has {_show(row[key])}, its sources give {_show(recomputed[key])}"
            )
    for column in values:
        audit.cells += 1
        if not _same(row[column], recomputed[column]):
            audit.problems.append(
                f"{where}, column {column!r}: table has {_show(row[column])}, its sources give "
                f"{_show(recomputed[column])}"
            )


def _require_files(audit: Audit, source: str, where: str, paths: Iterable[str]) -> None:
    """Report each of ``source``'s inputs that does not exist."""
    for path in paths:
        if not (audit.workdir / path).is_file():
            audit.problems.append(f"{source} (source of {where}): input missing: {path}")


def _fields(record: dict[str, Any], names: Iterable[str]) -> dict[str, Any] | None:
    """The record's wildcard fields, or None where one is absent."""
    fields = {name: record.get(name) for name in names}
    return None if any(value is None or pd.isna(value) for value in fields.values()) else fields


def _check_location(audit: Audit, source: str, where: str, expected: str) -> None:
    """Report a source that is not where the workflow writes a file with its fields."""
    if Path(source) != Path(expected):
        audit.problems.append(f"{source} (source of {where}): its fields place it at {expected}")


def _check_selection_inputs(audit: Audit, where: str, record: dict[str, Any]) -> None:
    """A selection metrics JSON: its location, noise labels, the M x K fold predictions, its selection.parquet."""
    source = record["source"]
    fields = _fields(record, ("dataset", "noise", "seed", "K", "M", "t"))
    if fields is None:
        audit.problems.append(f"{source} (source of {where}): lacks one of dataset, noise, seed, K, M, t")
        return
    _check_location(audit, source, where, SELECTION_METRICS.format(**fields))
    folds = [FOLD.format(**fields, m=m, k=k) for m in range(1, fields["M"] + 1) for k in range(1, fields["K"] + 1)]
    _require_files(audit, source, where, [NOISE_LABELS.format(**fields), *folds, SELECTION.format(**fields)])


def _check_final_result(audit: Audit, where: str, row: pd.Series, record: dict[str, Any]) -> None:
    """A final-model JSON: the row's dataset, noise and method; its location; its noise labels and selection."""
    source = record["source"]
    for key in TABLE2_KEYS:
        if not _same(record.get(key), row[key]):
            audit.problems.append(
                f"{source} (source of {where}): {key} is {_show(record.get(key))}, not {_show(row[key])}"
            )
    method = record.get("method")
    setting = ("dataset", "noise", "seed")
    # Where each kind of final model lies, by its fields, and what it trained from beside its noise labels. Prune-and-
    # retrain's kept set, INCV's selection and the ensemble's members have no t.
    if method == "cl_prune":
        names, location, selections = (*setting, "K", "M"), FINAL_PRUNED, [CL_SELECTION]
    elif method in SELECTION_METHODS:
        names, location, selections = (*setting, "K", "M", "t"), FINAL_SELECTED, [SELECTION]
    elif method == "incv":
        names, location, selections = setting, FINAL_INCV, [INCV_SELECTION]
    elif method == "ce_mixup_ensemble":
        names, location, selections = (*setting, "K", "M"), FINAL_ENSEMBLE, []
    elif method in BASELINE_METHODS:
        names, location, selections = setting, FINAL_BASELINE, []
    else:
        audit.problems.append(f"{source} (source of {where}): unknown method {method!r}")
        return
    fields = _fields(record, names)
    if fields is None:
        audit.problems.append(f"{source} (source of {where}): lacks one of {', '.join(names)}")
        return
    _check_location(audit, source, where, location.format(**fields, method=method, baseline=method))
    inputs = [NOISE_LABELS.format(**fields), *(selection.format(**fields) for selection in selections)]
    if method == "ce_mixup_ensemble":
        budget = budget_members(num_folds=int(fields["K"]), iterations=int(fields["M"]))
        inputs += [ENSEMBLE_MEMBER.format(**fields, member=member) for member in range(1, budget + 1)]
    _require_files(audit, source, where, inputs)


def _audit_table1_row(audit: Audit, where: str, row: pd.Series) -> None:
    """One Table 1 row: sources exist and recompute it; each selection's inputs exist."""
    present, complete = _present_sources(audit, where, row["sources"])
    records = _load_records(audit, where, present)
    if records is None:
        return
    for record in records.to_dict("records"):
        _check_selection_inputs(audit, where, record)
    if complete:
        recomputed = _recomputed_row(audit, where, table1, records)
        if recomputed is not None:
            _compare_row(audit, where, row, recomputed, TABLE1_KEYS, TABLE1_VALUES)


def _audit_empty_table2_row(audit: Audit, where: str, row: pd.Series) -> None:
    """A Table 2 row without runs: no sources, NaN in every reading."""
    if row["sources"].strip():
        audit.problems.append(f"{where}: has no runs but lists sources: {row['sources']}")
    for column in (value for value in TABLE2_VALUES if value != "runs"):
        if not math.isnan(row[column]):
            audit.problems.append(f"{where}, column {column!r}: has no runs but is {_show(row[column])}, not NaN")
    audit.cells += len(TABLE2_VALUES)


def _audit_table2_row(audit: Audit, where: str, row: pd.Series) -> None:
    """One Table 2 row: sources exist, match the row, number ``runs`` and recompute it; their inputs exist."""
    if math.isnan(row["runs"]):
        audit.problems.append(f"{where}, column 'runs': no number, so the row cannot be checked")
        return
    if row["runs"] == 0:
        _audit_empty_table2_row(audit, where, row)
        return
    present, complete = _present_sources(audit, where, row["sources"])
    records = _load_records(audit, where, present)
    if records is None:
        return
    for record in records.to_dict("records"):
        _check_final_result(audit, where, row, record)
    listed = len([source for source in row["sources"].split(";") if source.strip()])
    if listed != row["runs"]:
        audit.problems.append(f"{where}: lists {listed} sources for {int(row['runs'])} runs")
    if complete:
        recomputed = _recomputed_row(audit, where, partial(table2, methods=[row["method"]]), records)
        if recomputed is not None:
            _compare_row(audit, where, row, recomputed, TABLE2_KEYS, TABLE2_VALUES)


def _audit_table(audit: Audit, table: str, keys: tuple[str, ...], values: tuple[str, ...], audit_row) -> None:
    """Read one table's CSV and audit each of its rows with ``audit_row(audit, where, row)``."""
    frame = _read_report_table(audit, table, (*keys, *values, "sources"))
    if frame is None:
        return
    if frame.empty:
        audit.problems.append(f"{table}: has no rows")
    for number, (_, row) in enumerate(frame.iterrows(), start=1):
        audit.rows += 1
        audit_row(audit, _where(table, number, row, keys), row)


def run_audit(*, workdir: str | Path) -> Audit:
    """Audit Table 1 and Table 2 of the workflow run in ``workdir``.

    Raises
    ------
    FileNotFoundError : ``workdir`` has no ``results/report/`` (the workflow has not been run there).
    """
    workdir = Path(workdir)
    if not (workdir / REPORT).is_dir():
        raise FileNotFoundError(
            f"{workdir / REPORT} not found: no tables to audit. Run the workflow in {workdir} first "
            f"(`snakemake --cores all`, or `make run` in the repository), then audit again."
        )
    audit = Audit(workdir=workdir)
    _audit_table(audit, TABLE1, TABLE1_KEYS, TABLE1_VALUES, _audit_table1_row)
    _audit_table(audit, TABLE2, TABLE2_KEYS, TABLE2_VALUES, _audit_table2_row)
    return audit


def audit_results(*, workdir: str | Path) -> list[str]:
    """Problems found tracing every cell of Table 1 and Table 2 in ``workdir`` back to its result files (empty:
    clean). See the module docstring for what is checked; raises like :func:`run_audit`."""
    return run_audit(workdir=workdir).problems


def main(argv: list[str] | None = None) -> int:
    """Command line: print the summary (clean, exit 0) or the problems then the summary (exit 1); exit 2 on bad
    arguments."""
    parser = argparse.ArgumentParser(
        prog="python -m enkcvs.report.audit",
        description="Trace every cell of results/report/table{1,2}.csv back to result files that exist.",
    )
    parser.add_argument(
        "workdir",
        nargs="?",
        default=".",
        metavar="WORKDIR",
        help="the workflow's working directory, holding results/ (default: .)",
    )
    args = parser.parse_args(argv)
    try:
        audit = run_audit(workdir=args.workdir)
    except FileNotFoundError as error:
        parser.error(str(error))  # exits 2
    for problem in audit.problems:
        print(problem)
    print(audit.summary())
    return 1 if audit.problems else 0


if __name__ == "__main__":
    sys.exit(main())
