"""The same ranking whatever the row order or the number of threads or processes, and the record of what else it
depends on.

- **Rows in a canonical order.** Folds, batches, the standardisation's and the review list's sums and every tie go by
  a row's position, so each row is keyed by a digest of its content (:func:`row_digests`), the rows are processed
  sorted by it (:func:`canonical_order`) and handed back in the file's order; ties in the ranking go by it too
  (:func:`stable_ranks`). The workflow's fold and label-issue jobs on a user's own files key them alike
  (:func:`dataset_digests`).
- **Fold models fit on one thread** (:func:`one_thread`): torch's CPU kernels split some reductions between threads
  (batch norm's statistics differ in their last bits between one thread and two, and the epochs grow them). The fold
  models that train one by one train side by side in processes instead (:mod:`enkcvs.labelissues.parallel`).
  Encoding texts and images uses every thread: their forward passes gave the same bits on one thread and two.
- :func:`computed_with`: what a result still depends on (device, CPU instruction set, package versions) and the
  threads it ran with, for its provenance record.
"""

import contextlib
import dataclasses
import hashlib
from collections.abc import Iterator
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import numpy as np

from enkcvs.data.datasets import Dataset

#: The packages that compute the review list beside those :func:`enkcvs.io.package_versions` records.
LIST_PACKAGES = ("cleanlab", "scipy")


def row_digests(*columns: np.ndarray | None) -> np.ndarray:
    """A digest of each row's content over ``columns``: arrays (N, ...) whose row i belongs to sample i, numbers
    digested by their bytes, anything else (texts, paths, ids) by its text; None is skipped. Rows equal in every
    column get equal digests, whatever their positions. Returns (N,) bytes ``S16``."""
    present = [np.asarray(column) for column in columns if column is not None]
    count = len(present[0])
    numbers = [
        np.ascontiguousarray(values).reshape(count, -1).view(np.uint8)  # (N, bytes of a row)
        for values in present
        if values.dtype.kind in "biuf"
    ]
    numbers = np.hstack(numbers) if numbers else np.empty((count, 0), dtype=np.uint8)
    texts = [values.tolist() for values in present if values.dtype.kind not in "biuf"]
    digests = np.empty(count, dtype="S16")
    for row, number in enumerate(numbers):
        content = [number.tobytes()]
        for text in (str(values[row]).encode() for values in texts):
            content.append(b"%d:%s" % (len(text), text))  # length-prefixed: ("ab", "c") is not ("a", "bc")
        digests[row] = hashlib.blake2b(b"".join(content), digest_size=16).digest()
    return digests


def dataset_digests(dataset: Dataset) -> np.ndarray:
    """(N,) the :func:`row_digests` of ``dataset``'s training samples over their content: features, text or image
    path, label and id. The command's rows (:func:`enkcvs.labelissues.owndata.read_data`) and the workflow's fold and
    label-issue jobs are keyed by it, so that both order the same rows alike."""
    return row_digests(dataset.x_train, dataset.y_train, dataset.sample_ids)


def canonical_order(digests: np.ndarray) -> np.ndarray:
    """The permutation (N,) that sorts rows by their ``digests`` (N,): the same rows in any order come out in the same
    order (rows of equal digests, alike in content, by position)."""
    return np.argsort(digests, kind="stable")


def in_order(inputs, order: np.ndarray):
    """The rows ``order`` (N,) of ``inputs``: an array (N, ...), a pandas frame (by position: texts beside their
    embeddings), or a Dataset's training split (inputs, labels, ids)."""
    if isinstance(inputs, np.ndarray):
        return inputs[order]
    if hasattr(inputs, "iloc"):
        return inputs.iloc[order]
    ids = None if inputs.sample_ids is None else inputs.sample_ids[order]
    return dataclasses.replace(inputs, x_train=inputs.x_train[order], y_train=inputs.y_train[order], sample_ids=ids)


def stable_ranks(*, label_quality: np.ndarray, listed: np.ndarray, digests: np.ndarray) -> np.ndarray:
    """Rank 1..N from most to least likely mislabelled: the lowest ``label_quality`` (N,) first; ties by the review
    list (``listed`` (N,) bool, first: its end may cut a tie, and it is the ranking's first not-kept samples), then by
    ``digests`` (N,), rows alike in content by position. -> (N,) int64."""
    rank = np.empty(len(label_quality), dtype=np.int64)
    rank[np.lexsort((digests, ~np.asarray(listed, dtype=bool), label_quality))] = np.arange(1, len(label_quality) + 1)
    return rank


def data_digest(digests: np.ndarray) -> str:
    """The SHA-256 (hex) of the rows' ``digests`` (N,) in canonical order: the same for the same rows in any order."""
    return hashlib.sha256(np.sort(digests).tobytes()).hexdigest()


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """torch's intra-op threads, and the BLAS and OpenMP pools of numpy, scipy and a user's scikit-learn classifier
    (threadpoolctl, which scikit-learn, cleanlab's dependency, brings), at one inside the block; restored after."""
    import torch
    from threadpoolctl import threadpool_limits

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with threadpool_limits(limits=1):
            yield
    finally:
        torch.set_num_threads(threads)


def computed_with(*, processes: int) -> dict[str, Any]:
    """What a ranking computed here depends on beyond its data and settings, for its provenance: the device torch
    trains on (a GPU by name), the CPU instruction set its kernels use, the versions of :data:`LIST_PACKAGES`; and the
    threads torch has (as ``OMP_NUM_THREADS`` or the cores set them) and the fold-model ``processes`` that ran, on
    neither of which the result depends."""
    import torch

    from enkcvs.training.device import default_device

    device = default_device()
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else None
    versions = {}
    for package in LIST_PACKAGES:
        with contextlib.suppress(PackageNotFoundError):
            versions[package] = version(package)
    return {
        "device": device.type if name is None else f"{device.type} ({name})",
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "threads": torch.get_num_threads(),
        "fitting_threads": 1,
        "fold_processes": processes,
        "row_order": "sorted by a digest of each row's content",
        "versions": versions,
    }
