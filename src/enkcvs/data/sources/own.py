"""The user's own data, to find the mislabeled rows in it: a table of numeric features, a folder of images with one
sub-folder per class, a table of image paths, or a table of texts.

- ``table``: a CSV or parquet file of feature columns and a label column; text that reads as numbers, times of day
  or dates is read as numbers, other text, category and boolean columns are one-hot encoded, and columns that look
  like row ids or hold codes of too many values to encode are left out. The features are stored as float32 images
  (N, 1, 1, F) of modality ``"image"``, so the ``mlp`` model (which flattens its input) trains on them unchanged; a
  table has no modality of its own because nothing but its shape would differ. The numbers are kept as they are (no
  standardisation): scale features of very different ranges beforehand if the MLP trains poorly.
- ``image_folder``: ``<root>/<class name>/<image>`` as torchvision's ``ImageFolder`` reads it; modality
  ``"image_files"``.
- ``image_table``: a CSV or parquet file with a column of image paths (relative to the file's folder, or absolute)
  and a label column; modality ``"image_files"``.
- ``text_table``: a CSV or parquet file with a text column and a label column; modality ``"text"``.

Every row is a training sample; the test split is empty (shape (0, ...)) since the user's data hold no separate clean
test set. Integer labels 0..Q-1 are kept; any other labels are mapped to 0..Q-1 in sorted order, with a warning, and
kept as the class names. Each loader checks its input before reading it in full and raises ``FileNotFoundError`` or
``ValueError`` naming the file and the fix.
"""

import os
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from enkcvs.data.datasets import Dataset
from enkcvs.data.sources.columns import (
    as_number,
    id_like_columns,
    integers,
    is_code,
    left_out_line,
    read_values,
    swamping_codes,
)

if TYPE_CHECKING:  # pandas is imported where a table is read, keeping this package cheap to import
    import pandas as pd

READERS = {".csv": "CSV", ".parquet": "parquet"}  # file extension -> format
DEFAULT_RESIZE = 256  # shorter side after resizing (pixels), as for Clothing-1M
DEFAULT_CROP = 224  # side of the centre crop (pixels)
SHOWN_ROWS = 5  # offending rows named in an error
SHOWN_LABELS = 10  # label mapping entries named in the warning
SEPARATORS = (";", "\t", "|")  # what a CSV of one column is likely separated by instead of commas


def load_table(
    *,
    path: str,
    label_column: str,
    feature_columns: list[str] | None = None,
    id_column: str | None = None,
    missing: str = "refuse",
) -> Dataset:
    """A table of features and labels: numeric columns as they are, text of numbers, times of day or dates and stored
    dates read as numbers (:func:`read_values`), other text, category and boolean columns one-hot encoded (one 0/1
    column per value seen, and one for a missing value where there is one), each said in one line.

    Parameters
    ----------
    path : CSV (``.csv``) or parquet (``.parquet``) file, one sample per row.
    label_column : the column holding each row's (possibly wrong) label.
    feature_columns : the columns the model sees, as given (read as numbers where they hold them, else one-hot
        encoded); None: every column except ``label_column``, ``id_column``, those that look like row ids
        (:func:`id_like_columns`) and codes of too many values (:func:`swamping_codes`), these left out in one line.
    id_column : a column of unique row ids, never a feature, carried into the label-issue tables.
    missing : what becomes of a missing numeric value: ``"refuse"``, a ValueError naming the rows; ``"keep"``, kept as
        NaN for the fold models to impute inside each fold from their training part
        (:func:`enkcvs.training.standardize.standardized`), with a line naming the columns.

    Returns
    -------
    Dataset of modality ``"image"``: x float32 (N, 1, 1, F) with the F encoded features in column order and their
    names as ``feature_names`` (``<column>=<value>`` for a one-hot column), labels int64 (N,); empty test split.
    """
    header, given = table_header(path), feature_columns is not None
    if given and label_column in feature_columns:
        raise ValueError(
            f"{path}: the label column {label_column!r} is also a feature column, which would let the "
            "model read the label. Fix: drop it from source_options.feature_columns"
        )
    if given and id_column in feature_columns:
        raise ValueError(
            f"{path}: the id column {id_column!r} is also a feature column, which would let the model "
            "learn row ids. Fix: drop it from source_options.feature_columns"
        )
    candidates = list(feature_columns) if given else [c for c in header if c not in (label_column, id_column)]
    frame = _read_table(path, header=header, columns=[*candidates, label_column, *_optional(id_column)])
    values, converted = read_values(frame[candidates])
    ids = {} if given else id_like_columns(values)
    codes = {} if given else {c: n for c, n in swamping_codes(values).items() if c not in ids}
    features = [c for c in candidates if c not in ids and c not in codes]
    if not features:
        raise ValueError(
            f"{path} has no feature column besides the label column {label_column!r}. Fix: add "
            "feature columns to the file"
        )
    encoded = [c for c in features if is_code(values[c])]
    columns = _encoded_features(values[features], encoded=encoded)  # (N, F') numeric, one-hot columns 0/1
    if ids or codes:
        warnings.warn(left_out_line(path, ids=ids, codes=codes, others=columns.shape[1]), stacklevel=2)
    if said := [f"{c} ({what})" for c, what in converted.items() if c in features]:
        warnings.warn(
            f"{path}: {len(said)} column{'s' * (len(said) > 1)} read as numbers: {', '.join(said)}", stacklevel=2
        )
    if encoded:
        warnings.warn(
            f"{path}: {len(encoded)} column{'s' * (len(encoded) > 1)} of text, categories or booleans "
            f"({', '.join(map(str, encoded))}) one-hot encoded into {columns.shape[1] - len(features) + len(encoded)} "
            "0/1 features, one per value (and one for a missing value where there is one)",
            stacklevel=2,
        )
    x = columns.to_numpy(dtype=np.float32)  # (N, F')
    infinite, absent = np.isinf(x).any(axis=1), np.isnan(x).any(axis=1)
    if infinite.any() or (absent.any() and missing == "refuse"):
        bad = infinite | (absent if missing == "refuse" else False)
        raise ValueError(
            f"{path}: {bad.sum()} of {len(x)} rows have {'missing or ' * (missing == 'refuse')}infinite features "
            f"({_rows(bad)}). Fix: fill in or drop those rows"
        )
    if absent.any():
        gaps = [str(c) for c in features if c not in encoded and values[c].isna().any()]
        warnings.warn(
            f"{path}: {int(np.isnan(x).sum())} missing value{'s' * bool(np.isnan(x).sum() > 1)} in {len(gaps)} "
            f"column{'s' * (len(gaps) > 1)} "
            f"({', '.join(gaps)}): imputed inside each fold by the mean of its training part",
            stacklevel=2,
        )
    labels, class_names = _labels(frame[label_column], path=path, column=label_column)
    return _training_only(
        x.reshape(len(x), 1, 1, -1),
        labels,
        class_names=class_names,
        modality="image",
        feature_names=tuple(map(str, columns.columns)),
        **_ids(frame, path=path, column=id_column),
    )


def _encoded_features(frame: "pd.DataFrame", *, encoded: list) -> "pd.DataFrame":
    """``frame`` with each column of ``encoded`` replaced, where it stood, by its one-hot 0/1 columns
    (``<column>=<value>``, values in sorted order; ``<column>=<missing>`` where a value is missing)."""
    import pandas as pd

    parts = []
    for column in frame.columns:
        if column not in encoded:
            parts.append(as_number(frame[column]).to_frame(column))
            continue
        values = frame[column].astype("string")
        dummies = pd.get_dummies(values, prefix=str(column), prefix_sep="=", dummy_na=bool(values.isna().any()))
        dummies = dummies.rename(
            columns={f"{column}=nan": f"{column}=<missing>", f"{column}=<NA>": f"{column}=<missing>"}
        )
        parts.append(dummies.astype(float))
    return pd.concat(parts, axis=1)


def load_image_folder(*, root: str, resize: int | None = None, crop: int | None = None) -> Dataset:
    """Images in one sub-folder per class, read as torchvision's ``ImageFolder`` reads them.

    Parameters
    ----------
    root : folder of class folders ``<root>/<class name>/**/<image>``; class names are the sorted folder names, images
        the files with an extension in ``torchvision.datasets.folder.IMG_EXTENSIONS`` (other files are ignored).
    resize, crop : shorter side after resizing, then side of the centre crop (pixels; None: 256 and 224), stored in
        ``image_transform``.

    Returns
    -------
    Dataset of modality ``"image_files"``: x str (N,) paths relative to ``image_root`` (the absolute root), labels
    int64 (N,) indexing the class folders; empty test split.
    """
    from torchvision.datasets.folder import IMG_EXTENSIONS, find_classes, make_dataset

    fix = "Fix: point source_options.root at a folder holding one sub-folder of images per class"
    if not os.path.isdir(root):
        raise FileNotFoundError(f"image folder {root} not found. {fix}")
    try:
        class_names, class_to_index = find_classes(root)
    except FileNotFoundError as error:
        raise FileNotFoundError(f"{root} has no class sub-folders. {fix}") from error
    if len(class_names) < 2:
        raise ValueError(f"{root} has fewer than 2 class sub-folders ({class_names}). {fix}")
    samples = make_dataset(root, class_to_index, extensions=IMG_EXTENSIONS, allow_empty=True)
    empty = sorted(set(class_names) - {class_names[label] for _, label in samples})
    if empty:
        raise FileNotFoundError(
            f"{root}: no images in the class folders {empty}; images are files ending in "
            f"{', '.join(IMG_EXTENSIONS)} (any case). {fix}"
        )
    paths = np.array([os.path.relpath(path, root) for path, _ in samples], dtype=str)
    _warn_skipped_files(root, class_names=class_names, read=set(paths.tolist()))
    _check_images_open(root, paths)
    labels = np.array([label for _, label in samples], dtype=np.int64)
    transform = {"resize": resize or DEFAULT_RESIZE, "crop": crop or DEFAULT_CROP, "train_crop": "center"}
    return _training_only(
        paths,
        labels,
        class_names=tuple(class_names),
        modality="image_files",
        image_root=os.path.abspath(root),
        image_transform=transform,
    )


def load_image_table(
    *,
    path: str,
    image_column: str,
    label_column: str,
    id_column: str | None = None,
    resize: int | None = None,
    crop: int | None = None,
) -> Dataset:
    """A table of image paths and labels.

    Parameters
    ----------
    path : CSV (``.csv``) or parquet (``.parquet``) file, one sample per row.
    image_column : the column holding each row's image file, relative to the folder of ``path`` or absolute.
    label_column : the column holding each row's (possibly wrong) label.
    id_column : a column of unique row ids, carried into the label-issue tables.
    resize, crop : shorter side after resizing, then side of the centre crop (pixels; None: 256 and 224), stored in
        ``image_transform``.

    Returns
    -------
    Dataset of modality ``"image_files"``: x str (N,) paths as the table gives them, read from ``image_root`` (the
    table's absolute folder), labels int64 (N,); empty test split.
    """
    frame = _read_table(path, header=table_header(path), columns=[image_column, label_column, *_optional(id_column)])
    root = os.path.dirname(os.path.abspath(path))
    paths = frame[image_column].tolist()
    missing = np.array([not (isinstance(name, str) and os.path.isfile(os.path.join(root, name))) for name in paths])
    if missing.any():
        first = paths[int(np.argmax(missing))]
        shown = os.path.join(root, first) if isinstance(first, str) else "an empty cell"
        raise FileNotFoundError(
            f"{path}: {missing.sum()} of {len(paths)} images in column {image_column!r} are not "
            f"files ({_rows(missing)}; the first: {shown}). Fix: give paths relative to the "
            "table's folder or absolute, and drop the rows without an image"
        )
    _check_images_open(root, np.array(paths, dtype=str), table=path)
    labels, class_names = _labels(frame[label_column], path=path, column=label_column)
    transform = {"resize": resize or DEFAULT_RESIZE, "crop": crop or DEFAULT_CROP, "train_crop": "center"}
    return _training_only(
        np.array(paths, dtype=str),
        labels,
        class_names=class_names,
        modality="image_files",
        image_root=root,
        image_transform=transform,
        **_ids(frame, path=path, column=id_column),
    )


def load_text_table(*, path: str, text_column: str, label_column: str, id_column: str | None = None) -> Dataset:
    """A table of texts and labels.

    Parameters
    ----------
    path : CSV (``.csv``) or parquet (``.parquet``) file, one sample per row.
    text_column : the column holding each row's text (non-text values are read as their string form).
    label_column : the column holding each row's (possibly wrong) label.
    id_column : a column of unique row ids, carried into the label-issue tables.

    Returns
    -------
    Dataset of modality ``"text"``: x str (N,), labels int64 (N,); empty test split.
    """
    frame = _read_table(path, header=table_header(path), columns=[text_column, label_column, *_optional(id_column)])
    texts = frame[text_column]
    empty = (texts.isna() | texts.astype(str).str.strip().eq("")).to_numpy()
    if empty.any():
        raise ValueError(
            f"{path}: {empty.sum()} of {len(texts)} rows have an empty text in column {text_column!r} "
            f"({_rows(empty)}). Fix: fill in or drop those rows"
        )
    labels, class_names = _labels(frame[label_column], path=path, column=label_column)
    return _training_only(
        np.array(texts.astype(str).tolist(), dtype=str),
        labels,
        class_names=class_names,
        modality="text",
        **_ids(frame, path=path, column=id_column),
    )


def table_header(path: str) -> list[str]:
    """The column names of a CSV or parquet file, read without its rows; errors for a missing, unknown or unreadable
    file."""
    import pandas as pd

    if not os.path.isfile(path):
        raise FileNotFoundError(f"table {path} not found. Fix: point source_options.path at your CSV or parquet file")
    if _format(path) is None:
        raise ValueError(
            f"{path}: unknown table format; the extension must be one of {sorted(READERS)}. Fix: save "
            "the table as CSV or parquet"
        )
    if os.path.getsize(path) == 0:
        raise ValueError(f"{path} is an empty file. Fix: give the table itself, a header and one row per sample")
    try:
        if _format(path) == "CSV":
            header = [str(c) for c in pd.read_csv(path, nrows=0).columns]
        else:
            import pyarrow.parquet as pq

            schema = pq.read_schema(path)
            stored_index = (schema.pandas_metadata or {}).get("index_columns", [])  # a saved DataFrame index: no data
            return [c for c in schema.names if c not in stored_index]
    except (ValueError, OSError) as error:  # pandas' parser errors and pyarrow's ArrowInvalid are ValueErrors
        raise _unreadable(path, error) from error
    return _checked_separator(header, path=path)


def _read_table(path: str, *, header: list[str], columns: list[str]) -> "pd.DataFrame":
    """``columns`` of a CSV or parquet file whose column names are ``header``, after checking they exist."""
    import pandas as pd

    missing = [c for c in columns if c not in header]
    if missing:
        raise ValueError(
            f"{path} has no column {', '.join(map(repr, missing))}; its columns are {header}. Fix: set "
            "source_options to existing column names"
        )
    try:
        frame = pd.read_csv(path, usecols=columns) if _format(path) == "CSV" else pd.read_parquet(path, columns=columns)
    except (ValueError, OSError) as error:
        raise _unreadable(path, error) from error
    if frame.empty:
        raise ValueError(
            f"{path} is an empty table: a header ({', '.join(header)}) and no rows. Fix: one row per "
            "sample under the header"
        )
    return frame


def _checked_separator(header: list[str], *, path: str) -> list[str]:
    """The ``header`` of a CSV file read with commas; ValueError naming the separator where the file holds one
    column whose name holds another (:data:`SEPARATORS`), as a semicolon-separated export reads."""
    counts = {separator: header[0].count(separator) for separator in SEPARATORS} if len(header) == 1 else {}
    separator = max(counts, key=counts.get, default=None)
    if separator is None or not counts[separator]:
        return header
    raise ValueError(
        f"{path} reads as one column {header[0]!r}: CSV files here are comma-separated, and this one's "
        f"separator looks like {separator!r}. Fix: save it comma-separated, e.g. "
        f"pandas.read_csv(path, sep={separator!r}).to_csv(path, index=False)"
    )


#: Encodings a CSV file that is not UTF-8 is tried in, to name the one it reads in (latin-1 reads any bytes: last).
ENCODINGS = ("cp1252", "latin-1")


def _unreadable(path: str, error: Exception) -> ValueError:
    if isinstance(error, UnicodeDecodeError):
        data = Path(path).read_bytes()
        encoding = next(name for name in ENCODINGS if _decodes(data, name))
        return ValueError(
            f"{path} is not UTF-8 (it holds the byte {error.object[error.start]:#04x}); it reads as {encoding}. "
            f"Fix: save it as UTF-8, e.g. pandas.read_csv(path, encoding={encoding!r}).to_csv(path, index=False)"
        )
    return ValueError(
        f"{path} is not a readable {_format(path)} file ({type(error).__name__}: {error}). Fix: re-export it"
    )


def _decodes(data: bytes, encoding: str) -> bool:
    try:
        data.decode(encoding)
    except UnicodeDecodeError:
        return False
    return True


def _format(path: str) -> str | None:
    return READERS.get(os.path.splitext(path)[1].lower())


def _labels(values: "pd.Series", *, path: str, column: str) -> tuple[np.ndarray, tuple[str, ...]]:
    """Labels (N,) int64 in 0..Q-1 and the Q class names of a label column.

    Integers 0..Q-1 are kept, with class names ``"0"``...; other labels are numbered in sorted order and named by their
    value, with a warning showing the mapping.
    """
    from pandas.api.types import is_integer_dtype

    missing = values.isna().to_numpy()
    if missing.any():
        raise ValueError(
            f"{path}: {missing.sum()} of {len(values)} rows have no label in column {column!r} "
            f"({_rows(missing)}). Fix: label or drop those rows"
        )
    classes, labels = np.unique(values.to_numpy(), return_inverse=True)
    if len(classes) < 2:
        raise ValueError(
            f"{path}: column {column!r} holds {len(classes)} distinct label(s) {classes.tolist()}; "
            "finding mislabeled rows needs at least 2 classes. Fix: check source_options.label_column"
        )
    if not (is_integer_dtype(values) and np.array_equal(classes, np.arange(len(classes)))):
        mapping = ", ".join(f"{value!r} -> {label}" for label, value in enumerate(classes[:SHOWN_LABELS].tolist()))
        more = f", ... ({len(classes)} classes)" if len(classes) > SHOWN_LABELS else ""
        warnings.warn(
            f"{path}: the labels in column {column!r} are not the integers 0..{len(classes) - 1}; numbered "
            f"in sorted order and kept as class names: {mapping}{more}",
            stacklevel=3,
        )
    return labels.astype(np.int64), tuple(str(value) for value in classes.tolist())


def _warn_skipped_files(root: str, *, class_names: list[str], read: set[str]) -> None:
    """A warning counting and naming the files in the class folders of ``root`` that are not read as images (not in
    ``read``, paths relative to ``root``: their extension is not an image's); hidden files (``.DS_Store``) are not
    counted."""
    found = (
        os.path.relpath(os.path.join(folder, name), root)
        for class_name in class_names
        for folder, _, names in os.walk(os.path.join(root, class_name), followlinks=True)
        for name in names
        if not name.startswith(".")
    )
    skipped = sorted(path for path in found if path not in read)
    if skipped:
        shown = ", ".join(skipped[:SHOWN_ROWS]) + (", ..." if len(skipped) > SHOWN_ROWS else "")
        warnings.warn(
            f"{root}: {len(skipped)} file{'s' * (len(skipped) != 1)} in the class folders skipped, not "
            f"images by their extension ({shown}). Fix: convert them to an image format, or move them out "
            "of the class folders to silence this",
            stacklevel=3,
        )


def _check_images_open(root: str, paths: np.ndarray, *, table: str | None = None) -> None:
    """ValueError naming the first of ``paths`` (relative to ``root``) that is no readable image, and how many are
    not, before anything trains on them."""
    from PIL import Image, UnidentifiedImageError

    bad = []
    for row, name in enumerate(paths.tolist()):
        try:
            with Image.open(os.path.join(root, name)) as image:
                image.verify()  # reads the file's structure, not its pixels: cheap, and catches truncated PNGs
        except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as error:
            bad.append((row, name, error))
    if bad:
        row, name, error = bad[0]
        where = f"row {row} of {table}, 0-based, header not counted; " if table else ""
        raise ValueError(
            f"{len(bad)} of {len(paths)} image files are damaged or no images; the first: "
            f"{os.path.join(root, name)} ({where}{type(error).__name__}: {error}). Fix: re-save that "
            "file as PNG or JPEG, or remove it" + (" and its row" if table else "")
        )


def _optional(column: str | None) -> list[str]:
    return [] if column is None else [column]


def _ids(frame: "pd.DataFrame", *, path: str, column: str | None) -> dict:
    """``sample_ids`` (int64 where the ids are integers, whole floats among them, else their string form) and
    ``id_column`` of a Dataset, or nothing without an id column; ValueError for missing or repeated ids."""
    from enkcvs.ids import repeated_ids

    if column is None:
        return {}
    values = frame[column]
    missing = values.isna().to_numpy()
    if missing.any():
        raise ValueError(
            f"{path}: {missing.sum()} of {len(values)} rows have no id in column {column!r} "
            f"({_rows(missing)}). Fix: give every row an id, or leave out source_options.id_column"
        )
    ids = values.to_numpy(np.int64) if integers(values) else np.array(values.astype(str).tolist(), dtype=str)
    repeated = repeated_ids(values)
    if repeated:
        raise ValueError(
            f"{path}: ids in column {column!r} repeat ({repeated}; rows 0-based, header not counted), so "
            "they cannot name a row. Fix: make the ids unique, or leave out source_options.id_column"
        )
    return {"sample_ids": ids, "id_column": column}


def _rows(mask: np.ndarray) -> str:
    """The first offending rows of a (N,) bool mask, as a user finds them in the file."""
    shown = ", ".join(str(row) for row in np.flatnonzero(mask)[:SHOWN_ROWS])
    return f"rows {shown}{', ...' if mask.sum() > SHOWN_ROWS else ''}; 0-based, header not counted"


def _training_only(x: np.ndarray, y: np.ndarray, *, class_names: tuple[str, ...], **fields) -> Dataset:
    """All samples as the training split and an empty test split of the same dtype and sample shape."""
    return Dataset(x_train=x, y_train=y, x_test=x[:0], y_test=y[:0], class_names=class_names, **fields)
