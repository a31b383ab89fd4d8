"""What a ranking is made from, read and checked: a :class:`Source` holds the labels as class indices, what names the
rows, and either the out-of-fold probabilities given or what the fold models train on. Two readers here: out-of-fold
probabilities with their labels file (:func:`read_probabilities`) and arrays in memory (:func:`in_memory`); the
user's own files are read by :func:`enkcvs.labelissues.owndata.read_data`."""

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from enkcvs.labelissues.oof import (
    ColumnError,
    are_indices,
    checked_class_names,
    encoded_labels,
    load_labels,
    load_named_probabilities,
)
from enkcvs.labelissues.request import Request

#: What each file option takes: the file in words, and its suffixes.
FILE_OPTIONS = {
    "probabilities": ("the .npy, .csv or .parquet file of the probabilities", (".npy", ".csv", ".parquet")),
    "labels": ("the CSV file (or a .parquet / .npy) of the labels", (".csv", ".parquet", ".npy")),
    "images": ("the .npy file of the images", (".npy",)),
}


@dataclass(frozen=True, eq=False)
class Source:
    """The samples to rank, in their file's order: the ``path`` read (named in captions), its ``kind`` (``images``,
    ``texts``, ``table``, ``probabilities`` or ``features`` in memory), the (N,) ``labels`` as class indices and the
    ``class_names``, what names the rows (``row_names``: ids or image paths), ``keys`` (N,) that tell samples apart
    (ids, content digests) or None; the given (M, N, Q) ``probabilities``, or the ``inputs`` fold models train on with
    ``recipe`` or ``classifier``; the review ``sheet`` maker, and the ``cause`` to name when most are not kept."""

    path: Path | None
    kind: str
    labels: np.ndarray
    class_names: tuple | None
    row_names: dict = field(default_factory=dict)
    keys: np.ndarray | None = None
    probabilities: np.ndarray | None = None
    inputs: Any = None
    recipe: Any = None
    classifier: Any = None
    standardize: bool = False
    sheet: Callable | None = None
    cause: str = ""
    data: Any = None  # own files: the Dataset, as the workflow prepares it
    text_recipe: str | None = None
    provenance: dict = field(default_factory=dict)

    @property
    def in_memory(self) -> bool:
        """Whether the fold models train on features held in memory (a table's, or embeddings)."""
        return isinstance(self.inputs, np.ndarray) and self.inputs.dtype.kind == "f"

    @property
    def model(self) -> str:
        """The fold models in words: the recipe's model, or the user's classifier, and what it trains on."""
        model = type(self.classifier).__name__ if self.classifier is not None else self.recipe.model
        frozen = self.provenance.get("encoder", {})
        frozen = frozen.get("checkpoint") or frozen.get("torchvision")
        tfidf = " and TF-IDF of the texts" if self.text_recipe == "both" else ""
        return f"{model} on frozen {frozen} embeddings{tfidf}" if frozen else model


def in_memory(*, features, labels, classifier, class_names=None) -> Source:
    """Arrays in memory for ``classifier``: ``features`` (N, ...) as its ``fit`` takes them, ``labels`` (N,) class
    indices or names (named by ``class_names``, else in their sorted order)."""
    values = np.asarray(labels)
    if len(values) != len(features):
        raise ValueError(
            f"labels hold {len(values)} entries for {len(features)} rows of features: pass one label per row, in order"
        )
    names = checked_class_names(class_names, num_classes=None)
    if names is None and not are_indices(values):
        names = tuple(np.unique(values).tolist())
    num_classes = len(names) if names else int(values.max()) + 1
    codes, names = encoded_labels(
        values, what="labels", num_samples=len(values), num_classes=num_classes, class_names=names, infer_names=False
    )
    return Source(path=None, kind="features", labels=codes, class_names=names, inputs=features, classifier=classifier)


def read_probabilities(request: Request) -> Source:
    """The out-of-fold ``--probabilities`` of a request and its ``--labels`` file: labels matched to the probability
    columns by name (:func:`_class_names`), ids unique, the review sheet's images or texts at hand; ValueError /
    OSError in the command's words."""
    for option in ("probabilities", "labels", "images"):
        _checked_file(getattr(request, option), option=option)
    labels = request.labels
    given = _column(labels, column=request.label_column, what="label", id_column=request.id_column)
    ids = None
    if request.id_column is not None:
        ids = _unique_ids(_column(labels, column=request.id_column, what="id"), request=request)
    stack, column_names = load_named_probabilities(request.probabilities)
    num_classes = stack.shape[-1] if stack.ndim in (2, 3) else None
    names, source = _class_names(given, column_names=column_names, request=request, num_classes=num_classes)
    if num_classes is not None:
        codes, names = encoded_labels(
            given,
            what=f"--labels {labels}",
            num_samples=stack.shape[-2],
            num_classes=num_classes,
            class_names=names,
            infer_names=False,
            source=source,
        )
        request.check_counts(names if names is not None else range(num_classes))
    else:
        codes = given  # select names the shape
    paths = None if request.image_column is None else _column(labels, column=request.image_column, what="image")
    return Source(
        path=labels,
        kind="probabilities",
        labels=codes,
        class_names=names,
        row_names={"ids": ids, "id_column": request.id_column, "paths": None if paths is None else paths.astype(str)},
        keys=ids,
        probabilities=stack,
        sheet=_sheet(request, paths=paths),
        cause=(
            ". Over half usually means the probabilities do not fit the labels: classes matched to the wrong "
            f"probability columns (matched here by {source}), the rows of the two files in different sample orders, "
            "or probabilities that are not out-of-fold predictions for these labels. Check these before trusting "
            "the ranking"
        ),
    )


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
    option = f"--{what}-column"
    try:
        return load_labels(labels, column=column, what=what, id_column=id_column)
    except ColumnError as error:
        if error.columns is None:
            raise ValueError(
                f"{option} {column}: --labels {labels} is a .npy array, which has no columns. Fix: drop {option}, or "
                "give the labels as a .csv or .parquet table"
            ) from None
        if column is None:
            raise ValueError(
                f"--labels {labels} has columns {error.columns}: pass {option} naming the one that holds the labels"
            ) from None
        raise ValueError(
            f"--labels {labels} has no column {column!r} for {option}; its columns are {error.columns}. Fix: pass "
            f"{option} with one of them"
        ) from None


def _unique_ids(ids: np.ndarray, *, request: Request) -> np.ndarray:
    """``ids`` (N,) of the ``--id-column`` when none repeats; ValueError naming the repeated ids and their rows."""
    from enkcvs.ids import repeated_ids

    if repeated := repeated_ids(ids):
        raise ValueError(
            f"{request.labels}: the ids in --id-column {request.id_column} repeat ({repeated}; rows 0-based in sample "
            "order, header not counted), so they cannot name a sample. Fix: make the ids unique, or pass another "
            "--id-column"
        )
    return ids


def _class_names(
    given: np.ndarray, *, column_names: tuple | None, request: Request, num_classes: int | None
) -> tuple[tuple | None, str]:
    """The class of each probability column, and where it came from in words: the column names of the probabilities
    file, ``--class-names``, or ``--classes-in-sorted-order``; None for class-index labels without names."""
    files = f"--probabilities {request.probabilities}"
    if column_names is not None:
        if request.classes_in_sorted_order or request.class_names not in (None, list(column_names)):
            option = "--classes-in-sorted-order" if request.classes_in_sorted_order else "--class-names"
            raise ValueError(
                f"{option} contradicts the column names of {files} ({', '.join(column_names)}), which name the "
                f"classes already. Fix: drop {option}"
            )
        return column_names, "the column names of --probabilities"
    if request.class_names is not None:
        return checked_class_names(
            request.class_names, num_classes=num_classes, option="--class-names"
        ), "--class-names"
    if are_indices(given):
        return None, "class index (label k is probability column k)"
    distinct = sorted({str(value) for value in given.tolist()})
    if not request.classes_in_sorted_order:
        raise ValueError(
            f"--labels {request.labels} holds class names ({', '.join(distinct[:5])}"
            f"{', ...' if len(distinct) > 5 else ''}) but the columns of {files} are not named, so which column is "
            "which class is unknown. Fix: pass --class-names A,B,... naming the probability columns in order (or name "
            "the columns in a .csv/.parquet: prob_<class>), or --classes-in-sorted-order if the columns follow the "
            "names' sorted order"
        )
    try:
        distinct = np.unique(given).tolist()
    except TypeError:
        raise ValueError(
            f"--classes-in-sorted-order: the labels of --labels {request.labels} mix types that cannot be sorted. "
            "Fix: pass --class-names naming the probability columns in order"
        ) from None
    if num_classes is not None and len(distinct) != num_classes:
        raise ValueError(
            f"--classes-in-sorted-order: --labels {request.labels} holds {len(distinct)} distinct labels but the "
            f"probabilities have Q = {num_classes} columns, so the sorted labels cannot name them. Fix: pass "
            "--class-names naming the probability columns in order"
        )
    return tuple(distinct), "--classes-in-sorted-order"


def _sheet(request: Request, *, paths: np.ndarray | None) -> Callable | None:
    """What draws the review sheet of given probabilities: images of ``--images`` (an array) or of the
    ``--image-column``'s ``paths``, or Markdown of the ``--text-column``'s texts; None without any."""
    from enkcvs.labelissues.review import draw_review_sheet, text_sheet

    if request.text_column is not None:
        texts = _column(request.labels, column=request.text_column, what="text")
        return lambda **sheet: text_sheet(texts=texts, **sheet)
    if paths is not None:
        return lambda **sheet: draw_review_sheet(images=paths, root=request.labels.parent, **sheet)
    if request.images is None:
        return None
    if request.images.suffix.lower() != ".npy":
        raise ValueError(
            f"--images {request.images}: expected a .npy array (np.save) of N images; got {request.images.suffix!r}"
        )
    try:
        pixels = np.load(request.images, allow_pickle=False)
    except (ValueError, OSError, EOFError) as error:
        raise ValueError(
            f"--images {request.images} is unreadable ({type(error).__name__}: {error}). Fix: save the images with "
            "np.save as one numeric array"
        ) from error
    if pixels.dtype.kind not in "biuf":
        raise ValueError(
            f"--images {request.images} holds {pixels.dtype} values, not pixels. Fix: save the pixel values as one "
            "numeric array; for a column of image paths in the labels file use --image-column"
        )
    return lambda **sheet: draw_review_sheet(images=pixels, **sheet)
