"""The paper's published numbers (Tables 1-3), transcribed once by hand into ``enkcvs/report/published.csv``.

The CSV is long: one row per printed number. Rows that the paper's LaTeX comments out (Table 1's eps = 0.5 row, Table
2's Forward, LSR and GCE rows) are not part of the paper and are not transcribed. A cell the paper prints as "-" has no
row. The ``note`` column records every judgement the transcription needed (inferred attributions in Table 3, a row of
Table 1 that is inconsistent with itself).
"""

from functools import cache
from importlib.resources import files

import pandas as pd

#: Columns of :func:`published_results`, in order.
#: How many runs each of Table 2's cells averages ("mean ± std over 5 runs").
TABLE2_RUNS = 5
COLUMNS = (
    "table",
    "dataset",
    "noise_kind",
    "noise_rate",
    "method",
    "metric",
    "value",
    "std",
    "source",
    "note",
    "printed_decimals",
)

#: Columns that identify one published number.
KEY = ("table", "dataset", "noise_kind", "noise_rate", "method", "metric")

#: The selection parameters behind Table 1 (its caption) and the default ones of Table 2.
TABLE1_SELECTION = {"K": 10, "M": 5, "t": 2}

#: The ``source`` of a number from the paper's own runs; any other source is the citation key of a quoted paper.
OWN_SOURCE = "enkcvs"

#: Method ids of the CSV and the names the paper prints for them.
METHOD_NAMES = {
    "ce": "CE",
    "mentornet": "MentorNet",
    "sl": "SL",
    "dmi": "DMI",
    "coteaching": "Co-teaching",
    "mentormix": "MentorMix",
    "dividemix": "DivideMix",
    "enkcvs": "E-NKCVS",
}


def _decimals(text: str) -> int:
    return len(text.partition(".")[2])


@cache
def _load() -> pd.DataFrame:
    with (files("enkcvs.report") / "published.csv").open("r", encoding="utf-8") as handle:
        raw = pd.read_csv(handle, dtype=str, keep_default_na=False)
    frame = pd.DataFrame(
        {
            "table": raw["table"].astype(int),
            "dataset": raw["dataset"],
            "noise_kind": raw["noise_kind"],
            # empty (Table 3, real-world noise) -> NaN
            "noise_rate": pd.to_numeric(raw["noise_rate"].replace("", None), errors="raise").astype(float),
            "method": raw["method"],
            "metric": raw["metric"],
            "value": pd.to_numeric(raw["value"], errors="raise").astype(float),
            "std": pd.to_numeric(raw["std"].replace("", None), errors="raise").astype(float),
            "source": raw["source"],
            "note": raw["note"],
            # decimals as printed, so a published cell can be shown exactly as the paper shows it
            "printed_decimals": raw["value"].map(_decimals).astype(int),
        }
    )
    return frame


def published_results() -> pd.DataFrame:
    """Every number of the paper's Tables 1-3, one row per number.

    Returns
    -------
    pandas.DataFrame
        149 rows (Table 1: 25, Table 2: 112, Table 3: 12) in the paper's order, with columns

        - ``table`` (int): 1, 2 or 3.
        - ``dataset`` (str): as printed: ``MNIST``, ``CIFAR-10``, ``CIFAR-100``, ``TREC``, ``Clothing-1M``,
          ``WebVision``.
        - ``noise_kind`` (str): ``sym``, ``asym``, or ``real`` (Table 3).
        - ``noise_rate`` (float): epsilon; NaN for Table 3.
        - ``method`` (str): lowercase id, see :data:`METHOD_NAMES`.
        - ``metric`` (str): ``test_accuracy`` (%; WebVision: top-1), or for Table 1 ``CS``, ``SS``, ``CSS`` (counts),
          ``precision``, ``recall`` (%).
        - ``value`` (float) and ``std`` (float, NaN where none is printed).
        - ``source`` (str): ``enkcvs`` for the paper's own runs, else the citation key of the quoted paper.
        - ``note`` (str): how an ambiguity was resolved; empty for most rows.
        - ``printed_decimals`` (int): digits after the point as printed.

        A fresh copy each call (the parsed file is cached).
    """
    return _load().copy()
