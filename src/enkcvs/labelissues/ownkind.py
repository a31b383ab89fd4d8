"""Which kind a user's data file or folder is, for ``enkcvs find-issues --data``, and the columns it is read from:
a folder of class folders holds images; a CSV or parquet file holds texts, image paths or a table's features; a
table's column that numbers its rows names them in the output."""

import warnings
from pathlib import Path

from enkcvs.data.sources import own

KINDS = ("images", "texts", "table")
#: Column names taken as image paths when ``--image-column`` is not given (compared in lower case).
IMAGE_COLUMNS = ("path", "image", "image_path", "filepath", "file", "filename")
DEFAULT_LABEL_COLUMN = "label"  # taken when --label-column is not given and the file has it


def infer_kind(
    *,
    path: Path,
    kind: str | None,
    label_column: str | None,
    id_column: str | None,
    image_column: str | None,
    text_column: str | None,
) -> tuple[str, dict[str, str | None]]:
    """The kind of the data at ``path`` and the columns it is read from (label, id, image, text): a folder holds
    images; a file holds texts given ``text_column``, images given ``image_column`` or with a column named as in
    :data:`IMAGE_COLUMNS`, a table otherwise. ``kind`` given is checked against the data instead."""
    if kind is not None and kind not in KINDS:
        raise ValueError(f"--kind {kind}: unknown kind of data; use one of {', '.join(KINDS)}")
    if not path.exists():
        raise FileNotFoundError(
            f"--data {path}: no such file or folder. Fix: give a folder with one sub-folder of "
            "images per class, or a CSV or parquet file"
        )
    if path.is_dir():
        given = {
            "--label-column": label_column,
            "--id-column": id_column,
            "--image-column": image_column,
            "--text-column": text_column,
        }
        passed = [option for option, value in given.items() if value is not None]
        if kind not in (None, "images") or passed:
            what = f"--kind {kind}" if kind not in (None, "images") else " and ".join(passed)
            raise ValueError(
                f"--data {path} is a folder, read as images with one sub-folder per class (the class "
                f"names), which takes no {what}. Fix: drop {what}, or give a CSV file"
            )
        return "images", {"label": None, "id": None, "image": None, "text": None}
    header = own.table_header(str(path))
    label_column = label_column_of(label_column, header=header, path=path)
    if kind is None:
        kind = "texts" if text_column else "images" if image_column or image_column_of(header) else "table"
    if kind == "texts" and text_column is None:
        raise ValueError(
            f"--kind texts: say which column of --data {path} holds the texts. Fix: pass --text-column "
            f"(its columns are {header})"
        )
    if kind == "images":
        image_column = image_column or image_column_of(header)
        if image_column is None:
            raise ValueError(
                f"--kind images: --data {path} has no column of image paths named "
                f"{'/'.join(IMAGE_COLUMNS)}. Fix: pass --image-column (its columns are {header})"
            )
    if kind == "table" and image_column or kind != "texts" and text_column:
        option = "--image-column" if kind == "table" and image_column else "--text-column"
        raise ValueError(f"{option} does not fit --kind {kind}. Fix: drop {option}, or the --kind")
    columns = {"label": label_column, "id": id_column, "image": image_column, "text": text_column}
    for name, column in columns.items():
        if column is not None and column not in header:
            raise ValueError(
                f"--{name}-column {column}: --data {path} has no such column; its columns are {header}. "
                f"Fix: pass --{name}-column with one of them"
            )
    return kind, columns


def label_column_of(label_column: str | None, *, header: list[str], path: Path) -> str:
    """The labels' column: ``label_column``, else ``label`` where the file has it; ValueError otherwise."""
    if label_column is not None:
        return label_column
    if DEFAULT_LABEL_COLUMN in header:
        return DEFAULT_LABEL_COLUMN
    raise ValueError(
        f"--data {path} has no column named {DEFAULT_LABEL_COLUMN!r} for the labels; its columns are "
        f"{header}. Fix: pass --label-column naming the one that holds the labels"
    )


def image_column_of(header: list[str]) -> str | None:
    """The one column of ``header`` named as image paths are (:data:`IMAGE_COLUMNS`), or None; ValueError for
    several."""
    found = [column for column in header if column.lower() in IMAGE_COLUMNS]
    if len(found) > 1:
        raise ValueError(f"columns {found} could each hold the image paths. Fix: pass --image-column naming it")
    return found[0] if found else None


def with_detected_id(path: Path, *, columns: dict[str, str | None], feature_columns: list[str] | None) -> dict:
    """``columns`` (label, id, image, text) of the file at ``path`` with, where no ``--id-column`` names the rows, the
    column that numbers them: the first that looks like row ids (:func:`enkcvs.data.sources.own.id_like_columns`:
    named like an index, or unique integers), is neither read (label, texts, image paths) nor one of
    ``feature_columns``, and holds a value on every row, none repeated; said in one warning. Unchanged for a folder,
    an id given, or no such column."""
    import pandas as pd

    if path.is_dir() or columns["id"] is not None:
        return columns
    used = {columns["label"], columns["image"], columns["text"], *(feature_columns or ())}
    candidates = [column for column in own.table_header(str(path)) if column not in used]
    if not candidates:
        return columns
    frame = (
        pd.read_csv(path, usecols=candidates)
        if path.suffix.lower() == ".csv"
        else pd.read_parquet(path, columns=candidates)
    )
    for column in own.id_like_columns(frame):
        if frame[column].notna().all() and frame[column].is_unique:
            warnings.warn(
                f"{path}: column {column!r} looks like row ids: it names the rows in the output, and is no feature. "
                "Fix: pass --id-column to name the rows by another column, or --feature-columns to train on it",
                stacklevel=3,
            )
            return {**columns, "id": column}
    return columns
