"""Views of retired recorded runs, read from the history that keeps them (:mod:`enkcvs.recording.retire`): the
sentence naming a run, how two runs' tables differ, and a recorded run's Table 2 beside a retired one's."""

from pathlib import Path

import pandas as pd

from enkcvs.recording.provenance import run_sentence
from enkcvs.recording.retire import history_difference, history_run
from enkcvs.report.views.diff import difference_text
from enkcvs.report.views.table2 import tables_beside


def retired_run_line(history: dict, *, name: str, source: str) -> str:
    """The sentence naming the retired run ``name`` (as :func:`enkcvs.recording.provenance.run_line` names a recorded
    one), saying that ``source``, the history, keeps it."""
    return run_sentence(history_run(history, name=name), files=f"its folder retired, its provenance kept in `{source}`")


def retired_difference(history: dict, *, second: str, first: str) -> str:
    """How ``second``'s tables differ from ``first``'s, as the view ``diff`` states it, from the history."""
    return difference_text(history_difference(history, second=second, first=first))


def retired_table2_beside(history: dict, *, run: Path, retired: str) -> str:
    """The recorded ``run``'s Table 2 beside the retired run's kept in the history, as the view ``table2-beside``
    sets two recorded runs side by side."""
    cells = history_run(history, name=retired).get("table2")
    if cells is None:
        raise KeyError(f"the history keeps no Table 2 of {retired}")
    return tables_beside(first=(retired, pd.DataFrame(cells)), second=(run.name, pd.read_csv(run / "table2.csv")))
