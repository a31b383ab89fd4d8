"""The final rules' step (``workflow/rules/final.smk``): a final model of one method trained from scratch, its clean
test accuracy written with what it trained with. It imports torch itself."""

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np

from enkcvs.data.datasets import Dataset, load_dataset
from enkcvs.io import PathLike, provenance, read_table, read_table_metadata, write_json
from enkcvs.method.methods import GAMMA_METHODS
from enkcvs.rng import Purpose, derive_seed
from enkcvs.training.inputs import split_inputs, subset_inputs
from enkcvs.training.recipe import Recipe
from enkcvs.pipeline.predictions import read_label_table

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
    return _Setting(data=data, train=split_inputs(data, tokens, split="train"),
                    test=(subset_inputs(data, split_inputs(data, tokens, split="test")), data.y_test),
                    given=label_table["given"].to_numpy(), true=label_table["true"].to_numpy(),
                    num_classes=num_classes, dataset=dataset, labels=labels)


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

    @property
    def stackable(self) -> bool:
        """Whether it trains by plain cross-entropy on its (soft, weighted) targets, all a stacked program does
        (:func:`enkcvs.training.stacked.train_stacked`): not another loss, co-teaching or a test curve."""
        training = self.training
        return training.loss == "ce" and training.co_teaching is None and not training.test_curve


def _final_model(setting: _Setting, *, method: str, recipe: dict[str, Any], gamma: float | None,
                 options: dict[str, Any] | None, selection: PathLike | None, output: PathLike,
                 provenance_fields: dict[str, Any]) -> _FinalModel:
    from enkcvs.training.final import final_recipe, final_training, final_training_set

    indices, targets = final_training_set(method=method, given=setting.given, num_classes=setting.num_classes,
                                          selection=read_table(selection)[0] if selection else None, gamma=gamma,
                                          true=setting.true)
    options = dict(options or {})
    training = final_training(method=method, options=_resolved_options(options, labels=setting.labels,
                                                                         given=setting.given, true=setting.true))
    recipe_ = final_recipe(Recipe.from_dict(recipe), training=training)
    log.info("%s: read %s and %s%s; training on %d samples, mixup alpha %s", method, setting.dataset, setting.labels,
             f" and {selection}" if selection else "", len(indices), recipe_.mixup_alpha)
    return _FinalModel(method=method, x=subset_inputs(setting.data, setting.train, indices, train=True),
                       targets=targets, training=training, recipe=recipe_, gamma=gamma, options=options,
                       output=output, provenance_fields=provenance_fields)


def _write_final(final: _FinalModel, result: Any, *, setting: _Setting, device: Any, stacked: bool) -> None:
    """``final``'s clean test accuracy (its kept epoch) and what it trained with, as JSON at its output."""
    from enkcvs.training.evaluate import labelled_accuracy

    test_accuracy = labelled_accuracy(result.model, setting.test, device=device, workers=final.recipe.loader_workers,
                                      bf16=result.bf16)
    write_json(
        provenance(
            **{**final.provenance_fields, "method": final.method},
            gamma=final.gamma if final.method in GAMMA_METHODS else None,
            options=final.options,
            trained_with=final.training.record(final.recipe),
            recipe=final.recipe.to_dict(),
            bf16=result.bf16, cuda_graphs=result.cuda_graphs,
            train_samples=len(final.targets),
            test_accuracy=test_accuracy,
            final_train_loss=result.train_loss[-1],
            **({"test_accuracy_by_epoch": result.curve_accuracy} if final.training.test_curve else {}),
            **({"stacked": True} if stacked else {}),
        ),
        final.output,
    )
    log.info("wrote %s (clean test accuracy %.4f)", final.output, test_accuracy)


def _train_alone(final: _FinalModel, *, setting: _Setting, seed: int, device: Any) -> Any:
    from enkcvs.training.resume import checkpoint_path
    from enkcvs.training.train import train_model

    return train_model(recipe=final.recipe, x=final.x, targets=final.targets, seed=derive_seed(seed, Purpose.FINAL),
                       device=device, resume=checkpoint_path(final.output),
                       curve=setting.test if final.training.test_curve else None,
                       **final.training.train_model_arguments())


def train_final(
    *,
    dataset: PathLike,
    labels: PathLike,
    selection: PathLike | None,
    method: str,
    recipe: dict[str, Any],
    gamma: float,
    seed: int,
    threads: int,
    output: PathLike,
    provenance_fields: dict[str, Any],
    options: dict[str, Any] | None = None,
    tokens: PathLike | None = None,
    gpus: int = 0,
    allow_cpu_fallback: bool = False,
) -> None:
    """Train a final model of ``method`` from scratch and write its clean test accuracy (last epoch) as JSON, with
    the accuracy after every epoch (``test_accuracy_by_epoch``) where the method's ``test_curve`` option asks for it.

    ``options`` are the method's hyperparameters (see :func:`enkcvs.training.final.final_training`; co-teaching's
    ``forget_rate`` is resolved by :func:`enkcvs.training.final.resolve_forget_rate`), recorded in the JSON beside what
    the model trained with (mixup alpha, loss, forget rate); ``tokens`` is a text dataset's tokenised file; ``gpus`` and
    ``allow_cpu_fallback`` as :func:`enkcvs.training.device.job_device`. A killed job started again goes on from its
    last epoch (:func:`enkcvs.training.resume.checkpoint_path` of ``output``)."""
    train_finals(dataset=dataset, labels=labels, tokens=tokens, seed=seed, threads=threads, gpus=gpus,
                 allow_cpu_fallback=allow_cpu_fallback, outputs=[output], provenance_fields=provenance_fields,
                 models=[{"method": method, "recipe": recipe, "gamma": gamma, "options": options,
                          "selection": selection, "wildcards": {}}])


def _resolved_options(options: dict[str, Any], *, labels: PathLike, given: np.ndarray,
                      true: np.ndarray) -> dict[str, Any]:
    """The method's options with co-teaching's ``forget_rate`` (``nominal``, ``actual`` or a number) resolved to the
    rate it forgets on these labels (:func:`enkcvs.training.final.resolve_forget_rate`)."""
    from enkcvs.training.final import resolve_forget_rate

    resolved = dict(options)
    if "forget_rate" in resolved:
        noise = read_table_metadata(labels)["noise"]
        resolved["forget_rate"] = resolve_forget_rate(resolved["forget_rate"], noise=noise, given=given, true=true)
        log.info("co-teaching forgets %s: %.4f", options["forget_rate"], resolved["forget_rate"])
    return resolved


def train_finals(*, models: list[dict[str, Any]], outputs: list[PathLike], provenance_fields: dict[str, Any],
                 dataset: PathLike, labels: PathLike, seed: int, threads: int, stacked: bool = False,
                 tokens: PathLike | None = None, gpus: int = 0, allow_cpu_fallback: bool = False) -> None:
    """A setting's final ``models`` in one job, each trained and written as :func:`train_final` does it (config
    ``training_jobs: setting``: one process start and one read of the data instead of one per model), one after
    another; or (``stacked``, config
    ``stacked_finals``) the models that train by plain cross-entropy with the same recipe
    (:attr:`_FinalModel.stackable`: every method but SL, GCE, co-teaching and those recording a test curve) together
    as one stacked program (:func:`enkcvs.training.stacked.train_stacked`: the same models within float rounding,
    ``stacked: true`` in their results), the others one after another. Each model is a dict of ``method``,
    ``recipe``, ``gamma``, ``options``, ``selection`` (a path or None) and ``wildcards`` (added to its provenance as
    its own job's would be); its result is written to the output at its position. The other arguments are
    train_final's, shared by all."""
    from enkcvs.training.device import job_device

    if len(models) != len(outputs):
        raise ValueError(f"{len(models)} final models need {len(models)} outputs, got {len(outputs)}")
    device = job_device(gpus=gpus, allow_cpu_fallback=allow_cpu_fallback, threads=threads)
    setting = _read_setting(dataset=dataset, labels=labels, tokens=tokens)
    finals = (_final_model(setting, method=model["method"], recipe=model["recipe"], gamma=model["gamma"],
                           options=model["options"], selection=model["selection"], output=output,
                           provenance_fields={**provenance_fields, **model["wildcards"]})
              for model, output in zip(models, outputs))
    if stacked:
        _train_stacks(list(finals), setting=setting, seed=seed, device=device)
        return
    for final in finals:  # planned as trained: one model's inputs in memory at a time
        _write_final(final, _train_alone(final, setting=setting, seed=seed, device=device), setting=setting,
                     device=device, stacked=False)


def _train_stacks(finals: list[_FinalModel], *, setting: _Setting, seed: int, device: Any) -> None:
    """:func:`train_finals` with ``stacked``: the stackable models grouped by recipe, a group of two or more trained
    stacked, the others alone."""
    from enkcvs.training.resume import checkpoint_path
    from enkcvs.training.stacked import train_stacked

    groups: list[list[_FinalModel]] = []  # by recipe (a Recipe's model_options make it unhashable)
    alone = [final for final in finals if not final.stackable]
    for final in filter(lambda final: final.stackable, finals):
        if group := next((group for group in groups if group[0].recipe == final.recipe), None):
            group.append(final)
        else:
            groups.append([final])
    stacks = [group for group in groups if len(group) > 1]
    alone += [group[0] for group in groups if len(group) == 1]
    for group in stacks:
        log.info("training %d final models stacked: %s", len(group), ", ".join(final.method for final in group))
        results = train_stacked(recipe=group[0].recipe, xs=[final.x for final in group],
                                targets=[final.targets for final in group],
                                seeds=[derive_seed(seed, Purpose.FINAL)] * len(group), validations=[None] * len(group),
                                device=device, resumes=[checkpoint_path(final.output) for final in group])
        for final, result in zip(group, results, strict=True):
            _write_final(final, result, setting=setting, device=device, stacked=True)
    for final in alone:
        _write_final(final, _train_alone(final, setting=setting, seed=seed, device=device), setting=setting,
                     device=device, stacked=False)
