"""Views of a recorded run's ablation ladder: what each ingredient adds, its extremes over the settings, and two runs'
ladders side by side."""

from pathlib import Path

import numpy as np
import pandas as pd

from enkcvs.recording.provenance import recorded_config
from enkcvs.report.comparison import method_rank
from enkcvs.report.titles import METHOD_TITLES, RUNG_NAMES
from enkcvs.report.views.common import SETTING, setting_labels

#: What a step between two rungs of the ablation ladder measures, where it has a name: ``(later, earlier)``.
LADDER_STEPS = {
    ("ce", "ce_true"): "noise",
    ("ce_mixup", "ce"): "mixup",
    ("cs_only", "ce"): "a perfect selection",
    ("cs_only", "ce_mixup"): "a perfect selection",
    ("css_only", "cs_only"): "SS's missed clean samples",
    ("ss_only", "css_only"): "SS's wrong labels",
    ("ss_pseudo", "ss_only"): "pseudo labels",
    ("ss_pseudo_weighted", "ss_pseudo"): "the full loss's normalisation and gamma",
    ("enkcvs", "ss_pseudo_weighted"): "beta",
    ("enkcvs", "ss_pseudo"): "beta and gamma",
}


def _step_title(later: str, earlier: str) -> str:
    name = LADDER_STEPS.get((later, earlier))
    difference = " - ".join(RUNG_NAMES.get(rung, rung) for rung in (later, earlier))
    return f"{name} ({difference})" if name else difference


def ladder_steps(run: Path) -> str:
    """The ablation ladder as steps: how many points each ingredient adds (or loses), per setting: one step between
    each two neighbouring rungs of the run's ladder (its ``*_mean`` columns in order), then the last rung against the
    first."""
    table = pd.read_csv(run / "ablation.csv")
    rungs = [column.removesuffix("_mean") for column in table.columns if column.endswith("_mean")]
    steps = {_step_title(later, earlier): (later, earlier) for earlier, later in zip(rungs, rungs[1:])}
    steps[_step_title(rungs[-1], rungs[0])] = (rungs[-1], rungs[0])
    frame = pd.DataFrame({"setting": setting_labels(table)})
    for title, (a, b) in steps.items():
        frame[title] = [f"{x:+.2f}" for x in table[f"{a}_mean"] - table[f"{b}_mean"]]
    return frame.to_markdown(index=False) + "\n"


def _training_samples(run: Path) -> dict[str, int]:
    """Per dataset of a recorded run, its training samples (``datasets.csv``; none where the run has no such file)."""
    path = run / "datasets.csv"
    return pd.read_csv(path).set_index("dataset")["train"].to_dict() if path.is_file() else {}


def ladder_beside(first: Path, second: Path) -> str:
    """The ablation ladders of two recorded runs side by side on the settings they share (view
    ``<second>/ladder-beside:<first>``): each run's training samples, fold models, selection, the two losses inside
    SS, the oracle and E-NKCVS, and the methods of their Table 2 that are no rung of the ladder (the baselines). A
    setting is shared when the noise matches and the datasets are the same or stand for the same paper dataset (the
    default's 4,000-image MNIST sample beside the full MNIST: what the data size alone changes)."""
    keys = ["compared", "noise_kind", "noise_rate"]
    rows = []
    ladders = {run: pd.read_csv(run / "ablation.csv") for run in (first, second)}
    rungs = {
        column.removesuffix("_mean") for ladder in ladders.values() for column in ladder if column.endswith("_mean")
    }
    both = pd.concat([pd.read_csv(run / "table2.csv") for run in (first, second)])
    rank = method_rank(both)
    baselines = sorted((m for m in rank if m not in rungs), key=rank.get)
    for order, run in enumerate((first, second)):
        ladder, results = ladders[run], pd.read_csv(run / "table2.csv")
        papers = (
            results.dropna(subset=["paper_dataset"]).set_index("dataset")["paper_dataset"].to_dict()
            if "paper_dataset" in results
            else {}
        )
        samples = _training_samples(run)
        config = recorded_config(run)
        for row in ladder.itertuples():
            method_means = results[
                (results["dataset"] == row.dataset)
                & (results["noise_kind"] == row.noise_kind)
                & (results["noise_rate"] == row.noise_rate)
            ].set_index("method")["mean"]
            rows.append(
                {
                    "compared": papers.get(row.dataset, row.dataset),
                    "order": order,
                    "dataset": row.dataset,
                    "noise_kind": row.noise_kind,
                    "noise_rate": row.noise_rate,
                    "run": run.name,
                    "model": config["datasets"][row.dataset]["recipe"]["model"],
                    "training samples": samples.get(row.dataset, "n/a"),
                    "seeds": row.seeds,
                    "out-of-fold acc. %": row.oof_accuracy,
                    "precision / recall %": f"{row.precision:.1f} / {row.recall:.1f}",
                    "SS's missed clean samples": row.css_only_mean - row.cs_only_mean,
                    "SS's wrong labels": row.ss_only_mean - row.css_only_mean,
                    "CS only": row.cs_only_mean,
                    "E-NKCVS": row.enkcvs_mean,
                    **{METHOD_TITLES.get(m, m): method_means.get(m, np.nan) for m in baselines},
                }
            )
    frame = pd.DataFrame(rows)
    frame = frame[frame.groupby(keys)["run"].transform("nunique") == 2]
    if frame.empty:
        return f"`{second.name}` and `{first.name}` share no setting of the ablation ladder.\n"
    frame = frame.sort_values([*keys, "order"], kind="stable")
    frame.insert(0, "setting", setting_labels(frame))
    frame = frame.drop(columns=[*keys, "order", "dataset"])
    return frame.to_markdown(index=False, floatfmt=".1f") + "\n"


#: The selection's and the pseudo labels' columns of ``ablation.csv`` that :func:`ladder_extremes` spans, titled.
SELECTION_QUANTITIES = {
    "oof_accuracy": "out-of-fold accuracy of the fold models (%)",
    "precision": "selection precision (%)",
    "worst_class_precision": "selection precision of its lowest class (%)",
    "recall": "selection recall (%)",
    "pseudo_accuracy_noisy": "pseudo labels right where the given label is wrong (%)",
    "pseudo_accuracy_clean": "pseudo labels equal to a right given label (%)",
}


def _extreme_rows(title: str, values: pd.Series, settings: list[str], spec: str) -> dict:
    values = values.reset_index(drop=True).round(9) + 0.0  # no "-0.00"
    low, high = values.idxmin(), values.idxmax()
    return {
        "quantity": title,
        "lowest": format(values[low], spec),
        "at": settings[low],
        "highest": format(values[high], spec),
        "at ": settings[high],
    }


def ladder_extremes(run: Path) -> str:
    """The lowest and the highest value over the settings of the run's ablation ladder, each with its setting: the
    fold models, the selection and the pseudo labels (``ablation.csv``), every step between neighbouring rungs (as
    :func:`ladder_steps`) and, where the run trained prune-and-retrain, its difference to SS only and to E-NKCVS."""
    table = pd.read_csv(run / "ablation.csv")
    settings = setting_labels(table)
    rows = [
        _extreme_rows(title, table[column], settings, ".1f")
        for column, title in SELECTION_QUANTITIES.items()
        if column in table and table[column].notna().any()
    ]
    rungs = [column.removesuffix("_mean") for column in table.columns if column.endswith("_mean")]
    rows += [
        _extreme_rows(
            f"step: {_step_title(later, earlier)}", table[f"{later}_mean"] - table[f"{earlier}_mean"], settings, "+.2f"
        )
        for earlier, later in zip(rungs, rungs[1:])
    ]
    results = pd.read_csv(run / "table2.csv")
    prune = table.merge(results.query("method == 'cl_prune' and runs > 0")[[*SETTING, "mean"]], on=SETTING)
    if not prune.empty:
        labels = setting_labels(prune)
        rows += [
            _extreme_rows(
                f"CL prune + retrain - {RUNG_NAMES[rung]}", prune["mean"] - prune[f"{rung}_mean"], labels, "+.2f"
            )
            for rung in ("ss_only", "enkcvs")
        ]
    return (
        f"The lowest and the highest over the {len(table)} settings of run `{run.name}`'s ablation ladder "
        "(steps and differences in points of test accuracy):\n\n"
        + pd.DataFrame(rows).to_markdown(index=False, disable_numparse=True)
        + "\n"
    )


def _walk(row, train: int, K: int, ss: float) -> str:
    """One setting of the ladder, walked down in words (:func:`ladder_walk`)."""
    has_mixup = hasattr(row, "ce_mixup_mean")
    base, base_name = (row.ce_mixup_mean, "CE + mixup") if has_mixup else (row.ce_mean, "CE")
    mixup = (
        f"Mixup alone moves CE by {row.ce_mixup_mean - row.ce_mean:+.2f} points ({row.ce_mean:.2f} % to "
        f"{row.ce_mixup_mean:.2f} %); a"
        if has_mixup
        else f"CE reaches {row.ce_mean:.2f} %; a"
    )
    missed_clean = row.non_selected - row.non_selected_noisy
    return (
        f"{row.setting}: the fold models, each trained on {K - 1} of the {K} folds of the {train:,} training "
        f"samples, are right on {row.oof_accuracy:.1f} % of the held-out ones, and the selection keeps {ss:,.0f} "
        f"samples, {row.precision:.1f} % of them with their true label ({row.worst_class_precision:.2f} % in its "
        f"worst class) and {row.recall:.1f} % of all clean samples. {mixup} perfect selection would add "
        f"{row.cs_only_mean - base:+.2f} over {base_name} (CS only, {row.cs_only_mean:.2f} %). The clean samples "
        f"the selection misses change that by {row.css_only_mean - row.cs_only_mean:+.2f} points and the wrong "
        f"labels it keeps by {row.ss_only_mean - row.css_only_mean:+.2f}, so SS alone reaches "
        f"{row.ss_only_mean:.2f} %. The pseudo labels, right on {row.pseudo_accuracy_noisy:.1f} % of the "
        f"non-selected samples whose given label is wrong and on {row.pseudo_accuracy_clean:.1f} % of the "
        f"{missed_clean:,.0f} clean ones the selection missed, change it by "
        f"{row.ss_pseudo_mean - row.ss_only_mean:+.2f}, the full loss's normalisation and gamma by "
        f"{row.ss_pseudo_weighted_mean - row.ss_pseudo_mean:+.2f} and beta by "
        f"{row.enkcvs_mean - row.ss_pseudo_weighted_mean:+.2f}: E-NKCVS reaches {row.enkcvs_mean:.2f} %, "
        f"{row.enkcvs_mean - row.ss_only_mean:+.2f} against SS alone."
    )


def ladder_walk(run: Path) -> str:
    """The ablation ladder walked down in words, one paragraph per setting (view ``ladder-walk``): the fold models,
    the selection, and what each rung adds, in points of test accuracy (means over seeds)."""
    table = pd.read_csv(run / "ablation.csv")
    table["setting"] = setting_labels(table)
    config = recorded_config(run)
    samples = _training_samples(run)
    paragraphs = []
    for row in table.itertuples(index=False):
        selection = {**config.get("selection", {}), **(config["datasets"][row.dataset].get("selection") or {})}
        train = int(samples[row.dataset])
        paragraphs.append(_walk(row, train, int(selection["K"]), train - row.non_selected))
    return "\n\n".join(paragraphs) + "\n"
