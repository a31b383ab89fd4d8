"""Bad configs stop the workflow before any job, with a message naming the key and the fix."""

import copy
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

from enkcvs.config import config_problems

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
DEFAULT = yaml.safe_load((REPO / "config" / "config.yaml").read_text())


def check(config: dict) -> None:
    """What common.smk does before scheduling: the schema (with defaults), then the cross-key checks."""
    validate(config, schema=str(SCHEMA))
    problems = config_problems(config)
    if problems:
        raise WorkflowError("\n".join(problems))


def edited(path: str, value) -> dict:
    """The default config with the dotted ``path`` set to ``value`` (``...`` deletes the key)."""
    config = copy.deepcopy(DEFAULT)
    *parents, last = path.split(".")
    node = config
    for key in parents:
        node = node[key]
    if value is ...:
        del node[last]
    else:
        node[last] = value
    return config


def test_the_default_config_is_valid():
    check(copy.deepcopy(DEFAULT))


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("datasets.digits.source", "imagenet", "imagenet"),
        ("datasets.digits.recipe.model", "resnet9000", "resnet9000"),
        ("selection.K", 1, "minimum of 2"),
        ("selection.K", 2000, "K = 2000 exceeds the 1500 training samples of datasets.digits"),
        ("selection.t", 4, "selection.t = 4 exceeds selection.M = 3"),
        ("selection.t", 0, "minimum of 1"),
        ("datasets.digits.noise", ["sym1.2"], "sym1.2"),
        ("datasets.digits.asymmetric_map", None, "datasets.digits.asymmetric_map is not set"),
        ("selection.M", ..., "'M' is a required property"),
        ("seeds", "1", "is not of type 'array'"),
        ("seeds", [], "should be non-empty"),
        ("gamma", 1.5, "maximum of 1"),
        ("datasets.digits.recipe.epochs", 0, "minimum of 1"),
        ("datasets.digits.recipe.lr", "fast", "not of type 'number'"),
        ("datasets.digits.recipe.milestones", [10, 500], "milestones [10, 500] lie past recipe.epochs"),
        ("datasets.digits.colour", "blue", "'colour' was unexpected"),
        ("methods", ["ce", "magic"], "magic"),
        ("sensitivity.dataset", "cifar10", "sensitivity.dataset 'cifar10' is not under datasets"),
    ],
)
def test_bad_values_name_the_key(path, value, message):
    with pytest.raises(WorkflowError) as error:
        check(edited(path, value))
    assert message in str(error.value) + str(error.value.__cause__ or "")


def test_snakemake_stops_before_scheduling_and_writes_nothing(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(edited("selection.t", 9)))
    done = subprocess.run(
        [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(tmp_path),
         "--configfile", str(bad), "--cores", "1"],
        capture_output=True, text=True,
    )
    assert done.returncode != 0
    assert "selection.t = 9 exceeds selection.M = 3: choose 1 <= t <= M" in done.stderr
    assert not (tmp_path / "results").exists()
