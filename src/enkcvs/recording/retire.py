"""A history of retired recorded runs: what the pages cite of runs that are history only (a speed comparison's before
and after, a rerun, a record superseded by a fix), written from their folders into one JSON under
``benchmarks/results/`` before the folders leave ``results/recorded/``
(``python benchmarks/retire_runs.py``; the pages' blocks read it back: :mod:`enkcvs.report.views.retired`).

Per retired run it keeps its provenance as ``provenance.json`` holds it (the config parsed from its YAML text, so that
a page can bind a config key), its training rules' rows of ``resources.csv`` and its Table 2 cells; per pair of
runs, retired or still recorded, how their tables differ (:func:`enkcvs.recording.compare.difference`).
"""

import json
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import yaml

from enkcvs.io import PathLike
from enkcvs.recording.compare import difference

#: The columns of a retired run's Table 2 cells that the history keeps.
TABLE2_COLUMNS = ("dataset", "noise_kind", "noise_rate", "method", "mean", "std", "runs")


def _rows(frame: pd.DataFrame) -> list[dict]:
    """A frame's rows for JSON: a missing value as null."""
    return [{key: None if pd.isna(value) else value for key, value in row.items()} for row in frame.to_dict("records")]


def retired_run(folder: PathLike) -> dict:
    """What a history keeps of the recorded run in ``folder``: its provenance, ``config`` parsed, with
    ``training_jobs_by_rule`` (its ``resources.csv``) and ``table2`` (its Table 2 cells, :data:`TABLE2_COLUMNS`)
    where the run has them."""
    folder = Path(folder)
    run = json.loads((folder / "provenance.json").read_text())
    run["config"] = yaml.safe_load(run.get("config") or "") or {}
    if (folder / "resources.csv").exists():
        run["training_jobs_by_rule"] = _rows(pd.read_csv(folder / "resources.csv"))
    if (folder / "table2.csv").exists():
        run["table2"] = _rows(pd.read_csv(folder / "table2.csv")[list(TABLE2_COLUMNS)])
    return run


def run_history(
    *, what: str, runs: Sequence[PathLike], differences: Sequence[tuple[PathLike, PathLike]] = (), made_by: str = ""
) -> dict:
    """A history: ``what`` it holds, the command that wrote it (``made_by``), each folder of ``runs`` by name
    (:func:`retired_run`), and for each ``(second, first)`` of ``differences`` how the second run's tables differ
    from the first's."""
    names = [Path(folder).name for folder in runs]
    if len(set(names)) != len(names):
        raise ValueError(f"a run named twice: {names}")
    return {
        "what": what,
        "made_by": made_by,
        "runs": {name: retired_run(folder) for name, folder in zip(names, runs)},
        "differences": [difference(Path(first), Path(second)) for second, first in differences],
    }


def read_history(path: PathLike) -> dict:
    """A history as :func:`run_history` wrote it."""
    return json.loads(Path(path).read_text())


def history_run(history: dict, *, name: str) -> dict:
    """The retired run ``name`` of a history; ``KeyError`` naming those it holds where it holds none."""
    if name not in history["runs"]:
        raise KeyError(f"no retired run {name!r} in the history; it holds {sorted(history['runs'])}")
    return history["runs"][name]


def history_difference(history: dict, *, second: str, first: str) -> dict:
    """How ``second``'s tables differ from ``first``'s, as a history keeps it."""
    found = [item for item in history["differences"] if (item["second"], item["first"]) == (second, first)]
    if not found:
        kept = [f"{item['second']} against {item['first']}" for item in history["differences"]]
        raise KeyError(f"no difference of {second} against {first} in the history; it holds {kept}")
    return found[0]
