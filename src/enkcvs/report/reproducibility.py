"""What a result is reproducible over, measured: two records of one config at one commit that differ only in the CPU
class whose kernels computed them (:data:`enkcvs.machine.ISA_VARIABLES`), each Table 2 cell's move between them set
against its spread over seeds (docs/results.md)."""

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from enkcvs.io import read_json
from enkcvs.recording.compare import compare_runs

#: The columns that name a Table 2 cell.
CELL = ["dataset", "noise_kind", "noise_rate", "method"]


@dataclass(frozen=True)
class KernelClasses:
    """Two records of one config (``first``, ``second``: their names) at one ``commit``.

    ``tables``: per result table, its numeric columns and cells, those that differ and the largest difference
    (:func:`enkcvs.recording.compare.compare_runs`); ``cells``: each Table 2 cell's mean in both, their difference
    and the larger of the two seed standard deviations (points); ``beyond_spread``: the cells whose difference
    exceeds that spread."""

    first: str
    second: str
    commit: str
    limits: dict[str, dict[str, str]]  # each record's instruction-set limits (none: the CPU's own kernels)
    tables: pd.DataFrame
    cells: pd.DataFrame
    beyond_spread: int


def _by_table(columns: pd.DataFrame) -> pd.DataFrame:
    """:func:`~enkcvs.recording.compare.compare_runs`' rows summed per table: its numeric columns, those that
    differ, the cells that differ of all, the largest difference."""
    return (
        columns.assign(moved=columns["differ"] > 0)
        .groupby("table")
        .agg(
            columns=("column", "size"),
            columns_differ=("moved", "sum"),
            cells=("cells", "sum"),
            cells_differ=("differ", "sum"),
            max_abs_difference=("max_abs_difference", "max"),
        )
        .reset_index()
    )


def kernel_classes(*, records: Path, first: str, second: str) -> KernelClasses:
    """Compare the records ``first`` and ``second`` under ``records`` (``results/recorded``); raises ``ValueError``
    where they ran other configs or commits, or where either ran with uncommitted changes: then what differs
    between them is not the CPU class alone."""
    facts = {name: read_json(records / name / "provenance.json") for name in (first, second)}
    a, b = facts[first], facts[second]
    if a["config"] != b["config"] or a["git"] != b["git"] or a["git"].get("dirty"):
        raise ValueError(
            f"{first} and {second} are not one config at one clean commit: record both from a clean clone of one "
            "commit with the same config"
        )
    if a["versions"] != b["versions"]:
        raise ValueError(f"{first} and {second} ran other package versions: record both in one environment")
    tables = compare_runs(records / first, records / second)
    cells = pd.read_csv(records / first / "table2.csv").merge(
        pd.read_csv(records / second / "table2.csv"), on=CELL, suffixes=("_first", "_second")
    )[CELL + ["mean_first", "mean_second", "std_first", "std_second"]]
    cells["difference"] = cells["mean_second"] - cells["mean_first"]
    cells["seed_spread"] = np.fmax(cells["std_first"], cells["std_second"])
    return KernelClasses(
        first=first,
        second=second,
        commit=a["git"]["commit"],
        limits={name: facts[name].get("instruction_set_limits") or {} for name in (first, second)},
        tables=_by_table(tables),
        cells=cells,
        beyond_spread=int((cells["difference"].abs() > cells["seed_spread"]).sum()),
    )
