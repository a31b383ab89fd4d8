"""What a run of the workflow trains and reports, from its config alone: its settings, selections (K, M, t), final
models and stacks. One home for the planning that ``workflow/rules/*.smk`` turns into paths (``rules.X.output``
filled with these), so that every rule and the tests read one answer.

Terms: a *setting* is (dataset, noise, seed); a *point* is a selection's (K, M, t); the *main* point is a dataset's
own ``selection`` or the config's; the *sensitivity* points are Figure 1's study.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from enkcvs.data.sources import SOURCES
from enkcvs.method.methods import (
    ABLATION_LADDER,
    BASELINE_METHODS,
    MIXUP_VARIANTS,
    OWN_SELECTION_METHODS,
    SELECTION_METHODS,
)
from enkcvs.training.recipe import STATIC_MODELS

#: The rules that train models: the expensive jobs, which a profile gives their GPUs, threads and time.
TRAINING_RULES = (
    "train_fold",
    "train_stack",
    "train_final_baseline",
    "train_final_selected",
    "train_final_pruned",
    "select_incv",
    "train_final_incv",
    "train_ensemble_member",
)

Setting = tuple[str, str, int]
Point = tuple[int, int, int]


@dataclass(frozen=True)
class FinalModel:
    """One final model of a setting: a ``method`` trained on all samples (``point`` None) or on the selection
    (K, M, t) ``point``."""

    method: str
    point: Point | None = None


class Plan:
    """The jobs a validated ``config`` (its schema defaults filled in) asks for."""

    def __init__(self, config: Mapping[str, Any]):
        self.config = config
        self.datasets = {name: dataset for name, dataset in config["datasets"].items() if dataset["enabled"]}
        self.sensitivity = config["sensitivity"]

    def main_settings(self, *, real: bool) -> list[Setting]:
        """Every main setting of the enabled datasets: with injected noise (Tables 1-2) or, with ``real``, on labels
        that are noisy already (Table 3)."""
        return [
            (name, noise, seed)
            for name, dataset in self.datasets.items()
            for noise in dataset["noise"]
            if (noise == "real") == real
            for seed in self.config["seeds"]
        ]

    def main_point(self, dataset: str) -> list[Point]:
        """The main (K, M, t) of a dataset: its own ``selection`` or the config's."""
        selection = self.config["datasets"][dataset].get("selection", self.config["selection"])
        return [(selection["K"], selection["M"], selection["t"])]

    def sensitivity_points(self, dataset: str) -> list[Point]:
        """(K, M, t) of Figure 1: K sweeps at M = t = 1 and at the main (M, t); an M sweep at the main K with
        t = M - 1; a t sweep at the main K and M."""
        [(main_K, main_M, main_t)] = self.main_point(dataset)
        points = {(K, 1, 1) for K in self.sensitivity["K"]}
        points |= {(K, main_M, main_t) for K in self.sensitivity["K"]}
        points |= {(main_K, M, M - 1) for M in self.sensitivity["M"]}
        points |= {(main_K, main_M, t) for t in self.sensitivity["t"]}
        return sorted(points)

    def sensitivity_settings(self) -> list[Setting]:
        if not self.sensitivity["enabled"]:
            return []
        return [
            (self.sensitivity["dataset"], noise, seed)
            for noise in self.sensitivity["noise"]
            for seed in self.sensitivity["seeds"]
        ]

    @cached_property
    def selections(self) -> list[tuple[Setting, Point]]:
        """Every selection a run votes: the main ones where some method or the ablation ladder trains on one
        (:meth:`selects`), and Figure 1's, once each."""
        studies = [(self.sensitivity_settings(), self.sensitivity_points)]
        if self.selects():
            studies.insert(0, (self.main_settings(real=False) + self.main_settings(real=True), self.main_point))
        found = [
            (setting, point) for settings, points in studies for setting in settings for point in points(setting[0])
        ]
        return list(dict.fromkeys(found))

    def evaluated(self, settings: list[Setting]) -> list[Setting]:
        """The settings whose dataset has a clean test set (a user's own data has none: no final models for it)."""
        return [setting for setting in settings if SOURCES[self.config["datasets"][setting[0]]["source"]].has_test]

    def final_models(
        self, methods, settings: list[Setting], points: Callable[[str], list[Point]]
    ) -> list[tuple[Setting, FinalModel]]:
        """The final models ``methods`` on ``settings``: baselines and INCV once per setting, selection methods and
        the budget's ensembles once per (K, M, t) of ``points(dataset)``. CE + mixup and SL + mixup only where the
        dataset's recipe mixes (text datasets do not: there they would be CE and SL again)."""
        unpointed = (*BASELINE_METHODS, *OWN_SELECTION_METHODS)
        return [
            ((dataset, noise, seed), FinalModel(method, point))
            for method in methods
            for dataset, noise, seed in settings
            if method not in MIXUP_VARIANTS or self.config["datasets"][dataset]["recipe"]["mixup_alpha"] is not None
            for point in ([None] if method in unpointed else points(dataset))
        ]

    def curve_methods(self, dataset: str) -> list[str]:
        """The configured methods of ``dataset`` whose options ask the report to draw their clean test curve (every
        final model records one)."""
        baselines = self.datasets[dataset]["baselines"]
        return [method for method in self.config["methods"] if baselines.get(method, {}).get("test_curve", False)]

    def reported_final_models(self) -> list[tuple[Setting, FinalModel]]:
        """Every final model the report reads: Tables 2 and 3, Figure 1 and the ablation ladder (once each)."""
        models = self.final_models(
            self.config["methods"],
            self.evaluated(self.main_settings(real=False) + self.main_settings(real=True)),
            self.main_point,
        )
        models += self.final_models(["ss_only"], self.sensitivity_settings(), self.sensitivity_points)
        if self.config["ablation"]:
            models += self.final_models(
                ABLATION_LADDER, self.evaluated(self.main_settings(real=False)), self.main_point
            )
        return list(dict.fromkeys(models))

    def selects(self) -> bool:
        """Whether the run votes a selection: some method trains on one, or the ablation ladder climbs to E-NKCVS.
        A run of baselines alone trains no fold models, and so has no Table 1."""
        return self.config["ablation"] or any(method in SELECTION_METHODS for method in self.config["methods"])

    def compares_with_the_paper(self) -> bool:
        """Whether some enabled dataset is compared with one of the paper's (``paper_name``): only then does the run
        render Table 3, the paper's real-world rows."""
        return any(dataset["paper_name"] is not None for dataset in self.datasets.values())

    def issue_datasets(self) -> list[str]:
        return [name for name, dataset in self.datasets.items() if dataset["find_issues"]]

    def merged_issue_noise(self, dataset: str) -> list[str]:
        """The noise settings of ``dataset`` whose seeds share the given labels, so that one ranking merges them:
        the labels as they are (``real``), or any setting when there is one seed."""
        return [noise for noise in self.datasets[dataset]["noise"] if noise == "real" or len(self.config["seeds"]) == 1]

    def markdown_review(self, dataset: str) -> bool:
        """Whether a dataset's review sheet is Markdown (texts, and feature tables stored as (N, 1, 1, F) images)
        rather than a figure of its images."""
        source = self.config["datasets"][dataset]["source"]
        return source == "table" or SOURCES[source].modality == "text"

    def stackable(self, dataset: str) -> bool:
        """Whether a dataset's fold models can train as one stacked program (:mod:`enkcvs.training.stacked`):
        inputs held in memory (not image files or token ids), a model of
        :data:`~enkcvs.training.recipe.STATIC_MODELS`, its lr on milestones (no time-based or linear decay)."""
        dataset = self.config["datasets"][dataset]
        recipe = dataset["recipe"]
        return (
            SOURCES[dataset["source"]].modality not in ("text", "image_files")
            and recipe["model"] in STATIC_MODELS
            and not recipe.get("lr_step_decay")
            and not recipe.get("lr_linear_decay_from")
        )

    def stacked_datasets(self) -> list[str]:
        """The enabled datasets whose fold models train stacked: where ``stacked_folds`` (an execution choice
        ``--config stacked_folds=True`` makes; no shipped profile does) asks for it and the dataset can (:meth:`stackable`)."""
        if not self.config["stacked_folds"]:
            return []
        return sorted(name for name in self.datasets if self.stackable(name))

    def stack_iterations(self, dataset: str, noise: str, seed: int, K: int) -> int:
        """The iterations M a stack of (dataset, noise, seed, K) trains: the most any selection of it votes over
        (iterations 1..M are shared by every M' <= M)."""
        return max(M for (d, n, s), (k, M, _) in self.selections if (d, n, s, k) == (dataset, noise, seed, K))
