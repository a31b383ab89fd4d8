"""MNIST, CIFAR-10 and CIFAR-100 through torchvision's dataset classes, which download and md5-check the official files.

This module only reshapes what torchvision read into uint8 images (N, C, H, W), adds CIFAR-100's super-classes, and
turns torchvision's generic "Dataset not found or corrupted" into a message naming the folder, the files and the fix.
Errors: ``FileNotFoundError`` when ``download`` is false and the files are missing or fail their checksum;
``RuntimeError`` when a download was tried and failed (offline, or the downloaded archive failed its checksum).
"""

import dataclasses
import os
import pickle
import tarfile

import numpy as np

from enkcvs.data.datasets import Dataset


def load_mnist(*, root: str, download: bool = True) -> Dataset:
    """MNIST: 60,000 training and 10,000 test digits, 28x28 grey.

    Parameters
    ----------
    root : folder holding torchvision's layout ``MNIST/raw/`` (the unpacked idx files); downloads go there.
    download : fetch missing files from torchvision's mirrors (md5-checked).

    Returns
    -------
    Dataset with images uint8 (N, 1, 28, 28), labels int64 0..9, class names torchvision's ``classes``.
    """
    from torchvision.datasets import MNIST

    folder = os.path.join(root, "MNIST", "raw")
    # torchvision reads the unpacked files and checks only that they exist (the md5s belong to the .gz archives)
    expected = [(os.path.splitext(name)[0], None) for name, _ in MNIST.resources]
    official = f"the official idx files, unpacked, from {MNIST.mirrors[0]}"
    train, test = (
        _open(MNIST, root=root, train=split, download=download, folder=folder, expected=expected, official=official)
        for split in (True, False)
    )
    return Dataset(
        x_train=train.data.numpy()[:, None],
        y_train=train.targets.numpy().astype(np.int64),
        x_test=test.data.numpy()[:, None],
        y_test=test.targets.numpy().astype(np.int64),
        class_names=tuple(train.classes),
    )


def load_cifar10(*, root: str, download: bool = True) -> Dataset:
    """CIFAR-10: 50,000 training and 10,000 test colour images, 32x32, 10 classes.

    Parameters
    ----------
    root : folder holding ``cifar-10-batches-py/`` (the extracted official python archive); downloads go there.
    download : fetch and extract the official archive when files are missing or fail their md5.

    Returns
    -------
    Dataset with images uint8 (N, 3, 32, 32), labels int64 0..9, class names from ``batches.meta``.
    """
    from torchvision.datasets import CIFAR10

    train, test = _open_cifar(CIFAR10, root=root, download=download)
    return _cifar_dataset(train, test)


def load_cifar100(*, root: str, download: bool = True) -> Dataset:
    """CIFAR-100: 50,000 training and 10,000 test colour images, 32x32, 100 fine classes in 20 super-classes.

    Parameters
    ----------
    root : folder holding ``cifar-100-python/`` (the extracted official python archive); downloads go there.
    download : fetch and extract the official archive when files are missing or fail their md5.

    Returns
    -------
    Dataset with images uint8 (N, 3, 32, 32), fine labels int64 0..99, class names from ``meta``, and
    ``superclasses`` (100,): the coarse label of each fine class, read from the training file's labels.
    """
    from torchvision.datasets import CIFAR100

    train, test = _open_cifar(CIFAR100, root=root, download=download)
    dataset = _cifar_dataset(train, test)
    # torchvision keeps only the fine labels; the coarse ones are in the same (already md5-checked) training file
    train_file = os.path.join(root, CIFAR100.base_folder, CIFAR100.train_list[0][0])
    superclasses = _superclasses(train_file, num_classes=dataset.num_classes)
    return dataclasses.replace(dataset, superclasses=superclasses)


def _superclasses(path: str, *, num_classes: int) -> np.ndarray:
    """(Q,) int64: the coarse label of each of the Q fine classes, from the ``fine_labels`` and ``coarse_labels`` of
    the CIFAR-100 pickle ``path``; ``ValueError`` naming it unless every fine class has exactly one coarse label."""
    with open(path, "rb") as handle:
        entry = pickle.load(handle, encoding="latin1")  # written by Python 2, read as torchvision reads it
    fine = np.asarray(entry["fine_labels"], dtype=np.int64)
    coarse = np.asarray(entry["coarse_labels"], dtype=np.int64)
    pairs = np.unique(np.stack([fine, coarse], axis=1), axis=0)  # (P, 2) distinct (fine, coarse), sorted by fine
    if not np.array_equal(pairs[:, 0], np.arange(num_classes)):
        counts = np.bincount(pairs[:, 0], minlength=num_classes)
        bad = np.flatnonzero(counts != 1)
        raise ValueError(
            f"{path}: every fine class 0..{num_classes - 1} needs exactly one coarse label; fine classes "
            f"{bad.tolist()} have {counts[bad].tolist()} coarse labels: replace it with the official file"
        )
    return pairs[:, 1]


def _open_cifar(cls, *, root: str, download: bool):
    """The training and test splits of torchvision's ``CIFAR10`` or ``CIFAR100`` class."""
    folder = os.path.join(root, cls.base_folder)
    # read at call time: the md5s are class attributes
    expected = [*cls.train_list, *cls.test_list, (cls.meta["filename"], cls.meta["md5"])]
    official = f"the files of {cls.filename}, extracted, from {cls.url}"
    return tuple(
        _open(cls, root=root, train=split, download=download, folder=folder, expected=expected, official=official)
        for split in (True, False)
    )


def _cifar_dataset(train, test) -> Dataset:
    return Dataset(
        x_train=np.ascontiguousarray(train.data.transpose(0, 3, 1, 2)),  # torchvision's (N, H, W, C) -> (N, C, H, W)
        y_train=np.asarray(train.targets, dtype=np.int64),
        x_test=np.ascontiguousarray(test.data.transpose(0, 3, 1, 2)),
        y_test=np.asarray(test.targets, dtype=np.int64),
        class_names=tuple(train.classes),
    )


def _open(cls, *, root: str, train: bool, download: bool, folder: str, expected: list, official: str):
    """``cls(root, train=train, download=download)``, its failures re-raised naming ``folder``, the files and the fix.

    ``expected`` lists the files torchvision needs in ``folder`` as (name, md5 or None); ``official`` says where the
    official files come from.
    """
    try:
        return cls(root, train=train, download=download)
    except (OSError, RuntimeError, tarfile.TarError) as error:
        reason = " ".join(f"{type(error).__name__}: {error}".split())  # torchvision's messages span lines
        problems = [f"{name} ({state})" for name, md5 in expected if (state := _file_state(folder, name, md5))]
        found = ", ".join(problems) if problems else f"all present, but torchvision failed ({reason})"
        names = ", ".join(name for name, _ in expected)
        if download:
            raise RuntimeError(
                f"{cls.__name__}: download into {root} failed ({reason}); files in {folder}: "
                f"{found}. Expected files: {names}. Fix: check the network and rerun, or place {official} in {folder}"
            ) from error
        raise FileNotFoundError(
            f"{cls.__name__} files missing or corrupt in {folder}: {found}. Expected files: {names}. "
            f"Fix: set source_options.download: true, or place {official} in {folder}"
        ) from error


def _file_state(folder: str, name: str, md5: str | None) -> str:
    """``"missing"``, ``"fails its md5 check"`` or ``""`` (fine) for the file ``name`` in ``folder``."""
    from torchvision.datasets.utils import check_integrity

    path = os.path.join(folder, name)
    if not os.path.isfile(path):
        return "missing"
    return "" if check_integrity(path, md5) else "fails its md5 check"
