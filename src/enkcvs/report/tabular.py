"""A result table written to disk: CSV with full precision, Markdown with a caption, and a booktabs LaTeX tabular.

What the tables hold is built elsewhere (:mod:`enkcvs.report.tables`, the paper-shaped tables of
:mod:`enkcvs.report.comparison`); this module only turns a pandas frame into the three files, escaping LaTeX and
flattening grouped headers on the way.
"""

import itertools
import re
import textwrap
from typing import Any

import pandas as pd

from enkcvs.io import PathLike, atomic_path

_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    # outside pdfLaTeX's default input encoding
    "±": r"$\pm$",
    "Δ": r"$\Delta$",
    "—": "---",
    "×": r"$\times$",
    "†": r"\dag{}",
}
_LATEX_BOLD = re.compile(r"\\textbf\{(.*)\}", re.DOTALL)


def latex_escape(value: Any) -> Any:
    """A table cell or header as LaTeX text: special characters escaped, a ``\\textbf{...}`` wrapper (the best
    cell of a row) kept; numbers unchanged."""
    if not isinstance(value, str):
        return value
    bold = _LATEX_BOLD.fullmatch(value)
    text = bold[1] if bold else value
    text = "".join(_LATEX_SPECIALS.get(char, char) for char in text)
    return rf"\textbf{{{text}}}" if bold else text


def _flat_header(frame: pd.DataFrame) -> pd.DataFrame:
    """Two-level columns as one header line: ``("asymmetric", "0.4 paper")`` -> ``"asymmetric 0.4 paper"``."""
    if not isinstance(frame.columns, pd.MultiIndex):
        return frame
    return frame.set_axis([" ".join(part for part in column if part) for column in frame.columns], axis=1)


def latex_tabular(frame: pd.DataFrame, *, decimals: int, group_rows: bool = False) -> str:
    r"""A booktabs ``tabular``: cells escaped (:func:`latex_escape`), two-level columns as centred groups each
    underlined by a ``\cmidrule``; with ``group_rows``, the first column's value only on the first row of each run of
    equal values, runs separated by ``\midrule`` (the paper's dataset blocks)."""
    escaped = frame.map(latex_escape).rename(columns=latex_escape)
    starts = []
    if group_rows:
        first = escaped.iloc[:, 0]
        starts = [i for i in range(1, len(first)) if first.iloc[i] != first.iloc[i - 1]]
        escaped.iloc[:, 0] = first.where(first.ne(first.shift()), "")
    text = escaped.to_latex(
        index=False, float_format=f"%.{decimals}f", escape=False, multicolumn=True, multicolumn_format="c"
    )
    lines = text.splitlines()
    top, middle = lines.index(r"\toprule"), lines.index(r"\midrule")
    if isinstance(frame.columns, pd.MultiIndex):
        rules, column = [], 1
        for group, span in itertools.groupby(frame.columns.get_level_values(0)):
            width = len(list(span))
            if group:
                rules.append(rf"\cmidrule(lr){{{column}-{column + width - 1}}}")
            column += width
        lines.insert(top + 2, " ".join(rules))
        middle += 1
    for start in reversed(starts):
        lines.insert(middle + 1 + start, r"\midrule")
    return "\n".join(lines) + "\n"


def write_table(
    frame: pd.DataFrame,
    *,
    markdown: PathLike,
    csv: PathLike,
    latex: PathLike,
    decimals: int,
    readable: pd.DataFrame | None = None,
    readable_latex: pd.DataFrame | None = None,
    caption: str = "",
    group_rows: bool = False,
) -> None:
    """Write ``frame`` as CSV (full precision, with its ``sources``), ``readable`` (default: ``frame`` rounded,
    without sources) as Markdown with ``caption`` below it, and ``readable_latex`` (default: ``readable``, e.g. with
    LaTeX bold instead of Markdown's) as a booktabs tabular (:func:`latex_tabular`) with the caption as a comment."""
    if readable is None:
        readable = frame.drop(columns="sources", errors="ignore").round(decimals)
    if readable_latex is None:
        readable_latex = readable
    with atomic_path(csv) as tmp:
        frame.to_csv(tmp, index=False)
    with atomic_path(markdown) as tmp:
        # formatted text ("+0.40", "0.4 paper") stays as written; only float columns are formatted here
        numbers = any(pd.api.types.is_float_dtype(dtype) for dtype in readable.dtypes)
        table = _flat_header(readable).to_markdown(index=False, floatfmt=f".{decimals}f", disable_numparse=not numbers)
        tmp.write_text(table + (f"\n\n{caption}" if caption else "") + "\n")
    with atomic_path(latex) as tmp:
        comment = "".join(f"% {line}\n" for line in textwrap.wrap(caption, 116))
        packages = "% needs \\usepackage{booktabs}\n"
        tmp.write_text(packages + comment + latex_tabular(readable_latex, decimals=decimals, group_rows=group_rows))
