"""What the review-list benchmark measured (view ``review-list``: the block ``<file stem>/review-list`` of a JSON that
``benchmarks/review_list.py`` wrote under ``benchmarks/results/``): per kind of data, the review list, cleanlab's
``find_label_issues`` and the plain flag (not kept) as lists of label errors, and each score's ranking of the errors."""

import json
from pathlib import Path

import pandas as pd


def _sets(runs: list[dict]) -> pd.DataFrame:
    """One row per kind of data and set: its length, precision, recall and F1 as means over the seeds, and the seeds
    on which it is at least as precise and finds at least as many errors as cleanlab's, or has the higher F1."""
    rows = [
        {"data": run["kind"], "seed": run["seed"], "errors": run["errors"], **row}
        for run in runs
        for row in run["sets"]
    ]
    frame = pd.DataFrame(rows)
    cleanlab = frame[frame["set"].str.startswith("cleanlab")].set_index(["data", "seed"])
    against = cleanlab.reindex(pd.MultiIndex.from_frame(frame[["data", "seed"]]))
    frame["meets"] = (frame["precision"].to_numpy() >= against["precision"].to_numpy()) & (
        frame["recall"].to_numpy() >= against["recall"].to_numpy()
    ) | (frame["f1"].to_numpy() > against["f1"].to_numpy())
    table = (
        frame.groupby(["data", "set"], sort=False)
        .agg(
            errors=("errors", "mean"),
            listed=("listed", "mean"),
            precision=("precision", "mean"),
            recall=("recall", "mean"),
            f1=("f1", "mean"),
            meets=("meets", "sum"),
            seeds=("seed", "count"),
        )
        .reset_index()
    )
    table["at or above cleanlab"] = [
        f"{m} of {s}" if not name.startswith("cleanlab") else ""
        for m, s, name in zip(table["meets"], table["seeds"], table["set"])
    ]
    return table.drop(columns=["meets", "seeds"]).rename(columns={"errors": "true errors"})


def _rankings(runs: list[dict]) -> pd.DataFrame:
    """Average precision of each score against the true flips, mean over the seeds: one row per kind of data."""
    rows = [
        {"data": run["kind"], "score": row["method"], "auprc": row["auprc"]} for run in runs for row in run["rankings"]
    ]
    table = pd.DataFrame(rows).pivot_table(index="data", columns="score", values="auprc", sort=False)
    return table.reset_index().rename_axis(columns=None)


def review_list_view(path: Path, *, paper_config: Path | None) -> str:
    """The block of one review-list benchmark's JSON ``path``; ``paper_config`` is unused (every file view gets it)."""
    del paper_config
    bench = json.loads(Path(path).read_text())
    settings = bench["settings"]
    data = "; ".join(f"{kind}: {what}" for kind, what in bench["data"].items())
    return (
        f"Review-list benchmark of {bench['date'][:10]} (`{Path(path).name}`) on {bench['cpu']} "
        f"({', '.join(bench['cpu_flags']) or 'none of the listed flags'}), {bench['seconds']:.0f} s: noise "
        f"{settings['noise']}, seeds {', '.join(map(str, settings['seeds']))}, out-of-fold probabilities from "
        f"M = {settings['M']} repetitions of K = {settings['K']}-fold cross-validation "
        f"({settings['model']}); {data}. Each set as a list of label errors (precision: flipped / listed; recall: "
        "flipped listed / flipped), means over the seeds; the last column counts the seeds on which the set is at "
        "least as precise as cleanlab's with recall no lower, or has the higher F1:\n\n"
        f"{_sets(bench['runs']).to_markdown(index=False, floatfmt='.3f')}\n\n"
        "Average precision of each ranking against the flipped labels (mean over the seeds; cleanlab's scores on "
        "the mean of the M repetitions' probabilities):\n\n"
        f"{_rankings(bench['runs']).to_markdown(index=False, floatfmt='.3f')}\n"
    )
