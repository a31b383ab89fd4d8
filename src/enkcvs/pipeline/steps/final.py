"""The final rules' step (``workflow/rules/final.smk``): a final model of one method trained from scratch, its clean
test accuracy after every epoch and at the last written with what it trained with. It imports torch itself."""

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from enkcvs.data.datasets import Dataset, load_dataset
from enkcvs.io import PathLike, provenance, read_table, read_table_metadata, write_json, write_table
from enkcvs.method.ensemble import budget_members, ensemble_probabilities
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
    """``final``'s clean test accuracy (its kept epoch, the last), the accuracy after every epoch and what it trained
    with, as JSON at its output."""
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
            device=str(execution.device),
            bf16=result.bf16,
            cuda_graphs=result.cuda_graphs,
            train_samples=len(final.targets),
            test_accuracy=test_accuracy,
            final_train_loss=result.train_loss[-1],
            test_accuracy_by_epoch=result.curve_accuracy,
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
        curve=setting.test,  # scored after every epoch, so that the tables can read the curve three ways
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
    """Train a final model of ``method`` from scratch and write its clean test accuracy as JSON: at the last epoch,
    the model kept (``test_accuracy``), and after every epoch (``test_accuracy_by_epoch``, scored in eval mode by the
    same :func:`enkcvs.training.evaluate.labelled_accuracy`; it changes no weight).

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


def train_ensemble_member(
    *,
    dataset: PathLike,
    labels: PathLike,
    recipe: dict[str, Any],
    seed: int,
    member: int,
    output: PathLike,
    provenance_fields: dict[str, Any],
    execution,
    tokens: PathLike | None = None,
) -> None:
    """Member ``member`` (1-based) of the ensemble of CE + mixup models (``ce_mixup_ensemble``,
    :mod:`enkcvs.method.ensemble`): CE + mixup's final model on the run's noisy labels, trained from scratch as
    :func:`train_final` trains it but from the member's own seed, ``derive_seed(seed, Purpose.ENSEMBLE, member)`` in
    place of the run's. Writes its clean test probabilities, a row per test sample (``sample``, ``prob_0`` ..
    ``prob_{Q-1}``), with its test accuracy and what it trained with in the metadata; arguments as
    :func:`train_final`'s."""
    from enkcvs.training.evaluate import predict_proba

    setting = _read_setting(dataset=dataset, labels=labels, tokens=tokens)
    final = _final_model(
        setting,
        method="ce_mixup",
        recipe=recipe,
        gamma=None,
        options={},
        selection=None,
        output=output,
        provenance_fields=provenance_fields,
    )
    member_seed = derive_seed(seed, Purpose.ENSEMBLE, member)
    result = _train(final, setting=setting, seed=member_seed, execution=execution)
    inputs, test_labels = setting.test
    probabilities = predict_proba(
        result.model, inputs, device=execution.device, workers=execution.loader_workers, bf16=result.bf16
    )  # (N_test, Q)
    frame = pd.DataFrame(probabilities, columns=[f"prob_{c}" for c in range(probabilities.shape[1])])
    test_accuracy = float(np.mean(probabilities.argmax(axis=1) == test_labels))
    write_table(
        frame.assign(sample=np.arange(len(frame)))[["sample", *frame.columns]],
        output,
        metadata=provenance(
            **{**provenance_fields, "method": "ce_mixup", "member": member},
            member_seed=member_seed,
            trained_with=final.training.record(final.recipe),
            recipe=final.recipe.to_dict(),
            device=str(execution.device),
            bf16=result.bf16,
            train_samples=len(final.targets),
            test_accuracy=test_accuracy,
        ),
    )
    log.info("wrote %s (member %d, clean test accuracy %.4f)", output, member, test_accuracy)


def _members_facts(metas: list[dict[str, Any]]) -> dict[str, Any]:
    """The device, bf16 and torch threads the ensemble's members trained with: each one value where all agree, else
    the list of their values (the averaging itself runs on the CPU and adds none)."""
    facts = {}
    for key in ("device", "bf16", "torch_threads"):
        values = list(dict.fromkeys(meta.get(key) for meta in metas))
        facts[key] = values[0] if len(values) == 1 else values
    return facts


def average_ensemble(
    *, members: list[PathLike], dataset: PathLike, output: PathLike, provenance_fields: dict[str, Any]
) -> None:
    """CE + mixup's ensemble at E-NKCVS's budget for (K, M) (``provenance_fields``' K and M): the mean of its members'
    clean test probabilities (:func:`enkcvs.method.ensemble.ensemble_probabilities`) scored on the test labels, written
    as a final model's JSON (``test_accuracy``) with each member's accuracy and what they trained with.
    ``ValueError`` where ``members`` (:func:`train_ensemble_member`'s tables) are not the
    :func:`enkcvs.method.ensemble.budget_members` the budget gives."""
    budget = budget_members(num_folds=int(provenance_fields["K"]), iterations=int(provenance_fields["M"]))
    if len(members) != budget:
        raise ValueError(
            f"the ensemble at K, M = {provenance_fields['K']}, {provenance_fields['M']} has {budget} members, "
            f"M (K - 1) + 1; given {len(members)}: plan its members with enkcvs.method.ensemble.budget_members"
        )
    tables = [read_table(path) for path in members]
    probabilities = np.stack([frame.filter(like="prob_").to_numpy() for frame, _ in tables])  # (E, N_test, Q)
    test_labels = load_dataset(dataset).y_test
    test_accuracy = float(np.mean(ensemble_probabilities(probabilities).argmax(axis=1) == test_labels))
    first = tables[0][1]
    write_json(
        provenance(
            **{**provenance_fields, "method": "ce_mixup_ensemble"},
            members=budget,
            member_test_accuracy=[meta["test_accuracy"] for _, meta in tables],
            **_members_facts([meta for _, meta in tables]),
            trained_with=first["trained_with"],
            recipe=first["recipe"],
            train_samples=first["train_samples"],
            test_accuracy=test_accuracy,
        ),
        output,
    )
    log.info("wrote %s (%d members, clean test accuracy %.4f)", output, budget, test_accuracy)
