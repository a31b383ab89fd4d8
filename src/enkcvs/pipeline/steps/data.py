"""The data rules' steps (``workflow/rules/data.smk``): a user-supplied layout checked, a source prepared as the
project's ``.npz``, a text dataset tokenised once."""

import json
from typing import Any

import numpy as np

from enkcvs.data.datasets import load_dataset, save_dataset
from enkcvs.data.sources import get_source, load_source
from enkcvs.io import PathLike, atomic_path, provenance, write_json


def check_layout(*, source: str, options: dict[str, Any], code: str, output: PathLike) -> None:
    """Verify a user-supplied dataset's folder layout (Clothing-1M, WebVision) before anything trains on it.

    Raises ``FileNotFoundError`` listing everything missing (the source's own error); on success writes a JSON record.
    ``code`` is the job's code fingerprint (:func:`enkcvs.pipeline.fingerprint.code_fingerprint`), recorded.
    """
    get_source(source).check_layout(**options)
    write_json(provenance(source=source, options=options, code=code), output)


def prepare_dataset(*, source: str, options: dict[str, Any], code: str, output: PathLike) -> None:
    """Load a dataset source (downloading it where allowed) and store it as the project's ``.npz``, with the job's
    code fingerprint in its provenance."""
    save_dataset(load_source(source, **options), output, metadata=provenance(source=source, options=options, code=code))


def tokenize_dataset(*, dataset: PathLike, checkpoint: str, max_length: int, code: str, output: PathLike) -> None:
    """Tokenise a text dataset once per (dataset, checkpoint): ``.npz`` with ``train`` (N, 2, L) and ``test``
    (N_test, 2, L) int64 arrays (token ids and attention mask), reused by every fold and final job; its provenance
    holds the job's code fingerprint."""
    from enkcvs.data.text import tokenize

    data = load_dataset(dataset)
    if data.modality != "text":
        raise ValueError(f"{dataset} holds {data.modality} data; only text datasets are tokenised")
    arrays = {"train": tokenize(list(data.x_train), checkpoint=checkpoint, max_length=max_length)}
    arrays["test"] = (  # a user's own data has no test split
        tokenize(list(data.x_test), checkpoint=checkpoint, max_length=max_length)
        if len(data.x_test)
        else arrays["train"][:0]
    )
    meta = provenance(checkpoint=checkpoint, max_length=max_length, code=code)
    with atomic_path(output) as tmp, open(tmp, "wb") as handle:
        np.savez(handle, **arrays, provenance=np.array(json.dumps(meta, sort_keys=True)))
