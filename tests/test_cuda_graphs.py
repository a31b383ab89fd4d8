"""CUDA graphs only where they pay (``recipe.cuda_graphs``): the decision by a probe and the job's steps, the refusals
before anything trains, full batches replayed from the graph and an epoch's last, smaller batch eager on the same
weights (so the recipe trains on the batches it would eagerly), and the choice recorded in every job's output."""

import logging

import numpy as np
import pytest
import torch

from enkcvs.training import graphs, train
from enkcvs.training.recipe import Recipe
from enkcvs.training.train import EPOCH_LINE, train_model

CPU = torch.device("cpu")
pytestmark = pytest.mark.usefixtures("single_thread")


def _recipe(**changes):
    return Recipe(**{"model": "cnn4", "optimizer": "sgd", "lr": 0.05, "epochs": 2, "batch_size": 16, "mixup_alpha": 0.3,
                     "augment": "shift_flip", **changes})


def test_graphs_pay_only_when_faster_by_the_margin_and_the_saving_exceeds_the_compilation():
    probe = {"eager_seconds": 0.003, "graphed_seconds": 0.0015, "speedup": 2.0, "warmup_seconds": 30.0}
    assert graphs.graphs_pay(probe, steps=50 * 760)  # 50 epochs of 760 steps save 57 s, more than the 30 s compiling
    assert not graphs.graphs_pay(probe, steps=10_000)  # 15 s saved: less than the 30 s of compilation
    slight = {**probe, "graphed_seconds": 0.0028, "speedup": 1.07, "warmup_seconds": 0.0}
    assert not graphs.graphs_pay(slight, steps=10**9)  # below SPEEDUP_NEEDED however long the job


def test_auto_is_off_on_a_cpu_without_probing_and_true_there_is_refused_naming_the_fix():
    def never():
        raise AssertionError("probed on a CPU")

    arguments = {"model_name": "cnn4", "build": never, "batch": never, "device": CPU, "bf16": False, "steps": 10}
    assert graphs.resolve_cuda_graphs("auto", **arguments) is False
    assert graphs.resolve_cuda_graphs(False, **arguments) is False
    with pytest.raises(ValueError, match=r"cuda_graphs: true, but this job trains on cpu, which has no CUDA graphs: "
                                         r"set cuda_graphs: auto .* or false"):
        graphs.resolve_cuda_graphs(True, **arguments)


@pytest.mark.parametrize(("setting", "model", "problem"), [
    ("yes", "cnn4", "must be true, false or auto; got 'yes'"),
    (True, "text_classifier", "text_classifier cannot replay as a CUDA graph"),
    (True, "coteaching_cnn9", "coteaching_cnn9 cannot replay as a CUDA graph"),
])
def test_the_recipe_refuses_a_setting_graphs_cannot_honour(setting, model, problem):
    with pytest.raises(ValueError, match=problem):
        _recipe(model=model, cuda_graphs=setting)


def test_cuda_graphs_auto_is_a_recipe_default_that_changes_no_jobs_params():
    assert "cuda_graphs" not in _recipe().to_dict()
    assert _recipe(cuda_graphs=False).to_dict()["cuda_graphs"] is False


class _Replayed(torch.nn.Module):
    """Stands in for the compiled network on a CPU: the same forward, each batch size it ran on recorded."""

    def __init__(self, model, sizes):
        super().__init__()
        self.model, self.sizes = model, sizes

    def forward(self, xb):
        self.sizes.append(len(xb))
        return self.model(xb)


def _train(make_separable_images, **options):
    x, labels = make_separable_images(seed=0, num_samples=72, num_classes=3, shape=(3, 8, 8))
    return train_model(recipe=_recipe(), x=x, targets=np.eye(3, dtype=np.float32)[labels], seed=2,
                       validation=(x[:24], labels[:24]), device=CPU, **options)


def test_full_batches_replay_from_the_graph_the_last_batch_runs_eager_and_training_is_unchanged(
        make_separable_images, monkeypatch, caplog):
    eager = _train(make_separable_images)
    replayed, steps_begun = [], []
    monkeypatch.setattr(train, "resolve_cuda_graphs", lambda setting, **_: True)
    monkeypatch.setattr(graphs, "compiled", lambda model: _Replayed(model, replayed))
    monkeypatch.setattr(train, "begin_step", lambda: steps_begun.append(None))
    with caplog.at_level(logging.INFO, logger="enkcvs.training.train"):
        graphed = _train(make_separable_images)
    # 72 samples: 4 full batches of 16 from the graph and one of 8 eager, each of 2 epochs
    assert replayed == [16] * 8 and len(steps_begun) == 10
    assert graphed.cuda_graphs and not eager.cuda_graphs
    assert graphed.train_loss == eager.train_loss and graphed.validation_accuracy == eager.validation_accuracy
    assert all(torch.equal(a, b) for a, b in zip(graphed.model.state_dict().values(),
                                                 eager.model.state_dict().values(), strict=True))
    lines = [EPOCH_LINE.search(record.getMessage()) for record in caplog.records]
    assert [line["cuda_graphs"] for line in lines if line] == [" cuda-graphs"] * 2


def test_the_probe_times_both_ways_and_leaves_the_random_state_as_it_was():
    torch.manual_seed(5)
    batch = torch.rand(16, 3, 8, 8)
    before = torch.get_rng_state()
    probe = graphs.probe_cuda_graphs(lambda: _fresh_cnn4(), batch, bf16=False, graph=lambda model: model, rounds=3,
                                     steps=2)
    assert set(probe) == {"eager_seconds", "graphed_seconds", "speedup", "warmup_seconds"}
    assert probe["eager_seconds"] > 0 and probe["graphed_seconds"] > 0 and probe["warmup_seconds"] >= 0
    assert torch.equal(torch.get_rng_state(), before)


def _fresh_cnn4():
    from enkcvs.training.models import create_model

    return create_model("cnn4", input_shape=(3, 8, 8), num_classes=3)


def test_a_machine_probes_each_model_once(tmp_path, monkeypatch):
    probes = []
    monkeypatch.setattr(graphs, "probe_key", lambda *, model_name, batch, bf16: f"{model_name} {tuple(batch.shape)}")
    monkeypatch.setattr(graphs, "probe_cuda_graphs", lambda build, batch, *, bf16: probes.append(None) or {
        "eager_seconds": 0.002, "graphed_seconds": 0.001, "speedup": 2.0, "warmup_seconds": 1.0})
    for _ in range(2):
        probe = graphs.cached_probe(model_name="cnn4", build=None, batch=lambda: torch.zeros(16, 3, 8, 8), bf16=False,
                                    cache=tmp_path / "probe.json")
    assert len(probes) == 1 and probe["speedup"] == 2.0


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU: CUDA graphs exist only there")
def test_on_a_gpu_graphed_training_matches_eager_training_within_float_rounding(make_separable_images):
    x, labels = make_separable_images(seed=0, num_samples=72, num_classes=3, shape=(3, 8, 8))
    results = [train_model(recipe=_recipe(cuda_graphs=setting, bf16=False), x=x, seed=2,
                           targets=np.eye(3, dtype=np.float32)[labels], device=torch.device("cuda"))
               for setting in (False, True)]
    assert results[1].cuda_graphs and not results[0].cuda_graphs
    np.testing.assert_allclose(results[1].train_loss, results[0].train_loss, rtol=1e-4)


def test_graphs_that_fail_to_compile_train_eager_and_the_failure_is_cached(tmp_path, monkeypatch):
    attempts = []

    def failing(build, batch, *, bf16):
        attempts.append(None)
        raise RuntimeError("inductor: no compiler for this device\nmore detail")

    monkeypatch.setattr(graphs, "probe_key", lambda *, model_name, batch, bf16: model_name)
    monkeypatch.setattr(graphs, "probe_cuda_graphs", failing)
    for _ in range(2):
        probe = graphs.cached_probe(model_name="cnn4", build=None, batch=lambda: torch.zeros(4), bf16=False,
                                    cache=tmp_path / "probe.json")
    assert probe == {"error": "RuntimeError: inductor: no compiler for this device"} and len(attempts) == 1
    assert not graphs.graphs_pay(probe, steps=10**9)
