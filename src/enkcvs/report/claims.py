"""The data behind the README's first screen: for each claim of the paper, what the recorded runs hold and how it
stands by the stated test (:mod:`enkcvs.report.statistics`), or, where nothing ran, what running it would take. Every
function returns data; the sentences are the README's template's (:mod:`enkcvs.report.pages`).

The records read (``results/recorded/<name>/``) are named here, each with the methods taken from it, so that a page
and its test read one list.
"""

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import yaml

from enkcvs.method.methods import SELECTION_METHODS
from enkcvs.pipeline.plan import Plan
from enkcvs.recording.provenance import RUN_HOME
from enkcvs.report.gathered import gathered_row, selection_title
from enkcvs.report.paper import METHOD_NAMES, TABLE2_RUNS
from enkcvs.report.statistics import Cell, Verdict, welch_verdict

#: The full-MNIST row of Table 2, gathered from the runs that recorded it (each with the methods taken from it, None
#: for all; a later run's cell replaces an earlier one's where their seeds meet).
MNIST_ROW = [
    ("mnist-full", None),
    ("mnist-full-coteaching-actual", {"coteaching"}),
    ("mnist-full-sym0.8", {"ce", "coteaching", "enkcvs"}),
    ("mnist-full-sl-authors", {"sl"}),
    ("mnist-full-asym0.2", None),
    ("mnist-full-seeds", None),
    ("mnist-full-k10", {"enkcvs"}),
]
#: TREC's row of Table 2, at full size with a smaller text model.
TREC_ROW = [("trec-full", None)]
#: The configs of the row's K = 10, M = 5 cells still to record, one setting and seed each, in the order the row
#: needs them; each recorded as ``mnist-k10-<file stem>`` joins the row.
CELLS = "config/experiments/cells"


def mnist_row(root: Path) -> list[tuple[str, set[str] | None]]:
    """:data:`MNIST_ROW` and the cells of :data:`CELLS` recorded so far."""
    cells = [f"mnist-k10-{path.stem}" for path in sorted((root / CELLS).glob("*.yaml"))]
    return MNIST_ROW + [(name, None) for name in cells if (records(root) / name).is_dir()]


#: The paper's four methods of Table 2.
PAPER_METHODS = ("ce", "coteaching", "sl", "enkcvs")
#: The measured GPU rates the estimates of what did not run come from: a dataset's model -> its benchmark record.
GPU_RATES = {"cnn8": "benchmarks/results/fold_speed-2026-11-27-h200-cnn8.json"}


def records(root: Path) -> Path:
    return root / RUN_HOME


def row_cells(root: Path, runs: list[tuple[str, set[str] | None]]) -> pd.DataFrame:
    """Table 2 cells of the paper's methods gathered from ``runs`` (:func:`enkcvs.report.gathered.gathered_row`),
    each with its verdict against the paper's own cell (``side``, ``gap``, ``p``: Welch's t-test from both means and
    stds, the paper's over its five runs)."""
    cells = gathered_row([(records(root) / name, methods) for name, methods in runs])
    cells = cells[cells["method"].isin(PAPER_METHODS) & cells["published"].notna()].reset_index(drop=True)
    verdicts = [
        welch_verdict(Cell(row.mean, row.std, int(row.runs)), Cell(row.published, row.published_std, TABLE2_RUNS))
        for row in cells.itertuples()
    ]
    return cells.assign(side=[v.side for v in verdicts], gap=[v.gap for v in verdicts], p=[v.p for v in verdicts])


@dataclass(frozen=True)
class RowSummary:
    """A gathered Table 2 row against the paper's: its cells by verdict, the seeds, selections and settings."""

    cells: int
    sides: dict[str, int]  # verdict -> cells
    untested_gaps: tuple[float, float] | None  # the smallest and largest gap of the untested cells (points)
    seeds: tuple[int, int]  # the fewest and most seeds of a cell
    selections: list[str]  # the selections (K, M) of E-NKCVS's cells
    settings: int


def row_summary(cells: pd.DataFrame) -> RowSummary:
    untested = cells.loc[cells["side"] == "untested", "gap"]
    selections = [selection_title(s) for s in cells.loc[cells["method"] == "enkcvs", "selection"].dropna().unique()]
    return RowSummary(
        cells=len(cells),
        sides=cells["side"].value_counts().to_dict(),
        untested_gaps=(untested.min(), untested.max()) if len(untested) else None,
        seeds=(int(cells["runs"].min()), int(cells["runs"].max())),
        selections=sorted(selections),
        settings=cells.groupby(["noise_kind", "noise_rate"]).ngroups,
    )


@dataclass(frozen=True)
class Ordering:
    """E-NKCVS against another of the paper's methods at one setting of several seeds."""

    setting: str
    method: str  # the other method's printed name
    verdict: Verdict
    seeds: tuple[int, int]  # E-NKCVS's and the other's


def orderings(cells: pd.DataFrame) -> list[Ordering]:
    """The paper's ordering tested where it can be: E-NKCVS (at its best-seeded selection) against each other method
    of the paper at every setting whose cells all have several seeds, by Welch's t-test over seeds."""
    found = []
    for (kind, rate), rows in cells.groupby(["noise_kind", "noise_rate"], sort=False):
        ours = rows[rows["method"] == "enkcvs"].sort_values("runs").tail(1)
        others = rows[rows["method"] != "enkcvs"]
        if ours.empty or (pd.concat([ours, others])["runs"] < 2).any():
            continue
        ours = ours.iloc[0]
        for other in others.itertuples():
            verdict = welch_verdict(
                Cell(ours["mean"], ours["std"], int(ours["runs"])), Cell(other.mean, other.std, int(other.runs))
            )
            found.append(
                Ordering(f"{kind} {rate:g}", METHOD_NAMES[other.method], verdict, (int(ours["runs"]), int(other.runs)))
            )
    return found


@dataclass(frozen=True)
class TheoremGaps:
    """Theorem 1's expectation minus the measured precision and recall, over recorded selections (points)."""

    selections: int
    runs: int
    precision: tuple[float, float]
    recall: tuple[float, float]
    recall_overstated: int  # selections where Theorem 1 expects a higher recall than measured
    dependent: int  # selections of M >= 2 whose iterations are all wrong together more often than independence says
    with_iterations: int  # selections of M >= 2


def theorem_gaps(root: Path) -> TheoremGaps:
    tables = [pd.read_csv(path) for path in sorted(records(root).glob("*/theory.csv"))]
    gaps = pd.concat(tables, ignore_index=True)
    return TheoremGaps(
        selections=len(gaps),
        runs=len(tables),
        precision=(gaps["precision_gap"].min(), gaps["precision_gap"].max()),
        recall=(gaps["recall_gap"].min(), gaps["recall_gap"].max()),
        recall_overstated=int((gaps["recall_gap"] > 0).sum()),
        dependent=int((gaps["all_wrong"] > gaps["all_wrong_independent"]).sum()),
        with_iterations=int(gaps["all_wrong_independent"].notna().sum()),
    )


@dataclass(frozen=True)
class Reweighting:
    """What re-weighting the non-selected samples adds: E-NKCVS minus SS only (trained on the selection alone), per
    setting of a run's ablation ladder, by Welch's t-test where both cells have several seeds."""

    run: str
    settings: list[tuple[str, Verdict]]


def reweighting(root: Path, run: str) -> Reweighting:
    ladder = pd.read_csv(records(root) / run / "ablation.csv")
    settings = []
    for row in ladder.itertuples():
        seeds = int(row.seeds)
        verdict = welch_verdict(
            Cell(row.enkcvs_mean, row.enkcvs_std, seeds), Cell(row.ss_only_mean, row.ss_only_std, seeds)
        )
        settings.append((f"{row.dataset} {row.noise_kind} {row.noise_rate:g}", verdict))
    return Reweighting(run=run, settings=settings)


@dataclass(frozen=True)
class Estimate:
    """What a config would train, and the GPU-hours the measured rate of its model predicts (None: no rate): a lower
    bound, the rate being a bare training-step loop's, which one fold job of the workflow's engine took
    ``engine_ratio`` times as long as in the same record (its projection of a fold against the engine's fold)."""

    fold_models: int
    final_models: int
    gpu_hours: float | None
    rate_from: str | None  # the benchmark record of the rate, and its device
    device: str | None
    engine_ratio: float | None = None


def estimate(root: Path, configfile: str) -> Estimate:
    """The training a config asks for (:class:`enkcvs.pipeline.plan.Plan`), and its GPU-hours from the measured
    training rate of its model (samples a second of one process on the device, :data:`GPU_RATES`): each fold model
    trains its recipe's epochs over (K - 1) / K of the data less its validation share, each final model over all of
    it (co-teaching two networks). Eager steps, one process: what stacking and graphs gain is not counted."""
    config = _validated(root / configfile)
    plan = Plan(config)
    folds = sum(point[0] * point[1] for _, point in _fold_sets(plan))
    finals = plan.reported_final_models()
    hours, source, device, ratios = 0.0, None, None, []
    for name, dataset in plan.datasets.items():
        recipe = dataset["recipe"]
        record = GPU_RATES.get(recipe["model"])
        if record is None:
            return Estimate(folds, len(finals), None, None, None)
        measured = json.loads((root / record).read_text())
        rate, samples = measured["step_loops"]["eager"]["samples_per_s"], measured["fold"]["samples"]
        source, device = record, measured["device"]
        ratios.append(measured["engine_fold"]["seconds"] / measured["step_loops"]["eager"]["projected_fold_s"])
        for (data, _, _), (K, M, _) in _fold_sets(plan):
            if data == name:
                train = samples * (K - 1) / K * (1 - recipe.get("validation_fraction", 0.1))
                hours += K * M * recipe["epochs"] * train / rate / 3600
        networks = sum(2 if model.method == "coteaching" else 1 for setting, model in finals if setting[0] == name)
        hours += networks * recipe["epochs"] * samples / rate / 3600
    return Estimate(folds, len(finals), hours, source, device, max(ratios, default=None))


def _fold_sets(plan: Plan) -> list[tuple[tuple, tuple]]:
    """Each (setting, (K, M, t)) whose M x K fold models train, once per (setting, K) at its largest M."""
    largest = {}
    for setting, (K, M, t) in plan.selections:
        largest[setting, K] = max(M, largest.get((setting, K), 0))
    return [(setting, (K, M, None)) for (setting, K), M in largest.items()]


def _validated(configfile: Path) -> dict:
    """A config with its schema's defaults, as the workflow reads it."""
    from snakemake.utils import validate

    from enkcvs.pipeline.config import fill_text_recipe_defaults

    config = yaml.safe_load(configfile.read_text())
    fill_text_recipe_defaults(config)
    validate(config, schema=str(Path(__file__).parents[3] / "workflow" / "schemas" / "config.schema.yaml"))
    return config


def current_config(root: Path, configfile: str) -> str:
    """Where a recorded run's config file lies now: its recorded path, or the same name under config/experiments/
    (where the experiments' configs moved), or its recorded path marked as no longer present."""
    for candidate in (configfile, f"config/experiments/{Path(configfile).name}"):
        if (root / candidate).is_file():
            return candidate
    return f"{configfile} (no longer in the repository)"


def run_facts(root: Path, name: str) -> dict:
    """What a recorded run trained: its config's datasets (with their source and model), noise settings, seeds,
    selection, methods; its jobs, wall time and machine."""
    run = records(root) / name
    meta = json.loads((run / "provenance.json").read_text())
    config = yaml.safe_load(meta.get("config", "{}"))  # a grid search (trec-sl-grid) records its own settings
    return {
        "name": name,
        "configfile": current_config(root, meta["configfile"]),
        "config": config,
        "jobs": meta.get("jobs"),
        "wall_seconds": meta["wall_seconds"],
        "machine": meta["machine"],
        "commit": meta["git"].get("commit"),
        "selection": config.get("selection"),
        "seeds": config.get("seeds", [meta.get("seed")]),
        "selection_methods": [m for m in config.get("methods", []) if m in SELECTION_METHODS],
    }
