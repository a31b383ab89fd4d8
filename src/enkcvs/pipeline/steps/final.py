"""The final rules' step (``workflow/rules/final.smk``): a final model of one method trained from scratch, its clean
test accuracy written with what it trained with. It imports torch itself."""

import logging
from typing import Any

import numpy as np

from enkcvs.data.datasets import load_dataset
from enkcvs.io import PathLike, provenance, read_table, read_table_metadata, write_json
from enkcvs.method.methods import GAMMA_METHODS
from enkcvs.rng import Purpose, derive_seed
from enkcvs.training.inputs import split_inputs, subset_inputs
from enkcvs.training.recipe import Recipe
from enkcvs.pipeline.predictions import read_label_table

log = logging.getLogger(__name__)


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
    import torch

    from enkcvs.training.device import job_device
    from enkcvs.training.evaluate import labelled_accuracy
    from enkcvs.training.final import final_recipe, final_training, final_training_set
    from enkcvs.training.resume import checkpoint_path
    from enkcvs.training.train import train_model

    device = job_device(gpus=gpus, allow_cpu_fallback=allow_cpu_fallback)
    torch.set_num_threads(threads)
    data = load_dataset(dataset)
    label_table, num_classes = read_label_table(labels)
    given, true = label_table["given"].to_numpy(), label_table["true"].to_numpy()
    indices, targets = final_training_set(
        method=method,
        given=given,
        num_classes=num_classes,
        selection=read_table(selection)[0] if selection else None,
        gamma=gamma,
        true=true,
    )
    options = dict(options or {})
    training = final_training(method=method, options=_resolved_options(options, labels=labels, given=given, true=true))
    recipe_ = final_recipe(Recipe.from_dict(recipe), training=training)
    log.info("%s: read %s and %s%s; training on %d samples, mixup alpha %s", method, dataset, labels,
             f" and {selection}" if selection else "", len(indices), recipe_.mixup_alpha)
    test = (subset_inputs(data, split_inputs(data, tokens, split="test")), data.y_test)
    result = train_model(
        recipe=recipe_,
        x=subset_inputs(data, split_inputs(data, tokens, split="train"), indices, train=True),
        targets=targets,
        seed=derive_seed(seed, Purpose.FINAL),
        device=device,
        resume=checkpoint_path(output),
        curve=test if training.test_curve else None,
        **training.train_model_arguments(),
    )
    test_accuracy = labelled_accuracy(result.model, test, device=device, workers=recipe_.loader_workers,
                                      bf16=result.bf16)
    write_json(
        provenance(
            **{**provenance_fields, "method": method},
            gamma=gamma if method in GAMMA_METHODS else None,
            options=options,
            trained_with=training.record(recipe_),
            recipe=recipe_.to_dict(),
            bf16=result.bf16, cuda_graphs=result.cuda_graphs,
            train_samples=len(indices),
            test_accuracy=test_accuracy,
            final_train_loss=result.train_loss[-1],
            **({"test_accuracy_by_epoch": result.curve_accuracy} if training.test_curve else {}),
        ),
        output,
    )
    log.info("wrote %s (clean test accuracy %.4f)", output, test_accuracy)


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
                 **setting: Any) -> None:
    """:func:`train_final` for each of a setting's final ``models`` in one job, one after another (config
    ``training_jobs: setting``: one process start instead of one per model). Each model is a dict of ``method``,
    ``recipe``, ``gamma``, ``options``, ``selection`` (a path or None) and ``wildcards`` (added to its provenance as
    its own job's would be); its result is written to the output at its position. ``setting`` holds train_final's
    other arguments, shared by all."""
    if len(models) != len(outputs):
        raise ValueError(f"{len(models)} final models need {len(models)} outputs, got {len(outputs)}")
    for model, output in zip(models, outputs):
        train_final(**setting, method=model["method"], recipe=model["recipe"], gamma=model["gamma"],
                    options=dict(model["options"]), selection=model["selection"], output=output,
                    provenance_fields={**provenance_fields, **model["wildcards"]})
