"""The ``enkcvs`` command: E-NKCVS on a user's own data, or on predictions the user already has.

``enkcvs find-issues --data animals.csv --label-column animal --out issues.csv`` trains the M x K cross-validation's
fold models on the data (images: a folder of class folders or a CSV of image paths; texts: a CSV with a text column,
encoded once by a frozen MiniLM, or the MiniLM fine-tuned with ``--text-recipe finetune``; a table: a CSV of numeric
features, z-scored inside each fold unless ``--no-standardize``; :mod:`enkcvs.labelissues.owndata`, which names each
kind's default recipe);
``enkcvs find-issues --probabilities oof.npy --labels labels.csv --out issues.csv`` reads the out-of-fold
probabilities instead. Either way every sample is ranked from most to least likely mislabelled
(:func:`enkcvs.labelissues.oof.select`) and two sets are marked: ``is_label_issue``, the likely label errors to check
(as many as confident learning estimates), and ``kept``, the paper's selection to train on. From data, the review
sheet of the top ``--review-top`` samples (:mod:`enkcvs.labelissues.review`; 36) is written beside ``--out``
(``issues.review.png`` and ``.pdf`` for images, ``issues.review.md`` for texts and tables), and what produced the
ranking (data, seed, K, M, t, recipe, device, threads) in ``issues.provenance.json``; the same rows in any order, on
any number of threads, give the same ranking. From probabilities, the review sheet comes with
``--images images.npy`` (an array (N, H, W), (N, H, W, C) or (N, C, H, W)), ``--image-column COLUMN`` (image paths in
the labels file, relative to its folder or absolute) or ``--text-column COLUMN`` (texts in the labels file); string
labels are matched to the probability columns by name (the columns' names, or ``--class-names``), by sorted order
only with ``--classes-in-sorted-order``. ``enkcvs example --out animals.csv`` writes a small table with known label
errors to try it on (:mod:`enkcvs.labelissues.example`). Exit status 0 on success (with warnings on stderr, e.g. when
over half the samples are not kept), 2 on a malformed command line or a bad input file or option (the message names
the problem and the fix; nothing is written, nothing trained).
"""

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

from enkcvs.labelissues.outputs import (
    checked_out,
    checked_review_top,
    checked_threshold,
    warn_when_most_are_not_kept,
    write_ranking,
)
from enkcvs.labelissues.review import DEFAULT_TOP

#: What each file option takes: the file in words, and its suffixes.
FILE_OPTIONS = {
    "probabilities": ("the .npy, .csv or .parquet file of the probabilities", (".npy", ".csv", ".parquet")),
    "labels": ("the CSV file (or a .parquet / .npy) of the labels", (".csv", ".parquet", ".npy")),
    "images": ("the .npy file of the images", (".npy",)),
}
#: The options of one input only, refused with the other: the data's (training) and the probabilities'.
DATA_ONLY = (
    "kind",
    "feature_columns",
    "no_standardize",
    "text_recipe",
    "encoder",
    "folds",
    "repetitions",
    "epochs",
    "seed",
    "classifier",
    "no_cache",
)
PROBABILITIES_ONLY = ("labels", "class_names", "classes_in_sorted_order", "images")


def find_issues(*, out: Path, probabilities: Path | None = None, data: Path | None = None, **options) -> str:
    """Rank every sample of the user's data by how likely its label is wrong, from out-of-fold ``probabilities``
    (:func:`find_issues_in_probabilities`, with their ``labels``) or from the ``data`` itself, trained on here
    (:func:`enkcvs.labelissues.owndata.find_issues_in_data`): exactly one of the two, each with its own ``options``
    (the command's, by their names: :data:`DATA_ONLY`, :data:`PROBABILITIES_ONLY` and those of both). Returns the
    summary line; ValueError / OSError, worded in the command's options, on bad input, before anything is written."""
    if (probabilities is None) == (data is None):
        raise ValueError(
            "pass one of --data PATH (your images, texts or table, trained on here) or --probabilities "
            "FILE (out-of-fold probabilities from a model of your own)"
            if data is None
            else "--data and --probabilities each give what to rank: pass only one of them"
        )
    others = PROBABILITIES_ONLY if data is not None else DATA_ONLY
    passed = [name for name in others if options.get(name) not in (None, False)]
    if passed:
        flags = " and ".join("--" + name.replace("_", "-") for name in passed)
        which = "--probabilities" if data is not None else "--data"
        raise ValueError(
            f"{flags} go{'es' if len(passed) == 1 else ''} with {which}, not with "
            f"{'--data' if data is not None else '--probabilities'}. Fix: drop {flags}"
        )
    options = {name: value for name, value in options.items() if name not in others}
    if data is not None:
        from enkcvs.labelissues.owndata import find_issues_in_data

        standardize = not options.pop("no_standardize", False)
        cache = not options.pop("no_cache", False)
        return find_issues_in_data(data=data, out=out, standardize=standardize, cache=cache, **options)
    return find_issues_in_probabilities(probabilities=probabilities, out=out, **options)


def find_issues_in_probabilities(
    *,
    probabilities: Path,
    labels: Path | None,
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
    by_rank: bool = False,
) -> str:
    """Select and rank the samples of ``labels`` by their out-of-fold ``probabilities``; write the label-issue table
    (:meth:`enkcvs.labelissues.oof.SelectionResult.to_frame`, each row named by the user's ``id_column``, else its
    ``image_column``'s path, else its number) to ``out`` (.csv or .parquet; sorted by rank with ``by_rank``) and,
    given ``images`` (a .npy image batch), ``image_column`` or ``text_column`` (columns of
    ``labels``), the review sheet of its top ``review_top`` samples beside it
    (:func:`enkcvs.labelissues.outputs.review_paths`). String labels name the probability columns as
    :func:`_class_names` matches them. Everything is written only when every check passed. Returns a one-line summary
    of both sets; warns when over half the samples are not kept; ValueError / OSError, worded in the command's
    options, on bad input."""
    from enkcvs.labelissues.oof import load_named_probabilities, select

    checked_out(out)
    if labels is None:
        raise ValueError("--probabilities needs the given labels: pass --labels FILE, rows in the probabilities' order")
    shows = _checked_sheet_options(
        images=images, image_column=image_column, text_column=text_column, review_top=review_top
    )
    for option, path in (("probabilities", probabilities), ("labels", labels), ("images", images)):
        _checked_file(path, option=option)
    given = _column(labels, column=label_column, what="label", id_column=id_column)
    ids = (
        None
        if id_column is None
        else _unique_ids(_column(labels, column=id_column, what="id"), labels=labels, column=id_column)
    )
    stack, column_names = load_named_probabilities(probabilities)
    names, source = _class_names(
        given,
        column_names=column_names,
        class_names=class_names,
        sorted_order=classes_in_sorted_order,
        num_classes=_stack_size(stack, axis=-1),
        files=(probabilities, labels),
    )
    checked_threshold(threshold, iterations=_stack_size(stack, axis=0))
    result = select(
        probabilities=stack,
        labels=_encoded(given, names=names, source=source, labels=labels),
        threshold=threshold,
        class_names=names,
        sample_keys=ids,
    )
    paths = None if image_column is None else _column(labels, column=image_column, what="image").astype(str)
    frame = result.to_frame(ids=ids, id_column=id_column, paths=paths)
    _warn_when_most_are_flagged(~frame["kept"].to_numpy(), source=source)
    caption = (
        f"E-NKCVS ranking of {labels.name}: M = {result.iterations} iterations, a sample kept when selected in "
        f"at least t = {result.threshold}"
    )
    sheet = {"issues": frame, "caption": caption, "top": review_top or DEFAULT_TOP}  # rows named as the table's
    sheet = None if shows is None else _review_sheet(shows, labels=labels, paths=paths, **sheet)  # before writing
    return write_ranking(frame, result=result, sheet=sheet, out=out, by_rank=by_rank)


def _checked_sheet_options(
    *, images: Path | None, image_column: str | None, text_column: str | None, review_top: int | None
) -> tuple[str, Path | str] | None:
    """What the review sheet shows, ("images", .npy path), ("image_column", column) or ("text_column", column), or
    None for no sheet; ValueError for options that contradict each other or a sheet of N < 1 samples."""
    given = [
        (option, value)
        for option, value in (("images", images), ("image_column", image_column), ("text_column", text_column))
        if value is not None
    ]
    flags = " and ".join("--" + option.replace("_", "-") for option, _ in given)
    if len(given) > 1:
        raise ValueError(f"{flags} each choose what the review sheet shows; pass only one of them")
    checked_review_top(review_top)
    if review_top is not None and not given:
        raise ValueError(
            "--review-top sizes the review sheet, which needs what to show: pass --images, "
            "--image-column or --text-column too"
        )
    return given[0] if given else None


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
            raise ValueError(
                f"{option} {column}: --labels {labels} is a .npy array, which has no columns. Fix: drop "
                f"{option}, or give the labels as a .csv or .parquet table"
            ) from None
        if column is None:
            raise ValueError(
                f"--labels {labels} has columns {error.columns}: pass {option} naming the one that holds the labels"
            ) from None
        raise ValueError(
            f"--labels {labels} has no column {column!r} for {option}; its columns are "
            f"{error.columns}. Fix: pass {option} with one of them"
        ) from None


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
        values.dtype.kind == "f" and bool(np.isfinite(values).all()) and bool((values == np.round(values)).all())
    )


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
        raise ValueError(
            "--class-names and --classes-in-sorted-order each set the class of each probability column; "
            "pass only one of them"
        )
    if column_names is not None and (sorted_order or class_names not in (None, list(column_names))):
        option = "--classes-in-sorted-order" if sorted_order else "--class-names"
        raise ValueError(
            f"{option} contradicts the column names of --probabilities {probabilities} "
            f"({', '.join(column_names)}), which name the classes already. Fix: drop {option}"
        )
    if column_names is not None:
        return column_names, "the column names of --probabilities"
    if class_names is not None:
        if num_classes is not None and not len(class_names) == len(set(class_names)) == num_classes:
            raise ValueError(
                f"--class-names {','.join(class_names)}: expected Q = {num_classes} distinct names, one "
                "per probability column, in column order"
            )
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
            "order"
        )
    try:
        distinct = np.unique(given).tolist()
    except TypeError:
        raise ValueError(
            f"--classes-in-sorted-order: the labels of --labels {labels} mix types that cannot be "
            "sorted. Fix: pass --class-names naming the probability columns in order"
        ) from None
    if num_classes is not None and len(distinct) != num_classes:
        raise ValueError(
            f"--classes-in-sorted-order: --labels {labels} holds {len(distinct)} distinct labels but the "
            f"probabilities have Q = {num_classes} columns, so the sorted labels cannot name them. Fix: "
            "pass --class-names naming the probability columns in order"
        )
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
        raise ValueError(
            f"--labels {labels}: {counted} no probability column ({', '.join(unknown[:5])}"
            f"{', ...' if len(unknown) > 5 else ''}); the classes, from {source}, are "
            f"{', '.join(index)}. Fix: correct those labels, or check {source}"
        )
    return np.array([index[text] for text in texts], dtype=np.int64)


def _warn_when_most_are_flagged(flags: np.ndarray, *, source: str) -> None:
    """A warning with the likely causes when over half the samples are flagged (not kept)."""
    warn_when_most_are_not_kept(
        flags,
        causes=(
            ". Over half usually means the probabilities do not fit the labels: classes matched to the wrong probability "
            f"columns (matched here by {source}), the rows of the two files in different sample orders, or probabilities "
            "that are not out-of-fold predictions for these labels. Check these before trusting the ranking"
        ),
    )


def _review_sheet(shows: tuple[str, Path | str], *, labels: Path, paths: np.ndarray | None, **sheet):
    """The review sheet in memory: a matplotlib figure of images (the ``--image-column``'s ``paths``, or an array), or
    Markdown text; errors before anything is written for images that do not match the labels, an unreadable image
    file or a missing column."""
    from enkcvs.labelissues.review import draw_review_sheet, text_sheet

    option, value = shows
    if option == "text_column":
        return text_sheet(texts=_column(labels, column=value, what="text"), **sheet)
    if option == "image_column":
        return draw_review_sheet(images=paths, root=labels.parent, **sheet)
    if value.suffix.lower() != ".npy":
        raise ValueError(f"--images {value}: expected a .npy array (np.save) of N images; got {value.suffix!r}")
    try:
        pixels = np.load(value, allow_pickle=False)
    except (ValueError, OSError, EOFError) as error:
        raise ValueError(
            f"--images {value} is unreadable ({type(error).__name__}: {error}). Fix: save the images "
            "with np.save as one numeric array"
        ) from error
    if pixels.dtype.kind not in "biuf":
        raise ValueError(
            f"--images {value} holds {pixels.dtype} values, not pixels. Fix: save the pixel values as "
            "one numeric array; for a column of image paths in the labels file use --image-column"
        )
    return draw_review_sheet(images=pixels, **sheet)


def _unique_ids(ids: np.ndarray, *, labels: Path, column: str) -> np.ndarray:
    """``ids`` (N,), read from column ``column`` of the file ``labels``, when no id repeats; ValueError naming the
    repeated ids and their rows otherwise."""
    from enkcvs.ids import repeated_ids

    repeated = repeated_ids(ids)
    if repeated:
        raise ValueError(
            f"{labels}: the ids in --id-column {column} repeat ({repeated}; rows 0-based in sample order, "
            "header not counted), so they cannot name a sample. Fix: make the ids unique, or pass "
            "another --id-column"
        )
    return ids


def parser() -> argparse.ArgumentParser:
    from importlib.metadata import PackageNotFoundError, version

    main = argparse.ArgumentParser(prog="enkcvs", description=__doc__.split("\n\n")[0])
    try:
        installed = version("enkcvs")
    except PackageNotFoundError:  # run from a checkout that was never installed: no version to speak of
        installed = "(not installed: pip install -e . in the checkout)"
    main.add_argument("--version", action="version", version=f"%(prog)s {installed}")
    commands = main.add_subparsers(dest="command", required=True)
    _find_issues_parser(commands)
    example = commands.add_parser(
        "example",
        help="write a small table with known label errors to try find-issues on",
        description="A CSV of 3 animals' measurements (columns id, x0..x4, animal) with a share of the labels flipped "
        "to another class, and beside it the flipped rows (<stem>.flipped.csv: id, given_label, true_label).",
    )
    example.add_argument("--out", required=True, type=Path, metavar="FILE.csv", help="the table to write")
    example.add_argument("--samples", type=int, default=300, metavar="N", help="rows (default 300)")
    example.add_argument(
        "--flipped", type=float, default=0.1, metavar="SHARE", help="share of the labels flipped (default 0.1)"
    )
    example.add_argument("--seed", type=int, default=1, help="seeds the features and the flips (default 1)")
    return main


def _find_issues_parser(commands) -> None:
    """The ``find-issues`` sub-command's options."""
    command = commands.add_parser(
        "find-issues",
        help="rank samples by how likely their label is wrong: from your data (trained here) or from out-of-fold "
        "probabilities",
        description="E-NKCVS: M repetitions of K-fold cross-validation predict every sample from models that did not "
        "train on it; a sample is kept when at least t of the M repetitions predict its given label (column kept: the "
        "set to train on); every sample is ranked by the mean probability of its given label (rank 1 first), and the "
        "first not-kept samples of the ranking, as many as confident learning finds among them on the calibrated "
        "mean probabilities, form the review list (is_label_issue: the likely errors to check). One row per sample in "
        "the data's order: its id, else its image's path, else its row (1 = the first after the header); "
        "is_label_issue, label_score, given_label and predicted_label as cleanlab names them; rank, votes, kept. Give "
        "--data (trained here) or --probabilities (from a model of your own).",
    )
    command.add_argument("--out", required=True, type=Path, metavar="FILE", help="the ranked table: .csv or .parquet")
    command.add_argument(
        "--label-column",
        metavar="COLUMN",
        help="the label column (default: 'label' where --data has it; needed when --labels has several columns)",
    )
    command.add_argument("--id-column", metavar="COLUMN", help="unique ids naming rows (--data: else a row-id column)")
    command.add_argument("--sorted", dest="by_rank", action="store_true", help="the table most likely wrong first")
    command.add_argument(
        "--threshold",
        "-t",
        type=int,
        metavar="T",
        help="votes a sample needs to be kept (default: 1 for M = 1, else 2, the paper's)",
    )
    _data_options(command)
    _probabilities_options(command)
    sheet = command.add_argument_group(
        "review sheet",
        "the top samples, most likely mislabelled first, with class names, votes and label quality, "
        "written beside --out; from probabilities give one of --images, --image-column or --text-column",
    )
    sheet.add_argument(
        "--images",
        type=Path,
        metavar="FILE.npy",
        help="the N images in the labels' order: an array (N, H, W), (N, H, W, C) or (N, C, H, W)",
    )
    sheet.add_argument(
        "--image-column",
        metavar="COLUMN",
        help="a column of image paths in --data or the labels file (relative to its folder, or absolute)",
    )
    sheet.add_argument("--text-column", metavar="COLUMN", help="a column of texts in --data or the labels file")
    sheet.add_argument("--review-top", type=int, metavar="N", help=f"samples on the sheet (default {DEFAULT_TOP})")


def _data_options(command) -> None:
    """The ``find-issues`` options of the user's data, trained on here."""
    from enkcvs.labelissues.ownchecks import TEXT_RECIPES
    from enkcvs.labelissues.owndata import DEFAULT_FOLDS, DEFAULT_REPETITIONS, DEFAULT_SEED, recipe_text
    from enkcvs.labelissues.ownkind import KINDS

    data = command.add_argument_group(
        "from your data",
        "trains the M x K fold models here (a progress bar on stderr), then writes the ranking, "
        "the review sheet beside it (issues.csv -> issues.review.png and .pdf for images, issues.review.md for texts "
        "and tables) and issues.provenance.json (data, seed, K, M, t, recipe, device, threads). Default recipes: "
        + "; ".join(f"{kind}: {recipe_text(kind)}" for kind in KINDS),
    )
    data.add_argument(
        "--data",
        type=Path,
        metavar="PATH",
        help="a folder with one sub-folder of images per class, or a .csv/.parquet file: image paths "
        "(relative to its folder, or absolute) and labels, texts and labels, or numeric features and "
        "labels",
    )
    data.add_argument(
        "--kind",
        choices=KINDS,
        help="what --data holds (default: images for a folder or a file with an --image-column or a "
        "column named path or image; texts with --text-column; else table)",
    )
    data.add_argument(
        "--feature-columns",
        metavar="A,B,...",
        type=lambda text: [name.strip() for name in text.split(",")],
        help="a table's feature columns (default: every column but the label and id columns)",
    )
    data.add_argument(
        "--no-standardize",
        action="store_true",
        help="keep a table's features or the embeddings as they are (default: each fold model sees them z-scored "
        "with the mean and standard deviation of its own training part, missing values imputed by that mean)",
    )
    data.add_argument(
        "--classifier",
        metavar="MODULE:FACTORY",
        help="train your own scikit-learn-compatible classifier as the fold models: a function of an importable "
        "module that returns it unfitted (e.g. mymodels:make_classifier); for a table, or texts' or images' "
        "embeddings (default: the kind's recipe)",
    )
    data.add_argument(
        "--no-cache",
        action="store_true",
        help="train every fold model afresh (default: finished fold models are kept in the cache, keyed by the data "
        "and settings, so that a stopped run started again goes on where it stopped)",
    )
    data.add_argument(
        "--text-recipe",
        choices=TEXT_RECIPES,
        help="how texts train (default frozen: each text encoded once, cached, and light heads trained "
        "on the embeddings, minutes on a CPU; finetune: the transformer fine-tuned in every fold model, "
        f"hours on a CPU: {recipe_text('texts', text_recipe='finetune')})",
    )
    data.add_argument(
        "--encoder",
        metavar="ARCHITECTURE",
        help="images: a torchvision classification model (e.g. resnet18, mobilenet_v3_small) whose "
        "frozen ImageNet embeddings the fold models' light heads train on, each image encoded once, "
        "cached; its weights from torchvision's cache, refused without them (the fix names the command "
        f"that fetches them). Default: {recipe_text('images')}, from scratch",
    )
    data.add_argument(
        "--folds", "-K", type=int, metavar="K", help=f"folds of each cross-validation (default {DEFAULT_FOLDS})"
    )
    data.add_argument(
        "--repetitions",
        "-M",
        type=int,
        metavar="M",
        help=f"cross-validations, each with fresh folds (default {DEFAULT_REPETITIONS})",
    )
    data.add_argument("--epochs", type=int, metavar="N", help="epochs of each fold model (default: the recipe's)")
    data.add_argument(
        "--seed",
        type=int,
        help="seeds folds and models: the same seed gives the same ranking, whatever the order of the rows or the "
        f"number of threads (default {DEFAULT_SEED})",
    )


def _probabilities_options(command) -> None:
    """The ``find-issues`` options of out-of-fold probabilities given (no training)."""
    given = command.add_argument_group("from out-of-fold probabilities", "no training")
    given.add_argument(
        "--probabilities",
        type=Path,
        metavar="FILE",
        help=".npy (N, Q) or (M, N, Q), or .parquet/.csv with one column per class: prob_0.."
        "prob_{Q-1}, or named by class (prob_<class> or <class>); and 'iteration' 1..M, 'sample' "
        "for M > 1",
    )
    given.add_argument(
        "--labels",
        type=Path,
        metavar="FILE",
        help="the given labels: .csv/.parquet (a label column; rows in the probabilities' order, "
        "or a 'sample' column) or .npy",
    )
    given.add_argument(
        "--class-names",
        metavar="A,B,...",
        type=lambda text: [name.strip() for name in text.split(",")],
        help="the class of each probability column, in column order, for string labels and "
        "probabilities without column names (.npy, prob_0..)",
    )
    given.add_argument(
        "--classes-in-sorted-order",
        action="store_true",
        help="the probability columns follow the string labels' sorted order (instead of --class-names)",
    )


def main(argv: list[str] | None = None) -> int:
    """Run the command: its summary on stdout; its warnings and errors, one line each, on stderr. Exit status 0, or
    2 for a malformed command line or bad input (nothing written)."""
    arguments = parser().parse_args(argv)  # exits with 2 on a malformed command line
    options = {key: value for key, value in vars(arguments).items() if key != "command"}
    summary, failure = None, None

    def said(message, *_):  # as it happens, the message alone, without the source line the default format shows
        print(f"enkcvs {arguments.command}: warning: {message}", file=sys.stderr, flush=True)

    with warnings.catch_warnings():
        warnings.simplefilter("default")
        warnings.showwarning = said
        try:
            if arguments.command == "example":
                from enkcvs.labelissues.example import write_example

                summary = write_example(**options)
            else:
                summary = find_issues(**options)
        except (ValueError, OSError) as error:
            failure = error
    if failure is not None:
        print(f"enkcvs {arguments.command}: error: {failure}", file=sys.stderr)
        return 2
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
