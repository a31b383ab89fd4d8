"""The paper's tables as pandas frames, aggregated from the workflow's result files (no number typed by hand).

Each function here computes; none writes. :mod:`enkcvs.report.tabular` writes a frame to disk,
:mod:`enkcvs.report.render` ties the two together for the workflow's report rules. Every aggregated row keeps a
``sources`` column naming the result files behind it, so that :mod:`enkcvs.report.audit` can recompute it.
"""

from collections.abc import Mapping

import numpy as np
import pandas as pd

from enkcvs.io import PathLike, read_json, read_table
from enkcvs.method.noise import actual_noise_rate
from enkcvs.method.noise_settings import parse_noise
from enkcvs.method.ranking import LABEL_QUALITY
from enkcvs.report.output_provenance import differing, facts_json, output_facts
from enkcvs.report.paper import published_results
from enkcvs.report.readings import best_epoch, epochs_averaged, mean_of_last_epochs
from enkcvs.report.titles import RUNG_COLUMNS
from enkcvs.report.trainings import trainings


def collect_records(paths: list[PathLike]) -> pd.DataFrame:
    """One row per result JSON; nested mappings become ``outer.inner`` columns, noise kind and rate are added."""
    frame = pd.json_normalize([read_json(path) for path in paths])
    if frame.empty:
        return frame
    frame["source"] = [str(path) for path in paths]
    specs = frame["noise"].map(parse_noise)
    frame["noise_kind"] = specs.map(lambda spec: spec.kind)
    frame["noise_rate"] = specs.map(lambda spec: spec.rate)
    for column in ("seed", "K", "M", "t"):
        if column in frame:
            frame[column] = pd.to_numeric(frame[column]).astype("Int64")
    return frame


def _join_sources(paths: pd.Series) -> str:
    """The result files behind one table row, so every cell can be traced (and audited) back to them."""
    return ";".join(sorted(paths))


def table1(metrics: pd.DataFrame) -> pd.DataFrame:
    """Table 1: |CS|, |SS|, |CSS|, precision and recall (%) per dataset and noise, mean over seeds, with the
    corrected Theorem 1's prediction beside the measured values."""
    grouped = metrics.groupby(["dataset", "noise_kind", "noise_rate", "K", "M", "t"], sort=True)
    table = grouped.agg(
        seeds=("seed", "nunique"),
        CS=("CS", "mean"),
        SS=("SS", "mean"),
        CSS=("CSS", "mean"),
        precision=("precision", "mean"),
        recall=("recall", "mean"),
        theorem1_precision=("theorem1.precision", "mean"),
        theorem1_recall=("theorem1.recall", "mean"),
        sources=("source", _join_sources),
    ).reset_index()
    for column in ("precision", "recall", "theorem1_precision", "theorem1_recall"):
        table[column] *= 100.0
    return table


def _curve_readings(results: pd.DataFrame) -> pd.DataFrame:
    """Each result's readings of its clean test curve (%; :mod:`enkcvs.report.readings`): ``last10`` and the
    ``last10_epochs`` it averages, ``best``; NaN for a result recorded without its curve."""
    curves = results.get("test_accuracy_by_epoch", pd.Series(np.nan, index=results.index, dtype=object))
    rows = [
        (100.0 * mean_of_last_epochs(curve), epochs_averaged(curve), 100.0 * best_epoch(curve)[1])
        if isinstance(curve, list) and curve
        else (np.nan, np.nan, np.nan)
        for curve in curves
    ]
    return pd.DataFrame(rows, index=results.index, columns=["last10", "last10_epochs", "best"], dtype=float)


def _mean_of_all(values: pd.Series) -> float:
    """The mean over seeds, NaN where a seed lacks the value: a reading is never of a subset of a cell's seeds."""
    return values.mean(skipna=False)


def _std_of_all(values: pd.Series) -> float:
    return values.std(skipna=False)


def _cell_costs_and_provenance(
    results: pd.DataFrame, *, keys: list[str], incv_iterations: Mapping[str, int] | None
) -> pd.DataFrame:
    """Per Table 2 cell of ``results`` (grouped by ``keys``): ``trainings`` (:func:`enkcvs.report.trainings.trainings`
    at the K and M its results record), ``differs`` (:func:`enkcvs.report.output_provenance.differing`, joined by
    ", ") and ``provenance`` (each output's facts, :func:`enkcvs.report.output_provenance.facts_json`)."""
    rows = []
    for key, cell in results.groupby(keys, dropna=False):
        K, M = (  # a selection method's and the ensemble's (K, M); none for a method without one
            int(cell[column].dropna().iloc[0]) if column in cell and cell[column].notna().any() else None
            for column in ("K", "M")
        )
        facts = output_facts(cell)
        rows.append(
            {
                **dict(zip(keys, key)),
                "trainings": trainings(
                    method=key[-1], num_folds=K, iterations=M, incv_iterations=(incv_iterations or {}).get(key[0])
                ),
                "differs": ", ".join(differing(facts)),
                "provenance": facts_json(facts),
            }
        )
    return pd.DataFrame(rows, columns=[*keys, "trainings", "differs", "provenance"]).astype({"trainings": "Int64"})


def table2(
    results: pd.DataFrame, *, methods: list[str], incv_iterations: Mapping[str, int] | None = None
) -> pd.DataFrame:
    """Table 2 in long form: test accuracy (%) per dataset, noise and method, read three ways
    (:mod:`enkcvs.report.readings`), each as mean and std over seeds (ddof=1): at the last epoch, the protocol
    (``mean``, ``std``, from ``test_accuracy``, with the run count ``runs``); the mean of the last ten epochs
    (``last10_mean``, ``last10_std``, over ``last10_epochs`` epochs, fewer where the models trained fewer); the best
    epoch, optimistic (``best_mean``, ``best_std``). The last two are NaN where a seed's result has no curve (recorded
    before every final model kept one). What each cell cost and ran with: ``trainings``, the models a seed trains
    (:func:`enkcvs.report.trainings.trainings`; ``incv_iterations``: INCV's N per dataset, None where no INCV runs),
    ``differs``, the facts its outputs differ in (:mod:`enkcvs.report.output_provenance`), and ``provenance``, each
    output's facts as JSON. Every configured method appears for every setting; a method without runs has count 0 and
    NaN values."""
    results = results.assign(accuracy=results["test_accuracy"] * 100.0).join(_curve_readings(results))
    stats = (
        results.groupby(["dataset", "noise_kind", "noise_rate", "method"], dropna=False)  # real noise: rate NaN
        .agg(
            mean=("accuracy", "mean"),
            std=("accuracy", "std"),
            runs=("accuracy", "count"),
            last10_mean=("last10", _mean_of_all),
            last10_std=("last10", _std_of_all),
            last10_epochs=("last10_epochs", "min"),
            best_mean=("best", _mean_of_all),
            best_std=("best", _std_of_all),
            sources=("source", _join_sources),
        )
        .reset_index()
    )
    settings = results[["dataset", "noise_kind", "noise_rate"]].drop_duplicates()
    grid = settings.merge(pd.DataFrame({"method": methods}), how="cross")
    keys = ["dataset", "noise_kind", "noise_rate", "method"]
    stats = stats.merge(_cell_costs_and_provenance(results, keys=keys, incv_iterations=incv_iterations), on=keys)
    table = grid.merge(stats, how="left", on=keys)
    table["runs"] = table["runs"].fillna(0).astype(int)
    table["sources"] = table["sources"].fillna("")
    return table.sort_values(["dataset", "noise_kind", "noise_rate", "method"], ignore_index=True)


def ablation_table(results: pd.DataFrame, metrics: pd.DataFrame, *, rungs: list[str]) -> pd.DataFrame:
    """The ablation ladder, one row per dataset and noise setting (mean over seeds): the fold models' out-of-fold
    accuracy against the true labels (mean over iterations), the selection's precision, its lowest precision within one
    given class, its recall, and the pseudo labels' accuracy on the non-selected samples (all of them, those with a
    wrong given label, those with a right one), in %, then each rung's test accuracy mean and std (%) over seeds, and
    the sources."""
    keys = ["dataset", "noise_kind", "noise_rate"]
    by_class = metrics.filter(like="precision_by_given_class.")
    metrics = metrics.assign(
        oof_accuracy=metrics["iteration_accuracy"].map(np.mean),
        worst_class_precision=by_class.min(axis=1),
    )
    selection = metrics.groupby(keys).agg(
        seeds=("seed", "nunique"),
        oof_accuracy=("oof_accuracy", "mean"),
        precision=("precision", "mean"),
        worst_class_precision=("worst_class_precision", "mean"),
        recall=("recall", "mean"),
        non_selected=("pseudo_label_accuracy.samples", "mean"),
        non_selected_noisy=("pseudo_label_accuracy.noisy", "mean"),
        pseudo_accuracy=("pseudo_label_accuracy.all", "mean"),
        pseudo_accuracy_noisy=("pseudo_label_accuracy.on_noisy", "mean"),
        pseudo_accuracy_clean=("pseudo_label_accuracy.on_clean", "mean"),
    )
    selection[[c for c in selection if c.startswith(("oof", "precision", "worst", "recall", "pseudo"))]] *= 100.0
    stats = table2(results, methods=rungs).set_index(keys + ["method"])
    rung_columns = stats[["mean", "std"]].unstack("method")
    rung_columns.columns = [f"{method}_{stat}" for stat, method in rung_columns.columns]
    rung_columns = rung_columns[[f"{method}_{stat}" for method in rungs for stat in ("mean", "std")]]
    selections = metrics.groupby(keys)["source"].agg(_join_sources)
    models = stats["sources"].groupby(keys).agg(";".join)
    sources = pd.concat([selections, models], axis=1).agg(";".join, axis=1).rename("sources")
    return selection.join(rung_columns).join(sources).reset_index()


def format_ablation(table: pd.DataFrame, *, rungs: list[str], decimals: int) -> pd.DataFrame:
    """Readable ablation ladder: the setting, out-of-fold accuracy, precision (lowest class) / recall, pseudo-label
    accuracy (all; on wrong labels; on right ones) and "mean ± std" per rung under its title
    (:data:`enkcvs.report.titles.RUNG_COLUMNS`)."""

    def pct(value: float) -> str:
        return "—" if pd.isna(value) else f"{value:.{decimals}f}"

    readable = pd.DataFrame(
        {
            "dataset": table["dataset"],
            "noise": [f"{kind} {rate:g}" for kind, rate in zip(table["noise_kind"], table["noise_rate"])],
            "seeds": table["seeds"],
            "out-of-fold acc. %": [pct(value) for value in table["oof_accuracy"]],
            "precision (lowest class) / recall %": [
                f"{pct(p)} ({pct(w)}) / {pct(r)}"
                for p, w, r in zip(table["precision"], table["worst_class_precision"], table["recall"])
            ],
            "not selected (wrong label)": [
                f"{n:.0f} ({w:.0f})" for n, w in zip(table["non_selected"], table["non_selected_noisy"])
            ],
            "pseudo label acc. % (on wrong / right labels)": [
                f"{pct(a)} ({pct(w)} / {pct(r)})"
                for a, w, r in zip(
                    table["pseudo_accuracy"], table["pseudo_accuracy_noisy"], table["pseudo_accuracy_clean"]
                )
            ],
        }
    )
    for method in rungs:
        readable[RUNG_COLUMNS[method]] = [
            "missing" if pd.isna(mean) else f"{mean:.{decimals}f} ± {'n/a' if pd.isna(std) else f'{std:.{decimals}f}'}"
            for mean, std in zip(table[f"{method}_mean"], table[f"{method}_std"])
        ]
    return readable


def sensitivity_table(metrics: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """Figure 1's points: per noise setting and (K, M, t), the mean and std over seeds (ddof=1; NaN for one seed) of
    precision, recall and the SS-only model's test accuracy (%), with the number of seeds."""
    keys = ["noise", "K", "M", "t"]
    frame = metrics[keys + ["seed", "precision", "recall"]].merge(
        results[keys + ["seed", "test_accuracy"]].rename(columns={"test_accuracy": "accuracy"}),
        on=keys + ["seed"],
        how="left",
        validate="one_to_one",
    )
    values = ["precision", "recall", "accuracy"]
    frame[values] *= 100.0
    table = frame.groupby(keys)[values].agg(["mean", "std"])
    table.columns = [f"{value}_{stat}" for value, stat in table.columns]
    return table.join(frame.groupby(keys)["seed"].nunique().rename("seeds")).reset_index()


def published_table1(*, noises: list[str], paper_name: str) -> pd.DataFrame:
    """The paper's Table 1 numbers of the paper dataset ``paper_name`` at each of the noise settings ``noises``
    (repeats ignored): columns ``noise``, ``metric`` and ``value`` (%), at the paper's K = 10, M = 5, t = 2."""
    paper = published_results().query("table == 1 and dataset == @paper_name")
    specs = {noise: parse_noise(noise) for noise in dict.fromkeys(noises)}
    cells = [
        paper[(paper["noise_kind"] == spec.kind) & np.isclose(paper["noise_rate"], spec.rate)].assign(noise=noise)
        for noise, spec in specs.items()
    ]
    return pd.concat(cells)[["noise", "metric", "value"]]


def resource_table(benchmarks: dict[str, list[PathLike]]) -> pd.DataFrame:
    """Time and memory per rule from Snakemake's ``benchmark:`` files (tab-separated, one row per job run).

    Parameters
    ----------
    benchmarks : mapping of str to list of path
        Rule name to its jobs' benchmark files; rules without files are left out.

    Returns
    -------
    pandas.DataFrame
        One row per rule, in the given order: ``rule``, ``jobs``, ``wall_s_total``, ``wall_s_mean``, ``wall_s_max``,
        ``max_rss_mb_mean``, ``max_rss_mb_max`` (Snakemake's ``max_rss``; NaN where a job ended before it was
        sampled) and ``cpu_s_total``.
    """
    rows = []
    for rule, paths in benchmarks.items():
        if not paths:
            continue
        jobs = pd.concat([pd.read_csv(path, sep="\t") for path in paths], ignore_index=True)
        wall, rss = jobs["s"].astype(float), pd.to_numeric(jobs["max_rss"], errors="coerce")
        rows.append(
            {
                "rule": rule,
                "jobs": len(paths),
                "wall_s_total": wall.sum(),
                "wall_s_mean": wall.mean(),
                "wall_s_max": wall.max(),
                "max_rss_mb_mean": rss.mean(),
                "max_rss_mb_max": rss.max(),
                "cpu_s_total": pd.to_numeric(jobs["cpu_time"], errors="coerce").sum(),
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "rule",
            "jobs",
            "wall_s_total",
            "wall_s_mean",
            "wall_s_max",
            "max_rss_mb_mean",
            "max_rss_mb_max",
            "cpu_s_total",
        ],
    )


def theory_table(metrics: pd.DataFrame) -> pd.DataFrame:
    """One row per selection: measured precision and recall, the corrected Theorem 1's, the gaps (Theorem 1 minus
    measured) and how dependent the M iterations are (:func:`enkcvs.method.theory.iteration_dependence`; empty
    at M = 1), all in %."""
    percent = {
        "precision": "precision",
        "recall": "recall",
        "theorem1_precision": "theorem1.precision",
        "theorem1_recall": "theorem1.recall",
        **{
            name: f"iteration_dependence.{name}"
            for name in ("agreement", "agreement_independent", "all_wrong", "all_wrong_independent")
        },
    }
    table = metrics[["dataset", "noise", "seed", "K", "M", "t"]].copy()
    for column, source in percent.items():
        table[column] = 100.0 * metrics[source] if source in metrics else np.nan
    table["precision_gap"] = table["theorem1_precision"] - table["precision"]
    table["recall_gap"] = table["theorem1_recall"] - table["recall"]
    table["sources"] = metrics["source"]
    return table.sort_values(["dataset", "noise", "seed", "K", "M", "t"], ignore_index=True)


CONFIDENT_LEARNING_SCORES = ["kept_precision", "kept_recall", "flagged_precision", "flagged_recall"]


def _means_over_seeds(frames: list[pd.DataFrame], **aggregations: tuple[str, str]) -> pd.DataFrame:
    """Per-setting comparison tables joined and averaged over seeds: one row per dataset, noise and method (methods in
    their first order of appearance), with ``seeds`` and the named pandas ``aggregations``."""
    frame = pd.concat(frames, ignore_index=True)
    order = list(dict.fromkeys(frame["method"]))
    table = (
        frame.groupby(["dataset", "noise", "method"], sort=False)
        .agg(seeds=("seed", "nunique"), **aggregations)
        .reset_index()
    )
    table["method"] = pd.Categorical(table["method"], categories=order, ordered=True)
    return table.sort_values(["dataset", "noise", "method"], ignore_index=True).astype({"method": str})


def confident_learning_table(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """The E-NKCVS vs confident-learning comparison: per dataset, noise and method, the mean over seeds of the kept
    and flagged sets' sizes, precision and recall (fractions), with the number of seeds."""
    return _means_over_seeds(
        frames,
        kept=("kept", "mean"),
        flagged=("flagged", "mean"),
        **{score: (score, "mean") for score in CONFIDENT_LEARNING_SCORES},
    )


RANKING_SCORES = ["precision_at_20", "precision_at_100", "precision_at_errors", "auroc", "auprc"]
#: :func:`ranking_table`'s columns of the per-seed AUPRC differences to :data:`LABEL_QUALITY` (fractions).
RANKING_GAPS = ["auprc_gap_mean", "auprc_gap_std"]


def ranking_table(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """How well each score ranks the true label errors first: per dataset, noise and score, the mean over seeds of
    precision at 20, at 100 and at the number of errors, AUROC and AUPRC (fractions), with the number of seeds and
    the mean number of errors; and, for a paired test over the seeds, :data:`LABEL_QUALITY`'s AUPRC minus the
    score's at each seed (both read the same probabilities and labels there), its mean ``auprc_gap_mean`` and std
    ``auprc_gap_std`` (ddof=1; NaN for one seed and for the reference itself). ``frames``:
    :func:`enkcvs.labelissues.confident.compare_rankings` tables with their setting."""
    frame = pd.concat(frames, ignore_index=True)
    setting = ["dataset", "noise", "seed"]
    reference = frame[frame["method"] == LABEL_QUALITY].set_index(setting)["auprc"]
    others = frame[frame["method"] != LABEL_QUALITY]
    gaps = others.assign(gap=reference.reindex(pd.MultiIndex.from_frame(others[setting])).to_numpy() - others["auprc"])
    gaps = gaps.groupby(["dataset", "noise", "method"], sort=False)["gap"].agg(
        auprc_gap_mean="mean", auprc_gap_std="std"
    )
    table = _means_over_seeds([frame], errors=("errors", "mean"), **{s: (s, "mean") for s in RANKING_SCORES})
    return table.join(gaps, on=["dataset", "noise", "method"])


def noise_records(*, labels: list[PathLike], datasets: list[str]) -> pd.DataFrame:
    """One row per noisy-label table of the ``inject_noise`` rule (columns ``sample``, ``true``, ``given``; metadata
    ``noise``, ``seed``, ``asymmetric_map``, ``mapping``, ``num_classes``), ``real`` noise left out (true labels
    unknown).

    Parameters
    ----------
    labels : list of path
        The noisy-label parquet files.
    datasets : list of str
        The dataset of each file, in the same order (the files do not name it).

    Returns
    -------
    pandas.DataFrame
        ``dataset``, ``noise``, ``noise_kind``, ``noise_rate`` (epsilon), ``seed``, ``asymmetric_map`` (the map's
        config name; ``"none"`` for symmetric noise), ``classes`` (Q), ``flipped_classes`` (the source classes of
        the noise: Q for symmetric noise, the map's sources otherwise), ``samples`` (N), ``wrong`` (labels with
        given != true), ``wrong_share`` (wrong / N, %: :func:`enkcvs.method.noise.actual_noise_rate` x 100) and
        ``source`` (the file).
    """
    if len(labels) != len(datasets):
        raise ValueError(f"{len(labels)} noisy-label files but {len(datasets)} dataset names: one name per file")
    rows = []
    for path, dataset in zip(labels, datasets):
        frame, meta = read_table(path)
        spec = parse_noise(meta["noise"])
        if spec.kind == "real":
            continue
        classes = int(meta["num_classes"])
        wrong = int((frame["given"] != frame["true"]).sum())
        rows.append(
            {
                "dataset": dataset,
                "noise": meta["noise"],
                "noise_kind": spec.kind,
                "noise_rate": spec.rate,
                "seed": int(meta["seed"]),
                "asymmetric_map": meta["asymmetric_map"] if spec.kind == "asym" else "none",
                "classes": classes,
                "flipped_classes": len(meta["mapping"]) if spec.kind == "asym" else classes,
                "samples": len(frame),
                "wrong": wrong,
                "wrong_share": 100.0 * actual_noise_rate(given=frame["given"], true=frame["true"]),
                "source": str(path),
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "dataset",
            "noise",
            "noise_kind",
            "noise_rate",
            "seed",
            "asymmetric_map",
            "classes",
            "flipped_classes",
            "samples",
            "wrong",
            "wrong_share",
            "source",
        ],
    )


def noise_table(records: pd.DataFrame) -> pd.DataFrame:
    """The share of wrong labels behind each injected noise setting, and co-teaching's forget rate under either
    reading of ``datasets.<d>.baselines.coteaching.forget_rate``.

    Exactly round(epsilon * n_c) labels of each source class c are flipped (:func:`enkcvs.method.noise.inject_noise`),
    so the share is epsilon up to rounding under symmetric noise, and sum over the map's source classes of
    round(epsilon * n_c) / N under an asymmetric map: below epsilon (MNIST's and CIFAR-10's maps flip 5 of 10
    classes, about epsilon / 2). With exact counts it is the same for every seed, unless the map itself is drawn
    per seed.

    Parameters
    ----------
    records : pandas.DataFrame
        :func:`noise_records`' rows.

    Returns
    -------
    pandas.DataFrame
        One row per dataset and noise setting (symmetric before asymmetric, rates ascending): ``dataset``,
        ``noise_kind``, ``noise_rate``, ``asymmetric_map``, ``flipped_classes``, ``classes``, ``seeds``,
        ``samples`` (N, mean over seeds), ``wrong_share_mean``, ``wrong_share_min``, ``wrong_share_max`` (% over
        seeds), ``forget_rate_nominal`` (``nominal``: epsilon), ``forget_rate_actual`` (``actual``: the share of
        wrong labels as a fraction, mean over seeds; each seed's job forgets its own) and ``sources``.
    """
    table = (
        records.groupby(["dataset", "noise_kind", "noise_rate"], sort=False)
        .agg(
            asymmetric_map=("asymmetric_map", "first"),
            flipped_classes=("flipped_classes", "max"),
            classes=("classes", "first"),
            seeds=("seed", "nunique"),
            samples=("samples", "mean"),
            wrong_share_mean=("wrong_share", "mean"),
            wrong_share_min=("wrong_share", "min"),
            wrong_share_max=("wrong_share", "max"),
            sources=("source", _join_sources),
        )
        .reset_index()
    )
    table.insert(table.columns.get_loc("sources"), "forget_rate_nominal", table["noise_rate"])
    table.insert(table.columns.get_loc("sources"), "forget_rate_actual", table["wrong_share_mean"] / 100.0)
    order = table["noise_kind"].map({"sym": 0, "asym": 1})
    return (
        table.assign(_order=order)
        .sort_values(["dataset", "_order", "noise_rate"], ignore_index=True)
        .drop(columns="_order")
    )


def format_noise_table(table: pd.DataFrame, *, decimals: int) -> pd.DataFrame:
    """Readable :func:`noise_table`: the noise setting, the map and the classes it flips, the share of wrong labels
    (% to ``decimals`` digits; "mean (min-max)" where the seeds differ) and both forget rates (fractions, to
    ``decimals + 2`` digits, as precise as the share)."""

    def spread(mean: float, low: float, high: float, places: int) -> str:
        text = f"{mean:.{places}f}"
        return text if np.isclose(low, high) else f"{text} ({low:.{places}f}-{high:.{places}f})"

    return pd.DataFrame(
        {
            "dataset": table["dataset"],
            "noise": table["noise_kind"],
            "rate": [f"{rate:g}" for rate in table["noise_rate"]],
            "asymmetric map": table["asymmetric_map"],
            "flipped classes": [
                f"{flipped} of {classes}" for flipped, classes in zip(table["flipped_classes"], table["classes"])
            ],
            "seeds": table["seeds"],
            "wrong labels %": [
                spread(mean, low, high, decimals)
                for mean, low, high in zip(
                    table["wrong_share_mean"], table["wrong_share_min"], table["wrong_share_max"]
                )
            ],
            "forget rate nominal": [f"{rate:g}" for rate in table["forget_rate_nominal"]],
            "forget rate actual": [
                spread(mean / 100, low / 100, high / 100, decimals + 2)
                for mean, low, high in zip(
                    table["wrong_share_mean"], table["wrong_share_min"], table["wrong_share_max"]
                )
            ],
        }
    )
