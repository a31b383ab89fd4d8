"""E-NKCVS on user-supplied out-of-fold probabilities (enkcvs.labelissues.oof): selection, ranking, input checks,
loaders."""

import warnings

import numpy as np
import pandas as pd
import pytest

import enkcvs
from enkcvs.io import read_json, read_table, write_table
from enkcvs.labelissues.oof import (
    RENORMALISED_ABOVE,
    ColumnError,
    load_labels,
    load_named_probabilities,
    load_probabilities,
    select,
)
from enkcvs.method.ranking import issue_ranks
from enkcvs.pipeline.steps.select import select_samples


def make_planted(*, seed: int, num_samples: int = 600, num_classes: int = 4, rate: float = 0.15, iterations: int = 3):
    """(probabilities (M, N, Q), given (N,), true (N,)): exactly round(rate N) labels flipped to another class; each
    repetition's OOF probabilities lean to the true class (Dirichlet; argmax accuracy ~0.8), drawn independently."""
    rng = np.random.default_rng(seed)
    true = rng.permutation(np.arange(num_samples) % num_classes)
    given = true.copy()
    flipped = rng.choice(num_samples, size=round(rate * num_samples), replace=False)
    given[flipped] = (true[flipped] + rng.integers(1, num_classes, size=len(flipped))) % num_classes
    concentration = np.full((num_samples, num_classes), 0.5)
    concentration[np.arange(num_samples), true] += 2.0
    draws = rng.gamma(concentration, size=(iterations, num_samples, num_classes))  # Dirichlet rows, vectorised
    return draws / draws.sum(axis=2, keepdims=True), given, true


def test_planted_errors_are_flagged_and_ranked_first():
    probabilities, given, true = make_planted(seed=1)
    result = select(probabilities=probabilities, labels=given, true_labels=true)
    assert (result.iterations, result.threshold) == (3, 2)
    planted, flagged = given != true, ~result.selected
    assert (planted & flagged).sum() / planted.sum() > 0.8
    assert (~planted & ~flagged).sum() / (~flagged).sum() > 0.95
    top = result.rank <= round(0.15 * len(given))
    assert planted[top].mean() > 0.8
    # Eq. prec-rec scores the kept set; Theorem 1 from the empirical T and C predicts it closely.
    assert result.kept_precision == pytest.approx((~planted & ~flagged).sum() / (~flagged).sum())
    assert result.kept_recall == pytest.approx((~planted & ~flagged).sum() / (~planted).sum())
    assert result.theorem1["precision"] == pytest.approx(result.kept_precision, abs=0.03)
    assert result.theorem1["recall"] == pytest.approx(result.kept_recall, abs=0.03)


# Hand-checked: M = 2, Q = 3, N = 5. Argmaxes: s0 [0, 0]; s1 [1, 2]; s2 [0, 1]; s3 and s4 [1, 1].
HAND_GIVEN = np.array([0, 1, 2, 0, 0])
HAND_PROBABILITIES = np.array(
    [
        [[0.8, 0.1, 0.1], [0.1, 0.5, 0.4], [0.5, 0.3, 0.2], [0.1, 0.8, 0.1], [0.1, 0.8, 0.1]],
        [[0.6, 0.3, 0.1], [0.1, 0.2, 0.7], [0.2, 0.7, 0.1], [0.3, 0.6, 0.1], [0.3, 0.6, 0.1]],
    ]
)


def test_hand_example_votes_pseudo_labels_beta_and_rank():
    result = select(probabilities=HAND_PROBABILITIES, labels=HAND_GIVEN)
    np.testing.assert_array_equal(result.votes, [2, 1, 0, 0, 0])
    np.testing.assert_array_equal(result.selected, [True, False, False, False, False])  # t = 2, the default for M > 1
    # Ties (s1: 1 vs 2, s2: 0 vs 1) go to the higher mean probability: 0.55 > 0.35 and 0.5 > 0.35.
    np.testing.assert_array_equal(result.pseudo_labels, [0, 2, 1, 1, 1])
    half = np.log(2) / np.log(3)
    np.testing.assert_allclose(result.beta, [0.0, half, half, 0.0, 0.0])
    np.testing.assert_allclose(result.prob_given, [0.7, 0.35, 0.15, 0.2, 0.2])
    # The default score is the logit margin: log P[given] - log P[most probable other class] of the mean
    # probabilities; lowest first, then index (s3 before its twin s4), s2's rival less sure than theirs.
    mean = HAND_PROBABILITIES.mean(axis=0)
    rival = np.array([0.2, 0.55, 0.5, 0.7, 0.7])
    np.testing.assert_allclose(result.label_quality, np.log(mean[np.arange(5), HAND_GIVEN]) - np.log(rival))
    np.testing.assert_array_equal(result.rank, [5, 4, 3, 1, 2])
    confidence = select(probabilities=HAND_PROBABILITIES, labels=HAND_GIVEN, score="self_confidence")
    np.testing.assert_allclose(confidence.label_quality, result.prob_given)
    np.testing.assert_array_equal(confidence.rank, [5, 4, 1, 2, 3])
    np.testing.assert_array_equal(issue_ranks(label_quality=result.label_quality), result.rank)
    # The workflow's label quality, (1 + P[given] - P[rival]) / 2, the rival being the pseudo label where it differs
    # from the given one (s1-s4).
    margin = select(probabilities=HAND_PROBABILITIES, labels=HAND_GIVEN, score="label_quality")
    np.testing.assert_allclose(margin.label_quality, [0.75, 0.4, 0.325, 0.25, 0.25])
    np.testing.assert_array_equal(margin.rank, [5, 4, 3, 1, 2])
    with pytest.raises(ValueError, match="score='votes': choose one of label_quality, self_confidence"):
        select(probabilities=HAND_PROBABILITIES, labels=HAND_GIVEN, score="votes")
    assert result.kept_precision is None and result.theorem1 is None and result.class_names is None
    assert select(probabilities=HAND_PROBABILITIES, labels=HAND_GIVEN, threshold=1).selected.tolist() == [
        True,
        True,
        False,
        False,
        False,
    ]


def test_agrees_with_the_workflow_selection_step(tmp_path):
    """The same predictions through steps.select_samples (fold tables, K = 1) give the same table and metrics."""
    probabilities, given, true = make_planted(seed=2, num_samples=80, num_classes=3)
    write_table(
        pd.DataFrame({"sample": np.arange(80), "true": true, "given": given}),
        tmp_path / "labels.parquet",
        metadata={"num_classes": 3},
    )
    paths = []
    for m, iteration in enumerate(probabilities, start=1):
        frame = pd.DataFrame({"sample": np.arange(80), "given": given, "predicted": iteration.argmax(axis=1)})
        frame[[f"prob_{c}" for c in range(3)]] = iteration
        paths.append(tmp_path / f"m{m}.parquet")
        write_table(frame, paths[-1], metadata={"m": m, "k": 1, "K": 1})
    select_samples(
        predictions=paths,
        labels=tmp_path / "labels.parquet",
        threshold=2,
        table=tmp_path / "s.parquet",
        metrics=tmp_path / "s.json",
        provenance_fields={"noise": "sym0.15"},
    )
    expected, metrics = read_table(tmp_path / "s.parquet")[0], read_json(tmp_path / "s.json")
    result = select(
        probabilities=list(probabilities), labels=given, threshold=2, true_labels=true, score="label_quality"
    )
    frame = result.to_frame()
    columns = {
        "given_label": "given",
        "votes": "votes",
        "predicted_label": "pseudo",
        "label_score": "label_quality",  # the score select() ranked by
    }
    for column, workflow_column in columns.items():
        np.testing.assert_allclose(
            frame[column].to_numpy(float), expected[workflow_column].to_numpy(float), err_msg=column
        )
    for attribute in ("beta", "prob_given"):
        np.testing.assert_allclose(getattr(result, attribute), expected[attribute], err_msg=attribute)
    np.testing.assert_array_equal(frame["kept"], expected["selected"])
    np.testing.assert_array_equal(frame["is_label_issue"], expected["in_review_list"])
    assert (result.kept_precision, result.kept_recall) == pytest.approx((metrics["precision"], metrics["recall"]))
    assert result.theorem1 == pytest.approx(metrics["theorem1"])


def test_package_level_select_and_to_frame_order():
    assert enkcvs.select is select
    frame = enkcvs.select(probabilities=HAND_PROBABILITIES[0], labels=HAND_GIVEN).to_frame()
    # One column a fact: the row's number, cleanlab's four (Datalab's get_issues("label") names), then the ranking's
    # and the method's own.
    assert list(frame.columns) == [
        "row",
        "is_label_issue",
        "label_score",
        "given_label",
        "predicted_label",
        "rank",
        "votes",
        "kept",
    ]
    # In the data's order, so that data[frame.is_label_issue] picks the flagged rows; rank says the order to review in.
    assert frame["row"].tolist() == [1, 2, 3, 4, 5]  # 1 the first, as the rows of a file after its header
    assert frame["rank"].tolist() == [5, 4, 3, 1, 2]  # P(given) / P(rival) 8, 1.25, 0.4, 0.125, 0.125
    assert frame["predicted_label"].tolist() == [0, 1, 0, 1, 1]
    np.testing.assert_allclose(frame["label_score"], np.log([8, 1.25, 0.4, 0.125, 0.125]))  # higher = cleaner
    named = enkcvs.select(probabilities=HAND_PROBABILITIES[0], labels=HAND_GIVEN).to_frame(ids=np.arange(5) * 7)
    assert list(named.columns[:2]) == ["id", "is_label_issue"] and named["id"].tolist() == [0, 7, 14, 21, 28]


def test_string_labels_are_mapped_with_a_warning():
    names = np.array(["cat", "dog", "eel"])
    with pytest.warns(UserWarning, match=r"labels are strings; mapped to 0..2 as \{'cat': 0, 'dog': 1, 'eel': 2\}"):
        result = select(probabilities=HAND_PROBABILITIES, labels=names[HAND_GIVEN], true_labels=names[[0, 1, 2, 1, 0]])
    np.testing.assert_array_equal(result.votes, [2, 1, 0, 0, 0])
    assert result.class_names == ("cat", "dog", "eel") and result.kept_precision == 1.0
    frame = result.to_frame()
    assert frame["given_label"].tolist() == ["cat", "dog", "eel", "cat", "cat"]
    assert frame["predicted_label"].tolist() == ["cat", "eel", "dog", "dog", "dog"]  # the pseudo labels
    assert result.to_frame(labels_as_names=False)["given_label"].tolist() == [0, 1, 2, 0, 0]
    # class_names fixes the order (no warning): here the reverse of the sorted one.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reverse = select(probabilities=HAND_PROBABILITIES, labels=names[2 - HAND_GIVEN], class_names=names[::-1])
    np.testing.assert_array_equal(reverse.votes, [2, 1, 0, 0, 0])


def _bad(probabilities=HAND_PROBABILITIES, labels=HAND_GIVEN, **kwargs):
    return select(probabilities=probabilities, labels=labels, **kwargs)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"probabilities": HAND_PROBABILITIES[0, 0]}, r"must be \(N, Q\) or \(M, N, Q\); got shape \(3,\)"),
        ({"probabilities": HAND_PROBABILITIES - 0.2}, r"negative entries .* apply softmax"),
        ({"probabilities": np.where(HAND_PROBABILITIES == 0.8, np.nan, HAND_PROBABILITIES)}, r"3 NaN or infinite"),
        (
            {"probabilities": HAND_PROBABILITIES * [[[1.0], [1.0], [2.0], [1.0], [1.0]]]},
            r"2 probability rows do not sum to 1 within 0.01 \(worst sum 2; the first row 2 of repetition 1 "
            r"\(0-based in sample order\)\): .*apply softmax",
        ),
        ({"labels": HAND_GIVEN[:4]}, r"labels must have shape \(N,\) = \(5,\) .*; got shape \(4,\)"),
        ({"true_labels": HAND_GIVEN[:4]}, r"true_labels must have shape \(N,\) = \(5,\)"),
        (
            {"probabilities": [HAND_PROBABILITIES[0], HAND_PROBABILITIES[1][:, :2]]},
            r"differ in Q \(classes\): \[3, 2\]",
        ),
        ({"labels": [0, 1, 3, 0, -1]}, r"2 labels lie outside 0..2 .*e.g. \[3, -1\]"),
        ({"labels": list("abcdb")}, r"labels have 4 distinct values but the probabilities have Q = 3 columns"),
        (
            {"threshold": 3},
            r"threshold 3: .* M = 2 repetitions, so t lies in 1\.\.2\. Fix: pass threshold between 1 and 2",
        ),
        ({"class_names": ["a", "b"]}, r"class_names a,b: expected Q = 3 distinct names"),
    ],
)
def test_bad_inputs_fail_before_any_work_naming_problem_and_fix(arguments, message):
    with pytest.raises(ValueError, match=message):
        _bad(**arguments)


def test_loaders_read_npy_parquet_and_csv(tmp_path):
    probabilities, given, _ = make_planted(seed=3, num_samples=12, num_classes=3, iterations=2)
    np.save(tmp_path / "p.npy", probabilities)
    np.testing.assert_array_equal(load_probabilities(tmp_path / "p.npy"), probabilities)
    # Long table, rows shuffled: sorted back by iteration, then sample.
    frame = pd.concat(
        pd.DataFrame({"iteration": m + 1, "sample": np.arange(12), **{f"prob_{c}": p[:, c] for c in range(3)}})
        for m, p in enumerate(probabilities)
    ).sample(frac=1.0, random_state=0)
    frame.to_parquet(tmp_path / "p.parquet")
    frame.to_csv(tmp_path / "p.csv", index=False)
    np.testing.assert_allclose(load_probabilities(tmp_path / "p.parquet"), probabilities)
    np.testing.assert_allclose(load_probabilities(tmp_path / "p.csv"), probabilities)
    single = frame[frame["iteration"] == 1].drop(columns="iteration")
    single.to_csv(tmp_path / "one.csv", index=False)
    np.testing.assert_allclose(load_probabilities(tmp_path / "one.csv"), probabilities[0])

    labels = pd.DataFrame({"sample": np.arange(12), "noisy": np.array(list("abc"))[given]}).iloc[::-1]
    labels.to_csv(tmp_path / "l.csv", index=False)
    labels.to_parquet(tmp_path / "l.parquet")
    np.save(tmp_path / "l.npy", given)
    np.testing.assert_array_equal(load_labels(tmp_path / "l.npy"), given)
    for name in ("l.csv", "l.parquet"):
        assert load_labels(tmp_path / name).tolist() == np.array(list("abc"))[given].tolist()


def test_loader_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="no probabilities file at .*missing.npy"):
        load_probabilities(tmp_path / "missing.npy")
    (tmp_path / "p.txt").write_text("0.5 0.5\n")
    with pytest.raises(ValueError, match=r"unknown extension '.txt' for probabilities; use .npy, .parquet or .csv"):
        load_probabilities(tmp_path / "p.txt")
    pd.DataFrame({"sample": [0, 1], "p0": [0.5, 0.5], "prob_1": [0.5, 0.5]}).to_csv(tmp_path / "p.csv", index=False)
    with pytest.raises(ValueError, match=r"expected columns prob_0..prob_\{Q-1\}.*found columns \['sample', 'p0'"):
        load_probabilities(tmp_path / "p.csv")
    pd.DataFrame({"sample": [0, 1], "given": [1, 0], "true": [1, 1]}).to_parquet(tmp_path / "l.parquet")
    with pytest.raises(
        ValueError, match=r"no label column 'noisy'; the file has columns \['sample', 'given', 'true'\]"
    ):
        load_labels(tmp_path / "l.parquet", column="noisy")
    with pytest.raises(ValueError, match=r"no label column None"):
        load_labels(tmp_path / "l.parquet")
    with pytest.raises(FileNotFoundError, match="no labels file"):
        load_labels(tmp_path / "l.csv")


def test_float16_rows_are_renormalised_with_one_warning_and_a_row_summing_to_0_9_refused():
    rng = np.random.default_rng(4)
    logits = rng.normal(size=(3, 200, 7)) * 3
    exact = np.exp(logits) / np.exp(logits).sum(axis=2, keepdims=True)
    stored = exact.astype(np.float16)  # rows now sum to 1 only within ~1e-3
    off = int((np.abs(stored.astype(float).sum(axis=2) - 1) > RENORMALISED_ABOVE).sum())
    assert off > 0
    labels = exact[0].argmax(axis=1)
    renormalised = rf"^{off} probability rows sum to 1 only within 0.01 .*renormalised"
    with pytest.warns(UserWarning, match=renormalised) as caught:
        result = select(probabilities=stored, labels=labels)
    assert len(caught) == 1
    reference = select(probabilities=exact, labels=labels)
    assert np.array_equal(result.votes, reference.votes) and np.array_equal(result.selected, reference.selected)
    short = exact.copy()
    short[1, 5] *= 0.9
    with pytest.raises(
        ValueError,
        match=r"1 probability rows do not sum to 1 within 0.01 \(worst sum 0.9; the first row 5 of repetition 2 ",
    ):
        select(probabilities=short, labels=labels)


def test_probabilities_within_rounding_of_valid_are_clipped_and_any_further_refused_naming_the_row():
    probabilities, given, _ = make_planted(seed=5, num_samples=120)
    rounded = probabilities.copy()
    rounded[:, 3] = [1 + 5e-6, 0, 0, 0]  # a sum within RENORMALISED_ABOVE, an entry beyond cleanlab's 1e-6
    rounded[1, 4, :2] += [-3e-6, 3e-6]  # a softmax's tiny negative
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # float rounding: renormalised without a word
        result = select(probabilities=rounded, labels=given)
    reference = select(probabilities=np.clip(rounded, 0, 1), labels=given)
    assert np.array_equal(result.votes, reference.votes) and np.allclose(result.label_quality, reference.label_quality)
    for row, message in (([1.00002, 0, 0, 0], "worst sum 1.00002"), ([1.005, 0, 0, 0], "worst sum 1.005")):
        within = probabilities.copy()
        within[0, 3] = row  # beyond rounding, within the tolerance: renormalised, said in one line
        with pytest.warns(UserWarning, match=rf"^1 probability rows sum to 1 only within 0.01 \({message};") as said:
            renormalised = select(probabilities=within, labels=given)
        exact = probabilities.copy()
        exact[0, 3] = [1, 0, 0, 0]
        assert len(said) == 1
        np.testing.assert_allclose(renormalised.prob_given, select(probabilities=exact, labels=given).prob_given)
    edge = probabilities.copy()
    edge[0, 3] = [1.01, 0, 0, 0]  # exactly at the tolerance: within it
    with pytest.warns(UserWarning, match=r"worst sum 1.01;"):
        select(probabilities=edge, labels=given)
    for change, message in (
        (
            lambda p: p.__setitem__((2, 7, 0), -0.01),
            r"1 negative entries \(minimum -0\.01; the first in row 7 of repetition 3 \(0-based in sample order\)\): .*"
            r"apply softmax",
        ),
        (
            lambda p: p.__setitem__((0, 11), p[0, 11] * 1.1),
            r"1 probability rows do not sum to 1 within 0\.01 \(worst sum 1\.1; the first row 11 of repetition 1",
        ),
        (
            lambda p: p.__setitem__((1, 9), [1.0101, 0, 0, 0]),
            r"1 probability rows do not sum to 1 within 0\.01 \(worst sum 1\.0101; the first row 9 of repetition 2",
        ),
    ):
        bad = probabilities.copy()
        change(bad)
        with pytest.raises(ValueError, match=message):
            select(probabilities=bad, labels=given)


def test_named_probability_columns_give_the_class_names_in_column_order(tmp_path):
    probabilities = np.array([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6]])
    pd.DataFrame(
        {
            "sample": [0, 1],
            "prob_eel": probabilities[:, 0],
            "prob_cat": probabilities[:, 1],
            "prob_dog": probabilities[:, 2],
        }
    ).to_csv(tmp_path / "prefixed.csv", index=False)
    pd.DataFrame({"eel": probabilities[:, 0], "cat": probabilities[:, 1], "dog": probabilities[:, 2]}).to_parquet(
        tmp_path / "bare.parquet"
    )
    pd.DataFrame({"prob_2": probabilities[:, 2], "prob_0": probabilities[:, 0], "prob_1": probabilities[:, 1]}).to_csv(
        tmp_path / "indexed.csv", index=False
    )
    for name in ("prefixed.csv", "bare.parquet"):
        values, names = load_named_probabilities(tmp_path / name)
        assert names == ("eel", "cat", "dog")
        np.testing.assert_array_equal(values, probabilities)
    values, names = load_named_probabilities(tmp_path / "indexed.csv")
    assert names is None
    np.testing.assert_array_equal(values, probabilities)
    with pytest.raises(
        ValueError,
        match=r"the probability columns name the classes \(eel, cat, dog\); load them "
        r"with load_named_probabilities",
    ):
        load_probabilities(tmp_path / "prefixed.csv")  # their names would be lost
    pd.DataFrame({"photo": ["a", "b"], "eel": [0.5, 0.5], "cat": [0.5, 0.5]}).to_csv(tmp_path / "text.csv", index=False)
    with pytest.raises(ValueError, match=r"the class columns \['photo', 'eel', 'cat'\] must all hold probabilities"):
        load_named_probabilities(tmp_path / "text.csv")


def test_label_loader_names_empty_cells_missing_columns_and_folders(tmp_path):
    pd.DataFrame({"id": ["a", "b", "c"], "y": ["cat", " ", "dog"]}).to_csv(tmp_path / "l.csv", index=False)
    with pytest.raises(
        ValueError,
        match=r"l\.csv: 1 empty cell in the label column 'y': line 3 \(id 'b'\); lines "
        r"of the file, the header is line 1\. Fix: give every sample its value",
    ):
        load_labels(tmp_path / "l.csv", column="y", id_column="id")
    assert load_labels(tmp_path / "l.csv", column="y", what="text").tolist() == [
        "cat",
        " ",
        "dog",
    ]  # texts may be blank
    np.save(tmp_path / "l.npy", np.array([0.0, np.nan, 1.0]))
    with pytest.raises(ValueError, match=r"1 empty cell in the label array: index 1; indices 0-based"):
        load_labels(tmp_path / "l.npy")
    with pytest.raises(ColumnError, match=r"no label column 'z'; .* pass column=<one of them>") as caught:
        load_labels(tmp_path / "l.csv", column="z")
    assert caught.value.columns == ["id", "y"]
    with pytest.raises(ColumnError, match=r"column='y' applies to \.csv and \.parquet tables") as caught:
        load_labels(tmp_path / "l.npy", column="y")
    assert caught.value.columns is None
    with pytest.raises(IsADirectoryError, match=r"is a folder, not a labels file\. Fix: point at the file itself"):
        load_labels(tmp_path)


@pytest.mark.parametrize(
    "options, message",
    [
        (
            {"filter_by": "confident_learning", "num_to_remove_per_class": [1, 1, 1, 1]},
            r"^num_to_remove_per_class goes with filter_by prune_by_noise_rate, prune_by_class or both, not with "
            r"filter_by='confident_learning', which takes no counts\. Fix: pass filter_by='prune_by_class'",
        ),
        (
            {"filter_by": "predicted_neq_given", "frac_noise": 0.5},
            r"^frac_noise=0\.5 goes with filter_by prune_by_noise_rate, prune_by_class or both, not with "
            r"filter_by='predicted_neq_given', whose list cleanlab does not scale",
        ),
        (
            {"filter_by": "prune_by_class", "frac_noise": 0.5, "num_to_remove_per_class": [1, 1, 1, 1]},
            r"^frac_noise=0\.5 and num_to_remove_per_class each set how many samples cleanlab flags",
        ),
    ],
    ids=["counts", "share", "both"],
)
def test_list_options_that_cleanlab_would_refuse_or_ignore_are_refused_before_any_fold_model_trains(
    monkeypatch, options, message
):
    from sklearn.linear_model import LogisticRegression

    import enkcvs.labelissues.find

    probabilities, given, _ = make_planted(seed=3, num_samples=80)
    with pytest.raises(ValueError, match=message):
        select(probabilities=probabilities, labels=given, **options)

    def trains(*_, **__):
        raise AssertionError("a fold model trained before the options were refused")

    monkeypatch.setattr(enkcvs.labelissues.find, "fold_probabilities", trains)
    for options_here in (options, {"num_to_remove_per_class": [1, 1]}):
        with pytest.raises(ValueError, match=message if options_here is options else "Q = 4 classes"):
            enkcvs.find_issues(features=probabilities[0], labels=given, classifier=LogisticRegression(), **options_here)
