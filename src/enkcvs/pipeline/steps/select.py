"""The selection rules' steps (``workflow/rules/select.smk``): E-NKCVS's votes over the fold predictions, with the
selection's precision, recall and Theorem 1 where the true labels are known; and INCV's selection (Chen et al. 2019),
a baseline's, whose models the step trains itself (importing torch inside it)."""

from typing import Any

import numpy as np
import pandas as pd

from enkcvs.io import PathLike, provenance, write_json, write_table
from enkcvs.method.metrics import (
    accuracy,
    precision_by_given_class,
    precision_recall,
    pseudo_label_accuracy,
    selection_set_sizes,
)
from enkcvs.method.noise_settings import parse_noise
from enkcvs.method.selection import ensemble_outcome
from enkcvs.method.theory import corollary_precision_recall, empirical_theorem1, iteration_dependence
from enkcvs.pipeline.predictions import read_iterations, read_label_table, stack_iterations


def select_samples(
    *,
    predictions: list[PathLike],
    labels: PathLike,
    threshold: int,
    table: PathLike,
    metrics: PathLike,
    provenance_fields: dict[str, Any],
) -> None:
    """Algorithm 2 and Section 3.2 for one (dataset, noise, seed, K, M, t): votes, SS, pseudo labels, beta.

    Parameters
    ----------
    predictions : the M x K held-out prediction tables; each names its iteration m and fold k in its metadata.
    labels : the noisy-label table (true labels are used for the metrics only).
    threshold : t.
    table : output parquet, one row per sample.
    metrics : output JSON with |CS|, |SS|, |CSS|, precision, recall, per-iteration accuracy and Theorem 1.
    """
    label_table, num_classes, iterations = read_iterations(predictions, labels=labels)
    given, true = label_table["given"].to_numpy(), label_table["true"].to_numpy()
    predicted, probabilities = stack_iterations(iterations, num_classes=num_classes)
    outcome = ensemble_outcome(
        predicted=predicted, mean_probabilities=probabilities.mean(axis=0), given=given, threshold=threshold
    )
    selection = pd.DataFrame({"sample": np.arange(len(given)), "given": given, **outcome})  # columns in that order
    selected = outcome["selected"]
    write_table(selection, table, metadata=provenance(**provenance_fields, threshold=threshold))

    if (true == -1).all():  # 'real' noise: no true labels, so nothing to score the selection against
        write_json(provenance(**provenance_fields, selected=int(selected.sum()), true_labels_known=False), metrics)
        return
    sizes = selection_set_sizes(selected=selected, given=given, true=true)
    rest = ~selected
    spec = parse_noise(provenance_fields["noise"])
    q = [accuracy(true=true, predicted=row) for row in predicted]
    theory = empirical_theorem1(
        true=true, given=given, predicted=predicted, threshold=threshold, num_classes=num_classes
    )
    corollary = corollary_precision_recall(rate=spec.rate, accuracy=float(np.mean(q)), num_classes=num_classes)
    write_json(
        provenance(
            **provenance_fields,
            **sizes,
            **precision_recall(sizes=sizes),
            precision_by_given_class=precision_by_given_class(selected=selected, given=given, true=true),
            true_labels_known=True,
            iteration_accuracy=q,
            pseudo_label_accuracy=pseudo_label_accuracy(
                pseudo=outcome["pseudo"][rest], given=given[rest], true=true[rest]
            ),
            theorem1=theory,
            corollary=corollary,
            iteration_dependence=(
                iteration_dependence(true=true, predicted=predicted, num_classes=num_classes)
                if len(predicted) > 1
                else None
            ),
        ),
        metrics,
    )


def select_incv(
    *,
    dataset: PathLike,
    labels: PathLike,
    recipe: dict[str, Any],
    iterations: int,
    seed: int,
    execution,
    table: PathLike,
    metrics: PathLike,
    provenance_fields: dict[str, Any],
    tokens: PathLike | None = None,
) -> None:
    """INCV's selection (Chen et al. 2019, Algorithm 1: :mod:`enkcvs.method.incv`) for one (dataset, noise, seed),
    its 2 N models trained here with the dataset's ``recipe`` (:func:`enkcvs.training.incv.train_incv`).

    Parameters
    ----------
    dataset, labels, tokens : the prepared dataset, the noisy-label table (true labels for the metrics only) and a
        text dataset's tokenised file.
    recipe : the dataset's training recipe.
    iterations : N.
    seed : the run's seed.
    execution : how the models train (:func:`enkcvs.training.device.job_execution`).
    table : output parquet, one row per sample: ``sample``, ``given``, ``selected`` (S), ``removed`` (dropped as
        largest-loss, never selected), ``iteration`` (that selected it; 0: none).
    metrics : output JSON: the estimated noise rate and remove ratio, |SS| and, where the true labels are known,
        |CS|, |CSS|, precision and recall (Eq. prec-rec).
    """
    from enkcvs.data.datasets import load_dataset
    from enkcvs.training.incv import train_incv
    from enkcvs.training.inputs import split_inputs, subset_inputs
    from enkcvs.training.recipe import Recipe

    data = load_dataset(dataset)
    x_train = split_inputs(data, tokens, split="train")
    label_table, num_classes = read_label_table(labels)
    given, true = label_table["given"].to_numpy(), label_table["true"].to_numpy()
    outcome = train_incv(
        recipe=Recipe.from_dict(recipe),
        inputs=lambda indices, train: subset_inputs(data, x_train, indices, train=train),
        given=given,
        num_classes=num_classes,
        seed=seed,
        execution=execution,
        iterations=iterations,
    )
    selection = pd.DataFrame(
        {
            "sample": np.arange(len(given)),
            "given": given,
            "selected": outcome.selected,
            "removed": outcome.removed,
            "iteration": outcome.iteration,
        }
    )
    found = {
        "iterations": iterations,
        "estimated_noise_rate": outcome.noise_rate,
        "remove_ratio": outcome.remove_ratio,
        "removed": int(outcome.removed.sum()),
    }
    write_table(selection, table, metadata=provenance(**provenance_fields, recipe=recipe, **found))
    if (true == -1).all():  # 'real' noise: nothing to score the selection against
        write_json(
            provenance(**provenance_fields, **found, SS=int(outcome.selected.sum()), true_labels_known=False), metrics
        )
        return
    sizes = selection_set_sizes(selected=outcome.selected, given=given, true=true)
    write_json(
        provenance(**provenance_fields, **found, **sizes, **precision_recall(sizes=sizes), true_labels_known=True),
        metrics,
    )
