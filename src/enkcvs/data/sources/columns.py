"""What a table's columns hold, read as a careful analyst reads them: text of numbers, times of day or dates read as
numbers (:func:`read_values`), columns that name rows (:func:`id_like_columns`) and codes of too many values to
one-hot encode (:func:`swamping_codes`) told apart from features, and what is left out said in one line."""

import warnings
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

#: Column names that say a column numbers the rows (compared in lower case): R's and pandas' written indices among them.
ID_NAMES = ("", "id", "index", "rownames", "row", "row_id", "rowid", "row.names")
#: Distinct values per row from which a column names rows: a few repeats (a re-entered row, a gap) still make an id.
ID_SHARE = 0.95
#: Rows a table needs before a unique column counts as ids: in fewer, a feature is unique by chance (x = 0, 1, 2, 3).
ID_ROWS = 10
#: Distinct values a code may hold and be one-hot encoded: beyond 50, its 0/1 columns outnumber a table's usual
#: features many times over and each holds a few rows, too few to learn from.
CODES_AT_MOST = 50
#: A time of day as text: H:MM or HH:MM:SS(.s); hours, minutes, seconds captured (a plain number like 1030 is none).
TIME = r"(\d{1,2}):([0-5]\d)(?::([0-5]\d(?:\.\d+)?))?"
#: How a date as text starts: year first (2016-09-05) or last (9/5/2016, 05.09.16), one separator throughout.
DATE = r"\d{4}([-/.])\d{1,2}\1\d{1,2}|\d{1,2}([-/.])\d{1,2}\2\d{2,4}"
DATES, TIMES = "dates, in days since 1970-01-01", "times of day, in minutes since midnight"  # what a feature holds


def id_like_columns(frame: "pd.DataFrame") -> dict:
    """The columns of ``frame`` (as :func:`read_values` reads them) that look like row ids rather than features, each
    with why: named like an index (:data:`ID_NAMES`, or pandas' ``Unnamed: <n>`` of a written index), or text or
    integers distinct on a share :data:`ID_SHARE` of the rows or more (of :data:`ID_ROWS` or more). Dates and times,
    unique or not, are features: read as such, they are no text."""
    from pandas.api.types import is_bool_dtype

    reasons = {}
    for column in frame.columns:
        values, distinct = frame[column], frame[column].nunique()
        text = is_code(values) and not is_bool_dtype(values)
        if str(column).strip().lower() in ID_NAMES or str(column).startswith("Unnamed: "):
            reasons[column] = "named like an index"
        elif len(values) >= ID_ROWS and distinct >= ID_SHARE * len(values) and (integers(values) or text):
            many = f"nearly unique per row: {distinct} values in {len(values)} rows"
            reasons[column] = "unique per row" if distinct == len(values) else many
    return reasons


def swamping_codes(frame: "pd.DataFrame") -> dict:
    """The columns of ``frame`` (as :func:`read_values` reads them) one-hot encoded were they features, of more than
    :data:`CODES_AT_MOST` distinct values, with their number of values."""
    return {c: n for c in frame.columns if is_code(frame[c]) and (n := frame[c].nunique()) > CODES_AT_MOST}


def read_values(frame: "pd.DataFrame") -> tuple["pd.DataFrame", dict]:
    """``frame`` with each column read as what it holds (:func:`_as_read`), and what each column read anew became."""
    import pandas as pd

    read = {c: _as_read(frame[c]) for c in frame.columns}
    said = {c: what for c, (_, what) in read.items() if what}
    return pd.DataFrame({c: column for c, (column, _) in read.items()}, index=frame.index), said


def _as_read(values: "pd.Series") -> tuple["pd.Series", str | None]:
    """A column read as what it holds, and what that is where not as stored (None: kept as it is). Text whose every
    present value reads as a number becomes numbers; as a time of day (:data:`TIME`), durations since midnight; as a
    date or date-time (:data:`DATE`, then pandas), UTC dates, day first where a first field above 12 says so. Stored
    dates and durations are kept; all become numbers where encoded (:func:`_as_number`). Missing stays missing."""
    import pandas as pd
    from pandas.api.types import is_datetime64_any_dtype, is_timedelta64_dtype

    if is_datetime64_any_dtype(values) or is_timedelta64_dtype(values):
        return values, DATES if is_datetime64_any_dtype(values) else "durations, in minutes"
    if not (values.dtype == object or isinstance(values.dtype, pd.StringDtype)) or values.isna().all():
        return values, None
    text = values.dropna().astype(str).str.strip()
    if (numbers := pd.to_numeric(text, errors="coerce")).notna().all():
        return numbers.reindex(values.index), "text of numbers"
    if text.str.fullmatch(TIME).all():
        parts = text.str.extract(TIME).astype(float).fillna(0)  # (n, 3) hours, minutes, seconds
        return pd.to_timedelta(parts[0] * 60 + parts[1] + parts[2] / 60, unit="min").reindex(values.index), TIMES
    if text.str.match(DATE).all():
        dayfirst = bool(text.str.extract(r"^(\d{1,2})[-/.]", expand=False).astype(float).gt(12).any())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # pandas' note that it reads each value on its own
            dates = pd.to_datetime(text, errors="coerce", utc=True, dayfirst=dayfirst)  # in the first value's format
        if dates.isna().any():  # formats differ: each value read on its own
            dates = pd.to_datetime(text, format="mixed", errors="coerce", utc=True, dayfirst=dayfirst)
        if dates.notna().all():
            return dates.reindex(values.index), DATES
    return values, None


def is_code(values: "pd.Series") -> bool:
    """Whether a column is one-hot encoded as a feature: booleans, text, categories, anything but numbers and times."""
    from pandas.api.types import is_bool_dtype, is_datetime64_any_dtype, is_numeric_dtype, is_timedelta64_dtype

    return is_bool_dtype(values) or not (
        is_numeric_dtype(values) or is_datetime64_any_dtype(values) or is_timedelta64_dtype(values)
    )


def integers(values: "pd.Series") -> bool:
    """Whether a column holds integers: of an integer type, or floats that are whole (integers with a gap read so)."""
    from pandas.api.types import is_float_dtype, is_integer_dtype

    present = values.dropna()
    return is_integer_dtype(values) or is_float_dtype(values) and bool(present.eq(present.round()).all())


def as_number(values: "pd.Series") -> "pd.Series":
    """A feature column as floats: dates in days since 1970-01-01 (UTC), durations in minutes."""
    import pandas as pd
    from pandas.api.types import is_datetime64_any_dtype, is_timedelta64_dtype

    if is_datetime64_any_dtype(values):
        return (values - pd.Timestamp(0, tz=values.dt.tz)) / pd.Timedelta(days=1)
    return values / pd.Timedelta(minutes=1) if is_timedelta64_dtype(values) else values.astype(float)


def left_out_line(path: str, *, ids: dict, codes: dict, others: int) -> str:
    """One line naming the columns left out of the features of ``path`` and why: ``ids``, column -> why it looks
    like row ids; ``codes``, column -> its number of values; ``others``, the features kept."""
    grouped = {}
    for column, why in ids.items():
        grouped.setdefault(why, []).append(column)
    said = [
        f"column{'s' * (len(c) > 1)} {c} look{'s' * (len(c) == 1)} like row ids ({why})" for why, c in grouped.items()
    ]
    said += [
        f"column [{c!r}] is a code of {n} values: its one-hot columns would swamp the {others} other features"
        for c, n in codes.items()
    ]
    them = "them" if len(ids) + len(codes) > 1 else "it"
    return (
        f"{path}: {'; '.join(said)}: left out of the features. Fix: name {them} in source_options.feature_columns "
        f"to use {them}"
    )
