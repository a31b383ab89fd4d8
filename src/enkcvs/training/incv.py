"""INCV's models (:mod:`enkcvs.method.incv`) trained with the project's engine, each as E-NKCVS's fold models train:
the dataset's recipe (its mixup included), a share of its training samples (``recipe.validation_fraction``) held out
to keep the epoch of best noisy-label accuracy (the authors keep the epoch of best accuracy on the half they select
from), then the held-out half predicted. Only the selection changes between the two methods."""

import logging
from typing import Any

import numpy as np

from enkcvs.method.folds import validation_split
from enkcvs.method.incv import ITERATIONS, IncvSelection, incv_selection
from enkcvs.rng import Purpose, derive_seed, generator
from enkcvs.training.recipe import Recipe

log = logging.getLogger(__name__)


def train_incv(
    *,
    recipe: Recipe,
    inputs,
    given: np.ndarray,
    num_classes: int,
    seed: int,
    execution: Any,
    iterations: int = ITERATIONS,
) -> IncvSelection:
    """INCV's selection (:func:`enkcvs.method.incv.incv_selection`) with 2 N models trained in this process, one after
    the other (iteration i trains on what the ones before selected; a killed job starts them again).

    Parameters
    ----------
    recipe : the dataset's training recipe.
    inputs : ``inputs(indices, train)`` -> the model inputs of those samples, as
        :func:`enkcvs.training.crossval.fold_probabilities` takes it.
    given : (N,) given labels in 0..Q-1.
    num_classes : Q.
    seed : the run's seed: model h of iteration i splits off its validation share and initialises from seeds derived
        from (seed, INCV, i, h).
    execution : how the models train (:class:`enkcvs.training.device.Execution`).
    iterations : N.
    """
    from enkcvs.training.evaluate import predict_proba
    from enkcvs.training.train import train_model

    def train_and_predict(*, train: np.ndarray, predict: np.ndarray, iteration: int, half: int) -> np.ndarray:
        keys = (Purpose.INCV, iteration, half)
        fit, validation = validation_split(
            train, fraction=recipe.validation_fraction, rng=generator(seed, *keys, Purpose.VALIDATION)
        )
        log.info(
            "INCV iteration %d, model %d: training on %d samples, %d held out for the best epoch, predicting %d",
            iteration,
            half,
            len(fit),
            len(validation),
            len(predict),
        )
        result = train_model(
            recipe=recipe,
            x=inputs(fit, True),
            targets=np.eye(num_classes, dtype=np.float32)[given[fit]],
            seed=derive_seed(seed, *keys, Purpose.INIT),
            validation=(inputs(validation, False), given[validation]) if len(validation) else None,
            execution=execution,
        )
        return predict_proba(
            result.model,
            inputs(predict, False),
            device=execution.device,
            workers=execution.loader_workers,
            bf16=result.bf16,
        )

    return incv_selection(
        given=given, num_classes=num_classes, seed=seed, train_and_predict=train_and_predict, iterations=iterations
    )
