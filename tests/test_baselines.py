"""The paper's baselines (docs/paper-notes.md, "The baselines"): SL and GCE losses on hand-computed values, co-teaching's schedule,
small-loss exchange and training in the shared loop, the method -> training options mapping, and train_final."""

import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import torch
import torch.nn.functional as F

from enkcvs.io import read_json, write_table
from enkcvs.method.losses import (
    LOSSES,
    generalized_cross_entropy,
    make_loss,
    soft_cross_entropy,
    symmetric_cross_entropy,
)
from enkcvs.method.methods import BASELINE_METHODS, METHODS, ORACLE_METHODS, SELECTION_METHODS
from enkcvs.pipeline.steps.final import train_final
from enkcvs.training.batches import epoch_draws, memory_batches, resident, steps_per_epoch
from enkcvs.training.device import Execution
from enkcvs.training.evaluate import predict_proba
from enkcvs.training.final import (
    FinalTraining,
    final_recipe,
    final_training,
    final_training_set,
    resolve_forget_rate,
)
from enkcvs.training.recipe import CoTeaching, Recipe, baseline_recipe
from enkcvs.training.train import co_teaching_losses, small_loss_indices, train_model

CPU = torch.device("cpu")


pytestmark = pytest.mark.usefixtures("single_thread")


# --- SL and GCE on values computed by hand -------------------------------------------------------------------------

LOGITS = [[2.0, 0.5, -1.0], [0.1, 0.2, 1.5]]


def _softmax(row):
    exps = [math.exp(v) for v in row]
    return [e / sum(exps) for e in exps]


def test_symmetric_cross_entropy_on_one_hot_targets_by_hand():
    """One-hot target y: CE = -log p_y and RCE = -(1 - p_y) log 1e-4 (log 0 clipped to log 1e-4)."""
    labels = [0, 2]
    alpha, beta = 0.1, 1.0
    expected = 0.0
    for row, y in zip(LOGITS, labels):
        p = _softmax(row)
        expected += alpha * -math.log(p[y]) + beta * -(1 - p[y]) * math.log(1e-4)
    expected /= 2
    targets = F.one_hot(torch.tensor(labels), 3).float()
    value = symmetric_cross_entropy(torch.tensor(LOGITS), targets, alpha=alpha, beta=beta)
    assert value.item() == pytest.approx(expected, rel=1e-6)


def test_symmetric_cross_entropy_on_a_soft_target_clips_only_zero_entries():
    """Soft (mixup) target t = (0.7, 0.3, 0): RCE = -(p_0 log 0.7 + p_1 log 0.3 + p_2 log 1e-4)."""
    p = _softmax(LOGITS[0])
    t = [0.7, 0.3, 0.0]
    ce = -sum(tk * math.log(pk) for tk, pk in zip(t, p))
    rce = -(p[0] * math.log(0.7) + p[1] * math.log(0.3) + p[2] * math.log(1e-4))
    value = symmetric_cross_entropy(torch.tensor(LOGITS[:1]), torch.tensor([t]), alpha=6.0, beta=0.1)
    assert value.item() == pytest.approx(6.0 * ce + 0.1 * rce, rel=1e-6)


def test_symmetric_cross_entropy_with_beta_zero_is_scaled_cross_entropy():
    targets = F.one_hot(torch.tensor([1, 0]), 3).float()
    logits = torch.tensor(LOGITS)
    torch.testing.assert_close(
        symmetric_cross_entropy(logits, targets, alpha=0.5, beta=0.0), 0.5 * soft_cross_entropy(logits, targets)
    )


def test_generalized_cross_entropy_by_hand():
    """GCE = sum_k t_k (1 - p_k^q) / q: (1 - p_y^q) / q on one-hot rows, batch mean."""
    q = 0.7
    labels = [1, 2]
    expected = sum((1 - _softmax(row)[y] ** q) / q for row, y in zip(LOGITS, labels)) / 2
    targets = F.one_hot(torch.tensor(labels), 3).float()
    assert generalized_cross_entropy(torch.tensor(LOGITS), targets, q=q).item() == pytest.approx(expected, rel=1e-6)
    soft = [0.6, 0.0, 0.4]
    p = _softmax(LOGITS[1])
    by_hand = sum(tk * (1 - pk**q) / q for tk, pk in zip(soft, p))
    value = generalized_cross_entropy(torch.tensor(LOGITS[1:]), torch.tensor([soft]), q=q)
    assert value.item() == pytest.approx(by_hand, rel=1e-6)


def test_generalized_cross_entropy_approaches_cross_entropy_as_q_goes_to_zero():
    generator = torch.Generator().manual_seed(0)
    logits = torch.randn(16, 5, generator=generator)
    targets = F.one_hot(torch.randint(0, 5, (16,), generator=generator), 5).float()
    ce = soft_cross_entropy(logits, targets).item()
    gaps = [abs(generalized_cross_entropy(logits, targets, q=q).item() - ce) for q in (0.5, 0.1, 1e-3)]
    assert gaps[0] > gaps[1] > gaps[2] and gaps[2] < 1e-2 * ce


@pytest.mark.parametrize("q", [0.0, -0.1, 1.5])
def test_generalized_cross_entropy_rejects_q_outside_zero_one(q):
    with pytest.raises(ValueError, match="0 < q <= 1"):
        generalized_cross_entropy(torch.zeros(2, 3), torch.eye(3)[:2], q=q)


def test_make_loss_binds_parameters_and_rejects_bad_names():
    logits, targets = torch.tensor(LOGITS), torch.eye(3)[[0, 2]]
    assert set(LOSSES) == {"ce", "sl", "gce"}
    assert make_loss("ce") is soft_cross_entropy
    torch.testing.assert_close(
        make_loss("sl", alpha=0.1, beta=1.0)(logits, targets),
        symmetric_cross_entropy(logits, targets, alpha=0.1, beta=1.0),
    )
    torch.testing.assert_close(make_loss("gce")(logits, targets), generalized_cross_entropy(logits, targets, q=0.7))
    with pytest.raises(ValueError, match=r"unknown loss 'focal'; known losses: \['ce', 'sl', 'gce'\]"):
        make_loss("focal")
    with pytest.raises(ValueError, match=r"loss 'sl' takes parameters \['alpha', 'beta'\], got \['alpha'\]"):
        make_loss("sl", alpha=0.1)
    with pytest.raises(ValueError, match=r"loss 'ce' takes parameters \[\], got \['q'\]"):
        make_loss("ce", q=0.7)
    with pytest.raises(ValueError, match=r"loss 'gce' takes parameters \['q'\], got \['alpha'\]"):
        make_loss("gce", alpha=1.0)


# --- Co-teaching ---------------------------------------------------------------------------------------------------


def test_small_loss_indices_picks_the_smallest_losses():
    losses = torch.tensor([0.5, 3.0, 0.1, 2.0, 0.2, 0.5])
    assert small_loss_indices(losses, keep=3).tolist() == [2, 4, 0]
    assert small_loss_indices(losses, keep=4).tolist() == [2, 4, 0, 5]  # tie: lower index first
    assert small_loss_indices(losses, keep=6).tolist() == [2, 4, 0, 5, 3, 1]
    assert small_loss_indices(losses, keep=0).tolist() == []


def test_forget_rate_rises_per_epoch_over_a_long_warmup():
    """A warm-up of >= 10 whole epochs ramps per epoch (the authors' code): every step of an epoch forgets alike."""
    schedule = CoTeaching(forget_rate=0.4, warmup_epochs=10)
    assert not schedule.per_step
    rates = [schedule.rate(epoch=epoch, step=(epoch - 1) * 7 + 1, steps_per_epoch=7) for epoch in range(1, 13)]
    np.testing.assert_allclose(rates, [0.04, 0.08, 0.12, 0.16, 0.2, 0.24, 0.28, 0.32, 0.36, 0.4, 0.4, 0.4])
    assert schedule.rate(epoch=3, step=15, steps_per_epoch=7) == schedule.rate(epoch=3, step=21, steps_per_epoch=7)
    assert CoTeaching(forget_rate=0.3, warmup_epochs=0).rate(epoch=1, step=1, steps_per_epoch=5) == 0.3


@pytest.mark.parametrize("warmup", [1, 2, 0.5])
def test_forget_rate_rises_per_step_over_a_short_warmup(warmup):
    """A warm-up shorter than 10 epochs ramps per step, from near 0 at the first batch to the full rate at the
    warm-up's last step (per epoch, 1 warm-up epoch would forget the full rate from the first batch)."""
    schedule = CoTeaching(forget_rate=0.4, warmup_epochs=warmup)
    assert schedule.per_step
    per_epoch, warmup_steps = 10, round(warmup * 10)
    rates = [
        schedule.rate(epoch=1 + (step - 1) // per_epoch, step=step, steps_per_epoch=per_epoch) for step in range(1, 31)
    ]
    np.testing.assert_allclose(rates[:warmup_steps], 0.4 * np.arange(1, warmup_steps + 1) / warmup_steps)
    np.testing.assert_allclose(rates[warmup_steps:], 0.4)
    assert rates[0] < 0.4 / 4


def test_forget_rate_ramp_can_be_chosen():
    assert CoTeaching(forget_rate=0.4, warmup_epochs=10, ramp="step").per_step
    assert not CoTeaching(forget_rate=0.4, warmup_epochs=2, ramp="epoch").per_step
    assert CoTeaching(forget_rate=0.4, warmup_epochs=2, ramp="epoch").rate(epoch=1, step=1, steps_per_epoch=9) == 0.2


def test_the_authors_forget_rate_rise_is_a_nine_epoch_ramp_per_epoch():
    """Their rate at epoch e is np.linspace(0, tau, 10)[e] (their epoch 0 only evaluates): tau / 9 in the first
    trained epoch, tau from the ninth on."""
    schedule = CoTeaching(forget_rate=0.45, warmup_epochs=9, ramp="epoch")
    rates = [schedule.rate(epoch=epoch, step=(epoch - 1) * 401 + 1, steps_per_epoch=401) for epoch in range(1, 13)]
    theirs = np.ones(13) * 0.45
    theirs[:10] = np.linspace(0, 0.45, 10)
    np.testing.assert_allclose(rates, theirs[1:13])


def test_steps_per_epoch_skips_a_last_batch_of_one_and_stops_at_the_recipes_limit():
    assert [steps_per_epoch(n, batch_size=4) for n in (8, 9, 10, 11)] == [2, 2, 3, 3]
    assert [steps_per_epoch(n, batch_size=4, limit=2) for n in (4, 8, 11)] == [1, 2, 2]
    recipe = Recipe(
        model="mlp", optimizer="adam", lr=0.001, epochs=2, batch_size=4, steps_per_epoch=2, mixup_alpha=None
    )
    x, targets = np.zeros((11, 1, 2, 2), np.float32), np.eye(3, dtype=np.float32)[np.arange(11) % 3]
    generator, rng, cpu = torch.Generator().manual_seed(0), np.random.default_rng(0), torch.device("cpu")
    epochs = [
        list(
            memory_batches(
                resident(x, cpu),
                torch.as_tensor(targets),
                draws=epoch_draws(11, recipe=recipe, generator=generator, rng=rng, device=cpu),
            )
        )
        for _ in range(2)
    ]
    assert [[len(tb) for _, tb in epoch] for epoch in epochs] == [[4, 4], [4, 4]]


def test_co_teaching_trains_with_its_authors_network_and_schedule():
    """The pieces of the authors' recipe together (AUTHORS_SCHEDULES, shortened to 2 epochs of 2 steps): their
    network, Adam whose lr and beta1 change at the decay's start, epochs cut after their steps, two networks."""
    dataset = {
        "model": "cnn4",
        "optimizer": "sgd",
        "lr": 0.01,
        "epochs": 50,
        "milestones": [10, 30],
        "mixup_alpha": 0.3,
    }
    authors = baseline_recipe(dataset, baseline="coteaching", schedule="authors", paper_name="MNIST")
    recipe = Recipe.from_dict(
        {**authors, "epochs": 2, "batch_size": 8, "steps_per_epoch": 2, "lr_linear_decay_from": 2, "bf16": False}
    )  # no probe of the big network
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, size=(24, 1, 28, 28), dtype=np.uint8)
    targets = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 24)]
    result = train_model(
        recipe=recipe,
        x=x,
        targets=targets,
        seed=0,
        co_teaching=CoTeaching(forget_rate=0.2, warmup_epochs=1, ramp="epoch"),
    )
    assert len(result.train_loss) == 2 and np.isfinite(result.train_loss).all() and result.peer is not None
    assert isinstance(result.model[0], torch.nn.Conv2d) and result.model[0].out_channels == 128


def test_co_teaching_updates_each_network_on_its_peers_small_loss_samples():
    """Net 1 finds samples 0, 1 clean, net 2 finds samples 2, 3 clean (forget half): net 2 learns from 0, 1."""
    targets = torch.eye(3)[[0, 1, 2, 0]]
    confident, wrong = 5.0, -5.0
    logits_1 = torch.tensor([[confident, 0, 0], [0, confident, 0], [wrong, 0, 0], [wrong, 0, 0]])
    logits_2 = torch.tensor([[wrong, 0, 0], [0, wrong, 0], [0, 0, confident], [confident, 0, 0]])
    (loss_1, loss_2), batch_loss = co_teaching_losses((logits_1, logits_2), targets, forget_rate=0.5)
    labels = targets.argmax(1)
    torch.testing.assert_close(loss_1, F.cross_entropy(logits_1[2:], labels[2:]))  # net 2's clean samples
    torch.testing.assert_close(loss_2, F.cross_entropy(logits_2[:2], labels[:2]))  # net 1's clean samples
    everything = torch.cat(
        [F.cross_entropy(logits_1, labels, reduction="none"), F.cross_entropy(logits_2, labels, reduction="none")]
    )
    torch.testing.assert_close(batch_loss, everything.mean())
    # round((1 - 0.6) * 4) = 2 samples are kept as well; a forget rate near 1 still keeps one sample.
    (loss_1, _), _ = co_teaching_losses((logits_1, logits_2), targets, forget_rate=0.6)
    torch.testing.assert_close(loss_1, F.cross_entropy(logits_1[2:], labels[2:]))
    (loss_1, _), _ = co_teaching_losses((logits_1, logits_2), targets, forget_rate=0.99)
    torch.testing.assert_close(loss_1, F.cross_entropy(logits_1[2:3], labels[2:3]))


@pytest.mark.parametrize(
    ("forget_rate", "warmup", "ramp"),
    [
        (1.0, 10, "auto"),
        (-0.1, 10, "auto"),
        (0.2, -1, "auto"),
        (0.2, "2", "auto"),
        (0.2, 2.5, "epoch"),
        (0.2, 2, "batch"),
    ],
)
def test_co_teaching_settings_are_checked(forget_rate, warmup, ramp):
    with pytest.raises(ValueError, match="co-teaching"):
        CoTeaching(forget_rate=forget_rate, warmup_epochs=warmup, ramp=ramp)


RECIPE = Recipe(model="mlp", optimizer="sgd", lr=0.1, epochs=4, batch_size=32, mixup_alpha=None)
CO_TEACHING = CoTeaching(forget_rate=0.2, warmup_epochs=2)


def _state_equal(a, b):
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def _co_teach(x, labels, **kwargs):
    targets = np.eye(labels.max() + 1, dtype=np.float32)[labels]
    return train_model(recipe=RECIPE, x=x, targets=targets, seed=3, device=CPU, co_teaching=CO_TEACHING, **kwargs)


def test_co_teaching_trains_two_different_networks_reproducibly(make_separable_images):
    x, labels = make_separable_images(seed=0, num_samples=200, num_classes=4)
    first, second = _co_teach(x, labels), _co_teach(x, labels)
    assert first.peer is not None and not first.model.training and not first.peer.training
    assert not _state_equal(first.model, first.peer)  # different initialisations, different updates
    assert _state_equal(first.model, second.model) and _state_equal(first.peer, second.peer)
    assert first.train_loss == second.train_loss and len(first.train_loss) == RECIPE.epochs
    assert first.best_epoch == RECIPE.epochs  # no validation: last epoch
    for model in (first.model, first.peer):
        assert np.mean(predict_proba(model, x, device=CPU).argmax(axis=1) == labels) >= 0.95
    assert train_model(recipe=RECIPE, x=x, targets=np.eye(4, dtype=np.float32)[labels], seed=3, device=CPU).peer is None


def test_co_teaching_keeps_the_best_validation_epoch_for_both_networks(make_separable_images):
    x, labels = make_separable_images(seed=0, num_samples=200, num_classes=4)
    x_val, y_val = make_separable_images(seed=100, num_samples=60, num_classes=4)
    noisy = np.random.default_rng(0).uniform(size=60) < 0.7
    y_val = np.where(noisy, np.random.default_rng(9).integers(0, 4, 60), y_val)
    result = _co_teach(x, labels, validation=(x_val, y_val))
    assert result.best_epoch == int(np.argmax(result.validation_accuracy)) + 1
    assert result.best_epoch < RECIPE.epochs, "fixture should make an earlier epoch the best one"
    kept_accuracy = np.mean(predict_proba(result.model, x_val, device=CPU).argmax(axis=1) == y_val)
    assert kept_accuracy == pytest.approx(max(result.validation_accuracy))
    # The kept epoch applies to both networks: a run stopped there ends with the same pair.
    stopped = train_model(
        recipe=Recipe(**{**RECIPE.__dict__, "epochs": result.best_epoch}),
        x=x,
        targets=np.eye(4, dtype=np.float32)[labels],
        seed=3,
        device=CPU,
        co_teaching=CO_TEACHING,
    )
    assert _state_equal(result.model, stopped.model) and _state_equal(result.peer, stopped.peer)


def test_co_teaching_stops_on_a_non_finite_loss():
    x = np.ones((40, 1, 4, 4), dtype=np.float32)
    x[25] = np.nan
    targets = np.eye(3, dtype=np.float32)[np.arange(40) % 3]
    recipe = Recipe(model="mlp", optimizer="sgd", lr=0.1, epochs=2, batch_size=8, mixup_alpha=None)
    with pytest.raises(FloatingPointError, match=r"non-finite loss nan at epoch 1, batch [1-5]: lower recipe.lr"):
        train_model(recipe=recipe, x=x, targets=targets, seed=0, device=CPU, co_teaching=CoTeaching(forget_rate=0.5))


def test_co_teaching_out_of_memory_names_the_batch_size_to_lower(monkeypatch):
    def exhausted(*args, **kwargs):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    monkeypatch.setattr("enkcvs.method.losses.cross_entropy_per_sample", exhausted)
    recipe = Recipe(model="mlp", optimizer="sgd", lr=0.1, epochs=1, batch_size=16, mixup_alpha=None)
    x, targets = np.zeros((32, 1, 4, 4), dtype=np.float32), np.eye(2, dtype=np.float32)[np.arange(32) % 2]
    message = r"epoch 1, batch 1 with batch_size 16: lower recipe.batch_size \(e.g. to 8\)"
    with pytest.raises(MemoryError, match=message):
        train_model(recipe=recipe, x=x, targets=targets, seed=0, device=CPU, co_teaching=CO_TEACHING)


def test_co_teaching_refuses_another_loss_and_mixup():
    x, targets = np.zeros((4, 1, 4, 4), np.float32), np.eye(2, dtype=np.float32)[[0, 1, 0, 1]]
    with pytest.raises(ValueError, match="co-teaching trains with plain cross-entropy"):
        train_model(recipe=RECIPE, x=x, targets=targets, seed=0, device=CPU, loss="gce", co_teaching=CO_TEACHING)
    with pytest.raises(ValueError, match="co-teaching trains without mixup"):
        train_model(
            recipe=Recipe(**{**RECIPE.__dict__, "mixup_alpha": 0.3}),
            x=x,
            targets=targets,
            seed=0,
            device=CPU,
            co_teaching=CO_TEACHING,
        )


@pytest.mark.parametrize(("loss", "params"), [("sl", {"alpha": 0.1, "beta": 1.0}), ("gce", {"q": 0.7})])
def test_robust_losses_train_in_the_shared_loop(make_separable_images, loss, params):
    x, labels = make_separable_images(seed=0, num_samples=200, num_classes=4)
    targets = np.eye(4, dtype=np.float32)[labels]
    first, second = (
        train_model(recipe=RECIPE, x=x, targets=targets, seed=0, device=CPU, loss=loss, loss_params=params)
        for _ in range(2)
    )
    assert _state_equal(first.model, second.model) and first.train_loss == second.train_loss
    assert np.mean(predict_proba(first.model, x, device=CPU).argmax(axis=1) == labels) >= 0.95
    ce = train_model(recipe=RECIPE, x=x, targets=targets, seed=0, device=CPU)
    assert first.train_loss != ce.train_loss  # the loss is really swapped


# --- Methods -------------------------------------------------------------------------------------------------------


def test_baselines_and_selection_methods_partition_the_methods_beside_incv_and_the_ensemble():
    assert set(BASELINE_METHODS) == {"ce", "ce_mixup", "ce_true", "sl", "sl_mixup", "gce", "coteaching", "cs_only"}
    assert set(BASELINE_METHODS).isdisjoint(SELECTION_METHODS)
    # tests/test_matched_baselines.py: INCV's own selection and the ensemble at E-NKCVS's budget are the rest
    assert set(METHODS) - set(BASELINE_METHODS) - set(SELECTION_METHODS) == {"incv", "ce_mixup_ensemble"}


def test_final_training_maps_methods_to_how_they_train():
    assert final_training(method="sl", options={"alpha": 0.01, "beta": 1}) == FinalTraining(
        mixup=False, loss="sl", loss_params={"alpha": 0.01, "beta": 1.0}
    )
    assert final_training(method="gce", options={"q": 0.7, "mixup": True}) == FinalTraining(
        mixup=True, loss="gce", loss_params={"q": 0.7}
    )
    assert final_training(method="coteaching", options={"forget_rate": 0.4, "warmup_epochs": 10}) == FinalTraining(
        mixup=False, co_teaching=CoTeaching(forget_rate=0.4, warmup_epochs=10)
    )
    # The paper's baselines train as their authors do, without mixup; E-NKCVS and the selection rungs mix.
    for method in ("ce", "ce_true"):
        assert final_training(method=method, options={}) == FinalTraining(mixup=False)
    for method in (
        "ce_mixup",
        "cs_only",
        "ss_only",
        "css_only",
        "cl_prune",
        "ss_pseudo",
        "ss_pseudo_weighted",
        "enkcvs",
    ):
        assert final_training(method=method, options={}) == FinalTraining(mixup=True)
    assert final_training(method="ce", options={"mixup": True}).mixup  # a baseline may opt in


def test_final_recipe_drops_mixup_only_where_the_method_does_not_mix():
    recipe = Recipe(model="mlp", optimizer="sgd", lr=0.1, epochs=1, mixup_alpha=0.3)
    assert final_recipe(recipe, training=FinalTraining(mixup=True)) == recipe
    assert final_recipe(recipe, training=FinalTraining(mixup=False)).mixup_alpha is None
    assert final_recipe(recipe, training=FinalTraining(mixup=False)).lr == recipe.lr


def test_co_teaching_refuses_mixup_naming_the_key():
    with pytest.raises(ValueError, match=r"baselines\.coteaching\.mixup"):
        final_training(method="coteaching", options={"forget_rate": 0.2, "warmup_epochs": 10, "mixup": True})


@pytest.mark.parametrize(
    ("method", "options", "message"),
    [
        (
            "sl",
            {"alpha": 0.1},
            r"method 'sl' takes options \['alpha', 'beta'\] and optionally "
            r"\['mixup'\]: missing \['beta'\]",
        ),
        (
            "gce",
            {"q": 0.7, "alpha": 1},
            r"method 'gce' takes options \['q'\] and optionally \['mixup'\]: "
            r"unknown \['alpha'\]",
        ),
        ("coteaching", {"forget_rate": 0.2}, r"missing \['warmup_epochs'\]"),
        ("ce", {"q": 0.7}, r"method 'ce' takes options \[\] and optionally \['mixup'\]: unknown \['q'\]"),
        ("enkcvs", {"gamma": 0.2}, r"method 'enkcvs' takes options \[\]: unknown \['gamma'\]"),
        ("enkcvs", {"mixup": False}, r"unknown \['mixup'\]"),
        ("dividemix", {}, r"unknown method 'dividemix'"),
        ("coteaching", {"forget_rate": 1.0, "warmup_epochs": 10}, r"forget_rate must lie in \[0, 1\)"),
    ],
)
def test_final_training_rejects_bad_options(method, options, message):
    with pytest.raises(ValueError, match=message):
        final_training(method=method, options=options)


@pytest.mark.parametrize("method", [method for method in BASELINE_METHODS if method not in ORACLE_METHODS])
def test_final_training_set_baselines_use_every_sample_one_hot(method):
    given = np.random.default_rng(1).integers(0, 4, 30)
    indices, targets = final_training_set(method=method, given=given, num_classes=4)
    np.testing.assert_array_equal(indices, np.arange(30))
    np.testing.assert_array_equal(targets, np.eye(4)[given])


def test_final_training_set_oracles_train_on_the_true_labels_only_when_known():
    given, true = np.array([0, 1, 2, 3, 0, 1]), np.array([0, 2, 2, 1, 0, 1])  # wrong at 1 and 3
    selection = pd.DataFrame({"selected": [True, True, False, False, True, True], "pseudo": [0] * 6, "beta": [0.0] * 6})
    indices, targets = final_training_set(method="ce_true", given=given, true=true, num_classes=4)
    np.testing.assert_array_equal(indices, np.arange(6))
    np.testing.assert_array_equal(targets, np.eye(4)[true])
    indices, targets = final_training_set(method="cs_only", given=given, true=true, num_classes=4)
    np.testing.assert_array_equal(indices, [0, 2, 4, 5])  # CS: every sample whose given label is right
    np.testing.assert_array_equal(targets, np.eye(4)[given[[0, 2, 4, 5]]])
    indices, _ = final_training_set(method="css_only", given=given, true=true, num_classes=4, selection=selection)
    np.testing.assert_array_equal(indices, [0, 4, 5])  # CSS: SS {0, 1, 4, 5} minus the wrong label at 1
    for method in ORACLE_METHODS:
        for unknown in (None, np.full(6, -1)):  # 'real' noise stores -1: no true labels
            with pytest.raises(ValueError, match=f"'{method}' needs the true labels"):
                final_training_set(method=method, given=given, true=unknown, num_classes=4, selection=selection)


def test_final_training_set_ss_pseudo_relabels_the_rest_with_equal_weights():
    given = np.array([0, 1, 2, 3, 0, 1])
    selection = pd.DataFrame(
        {
            "selected": [True, True, False, False, True, False],
            "pseudo": [3, 3, 0, 1, 2, 2],
            "beta": [0.0, 0.0, 0.9, 0.5, 0.0, 0.3],
        }
    )
    indices, targets = final_training_set(method="ss_pseudo", given=given, num_classes=4, selection=selection)
    np.testing.assert_array_equal(indices, np.arange(6))
    # SS keeps its given labels, the others take their pseudo labels; every row is one-hot (weight 1): no beta, gamma
    np.testing.assert_array_equal(targets, np.eye(4)[[0, 1, 0, 1, 0, 2]])


def test_final_training_set_full_loss_rung_weighs_hard_pseudo_labels_by_gamma():
    """The rung between SS + pseudo rest and E-NKCVS: hard pseudo labels (beta = 0) under Eq. full-loss's per-set
    normalisation and gamma."""
    given = np.array([0, 1, 2, 3, 0, 1])
    selected = np.array([True, True, False, False, True, False])
    selection = pd.DataFrame(
        {"selected": selected, "pseudo": [3, 3, 0, 1, 2, 2], "beta": [0.0, 0.0, 0.9, 0.5, 0.0, 0.3]}
    )
    indices, targets = final_training_set(
        method="ss_pseudo_weighted", given=given, num_classes=4, selection=selection, gamma=0.2
    )
    np.testing.assert_array_equal(indices, np.arange(6))
    weights = np.where(selected, 6 / 3, 0.2 * 6 / 3)  # N/|SS| on SS, gamma N/(N - |SS|) elsewhere
    np.testing.assert_allclose(targets, np.eye(4)[[0, 1, 0, 1, 0, 2]] * weights[:, None], rtol=1e-6)
    # beta = 0 everywhere: E-NKCVS's targets on the same selection differ from these by beta alone
    _, enkcvs = final_training_set(
        method="enkcvs", given=given, num_classes=4, gamma=0.2, selection=selection.assign(beta=0.0)
    )
    np.testing.assert_allclose(enkcvs, targets, rtol=1e-6)


def test_final_training_set_prune_and_retrain_keeps_the_unflagged_samples():
    given = np.array([0, 1, 2, 3, 0, 1])
    kept = pd.DataFrame({"selected": [True, False, True, True, False, True]})
    indices, targets = final_training_set(method="cl_prune", given=given, num_classes=4, selection=kept)
    np.testing.assert_array_equal(indices, [0, 2, 3, 5])
    np.testing.assert_array_equal(targets, np.eye(4)[given[[0, 2, 3, 5]]])


def test_methods_module_never_imports_torch():
    """The workflow imports enkcvs.training.final to plan jobs: it must stay torch-free."""
    probe = "import sys, enkcvs.training.final; print(sorted(m for m in sys.modules if m.split('.')[0] == 'torch'))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


# --- train_final ---------------------------------------------------------------------------------------------------

STEP_RECIPE = {"model": "mlp", "optimizer": "sgd", "lr": 0.1, "epochs": 2, "batch_size": 32}


def _train_final(base, method, options, output, recipe=STEP_RECIPE):
    train_final(
        dataset=base / "data.npz",
        labels=base / "labels.parquet",
        selection=None,
        method=method,
        recipe=recipe,
        gamma=0.2,
        seed=1,
        execution=Execution(device=torch.device("cpu")),
        output=output,
        provenance_fields={"dataset": "tiny"},
        options=options,
    )


@pytest.mark.parametrize(
    ("method", "options"),
    [
        ("sl", {"alpha": 0.1, "beta": 1.0}),
        ("gce", {"q": 0.7}),
        ("coteaching", {"forget_rate": 0.2, "warmup_epochs": 10}),
    ],
)
def test_train_final_records_the_baselines_options(tiny_inputs, method, options):
    output = tiny_inputs / f"{method}.json"
    _train_final(tiny_inputs, method, options, output)
    result = read_json(output)
    assert result["method"] == method and result["options"] == options
    assert result["train_samples"] == 60 and result["gamma"] is None
    assert 0.0 <= result["test_accuracy"] <= 1.0 and math.isfinite(result["final_train_loss"])


@pytest.mark.parametrize(
    ("method", "options"),
    [("ce", {}), ("sl", {"alpha": 0.1, "beta": 1.0}), ("coteaching", {"forget_rate": 0.2, "warmup_epochs": 1})],
)
def test_every_final_model_records_its_test_accuracy_after_every_epoch_the_last_its_test_accuracy(
    tiny_inputs, method, options
):
    recipe = {**STEP_RECIPE, "epochs": 3}
    output = tiny_inputs / f"{method}.json"
    _train_final(tiny_inputs, method, options, output, recipe=recipe)
    result = read_json(output)
    assert len(result["test_accuracy_by_epoch"]) == 3
    assert all(0.0 <= accuracy <= 1.0 for accuracy in result["test_accuracy_by_epoch"])
    # the protocol: the last epoch, the model kept, scored again on the same test set
    assert result["test_accuracy_by_epoch"][-1] == result["test_accuracy"]


def test_train_final_without_options_records_none_given(tiny_inputs):
    output = tiny_inputs / "ce.json"
    train_final(
        dataset=tiny_inputs / "data.npz",
        labels=tiny_inputs / "labels.parquet",
        selection=None,
        method="ce",
        recipe=STEP_RECIPE,
        gamma=0.2,
        seed=1,
        execution=Execution(device=torch.device("cpu")),
        output=output,
        provenance_fields={},
    )
    assert read_json(output)["options"] == {}


def test_train_final_rejects_missing_options_and_writes_nothing(tiny_inputs):
    with pytest.raises(ValueError, match=r"method 'sl' takes options \['alpha', 'beta'\].*: missing \['beta'\]"):
        _train_final(tiny_inputs, "sl", {"alpha": 0.1}, tiny_inputs / "never.json")
    assert not (tiny_inputs / "never.json").exists()


MIXUP_RECIPE = {**STEP_RECIPE, "mixup_alpha": 0.3}


def _write_selection(base):
    """A selection table over the 60 samples of ``tiny_inputs``: every other sample selected, pseudo labels 0."""
    selection = pd.DataFrame(
        {
            "sample": np.arange(60),
            "selected": np.arange(60) % 2 == 0,
            "pseudo": np.zeros(60, dtype=np.int64),
            "beta": np.full(60, 0.5),
        }
    )
    write_table(selection, base / "selection.parquet", metadata={})
    return base / "selection.parquet"


@pytest.mark.parametrize(
    ("method", "options", "mixes"),
    [
        ("ce", {}, False),
        ("ce", {"mixup": False}, False),
        ("sl", {"alpha": 0.1, "beta": 1.0}, False),
        ("gce", {"q": 0.7}, False),
        ("coteaching", {"forget_rate": 0.2, "warmup_epochs": 1}, False),
        ("ce", {"mixup": True}, True),
        ("ce_mixup", {}, True),
        ("enkcvs", {}, True),
        ("ss_only", {}, True),
    ],
)
def test_final_models_receive_mixup_only_where_their_method_mixes(tiny_inputs, monkeypatch, method, options, mixes):
    """The recipe mixes (alpha 0.3); CE, SL, GCE and co-teaching train without it, E-NKCVS and CE + mixup with it:
    seen in what train_model receives and in the provenance."""
    import enkcvs.training.train

    received = []
    real_train_model = enkcvs.training.train.train_model

    def spy(**kwargs):
        received.append(kwargs["recipe"])
        return real_train_model(**kwargs)

    monkeypatch.setattr(enkcvs.training.train, "train_model", spy)
    output = tiny_inputs / f"{method}.json"
    selection = _write_selection(tiny_inputs) if method in SELECTION_METHODS else None
    train_final(
        dataset=tiny_inputs / "data.npz",
        labels=tiny_inputs / "labels.parquet",
        selection=selection,
        method=method,
        recipe=MIXUP_RECIPE,
        gamma=0.2,
        seed=1,
        execution=Execution(device=torch.device("cpu")),
        output=output,
        provenance_fields={},
        options=options,
    )
    [recipe] = received
    assert recipe.mixup_alpha == (0.3 if mixes else None)
    record = read_json(output)
    assert record["trained_with"]["mixup_alpha"] == (0.3 if mixes else None)
    assert record["recipe"]["mixup_alpha"] == (0.3 if mixes else None)


def test_ce_and_ce_with_mixup_differ_on_the_same_seed(tiny_inputs):
    results = {}
    for method in ("ce", "ce_mixup"):
        output = tiny_inputs / f"{method}.json"
        train_final(
            dataset=tiny_inputs / "data.npz",
            labels=tiny_inputs / "labels.parquet",
            selection=None,
            method=method,
            recipe=MIXUP_RECIPE,
            gamma=0.2,
            seed=1,
            execution=Execution(device=torch.device("cpu")),
            output=output,
            provenance_fields={},
        )
        results[method] = read_json(output)
    assert results["ce"]["final_train_loss"] != results["ce_mixup"]["final_train_loss"]
    # the same method twice is equal bit for bit: the difference is mixup's, not chance's
    train_final(
        dataset=tiny_inputs / "data.npz",
        labels=tiny_inputs / "labels.parquet",
        selection=None,
        method="ce",
        recipe=MIXUP_RECIPE,
        gamma=0.2,
        seed=1,
        execution=Execution(device=torch.device("cpu")),
        output=tiny_inputs / "again.json",
        provenance_fields={},
    )
    assert read_json(tiny_inputs / "again.json")["final_train_loss"] == results["ce"]["final_train_loss"]


def test_provenance_states_loss_and_forget_rate_as_trained(tiny_inputs):
    _train_final(tiny_inputs, "sl", {"alpha": 0.1, "beta": 1.0}, tiny_inputs / "sl.json")
    assert read_json(tiny_inputs / "sl.json")["trained_with"] == {
        "mixup_alpha": None,
        "loss": {"name": "sl", "alpha": 0.1, "beta": 1.0},
        "co_teaching": None,
    }
    _train_final(
        tiny_inputs, "coteaching", {"forget_rate": "actual", "warmup_epochs": 1}, tiny_inputs / "coteaching.json"
    )
    record = read_json(tiny_inputs / "coteaching.json")
    labels = pd.read_parquet(tiny_inputs / "labels.parquet")
    actual = float(np.mean(labels["given"] != labels["true"]))  # sym0.2: 12 of 60
    assert record["options"]["forget_rate"] == "actual"
    assert record["trained_with"] == {
        "mixup_alpha": None,
        "loss": {"name": "ce"},
        "co_teaching": {"forget_rate": actual, "warmup_epochs": 1, "ramp": "auto", "per_step": True},
    }


def test_co_teaching_training_ramps_the_forget_rate_per_step_on_a_short_warmup(make_separable_images, monkeypatch):
    """One warm-up epoch of two: the first batch forgets almost nothing, the rate reaches tau at the epoch's last
    step and stays there (per epoch, the first batch would already forget tau)."""
    import enkcvs.training.train

    rates, real = [], enkcvs.training.train.co_teaching_losses

    def spy(logits, targets, *, forget_rate):
        rates.append(forget_rate)
        return real(logits, targets, forget_rate=forget_rate)

    monkeypatch.setattr(enkcvs.training.train, "co_teaching_losses", spy)
    x, labels = make_separable_images(seed=0, num_samples=128, num_classes=4)
    recipe = Recipe(model="mlp", optimizer="sgd", lr=0.1, epochs=2, batch_size=32, mixup_alpha=None)
    train_model(
        recipe=recipe,
        x=x,
        targets=np.eye(4, dtype=np.float32)[labels],
        seed=0,
        device=CPU,
        co_teaching=CoTeaching(forget_rate=0.4, warmup_epochs=1),
    )
    np.testing.assert_allclose(rates, [0.1, 0.2, 0.3, 0.4, 0.4, 0.4, 0.4, 0.4])


def test_forget_rate_resolves_nominal_actual_and_numbers():
    given, true = np.array([0, 1, 2, 3, 0, 1, 2, 3]), np.array([0, 1, 2, 3, 0, 1, 3, 2])  # 2 of 8 wrong
    assert resolve_forget_rate("nominal", noise="asym0.4", given=given, true=true) == 0.4
    assert resolve_forget_rate("actual", noise="asym0.4", given=given, true=true) == 0.25
    assert resolve_forget_rate(0.3, noise="asym0.4", given=given, true=true) == 0.3
    with pytest.raises(ValueError, match="set baselines.coteaching.forget_rate to a number"):
        resolve_forget_rate("nominal", noise="real", given=given, true=np.full(8, -1))
    with pytest.raises(ValueError, match="only injected noise knows"):
        resolve_forget_rate("actual", noise="real", given=given, true=np.full(8, -1))
