"""TREC question classification (Li & Roth, 2002): 5,452 training and 500 test questions, 6 coarse classes.

The official files, one question a line ``COARSE:fine question text`` in ISO-8859-1, are downloaded with torchvision's
``download_url`` and always checked against their md5 before being read, so a partial or wrong file is never trusted.
Errors: ``FileNotFoundError`` when ``download`` is false and a file is missing or fails its md5; ``RuntimeError`` when a
download was tried and failed (the bad file is deleted).
"""

import http.client
import os

import numpy as np

from enkcvs.data.datasets import Dataset

#: The 6 coarse classes in label order (``enkcvs.method.noise_settings.ASYMMETRIC_MAPS["trec"]`` assumes this order).
CLASSES = ("ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM")
URL = "https://cogcomp.seas.upenn.edu/Data/QA/QC/"  # official mirror; the file name is appended
TRAIN_FILE = "train_5500.label"
TEST_FILE = "TREC_10.label"
MD5 = {TRAIN_FILE: "073462e3fcefaae31e00edb1f18d2d02", TEST_FILE: "323a3554401d86e650717e2d2f942589"}
ENCODING = "iso-8859-1"


def load_trec(*, root: str, download: bool = True) -> Dataset:
    """TREC with its 6 coarse labels.

    Parameters
    ----------
    root : folder holding ``train_5500.label`` and ``TREC_10.label``; downloads go there.
    download : fetch a missing or wrong file from :data:`URL`.

    Returns
    -------
    Dataset of modality ``"text"``: questions as str arrays (N,), labels int64 indexing :data:`CLASSES`.
    """
    x_train, y_train = read_trec_file(_verified_path(root=root, filename=TRAIN_FILE, download=download))
    x_test, y_test = read_trec_file(_verified_path(root=root, filename=TEST_FILE, download=download))
    return Dataset(x_train=x_train, y_train=y_train, x_test=x_test, y_test=y_test, class_names=CLASSES, modality="text")


def read_trec_file(path: str) -> tuple[np.ndarray, np.ndarray]:
    """The questions (N,) str and coarse labels (N,) int64 of a TREC label file.

    The label token is ``COARSE:fine``; the question is everything after the first space. A line that does not parse
    raises ``ValueError`` naming the file and line number.
    """
    texts, labels = [], []
    # iterate the file, not str.splitlines(): that would also split at U+0085, which is byte 0x85 in ISO-8859-1
    with open(path, encoding=ENCODING) as handle:
        lines = [line.rstrip("\n") for line in handle]
    for number, line in enumerate(lines, start=1):
        token, _, text = line.partition(" ")
        coarse, colon, fine = token.partition(":")
        if coarse not in CLASSES or not colon or not fine or not text.strip():
            raise ValueError(
                f"{path}, line {number}: expected 'COARSE:fine question' with COARSE in {CLASSES}, got {line!r}"
            )
        texts.append(text)
        labels.append(CLASSES.index(coarse))
    return np.array(texts, dtype=str), np.array(labels, dtype=np.int64)


def _verified_path(*, root: str, filename: str, download: bool) -> str:
    """The path of ``filename`` in ``root`` once it matches its md5, downloading it first when allowed."""
    from torchvision.datasets.utils import calculate_md5, check_integrity, download_url

    path, expected, url = os.path.join(root, filename), MD5[filename], URL + filename
    if check_integrity(path, expected):
        return path
    if not download:
        if not os.path.isfile(path):
            raise FileNotFoundError(
                f"TREC file {filename} not found in {root}. Fix: point source_options.root at a folder with the "
                f"official files ({TRAIN_FILE}, {TEST_FILE} from {URL}), or set source_options.download: true"
            )
        raise FileNotFoundError(
            f"TREC file {path} fails its md5 check: expected {expected}, got {calculate_md5(path)}. Fix: replace it "
            f"with the official file from {url}, or delete it and set source_options.download: true"
        )
    failure = None
    try:
        download_url(url, root, filename, expected)  # re-downloads a file that fails its md5
    except (OSError, RuntimeError, http.client.HTTPException) as error:  # offline, HTTP error, or wrong content
        failure = error
    if check_integrity(path, expected):
        return path
    actual = calculate_md5(path) if os.path.isfile(path) else None
    if actual is not None:
        os.remove(path)  # never leave a partial or wrong file where a later run could read it
        raise RuntimeError(
            f"TREC file {filename} downloaded from {url} fails its md5 check: expected {expected}, got {actual}; "
            f"deleted it. Fix: rerun later, or place the official file in {root} and set source_options.download: "
            "false"
        ) from failure
    raise RuntimeError(
        f"could not download TREC file {filename} from {url} into {root} ({type(failure).__name__}: {failure}). "
        f"Fix: check the network and rerun, or place the official files ({TRAIN_FILE}, {TEST_FILE}) in {root}"
    ) from failure
