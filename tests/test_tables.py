"""The report's tables as frames (enkcvs.tables), on small hand-built records."""

import numpy as np
import pandas as pd
import pytest

from enkcvs.tables import resource_table, sensitivity_table


def _sweep_records(seeds=(1, 2)) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Selection metrics and SS-only results of Figure 1's points at the main K = 4, M = 3, t = 2."""
    points = sorted({(K, 1, 1) for K in (2, 3, 4)} | {(K, 3, 2) for K in (2, 3, 4)} | {(4, M, M - 1) for M in (2, 3, 4)}
                    | {(4, 3, t) for t in (1, 2, 3)})
    rng = np.random.default_rng(0)
    rows = [{"noise": noise, "seed": seed, "K": K, "M": M, "t": t, "precision": rng.uniform(0.9, 1.0),
             "recall": rng.uniform(0.8, 1.0), "test_accuracy": rng.uniform(0.8, 0.95)}
            for noise in ("sym0.2", "sym0.8") for seed in seeds for K, M, t in points]
    frame = pd.DataFrame(rows)
    return frame.drop(columns="test_accuracy"), frame.drop(columns=["precision", "recall"])


def test_sensitivity_table_is_mean_and_std_over_seeds():
    metrics, results = _sweep_records()
    table = sensitivity_table(metrics, results)
    point = (metrics["noise"] == "sym0.8") & (metrics["K"] == 3) & (metrics["M"] == 1)
    row = table[(table["noise"] == "sym0.8") & (table["K"] == 3) & (table["M"] == 1)].iloc[0]
    assert row["precision_mean"] == pytest.approx(100 * metrics.loc[point, "precision"].mean())
    assert row["recall_std"] == pytest.approx(100 * metrics.loc[point, "recall"].std(ddof=1))
    assert row["accuracy_mean"] == pytest.approx(100 * results.loc[point, "test_accuracy"].mean())
    assert row["seeds"] == 2 and len(table) == 2 * 10  # 10 distinct (K, M, t) per noise


def test_resource_table_sums_and_ranges_the_benchmark_files(tmp_path):
    header = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
    files = {}
    for name, (seconds, rss, cpu) in {"a": (2.0, 300.5, 1.5), "b": (4.0, "NA", 3.5), "c": (1.0, 100.0, 0.9)}.items():
        files[name] = tmp_path / f"{name}.tsv"
        files[name].write_text(header + f"{seconds}\t0:00:0{int(seconds)}\t{rss}\t1\t1\t1\t0\t0\t50\t{cpu}\n")
    table = resource_table({"train_fold": [files["a"], files["b"]], "train_final_selected": [files["c"]],
                            "train_final_baseline": []})
    assert table["rule"].tolist() == ["train_fold", "train_final_selected"]  # a rule without jobs is left out
    fold = table.iloc[0]
    assert (fold["jobs"], fold["wall_s_total"], fold["wall_s_mean"], fold["wall_s_max"]) == (2, 6.0, 3.0, 4.0)
    assert (fold["max_rss_mb_mean"], fold["max_rss_mb_max"], fold["cpu_s_total"]) == (300.5, 300.5, 5.0)  # NA: unsampled
