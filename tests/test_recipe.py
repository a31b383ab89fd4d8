"""The recipe's defaults are written twice, in the config schema (what a config may leave out) and in the Recipe
dataclass (what the library falls back to); they must agree, or a recipe would train differently by where it came
from."""

import dataclasses
from pathlib import Path

import yaml

from enkcvs.recipe import Recipe

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
