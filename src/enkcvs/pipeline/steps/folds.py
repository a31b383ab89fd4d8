"""The fold rule's step (``workflow/rules/folds.smk``): one fold model of the cross-validation trained, its held-out
samples predicted. It imports torch itself."""

import logging
from typing import Any

import pandas as pd

from enkcvs.data.datasets import load_dataset
from enkcvs.io import PathLike, provenance, write_table
from enkcvs.training.inputs import split_inputs, subset_inputs
from enkcvs.training.recipe import Recipe
from enkcvs.pipeline.predictions import read_label_table

log = logging.getLogger(__name__)


def train_fold(
    *,
    dataset: PathLike,
    labels: PathLike,
    recipe: dict[str, Any],
    seed: int,
    num_folds: int,
    iteration: int,
    fold: int,
    threads: int,
    output: PathLike,
    provenance_fields: dict[str, Any],
    tokens: PathLike | None = None,
    gpus: int = 0,
    allow_cpu_fallback: bool = False,
) -> None:
    """Algorithm 1, lines 4-9, for fold k of iteration m: train on D minus D_k (10% held out to pick the best epoch
    by noisy-label accuracy) and predict D_k. ``iteration`` and ``fold`` are 1-based.

    Writes a table with ``sample``, ``given``, ``predicted`` and ``prob_0..prob_{Q-1}``. ``tokens`` is the text
    dataset's tokenised file (:func:`enkcvs.pipeline.steps.data.tokenize_dataset`); ``gpus`` and ``allow_cpu_fallback``
    as :func:`enkcvs.training.device.job_device`. A killed job started again goes on from its last epoch
    (:func:`enkcvs.training.resume.checkpoint_path` of ``output``).
    """
    from enkcvs.training.crossval import fold_probabilities
    from enkcvs.training.resume import checkpoint_path

    device, inputs, given, num_classes = _job_inputs(dataset=dataset, labels=labels, tokens=tokens, threads=threads,
                                                     gpus=gpus, allow_cpu_fallback=allow_cpu_fallback)
    recipe_ = Recipe.from_dict(recipe)
    held_out, probabilities, result = fold_probabilities(
        recipe=recipe_,
        inputs=inputs,
        given=given,
        num_classes=num_classes,
        seed=seed,
        num_folds=num_folds,
        iteration=iteration,
        fold=fold,
        device=device,
        resume=checkpoint_path(output),
    )
    _write_predictions(output, held_out=held_out, probabilities=probabilities, result=result, given=given,
                       recipe=recipe_, provenance_fields=provenance_fields)


def _job_inputs(*, dataset: PathLike, labels: PathLike, tokens: PathLike | None, threads: int, gpus: int,
                allow_cpu_fallback: bool):
    """What a fold job trains on: its device (threads set), ``inputs(indices, train)`` of the prepared dataset's
    training split, the given labels (N,) and Q."""
    from enkcvs.training.device import job_device

    device = job_device(gpus=gpus, allow_cpu_fallback=allow_cpu_fallback, threads=threads)
    data = load_dataset(dataset)
    x_train = split_inputs(data, tokens, split="train")
    label_table, num_classes = read_label_table(labels)
    log.info("read %s and %s", dataset, labels)
    return (device, lambda indices, train: subset_inputs(data, x_train, indices, train=train),
            label_table["given"].to_numpy(), num_classes)


def _write_predictions(output: PathLike, *, held_out, probabilities, result, given, recipe: Recipe,
                       provenance_fields: dict[str, Any]) -> None:
    """A fold's table: ``sample``, ``given``, ``predicted`` and ``prob_0..prob_{Q-1}`` of its held-out samples
    (n_k,), (n_k, Q), with the recipe, best epoch, device, bf16 and CUDA graphs in its metadata."""
    frame = pd.DataFrame({"sample": held_out, "given": given[held_out], "predicted": probabilities.argmax(axis=1)})
    frame = frame.join(pd.DataFrame(probabilities, columns=[f"prob_{c}" for c in range(probabilities.shape[1])]))
    meta = provenance(
        **provenance_fields,
        recipe=recipe.to_dict(),
        best_epoch=result.best_epoch,
        validation_accuracy=result.validation_accuracy,
        device=str(next(result.model.parameters()).device),
        bf16=result.bf16,
        cuda_graphs=result.cuda_graphs,
    )
    write_table(frame, output, metadata=meta)
    log.info("wrote %s (weights of epoch %d)", output, result.best_epoch)


def train_selection(
    *,
    dataset: PathLike,
    labels: PathLike,
    recipe: dict[str, Any],
    seed: int,
    num_folds: int,
    iterations: int,
    threads: int,
    outputs: list[PathLike],
    provenance_fields: dict[str, Any],
    stacked: bool = True,
    tokens: PathLike | None = None,
    gpus: int = 0,
    allow_cpu_fallback: bool = False,
) -> None:
    """:func:`train_fold` for every fold k = 1..K of every iteration m = 1..M in one job: the M x K models trained
    together as one stacked program (:func:`enkcvs.training.crossval.selection_probabilities`; config
    ``stacked_folds``), or (``stacked`` false) one after another, each as its own train_fold job would train it
    (config ``training_jobs: setting``: one process start instead of M x K). Writes fold (m, k)'s table to
    ``outputs[(m - 1) * K + k - 1]``, as train_fold writes it (its provenance with ``m`` and ``k`` added, and
    ``stacked: true`` where stacked); each model resumes from its own epoch checkpoint beside its table."""
    from enkcvs.training.crossval import fold_probabilities, selection_probabilities
    from enkcvs.training.resume import checkpoint_path

    if len(outputs) != iterations * num_folds:
        raise ValueError(f"{iterations} iterations of {num_folds} folds need {iterations * num_folds} outputs, got "
                         f"{len(outputs)}")
    device, inputs, given, num_classes = _job_inputs(dataset=dataset, labels=labels, tokens=tokens, threads=threads,
                                                     gpus=gpus, allow_cpu_fallback=allow_cpu_fallback)
    recipe_ = Recipe.from_dict(recipe)
    training = {"recipe": recipe_, "inputs": inputs, "given": given, "num_classes": num_classes, "seed": seed,
                "num_folds": num_folds, "device": device}
    if stacked:
        folds = selection_probabilities(**training, iterations=range(1, iterations + 1),
                                        resumes=[checkpoint_path(output) for output in outputs])
    else:  # a generator: each table is written as soon as its model is trained
        folds = (fold_probabilities(**training, iteration=position // num_folds + 1, fold=position % num_folds + 1,
                                    resume=checkpoint_path(output))
                 for position, output in enumerate(outputs))
    for position, (output, (held_out, probabilities, result)) in enumerate(zip(outputs, folds)):
        m, k = divmod(position, num_folds)
        fields = {**provenance_fields, "m": str(m + 1), "k": str(k + 1)} | ({"stacked": True} if stacked else {})
        _write_predictions(output, held_out=held_out, probabilities=probabilities, result=result, given=given,
                           recipe=recipe_, provenance_fields=fields)
