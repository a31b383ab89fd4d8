"""The ``enkcvs`` command: E-NKCVS on predictions a user already has.

``enkcvs find-issues --probabilities oof.npy --labels labels.csv --out issues.csv`` ranks every sample from most to
least likely mislabelled (:func:`enkcvs.labelissues.oof.select`) and marks two sets: ``in_review_list``, the likely
label errors to check (as many as confident learning estimates), and ``kept``, the paper's selection to train on. With
``--images images.npy`` (an array (N, H, W), (N, H, W, C) or (N, C, H, W)), ``--image-column COLUMN`` (image paths in
the labels file, relative to its folder or absolute) or ``--text-column COLUMN`` (texts in the labels file) it also
writes the review sheet of the top ``--review-top`` samples (:mod:`enkcvs.labelissues.review`; 36) beside ``--out``:
``issues.review.png`` and ``.pdf`` for images, ``issues.review.md`` for texts. String labels are matched to the
probability columns by name (the columns' names, or ``--class-names``), by sorted order only with
``--classes-in-sorted-order``. Exit status 0 on success (with warnings on stderr, e.g. when over half the samples are
not kept), 2 on a malformed command line or a bad input file or option (the message names the problem and the fix;
nothing is written).
"""

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

from enkcvs.io import atomic_path, save_figure
from enkcvs.labelissues.review import DEFAULT_TOP


#: What each file option takes: the file in words, and its suffixes.
FILE_OPTIONS = {
    "probabilities": ("the .npy, .csv or .parquet file of the probabilities", (".npy", ".csv", ".parquet")),
    "labels": ("the CSV file (or a .parquet / .npy) of the labels", (".csv", ".parquet", ".npy")),
    "images": ("the .npy file of the images", (".npy",)),
}

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
    classes_in_sorted_order: bool = False,
    threshold: int | None = None,
    images: Path | None = None,
    image_column: str | None = None,
    text_column: str | None = None,
    review_top: int | None = None,
) -> str:
    """Select and rank the samples of ``labels`` by their out-of-fold ``probabilities``; write the label-issue table
    (:meth:`enkcvs.labelissues.oof.SelectionResult.to_frame`, with the user's ``id_column`` after ``sample``) to ``out``
    (.csv or .parquet) and, given ``images`` (a .npy image batch), ``image_column`` or ``text_column`` (columns of
    ``labels``), the review sheet of its top ``review_top`` samples beside it (:func:`review_paths`). String labels
    name the probability columns as :func:`_class_names` matches them. Everything is written only when every check
    passed. Returns a one-line summary of both sets; warns when over half the samples are not kept; ValueError /
    OSError, worded in the command's options, on bad input."""
    from enkcvs.labelissues.oof import load_named_probabilities, select

    writer = _checked_out(out)
    shows = _checked_sheet_options(images=images, image_column=image_column, text_column=text_column,
                                   review_top=review_top)
    for option, path in (("probabilities", probabilities), ("labels", labels), ("images", images)):
        _checked_file(path, option=option)
    given = _column(labels, column=label_column, what="label", id_column=id_column)
    ids = None if id_column is None else _unique_ids(_column(labels, column=id_column, what="id"), labels=labels,
                                                     column=id_column)
    stack, column_names = load_named_probabilities(probabilities)
    names, source = _class_names(given, column_names=column_names, class_names=class_names,
                                 sorted_order=classes_in_sorted_order, num_classes=_stack_size(stack, axis=-1),
                                 files=(probabilities, labels))
    _checked_threshold(threshold, iterations=_stack_size(stack, axis=0))
    result = select(probabilities=stack, labels=_encoded(given, names=names, source=source, labels=labels),
                    threshold=threshold, class_names=names)
    frame = result.to_frame(ids=ids, id_column=id_column)
    _warn_when_most_are_flagged(~frame["kept"].to_numpy(), source=source)
    caption = (f"E-NKCVS ranking of {labels.name}: M = {result.iterations} iterations, a sample kept when selected in "
               f"at least t = {result.threshold}")
    sheet = {"issues": frame, "caption": caption, "top": review_top or DEFAULT_TOP, "id_column": id_column}
    sheet = None if shows is None else _review_sheet(shows, labels=labels, **sheet)  # drawn before anything is written
    with atomic_path(out) as tmp:
        writer(frame, tmp)
    written = "" if sheet is None else f"; review sheet {_write_sheet(sheet, out=out)}"
    listed, kept = int(frame["in_review_list"].sum()), int(frame["kept"].sum())
    return (f"{listed} of {len(frame)} samples in the review list (likely label errors, as many as estimated); "
            f"{kept} kept for training (selected in at least t = {result.threshold} of M = {result.iterations} "
            f"iterations); every sample ranked in {out}{written}")


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


def _checked_out(out: Path):
    """The writer of ``--out``'s format; ValueError for a folder or an unknown extension."""
    if out.is_dir():
        raise ValueError(f"--out points to a folder, give the file to write: {out} is a folder. Fix: e.g. --out "
                         f"{out / 'issues.csv'}")
    writer = WRITERS.get(out.suffix.lower())
    if writer is None:
        raise ValueError(f"--out {out}: unknown extension {out.suffix!r}; use one of {sorted(WRITERS)}")
    return writer


def _checked_file(path: Path | None, *, option: str) -> None:
    """IsADirectoryError / FileNotFoundError, worded in ``--option``, for a ``path`` that is a folder / missing."""
    if path is None or path.is_file():
        return
    wanted, suffixes = FILE_OPTIONS[option]
    if path.is_dir():
        inside = sorted(item.name for item in path.iterdir() if item.suffix.lower() in suffixes)
        hint = f"; it holds {', '.join(inside[:3])}" if inside else ""
        raise IsADirectoryError(f"--{option} points to a folder, give {wanted}: {path} is a folder{hint}")
    raise FileNotFoundError(f"--{option} {path}: no such file. Fix: give {wanted}")


def _column(labels: Path, *, column: str | None, what: str, id_column: str | None = None) -> np.ndarray:
    """:func:`enkcvs.labelissues.oof.load_labels`, its errors for a missing column worded in ``--<what>-column``."""
    from enkcvs.labelissues.oof import ColumnError, load_labels

    option = f"--{what}-column"
    try:
        return load_labels(labels, column=column, what=what, id_column=id_column)
    except ColumnError as error:
        if error.columns is None:
            raise ValueError(f"{option} {column}: --labels {labels} is a .npy array, which has no columns. Fix: drop "
                             f"{option}, or give the labels as a .csv or .parquet table") from None
        if column is None:
            raise ValueError(f"--labels {labels} has columns {error.columns}: pass {option} naming the one that "
                             "holds the labels") from None
        raise ValueError(f"--labels {labels} has no column {column!r} for {option}; its columns are "
                         f"{error.columns}. Fix: pass {option} with one of them") from None


def _stack_size(stack: np.ndarray, *, axis: int) -> int | None:
    """Q (``axis`` -1) or M (``axis`` 0) of an (N, Q) or (M, N, Q) array; None for another shape (which
    :func:`enkcvs.labelissues.oof.select` refuses)."""
    if stack.ndim not in (2, 3):
        return None
    return (stack if stack.ndim == 3 else stack[None]).shape[axis]


def _are_indices(values: np.ndarray) -> bool:
    """Whether labels are class indices: integers, or floats of integer value (readers turn integer columns into
    floats)."""
    return values.dtype.kind in "iu" or (
        values.dtype.kind == "f" and bool(np.isfinite(values).all()) and bool((values == np.round(values)).all()))


def _class_names(
    given: np.ndarray,
    *,
    column_names: tuple[str, ...] | None,
    class_names: list[str] | None,
    sorted_order: bool,
    num_classes: int | None,
    files: tuple[Path, Path],
) -> tuple[tuple | None, str]:
    """The class of each probability column, and where it came from in words: the column names of the probabilities
    file, ``--class-names``, or (``sorted_order``) the sorted distinct labels; None for class-index labels without
    names. ValueError for string labels and unnamed columns, or for sources that contradict each other."""
    probabilities, labels = files
    if class_names is not None and sorted_order:
        raise ValueError("--class-names and --classes-in-sorted-order each set the class of each probability column; "
                         "pass only one of them")
    if column_names is not None and (sorted_order or class_names not in (None, list(column_names))):
        option = "--classes-in-sorted-order" if sorted_order else "--class-names"
        raise ValueError(f"{option} contradicts the column names of --probabilities {probabilities} "
                         f"({', '.join(column_names)}), which name the classes already. Fix: drop {option}")
    if column_names is not None:
        return column_names, "the column names of --probabilities"
    if class_names is not None:
        if num_classes is not None and not len(class_names) == len(set(class_names)) == num_classes:
            raise ValueError(f"--class-names {','.join(class_names)}: expected Q = {num_classes} distinct names, one "
                             "per probability column, in column order")
        return tuple(class_names), "--class-names"
    if _are_indices(given):
        return None, "class index (label k is probability column k)"
    distinct = sorted({str(value) for value in given.tolist()})
    if not sorted_order:
        raise ValueError(
            f"--labels {labels} holds class names ({', '.join(distinct[:5])}{', ...' if len(distinct) > 5 else ''}) "
            f"but the columns of --probabilities {probabilities} are not named, so which column is which class is "
            "unknown. Fix: pass --class-names A,B,... naming the probability columns in order (or name the columns "
            "in a .csv/.parquet: prob_<class>), or --classes-in-sorted-order if the columns follow the names' sorted "
            "order")
    try:
        distinct = np.unique(given).tolist()
    except TypeError:
        raise ValueError(f"--classes-in-sorted-order: the labels of --labels {labels} mix types that cannot be "
                         "sorted. Fix: pass --class-names naming the probability columns in order") from None
    if num_classes is not None and len(distinct) != num_classes:
        raise ValueError(f"--classes-in-sorted-order: --labels {labels} holds {len(distinct)} distinct labels but the "
                         f"probabilities have Q = {num_classes} columns, so the sorted labels cannot name them. Fix: "
                         "pass --class-names naming the probability columns in order")
    return tuple(distinct), "--classes-in-sorted-order"


def _encoded(given: np.ndarray, *, names: tuple | None, source: str, labels: Path) -> np.ndarray:
    """The labels as class indices: names matched to ``names`` as text; class indices kept as they are."""
    if names is None or _are_indices(given):
        return given
    index = {str(name): code for code, name in enumerate(names)}
    texts = [str(value) for value in given.tolist()]
    unknown = sorted({text for text in texts if text not in index})
    if unknown:
        count = sum(text not in index for text in texts)
        counted = "1 label names" if count == 1 else f"{count} labels name"
        raise ValueError(f"--labels {labels}: {counted} no probability column ({', '.join(unknown[:5])}"
                         f"{', ...' if len(unknown) > 5 else ''}); the classes, from {source}, are "
                         f"{', '.join(index)}. Fix: correct those labels, or check {source}")
    return np.array([index[text] for text in texts], dtype=np.int64)


def _checked_threshold(threshold: int | None, *, iterations: int | None) -> None:
    """ValueError, worded in ``--threshold``, for a t outside 1..M."""
    if threshold is not None and iterations is not None and not 1 <= threshold <= iterations:
        raise ValueError(f"--threshold {threshold}: a sample gets at most one vote from each of the M = {iterations} "
                         f"repetitions, so t lies in 1..{iterations}. Fix: pass --threshold between 1 and "
                         f"{iterations}")


def _warn_when_most_are_flagged(flags: np.ndarray, *, source: str) -> None:
    """A warning with the likely causes when over half the samples are flagged (not kept)."""
    flagged = int(flags.sum())
    if flagged > len(flags) / 2:
        warnings.warn(f"{flagged} of {len(flags)} samples ({100 * flagged / len(flags):.0f}%) are not kept "
                      "(selected in fewer than t iterations). Over half usually means the probabilities do not fit "
                      f"the labels: classes matched to the wrong probability columns (matched here by {source}), the "
                      "rows of the two files in different sample orders, or probabilities that are not out-of-fold "
                      "predictions for these labels. Check these before trusting the ranking", stacklevel=2)


def _review_sheet(shows: tuple[str, Path | str], *, labels: Path, **sheet):
    """The review sheet in memory: a matplotlib figure of images, or Markdown text; errors before anything is
    written for images that do not match the labels, an unreadable image file or a missing column."""
    from enkcvs.labelissues.review import draw_review_sheet, text_sheet

    option, value = shows
    if option == "text_column":
        return text_sheet(texts=_column(labels, column=value, what="text"), **sheet)
    if option == "image_column":
        paths = _column(labels, column=value, what="image").astype(str)
        return draw_review_sheet(images=paths, root=labels.parent, **sheet)
    if value.suffix.lower() != ".npy":
        raise ValueError(f"--images {value}: expected a .npy array (np.save) of N images; got {value.suffix!r}")
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
        "repetitions predict its given label (column kept: the set to train on); every sample is ranked by label "
        "quality (lowest first), and the first ones, as many as confident learning estimates label errors, form the "
        "review list (column in_review_list: the likely errors to check). Writes one row per sample: given_label, "
        "suggested_label, in_review_list, kept, label_quality, votes, beta, rank.",
    )
    command.add_argument("--probabilities", required=True, type=Path, metavar="FILE",
                         help=".npy (N, Q) or (M, N, Q), or .parquet/.csv with one column per class: prob_0.."
                         "prob_{Q-1}, or named by class (prob_<class> or <class>); and 'iteration' 1..M, 'sample' "
                         "for M > 1")
    command.add_argument("--labels", required=True, type=Path, metavar="FILE",
                         help="the given labels: .csv/.parquet (a label column; rows in the probabilities' order, "
                         "or a 'sample' column) or .npy")
    command.add_argument("--label-column", metavar="COLUMN", help="the label column (needed when the file has several)")
    command.add_argument("--id-column", metavar="COLUMN", help="a column of the labels file carried to the output")
    command.add_argument("--class-names", metavar="A,B,...",
                         type=lambda text: [name.strip() for name in text.split(",")],
                         help="the class of each probability column, in column order, for string labels and "
                         "probabilities without column names (.npy, prob_0..)")
    command.add_argument("--classes-in-sorted-order", action="store_true",
                         help="the probability columns follow the string labels' sorted order (instead of "
                         "--class-names)")
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
    """Run the command: its summary on stdout; its warnings and errors, one line each, on stderr. Exit status 0, or
    2 for a malformed command line or bad input (nothing written)."""
    arguments = parser().parse_args(argv)  # exits with 2 on a malformed command line
    options = {key: value for key, value in vars(arguments).items() if key != "command"}
    summary, failure = None, None
    with warnings.catch_warnings(record=True) as caught:
        try:
            summary = find_issues(**options)
        except (ValueError, OSError) as error:
            failure = error
    for warning in caught:  # the message alone, without the source line the default format shows
        print(f"enkcvs find-issues: warning: {warning.message}", file=sys.stderr)
    if failure is not None:
        print(f"enkcvs find-issues: error: {failure}", file=sys.stderr)
        return 2
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
