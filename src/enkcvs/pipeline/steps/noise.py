"""The noise rule's step (``workflow/rules/noise.smk``): the noisy training labels of one (dataset, noise, seed)."""

import numpy as np
import pandas as pd

from enkcvs.data.datasets import load_dataset
from enkcvs.io import PathLike, provenance, write_table
from enkcvs.method.noise import inject_noise, superclass_asymmetric_map
from enkcvs.method.noise_settings import ASYMMETRIC_MAPS, SUPERCLASS_MAPS, parse_noise


def make_noisy_labels(
    *, dataset: PathLike, noise: str, seed: int, asymmetric_map: str | None, code: str, output: PathLike
) -> None:
    """Write the noisy training labels of one (dataset, noise, seed): columns ``sample``, ``true``, ``given``.

    ``true`` is -1 (unknown) for ``real`` noise: the dataset's own labels are the given ones. ``code`` is the job's
    code fingerprint (:func:`enkcvs.pipeline.fingerprint.code_fingerprint`), recorded in the file's provenance.
    """
    data = load_dataset(dataset)
    spec = parse_noise(noise)
    mapping = None
    if spec.kind == "asym" and asymmetric_map in SUPERCLASS_MAPS:
        if data.superclasses is None:
            raise ValueError(f"asymmetric_map {asymmetric_map!r} needs super-classes, which {dataset} does not have")
        mapping = superclass_asymmetric_map(superclasses=data.superclasses, variant=asymmetric_map, seed=seed)
    elif spec.kind == "asym":
        mapping = ASYMMETRIC_MAPS[asymmetric_map]
    given = inject_noise(data.y_train, spec=spec, num_classes=data.num_classes, seed=seed, mapping=mapping)
    true = np.full_like(given, -1) if spec.kind == "real" else data.y_train
    frame = pd.DataFrame({"sample": np.arange(len(given)), "true": true, "given": given})
    meta = provenance(
        noise=noise,
        seed=seed,
        asymmetric_map=asymmetric_map,
        mapping={str(source): target for source, target in sorted((mapping or {}).items())},
        num_classes=data.num_classes,
        code=code,
    )
    write_table(frame, output, metadata=meta)
