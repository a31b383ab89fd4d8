"""The final rules' step (``workflow/rules/final.smk``): a final model of one method trained from scratch, its clean
test accuracy written with what it trained with. It imports torch itself."""

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np

from enkcvs.data.datasets import Dataset, load_dataset
from enkcvs.io import PathLike, provenance, read_table, read_table_metadata, write_json
from enkcvs.method.methods import GAMMA_METHODS
from enkcvs.pipeline.predictions import read_label_table
from enkcvs.rng import Purpose, derive_seed
from enkcvs.training.inputs import split_inputs, subset_inputs
from enkcvs.training.recipe import Recipe

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Setting:
    """What every final model of a setting reads: the dataset's train and test inputs, the given and true labels."""

    data: Dataset
    train: np.ndarray  # the train split's inputs (split_inputs)
    test: tuple[Any, np.ndarray]  # the test split's inputs and labels
    given: np.ndarray  # (N,)
    true: np.ndarray  # (N,)
    num_classes: int
    dataset: PathLike
    labels: PathLike


def _read_setting(*, dataset: PathLike, labels: PathLike, tokens: PathLike | None) -> _Setting:
    data = load_dataset(dataset)
    label_table, num_classes = read_label_table(labels)
    return _Setting(
        data=data,
        train=split_inputs(data, tokens, split="train"),
        test=(subset_inputs(data, split_inputs(data, tokens, split="test")), data.y_test),
        given=label_table["given"].to_numpy(),
        true=label_table["true"].to_numpy(),
        num_classes=num_classes,
        dataset=dataset,
        labels=labels,
    )


@dataclass(frozen=True)
class _FinalModel:
    """One final model as it trains: its method's samples and weighted targets, how it trains and with which recipe,
    and what its result records."""

    method: str
    x: Any  # the training samples' inputs (subset_inputs)
    targets: np.ndarray  # (n, Q)
    training: Any  # enkcvs.training.final.FinalTraining
    recipe: Recipe
    gamma: float | None
    options: dict[str, Any]
    output: PathLike
    provenance_fields: dict[str, Any]


def _final_model(
    setting: _Setting,
    *,
    method: str,
    recipe: dict[str, Any],
    gamma: float | None,
    options: dict[str, Any] | None,
    selection: PathLike | None,
    output: PathLike,
    provenance_fields: dict[str, Any],
) -> _FinalModel:
    from enkcvs.training.final import final_recipe, final_training, final_training_set

    indices, targets = final_training_set(
        method=method,
        given=setting.given,
        num_classes=setting.num_classes,
        selection=read_table(selection)[0] if selection else None,
        gamma=gamma,
        true=setting.true,
    )
    options = dict(options or {})
    training = final_training(
        method=method, options=_resolved_options(options, labels=setting.labels, given=setting.given, true=setting.true)
    )
    recipe_ = final_recipe(Recipe.from_dict(recipe), training=training)
    log.info(
        "%s: read %s and %s%s; training on %d samples, mixup alpha %s",
        method,
        setting.dataset,
        setting.labels,
        f" and {selection}" if selection else "",
        len(indices),
        recipe_.mixup_alpha,
    )
    return _FinalModel(
        method=method,
        x=subset_inputs(setting.data, setting.train, indices, train=True),
        targets=targets,
        training=training,
        recipe=recipe_,
        gamma=gamma,
        options=options,
        output=output,
        provenance_fields=provenance_fields,
    )


def _write_final(final: _FinalModel, result: Any, *, setting: _Setting, execution: Any) -> None:
    """``final``'s clean test accuracy (its kept epoch) and what it trained with, as JSON at its output."""
    from enkcvs.training.evaluate import labelled_accuracy

    test_accuracy = labelled_accuracy(
        result.model, setting.test, device=execution.device, workers=execution.loader_workers, bf16=result.bf16
    )
    write_json(
        provenance(
            **{**final.provenance_fields, "method": final.method},
            gamma=final.gamma if final.method in GAMMA_METHODS else None,
            options=final.options,
            trained_with=final.training.record(final.recipe),
            recipe=final.recipe.to_dict(),
            bf16=result.bf16,
            cuda_graphs=result.cuda_graphs,
            train_samples=len(final.targets),
            test_accuracy=test_accuracy,
            final_train_loss=result.train_loss[-1],
            **({"test_accuracy_by_epoch": result.curve_accuracy} if final.training.test_curve else {}),
        ),
        final.output,
    )
    log.info("wrote %s (clean test accuracy %.4f)", final.output, test_accuracy)


def _train(final: _FinalModel, *, setting: _Setting, seed: int, execution: Any) -> Any:
    from enkcvs.training.resume import checkpoint_path
    from enkcvs.training.train import train_model

    return train_model(
        recipe=final.recipe,
        x=final.x,
        targets=final.targets,
        seed=derive_seed(seed, Purpose.FINAL),
        execution=execution,
        resume=checkpoint_path(final.output),
        curve=setting.test if final.training.test_curve else None,
        **final.training.train_model_arguments(),
    )


def train_final(
    *,
    dataset: PathLike,
    labels: PathLike,
    selection: PathLike | None,
    method: str,
    recipe: dict[str, Any],
    gamma: float | None,
    seed: int,
    output: PathLike,
    provenance_fields: dict[str, Any],
    execution,
    options: dict[str, Any] | None = None,
    tokens: PathLike | None = None,
) -> None:
    """Train a final model of ``method`` from scratch and write its clean test accuracy (last epoch) as JSON, with
    the accuracy after every epoch (``test_accuracy_by_epoch``) where the method's ``test_curve`` option asks for it.

    ``options`` are the method's hyperparameters (see :func:`enkcvs.training.final.final_training`; co-teaching's
    ``forget_rate`` is resolved by :func:`enkcvs.training.final.resolve_forget_rate`), recorded in the JSON beside what
    the model trained with (mixup alpha, loss, forget rate); ``tokens`` is a text dataset's tokenised file;
    ``execution`` how the job trains (:func:`enkcvs.training.device.job_execution`). A killed job started again goes
    on from its last epoch checkpoint (:func:`enkcvs.training.resume.checkpoint_path` of ``output``)."""
    setting = _read_setting(dataset=dataset, labels=labels, tokens=tokens)
    final = _final_model(
        setting,
        method=method,
        recipe=recipe,
        gamma=gamma,
        options=options,
        selection=selection,
        output=output,
        provenance_fields=provenance_fields,
    )
    _write_final(
        final, _train(final, setting=setting, seed=seed, execution=execution), setting=setting, execution=execution
    )


def _resolved_options(
    options: dict[str, Any], *, labels: PathLike, given: np.ndarray, true: np.ndarray
) -> dict[str, Any]:
    """The method's options with co-teaching's ``forget_rate`` (``nominal``, ``actual`` or a number) resolved to the
    rate it forgets on these labels (:func:`enkcvs.training.final.resolve_forget_rate`)."""
    from enkcvs.training.final import resolve_forget_rate

    resolved = dict(options)
    if "forget_rate" in resolved:
        noise = read_table_metadata(labels)["noise"]
        resolved["forget_rate"] = resolve_forget_rate(resolved["forget_rate"], noise=noise, given=given, true=true)
        log.info("co-teaching forgets %s: %.4f", options["forget_rate"], resolved["forget_rate"])
    return resolved
