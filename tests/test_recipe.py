"""The recipe's defaults are written twice, in the config schema (what a config may leave out) and in the Recipe
dataclass (what the library falls back to); they must agree, or a recipe would train differently by where it came
from."""

import dataclasses
from pathlib import Path

import pytest
import yaml

from enkcvs.training.recipe import Recipe

SCHEMA = Path(__file__).resolve().parents[1] / "workflow" / "schemas" / "config.schema.yaml"


def _schema_recipe() -> dict:
    return yaml.safe_load(SCHEMA.read_text())["$defs"]["recipe"]


def _field_default(field: dataclasses.Field):
    """The field's default as a config would spell it (a tuple as a list), or MISSING."""
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return list(field.default) if isinstance(field.default, tuple) else field.default


def test_the_schema_and_recipe_name_the_same_keys():
    assert set(_schema_recipe()["properties"]) == {field.name for field in dataclasses.fields(Recipe)}


def test_every_recipe_default_is_the_schemas_default_and_vice_versa():
    schema = _schema_recipe()
    for field in dataclasses.fields(Recipe):
        default = _field_default(field)
        spec = schema["properties"][field.name]
        if default is dataclasses.MISSING:
            assert "default" not in spec and field.name in schema["required"], field.name
        else:
            assert "default" in spec and field.name not in schema["required"], field.name
            assert spec["default"] == default and type(spec["default"]) is type(default), field.name


def test_the_authors_schedule_replaces_the_dataset_recipes_schedule_only_where_the_authors_give_one():
    from enkcvs.training.recipe import AUTHORS_SCHEDULES, baseline_recipe

    dataset = {
        "model": "cnn4",
        "optimizer": "sgd",
        "lr": 0.01,
        "epochs": 50,
        "milestones": [10, 30],
        "weight_decay": 1e-4,
        "mixup_alpha": 0.3,
        "bf16": "auto",
    }
    assert baseline_recipe(dataset, baseline="sl", schedule="dataset", paper_name="MNIST") is dataset
    authors = baseline_recipe(dataset, baseline="sl", schedule="authors", paper_name="MNIST")
    assert authors == {**dataset, **AUTHORS_SCHEDULES["sl"]["MNIST"]}
    assert (authors["lr"], authors["milestones"], authors["lr_step_decay"], authors["weight_decay"]) == (
        0.1,
        [11, 31],
        5e-3,
        0.0,
    )
    assert (authors["model"], authors["bf16"], authors["mixup_alpha"]) == ("cnn4", "auto", None)
    Recipe.from_dict(authors)  # a valid recipe
    for paper_name, baseline in [(None, "sl"), ("TREC", "sl"), ("MNIST", "gce"), ("TREC", "coteaching")]:
        with pytest.raises(ValueError, match="schedule: dataset"):
            baseline_recipe(dataset, baseline=baseline, schedule="authors", paper_name=paper_name)
    assert baseline_recipe(dataset, baseline="sl", schedule=None, paper_name="MNIST") == authors  # the default
    for paper_name, baseline in [(None, "sl"), ("TREC", "sl"), ("MNIST", "gce")]:  # no authors' schedule
        assert baseline_recipe(dataset, baseline=baseline, schedule=None, paper_name=paper_name) is dataset
    # Co-teaching's authors' model and schedule, asked for only: the default stays the dataset's recipe
    assert baseline_recipe(dataset, baseline="coteaching", schedule=None, paper_name="MNIST") is dataset
    coteaching = Recipe.from_dict(
        baseline_recipe(dataset, baseline="coteaching", schedule="authors", paper_name="MNIST")
    )
    assert (
        coteaching.model,
        coteaching.optimizer,
        coteaching.lr,
        coteaching.epochs,
        coteaching.steps_per_epoch,
        coteaching.lr_linear_decay_from,
        coteaching.beta1_after_decay,
        coteaching.mixup_alpha,
    ) == ("coteaching_cnn9", "adam", 0.001, 199, 401, 80, 0.1, None)
    with pytest.raises(ValueError, match="unknown schedule"):
        baseline_recipe(dataset, baseline="sl", schedule="theirs", paper_name="MNIST")


def test_a_recipe_without_time_based_decay_keeps_the_form_it_had_before_it_existed():
    """Records and epoch checkpoints are keyed by the recipe's mapping: an unused field must not change it."""
    plain = Recipe(model="cnn4", optimizer="sgd", lr=0.01, epochs=2)
    assert "lr_step_decay" not in plain.to_dict()
    assert Recipe(**{**plain.__dict__, "lr_step_decay": 5e-3}).to_dict()["lr_step_decay"] == 5e-3
    with pytest.raises(ValueError, match="optimizer sgd only"):
        Recipe(model="cnn4", optimizer="adam", lr=0.01, epochs=2, lr_step_decay=5e-3)


def test_a_recipe_field_added_later_is_in_a_jobs_params_only_where_it_is_set():
    """So that adding the field reruns no finished job and keeps records' recipes as they were."""
    from enkcvs.training.recipe import ADDED_FIELDS, Recipe, recipe_params

    recipe = {"model": "cnn4", "optimizer": "sgd", "lr": 0.01, "epochs": 50, "lr_step_decay": 0.0}
    assert recipe_params(recipe) == {key: value for key, value in recipe.items() if key != "lr_step_decay"}
    assert recipe_params({**recipe, "lr_step_decay": 5e-3})["lr_step_decay"] == 5e-3
    assert set(ADDED_FIELDS) <= set(Recipe.__dataclass_fields__)
    assert "lr_step_decay" not in Recipe.from_dict(recipe).to_dict()
    assert Recipe.from_dict(recipe_params(recipe)) == Recipe.from_dict(recipe)  # the job trains the same recipe
