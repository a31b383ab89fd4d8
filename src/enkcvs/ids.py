"""Sample ids: a user's own names for the rows of a file, each of which must name one row."""

import numpy as np
import pandas as pd

SHOWN_IDS = 5  # repeated ids an error message lists


def repeated_ids(ids: np.ndarray | pd.Series) -> str:
    """The ids of ``ids`` (N,) that name more than one row, each with its rows (0-based, in file order, header not
    counted), for an error message: ``"'a.jpg' on rows 1, 5; 7 on rows 2, 3"``; the empty string when every id is
    unique."""
    series = pd.Series(ids)
    values = series.tolist()  # Python values: their repr is what the file holds
    rows: dict = {}
    for row in np.flatnonzero(series.duplicated(keep=False).to_numpy()):  # every row of a repeated id
        rows.setdefault(values[row], []).append(int(row))
    shown = "; ".join(f"{value!r} on rows {', '.join(map(str, at))}" for value, at in list(rows.items())[:SHOWN_IDS])
    more = f"; ... ({len(rows)} ids repeat)" if len(rows) > SHOWN_IDS else ""
    return shown + more
