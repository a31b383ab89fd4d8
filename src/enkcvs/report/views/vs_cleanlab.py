"""E-NKCVS's command beside cleanlab on flipped data (view ``vs-cleanlab``: the block ``<file stem>/vs-cleanlab`` of a
JSON that ``benchmarks/find_issues_vs_cleanlab.py`` wrote under ``benchmarks/results/``): per data set, both lists'
F1 and both rankings' P@k as means over the seeds; per kind of data and over all, E-NKCVS's lead ordered by the paired
t-test over the (data, seed) pairs (:func:`enkcvs.report.views.common.paired_side`)."""

import json
from pathlib import Path

import numpy as np
import pandas as pd

from enkcvs.report.views.common import SIGNIFICANCE, paired_side

#: What is compared: each run's field for E-NKCVS and cleanlab, and its name in the block.
MEASURES = {
    "f1": "review list F1 against cleanlab's flags' F1",
    "precision_at_errors": "ranking's P@k against cleanlab's",
}


def _frame(runs: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "kind": run["kind"],
                "data": run["data"],
                "seed": run["seed"],
                "errors": run["errors"],
                **{f"{measure} {side}": run[side][measure] for measure in MEASURES for side in ("enkcvs", "cleanlab")},
            }
            for run in runs
        ]
    )


def _means(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per data set: its flips and each measure of both methods, means over the seeds."""
    table = frame.groupby(["kind", "data"], sort=False).agg(
        seeds=("seed", "count"),
        errors=("errors", "mean"),
        **{column: (column, "mean") for column in frame.columns if column.endswith(("enkcvs", "cleanlab"))},
    )
    return table.reset_index().rename(
        columns={
            "errors": "flips (mean)",
            "f1 enkcvs": "F1 E-NKCVS",
            "f1 cleanlab": "F1 cleanlab",
            "precision_at_errors enkcvs": "P@k E-NKCVS",
            "precision_at_errors cleanlab": "P@k cleanlab",
        }
    )


def verdicts(frame: pd.DataFrame) -> pd.DataFrame:
    """Per kind of data and over all (``all``), per measure: E-NKCVS's lead (mean of the paired differences), the
    pairs and the side of the paired t-test with its p-value."""
    rows = []
    for kind, pairs in [*frame.groupby("kind", sort=False), ("all", frame)]:
        for measure, name in MEASURES.items():
            lead = (pairs[f"{measure} enkcvs"] - pairs[f"{measure} cleanlab"]).to_numpy()
            std = float(np.std(lead, ddof=1)) if len(lead) > 1 else float("nan")
            side, p = paired_side(mean=float(lead.mean()), std=std, seeds=len(lead))
            rows.append(
                {
                    "data": kind,
                    "measure": name,
                    "pairs": len(lead),
                    "lead": float(lead.mean()),
                    "E-NKCVS is": f"{side} cleanlab (p = {p:.2g})",
                }
            )
    return pd.DataFrame(rows)


def vs_cleanlab_view(path: Path, *, paper_config: Path | None = None) -> str:
    """The block of one comparison's JSON ``path``; ``paper_config`` is unused (every file view gets it)."""
    del paper_config
    bench = json.loads(Path(path).read_text())
    settings, frame = bench["settings"], _frame(bench["runs"])
    return (
        f"`enkcvs find-issues --data` against cleanlab, {bench['date'][:10]} (`{Path(path).name}`) on "
        f"{bench['cpu']} ({', '.join(bench['cpu_flags']) or 'none of the listed flags'}), "
        f"{bench['seconds']:.0f} s: noise {settings['noise']}, seeds {', '.join(map(str, settings['seeds']))}; "
        f"E-NKCVS with the command's defaults on the files, cleanlab's `find_label_issues` "
        f"({settings['cleanlab_filter']}) and `get_label_quality_scores` on {settings['K']}-fold cross-validated "
        f"probabilities of {settings['cleanlab_model']} over the same inputs. F1 of each list of label errors, "
        "P@k of each ranking at k = the flips; means over the seeds:\n\n"
        f"{_means(frame).to_markdown(index=False, floatfmt=('', '', '', '.1f', *['.3f'] * 4))}\n\n"
        f"E-NKCVS's lead (mean difference over the (data, seed) pairs), ordered by the paired t-test at "
        f"p < {SIGNIFICANCE}:\n\n"
        f"{verdicts(frame).to_markdown(index=False, floatfmt='+.3f')}\n"
    )
