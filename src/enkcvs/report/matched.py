"""E-NKCVS against every other method of a run, paired by seed (results/report/matched.*): at each seed both trained
on the same noisy labels, so the seed's difference of test accuracies is one paired observation. Per setting and
method: the mean of the paired differences (E-NKCVS minus the method), its paired t interval and the paired t-test's
p-value (:func:`enkcvs.report.statistics.paired_difference`), Holm-adjusted over the table's rows, one family
(:func:`enkcvs.report.statistics.ordering_verdicts`). The baselines matched on what E-NKCVS gets (mixup, its training
budget, a cross-validated selection) stand in it beside the paper's."""

import numpy as np
import pandas as pd

from enkcvs.report.comparison import NOISE_TITLES, format_mean_std, format_number, noise_sort, rate_label
from enkcvs.report.statistics import CONFIDENCE, ordering_verdicts, paired_difference
from enkcvs.report.titles import METHOD_TITLES

#: The method every other is compared with.
REFERENCE = "enkcvs"
#: A verdict's side as the table phrases it.
SIDES = {"above": "above", "below": "below", "unordered": "unordered", "untested": "untested (one seed)"}
SETTING = ["dataset", "noise_kind", "noise_rate"]


def paired_leads(results: pd.DataFrame, *, methods: list[str]) -> pd.DataFrame:
    """E-NKCVS's lead over each of ``methods`` per setting, from final-model records
    (:func:`enkcvs.report.tables.collect_records`: ``dataset``, ``noise_kind``, ``noise_rate``, ``method``, ``seed``,
    ``test_accuracy``, ``source``).

    Returns
    -------
    One row per setting and method (settings in the paper's order, methods in the order given; E-NKCVS and methods
    without a seed shared with it left out): the setting, ``method``, ``seeds`` (pairs), ``enkcvs_mean`` and
    ``method_mean`` (%, over the paired seeds), ``lead`` (mean of the paired differences, points), ``low`` and
    ``high`` (its :data:`~enkcvs.report.statistics.CONFIDENCE` paired t interval), ``p`` (paired t-test), ``p_holm``
    (Holm-adjusted over the rows), ``side`` (``above``, ``below``, ``unordered`` at the Holm-adjusted level;
    ``untested`` for one seed), ``sources``. The interval and p are None where untested.
    """
    accuracy = noise_sort(results.assign(accuracy=100.0 * results["test_accuracy"]), SETTING)
    rows, differences = [], []
    for setting, runs in accuracy.groupby(SETTING, sort=False, dropna=False):
        by_method = {
            method: runs[runs["method"] == method].set_index("seed")[["accuracy", "source"]]
            for method in (REFERENCE, *methods)
        }
        for method in methods:
            if method == REFERENCE:
                continue
            pairs = by_method[REFERENCE].merge(
                by_method[method], left_index=True, right_index=True, suffixes=("_ours", "_theirs")
            )  # the seeds both ran
            if pairs.empty:
                continue
            lead = (pairs["accuracy_ours"] - pairs["accuracy_theirs"]).to_numpy()  # (seeds,)
            std = float(np.std(lead, ddof=1)) if len(lead) > 1 else float("nan")
            differences.append(paired_difference(mean=float(lead.mean()), std=std, seeds=len(lead)))
            rows.append(
                {
                    **dict(zip(SETTING, setting)),
                    "method": method,
                    "seeds": len(lead),
                    "enkcvs_mean": float(pairs["accuracy_ours"].mean()),
                    "method_mean": float(pairs["accuracy_theirs"].mean()),
                    "lead_std": std,
                    "sources": ";".join(sorted([*pairs["source_ours"], *pairs["source_theirs"]])),
                }
            )
    for row, difference, verdict in zip(rows, differences, ordering_verdicts(differences=differences)):
        row.update(
            lead=verdict.gap, low=verdict.low, high=verdict.high, p=difference.p, p_holm=verdict.p, side=verdict.side
        )
    columns = [*SETTING, "method", "seeds", "enkcvs_mean", "method_mean", "lead", "lead_std", "low", "high", "p"]
    return pd.DataFrame(rows, columns=[*columns, "p_holm", "side", "sources"])


def format_leads(table: pd.DataFrame, *, decimals: int) -> pd.DataFrame:
    """:func:`paired_leads` as the Markdown and LaTeX tables show it: the setting, the method's title, the seeds,
    both means, the lead with its interval, the Holm-adjusted p and the verdict."""
    interval = f"{100 * CONFIDENCE:g} % interval"
    return pd.DataFrame(
        {
            "dataset": table["dataset"],
            "noise": [
                f"{NOISE_TITLES.get(k, k)} {rate_label(r)}".strip()
                for k, r in zip(table["noise_kind"], table["noise_rate"])
            ],
            "method": [METHOD_TITLES.get(method, method) for method in table["method"]],
            "seeds": table["seeds"],
            "E-NKCVS": [format_number(value, decimals) for value in table["enkcvs_mean"]],
            "method's": [format_number(value, decimals) for value in table["method_mean"]],
            "E-NKCVS - method": [
                format_mean_std(lead, std, decimals) for lead, std in zip(table["lead"], table["lead_std"])
            ],
            interval: [
                "n/a"
                if pd.isna(low)
                else f"{format_number(low, decimals, sign=True)} to {format_number(high, decimals, sign=True)}"
                for low, high in zip(table["low"], table["high"])
            ],
            "p (Holm)": ["n/a" if pd.isna(p) else f"{p:.2g}" for p in table["p_holm"]],
            "E-NKCVS is": [SIDES[side] for side in table["side"]],
        }
    )
