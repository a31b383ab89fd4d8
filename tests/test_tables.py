"""The report's tables as frames (enkcvs.report.tables), on small hand-built records."""

import json

import numpy as np
import pandas as pd
import pytest

from enkcvs.io import write_json, write_table
from enkcvs.method.noise import inject_noise
from enkcvs.method.noise_settings import ASYMMETRIC_MAPS, parse_noise
from enkcvs.report.comparison import NO_NUMBER
from enkcvs.report.output_provenance import DIFFERS_MARK
from enkcvs.report.paper_table2 import compare_table2, format_table2
from enkcvs.report.readings import READINGS
from enkcvs.report.tables import (
    collect_records,
    format_noise_table,
    noise_records,
    noise_table,
    resource_table,
    sensitivity_table,
    table2,
)
from enkcvs.report.titles import METHOD_TITLES


def _sweep_records(seeds=(1, 2)) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Selection metrics and SS-only results of Figure 1's points at the main K = 4, M = 3, t = 2."""
    points = sorted(
        {(K, 1, 1) for K in (2, 3, 4)}
        | {(K, 3, 2) for K in (2, 3, 4)}
        | {(4, M, M - 1) for M in (2, 3, 4)}
        | {(4, 3, t) for t in (1, 2, 3)}
    )
    rng = np.random.default_rng(0)
    rows = [
        {
            "noise": noise,
            "seed": seed,
            "K": K,
            "M": M,
            "t": t,
            "precision": rng.uniform(0.9, 1.0),
            "recall": rng.uniform(0.8, 1.0),
            "test_accuracy": rng.uniform(0.8, 0.95),
        }
        for noise in ("sym0.2", "sym0.8")
        for seed in seeds
        for K, M, t in points
    ]
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
    table = resource_table(
        {"train_fold": [files["a"], files["b"]], "train_final_selected": [files["c"]], "train_final_baseline": []}
    )
    assert table["rule"].tolist() == ["train_fold", "train_final_selected"]  # a rule without jobs is left out
    fold = table.iloc[0]
    assert (fold["jobs"], fold["wall_s_total"], fold["wall_s_mean"], fold["wall_s_max"]) == (2, 6.0, 3.0, 4.0)
    assert (fold["max_rss_mb_mean"], fold["max_rss_mb_max"], fold["cpu_s_total"]) == (
        300.5,
        300.5,
        5.0,
    )  # NA: unsampled


#: Uneven class sizes, so that round(eps * n_c) rounds differently from class to class.
CLASS_SIZES = [23, 37, 41, 18, 29, 52, 33, 26, 44, 31]


def _label_file(path, *, true, noise, seed, asymmetric_map=None, mapping=None, given=None):
    """A noisy-label table as the ``inject_noise`` rule writes it
    (:func:`enkcvs.pipeline.steps.noise.make_noisy_labels`)."""
    spec = parse_noise(noise)
    if given is None:
        given = inject_noise(true, spec=spec, num_classes=10, seed=seed, mapping=mapping)
    if spec.kind == "real":
        true = np.full_like(true, -1)
    frame = pd.DataFrame({"sample": np.arange(len(true)), "true": true, "given": given})
    meta = {
        "noise": noise,
        "seed": seed,
        "asymmetric_map": asymmetric_map,
        "num_classes": 10,
        "mapping": {str(source): target for source, target in sorted((mapping or {}).items())},
    }
    write_table(frame, path, metadata=meta)
    return path


def test_noise_table_shares_of_wrong_labels_and_forget_rates(tmp_path, make_labels):
    true = make_labels(seed=5, n_per_class=CLASS_SIZES, num_classes=10)
    mapping = ASYMMETRIC_MAPS["mnist"]  # 2->7, 3->8, 5<->6, 7->1: 5 of 10 classes flip
    files, datasets = [], []
    for noise in ("asym0.3", "sym0.3", "real"):  # asym first: the table puts sym first all the same
        for seed in (1, 2):
            files.append(
                _label_file(
                    tmp_path / f"{noise}-{seed}.parquet",
                    true=true,
                    noise=noise,
                    seed=seed,
                    asymmetric_map="mnist",
                    mapping=mapping if noise == "asym0.3" else None,
                )
            )
            datasets.append("digits")
    records = noise_records(labels=files, datasets=datasets)
    assert len(records) == 4  # real noise left out: its true labels are unknown
    table = noise_table(records).set_index("noise_kind")
    assert table.index.tolist() == ["sym", "asym"] and (table["seeds"] == 2).all()
    samples = sum(CLASS_SIZES)
    sym, asym = table.loc["sym"], table.loc["asym"]
    # symmetric: every class flips, so the share is the rate up to rounding (half a label per class at most)
    assert sym["wrong_share_mean"] == pytest.approx(100 * sum(round(0.3 * n) for n in CLASS_SIZES) / samples)
    assert abs(sym["wrong_share_mean"] - 30.0) <= 100 * 0.5 * 10 / samples
    assert (sym["asymmetric_map"], sym["flipped_classes"], sym["classes"]) == ("none", 10, 10)
    # asymmetric: only the map's source classes flip, so the share is below the rate
    expected = 100 * sum(round(0.3 * CLASS_SIZES[c]) for c in mapping) / samples
    assert asym["wrong_share_mean"] == pytest.approx(expected) and expected < 20.0
    assert asym["wrong_share_min"] == asym["wrong_share_max"]  # exact per-class counts: the same for every seed
    assert (asym["asymmetric_map"], asym["flipped_classes"]) == ("mnist", 5)
    assert (table["forget_rate_nominal"] == 0.3).all()
    np.testing.assert_allclose(table["forget_rate_actual"], table["wrong_share_mean"] / 100)
    assert asym["sources"].split(";") == sorted(str(tmp_path / f"asym0.3-{seed}.parquet") for seed in (1, 2))
    readable = format_noise_table(table.reset_index(), decimals=2).set_index("noise")
    assert readable.loc["asym", "flipped classes"] == "5 of 10" and readable.loc["sym", "asymmetric map"] == "none"
    assert readable.loc["asym", "wrong labels %"] == f"{expected:.2f}"
    assert readable.loc["asym", "forget rate nominal"] == "0.3"
    assert readable.loc["asym", "forget rate actual"] == f"{expected / 100:.4f}"


def test_noise_table_shows_the_range_where_the_seeds_differ(tmp_path, make_labels):
    true = make_labels(seed=5, n_per_class=10, num_classes=10)
    given = [true.copy(), true.copy()]
    given[0][:10] = (true[:10] + 1) % 10  # seed 1: 10 of 100 wrong; seed 2: 20
    given[1][:20] = (true[:20] + 1) % 10
    files = [
        _label_file(tmp_path / f"seed{seed}.parquet", true=true, given=given[seed - 1], noise="sym0.2", seed=seed)
        for seed in (1, 2)
    ]
    table = noise_table(noise_records(labels=files, datasets=["a", "a"]))
    row = format_noise_table(table, decimals=1).iloc[0]
    assert row["wrong labels %"] == "15.0 (10.0-20.0)" and row["forget rate actual"] == "0.150 (0.100-0.200)"
    with pytest.raises(ValueError, match="one name per file"):
        noise_records(labels=files, datasets=["a"])


def _final(folder, name: str, *, method: str, seed: int, threads: int, K=None, M=None) -> str:
    """A final model's JSON as train_final writes it, at commit abc1234567 (clean), torch 2.11.0, bf16 off."""
    record = {"dataset": "digits", "noise": "sym0.4", "seed": seed, "method": method, "test_accuracy": 0.9}
    record |= {"git": {"commit": "abc1234567", "dirty": False}, "code": "f00d", "versions": {"torch": "2.11.0"}}
    record |= {"bf16": False, "torch_threads": threads} | ({} if K is None else {"K": K, "M": M, "t": 2})
    write_json(record, folder / name)
    return str(folder / name)


def test_table2_names_what_a_cells_outputs_differ_in_and_counts_each_methods_trainings(tmp_path):
    paths = [
        _final(tmp_path, "ce1.json", method="ce", seed=1, threads=2),
        _final(tmp_path, "ce2.json", method="ce", seed=2, threads=8),  # another thread count: marked
        _final(tmp_path, "en1.json", method="enkcvs", seed=1, threads=2, K=4, M=3),
        _final(tmp_path, "en2.json", method="enkcvs", seed=2, threads=2, K=4, M=3),  # alike: not marked
        _final(tmp_path, "incv1.json", method="incv", seed=1, threads=2),
    ]
    table = table2(
        collect_records(paths), methods=["ce", "coteaching", "incv", "enkcvs"], incv_iterations={"digits": 4}
    )
    cells = table.set_index("method")
    assert cells.loc["ce", "differs"] == "threads" and cells.loc["enkcvs", "differs"] == ""
    assert cells.loc["enkcvs", "trainings"] == 13 and cells.loc["ce", "trainings"] == 1
    assert cells.loc["incv", "trainings"] == 9 and pd.isna(cells.loc["coteaching", "trainings"])  # no runs
    seeds = json.loads(cells.loc["ce", "provenance"])
    assert [(fact["seed"], fact["threads"], fact["commit"], fact["precision"]) for fact in seeds] == [
        (1, "2", "abc1234", "float32"),
        (2, "8", "abc1234", "float32"),
    ]
    wide = format_table2(compare_table2(table, paper_names={"digits": None}), decimals=2, bold=None)
    last = wide[wide[("", "reading")] == READINGS["last"]].set_index(("", "method"))
    assert last.loc[METHOD_TITLES["ce"], ("symmetric", "0.4")].endswith(DIFFERS_MARK)
    assert not last.loc[METHOD_TITLES["enkcvs"], ("symmetric", "0.4")].endswith(DIFFERS_MARK)
    assert last.loc[METHOD_TITLES["enkcvs"], ("", "trainings")] == "13"
    assert last.loc[METHOD_TITLES["coteaching"], ("", "trainings")] == NO_NUMBER
