"""What the views of recorded runs share: the columns that name a setting, a label per setting, a count of settings,
the span of values, a difference in points."""

import pandas as pd


#: The columns that name a setting in a run's tables.
SETTING = ["dataset", "noise_kind", "noise_rate"]


def setting_labels(frame: pd.DataFrame) -> list[str]:
    """One label per row for a Table 2 setting: ``mnist5k asym 0.4``."""
    return [f"{d} {k} {r:g}" for d, k, r in zip(frame["dataset"], frame["noise_kind"], frame["noise_rate"])]


def settings_phrase(count: int) -> str:
    """A count of settings in words: ``1 setting``, ``3 settings``."""
    return "1 setting" if count == 1 else f"{count} settings"


def span(values: pd.Series, *, spec: str = ".1f", joiner: str = "-") -> str:
    """The values' lowest and highest, formatted with ``spec``, or one of them where they read the same."""
    low, high = f"{values.min():{spec}}", f"{values.max():{spec}}"
    return low if low == high else f"{low}{joiner}{high}"


def points(value: float) -> str:
    """A difference in points of test accuracy as the tables print it: to two decimals, a trailing zero dropped
    (``0.38``, ``7.7``, ``1.0``), since a one-seed cell on 10,000 test images moves by 0.01."""
    text = f"{abs(value):.2f}"
    return text[:-1] if text.endswith("0") else text
