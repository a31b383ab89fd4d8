"""What ``enkcvs find-issues`` writes, from given probabilities or from the data itself: the ranked table (``--out``,
.csv or .parquet), the review sheet beside it, and the summary line; and the checks of the options they depend on.
"""

import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from enkcvs.io import atomic_path, save_figure
from enkcvs.labelissues.issues import in_rank_order
from enkcvs.labelissues.oof import SelectionResult
from enkcvs.labelissues.review import DEFAULT_TOP

#: Output formats, by the suffix of ``--out``.
WRITERS = {
    ".csv": lambda frame, path: frame.to_csv(path, index=False),
    ".parquet": lambda frame, path: frame.to_parquet(path, index=False),
}


def review_paths(out: Path) -> dict[str, Path]:
    """The review sheet's files beside the table ``out``: ``issues.csv`` -> ``issues.review.png``, ``.pdf`` (images)
    and ``issues.review.md`` (texts and tables)."""
    return {suffix: out.with_name(f"{out.stem}.review.{suffix}") for suffix in ("png", "pdf", "md")}


def checked_out(out: Path):
    """The writer of ``--out``'s format; ValueError for a folder or an unknown extension."""
    if out.is_dir():
        raise ValueError(
            f"--out points to a folder, give the file to write: {out} is a folder. Fix: e.g. --out {out / 'issues.csv'}"
        )
    writer = WRITERS.get(out.suffix.lower())
    if writer is None:
        raise ValueError(f"--out {out}: unknown extension {out.suffix!r}; use one of {sorted(WRITERS)}")
    return writer


def checked_threshold(threshold: int | None, *, iterations: int | None) -> None:
    """ValueError, worded in ``--threshold``, for a t outside 1..M."""
    if threshold is not None and iterations is not None and not 1 <= threshold <= iterations:
        raise ValueError(
            f"--threshold {threshold}: a sample gets at most one vote from each of the M = {iterations} "
            f"repetitions, so t lies in 1..{iterations}. Fix: pass --threshold between 1 and "
            f"{iterations}"
        )


def checked_review_top(review_top: int | None) -> None:
    """ValueError, worded in ``--review-top``, for a sheet of fewer than one sample."""
    if review_top is not None and review_top < 1:
        raise ValueError(
            f"--review-top {review_top}: a review sheet shows N >= 1 samples. Fix: pass --review-top 1 "
            f"or more (default {DEFAULT_TOP})"
        )


def write_ranking(frame: pd.DataFrame, *, result: SelectionResult, sheet, out: Path, by_rank: bool = False) -> str:
    """Write the label-issue ``frame`` (one row per sample, in the data's order) to ``out`` in its format, sorted by
    ``rank`` with ``by_rank`` (``--sorted``), and ``sheet`` (a figure, Markdown text, or None) beside it
    (:func:`review_paths`); returns the summary line of both sets and where they were written."""
    with atomic_path(out) as tmp:
        checked_out(out)(in_rank_order(frame) if by_rank else frame, tmp)
    written = "" if sheet is None else f"; review sheet {_write_sheet(sheet, out=out)}"
    listed, kept = int(frame["is_label_issue"].sum()), int(frame["kept"].sum())
    order = "most likely mislabelled first" if by_rank else "in the data's order"
    return (
        f"{listed} of {len(frame)} samples in the review list (likely label errors: the first not kept of the "
        "ranking, as many as confident learning finds among them); "
        f"{kept} kept for training (selected in at least t = {result.threshold} of M = {result.iterations} "
        f"iterations); every sample ranked in {out} ({order}){written}"
    )


def _write_sheet(sheet, *, out: Path) -> str:
    """Write a review sheet (a figure: PNG and PDF; Markdown text) beside ``out``; returns where, in words."""
    from enkcvs.labelissues.review import write_markdown

    paths = review_paths(out)
    if isinstance(sheet, str):
        write_markdown(sheet, path=paths["md"])
        return str(paths["md"])
    import matplotlib.pyplot as plt

    save_figure(sheet, png=paths["png"], pdf=paths["pdf"], dpi=150)
    plt.close(sheet)
    return f"{paths['png']} and {paths['pdf']}"


def warn_when_most_are_not_kept(flags: np.ndarray, *, causes: str) -> None:
    """A warning naming ``causes`` (the likely ones, and what to check) when over half of the (N,) samples are not
    kept (``flags``), pointing at the caller's caller: the function of the command that ranked them."""
    flagged = int(flags.sum())
    if flagged > len(flags) / 2:
        warnings.warn(
            f"{flagged} of {len(flags)} samples ({100 * flagged / len(flags):.0f}%) are not kept "
            f"(selected in fewer than t iterations){causes}",
            stacklevel=3,
        )
