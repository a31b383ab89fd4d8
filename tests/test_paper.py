"""The transcription of the paper's Tables 1-3 (package data), checked against values typed in from the paper."""

import math

import numpy as np
import pytest

from enkcvs.report.paper import COLUMNS, KEY, published_results


def _one(**key) -> dict:
    frame = published_results()
    for column, value in key.items():
        frame = frame[np.isclose(frame[column], value)] if column == "noise_rate" else frame[frame[column] == value]
    assert len(frame) == 1, key
    return frame.iloc[0].to_dict()


@pytest.mark.parametrize(
    ("dataset", "kind", "rate", "method", "value", "std"),
    [
        ("CIFAR-10", "sym", 0.8, "enkcvs", 63.5, 0.4),
        ("MNIST", "asym", 0.4, "sl", 98.0, 0.1),
        ("TREC", "sym", 0.6, "coteaching", 81.3, 1.6),
        ("CIFAR-100", "sym", 0.8, "ce", 7.7, 1.5),
        ("CIFAR-10", "sym", 0.8, "coteaching", 22.5, 3.6),
        ("TREC", "sym", 0.0, "enkcvs", 96.4, 0.2),
        ("CIFAR-100", "asym", 0.4, "enkcvs", 64.5, 0.5),
    ],
)
def test_table2_spot_values(dataset, kind, rate, method, value, std):
    row = _one(table=2, dataset=dataset, noise_kind=kind, noise_rate=rate, method=method)
    assert (row["metric"], row["value"], row["std"], row["source"]) == ("test_accuracy", value, std, "enkcvs")


@pytest.mark.parametrize(
    ("rate", "metric", "value"),
    [(0.8, "SS", 9070), (0.8, "recall", 66.02), (0.0, "precision", 100.0), (0.2, "CSS", 36958), (0.6, "CS", 20000)],
)
def test_table1_spot_values(rate, metric, value):
    row = _one(table=1, noise_rate=rate, metric=metric)
    assert (row["dataset"], row["noise_kind"], row["method"], row["value"]) == ("CIFAR-10", "sym", "enkcvs", value)
    assert math.isnan(row["std"])


@pytest.mark.parametrize(
    ("dataset", "method", "value", "source"),
    [
        ("Clothing-1M", "enkcvs", 75.0, "enkcvs"),
        ("WebVision", "enkcvs", 77.6, "enkcvs"),
        ("Clothing-1M", "ce", 69.0, "enkcvs"),
        ("Clothing-1M", "dmi", 72.5, "Xu2019L_DMIAI"),
        ("WebVision", "dividemix", 77.3, "li2020dividemix"),
        ("WebVision", "mentornet", 63.0, "li2020dividemix"),
        ("Clothing-1M", "mentormix", 74.3, "jiang2020beyond"),
    ],
)
def test_table3_spot_values(dataset, method, value, source):
    row = _one(table=3, dataset=dataset, method=method)
    assert (row["noise_kind"], row["value"], row["source"]) == ("real", value, source)
    assert math.isnan(row["noise_rate"]) and math.isnan(row["std"])


def test_table3_dashes_have_no_rows():
    table3 = published_results().query("table == 3")
    have = set(zip(table3["dataset"], table3["method"]))
    for absent in [
        ("Clothing-1M", "mentornet"),
        ("Clothing-1M", "coteaching"),
        ("WebVision", "sl"),
        ("WebVision", "dmi"),
    ]:
        assert absent not in have


def test_shape_and_keys():
    frame = published_results()
    assert tuple(frame.columns) == COLUMNS
    assert frame.groupby("table").size().to_dict() == {1: 25, 2: 112, 3: 12}
    assert not frame.duplicated(list(KEY)).any()

    table2 = frame.query("table == 2")
    assert set(table2["dataset"]) == {"MNIST", "CIFAR-10", "CIFAR-100", "TREC"}
    assert set(table2["method"]) == {"ce", "coteaching", "sl", "enkcvs"}  # Forward, LSR, GCE are commented out
    assert set(table2["metric"]) == {"test_accuracy"} and table2["std"].notna().all()
    noises = set(zip(table2["noise_kind"], table2["noise_rate"].round(1)))
    assert noises == {("sym", r) for r in (0.0, 0.2, 0.4, 0.6, 0.8)} | {("asym", 0.2), ("asym", 0.4)}
    assert table2.groupby(["dataset", "method"]).size().eq(7).all()

    table1 = frame.query("table == 1")
    assert sorted(table1["noise_rate"].unique()) == [0.0, 0.2, 0.4, 0.6, 0.8]  # the 0.5 row is commented out
    assert table1.groupby("noise_rate").size().eq(5).all()

    table3 = frame.query("table == 3")
    assert set(table3["method"]) == {"ce", "mentornet", "sl", "dmi", "coteaching", "mentormix", "dividemix", "enkcvs"}
    assert (frame["source"] != "").all() and frame.loc[frame["table"] < 3, "source"].eq("enkcvs").all()


def test_table1_rows_agree_with_their_counts():
    """precision = |CSS|/|SS|, recall = |CSS|/|CS| within print rounding, except the one row the note flags."""
    wide = published_results().query("table == 1").pivot(index="noise_rate", columns="metric", values="value")
    precision = 100 * wide["CSS"] / wide["SS"]
    recall = 100 * wide["CSS"] / wide["CS"]
    assert np.allclose(precision, wide["precision"], atol=0.006)
    bad = ~np.isclose(recall, wide["recall"], atol=0.006)
    assert list(wide.index[bad].round(1)) == [0.4]
    assert "inconsistent" in _one(table=1, noise_rate=0.4, metric="recall")["note"]


def test_published_results_returns_a_copy():
    frame = published_results()
    frame.loc[:, "value"] = -1.0
    assert (published_results()["value"] >= 0).all()


def test_printed_decimals():
    assert _one(table=1, noise_rate=0.8, metric="recall")["printed_decimals"] == 2
    assert _one(table=1, noise_rate=0.8, metric="SS")["printed_decimals"] == 0
    assert _one(table=2, dataset="CIFAR-100", noise_kind="sym", noise_rate=0.8, method="ce")["printed_decimals"] == 1
