"""The arithmetic of a training follows a stated rule by device, never a timing (enkcvs.training.precision): ``auto``
is bf16 on a CUDA GPU that supports it and fp32 everywhere else; ``true`` and ``false`` are obeyed; every training
records what it used."""

import numpy as np
import pytest
import torch

from enkcvs.training import precision
from enkcvs.training.recipe import Recipe
from enkcvs.training.train import train_model

CPU = torch.device("cpu")


@pytest.mark.parametrize("setting, chosen", [("auto", False), (True, True), (False, False)])
def test_on_a_cpu_auto_is_fp32_and_true_or_false_is_obeyed(setting, chosen):
    assert precision.uses_bf16(setting, device=CPU) is chosen


@pytest.mark.parametrize("supported", [True, False])
def test_on_a_cuda_gpu_auto_is_bf16_where_the_gpu_supports_it(supported, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda: supported)
    assert precision.uses_bf16("auto", device=torch.device("cuda")) is supported
    assert precision.uses_bf16(False, device=torch.device("cuda")) is False


def test_a_setting_the_rule_cannot_mean_is_refused_with_the_three_it_may_take():
    with pytest.raises(ValueError, match="true, false or auto"):
        precision.uses_bf16("yes", device=CPU)
    with pytest.raises(ValueError, match="true, false or auto"):
        Recipe(model="mlp", optimizer="sgd", lr=0.1, epochs=1, bf16="fast")


@pytest.mark.usefixtures("single_thread")
def test_auto_on_a_cpu_trains_the_fp32_models_and_bf16_is_recorded_where_asked():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(64, 1, 4, 4)).astype(np.float32), rng.integers(0, 3, size=64)
    recipe = {"model": "mlp", "optimizer": "sgd", "lr": 0.1, "epochs": 2, "batch_size": 16}
    targets = np.eye(3, dtype=np.float32)[y]
    auto = train_model(recipe=Recipe(**recipe, bf16="auto"), x=x, targets=targets, seed=3, device=CPU)
    plain = train_model(recipe=Recipe(**recipe, bf16=False), x=x, targets=targets, seed=3, device=CPU)
    asked = train_model(recipe=Recipe(**recipe, bf16=True), x=x, targets=targets, seed=3, device=CPU)
    assert auto.bf16 is plain.bf16 is False and asked.bf16 is True
    assert auto.train_loss == plain.train_loss and asked.train_loss != plain.train_loss
    for a, b in zip(auto.model.state_dict().values(), plain.model.state_dict().values()):
        assert torch.equal(a, b)
