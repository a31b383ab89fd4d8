"""Checks of a workflow config that a JSON schema cannot express; run before any job is scheduled."""

from pathlib import Path
from typing import Any

import yaml

from enkcvs.datasets import TRAIN_SIZES
from enkcvs.noise import ASYMMETRIC_MAPS, parse_noise


def config_problems(config: dict[str, Any]) -> list[str]:
    """Every cross-key problem of a schema-valid config, each naming the key and the fix (empty when fine)."""
    problems = []
    selection = config["selection"]
    if selection["t"] > selection["M"]:
        problems.append(f"selection.t = {selection['t']} exceeds selection.M = {selection['M']}: choose 1 <= t <= M")
    for name, dataset in config["datasets"].items():
        key = f"datasets.{name}"
        size = TRAIN_SIZES[dataset["source"]]
        largest_k = max([selection["K"], *config["sensitivity"]["K"]])
        if largest_k > size:
            problems.append(f"K = {largest_k} exceeds the {size} training samples of {key}: lower selection.K")
        if len(set(dataset["noise"])) != len(dataset["noise"]):
            problems.append(f"{key}.noise lists a setting twice: remove the duplicate")
        for noise in dataset["noise"]:
            try:
                spec = parse_noise(noise)
            except ValueError as error:
                problems.append(f"{key}.noise: {error}")
                continue
            if spec.kind == "asym" and dataset.get("asymmetric_map") not in ASYMMETRIC_MAPS:
                problems.append(
                    f"{key}.noise has {noise!r} but {key}.asymmetric_map is not set: set it to one of "
                    f"{sorted(ASYMMETRIC_MAPS)} or drop the asymmetric setting"
                )
        milestones = dataset["recipe"]["milestones"]
        if any(epoch > dataset["recipe"]["epochs"] for epoch in milestones):
            problems.append(f"{key}.recipe.milestones {milestones} lie past recipe.epochs: lower them")
    sensitivity = config["sensitivity"]
    if sensitivity["enabled"]:
        if sensitivity["dataset"] not in config["datasets"]:
            problems.append(
                f"sensitivity.dataset {sensitivity['dataset']!r} is not under datasets: "
                f"choose one of {sorted(config['datasets'])}"
            )
        else:
            known = config["datasets"][sensitivity["dataset"]]["noise"]
            for noise in sensitivity["noise"]:
                if noise not in known:
                    problems.append(f"sensitivity.noise {noise!r} is not in datasets.{sensitivity['dataset']}.noise")
    return problems


class _UniqueKeyLoader(yaml.SafeLoader):
    """A YAML loader that refuses a key given twice in one mapping (plain YAML keeps the last silently)."""

    def construct_mapping(self, node, deep=False):
        seen = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (first on line {seen[key] + 1})", key_node.start_mark
                )
            seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep=deep)


def duplicate_key_problems(path: str | Path) -> list[str]:
    """Keys given twice in one mapping of a YAML config file (e.g. two datasets of the same name)."""
    try:
        yaml.load(Path(path).read_text(), Loader=_UniqueKeyLoader)
    except yaml.constructor.ConstructorError as error:
        return [f"{path}, line {error.problem_mark.line + 1}: {error.problem}: keep one of them"]
    return []
