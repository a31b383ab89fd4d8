"""The config schema documents itself: every property at every depth has a ``description`` (the Snakemake workflow
catalog renders a Parameter / Description / Default table from it), and every ``default`` is valid under its own
property's rules, as Snakemake's ``validate`` fills it in."""

from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator

REPO = Path(__file__).resolve().parents[1]
SCHEMA = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
#: Keywords whose value maps names to schemas, each a property (or a definition) that a reader looks up by its name.
NAMED = ("properties", "patternProperties", "$defs", "definitions")
#: Keywords whose value is a schema (or a list of them) that is no property itself but may hold properties.
NESTED = ("items", "prefixItems", "contains", "oneOf", "anyOf", "allOf", "not", "if", "then", "else")


def schemas(schema: Any, where: str = "") -> list[tuple[str, dict[str, Any], bool]]:
    """Every sub-schema of ``schema`` as (its dotted place, the sub-schema, whether it is a property: a named one,
    a definition or a map's entries under ``additionalProperties``, which the catalog's table lists), depth first."""
    if isinstance(schema, list):
        return [found for item in schema for found in schemas(item, where)]
    if not isinstance(schema, dict):
        return []
    found = []
    for keyword in NAMED:
        for name, sub in (schema.get(keyword) or {}).items():
            place = {"properties": f"{where}.{name}", "patternProperties": f"{where}.<{name}>"}.get(
                keyword, f"#/{keyword}/{name}"
            )
            found += [(place.lstrip("."), sub, True), *schemas(sub, place)]
    entries = schema.get("additionalProperties")
    if isinstance(entries, dict):
        found += [(f"{where}.<name>".lstrip("."), entries, True), *schemas(entries, f"{where}.<name>")]
    for keyword in NESTED:
        if keyword in schema:
            found += schemas(schema[keyword], f"{where}[]" if keyword in ("items", "prefixItems") else where)
    return found


def undescribed(schema: dict[str, Any]) -> list[str]:
    """The places of the properties of ``schema`` that have no ``description`` of their own."""
    return [
        where for where, sub, named in schemas(schema) if named and isinstance(sub, dict) and "description" not in sub
    ]


def test_every_property_of_the_config_schema_has_a_description():
    missing = undescribed(SCHEMA)
    assert not missing, f"{len(missing)} properties of the config schema have no description: {missing}"


def test_the_walk_reaches_every_kind_of_nesting():
    schema = {
        "$defs": {"point": {"type": "object", "properties": {"K": {"type": "integer"}}}},
        "definitions": {"old": {"type": "string"}},
        "properties": {
            "described": {"type": "object", "description": "d", "properties": {"inner": {"type": "number"}}},
            "maps": {"description": "d", "additionalProperties": {"type": "object", "properties": {"x": {}}}},
            "patterns": {"description": "d", "patternProperties": {"^a": {"type": "string"}}},
            "lists": {"description": "d", "items": {"type": "object", "properties": {"y": {"type": "string"}}}},
            "either": {"description": "d", "oneOf": [{"properties": {"z": {"type": "string"}}}, {"type": "null"}]},
            "referred": {"$ref": "#/$defs/point"},
        },
    }
    assert sorted(undescribed(schema)) == sorted(
        [
            "#/$defs/point",
            "#/$defs/point.K",
            "#/definitions/old",
            "described.inner",
            "maps.<name>",
            "maps.<name>.x",
            "patterns.<^a>",
            "lists[].y",
            "either.z",
            "referred",
        ]
    )


@pytest.mark.parametrize(
    "where, sub", [(where, sub) for where, sub, named in schemas(SCHEMA) if named and "default" in sub]
)
def test_each_default_is_valid_under_its_own_property(where, sub):
    validator = Draft202012Validator(SCHEMA).evolve(schema=sub)  # its $refs resolved against the whole schema
    problems = [error.message for error in validator.iter_errors(sub["default"])]
    assert not problems, f"{where}: default {sub['default']!r} is invalid: {problems}"
