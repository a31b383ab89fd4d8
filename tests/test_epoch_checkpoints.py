"""Epoch checkpoints (enkcvs.training.resume): a training killed after an epoch and started again goes on from there and
ends bit-identical to one never interrupted; a checkpoint of another training is not resumed."""

import logging

import numpy as np
import pandas as pd
import pytest
import torch

from enkcvs.io import read_table
from enkcvs.training.device import Execution
from enkcvs.training.recipe import CoTeaching, Recipe
from enkcvs.training.resume import EpochCheckpoint, checkpoint_path
from enkcvs.training.train import train_model

CPU = torch.device("cpu")
pytestmark = pytest.mark.usefixtures("single_thread")


class Killed(Exception):
    """Stands for the job being killed right after a checkpoint was written."""


@pytest.fixture
def kill_after_epoch(monkeypatch):
    """Make the next training die right after saving the checkpoint of ``epoch``; undo with the returned call."""
    save = EpochCheckpoint.save

    def arm(epoch: int):
        def save_then_die(self, state):
            save(self, state)
            if state["epoch"] == epoch:
                raise Killed

        monkeypatch.setattr(EpochCheckpoint, "save", save_then_die)
        return lambda: monkeypatch.setattr(EpochCheckpoint, "save", save)

    return arm


def _data(make_separable_images, *, n=96):
    x, labels = make_separable_images(seed=0, num_samples=n, num_classes=3)
    targets = np.eye(3, dtype=np.float32)[labels]
    return x, targets, (x[:24], labels[:24])


TRAININGS = {
    "sgd, mixup": (
        Recipe(model="cnn4", optimizer="sgd", lr=0.05, epochs=4, batch_size=16, milestones=(2,), mixup_alpha=0.3),
        {},
    ),
    "adam": (
        Recipe(model="mlp", optimizer="adam", lr=0.01, epochs=4, batch_size=16, milestones=(3,), mixup_alpha=None),
        {},
    ),
    "co-teaching": (
        Recipe(model="cnn4", optimizer="sgd", lr=0.05, epochs=4, batch_size=16, mixup_alpha=None),
        {"co_teaching": CoTeaching(forget_rate=0.2, warmup_epochs=2)},
    ),
}


@pytest.mark.parametrize("name", TRAININGS)
def test_a_killed_training_resumes_after_its_last_epoch_bit_identical(
    name, tmp_path, make_separable_images, kill_after_epoch, caplog
):
    recipe, extra = TRAININGS[name]
    x, targets, validation = _data(make_separable_images)
    arguments = dict(recipe=recipe, x=x, targets=targets, seed=5, validation=validation, device=CPU, **extra)
    reference = train_model(**arguments)

    checkpoint = tmp_path / "k1.resume.pt"
    disarm = kill_after_epoch(2)
    with pytest.raises(Killed):
        train_model(**arguments, resume=checkpoint)
    assert checkpoint.is_file()
    disarm()
    with caplog.at_level(logging.INFO, logger="enkcvs"):
        resumed = train_model(**arguments, resume=checkpoint)

    assert f"resuming from {checkpoint} after epoch 2" in caplog.text
    assert [r.getMessage().split()[1] for r in caplog.records if r.getMessage().startswith("epoch ")] == ["3/4", "4/4"]
    assert not checkpoint.exists(), "the checkpoint of a finished training is removed"
    assert resumed.train_loss == reference.train_loss
    assert resumed.validation_accuracy == reference.validation_accuracy
    assert resumed.best_epoch == reference.best_epoch
    for got, expected in [(resumed.model, reference.model), (resumed.peer, reference.peer)]:
        if expected is not None:
            for key, tensor in expected.state_dict().items():
                assert torch.equal(got.state_dict()[key], tensor), key


@pytest.mark.parametrize("name", ["sgd, mixup", "co-teaching"])
def test_a_curve_changes_no_weight_and_resumes_with_its_history(
    name, tmp_path, make_separable_images, kill_after_epoch
):
    recipe, extra = TRAININGS[name]
    x, targets, validation = _data(make_separable_images)
    arguments = dict(recipe=recipe, x=x, targets=targets, seed=5, validation=validation, device=CPU, **extra)
    without = train_model(**arguments)
    curve_data = (x[24:72], targets[24:72].argmax(1))
    with_curve = train_model(**arguments, curve=curve_data)
    disarm = kill_after_epoch(2)
    with pytest.raises(Killed):
        train_model(**arguments, curve=curve_data, resume=tmp_path / "c.resume.pt")
    disarm()
    resumed = train_model(**arguments, curve=curve_data, resume=tmp_path / "c.resume.pt")

    assert without.curve_accuracy == [] and len(with_curve.curve_accuracy) == recipe.epochs
    assert with_curve.train_loss == without.train_loss
    assert with_curve.validation_accuracy == without.validation_accuracy
    for key, tensor in without.model.state_dict().items():
        assert torch.equal(with_curve.model.state_dict()[key], tensor), key
    assert resumed.curve_accuracy == with_curve.curve_accuracy
    # A checkpoint written without a curve is not taken up by a training with one (its history would lack epochs).
    disarm = kill_after_epoch(2)
    with pytest.raises(Killed):
        train_model(**arguments, resume=tmp_path / "plain.resume.pt")
    disarm()
    assert (
        train_model(**arguments, curve=curve_data, resume=tmp_path / "plain.resume.pt").curve_accuracy
        == with_curve.curve_accuracy
    )


def test_a_checkpoint_of_another_training_is_not_resumed(tmp_path, make_separable_images, kill_after_epoch, caplog):
    recipe, _ = TRAININGS["sgd, mixup"]
    x, targets, validation = _data(make_separable_images)
    checkpoint = tmp_path / "ce.resume.pt"
    disarm = kill_after_epoch(2)
    with pytest.raises(Killed):
        train_model(recipe=recipe, x=x, targets=targets, seed=5, validation=validation, device=CPU, resume=checkpoint)
    disarm()
    changed = targets[::-1].copy()  # other labels, as after a change of the noise config
    with caplog.at_level(logging.INFO, logger="enkcvs"):
        got = train_model(
            recipe=recipe, x=x, targets=changed, seed=5, validation=validation, device=CPU, resume=checkpoint
        )
    expected = train_model(recipe=recipe, x=x, targets=changed, seed=5, validation=validation, device=CPU)
    assert "was made for another training" in caplog.text and "resuming" not in caplog.text
    assert got.train_loss == expected.train_loss and len(got.train_loss) == recipe.epochs


def test_streamed_inputs_write_no_checkpoint(tmp_path, make_separable_images, caplog):
    x, targets, _ = _data(make_separable_images)
    streamed = torch.utils.data.TensorDataset(torch.as_tensor(x), torch.arange(len(x)))
    recipe = Recipe(model="cnn4", optimizer="sgd", lr=0.05, epochs=2, batch_size=16)
    with caplog.at_level(logging.INFO, logger="enkcvs"):
        train_model(
            recipe=recipe,
            x=streamed,
            targets=targets,
            seed=1,
            resume=tmp_path / "x.resume.pt",
            execution=Execution(device=CPU, loader_workers=0),
        )
    saved = list(tmp_path.iterdir())
    assert saved == [] and "no epoch checkpoints: the inputs are streamed" in caplog.text


def test_a_killed_fold_job_resumes_to_the_same_table(tiny_inputs, kill_after_epoch):
    from enkcvs.pipeline.steps.folds import train_fold

    recipe = {"model": "cnn4", "optimizer": "sgd", "lr": 0.05, "epochs": 3, "batch_size": 8, "mixup_alpha": 0.3}
    job = dict(
        dataset=tiny_inputs / "data.npz",
        labels=tiny_inputs / "labels.parquet",
        recipe=recipe,
        seed=1,
        num_folds=2,
        iteration=1,
        fold=2,
        execution=Execution(device=CPU),
        provenance_fields={},
    )
    train_fold(**job, output=tiny_inputs / "reference.parquet")
    output = tiny_inputs / "k2.parquet"
    disarm = kill_after_epoch(1)
    with pytest.raises(Killed):
        train_fold(**job, output=output)
    assert checkpoint_path(output) == tiny_inputs / "k2.resume.pt" and checkpoint_path(output).is_file()
    assert not output.exists()
    disarm()
    train_fold(**job, output=output)
    (got, got_meta), (expected, expected_meta) = read_table(output), read_table(tiny_inputs / "reference.parquet")
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    assert got_meta["validation_accuracy"] == expected_meta["validation_accuracy"]
    assert not checkpoint_path(output).exists()


def test_an_unreadable_checkpoint_and_a_save_cut_short_are_cleared(tmp_path, make_separable_images, caplog):
    recipe, _ = TRAININGS["sgd, mixup"]
    x, targets, validation = _data(make_separable_images)
    checkpoint = tmp_path / "ce.resume.pt"
    checkpoint.write_bytes(b"not a checkpoint")
    (tmp_path / ".ce.resume.pt.abc123.tmp").write_bytes(b"half a checkpoint")
    with caplog.at_level(logging.INFO, logger="enkcvs"):
        got = train_model(
            recipe=recipe, x=x, targets=targets, seed=5, validation=validation, device=CPU, resume=checkpoint
        )
    assert "cannot be read" in caplog.text and len(got.train_loss) == recipe.epochs
    assert list(tmp_path.iterdir()) == []
