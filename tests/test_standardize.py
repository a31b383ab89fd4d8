"""A table's features z-scored inside each fold (:mod:`enkcvs.training.standardize`): the statistics of the fold's
training part alone, the same folds and seeds as the unscaled cross-validation."""

import numpy as np
import pytest

from enkcvs.method.folds import fold_indices
from enkcvs.training.crossval import out_of_fold_probabilities
from enkcvs.training.recipe import Recipe
from enkcvs.training.standardize import standardized


def test_the_training_part_alone_sets_the_scale_and_a_constant_feature_is_only_centred():
    x = np.array([[1.0, 5.0, 10.0], [3.0, 5.0, 20.0], [1e6, 5.0, -1e6], [5.0, 5.0, 30.0]])[:, None, None]  # (4,1,1,3)
    training = np.array([0, 1, 3])  # row 2, held out, is far off: it must not move the scale
    scaled = standardized(x, training=training)
    assert scaled.shape == x.shape and scaled.dtype == np.float32
    fitted = scaled[training, 0, 0]
    np.testing.assert_allclose(fitted.mean(axis=0), 0, atol=1e-6)
    np.testing.assert_allclose(fitted[:, [0, 2]].std(axis=0), 1, rtol=1e-6)
    np.testing.assert_array_equal(scaled[:, 0, 0, 1], 0)  # constant on the training part: std taken as 1
    std = np.std([1.0, 3.0, 5.0])
    np.testing.assert_allclose(
        scaled[2, 0, 0], [(1e6 - 3) / std, 0, (-1e6 - 20) / np.std([10.0, 20.0, 30.0])], rtol=1e-6
    )


@pytest.mark.parametrize("stacked", [False, True], ids=["one by one", "stacked"])
def test_each_fold_model_sees_its_training_part_standardised_with_its_own_statistics(stacked, monkeypatch):
    import enkcvs.training.evaluate

    rng = np.random.default_rng(0)
    x = (rng.normal(size=(30, 1, 1, 2)) * [100.0, 0.01] + [5.0, -3.0]).astype(np.float32)
    labels = np.arange(30) % 3
    recipe = Recipe.from_dict(
        {"model": "mlp", "optimizer": "sgd", "lr": 0.05, "epochs": 1, "batch_size": 8, "bf16": False}
    )
    held_outs = []

    def predict_proba(model, inputs, **_):
        if isinstance(inputs, np.ndarray):  # a fold's held-out samples (the best epoch scores tensors on the device)
            held_outs.append(inputs)
        return np.full((len(inputs), 3), 1 / 3, dtype=np.float32)

    monkeypatch.setattr(enkcvs.training.evaluate, "predict_proba", predict_proba)
    stack = out_of_fold_probabilities(
        x=x,
        labels=labels,
        recipe=recipe,
        num_folds=3,
        iterations=2,
        seed=1,
        num_classes=3,
        standardize=True,
        stacked=stacked,
    )
    assert stack.shape == (2, 30, 3) and len(held_outs) == 6
    raw = x.astype(np.float64)
    for index, held_out in enumerate(held_outs):
        train, validation, rows = fold_indices(
            num_samples=30,
            num_folds=3,
            seed=1,
            iteration=index // 3 + 1,
            fold=index % 3 + 1,
            validation_fraction=recipe.validation_fraction,
        )
        rest = np.concatenate([train, validation])  # D minus D_k: the training statistics
        expected = (raw[rows] - raw[rest].mean(axis=0)) / raw[rest].std(axis=0)
        np.testing.assert_allclose(held_out, expected, rtol=1e-4, atol=1e-5)
        assert not np.allclose(held_out[:, 0, 0].mean(axis=0), 0, atol=1e-3)  # not re-fitted on itself


@pytest.mark.parametrize("seed", [1, 2])
def test_the_folds_and_the_models_are_those_of_the_unscaled_cross_validation(seed):
    """Features that standardising leaves as they are (constant zeros: centred, std taken as 1) give exactly what
    out_of_fold_probabilities gives: the same folds, validation hold-outs and initialisations."""
    x = np.zeros((24, 1, 1, 2), dtype=np.float32)
    recipe = {"model": "mlp", "optimizer": "sgd", "lr": 0.05, "epochs": 1, "batch_size": 8}
    common = {"x": x, "labels": np.arange(24) % 2, "num_folds": 2, "iterations": 2, "seed": seed, "num_classes": 2}
    plain = out_of_fold_probabilities(recipe=recipe, **common)
    scaled = out_of_fold_probabilities(recipe=recipe, standardize=True, **common)
    np.testing.assert_array_equal(scaled, plain)


def test_standardising_what_is_no_float_array_is_refused():
    with pytest.raises(ValueError, match="standardize=True z-scores numeric features: pass x as a float array"):
        out_of_fold_probabilities(
            x=np.zeros((6, 2, 4), dtype=np.int64),
            labels=np.arange(6) % 2,
            recipe={"model": "mlp", "optimizer": "sgd", "lr": 0.1, "epochs": 1},
            standardize=True,
        )
