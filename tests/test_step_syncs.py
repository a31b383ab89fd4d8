"""The training loop's steps never wait for the device: nothing is read back per step (a read waits for every queued
kernel), one model's or a stack's, divergence is still caught once per epoch before the epoch's weights are scored or
saved, and the weights and losses are those of the loop that checked every step."""

from dataclasses import replace

import numpy as np
import pytest
import torch

from enkcvs.method import losses
from enkcvs.training import optimizer, stacked, train
from enkcvs.training.evaluate import BestEpoch
from enkcvs.training.recipe import CoTeaching, Recipe
from enkcvs.training.train import train_model

CPU = torch.device("cpu")
pytestmark = pytest.mark.usefixtures("single_thread")

#: Trainings covering every per-step path: mixup, augmentation, SGD, Adam and co-teaching's exchange.
TRAININGS = {
    "sgd, mixup, shift_flip": (
        Recipe(
            model="cnn4",
            optimizer="sgd",
            lr=0.05,
            epochs=2,
            batch_size=16,
            milestones=(1,),
            mixup_alpha=0.3,
            augment="shift_flip",
        ),
        {},
    ),
    "adam, sl": (
        Recipe(model="mlp", optimizer="adam", lr=0.01, epochs=2, batch_size=16, mixup_alpha=None),
        {"loss": "sl", "loss_params": {"alpha": 0.1, "beta": 1.0}},
    ),
    "co-teaching": (
        Recipe(model="cnn4", optimizer="sgd", lr=0.05, epochs=2, batch_size=16, mixup_alpha=None),
        {"co_teaching": CoTeaching(forget_rate=0.2, warmup_epochs=1)},
    ),
    "text": (Recipe(model="text_classifier", optimizer="sgd", lr=0.01, epochs=2, batch_size=16, mixup_alpha=None), {}),
}

#: Python's ways to read a tensor's values on the host; on a GPU each waits for the device.
HOST_READS = ("item", "tolist", "numpy", "cpu", "__bool__", "__float__", "__int__", "__index__")


def _train(name, make_separable_images, *, device=CPU, **options):
    recipe, extra = TRAININGS[name]
    recipe = options.pop("recipe", recipe)
    x, labels = make_separable_images(seed=0, num_samples=72, num_classes=3, shape=(3, 8, 8))
    if recipe.model == "text_classifier":  # token ids (N, 2, 9) of texts of 3 to 9 tokens, padded on the right
        mask = (np.arange(9) < 3 + np.arange(72)[:, None] % 7).astype(np.int64)
        x = np.stack([(1000 + 7 * labels[:, None] + np.arange(9)) * mask, mask], axis=1)
    return train_model(
        recipe=recipe,
        x=x,
        targets=np.eye(3, dtype=np.float32)[labels],
        seed=2,
        validation=(x[:24], labels[:24]),
        device=device,
        **extra,
        **options,
    )


@pytest.mark.parametrize("name", ["sgd, mixup, shift_flip", "co-teaching", "text"])  # Adam reads its step counts
def test_training_steps_read_nothing_back_from_the_device(name, make_separable_images, monkeypatch):
    reads, stepping = [], []
    for method in HOST_READS:
        original = getattr(torch.Tensor, method)

        def counted(tensor, *args, _method=method, _original=original, **kwargs):
            if stepping:
                reads.append(_method)
            return _original(tensor, *args, **kwargs)

        monkeypatch.setattr(torch.Tensor, method, counted)

    def watched(function):
        def while_stepping(*args, **kwargs):
            stepping.append(True)
            try:
                return function(*args, **kwargs)
            finally:
                stepping.clear()

        return while_stepping

    # Each step's loss and optimizer step are watched; forming its batch may read what was drawn on the host (for
    # texts their lengths), which on a GPU waits for nothing (test_..._never_synchronise_...).
    monkeypatch.setattr(train.ModelTraining, "_batch_loss", watched(train.ModelTraining._batch_loss))
    monkeypatch.setattr(train.ModelTraining, "_step", watched(train.ModelTraining._step))
    result = _train(name, make_separable_images)
    assert len(result.train_loss) == 2 and np.isfinite(result.train_loss).all()
    assert reads == [], f"the steps read {len(reads)} values back: {sorted(set(reads))}"


def _checking_every_step(self, xb, tb, **kwargs):
    """A step as the loop took it before its check moved to the epoch's end: the losses read back before every
    optimizer step."""
    step_losses, loss = _batch_loss(self, xb, tb, **kwargs)
    if not torch.isfinite(torch.stack([loss, *step_losses])).all():
        raise FloatingPointError(f"non-finite loss at step {kwargs['step']}")
    return step_losses, loss


_batch_loss = train.ModelTraining._batch_loss


@pytest.mark.parametrize("name", TRAININGS)
def test_training_ends_as_the_loop_that_checked_every_step(name, make_separable_images, monkeypatch):
    kept = _train(name, make_separable_images)
    monkeypatch.setattr(train.ModelTraining, "_batch_loss", _checking_every_step)
    before = _train(name, make_separable_images)
    assert kept.train_loss == before.train_loss and kept.validation_accuracy == before.validation_accuracy
    assert kept.best_epoch == before.best_epoch
    for network, reference in [(kept.model, before.model), (kept.peer, before.peer)]:
        if reference is not None:
            assert all(
                torch.equal(a, b)
                for a, b in zip(network.state_dict().values(), reference.state_dict().values(), strict=True)
            )


def test_a_stacks_steps_read_nothing_back_from_the_device(make_separable_images, monkeypatch):
    """Full steps and the ragged last ones alike: a stack's step reads no value back, whatever G."""
    reads, stepping = [], []
    for method in HOST_READS:
        original = getattr(torch.Tensor, method)

        def counted(tensor, *args, _method=method, _original=original, **kwargs):
            if stepping:
                reads.append(_method)
            return _original(tensor, *args, **kwargs)

        monkeypatch.setattr(torch.Tensor, method, counted)
    step_loss = stacked.StackTraining._step_loss

    def watched(self, *args, **kwargs):
        stepping.append(True)
        try:
            return step_loss(self, *args, **kwargs)
        finally:
            stepping.clear()

    monkeypatch.setattr(stacked.StackTraining, "_step_loss", watched)
    optimizer_step = optimizer.StackedSGD.step
    monkeypatch.setattr(optimizer.StackedSGD, "step", lambda self, rows=None: watched_step(self, rows))

    def watched_step(self, rows):
        stepping.append(True)
        try:
            return optimizer_step(self, rows)
        finally:
            stepping.clear()

    x, labels = make_separable_images(seed=0, num_samples=150, num_classes=3, shape=(3, 8, 8))
    recipe, _ = TRAININGS["sgd, mixup, shift_flip"]
    targets = np.eye(3, dtype=np.float32)[labels]
    results = stacked.train_stacked(
        recipe=recipe,
        xs=[x[:64], x[64:133]],
        targets=[targets[:64], targets[64:133]],
        seeds=[1, 2],
        validations=[(x[133:], labels[133:])] * 2,
        device=CPU,
    )
    assert all(len(result.train_loss) == 2 for result in results)
    assert reads == [], f"the steps read {len(reads)} values back: {sorted(set(reads))}"


def test_a_non_finite_loss_stops_training_at_its_epochs_end_before_it_is_scored_or_saved(monkeypatch, tmp_path):
    calls, scored = [], []
    cross_entropy = losses.soft_cross_entropy

    def diverging(logits, targets):  # epoch 2's third batch (5 batches an epoch) goes NaN
        calls.append(None)
        loss = cross_entropy(logits, targets)
        return loss * float("nan") if len(calls) == 8 else loss

    update = BestEpoch.update

    def recorded_update(self, models, *, epoch):
        scored.append(epoch)
        return update(self, models, epoch=epoch)

    monkeypatch.setattr(losses, "soft_cross_entropy", diverging)  # train_model looks its loss up there
    monkeypatch.setattr(BestEpoch, "update", recorded_update)
    x = np.random.default_rng(0).normal(size=(40, 1, 4, 4)).astype(np.float32)
    targets = np.eye(2, dtype=np.float32)[np.arange(40) % 2]
    recipe = Recipe(model="mlp", optimizer="sgd", lr=0.1, epochs=3, batch_size=8, mixup_alpha=None)
    checkpoint = tmp_path / "model.pt.epoch"
    with pytest.raises(
        FloatingPointError,
        match=r"^non-finite loss nan at epoch 2, batch 3: lower recipe.lr or check "
        r"the inputs for NaN/inf$",
    ):
        train_model(
            recipe=recipe,
            x=x,
            targets=targets,
            seed=0,
            validation=(x[:8], np.arange(8) % 2),
            device=CPU,
            resume=checkpoint,
        )
    assert len(calls) == 10, "the losses were read before epoch 2 ended"
    assert scored == [1], "the diverged epoch was scored for the best epoch"
    saved = torch.load(checkpoint, weights_only=True)
    assert saved["epoch"] == 1 and all(torch.isfinite(weights).all() for weights in saved["models"][0].values())
    assert checkpoint.exists()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU: only CUDA reports synchronisations")
@pytest.mark.parametrize("name", ["sgd, mixup, shift_flip", "co-teaching", "text"])
def test_training_steps_never_synchronise_with_the_gpu(name, make_separable_images, monkeypatch):
    """Catches what a host read in Python cannot: copies to the GPU that wait for it, reads inside torch."""
    train_epoch = train.ModelTraining.train_epoch

    def strict_epoch(*args, **kwargs):
        torch.cuda.set_sync_debug_mode("error")
        try:
            return train_epoch(*args, **kwargs)
        finally:
            torch.cuda.set_sync_debug_mode("default")

    monkeypatch.setattr(train.ModelTraining, "train_epoch", strict_epoch)
    recipe, extra = TRAININGS[name]
    result = _train(name, make_separable_images, device=torch.device("cuda"), recipe=replace(recipe, bf16=False))
    assert np.isfinite(result.train_loss).all()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU: only CUDA reports synchronisations")
def test_a_stacks_epochs_of_steps_never_synchronise_with_the_gpu(make_separable_images, monkeypatch):
    train_epoch = stacked.StackTraining.train_epoch

    def strict_epoch(*args, **kwargs):
        torch.cuda.set_sync_debug_mode("error")
        try:
            return train_epoch(*args, **kwargs)
        finally:
            torch.cuda.set_sync_debug_mode("default")

    monkeypatch.setattr(stacked.StackTraining, "train_epoch", strict_epoch)
    x, labels = make_separable_images(seed=0, num_samples=150, num_classes=3, shape=(3, 8, 8))
    recipe, _ = TRAININGS["sgd, mixup, shift_flip"]
    targets = np.eye(3, dtype=np.float32)[labels]
    results = stacked.train_stacked(
        recipe=replace(recipe, bf16=False),
        xs=[x[:64], x[64:133]],
        targets=[targets[:64], targets[64:133]],
        seeds=[1, 2],
        validations=[None, None],
        device=torch.device("cuda"),
    )
    assert all(np.isfinite(result.train_loss).all() for result in results)
