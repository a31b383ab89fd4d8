"""bf16 only where it pays (enkcvs.training.precision): ``auto`` resolves by a cached probe; fp32 training is
unchanged."""

import json
import os

import numpy as np
import pytest
import torch

from enkcvs.training import precision
from enkcvs.training.models import create_model
from enkcvs.training.recipe import Recipe
from enkcvs.training.train import train_model

CPU = torch.device("cpu")


def build():
    return create_model("mlp", input_shape=(1, 4, 4), num_classes=3)


def batch():
    return torch.rand(16, 1, 4, 4)


def never():
    raise AssertionError("no probe should run")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A fresh probe cache, and ``auto`` left to the probe (the suite pins it: tests/conftest.py)."""
    monkeypatch.setenv("ENKCVS_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv(precision.AUTO_VARIABLE, raising=False)
    return tmp_path / precision.CACHE_FILE


@pytest.mark.parametrize("value, chosen", [("true", True), ("FALSE", False), (" false ", False)])
def test_the_environment_decides_auto_on_a_cpu_without_a_probe(value, chosen, cache, monkeypatch):
    monkeypatch.setenv(precision.AUTO_VARIABLE, value)
    assert precision.resolve_bf16("auto", model_name="mlp", build=never, batch=never, device=CPU) is chosen
    assert precision.resolve_bf16(False, model_name="mlp", build=never, batch=never, device=CPU) is False
    assert not cache.exists()


def test_the_suite_never_leaves_auto_to_a_probe_of_this_machine():
    """What ``auto`` means in this session (tests/conftest.py pins it, Snakemake's jobs included) comes from the
    environment, never from a probe: no test's outcome follows this CPU's instruction sets. fp32 unless the caller
    ran ``ENKCVS_BF16_AUTO=true make test``."""
    pinned = os.environ[precision.AUTO_VARIABLE].strip().lower() == "true"
    assert precision.resolve_bf16("auto", model_name="mlp", build=never, batch=never, device=CPU) is pinned


def test_a_value_the_environment_cannot_mean_is_refused_with_the_two_it_may_take(cache, monkeypatch):
    monkeypatch.setenv(precision.AUTO_VARIABLE, "bf16")
    with pytest.raises(ValueError, match=r"\$ENKCVS_BF16_AUTO is 'bf16': set it to true \(bf16\) or false"):
        precision.resolve_bf16("auto", model_name="mlp", build=never, batch=never, device=CPU)


def test_auto_probes_once_then_reads_the_cache(cache):
    decided = precision.resolve_bf16("auto", model_name="mlp", build=build, batch=batch, device=CPU)
    (entry,) = json.loads(cache.read_text()).values()
    assert decided == (entry["speedup"] >= precision.SPEEDUP_NEEDED)
    assert entry["fp32_seconds"] > 0 and entry["bf16_seconds"] > 0
    assert precision.resolve_bf16("auto", model_name="mlp", build=never, batch=batch, device=CPU) == decided


@pytest.mark.parametrize("speedup, chosen", [(1.2, False), (1.3, True), (2.5, True), (0.1, False)])
def test_auto_needs_the_speedup(cache, monkeypatch, speedup, chosen):
    monkeypatch.setattr(precision, "probe_bf16",
                        lambda build, batch: {"fp32_seconds": speedup, "bf16_seconds": 1.0, "speedup": speedup})
    assert precision.resolve_bf16("auto", model_name="mlp", build=build, batch=batch, device=CPU) is chosen


def test_a_passing_load_does_not_move_the_probes_speedup(monkeypatch):
    """A load over three consecutive steps (here tripling them) slows both precisions of the rounds it falls on, so
    the median ratio is the quiet machine's: 1.5x. Timed all fp32 steps first, it would have made fp32 look slow."""
    calls = []

    def fake_steps(forward, model, batch, *, bf16):
        calls.append(bf16)
        quiet = 0.02 if bf16 else 0.03
        return quiet * (3 if 4 <= len(calls) <= 6 else 1)

    monkeypatch.setattr(precision, "steps_seconds", fake_steps)
    probe = precision.probe_bf16(build, batch())
    assert calls == [False, True] * (precision.PROBE_ROUNDS + 1)  # warm-ups, then interleaved rounds
    assert probe == {"fp32_seconds": 0.03, "bf16_seconds": 0.02, "speedup": pytest.approx(1.5)}


def test_false_never_probes_and_true_warns_where_bf16_is_slower(cache, monkeypatch):
    assert precision.resolve_bf16(False, model_name="mlp", build=never, batch=never, device=CPU) is False
    monkeypatch.setattr(precision, "probe_bf16",
                        lambda build, batch: {"fp32_seconds": 0.01, "bf16_seconds": 0.08, "speedup": 0.125})
    with pytest.warns(UserWarning, match=r"bf16 is 8.0x slower .*fp32 0.0100 s, bf16 0.0800 s per step"):
        assert precision.resolve_bf16(True, model_name="mlp", build=build, batch=batch, device=CPU) is True
    with pytest.raises(ValueError, match="true, false or auto"):
        precision.resolve_bf16("yes", model_name="mlp", build=build, batch=batch, device=CPU)


def test_probing_leaves_the_random_state_and_fp32_training_unchanged(cache, monkeypatch, single_thread):
    inputs = batch()
    state = torch.get_rng_state()
    precision.probe_bf16(build, inputs)
    assert torch.equal(state, torch.get_rng_state())
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(64, 1, 4, 4)).astype(np.float32), rng.integers(0, 3, size=64)
    recipe = {"model": "mlp", "optimizer": "sgd", "lr": 0.1, "epochs": 2, "batch_size": 16}
    targets = np.eye(3, dtype=np.float32)[y]
    monkeypatch.setattr(precision, "SPEEDUP_NEEDED", float("inf"))  # auto probes, then chooses fp32
    probed = train_model(recipe=Recipe(**recipe, bf16="auto"), x=x, targets=targets, seed=3, device=CPU)
    plain = train_model(recipe=Recipe(**recipe, bf16=False), x=x, targets=targets, seed=3, device=CPU)
    assert cache.exists() and probed.bf16 is False and probed.train_loss == plain.train_loss
    for a, b in zip(probed.model.state_dict().values(), plain.model.state_dict().values()):
        assert torch.equal(a, b)
