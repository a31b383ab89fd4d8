"""The data behind the README's first screen: for each claim of the paper, what the recorded runs hold and how it
stands by the stated intervals and tests (:mod:`enkcvs.report.statistics`), or, where nothing ran, what running it
would take. Every function returns data; the sentences are the README's template's (:mod:`enkcvs.report.pages`),
but for the two columns docs/results.md prints as they are (:func:`row_cells`).

The records read (``results/recorded/<name>/``) are named here, each with the methods taken from it, so that a page
and its test read one list.
"""

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from enkcvs.method.methods import SELECTION_METHODS
from enkcvs.pipeline.plan import Plan
from enkcvs.recording.provenance import RUN_HOME
from enkcvs.report.gathered import gathered_row, seeds_and_selection, selection_title
from enkcvs.report.paper import METHOD_NAMES, TABLE2_RUNS
from enkcvs.report.readings import READINGS, best_epoch, epochs_averaged, last_epoch, mean_of_last_epochs
from enkcvs.report.statistics import (
    CONFIDENCE,
    MARGIN,
    Cell,
    Verdict,
    margin_verdicts,
    ordering_verdicts,
    welch_difference,
)

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
#: The configs of the row's K = 10, M = 5 cells, one noise setting and three seeds each, in the order the row needs
#: them (:mod:`enkcvs.recording.cells`); each recorded as ``mnist-k10-<file stem>`` joins the row.
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
    each against the paper's own cell (its mean and std over its five runs) by
    :func:`enkcvs.report.statistics.welch_difference`, the row one family
    (:func:`enkcvs.report.statistics.margin_verdicts`): ``verdict`` at :data:`~enkcvs.report.statistics.MARGIN`,
    ``difference`` (ours minus the paper's, points), ``low`` and ``high`` (its interval), ``p`` (Welch's,
    Holm-adjusted over the row's tested cells); and the same as docs/results.md prints them, the margin and level
    named: ``side`` and ``gap``."""
    cells = gathered_row([(records(root) / name, methods) for name, methods in runs])
    cells = cells[cells["method"].isin(PAPER_METHODS) & cells["published"].notna()].reset_index(drop=True)
    differences = [
        welch_difference(
            ours=Cell(row.mean, row.std, int(row.runs)), theirs=Cell(row.published, row.published_std, TABLE2_RUNS)
        )
        for row in cells.itertuples()
    ]
    verdicts = margin_verdicts(differences=differences)
    return cells.assign(
        verdict=[v.side for v in verdicts],
        difference=[v.gap for v in verdicts],
        low=[v.low for v in verdicts],
        high=[v.high for v in verdicts],
        p=[v.p for v in verdicts],
        side=[_side(v) for v in verdicts],
        gap=[_gap(v) for v in verdicts],
    )


def _side(verdict: Verdict) -> str:
    """A verdict with the margin it was read at: ``within ±1``, ``undecided at ±1``, ``untested``."""
    at = {"within": "within", "outside": "outside", "undecided": "undecided at"}.get(verdict.side)
    return verdict.side if at is None else f"{at} ±{MARGIN:g}"


def _gap(verdict: Verdict) -> str:
    """A difference with its interval and level: ``-0.50 (95 % CI -0.99 to -0.01)``; alone where untested."""
    if verdict.low is None:
        return f"{verdict.gap:+.2f}"
    return f"{verdict.gap:+.2f} ({100 * CONFIDENCE:g} % simultaneous CI {verdict.low:+.2f} to {verdict.high:+.2f})"


@dataclass(frozen=True)
class RowSummary:
    """A gathered Table 2 row against the paper's: its cells by verdict (read at ``margin`` points, intervals at
    ``confidence``), the seeds, selections and settings."""

    cells: int
    sides: dict[str, int]  # verdict -> cells, in the order within, outside, undecided, untested
    untested_gaps: tuple[float, float] | None  # the smallest and largest gap of the untested cells (points)
    seeds: tuple[int, int]  # the fewest and most seeds of a cell
    selections: list[str]  # the selections (K, M) of E-NKCVS's cells
    settings: int
    margin: float = MARGIN
    confidence: float = CONFIDENCE


def row_summary(cells: pd.DataFrame) -> RowSummary:
    untested = cells.loc[cells["verdict"] == "untested", "difference"]
    counts = cells["verdict"].value_counts()
    selections = [selection_title(s) for s in cells.loc[cells["method"] == "enkcvs", "selection"].dropna().unique()]
    return RowSummary(
        cells=len(cells),
        sides={side: int(counts[side]) for side in ("within", "outside", "undecided", "untested") if side in counts},
        untested_gaps=(untested.min(), untested.max()) if len(untested) else None,
        seeds=(int(cells["runs"].min()), int(cells["runs"].max())),
        selections=sorted(selections),
        settings=cells.groupby(["noise_kind", "noise_rate"]).ngroups,
    )


@dataclass(frozen=True)
class Ordering:
    """E-NKCVS, at its selection (K, M), against another of the paper's methods at one setting of several seeds."""

    setting: str
    selection: str  # E-NKCVS's K and M: ``K = 4, M = 3``
    method: str  # the other method's printed name
    verdict: Verdict
    seeds: tuple[int, int]  # E-NKCVS's and the other's


def orderings(cells: pd.DataFrame) -> list[Ordering]:
    """The paper's ordering tested where it can be: E-NKCVS (at its best-seeded selection) minus each other method
    of the paper at every setting whose cells all have several seeds, by Welch's t-test over seeds, the orderings
    one family (:func:`enkcvs.report.statistics.ordering_verdicts`)."""
    tested = []  # (setting, E-NKCVS's selection, the other method, both seed counts, the difference)
    for (kind, rate), rows in cells.groupby(["noise_kind", "noise_rate"], sort=False):
        ours = rows[rows["method"] == "enkcvs"].sort_values("runs").tail(1)
        others = rows[rows["method"] != "enkcvs"]
        if ours.empty or (pd.concat([ours, others])["runs"] < 2).any():
            continue
        ours = ours.iloc[0]
        for other in others.itertuples():
            difference = welch_difference(
                ours=Cell(ours["mean"], ours["std"], int(ours["runs"])),
                theirs=Cell(other.mean, other.std, int(other.runs)),
            )
            seeds = (int(ours["runs"]), int(other.runs))
            tested.append(
                (f"{kind} {rate:g}", selection_title(ours["selection"]), METHOD_NAMES[other.method], seeds, difference)
            )
    verdicts = ordering_verdicts(differences=[difference for *_, difference in tested])
    return [
        Ordering(setting, selection, method, verdict, seeds)
        for (setting, selection, method, seeds, _), verdict in zip(tested, verdicts)
    ]


@dataclass(frozen=True)
class Place:
    """Where E-NKCVS's cell stands among the paper's methods at one setting of a row, read off the means as they ran
    (no test: a row of one seed): ``place`` 1 for first, ``tied`` the methods with the same mean, ``leader`` the
    first method where E-NKCVS is not first, with both means (%)."""

    setting: str
    place: int
    tied: list[str]
    leader: str | None
    leader_mean: float | None
    enkcvs_mean: float


def places(cells: pd.DataFrame, *, decimals: int = 1) -> list[Place]:
    """E-NKCVS's :class:`Place` at each setting of ``cells`` (:func:`row_cells`), means compared as printed (to
    ``decimals``), in the row's order of settings."""
    found = []
    for (kind, rate), setting in cells.groupby(["noise_kind", "noise_rate"], sort=False):
        means = setting.set_index("method")["mean"].round(decimals)
        ours = means["enkcvs"]
        others = means.drop("enkcvs")
        leader = others.idxmax()
        found.append(
            Place(
                setting=f"{kind} {rate:g}",
                place=1 + int((others > ours).sum()),
                tied=[METHOD_NAMES[method] for method in others.index[others == ours]],
                leader=METHOD_NAMES[leader] if others[leader] > ours else None,
                leader_mean=float(others[leader]) if others[leader] > ours else None,
                enkcvs_mean=float(ours),
            )
        )
    return found


@dataclass(frozen=True)
class GapReading:
    """A row's cell furthest from the paper's, read off the recorded clean test curve of its very training
    (:mod:`enkcvs.report.readings`, accuracies in %)."""

    method: str  # the printed name
    setting: str  # ``sym 0.8``
    gap: float  # the cell (its last epoch) minus the paper's, points
    published: float  # the paper's cell
    run: str  # the record holding the curve
    epochs: int
    last: float
    last10: float
    averaged: int  # the epochs last10 averages
    best: float
    best_epoch: int  # 1-based
    nearest: str  # the title of the reading nearest the paper's cell


def largest_gap_reading(root: Path, cells: pd.DataFrame) -> GapReading | None:
    """The cell of ``cells`` (:func:`row_cells`) furthest from the paper's, read the three ways of
    :data:`~enkcvs.report.readings.READINGS` off a recorded clean test curve (a record's ``test_curves.csv``) of the
    same setting, method and seed that ends at the cell's own value: the training the cell reports, the test set
    scored after every epoch. None where the cell pools several seeds or no record holds its curve."""
    cell = cells.loc[cells["difference"].abs().idxmax()]
    if cell["runs"] != 1:
        return None
    for path in sorted(records(root).glob("*/test_curves.csv")):
        curves = pd.read_csv(path)
        same = (
            (curves["dataset"] == cell["dataset"])
            & (curves["noise_kind"] == cell["noise_kind"])
            & np.isclose(curves["noise_rate"], cell["noise_rate"])
            & (curves["method"] == cell["method"])
            & curves["seed"].isin(cell["seeds"])
        )
        curve = curves[same].sort_values("epoch")["test_accuracy"].to_numpy()
        if not len(curve) or not np.isclose(last_epoch(curve), cell["mean"]):
            continue  # another setting, or another training than the one the cell reports
        epoch, best = best_epoch(curve)
        readings = {"last": last_epoch(curve), "last10": mean_of_last_epochs(curve), "best": best}
        return GapReading(
            method=METHOD_NAMES[cell["method"]],
            setting=f"{cell['noise_kind']} {cell['noise_rate']:g}",
            gap=float(cell["difference"]),
            published=float(cell["published"]),
            run=path.parent.name,
            epochs=len(curve),
            last=readings["last"],
            last10=readings["last10"],
            averaged=epochs_averaged(curve),
            best=best,
            best_epoch=epoch,
            nearest=READINGS[min(readings, key=lambda reading: abs(readings[reading] - cell["published"]))],
        )
    return None


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


#: The default config's second record, at the default record's commit under an older CPU class's kernels.
KERNELS_RUN = "default-avx2-kernels"


def theorem_gaps(root: Path) -> TheoremGaps:
    tables = [pd.read_csv(path) for path in sorted(records(root).glob("*/theory.csv"))]
    # a run that reused another's selections (the same files, carried over) counts them once
    gaps = pd.concat(tables, ignore_index=True).drop_duplicates()
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
    """What re-weighting the non-selected samples adds: E-NKCVS minus SS only (trained on the selection alone), both
    at the run's selection (K, M), per noise setting of a run's Table 2, by Welch's t-test where both cells have
    several seeds, the settings one family (:func:`enkcvs.report.statistics.ordering_verdicts`)."""

    run: str
    selection: str  # ``K = 4, M = 3``
    seeds: int
    settings: list[tuple[str, Verdict]]


def reweighting(root: Path, run: str) -> Reweighting:
    table = pd.read_csv(records(root) / run / "table2.csv")
    table = table[table["method"].isin(["enkcvs", "ss_only"])]
    cells = table.pivot(index=["dataset", "noise_kind", "noise_rate"], columns="method", values=["mean", "std", "runs"])
    cells = cells.dropna(subset=[("mean", "enkcvs"), ("mean", "ss_only")])
    differences = [
        welch_difference(
            ours=Cell(row["mean", "enkcvs"], row["std", "enkcvs"], int(row["runs", "enkcvs"])),
            theirs=Cell(row["mean", "ss_only"], row["std", "ss_only"], int(row["runs", "ss_only"])),
        )
        for _, row in cells.iterrows()
    ]
    settings = [f"{dataset} {kind} {rate:g}" for dataset, kind, rate in cells.index]
    seeds, selection = seeds_and_selection(records(root) / run)
    return Reweighting(
        run=run,
        selection=selection_title(selection),
        seeds=len(seeds),
        settings=list(zip(settings, ordering_verdicts(differences=differences))),
    )


#: The recorded study of E-NKCVS beside baselines given what it gets (config/experiments/matched-baselines-digits.yaml).
MATCHED_RUN = "matched-baselines-digits"
#: The README's two questions of that study: what E-NKCVS adds over mixup alone, and over equal compute.
MATCHED_QUESTIONS = {"mixup alone": "ce_mixup", "equal compute": "ce_mixup_ensemble"}


@dataclass(frozen=True)
class Matched:
    """E-NKCVS minus the baselines of :data:`MATCHED_QUESTIONS` in a recorded ``matched`` table, per noise setting:
    ``answers`` {question: [(setting, verdict)]}, each verdict's p Holm-adjusted over the table's ``family`` rows."""

    run: str
    dataset: str
    selection: str
    seeds: int
    family: int
    answers: dict[str, list[tuple[str, Verdict]]]


def matched(root: Path, run: str = MATCHED_RUN) -> Matched:
    table = pd.read_csv(records(root) / run / "matched.csv")
    _, selection = seeds_and_selection(records(root) / run)
    answers = {
        question: [
            (
                f"{row.noise_kind} {row.noise_rate:g}",
                Verdict(row.side, row.lead, row.low, row.high, row.p_holm),
            )
            for row in table[table["method"] == method].itertuples()
        ]
        for question, method in MATCHED_QUESTIONS.items()
    }
    return Matched(
        run=run,
        dataset=", ".join(table["dataset"].unique()),
        selection=selection_title(selection),
        seeds=int(table["seeds"].min()),
        family=len(table),
        answers=answers,
    )


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
    selection, methods; its jobs, wall time, machine and commit (``dirty``: with uncommitted changes)."""
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
        "dirty": meta["git"].get("dirty"),
        "selection": config.get("selection"),
        "seeds": config.get("seeds", [meta.get("seed")]),
        "selection_methods": [m for m in config.get("methods", []) if m in SELECTION_METHODS],
    }
