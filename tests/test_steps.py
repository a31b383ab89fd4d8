"""Workflow steps on a tiny dataset: determinism of fold predictions and loud failures on incomplete inputs."""

import numpy as np
import pandas as pd
import pytest

from enkcvs.datasets import Dataset, save_dataset
from enkcvs.io import read_table, write_table
from enkcvs.steps import make_noisy_labels, select_samples, train_fold

RECIPE = {"model": "mlp", "optimizer": "sgd", "lr": 0.1, "epochs": 2, "batch_size": 32}


@pytest.fixture
def tiny_inputs(tmp_path):
    """A seeded 3-class dataset of 60 (1, 4, 4) images with symmetric noise."""
    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(3), 20)
    x = (rng.normal(size=(60, 1, 4, 4)) + y[:, None, None, None]).astype(np.float32)
    save_dataset(Dataset(x, y, x[:9], y[:9], ("a", "b", "c")), tmp_path / "data.npz")
    make_noisy_labels(dataset=tmp_path / "data.npz", noise="sym0.2", seed=3, asymmetric_map=None,
                      output=tmp_path / "labels.parquet")
    return tmp_path


def run_fold(base, iteration, fold, output):
    train_fold(dataset=base / "data.npz", labels=base / "labels.parquet", recipe=RECIPE, seed=3, num_folds=2,
               iteration=iteration, fold=fold, threads=1, output=output,
               provenance_fields={"m": str(iteration), "k": str(fold)})


def test_same_seed_gives_byte_identical_prediction_files(tiny_inputs):
    run_fold(tiny_inputs, 1, 1, tiny_inputs / "a.parquet")
    run_fold(tiny_inputs, 1, 1, tiny_inputs / "b.parquet")
    assert (tiny_inputs / "a.parquet").read_bytes() == (tiny_inputs / "b.parquet").read_bytes()


def test_selection_refuses_an_incomplete_or_duplicated_iteration(tiny_inputs):
    paths = []
    for fold in (1, 2):
        paths.append(tiny_inputs / f"k{fold}.parquet")
        run_fold(tiny_inputs, 1, fold, paths[-1])
    outputs = {"table": tiny_inputs / "sel.parquet", "metrics": tiny_inputs / "m.json"}
    common = {"labels": tiny_inputs / "labels.parquet", "threshold": 1,
              "provenance_fields": {"noise": "sym0.2"}, **outputs}
    with pytest.raises(ValueError, match="exactly once"):
        select_samples(predictions=paths[:1], **common)
    frame, meta = read_table(paths[1])
    write_table(pd.concat([frame, frame.iloc[:1]]), tiny_inputs / "dup.parquet", metadata=meta)
    with pytest.raises(ValueError, match="exactly once"):
        select_samples(predictions=[paths[0], tiny_inputs / "dup.parquet"], **common)
    assert not outputs["table"].exists() and not outputs["metrics"].exists()
    select_samples(predictions=paths, **common)
    selection, _ = read_table(outputs["table"])
    assert len(selection) == 60 and selection["selected"].sum() > 0
