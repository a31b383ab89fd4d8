"""CUDA graphs where a job asks for them and can have them (enkcvs.training.graphs): never on a CPU or for a model
whose shapes change, never by a timing; full batches replayed from the graph and an epoch's last, smaller batch eager
on the same weights (so the recipe trains on the batches it would eagerly); a stack's whole step replayable, its
inputs and outputs at fixed addresses; the choice recorded in every job's output."""

import logging

import numpy as np
import pytest
import torch

from enkcvs.training import graphs, train
from enkcvs.training.device import Execution
from enkcvs.training.recipe import Recipe
from enkcvs.training.stacked import train_stacked
from enkcvs.training.train import EPOCH_LINE, train_model

CPU = torch.device("cpu")
CUDA = torch.device("cuda")
pytestmark = pytest.mark.usefixtures("single_thread")


def _recipe(**changes):
    return Recipe(
        **{
            "model": "cnn4",
            "optimizer": "sgd",
            "lr": 0.05,
            "epochs": 2,
            "batch_size": 16,
            "mixup_alpha": 0.3,
            "augment": "shift_flip",
            "bf16": False,
            **changes,
        }
    )


@pytest.mark.parametrize(
    "asked, model, device, applies",
    [
        (False, "cnn4", CUDA, False),
        (True, "cnn4", CUDA, True),
        (True, "cnn4", CPU, False),
        (True, "text_classifier", CUDA, False),
        (True, "coteaching_cnn9", CUDA, False),
    ],
)
def test_graphs_apply_where_asked_on_a_gpu_for_a_static_model_and_say_why_not_elsewhere(
    asked, model, device, applies, caplog
):
    with caplog.at_level(logging.INFO, logger="enkcvs.training.graphs"):
        assert graphs.graphs_apply(asked, model=model, device=device) is applies
    assert ("training eager" in caplog.text) is (asked and not applies)


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
    return train_model(
        recipe=_recipe(),
        x=x,
        targets=np.eye(3, dtype=np.float32)[labels],
        seed=2,
        validation=(x[:24], labels[:24]),
        **options,
    )


def test_full_batches_replay_from_the_graph_the_last_batch_runs_eager_and_training_is_unchanged(
    make_separable_images, monkeypatch, caplog
):
    eager = _train(make_separable_images, device=CPU)
    replayed, steps_begun = [], []
    monkeypatch.setattr(train, "graphs_apply", lambda asked, **_: asked)
    monkeypatch.setattr(graphs, "compiled", lambda model: _Replayed(model, replayed))
    monkeypatch.setattr(train, "begin_step", lambda: steps_begun.append(None))
    with caplog.at_level(logging.INFO, logger="enkcvs.training.train"):
        graphed = _train(make_separable_images, execution=Execution(device=CPU, cuda_graphs=True))
    # 72 samples: 4 full batches of 16 from the graph and one of 8 eager, each of 2 epochs
    assert replayed == [16] * 8 and len(steps_begun) == 10
    assert graphed.cuda_graphs and not eager.cuda_graphs
    assert graphed.train_loss == eager.train_loss and graphed.validation_accuracy == eager.validation_accuracy
    assert all(
        torch.equal(a, b)
        for a, b in zip(graphed.model.state_dict().values(), eager.model.state_dict().values(), strict=True)
    )
    lines = [EPOCH_LINE.search(record.getMessage()) for record in caplog.records]
    assert [line["cuda_graphs"] for line in lines if line] == [" cuda-graphs"] * 2


class _Capture:
    """Stands in for a CUDA graph of a stack's full step on a CPU: each call is a replay, which reads and writes only
    the memory the first call (the capture) did. It records every tensor the step reads or writes by address and
    checks that each later call finds them at the same addresses and never resizes one."""

    calls: list = []

    def __init__(self, step):
        self.step, self.addresses = step, None
        _Capture.calls.append(self)

    def __call__(self):
        training = self.step.__self__
        tensors = {
            "step_index": training.step_index,
            "epoch_losses": training.epoch_losses,
            **training.draws,
            **{f"param {name}": param for name, param in training.params.items()},
            **{f"buffer {name}": buffer for name, buffer in training.buffers.items()},
            **{f"momentum {name}": buffer for name, buffer in training.optimizer.buffers.items()},
        }
        if self.addresses is not None:
            tensors |= {f"grad {name}": param.grad for name, param in training.params.items()}
        found = {name: (tensor.data_ptr(), tuple(tensor.shape)) for name, tensor in tensors.items()}
        if self.addresses is None:
            self.step()
            self.addresses = found | {
                f"grad {name}": (param.grad.data_ptr(), tuple(param.grad.shape))
                for name, param in training.params.items()
            }
            return
        moved = {name for name, at in found.items() if self.addresses[name] != at}
        assert not moved, f"a replay would read or write stale memory: {sorted(moved)} moved"
        self.step()


def test_a_stacks_full_steps_read_and_write_fixed_addresses_so_a_graph_can_replay_them(
    make_separable_images, monkeypatch
):
    """Over epochs, ragged last steps and a milestone: what a captured step touches never moves, and the models
    trained through the stand-in are the eager stack's (within rounding: a captured step reads its learning rate from
    a tensor, whose product rounds once more than the scalar's)."""
    x, labels = make_separable_images(seed=0, num_samples=300, num_classes=3, shape=(1, 8, 8))
    folds = {
        "xs": [x[:64], x[64:133], x[133:214]],
        "targets": [np.eye(3, dtype=np.float32)[labels[a:b]] for a, b in ((0, 64), (64, 133), (133, 214))],
        "seeds": [1, 2, 3],
        "validations": [(x[240:], labels[240:])] * 3,
    }
    recipe = _recipe(epochs=3, milestones=(2,), weight_decay=5e-4)
    eager = train_stacked(recipe=recipe, **folds, device=CPU)
    _Capture.calls = []
    monkeypatch.setattr("enkcvs.training.stacked.graphs_apply", lambda asked, **_: asked)
    monkeypatch.setattr("enkcvs.training.stacked.StepGraph", _Capture)
    graphed = train_stacked(recipe=recipe, **folds, execution=Execution(device=CPU, cuda_graphs=True))
    assert len(_Capture.calls) == 1 and _Capture.calls[0].addresses is not None
    for a, b in zip(graphed, eager, strict=True):
        assert a.cuda_graphs and not b.cuda_graphs and a.best_epoch == b.best_epoch
        np.testing.assert_allclose(a.train_loss, b.train_loss, rtol=1e-5)
        for name, tensor in a.model.state_dict().items():
            torch.testing.assert_close(tensor, b.model.state_dict()[name], atol=1e-5, rtol=1e-4)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU: CUDA graphs exist only there")
def test_on_a_gpu_graphed_training_matches_eager_training_within_float_rounding(make_separable_images):
    x, labels = make_separable_images(seed=0, num_samples=72, num_classes=3, shape=(3, 8, 8))
    targets = np.eye(3, dtype=np.float32)[labels]
    results = [
        train_model(recipe=_recipe(), x=x, seed=2, targets=targets, execution=Execution(device=CUDA, cuda_graphs=asked))
        for asked in (False, True)
    ]
    assert results[1].cuda_graphs and not results[0].cuda_graphs
    np.testing.assert_allclose(results[1].train_loss, results[0].train_loss, rtol=1e-4)
    stacks = [
        train_stacked(
            recipe=_recipe(),
            xs=[x, x[:60]],
            targets=[targets, targets[:60]],
            seeds=[1, 2],
            validations=[None, None],
            execution=Execution(device=CUDA, cuda_graphs=asked),
        )
        for asked in (False, True)
    ]
    for graphed, eager in zip(stacks[1], stacks[0]):
        assert graphed.cuda_graphs and np.allclose(graphed.train_loss, eager.train_loss, rtol=1e-4)
