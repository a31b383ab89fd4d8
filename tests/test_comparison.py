"""Reproduced-vs-published tables on small hand-built frames (published numbers come from the package data)."""

import numpy as np
import pandas as pd
import pytest

from enkcvs.data.datasets import Dataset
from enkcvs.report.dataset_summary import dataset_summary, describe_dataset
from enkcvs.report.paper_table1 import compare_table1, format_table1
from enkcvs.report.paper_table2 import compare_table2, format_table2
from enkcvs.report.paper_table3 import table3

NAMES = {"mnist5k": "MNIST", "digits": None}


def _table2(rows: list[tuple]) -> pd.DataFrame:
    """report.table2-shaped frame from (dataset, kind, rate, method, mean, std, runs)."""
    frame = pd.DataFrame(rows, columns=["dataset", "noise_kind", "noise_rate", "method", "mean", "std", "runs"])
    return frame.assign(sources=[f"results/{i}.json" if r else "" for i, r in enumerate(frame["runs"])])


@pytest.fixture
def reproduced() -> pd.DataFrame:
    return _table2(
        [
            ("digits", "sym", 0.2, "ce", 90.0, 1.0, 2),
            ("digits", "sym", 0.2, "enkcvs", 92.5, 0.5, 2),
            ("mnist5k", "sym", 0.2, "ce", 97.25, 0.5, 2),
            ("mnist5k", "sym", 0.2, "enkcvs", 98.0, np.nan, 1),
            ("mnist5k", "asym", 0.4, "ce", np.nan, np.nan, 0),
            ("mnist5k", "asym", 0.4, "enkcvs", 95.0, 0.3, 2),
            ("mnist5k", "sym", 0.5, "ce", 80.0, 0.1, 2),  # a noise rate the paper does not have
            ("mnist5k", "sym", 0.5, "enkcvs", 81.0, 0.1, 2),
        ]
    )


def _cell(frame: pd.DataFrame, **key) -> pd.Series:
    mask = np.logical_and.reduce(
        [np.isclose(frame[k], v) if k == "noise_rate" else frame[k] == v for k, v in key.items()]
    )
    assert mask.sum() == 1, key
    return frame[mask].iloc[0]


def test_compare_table2_difference_is_reproduced_minus_published(reproduced):
    frame = compare_table2(reproduced, paper_names=NAMES)
    row = _cell(frame, dataset="mnist5k", noise_kind="sym", noise_rate=0.2, method="ce")
    assert (row["paper_dataset"], row["published"], row["published_std"]) == ("MNIST", 98.6, 0.1)
    assert row["difference"] == pytest.approx(97.25 - 98.6)
    row = _cell(frame, dataset="mnist5k", noise_kind="asym", noise_rate=0.4, method="enkcvs")
    assert row["difference"] == pytest.approx(95.0 - 98.4)
    assert len(frame) == len(reproduced)


def test_compare_table2_keeps_missing_runs_missing(reproduced):
    frame = compare_table2(reproduced, paper_names=NAMES)
    row = _cell(frame, dataset="mnist5k", noise_kind="asym", noise_rate=0.4, method="ce")
    assert row["runs"] == 0 and np.isnan(row["mean"]) and np.isnan(row["difference"])
    assert row["published"] == 81.1
    absent = _cell(frame, dataset="mnist5k", noise_kind="sym", noise_rate=0.5, method="ce")
    assert np.isnan(absent["published"]) and np.isnan(absent["difference"]) and absent["mean"] == 80.0


def test_compare_table2_unmapped_dataset_has_no_published_numbers(reproduced):
    frame = compare_table2(reproduced, paper_names=NAMES)
    digits = frame[frame["dataset"] == "digits"]
    assert digits["paper_dataset"].isna().all()
    assert digits["published"].isna().all() and digits["difference"].isna().all()
    assert digits["mean"].tolist() == [90.0, 92.5]


def test_compare_table2_completes_the_grid_and_optionally_the_paper():
    holes = _table2([("mnist5k", "sym", 0.2, "ce", 97.0, 0.1, 2), ("mnist5k", "asym", 0.2, "sl", 96.0, 0.1, 2)])
    frame = compare_table2(holes, paper_names=NAMES)
    assert len(frame) == 4  # 2 settings x 2 methods
    filled = _cell(frame, dataset="mnist5k", noise_kind="asym", noise_rate=0.2, method="ce")
    assert filled["runs"] == 0 and np.isnan(filled["mean"]) and filled["published"] == 93.1

    everything = compare_table2(holes, paper_names=NAMES, all_published=True)
    assert len(everything) == 7 * 4  # the paper's MNIST grid: 7 noise settings x 4 methods
    assert everything["published"].notna().all() and everything["runs"].sum() == 4


def test_compare_table2_rejects_bad_names(reproduced):
    with pytest.raises(KeyError, match="digits"):
        compare_table2(reproduced, paper_names={"mnist5k": "MNIST"})
    with pytest.raises(ValueError, match="MNSIT"):
        compare_table2(reproduced, paper_names={"mnist5k": "MNSIT", "digits": None})


def _row(wide: pd.DataFrame, dataset: str, method: str, reading: str = "last epoch") -> pd.Series:
    mask = (wide[("", "dataset")] == dataset) & (wide[("", "method")] == method) & (wide[("", "reading")] == reading)
    assert mask.sum() == 1, (dataset, method, reading)
    return wide[mask].iloc[0]


def test_format_table2_is_laid_out_as_the_paper(reproduced):
    wide = format_table2(compare_table2(reproduced, paper_names=NAMES), decimals=2)
    # a column per noise setting, sym before asym, rates ascending; the paper's cell and the difference only where the
    # paper has that setting (MNIST sym 0.2 and asym 0.4; it has no 0.5 column)
    assert list(wide.columns) == [
        ("", "dataset"),
        ("", "method"),
        ("", "reading"),
        ("symmetric", "0.2"),
        ("symmetric", "0.2 paper"),
        ("symmetric", "0.2 Δ"),
        ("symmetric", "0.5"),
        ("asymmetric", "0.4"),
        ("asymmetric", "0.4 paper"),
        ("asymmetric", "0.4 Δ"),
    ]
    # rows: the paper's datasets first (MNIST), then the others; methods in the paper's order, E-NKCVS last; each
    # read three ways, the protocol's last epoch first
    readings = ["last epoch", "mean of last 10 epochs", "best epoch (optimistic)"]
    assert list(zip(wide[("", "dataset")], wide[("", "method")], wide[("", "reading")])) == [
        (dataset, method, reading)
        for dataset, method in [
            ("mnist5k (MNIST)", "CE"),
            ("mnist5k (MNIST)", "E-NKCVS"),
            ("digits", "CE"),
            ("digits", "E-NKCVS"),
        ]
        for reading in readings
    ]
    ce = _row(wide, "mnist5k (MNIST)", "CE")
    assert (ce[("symmetric", "0.2")], ce[("symmetric", "0.2 paper")], ce[("symmetric", "0.2 Δ")]) == (
        "97.25 ± 0.50",
        "98.6 ± 0.1",
        "-1.35",
    )
    assert (ce[("asymmetric", "0.4")], ce[("asymmetric", "0.4 paper")], ce[("asymmetric", "0.4 Δ")]) == (
        "missing",
        "81.1 ± 0.5",
        "—",
    )
    assert _row(wide, "mnist5k (MNIST)", "E-NKCVS")[("symmetric", "0.2")] == "**98.00 ± n/a**"
    digits = _row(wide, "digits", "CE")
    assert (digits[("symmetric", "0.2 paper")], digits[("symmetric", "0.2 Δ")]) == ("—", "—")
    assert digits[("asymmetric", "0.4")] == ""  # digits has no asym 0.4 setting


def test_format_table2_orders_methods_as_the_paper_with_others_before_enkcvs():
    frame = _table2(
        [("digits", "sym", 0.2, m, 90.0, 1.0, 2) for m in ("enkcvs", "gce", "sl", "ss_only", "coteaching", "ce")]
    )
    wide = format_table2(compare_table2(frame, paper_names=NAMES), decimals=1)
    assert wide[("", "method")].drop_duplicates().tolist() == [
        "CE",
        "Co-teaching",
        "SL",
        "GCE (not in the paper)",
        "SS only",
        "E-NKCVS",
    ]


def test_format_table2_bold_marks_the_best_and_ties(reproduced):
    tied = _table2(
        [
            ("digits", "sym", 0.2, "ce", 91.004, 1.0, 2),
            ("digits", "sym", 0.2, "sl", 90.996, 1.0, 2),
            ("digits", "sym", 0.2, "enkcvs", 90.0, 1.0, 2),
        ]
    )
    wide = format_table2(compare_table2(tied, paper_names=NAMES), decimals=2, bold="latex")
    last = wide[wide[("", "reading")] == "last epoch"]
    assert last[("symmetric", "0.2")].tolist() == ["\\textbf{91.00 ± 1.00}", "\\textbf{91.00 ± 1.00}", "90.00 ± 1.00"]
    plain = format_table2(compare_table2(reproduced, paper_names=NAMES), decimals=1, bold=None)
    assert not plain.map(lambda cell: "**" in str(cell)).any().any()
    markdown = format_table2(compare_table2(reproduced, paper_names=NAMES), decimals=1)
    assert _row(markdown, "digits", "E-NKCVS")[("symmetric", "0.2")] == "**92.5 ± 0.5**"
    assert _row(markdown, "mnist5k (MNIST)", "E-NKCVS")[("symmetric", "0.2")] == "**98.0 ± n/a**"  # per dataset
    with pytest.raises(ValueError, match="bold"):
        format_table2(compare_table2(reproduced, paper_names=NAMES), decimals=1, bold="html")


def _table1(rows: list[tuple]) -> pd.DataFrame:
    """report.table1-shaped frame from (dataset, rate, K, M, t, CS, SS, CSS)."""
    frame = pd.DataFrame(rows, columns=["dataset", "noise_rate", "K", "M", "t", "CS", "SS", "CSS"])
    return frame.assign(
        noise_kind="sym",
        seeds=2,
        precision=100 * frame["CSS"] / frame["SS"],
        recall=100 * frame["CSS"] / frame["CS"],
        theorem1_precision=np.nan,
        theorem1_recall=np.nan,
        sources="metrics.json",
    )


def test_compare_table1_and_format():
    reproduced = _table1(
        [
            ("cifar", 0.8, 10, 5, 2, 10000, 9000, 6600),
            ("cifar", 0.8, 4, 3, 2, 10000, 8000, 6000),
            ("cifar", 0.5, 10, 5, 2, 25000, 24000, 23000),
            ("digits", 0.8, 10, 5, 2, 300, 250, 200),
        ]
    )
    names = {"cifar": "CIFAR-10", "digits": None}
    frame = compare_table1(reproduced, paper_names=names)
    ss = _cell(frame, dataset="cifar", noise_rate=0.8, K=10, metric="SS")
    assert (ss["published"], ss["difference"]) == (9070, 9000 - 9070)
    recall = _cell(frame, dataset="cifar", noise_rate=0.8, K=10, metric="recall")
    assert recall["difference"] == pytest.approx(66.0 - 66.02)
    assert recall["published_note"] == ""
    flagged = compare_table1(_table1([("cifar", 0.4, 10, 5, 2, 30000, 27505, 27130)]), paper_names=names)
    assert "inconsistent" in _cell(flagged, metric="recall")["published_note"]
    assert _cell(frame, dataset="cifar", noise_rate=0.5, metric="CS")[["published", "difference"]].isna().all()
    assert frame.loc[frame["dataset"] == "digits", "published"].isna().all()
    # other selections are compared unless asked not to
    assert _cell(frame, dataset="cifar", noise_rate=0.8, K=4, metric="SS")["published"] == 9070
    strict = compare_table1(reproduced, paper_names=names, match_selection=True)
    assert np.isnan(_cell(strict, dataset="cifar", noise_rate=0.8, K=4, metric="SS")["published"])

    wide = format_table1(frame, decimals=2)
    assert [c for c in wide.columns if c[0]] == [
        ("CS", "ours"),
        ("CS", "paper"),
        ("CS", "Δ"),
        ("SS", "ours"),
        ("SS", "paper"),
        ("SS", "Δ"),
        ("CSS", "ours"),
        ("CSS", "paper"),
        ("CSS", "Δ"),
        ("precision", "ours"),
        ("precision", "paper"),
        ("precision", "Δ"),
        ("recall", "ours"),
        ("recall", "paper"),
        ("recall", "Δ"),
    ]  # no Theorem 1 values here
    # rows: the paper's dataset first, rates ascending, then K, M, t
    assert list(zip(wide[("", "dataset")], wide[("", "noise")], wide[("", "K")])) == [
        ("cifar (CIFAR-10)", "sym 0.5", 10),
        ("cifar (CIFAR-10)", "sym 0.8", 4),
        ("cifar (CIFAR-10)", "sym 0.8", 10),
        ("digits", "sym 0.8", 10),
    ]
    row = wide.iloc[2]
    assert (row[("SS", "ours")], row[("SS", "paper")], row[("SS", "Δ")]) == ("9000", "9070", "-70")
    assert (row[("recall", "ours")], row[("recall", "paper")], row[("recall", "Δ")]) == ("66.00", "66.02", "-0.02")
    assert wide.iloc[3][("precision", "paper")] == "—"


def test_format_table1_shows_theorem1_beside_the_measured_values_and_only_columns_with_values():
    reproduced = _table1([("digits", 0.2, 4, 3, 2, 1200, 1170, 1169)]).assign(
        theorem1_precision=99.99, theorem1_recall=99.21
    )
    wide = format_table1(compare_table1(reproduced, paper_names={"digits": None}), decimals=2)
    assert list(wide.columns) == [
        ("", "dataset"),
        ("", "noise"),
        ("", "K"),
        ("", "M"),
        ("", "t"),
        ("", "seeds"),
        ("", "CS"),
        ("", "SS"),
        ("", "CSS"),
        ("precision", "ours"),
        ("precision", "Theorem 1"),
        ("recall", "ours"),
        ("recall", "Theorem 1"),
    ]
    row = wide.iloc[0]
    assert (row[("precision", "Theorem 1")], row[("recall", "Theorem 1")], row[("", "CSS")]) == (
        "99.99",
        "99.21",
        "1169",
    )


def test_table3_marks_quoted_rows_and_not_run():
    table = table3(None, decimals=1)
    assert table["method"].tolist() == [
        "CE",
        "MentorNet",
        "SL",
        "DMI",
        "Co-teaching",
        "MentorMix",
        "DivideMix",
        "E-NKCVS",
    ]
    by = table.set_index("method")
    assert by.loc["DivideMix", "Clothing-1M source"] == "quoted from li2020dividemix"
    assert by.loc["DMI", "Clothing-1M source"] == "quoted from Xu2019L_DMIAI"
    assert by.loc["E-NKCVS", "WebVision source"] == "published (this paper)"
    assert (by.loc["E-NKCVS", "WebVision published"], by.loc["MentorNet", "Clothing-1M published"]) == ("77.6", "—")
    assert (table.filter(like="reproduced") == "not run").all().all()


def test_table3_with_reproduced_values():
    reproduced = pd.DataFrame(
        {
            "dataset": ["c1m", "c1m", "c1m", "digits"],
            "method": ["enkcvs", "ce", "gce", "ce"],
            "mean": [70.04, np.nan, 65.0, 90.0],
            "std": [0.2, np.nan, 0.1, 1.0],
            "runs": [3, 0, 1, 1],
        }
    )
    table = table3(reproduced, decimals=1, paper_names={"c1m": "Clothing-1M", "digits": None}).set_index("method")
    assert table.loc["E-NKCVS", "Clothing-1M reproduced"] == "70.0 ± 0.2"
    assert table.loc["CE", "Clothing-1M reproduced"] == "missing"
    assert table.loc["E-NKCVS", "WebVision reproduced"] == "not run"
    assert table.loc["gce", "Clothing-1M published"] == "—"  # run here, not in the paper: appended
    assert table.loc["gce", "Clothing-1M reproduced"] == "65.0 ± 0.1"
    assert len(table) == 9


def test_dataset_summary():
    names = tuple("abcdefghij")
    images = Dataset(
        np.zeros((6, 1, 8, 8), np.float32),
        np.zeros(6, np.int64),
        np.zeros((3, 1, 8, 8), np.float32),
        np.zeros(3, np.int64),
        names,
    )
    text = Dataset(
        np.array(["q"] * 5), np.zeros(5, np.int64), np.array(["q"]), np.zeros(1, np.int64), names[:6], modality="text"
    )
    files = Dataset(
        np.array(["a.jpg"] * 4),
        np.zeros(4, np.int64),
        np.array(["b.jpg"] * 2),
        np.zeros(2, np.int64),
        names[:2],
        modality="image_files",
        image_root="/data",
        image_transform={"resize": 256, "crop": 224},
    )
    summary = dataset_summary(
        {"digits": describe_dataset(images), "trec": describe_dataset(text), "clothing": describe_dataset(files)}
    )
    assert summary.columns.tolist() == ["dataset", "train", "test", "classes", "input shape"]
    assert summary.iloc[0].tolist() == ["digits", 6, 3, 10, "1 × 8 × 8"]
    assert summary.iloc[1].tolist() == ["trec", 5, 1, 6, "—"]
    assert summary.iloc[2].tolist() == ["clothing", 4, 2, 2, "3 × 224 × 224"]
    with pytest.raises(KeyError, match="shape"):
        dataset_summary({"x": {"train": 1, "test": 1, "classes": 2}})
