"""The confident-learning rules' steps (``workflow/rules/confident.smk``): cleanlab beside E-NKCVS on the same
out-of-fold probabilities, and cleanlab's kept set for prune-and-retrain. cleanlab is imported inside each step."""

import logging
from typing import Any

import pandas as pd

from enkcvs.io import PathLike, provenance, write_table
from enkcvs.pipeline.predictions import read_iterations, stack_iterations

log = logging.getLogger(__name__)


def compare_confident_learning(
    *,
    predictions: list[PathLike],
    labels: PathLike,
    threshold: int,
    output: PathLike,
    ranking: PathLike,
    provenance_fields: dict,
) -> None:
    """E-NKCVS (M = 1 and the configured M, t) beside cleanlab's ``find_label_issues`` methods on the very same
    out-of-fold probabilities: precision and recall of the kept and of the flagged set, one row per method
    (``output``); and how well E-NKCVS's label quality and cleanlab's label-quality scores rank the true label errors
    first (``ranking``)."""
    from enkcvs.labelissues.confident import compare_rankings, compare_with_confident_learning

    label_table, num_classes, iterations = read_iterations(predictions, labels=labels)
    _, probabilities = stack_iterations(iterations, num_classes=num_classes)
    given, true = label_table["given"].to_numpy(), label_table["true"].to_numpy()
    meta = provenance(**provenance_fields, threshold=threshold)
    frames = {
        output: compare_with_confident_learning(
            probabilities=probabilities, given=given, true=true, threshold=threshold
        ),
        ranking: compare_rankings(probabilities=probabilities, given=given, true=true),
    }
    for path, frame in frames.items():
        for position, key in enumerate(("dataset", "noise", "seed")):
            frame.insert(position, key, provenance_fields[key])
        write_table(frame, path, metadata=meta)


def confident_learning_selection(
    *, predictions: list[PathLike], labels: PathLike, output: PathLike, provenance_fields: dict[str, Any]
) -> None:
    """Confident learning's kept set, for prune-and-retrain (method ``cl_prune``; Northcutt et al. 2021, Section 5):
    cleanlab's ``find_label_issues`` with its default filter on the mean of the M iterations' out-of-fold
    probabilities (the ones E-NKCVS votes over). Writes one row per sample in sample order: ``sample``, ``flagged``
    and ``selected`` = not flagged, the column final training reads
    (:func:`enkcvs.training.final.final_training_set`)."""
    from enkcvs.labelissues.confident import CLEANLAB_DEFAULT_FILTER, cleanlab_flags

    label_table, num_classes, iterations = read_iterations(predictions, labels=labels)
    _, probabilities = stack_iterations(iterations, num_classes=num_classes)
    flagged = cleanlab_flags(
        probabilities=probabilities.mean(axis=0), labels=label_table["given"].to_numpy(), method=CLEANLAB_DEFAULT_FILTER
    )
    frame = pd.DataFrame({"sample": label_table["sample"].to_numpy(), "flagged": flagged, "selected": ~flagged})
    meta = provenance(**provenance_fields, filter_by=CLEANLAB_DEFAULT_FILTER, iterations=len(iterations))
    write_table(frame, output, metadata=meta)
    log.info("confident learning flags %d of %d samples; wrote %s", flagged.sum(), len(flagged), output)
