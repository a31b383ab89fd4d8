"""Reproduced-vs-published tables on small hand-built frames (published numbers come from the package data)."""

import numpy as np
import pandas as pd
import pytest

from enkcvs.comparison import (
    compare_table1,
    compare_table2,
    dataset_summary,
    describe_dataset,
    format_comparison,
    format_comparison_table1,
    table3,
)
from enkcvs.datasets import Dataset

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
    mask = np.logical_and.reduce([np.isclose(frame[k], v) if k == "noise_rate" else frame[k] == v
                                  for k, v in key.items()])
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


def test_format_comparison_cells(reproduced):
    wide = format_comparison(compare_table2(reproduced, paper_names=NAMES), decimals=2)
    assert list(wide.columns[:4]) == ["dataset", "paper dataset", "noise_kind", "noise_rate"]
    assert list(wide.columns[4:7]) == ["ce reproduced", "ce published", "ce diff"]
    row = _cell(wide, dataset="mnist5k", noise_kind="sym", noise_rate=0.2)
    assert (row["ce reproduced"], row["ce published"], row["ce diff"]) == ("97.25 ± 0.50", "98.6 ± 0.1", "-1.35")
    assert row["enkcvs reproduced"] == "**98.00 ± n/a**"
    missing = _cell(wide, dataset="mnist5k", noise_kind="asym", noise_rate=0.4)
    assert (missing["ce reproduced"], missing["ce published"], missing["ce diff"]) == ("missing", "81.1 ± 0.5", "—")
    digits = _cell(wide, dataset="digits", noise_kind="sym", noise_rate=0.2)
    assert digits["paper dataset"] == "—"
    assert (digits["ce published"], digits["ce diff"], digits["enkcvs published"]) == ("—", "—", "—")
    # rows: datasets in the frame's order, sym before asym
    assert list(zip(wide["dataset"], wide["noise_kind"])) == [
        ("digits", "sym"), ("mnist5k", "sym"), ("mnist5k", "sym"), ("mnist5k", "asym")]


def test_format_comparison_bold_marks_the_best_and_ties(reproduced):
    tied = _table2([("digits", "sym", 0.2, "ce", 91.004, 1.0, 2), ("digits", "sym", 0.2, "sl", 90.996, 1.0, 2),
                    ("digits", "sym", 0.2, "enkcvs", 90.0, 1.0, 2)])
    wide = format_comparison(compare_table2(tied, paper_names=NAMES), decimals=2, bold="latex")
    row = wide.iloc[0]
    assert row["ce reproduced"] == row["sl reproduced"] == "\\textbf{91.00 ± 1.00}"
    assert row["enkcvs reproduced"] == "90.00 ± 1.00"
    plain = format_comparison(compare_table2(reproduced, paper_names=NAMES), decimals=1, bold=None)
    assert not plain.map(lambda cell: "**" in str(cell)).any().any()
    markdown = format_comparison(compare_table2(reproduced, paper_names=NAMES), decimals=1)
    assert _cell(markdown, dataset="digits", noise_kind="sym", noise_rate=0.2)["enkcvs reproduced"] == "**92.5 ± 0.5**"
    with pytest.raises(ValueError, match="bold"):
        format_comparison(compare_table2(reproduced, paper_names=NAMES), decimals=1, bold="html")


def _table1(rows: list[tuple]) -> pd.DataFrame:
    """report.table1-shaped frame from (dataset, rate, K, M, t, CS, SS, CSS)."""
    frame = pd.DataFrame(rows, columns=["dataset", "noise_rate", "K", "M", "t", "CS", "SS", "CSS"])
    return frame.assign(
        noise_kind="sym", seeds=2, precision=100 * frame["CSS"] / frame["SS"], recall=100 * frame["CSS"] / frame["CS"],
        theorem1_precision=np.nan, theorem1_recall=np.nan, sources="metrics.json",
    )


def test_compare_table1_and_format():
    reproduced = _table1([("cifar", 0.8, 10, 5, 2, 10000, 9000, 6600), ("cifar", 0.8, 4, 3, 2, 10000, 8000, 6000),
                          ("cifar", 0.5, 10, 5, 2, 25000, 24000, 23000), ("digits", 0.8, 10, 5, 2, 300, 250, 200)])
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

    wide = format_comparison_table1(frame, decimals=2)
    row = _cell(wide, dataset="cifar", noise_rate=0.8, K=10)
    assert (row["SS reproduced"], row["SS published"], row["SS diff"]) == ("9000", "9070", "-70")
    assert (row["recall reproduced"], row["recall published"], row["recall diff"]) == ("66.00", "66.02", "-0.02")
    assert _cell(wide, dataset="digits", noise_rate=0.8, K=10)["precision published"] == "—"


def test_table3_marks_quoted_rows_and_not_run():
    table = table3(None, decimals=1)
    assert table["method"].tolist() == ["CE", "MentorNet", "SL", "DMI", "Co-teaching", "MentorMix", "DivideMix",
                                        "E-NKCVS"]
    by = table.set_index("method")
    assert by.loc["DivideMix", "Clothing-1M source"] == "quoted from li2020dividemix"
    assert by.loc["DMI", "Clothing-1M source"] == "quoted from Xu2019L_DMIAI"
    assert by.loc["E-NKCVS", "WebVision source"] == "published (this paper)"
    assert (by.loc["E-NKCVS", "WebVision published"], by.loc["MentorNet", "Clothing-1M published"]) == ("77.6", "—")
    assert (table.filter(like="reproduced") == "not run").all().all()


def test_table3_with_reproduced_values():
    reproduced = pd.DataFrame(
        {"dataset": ["c1m", "c1m", "c1m", "digits"], "method": ["enkcvs", "ce", "gce", "ce"],
         "mean": [70.04, np.nan, 65.0, 90.0], "std": [0.2, np.nan, 0.1, 1.0], "runs": [3, 0, 1, 1]}
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
    images = Dataset(np.zeros((6, 1, 8, 8), np.float32), np.zeros(6, np.int64), np.zeros((3, 1, 8, 8), np.float32),
                     np.zeros(3, np.int64), names)
    text = Dataset(np.array(["q"] * 5), np.zeros(5, np.int64), np.array(["q"]), np.zeros(1, np.int64), names[:6],
                   modality="text")
    files = Dataset(np.array(["a.jpg"] * 4), np.zeros(4, np.int64), np.array(["b.jpg"] * 2), np.zeros(2, np.int64),
                    names[:2], modality="image_files", image_root="/data", image_transform={"resize": 256, "crop": 224})
    summary = dataset_summary({"digits": describe_dataset(images), "trec": describe_dataset(text),
                               "clothing": describe_dataset(files)})
    assert summary.columns.tolist() == ["dataset", "train", "test", "classes", "input shape"]
    assert summary.iloc[0].tolist() == ["digits", 6, 3, 10, "1 × 8 × 8"]
    assert summary.iloc[1].tolist() == ["trec", 5, 1, 6, "—"]
    assert summary.iloc[2].tolist() == ["clothing", 4, 2, 2, "3 × 224 × 224"]
    with pytest.raises(KeyError, match="shape"):
        dataset_summary({"x": {"train": 1, "test": 1, "classes": 2}})
