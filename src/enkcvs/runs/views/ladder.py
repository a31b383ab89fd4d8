"""Views of a recorded run's ablation ladder: what each ingredient adds, and two runs' ladders side by side."""

from pathlib import Path

import numpy as np
import pandas as pd

from enkcvs.report.comparison import method_rank
from enkcvs.report.titles import METHOD_TITLES, RUNG_NAMES
from enkcvs.runs.views.common import setting_labels
from enkcvs.runs.views.provenance import recorded_config


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
    rungs = {column.removesuffix("_mean") for ladder in ladders.values() for column in ladder
             if column.endswith("_mean")}
    both = pd.concat([pd.read_csv(run / "table2.csv") for run in (first, second)])
    rank = method_rank(both)
    baselines = sorted((m for m in rank if m not in rungs), key=rank.get)
    for order, run in enumerate((first, second)):
        ladder, results = ladders[run], pd.read_csv(run / "table2.csv")
        papers = (results.dropna(subset=["paper_dataset"]).set_index("dataset")["paper_dataset"].to_dict()
                  if "paper_dataset" in results else {})
        samples = _training_samples(run)
        config = recorded_config(run)
        for row in ladder.itertuples():
            method_means = results[(results["dataset"] == row.dataset) & (results["noise_kind"] == row.noise_kind)
                                   & (results["noise_rate"] == row.noise_rate)].set_index("method")["mean"]
            rows.append({
                "compared": papers.get(row.dataset, row.dataset), "order": order,
                "dataset": row.dataset, "noise_kind": row.noise_kind, "noise_rate": row.noise_rate,
                "run": run.name, "model": config["datasets"][row.dataset]["recipe"]["model"],
                "training samples": samples.get(row.dataset, "n/a"),
                "seeds": row.seeds, "out-of-fold acc. %": row.oof_accuracy,
                "precision / recall %": f"{row.precision:.1f} / {row.recall:.1f}",
                "SS's missed clean samples": row.css_only_mean - row.cs_only_mean,
                "SS's wrong labels": row.ss_only_mean - row.css_only_mean,
                "CS only": row.cs_only_mean, "E-NKCVS": row.enkcvs_mean,
                **{METHOD_TITLES.get(m, m): method_means.get(m, np.nan) for m in baselines},
            })
    frame = pd.DataFrame(rows)
    frame = frame[frame.groupby(keys)["run"].transform("nunique") == 2]
    if frame.empty:
        return f"`{second.name}` and `{first.name}` share no setting of the ablation ladder.\n"
    frame = frame.sort_values([*keys, "order"], kind="stable")
    frame.insert(0, "setting", setting_labels(frame))
    frame = frame.drop(columns=[*keys, "order", "dataset"])
    return frame.to_markdown(index=False, floatfmt=".1f") + "\n"
