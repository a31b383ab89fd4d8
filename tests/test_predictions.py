"""Reading back the per-fold held-out prediction tables: joining an iteration's K folds into N checked rows."""

import numpy as np
import pandas as pd
import pytest

from enkcvs.pipeline.predictions import assemble_iteration


def test_assemble_iteration_returns_sorted_complete_rows(make_prediction_folds):
    folds = make_prediction_folds(seed=0, num_samples=23, num_folds=4, num_classes=3)
    assembled = assemble_iteration(folds, num_samples=23, num_classes=3)
    np.testing.assert_array_equal(assembled["sample"], np.arange(23))
    assert list(assembled.index) == list(range(23))
    # Rows travel whole: each sample keeps its own given, predicted and probabilities.
    original = pd.concat(folds).set_index("sample").sort_index()
    pd.testing.assert_frame_equal(assembled.set_index("sample"), original, check_like=True)


def test_assemble_iteration_raises_on_missing_sample(make_prediction_folds):
    folds = make_prediction_folds(seed=1, num_samples=20, num_folds=4, num_classes=3)
    folds[2] = folds[2].iloc[1:]
    with pytest.raises(ValueError, match="1 missing, 0 repeated"):
        assemble_iteration(folds, num_samples=20, num_classes=3)


def test_assemble_iteration_raises_on_duplicated_sample(make_prediction_folds):
    folds = make_prediction_folds(seed=2, num_samples=20, num_folds=4, num_classes=3)
    folds[3] = pd.concat([folds[3], folds[0].iloc[:1]])
    with pytest.raises(ValueError, match="0 missing, 1 repeated"):
        assemble_iteration(folds, num_samples=20, num_classes=3)


def test_assemble_iteration_raises_on_a_fold_given_twice(make_prediction_folds):
    """A fold file listed twice (and another forgotten) must not pass as complete."""
    folds = make_prediction_folds(seed=3, num_samples=20, num_folds=4, num_classes=3)
    folds[1] = folds[0]
    with pytest.raises(ValueError, match="exactly once"):
        assemble_iteration(folds, num_samples=20, num_classes=3)


def test_assemble_iteration_raises_on_out_of_range_sample(make_prediction_folds):
    folds = make_prediction_folds(seed=4, num_samples=20, num_folds=4, num_classes=3)
    folds[0].loc[folds[0].index[0], "sample"] = 20
    with pytest.raises(ValueError, match="1 out of range"):
        assemble_iteration(folds, num_samples=20, num_classes=3)


def test_assemble_iteration_raises_on_missing_prob_columns(make_prediction_folds):
    folds = make_prediction_folds(seed=5, num_samples=20, num_folds=4, num_classes=3)
    folds = [fold.drop(columns="prob_2") for fold in folds]
    with pytest.raises(ValueError, match=r"lack columns \['prob_2'\]"):
        assemble_iteration(folds, num_samples=20, num_classes=3)


def test_assemble_iteration_raises_when_q_is_larger_than_the_tables(make_prediction_folds):
    """Tables of Q = 3 read as Q = 4 lack prob_3: a Q mismatch is an error, not a silent truncation."""
    folds = make_prediction_folds(seed=6, num_samples=20, num_folds=4, num_classes=3)
    with pytest.raises(ValueError, match="prob_3"):
        assemble_iteration(folds, num_samples=20, num_classes=4)
