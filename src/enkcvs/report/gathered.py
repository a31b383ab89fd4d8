"""Table 2 cells gathered from several recorded runs of the same data and recipe: each run adds the settings, seeds
or methods it trained, a later run's cell replacing an earlier one's where they share a seed (a baseline retrained
another way), and seeds pooled into mean ± std. A method that trains on the selection
(:data:`enkcvs.method.methods.SELECTION_METHODS`) keeps one cell per selection (K, M) its runs made, never pooled
across them.
"""

import json
from pathlib import Path

import numpy as np
import pandas as pd

from enkcvs.method.methods import SELECTION_METHODS
from enkcvs.recording.provenance import recorded_config
from enkcvs.report.output_provenance import differing, recorded_facts
from enkcvs.report.trainings import config_trainings

#: The columns that name a setting in a run's tables.
SETTING = ["dataset", "noise_kind", "noise_rate"]


def seeds_and_selection(run: Path) -> tuple[set[int], tuple[int, int] | None]:
    """The seeds a recorded run trained and its selection's (K, M) (None where its config leaves them to the
    defaults), from the config its provenance keeps."""
    config = recorded_config(run)
    selection = config.get("selection")
    return set(config["seeds"]), None if selection is None else (int(selection["K"]), int(selection["M"]))


def selection_title(selection: tuple | None) -> str:
    """How a selection, (K, M) or (K, M, t), is named: ``K = 10, M = 5`` or ``K = 10, M = 5, t = 2``."""
    return "" if selection is None else ", ".join(f"{name} = {int(value)}" for name, value in zip("KMt", selection))


def _pooled_reading(n: np.ndarray, mean: np.ndarray, std: np.ndarray) -> tuple[float, float]:
    """One reading's mean and std (ddof=1) over the seeds of P parts, of ``n`` (P,) seeds each with their ``mean``
    and ``std`` (P,), exactly as if computed from the seeds' values: the within- and between-part sums of squares.
    NaN where a part has no mean (a reading its record lacks)."""
    total = n.sum()
    if np.isnan(mean).any():
        return float("nan"), float("nan")
    grand = float((n * mean).sum() / total)
    squares = (np.nan_to_num(std) ** 2 * (n - 1)).sum() + (n * (mean - grand) ** 2).sum()
    return grand, float(np.sqrt(squares / (total - 1))) if total > 1 else float("nan")


def pooled(cells: pd.DataFrame) -> pd.Series:
    """The mean, std (ddof=1) and count over every seed of ``cells`` (rows of Table 2: ``mean``, ``std``, ``runs``
    over disjoint seeds), and so of the other readings (``last10_*``, ``best_*``; NaN where a part's table lacks
    them, recorded before every final model kept its curve)."""
    n = cells["runs"].to_numpy(float)
    readings = {}
    for reading in ("", "last10_", "best_"):
        values = cells.reindex(columns=[f"{reading}mean", f"{reading}std"]).to_numpy(float)
        readings[f"{reading}mean"], readings[f"{reading}std"] = _pooled_reading(n, values[:, 0], values[:, 1])
    return pd.Series(
        {
            **readings,
            "runs": int(n.sum()),
            "last10_epochs": cells.reindex(columns=["last10_epochs"])["last10_epochs"].min(skipna=False),
            "published": cells["published"].iloc[0],
            "published_std": cells["published_std"].iloc[0],
            "runs_from": ", ".join(dict.fromkeys(cells["run"])),
        }
    )


def gathered_row(runs: list[tuple[Path, set[str] | None]]) -> pd.DataFrame:
    """The Table 2 cells of ``runs`` (in order; each with the methods taken from it, None: all) pooled per setting
    and method (and selection, for the methods that train on it): a later run's cell replaces an earlier one's where
    their seeds meet; the others' seeds pool (:func:`pooled`). Columns: the setting, ``method``, ``selection`` (the
    run's (K, M) for :data:`~enkcvs.method.methods.SELECTION_METHODS`, else None), ``mean``, ``std`` (the last
    epoch), ``last10_mean``, ``last10_std``, ``last10_epochs``, ``best_mean``, ``best_std`` (the other readings,
    :mod:`enkcvs.report.readings`), ``runs`` (seeds), ``published`` and ``published_std`` (the paper's cell),
    ``runs_from`` (the runs it came from), ``seeds`` (their seeds, sorted), ``trainings`` (the models a seed trains,
    :func:`enkcvs.report.trainings.config_trainings` at each run's config, as text: the counts joined by "/" where its
    runs differ in it), ``facts`` (each seed's, with its ``run``:
    :func:`enkcvs.report.output_provenance.recorded_facts`) and ``differs`` (the facts they differ in, or may:
    :func:`enkcvs.report.output_provenance.differing`, joined by ", ")."""
    parts: dict[tuple, list[tuple[set[int], pd.Series]]] = {}
    for run, methods in runs:
        seeds, selection = seeds_and_selection(run)
        config, meta = recorded_config(run), json.loads((run / "provenance.json").read_text())
        table = pd.read_csv(run / "table2.csv")
        taken = table["runs"] > 0 if methods is None else (table["runs"] > 0) & table["method"].isin(methods)
        for row in table[taken].itertuples(index=False):
            key = (
                row.dataset,
                row.noise_kind,
                row.noise_rate,
                row.method,
                selection if row.method in SELECTION_METHODS else None,
            )
            facts = recorded_facts(meta=meta, seeds=seeds, provenance=getattr(row, "provenance", None))
            cell = {
                **row._asdict(),
                "run": run.name,
                "trainings": config_trainings(config=config, dataset=row.dataset, method=row.method),
                "facts": [{**fact, "run": run.name} for fact in facts],
            }
            kept = [(s, part) for s, part in parts.get(key, []) if not s & seeds]
            parts[key] = [*kept, (seeds, pd.Series(cell))]
    rows = []
    for key, cells in parts.items():
        facts = [fact for _, cell in cells for fact in cell["facts"]]
        counts = sorted({cell["trainings"] for _, cell in cells if cell["trainings"] is not None})
        rows.append(
            {
                **dict(zip([*SETTING, "method", "selection"], key)),
                **pooled(pd.DataFrame([cell for _, cell in cells])),
                "seeds": sorted(set().union(*(seeds for seeds, _ in cells))),
                "trainings": "/".join(map(str, counts)),
                "facts": facts,
                "differs": ", ".join(differing(facts)),
            }
        )
    return pd.DataFrame(rows)
