"""A prepared dataset's model inputs as training and prediction take them: the arrays of one split (images, token
ids from the tokenise rule's file) and a subset of them, streamed from disk for image files."""

import numpy as np

from enkcvs.data.datasets import Dataset
from enkcvs.io import PathLike


def split_inputs(data: Dataset, tokens: PathLike | None, *, split: str) -> np.ndarray:
    """The whole ``split``'s ("train"/"test") inputs, read once per job: images, token ids (from ``tokens``, the
    tokenise rule's file) for text, or image paths for image files."""
    if data.modality != "text":
        return getattr(data, f"x_{split}")
    if tokens is None:
        raise ValueError("a text dataset needs its tokens file (the tokenise rule's output)")
    with np.load(tokens) as arrays:
        return arrays[split]


def subset_inputs(data: Dataset, x: np.ndarray, indices: np.ndarray | None = None, *, train: bool = False):
    """The model inputs of samples ``indices`` of ``x`` (from :func:`split_inputs`): an array for in-memory data,
    a streamed Dataset for image files (random crops and flips when ``train``)."""
    x = x if indices is None else x[indices]
    if data.modality != "image_files":
        return x
    from enkcvs.data.sources.web import image_files_dataset

    return image_files_dataset(root=data.image_root, paths=x, transform=data.image_transform, train=train)
