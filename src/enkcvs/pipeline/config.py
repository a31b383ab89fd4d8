"""Checks of a workflow config that a JSON schema cannot express; run before any job is scheduled."""

from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

import yaml

from enkcvs.data.sources import SOURCES
from enkcvs.method.methods import MIXUP_VARIANTS, ORACLE_METHODS
from enkcvs.method.noise_settings import ASYMMETRIC_MAPS, SUPERCLASS_MAPS, parse_noise
from enkcvs.training.recipe import Recipe, baseline_recipe


def fill_text_recipe_defaults(config: dict[str, Any]) -> None:
    """Set ``mixup_alpha: null`` in the recipe of every text dataset of ``config`` that leaves it out, before the
    schema fills in its default (0.3): mixup cannot mix token ids, so a text recipe trains without it unless the
    config says otherwise (which :func:`config_problems` then refuses). Run on the config as written; entries the
    schema will refuse are left to it."""
    datasets = config.get("datasets")
    for dataset in datasets.values() if isinstance(datasets, dict) else ():
        source = SOURCES.get(str(dataset.get("source"))) if isinstance(dataset, dict) else None
        recipe = dataset.get("recipe") if source is not None and source.modality == "text" else None
        if isinstance(recipe, dict) and "mixup_alpha" not in recipe:
            recipe["mixup_alpha"] = None


def _source_problems(key: str, dataset: dict[str, Any], source) -> list[str]:
    """Problems between a dataset entry and its source: options, data location, model and asymmetric map."""
    problems = []
    options = dataset.get("source_options", {})
    unknown = sorted(set(options) - set(source.options))
    if unknown:
        problems.append(
            f"{key}.source_options {unknown} are not options of source {dataset['source']!r}: "
            f"it takes {list(source.options) or 'none'}"
        )
    missing = [option for option in source.required if option not in options]
    if missing:
        problems.append(f"{key}.source_options needs {missing} for source {dataset['source']!r}: set them")
    if source.check_layout is not None and dataset.get("enabled", True) and "root" not in options:
        problems.append(
            f"{key} ({dataset['source']}) cannot be downloaded: set {key}.source_options.root to your copy in the "
            f"official layout, or set {key}.enabled: false"
        )
    is_text_model = dataset["recipe"]["model"] == "text_classifier"
    if is_text_model != (source.modality == "text"):
        problems.append(
            f"{key}.recipe.model {dataset['recipe']['model']!r} does not fit {source.modality} data of source "
            f"{dataset['source']!r}: use text_classifier for text sources and an image model otherwise"
        )
    if source.modality == "text" and dataset["recipe"]["mixup_alpha"] is not None:
        problems.append(f"{key}.recipe.mixup_alpha must be null: mixup cannot mix token ids")
    if dataset.get("asymmetric_map") in SUPERCLASS_MAPS and dataset["source"] != "cifar100":
        problems.append(f"{key}.asymmetric_map {dataset['asymmetric_map']!r} needs CIFAR-100's super-classes")
    return problems


def _baseline_problems(key: str, dataset: dict[str, Any], *, methods: list[str]) -> list[str]:
    """Problems of the baselines' settings for the ``methods`` a dataset trains final models of."""
    problems, baselines = [], dataset["baselines"]
    for variant, plain in MIXUP_VARIANTS.items():
        if variant in methods and dataset["recipe"]["mixup_alpha"] is None:
            problems.append(
                f"methods has {variant!r} but {key}.recipe.mixup_alpha is null, so it would train {plain!r} again: "
                f"drop {variant!r} from methods (the ablation ladder skips the rung there by itself)"
            )
    for method in ("sl", "sl_mixup"):
        sl = baselines[method]
        if method in methods and not {"alpha", "beta"} <= set(sl):
            problems.append(
                f"{key}.baselines.{method} needs alpha and beta (set {sorted({'alpha', 'beta'} - set(sl))}): "
                "symmetric cross-entropy has no values that fit every dataset; choose them as Wang et al. advise, "
                f"on noisy validation data (config/README.md), or drop {method!r} from methods"
            )
    coteaching = baselines["coteaching"]
    if "coteaching" in methods and coteaching.get("mixup"):
        problems.append(
            f"{key}.baselines.coteaching.mixup is true, but co-teaching cannot train with mixup (its small-loss "
            "ranking needs each sample's own label): set it to false"
        )
    warmup = coteaching["warmup_epochs"]
    if "coteaching" in methods and coteaching.get("ramp") == "epoch" and not float(warmup).is_integer():
        problems.append(
            f"{key}.baselines.coteaching.warmup_epochs {warmup} is no whole number of epochs, which ramp 'epoch' "
            "needs: give whole epochs or set ramp: step"
        )
    return problems


def _recipe_problems(key: str, dataset: dict[str, Any], *, methods: list[str]) -> list[str]:
    """Problems of the recipes a dataset's models train with, each checked by the recipe itself
    (:class:`~enkcvs.training.recipe.Recipe`: the rules between its fields): the dataset's, then that of each
    baseline of ``methods`` on its authors' schedule (:func:`~enkcvs.training.recipe.baseline_recipe`)."""
    problems = []
    recipes = {key: dataset["recipe"]}
    for baseline in ("sl", "coteaching"):
        if baseline in methods and dataset["baselines"][baseline].get("schedule") == "authors":
            try:
                recipes[f"{key}.baselines.{baseline} on its authors' schedule"] = baseline_recipe(
                    dataset["recipe"], baseline=baseline, schedule="authors", paper_name=dataset["paper_name"]
                )
            except ValueError as error:
                problems.append(f"{key}: {error}")
    for where, recipe in recipes.items():
        try:
            Recipe.from_dict(recipe)
        except ValueError as error:
            problems.append(f"{where}: {error}")
    return problems


def config_problems(config: dict[str, Any]) -> list[str]:
    """Every cross-key problem of a schema-valid config (its defaults filled in), each naming the key and the fix
    (empty when fine)."""
    problems = []
    for key, selection in [
        ("selection", config["selection"]),
        *((f"datasets.{name}.selection", d["selection"]) for name, d in config["datasets"].items() if "selection" in d),
    ]:
        if selection["t"] > selection["M"]:
            problems.append(f"{key}.t = {selection['t']} exceeds {key}.M = {selection['M']}: choose 1 <= t <= M")
    for name, dataset in config["datasets"].items():
        key = f"datasets.{name}"
        source = SOURCES[dataset["source"]]
        problems += _source_problems(key, dataset, source)
        selection = dataset.get("selection", config["selection"])
        largest_k = max([selection["K"], *config["sensitivity"]["K"]])
        if source.train_size is not None and largest_k > source.train_size:
            problems.append(
                f"K = {largest_k} exceeds the {source.train_size} training samples of {key}: lower selection.K"
            )
        if len(set(dataset["noise"])) != len(dataset["noise"]):
            problems.append(f"{key}.noise lists a setting twice: remove the duplicate")
        for noise in dataset["noise"]:
            try:
                spec = parse_noise(noise)
            except ValueError as error:
                problems.append(f"{key}.noise: {error}")
                continue
            known_maps = [*ASYMMETRIC_MAPS, *SUPERCLASS_MAPS]
            if spec.kind == "asym" and dataset.get("asymmetric_map") not in known_maps:
                problems.append(
                    f"{key}.noise has {noise!r} but {key}.asymmetric_map is not set: set it to one of "
                    f"{sorted(known_maps)} or drop the asymmetric setting"
                )
            oracles = [method for method in config["methods"] if method in ORACLE_METHODS]
            if spec.kind == "real" and oracles and source.has_test:
                problems.append(
                    f"{key}.noise has 'real' (true labels unknown), so {oracles} cannot train on them: remove them "
                    "from methods (the ablation ladder trains them only where true labels are known)"
                )
            coteaching = dataset["baselines"]["coteaching"]
            trains_coteaching = "coteaching" in config["methods"] and source.has_test  # own data: no final models
            rate = coteaching["forget_rate"]
            if spec.kind == "real" and isinstance(rate, str) and trains_coteaching:
                problems.append(
                    f"{key}.noise has 'real' (unknown noise rate and true labels), so co-teaching's forget rate "
                    f"cannot be {rate!r}: set {key}.baselines.coteaching.forget_rate to a number"
                )
        methods = config["methods"] if source.has_test and dataset.get("enabled", True) else []  # own data: none
        problems += _baseline_problems(key, dataset, methods=methods) + _recipe_problems(key, dataset, methods=methods)
        milestones = dataset["recipe"]["milestones"]
        if any(epoch > dataset["recipe"]["epochs"] for epoch in milestones):
            problems.append(f"{key}.recipe.milestones {milestones} lie past recipe.epochs: lower them")
    sensitivity = config["sensitivity"]
    if sensitivity["enabled"]:
        for key in ("noise", "seeds", "K", "M", "t"):
            if not sensitivity[key]:
                problems.append(
                    f"sensitivity.{key} is empty, so the sweep draws nothing: list at least one value "
                    "or set sensitivity.enabled: false"
                )
        if sensitivity["dataset"] not in config["datasets"]:
            problems.append(
                f"sensitivity.dataset {sensitivity['dataset']!r} is not under datasets: "
                f"choose one of {sorted(config['datasets'])}"
            )
        else:
            study = config["datasets"][sensitivity["dataset"]]
            for noise in sensitivity["noise"]:
                if noise not in study["noise"]:
                    problems.append(f"sensitivity.noise {noise!r} is not in datasets.{sensitivity['dataset']}.noise")
            main_M = study.get("selection", config["selection"])["M"]
            too_large = sorted(t for t in sensitivity["t"] if t > main_M)
            if too_large:
                problems.append(
                    f"sensitivity.t {too_large} exceed the main M = {main_M} of {sensitivity['dataset']}, "
                    "at which t is swept: choose 1 <= t <= M"
                )
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


def run_config_problems(
    config: dict[str, Any], *, config_files: Collection[str | Path], validate: Callable[[dict[str, Any]], None]
) -> list[str]:
    """Every problem of a run's ``config`` read from ``config_files``, as the workflow checks it before any job:
    keys given twice in a file; else the JSON schema, by ``validate(config)`` (Snakemake's
    ``snakemake.utils.validate`` with the workflow's schema, which fills its defaults into ``config``; text recipes'
    first); else the rules across keys (:func:`config_problems`). Empty when the config is valid."""
    from snakemake.exceptions import WorkflowError  # the workflow's own: jobs that import this module never call it

    if not config:
        return [
            "no config was given: run with --configfile FILE (the repository's default profile, profiles/default, "
            "gives config/config.yaml), or pass one to the module (config: in its module directive)"
        ]
    problems = [problem for path in config_files for problem in duplicate_key_problems(path)]
    if problems:
        return problems
    fill_text_recipe_defaults(config)  # before the schema's defaults, which know no modality
    try:
        validate(config)
    except WorkflowError as error:
        return [str(error)]
    return config_problems(config)
