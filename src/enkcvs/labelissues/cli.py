"""The ``enkcvs`` command: E-NKCVS on predictions a user already has.

``enkcvs find-issues --probabilities oof.npy --labels labels.csv --out issues.csv`` ranks every sample from most to
least likely mislabelled (:func:`enkcvs.labelissues.oof.select`). With ``--images images.npy`` (an array
(N, H, W), (N, H, W, C) or (N, C, H, W)), ``--image-column COLUMN`` (image paths in the labels file, relative to its
folder or absolute) or ``--text-column COLUMN`` (texts in the labels file) it also writes the review sheet of the top
``--review-top`` samples (:mod:`enkcvs.labelissues.review`; 36) beside ``--out``: ``issues.review.png`` and ``.pdf`` for
images, ``issues.review.md`` for texts. Exit status 0 on success, 1 when an input file or option is bad (the message
names the problem and the fix; nothing is written), 2 on a malformed command line.
"""

import argparse
import sys
from pathlib import Path

import numpy as np

from enkcvs.io import atomic_path, save_figure
from enkcvs.labelissues.review import DEFAULT_TOP


#: Output formats, by the suffix of ``--out``.
WRITERS = {
    ".csv": lambda frame, path: frame.to_csv(path, index=False),
    ".parquet": lambda frame, path: frame.to_parquet(path, index=False),
}


def find_issues(
    *,
    probabilities: Path,
    labels: Path,
    out: Path,
    label_column: str | None = None,
    id_column: str | None = None,
    class_names: list[str] | None = None,
    threshold: int | None = None,
    images: Path | None = None,
    image_column: str | None = None,
    text_column: str | None = None,
    review_top: int | None = None,
) -> str:
    """Select and rank the samples of ``labels`` by their out-of-fold ``probabilities``; write the label-issue table
    (:meth:`enkcvs.labelissues.oof.SelectionResult.to_frame`, with the user's ``id_column`` after ``sample``) to ``out``
    (.csv or .parquet) and, given ``images`` (a .npy image batch), ``image_column`` or ``text_column`` (columns of
    ``labels``), the review sheet of its top ``review_top`` samples beside it (:func:`review_paths`). Everything is
    written only when every check passed. Returns a one-line summary; ValueError / FileNotFoundError on bad input."""
    from enkcvs.labelissues.oof import load_labels, load_probabilities, select

    writer = WRITERS.get(out.suffix.lower())
    if writer is None:
        raise ValueError(f"--out {out}: unknown extension {out.suffix!r}; use one of {sorted(WRITERS)}")
    shows = _checked_sheet_options(images=images, image_column=image_column, text_column=text_column,
                                   review_top=review_top)
    given = load_labels(labels, column=label_column)
    ids = None if id_column is None else _unique_ids(load_labels(labels, column=id_column, what="id"),
                                                     labels=labels, column=id_column)
    result = select(probabilities=load_probabilities(probabilities), labels=given, threshold=threshold,
                    class_names=class_names)
    frame = result.to_frame(ids=ids, id_column=id_column)
    caption = (f"E-NKCVS ranking of {labels.name}: M = {result.iterations} iterations, a sample kept when selected in "
               f"at least t = {result.threshold}")
    sheet = {"issues": frame, "caption": caption, "top": review_top or DEFAULT_TOP, "id_column": id_column}
    sheet = None if shows is None else _review_sheet(shows, labels=labels, **sheet)  # drawn before anything is written
    with atomic_path(out) as tmp:
        writer(frame, tmp)
    written = "" if sheet is None else f"; review sheet {_write_sheet(sheet, out=out)}"
    flagged = int(frame["is_label_issue"].sum())
    return (f"{flagged} of {len(frame)} samples are label issues (selected in fewer than t = {result.threshold} of "
            f"M = {result.iterations} iterations); every sample ranked in {out}{written}")


def review_paths(out: Path) -> dict[str, Path]:
    """The review sheet's files beside the table ``out``: ``issues.csv`` -> ``issues.review.png``, ``.pdf`` (images)
    and ``issues.review.md`` (texts)."""
    return {suffix: out.with_name(f"{out.stem}.review.{suffix}") for suffix in ("png", "pdf", "md")}


def _checked_sheet_options(
    *, images: Path | None, image_column: str | None, text_column: str | None, review_top: int | None
) -> tuple[str, Path | str] | None:
    """What the review sheet shows, ("images", .npy path), ("image_column", column) or ("text_column", column), or
    None for no sheet; ValueError for options that contradict each other or a sheet of N < 1 samples."""
    given = [(option, value) for option, value in
             (("images", images), ("image_column", image_column), ("text_column", text_column)) if value is not None]
    flags = " and ".join("--" + option.replace("_", "-") for option, _ in given)
    if len(given) > 1:
        raise ValueError(f"{flags} each choose what the review sheet shows; pass only one of them")
    if review_top is not None and review_top < 1:
        raise ValueError(f"--review-top {review_top}: a review sheet shows N >= 1 samples. Fix: pass --review-top 1 "
                         f"or more (default {DEFAULT_TOP})")
    if review_top is not None and not given:
        raise ValueError("--review-top sizes the review sheet, which needs what to show: pass --images, "
                         "--image-column or --text-column too")
    return given[0] if given else None


def _review_sheet(shows: tuple[str, Path | str], *, labels: Path, **sheet):
    """The review sheet in memory: a matplotlib figure of images, or Markdown text; errors before anything is
    written for images that do not match the labels, an unreadable image file or a missing column."""
    from enkcvs.labelissues.oof import load_labels
    from enkcvs.labelissues.review import draw_review_sheet, text_sheet

    option, value = shows
    if option == "text_column":
        return text_sheet(texts=load_labels(labels, column=value, what="text"), **sheet)
    if option == "image_column":
        paths = load_labels(labels, column=value, what="image").astype(str)
        return draw_review_sheet(images=paths, root=labels.parent, **sheet)
    if value.suffix.lower() != ".npy":
        raise ValueError(f"--images {value}: expected a .npy array (np.save) of N images; got {value.suffix!r}")
    if not value.is_file():
        raise FileNotFoundError(f"--images {value}: no such file. Fix: point --images at the .npy array of images")
    try:
        pixels = np.load(value, allow_pickle=False)
    except (ValueError, OSError, EOFError) as error:
        raise ValueError(f"--images {value} is unreadable ({type(error).__name__}: {error}). Fix: save the images "
                         "with np.save as one numeric array") from error
    if pixels.dtype.kind not in "biuf":
        raise ValueError(f"--images {value} holds {pixels.dtype} values, not pixels. Fix: save the pixel values as "
                         "one numeric array; for a column of image paths in the labels file use --image-column")
    return draw_review_sheet(images=pixels, **sheet)


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


def _unique_ids(ids: np.ndarray, *, labels: Path, column: str) -> np.ndarray:
    """``ids`` (N,), read from column ``column`` of the file ``labels``, when no id repeats; ValueError naming the
    repeated ids and their rows otherwise."""
    from enkcvs.ids import repeated_ids

    repeated = repeated_ids(ids)
    if repeated:
        raise ValueError(f"{labels}: the ids in --id-column {column} repeat ({repeated}; rows 0-based in sample order, "
                         "header not counted), so they cannot name a sample. Fix: make the ids unique, or pass "
                         "another --id-column")
    return ids


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(prog="enkcvs", description=__doc__.split("\n\n")[0])
    commands = main.add_subparsers(dest="command", required=True)
    command = commands.add_parser(
        "find-issues",
        help="rank samples by how likely their label is wrong, from out-of-fold probabilities",
        description="E-NKCVS on out-of-fold probabilities: a sample is kept when at least t of the M cross-validation "
        "repetitions predict its given label; every sample is ranked by label quality (lowest first). Writes one row "
        "per sample: given_label, suggested_label, is_label_issue, label_quality, votes, beta, rank.",
    )
    command.add_argument("--probabilities", required=True, type=Path, metavar="FILE",
                         help=".npy (N, Q) or (M, N, Q), or .parquet/.csv with columns prob_0..prob_{Q-1} "
                         "(and 'iteration' 1..M, 'sample' for M > 1)")
    command.add_argument("--labels", required=True, type=Path, metavar="FILE",
                         help="the given labels: .csv/.parquet (a label column; rows in the probabilities' order, "
                         "or a 'sample' column) or .npy")
    command.add_argument("--label-column", metavar="COLUMN", help="the label column (needed when the file has several)")
    command.add_argument("--id-column", metavar="COLUMN", help="a column of the labels file carried to the output")
    command.add_argument("--class-names", metavar="A,B,...", type=lambda text: text.split(","),
                         help="the class of each probability column, in column order (string labels otherwise map "
                         "in sorted order, with a warning)")
    command.add_argument("--threshold", "-t", type=int, metavar="T",
                         help="votes a sample needs to be kept (default: 1 for M = 1, else 2, the paper's)")
    command.add_argument("--out", required=True, type=Path, metavar="FILE", help="the ranked table: .csv or .parquet")
    sheet = command.add_argument_group(
        "review sheet", "the top samples, most likely mislabelled first, with class names, votes and label quality, "
        "written beside --out (issues.csv -> issues.review.png and .pdf, or issues.review.md); give one of --images, "
        "--image-column or --text-column")
    sheet.add_argument("--images", type=Path, metavar="FILE.npy",
                       help="the N images in the labels' order: an array (N, H, W), (N, H, W, C) or (N, C, H, W)")
    sheet.add_argument("--image-column", metavar="COLUMN",
                       help="a column of image paths in the labels file (relative to its folder, or absolute)")
    sheet.add_argument("--text-column", metavar="COLUMN", help="a column of texts in the labels file")
    sheet.add_argument("--review-top", type=int, metavar="N", help=f"samples on the sheet (default {DEFAULT_TOP})")
    return main


def main(argv: list[str] | None = None) -> int:
    arguments = parser().parse_args(argv)  # exits with 2 on a malformed command line
    options = {key: value for key, value in vars(arguments).items() if key != "command"}
    try:
        print(find_issues(**options))
    except (ValueError, FileNotFoundError) as error:
        print(f"enkcvs find-issues: error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
