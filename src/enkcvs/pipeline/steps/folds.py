"""The fold rules' steps (``workflow/rules/folds.smk``): one fold model of the cross-validation trained and its
held-out samples predicted (:func:`train_fold`, the default, a job per fold); or, where a profile asks for stacked
folds, a selection's M x K fold models trained as one stacked program (:func:`train_stack`) and each fold's table
taken from it (:func:`unstack_fold`). Training imports torch inside the step."""

import contextlib
import logging
from typing import Any

import numpy as np
import pandas as pd

from enkcvs.data.datasets import load_dataset
from enkcvs.io import PathLike, provenance, read_table, write_table
from enkcvs.labelissues import determinism
from enkcvs.pipeline.predictions import read_label_table
from enkcvs.training.inputs import split_inputs, subset_inputs
from enkcvs.training.recipe import Recipe

log = logging.getLogger(__name__)


def _job_inputs(*, dataset: PathLike, labels: PathLike, tokens: PathLike | None, canonical: bool):
    """What a fold job trains on: the samples in the order (N,) it trains on them, sorted by a digest of their
    content where ``canonical`` (:func:`enkcvs.labelissues.determinism.dataset_digests`), else as prepared (position i
    of the training is sample ``order[i]``); ``inputs(indices, train)`` of those positions; the given labels (N,) in
    the data's order and Q."""
    data = load_dataset(dataset)
    x_train = split_inputs(data, tokens, split="train")
    label_table, num_classes = read_label_table(labels)
    log.info("read %s and %s", dataset, labels)
    given = label_table["given"].to_numpy()
    order = determinism.canonical_order(determinism.dataset_digests(data)) if canonical else np.arange(len(given))
    return order, lambda indices, train: subset_inputs(data, x_train, order[indices], train=train), given, num_classes


def _fitting(*, canonical: bool):
    """Where a ``canonical`` job's models fit: on one thread, whatever threads the job has
    (:func:`enkcvs.labelissues.determinism.one_thread`), so that its probabilities are the same on any."""
    return determinism.one_thread() if canonical else contextlib.nullcontext()


def fold_frame(*, held_out: np.ndarray, probabilities: np.ndarray, given: np.ndarray) -> pd.DataFrame:
    """A fold's table: ``sample``, ``given``, ``predicted`` and ``prob_0..prob_{Q-1}`` of its held-out samples
    (n_k,), (n_k, Q)."""
    frame = pd.DataFrame({"sample": held_out, "given": given[held_out], "predicted": probabilities.argmax(axis=1)})
    return frame.join(pd.DataFrame(probabilities, columns=[f"prob_{c}" for c in range(probabilities.shape[1])]))


def _trained(result) -> dict[str, Any]:
    """What a fold model's table records of its training."""
    return {
        "best_epoch": result.best_epoch,
        "validation_accuracy": result.validation_accuracy,
        "device": str(next(result.model.parameters()).device),
        "bf16": result.bf16,
        "cuda_graphs": result.cuda_graphs,
    }


def train_fold(
    *,
    dataset: PathLike,
    labels: PathLike,
    recipe: dict[str, Any],
    seed: int,
    num_folds: int,
    iteration: int,
    fold: int,
    output: PathLike,
    provenance_fields: dict[str, Any],
    execution,
    tokens: PathLike | None = None,
    canonical: bool = False,
) -> None:
    """Algorithm 1, lines 4-9, for fold k of iteration m: train on D minus D_k (10% held out to pick the best epoch
    by noisy-label accuracy) and predict D_k. ``iteration`` and ``fold`` are 1-based.

    Writes :func:`fold_frame` with the recipe, best epoch, device, bf16 and CUDA graphs in its metadata. ``tokens``
    is the text dataset's tokenised file (:func:`enkcvs.pipeline.steps.data.tokenize_dataset`); ``execution`` how
    the job trains (:func:`enkcvs.training.device.job_execution`). A killed job started again goes on from its last
    epoch checkpoint (:func:`enkcvs.training.resume.checkpoint_path` of ``output``). ``canonical`` (a user's own
    files): the folds split, and the model trains on, the samples sorted by a digest of their content, on one
    thread, so that the file in any row order, on any number of threads, gives each sample the same probabilities
    (:mod:`enkcvs.labelissues.determinism`, as ``enkcvs find-issues`` trains); else as prepared, on the job's threads.
    """
    from enkcvs.training.crossval import fold_probabilities
    from enkcvs.training.resume import checkpoint_path

    order, inputs, given, num_classes = _job_inputs(dataset=dataset, labels=labels, tokens=tokens, canonical=canonical)
    recipe_ = Recipe.from_dict(recipe)
    with _fitting(canonical=canonical):
        held_out, probabilities, result = fold_probabilities(
            recipe=recipe_,
            inputs=inputs,
            given=given[order],
            num_classes=num_classes,
            seed=seed,
            num_folds=num_folds,
            iteration=iteration,
            fold=fold,
            execution=execution,
            resume=checkpoint_path(output),
        )
    write_table(
        fold_frame(held_out=order[held_out], probabilities=probabilities, given=given),
        output,
        metadata=provenance(**provenance_fields, recipe=recipe_.to_dict(), **_trained(result)),
    )
    log.info("wrote %s (weights of epoch %d)", output, result.best_epoch)


def train_stack(
    *,
    dataset: PathLike,
    labels: PathLike,
    recipe: dict[str, Any],
    seed: int,
    num_folds: int,
    iterations: int,
    output: PathLike,
    provenance_fields: dict[str, Any],
    execution,
    canonical: bool = False,
) -> None:
    """:func:`train_fold` for every fold k = 1..K of every iteration m = 1..M, the M x K models trained together as
    one stacked program (:func:`enkcvs.training.crossval.selection_probabilities`), each as its own train_fold job
    would train it within float rounding (``canonical`` as there). Writes one table of every fold's held-out rows
    (:func:`fold_frame` with ``m`` and ``k`` columns), each fold's training record in its metadata (``folds``);
    :func:`unstack_fold` takes a fold's table from it. A killed job goes on from the stack's one epoch checkpoint."""
    from enkcvs.training.crossval import selection_probabilities
    from enkcvs.training.resume import checkpoint_path

    order, inputs, given, num_classes = _job_inputs(dataset=dataset, labels=labels, tokens=None, canonical=canonical)
    recipe_ = Recipe.from_dict(recipe)
    with _fitting(canonical=canonical):
        folds = selection_probabilities(
            recipe=recipe_,
            inputs=inputs,
            given=given[order],
            num_classes=num_classes,
            seed=seed,
            num_folds=num_folds,
            iterations=range(1, iterations + 1),
            execution=execution,
            resume=checkpoint_path(output),
        )
    frames, trained = [], {}
    for position, (held_out, probabilities, result) in enumerate(folds):
        m, k = divmod(position, num_folds)
        frame = fold_frame(held_out=order[held_out], probabilities=probabilities, given=given)
        frames.append(frame.assign(m=m + 1, k=k + 1))
        trained[f"{m + 1}/{k + 1}"] = _trained(result)
    write_table(
        pd.concat(frames, ignore_index=True),
        output,
        metadata=provenance(**provenance_fields, recipe=recipe_.to_dict(), folds=trained),
    )
    log.info("wrote %s (%d fold models, trained stacked)", output, len(trained))


def unstack_fold(
    *, stack: PathLike, iteration: int, fold: int, output: PathLike, provenance_fields: dict[str, Any]
) -> None:
    """Fold k of iteration m's table, as :func:`train_fold` writes it, from a :func:`train_stack` table (its
    provenance with ``stacked: true`` and the stack's file)."""
    frame, meta = read_table(stack)
    own = frame[(frame["m"] == iteration) & (frame["k"] == fold)].drop(columns=["m", "k"]).reset_index(drop=True)
    if own.empty:
        raise ValueError(
            f"{stack} holds no fold {fold} of iteration {iteration}: it was trained for fewer; rerun its "
            "train_stack job"
        )
    trained = meta["folds"][f"{iteration}/{fold}"]
    write_table(
        own,
        output,
        metadata=provenance(**provenance_fields, recipe=meta["recipe"], **trained, stacked=True, stack=str(stack)),
    )
    log.info("wrote %s from %s", output, stack)
