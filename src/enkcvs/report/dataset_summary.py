"""The dataset summary table (the paper's appendix table), for the datasets a run used."""

from collections.abc import Mapping

import pandas as pd

from enkcvs.report.comparison import NO_NUMBER


def describe_dataset(dataset) -> dict:
    """The :func:`dataset_summary` entry of an :class:`enkcvs.data.datasets.Dataset`: the input shape is (C, H, W) of
    in-memory images, (3, crop, crop) of image files, and None for text."""
    if dataset.modality == "text":
        shape = None
    elif dataset.modality == "image_files":
        shape = (3, dataset.image_transform["crop"], dataset.image_transform["crop"])
    else:
        shape = tuple(int(n) for n in dataset.x_train.shape[1:])
    return {"train": len(dataset.y_train), "test": len(dataset.y_test), "classes": dataset.num_classes, "shape": shape}


def dataset_summary(datasets: Mapping[str, Mapping]) -> pd.DataFrame:
    """The dataset summary table (the paper's appendix table), for the datasets actually used.

    Parameters
    ----------
    datasets : mapping of str to mapping
        Dataset name to ``{"train": int, "test": int, "classes": int, "shape": (C, H, W) or None}`` (see
        :func:`describe_dataset`); None (e.g. text) reads "—".

    Returns
    -------
    pandas.DataFrame
        One row per dataset, in the given order; columns ``dataset`` (str), ``train``, ``test``, ``classes`` (int) and
        ``input shape`` (str, "C × H × W").
    """
    rows = []
    for name, info in datasets.items():
        missing = sorted({"train", "test", "classes", "shape"} - set(info))
        if missing:
            raise KeyError(f"dataset {name!r} lacks {missing}")
        shape = info["shape"]
        rows.append(
            {
                "dataset": name,
                "train": int(info["train"]),
                "test": int(info["test"]),
                "classes": int(info["classes"]),
                "input shape": NO_NUMBER if shape is None else " × ".join(str(int(n)) for n in shape),
            }
        )
    return pd.DataFrame(rows, columns=["dataset", "train", "test", "classes", "input shape"])
