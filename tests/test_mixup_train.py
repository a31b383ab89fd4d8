"""Mixup (Eq. mixup), the shared training loop, the model registry and the final-training sets (Eq. full-loss)."""

import io
import logging
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import torch.nn.functional as F
import yaml

from enkcvs.method.losses import soft_cross_entropy
from enkcvs.method.methods import METHODS
from enkcvs.method.mixup import mixup, mixup_lambdas, partner_index
from enkcvs.method.weights import full_loss_sample_weights
from enkcvs.training.device import Execution
from enkcvs.training.evaluate import predict_proba
from enkcvs.training.final import final_training_set
from enkcvs.training.models import create_model
from enkcvs.training.recipe import Recipe
from enkcvs.training.train import epoch_device, log_epoch, train_model

CPU = torch.device("cpu")
RECIPE = Recipe(model="mlp", optimizer="sgd", lr=0.1, epochs=5, batch_size=32)


pytestmark = pytest.mark.usefixtures("single_thread")


@pytest.mark.parametrize("alpha", [0.1, 0.3, 1.0, 4.0])
def test_mixup_lambda_lies_in_half_to_one(alpha):
    draws = mixup_lambdas(alpha=alpha, rng=np.random.default_rng(0), size=2000)
    assert np.all(draws >= 0.5) and np.all(draws <= 1.0)
    assert draws.std() > 0  # it is a draw, not a constant


def test_mixup_lambda_is_folded_beta():
    """lambda' = max(lambda, 1 - lambda) with lambda ~ Beta(alpha, alpha): replay the same stream by hand."""
    expected = np.random.default_rng(4).beta(0.3, 0.3, size=50)
    draws = mixup_lambdas(alpha=0.3, rng=np.random.default_rng(4), size=50)
    np.testing.assert_allclose(draws, np.maximum(expected, 1 - expected), rtol=1e-6)


@pytest.mark.parametrize("size", [2, 3, 7, 128])
def test_each_samples_partner_is_another_sample_of_its_batch_drawn_uniformly(size):
    """Every sample gets another one; over many draws, each other sample as often as the rest (a chi-square-free
    check: every offset 1..size-1 occurs, none far from its share), and a draw at 1's edge stays another sample."""
    draws = torch.rand(4000, 128, generator=torch.Generator().manual_seed(0))
    partners = partner_index(draws, size=size)
    own = torch.arange(size)
    assert partners.shape == (4000, size) and (partners != own).all() and (partners < size).all()
    offsets = torch.bincount(((partners - own) % size).flatten(), minlength=size)[1:]
    assert (offsets > 0).all() and offsets.max() < 1.2 * offsets.float().mean()
    edge = partner_index(torch.full((1, size), 1 - 2**-24), size=size)
    assert (edge != own).all()


def test_mixup_is_the_convex_combination_with_the_partner():
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(6, 1, 4, 4, generator=generator)
    targets = torch.rand(6, 3, generator=generator)
    partner = torch.tensor([3, 0, 5, 1, 2, 4])
    mixed_x, mixed_t = mixup(x, targets, lam=0.7, partner=partner)
    for i, j in enumerate(partner.tolist()):
        torch.testing.assert_close(mixed_x[i], 0.7 * x[i] + 0.3 * x[j])
        torch.testing.assert_close(mixed_t[i], 0.7 * targets[i] + 0.3 * targets[j])
    # Weighted soft targets mix linearly, so the total target mass is preserved under a permutation partner.
    torch.testing.assert_close(mixed_t.sum(), targets.sum())


def test_soft_cross_entropy_equals_cross_entropy_on_one_hot():
    generator = torch.Generator().manual_seed(1)
    logits = torch.randn(8, 5, generator=generator)
    labels = torch.randint(0, 5, (8,), generator=generator)
    soft = soft_cross_entropy(logits, F.one_hot(labels, 5).float())
    torch.testing.assert_close(soft, F.cross_entropy(logits, labels))


def _train(x, labels, *, seed=0, recipe=RECIPE, validation=None, workers=4):
    targets = np.eye(labels.max() + 1, dtype=np.float32)[labels]
    return train_model(
        recipe=recipe,
        x=x,
        targets=targets,
        seed=seed,
        validation=validation,
        execution=Execution(device=CPU, loader_workers=workers),
    )


def _state_equal(a, b):
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def test_train_model_fits_separable_data_and_is_bit_identical(make_separable_images):
    x, labels = make_separable_images(seed=0, num_samples=200, num_classes=4)
    first, second = _train(x, labels), _train(x, labels)
    probabilities = predict_proba(first.model, x, device=CPU)
    assert probabilities.shape == (200, 4) and probabilities.dtype == np.float32
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, rtol=1e-5)
    assert np.mean(probabilities.argmax(axis=1) == labels) >= 0.95
    assert len(first.train_loss) == RECIPE.epochs and first.best_epoch == RECIPE.epochs  # no validation: last epoch
    assert first.train_loss == second.train_loss
    assert _state_equal(first.model, second.model)
    assert not first.model.training  # returned in eval mode


def test_train_model_seed_changes_the_run(make_separable_images):
    x, labels = make_separable_images(seed=0, num_samples=200, num_classes=4)
    assert not _state_equal(_train(x, labels, seed=0).model, _train(x, labels, seed=1).model)


def test_train_model_keeps_the_best_validation_epoch(make_separable_images):
    """Appendix, Eq. para_val: the kept weights are those of the first epoch with the best validation accuracy.

    Validation never draws from the training streams, so the kept model must equal a run stopped at that epoch."""
    x, labels = make_separable_images(seed=0, num_samples=200, num_classes=4)
    x_val, y_val = make_separable_images(seed=100, num_samples=60, num_classes=4)
    rng = np.random.default_rng(0)
    y_val = np.where(rng.uniform(size=60) < 0.7, np.random.default_rng(9).integers(0, 4, 60), y_val)  # noisy labels
    result = _train(x, labels, validation=(x_val, y_val))
    history = result.validation_accuracy
    assert len(history) == RECIPE.epochs
    assert result.best_epoch == int(np.argmax(history)) + 1  # argmax: the first of tied maxima
    kept_accuracy = np.mean(predict_proba(result.model, x_val, device=CPU).argmax(axis=1) == y_val)
    assert kept_accuracy == pytest.approx(max(history))
    assert result.best_epoch < RECIPE.epochs, "fixture should make an earlier epoch the best one"
    stopped = _train(x, labels, recipe=Recipe(**{**RECIPE.__dict__, "epochs": result.best_epoch}))
    assert _state_equal(result.model, stopped.model)
    assert not _state_equal(result.model, _train(x, labels).model)


@pytest.mark.filterwarnings("ignore:recipe.bf16. true, but bf16 is")  # tiny models are slower in bf16 on many CPUs
@pytest.mark.parametrize("bf16", [False, True])
def test_train_model_logs_one_line_per_epoch(make_separable_images, caplog, bf16):
    """Each precision forced: the line names it, whatever ``bf16: auto`` would pick on this machine."""
    x, labels = make_separable_images(seed=0, num_samples=200, num_classes=4)
    with caplog.at_level(logging.INFO, logger="enkcvs.training.train"):
        result = _train(x, labels, recipe=Recipe(**{**RECIPE.__dict__, "bf16": bf16}), validation=(x[:40], labels[:40]))
    lines = [record.getMessage() for record in caplog.records if record.name == "enkcvs.training.train"]
    assert len(lines) == RECIPE.epochs
    for epoch, (line, loss, accuracy) in enumerate(zip(lines, result.train_loss, result.validation_accuracy), 1):
        assert line.startswith(
            f"epoch {epoch}/{RECIPE.epochs}  loss {loss:.4f}  noisy-validation accuracy {accuracy:.4f}  "
        )
        assert line.endswith(" cpu bf16" if bf16 else " cpu") and " samples/s trained  " in line
        assert epoch_device(line) == "cpu"


@pytest.mark.parametrize(("device", "bf16"), [("cpu", False), ("cuda", True), ("cuda:1", False)])
def test_an_epoch_lines_device_is_read_back_from_it_as_a_job_log_writes_it(device, bf16, caplog):
    """The GPU check counts the epochs each device trained from the jobs' logs (benchmarks/gpu_check.py)."""
    with caplog.at_level(logging.INFO, logger="enkcvs.training.train"):
        log_epoch(
            3,
            epochs=50,
            loss=0.5,
            accuracy=None,
            samples=1000,
            training_seconds=0.5,
            seconds=0.6,
            device=torch.device(device),
            bf16=bf16,
        )
    line = logging.Formatter("%(asctime)s %(message)s").format(caplog.records[-1])
    assert epoch_device(line) == device.partition(":")[0]
    assert epoch_device(line.replace("epoch 3/50", "fold 3 of 4")) is None
    assert epoch_device("2026-11-26 08:14:44,597 read results/data/mnist.npz") is None


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("interactive", [True, False], ids=["terminal", "log file"])
def test_train_model_shows_a_progress_bar_only_in_a_terminal(make_separable_images, monkeypatch, interactive):
    x, labels = make_separable_images(seed=0, num_samples=120, num_classes=4)
    stderr = _Terminal() if interactive else io.StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)
    _train(x, labels)
    if interactive:
        assert f"training:   0%|          | 0/{RECIPE.epochs} " in stderr.getvalue()  # updated at most every 0.1 s
    else:
        assert stderr.getvalue() == ""  # a Snakemake log keeps its one line per epoch, no bar


def test_create_model_rejects_unknown_name():
    with pytest.raises(KeyError, match="unknown model 'resnet9000'"):
        create_model("resnet9000", input_shape=(1, 8, 8), num_classes=3)


@pytest.mark.parametrize("name", ["cnn4", "mlp"])  # any image size; the paper models: test_models.py
@pytest.mark.parametrize("shape", [(1, 8, 8), (1, 28, 28), (3, 12, 12)])
def test_registered_models_map_images_to_class_logits(name, shape):
    model = create_model(name, input_shape=shape, num_classes=7).eval()
    assert model(torch.zeros(2, *shape)).shape == (2, 7)


def test_unknown_optimizer_raises(make_separable_images):
    x, labels = make_separable_images(seed=0, num_samples=20, num_classes=2)
    with pytest.raises(ValueError, match="unknown optimizer 'rmsprop'"):
        _train(x, labels, recipe=Recipe(model="mlp", optimizer="rmsprop", lr=0.1, epochs=1))


def test_recipe_dict_round_trip():
    recipe = Recipe.from_dict({"model": "cnn4", "optimizer": "sgd", "lr": 0.01, "epochs": 50, "milestones": [10, 30]})
    assert recipe.milestones == (10, 30)
    assert Recipe.from_dict(recipe.to_dict()) == recipe
    assert recipe.to_dict()["milestones"] == [10, 30]


def _selection_table(seed=0, n=30, num_classes=4):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "sample": np.arange(n),
            "selected": rng.uniform(size=n) < 0.6,
            "pseudo": rng.integers(0, num_classes, n),
            "beta": rng.uniform(0, 0.7, n),
        }
    )


GIVEN = np.random.default_rng(1).integers(0, 4, 30)


def test_final_training_set_ce_uses_all_samples_one_hot():
    indices, targets = final_training_set(method="ce", given=GIVEN, num_classes=4)
    np.testing.assert_array_equal(indices, np.arange(30))
    np.testing.assert_array_equal(targets, np.eye(4)[GIVEN])


def test_final_training_set_ss_only_uses_selected_one_hot():
    selection = _selection_table()
    indices, targets = final_training_set(method="ss_only", given=GIVEN, num_classes=4, selection=selection)
    np.testing.assert_array_equal(indices, np.flatnonzero(selection["selected"]))
    np.testing.assert_array_equal(targets, np.eye(4)[GIVEN[indices]])


@pytest.mark.parametrize("gamma", [0.2, 0.5])
def test_final_training_set_enkcvs_rows_carry_full_loss_weights(gamma):
    """Row sums are the weights w_i (soft targets sum to 1); selected rows point at the given label only."""
    selection = _selection_table()
    indices, targets = final_training_set(method="enkcvs", given=GIVEN, num_classes=4, selection=selection, gamma=gamma)
    selected = selection["selected"].to_numpy()
    weights = full_loss_sample_weights(selected=selected, gamma=gamma)
    np.testing.assert_array_equal(indices, np.arange(30))
    np.testing.assert_allclose(targets.sum(axis=1), weights, rtol=1e-6)
    np.testing.assert_allclose(targets[selected], np.eye(4)[GIVEN[selected]] * weights[selected, None], rtol=1e-6)
    # Non-selected: beta on the given label, 1 - beta on the pseudo label (both scaled by w).
    rows = np.flatnonzero(~selected & (selection["pseudo"].to_numpy() != GIVEN))
    beta = selection["beta"].to_numpy()
    np.testing.assert_allclose(targets[rows, GIVEN[rows]], beta[rows] * weights[rows], rtol=1e-5)


@pytest.mark.parametrize("method", ["ss_only", "enkcvs"])
def test_final_training_set_selection_methods_need_a_table(method):
    with pytest.raises(ValueError, match="needs a selection table"):
        final_training_set(method=method, given=GIVEN, num_classes=4)


def test_final_training_set_rejects_unknown_method():
    with pytest.raises(ValueError, match="unknown method 'dividemix'"):
        final_training_set(method="dividemix", given=GIVEN, num_classes=4)
    # the config schema offers exactly the methods the library trains
    schema = yaml.safe_load((Path(__file__).parents[1] / "workflow/schemas/config.schema.yaml").read_text())
    assert schema["properties"]["methods"]["items"]["enum"] == list(METHODS)


def test_uint8_images_train_as_their_scaled_floats(make_separable_images, single_thread):
    x, labels = make_separable_images(seed=1, num_samples=60, num_classes=3)
    raw = np.clip(np.round(x * 40 + 128), 0, 255).astype(np.uint8)  # images as stored on disk: 0..255
    scaled = (torch.as_tensor(raw).float() / 255).numpy()  # the same scaling the engine does on each batch
    recipe = Recipe(model="cnn4", optimizer="sgd", lr=0.05, epochs=2, batch_size=16, augment="shift_flip")
    from_raw, from_scaled = _train(raw, labels, recipe=recipe), _train(scaled, labels, recipe=recipe)
    assert _state_equal(from_raw.model, from_scaled.model)
    np.testing.assert_array_equal(
        predict_proba(from_raw.model, raw, device=CPU), predict_proba(from_scaled.model, scaled, device=CPU)
    )


class _Streamed(torch.utils.data.Dataset):
    """Images served one by one with their positions, as the image-file datasets stream them from disk."""

    def __init__(self, x):
        self.x = torch.as_tensor(x)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, index):
        return self.x[index], index


def test_streamed_datasets_train_and_predict_like_arrays(make_separable_images):
    x, labels = make_separable_images(seed=2, num_samples=200, num_classes=4)
    recipe = Recipe(model="mlp", optimizer="sgd", lr=0.1, epochs=5, batch_size=32)
    result = _train(_Streamed(x), labels, recipe=recipe, validation=(_Streamed(x[:40]), labels[:40]), workers=0)
    streamed = predict_proba(result.model, _Streamed(x), device=CPU, workers=0)
    np.testing.assert_allclose(streamed, predict_proba(result.model, x, device=CPU), atol=1e-6)
    assert np.mean(streamed.argmax(1) == labels) > 0.9 and len(result.validation_accuracy) == 5


def test_mixup_refuses_token_ids():
    tokens = np.zeros((8, 2, 5), dtype=np.int64)
    with pytest.raises(ValueError, match="mixup cannot mix token ids: set recipe.mixup_alpha: null"):
        _train(tokens, np.arange(8) % 2, recipe=Recipe(model="mlp", optimizer="sgd", lr=0.1, epochs=1))


@pytest.mark.filterwarnings("ignore:recipe.bf16. true, but bf16 is")  # tiny models are slower in bf16 on many CPUs
def test_bf16_autocast_trains_and_predicts_in_float32(make_separable_images):
    x, labels = make_separable_images(seed=3, num_samples=200, num_classes=4)
    recipe = Recipe(model="cnn4", optimizer="sgd", lr=0.05, epochs=3, batch_size=32, bf16=True)
    result = _train(x, labels, recipe=recipe)
    assert all(p.dtype == torch.float32 for p in result.model.parameters())  # autocast leaves the weights fp32
    probabilities = predict_proba(result.model, x, device=CPU, bf16=True)
    assert probabilities.dtype == np.float32 and np.allclose(probabilities.sum(axis=1), 1.0, atol=1e-5)
    assert np.mean(probabilities.argmax(1) == labels) > 0.9
    fp32 = predict_proba(result.model, x, device=CPU)
    assert 0 < np.abs(probabilities - fp32).max() < 0.05  # bf16 really ran, and stays close to fp32


def test_the_default_device_is_whichever_gpu_the_scheduler_exposes(monkeypatch):
    """No hard-coded index: 'cuda' means the first device CUDA_VISIBLE_DEVICES lets the job see."""
    import torch

    from enkcvs.training.device import default_device

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert default_device() == torch.device("cuda") and default_device().index is None
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert default_device() == torch.device("cpu")


def test_a_job_that_asked_for_a_gpu_and_sees_none_fails_unless_cpu_fallback_is_allowed(monkeypatch, caplog):
    from enkcvs.training.device import job_execution

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert job_execution({}, threads=1).device == CPU
    with pytest.raises(
        RuntimeError,
        match=r"asked for 1 GPU\(s\) \(its gpu resource\) but torch .* sees none: run it "
        r"where a GPU is visible, drop the gpu resource from the profile, or allow training on the CPU "
        r"with the resource cpu_fallback=1",
    ):
        job_execution({"gpu": 1}, threads=1)
    with caplog.at_level(logging.WARNING, logger="enkcvs.training.device"):
        execution = job_execution(
            {"gpu": 2, "cpu_fallback": 1, "loader_workers": 0, "cuda_graphs": 1, "checkpoint_every": 5}, threads=1
        )
    assert (execution.device, execution.loader_workers, execution.cuda_graphs, execution.checkpoint_every) == (
        CPU,
        0,
        True,
        5,
    )
    assert [record.getMessage() for record in caplog.records] == [
        f"this job asked for 2 GPU(s) (its gpu resource) but torch {torch.__version__} sees none: "
        "training on the CPU (resource cpu_fallback=1)"
    ]
