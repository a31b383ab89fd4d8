"""Choosing SL's (alpha, beta) on noisy validation data: the grid trains fold 1 of iteration 1 with each pair and scores
its best epoch on that fold's noisy validation share; the command refuses missing inputs before any work."""

import numpy as np
import pytest
import yaml

from enkcvs.method.folds import fold_indices
from enkcvs.pipeline.tuning import main, symmetric_ce_validation_grid

RECIPE = {"model": "mlp", "optimizer": "sgd", "lr": 0.1, "epochs": 3, "batch_size": 16, "mixup_alpha": None}

pytestmark = pytest.mark.usefixtures("single_thread")


def test_grid_scores_each_pair_on_the_folds_noisy_validation_split(tiny_inputs):
    grid = [(0.1, 1.0), (1.0, 0.1)]
    frame = symmetric_ce_validation_grid(
        dataset=tiny_inputs / "data.npz",
        labels=tiny_inputs / "labels.parquet",
        recipe=RECIPE,
        seed=3,
        num_folds=2,
        grid=grid,
    )
    assert list(zip(frame["alpha"], frame["beta"])) == grid
    _, validation, _ = fold_indices(num_samples=60, num_folds=2, seed=3, iteration=1, fold=1, validation_fraction=0.1)
    for _, row in frame.iterrows():
        per_epoch = [float(value) for value in row["per_epoch"].split()]
        assert len(per_epoch) == RECIPE["epochs"]
        assert row["validation_accuracy"] == pytest.approx(max(per_epoch), abs=1e-4)
        assert row["best_epoch"] == int(np.argmax(per_epoch)) + 1
        # accuracies on the noisy validation share: multiples of 1 / its size
        assert row["validation_accuracy"] * len(validation) == pytest.approx(
            round(row["validation_accuracy"] * len(validation))
        )
    again = symmetric_ce_validation_grid(
        dataset=tiny_inputs / "data.npz",
        labels=tiny_inputs / "labels.parquet",
        recipe=RECIPE,
        seed=3,
        num_folds=2,
        grid=grid,
    )
    assert frame.equals(again)


def test_the_command_refuses_missing_inputs_naming_how_to_build_them(tmp_path, monkeypatch, capsys):
    config = {
        "datasets": {"digits": {"noise": ["sym0.2"], "recipe": RECIPE}},
        "seeds": [1],
        "selection": {"K": 2, "M": 1, "t": 1},
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    monkeypatch.chdir(tmp_path)
    code = main(
        [
            "--configfile",
            "config.yaml",
            "--dataset",
            "digits",
            "--noise",
            "sym0.2",
            "--alpha",
            "0.1",
            "--beta",
            "1.0",
            "--output",
            "grid",
        ]
    )
    assert code == 2
    message = capsys.readouterr().err
    assert "results/data/digits.npz" in message and "results/noise/digits/sym0.2/seed1.parquet" in message
    assert "snakemake --configfile" in message
    assert not (tmp_path / "grid").exists()
    with pytest.raises(SystemExit):
        main(
            [
                "--configfile",
                "config.yaml",
                "--dataset",
                "digits",
                "--noise",
                "sym0.9",
                "--alpha",
                "0.1",
                "--beta",
                "1.0",
                "--output",
                "grid",
            ]
        )
    assert "--noise ['sym0.9'] are not noise settings of digits" in capsys.readouterr().err
