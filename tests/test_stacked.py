"""Models trained stacked (enkcvs.training.stacked) are the models train_model trains from the same arguments: the same
losses, best epochs and predictions within float rounding, over folds of unequal size, in fp32, bf16 and float64, by
SGD and Adam; a stack resumes from its one epoch checkpoint bit for bit; what cannot be stacked is refused with the
fix; a train_stack job's folds are the fold jobs' tables."""

import logging
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from enkcvs.training.evaluate import predict_proba
from enkcvs.training.recipe import Recipe
from enkcvs.training.resume import EpochCheckpoint
from enkcvs.training.stacked import train_stacked
from enkcvs.training.train import epoch_device, train_model

CPU = torch.device("cpu")
TINY_CONFIG = Path(__file__).resolve().parent / "config" / "tiny.yaml"
pytestmark = pytest.mark.usefixtures("single_thread")
#: fp32, one thread: a stacked convolution sums in another order than K separate ones, nothing more.
TOLERANCE = {"atol": 1e-5, "rtol": 1e-5}
#: Batch norm's running statistics sum each step's batch variance in that other order too, and carry it over every
#: step: measured within 5e-6 relative (4e-5 absolute on a variance of 7.7) over three epochs.
STATISTICS_TOLERANCE = {"atol": 1e-5, "rtol": 1e-4}
#: Mixup, augmentation, momentum, weight decay and a milestone: every per-model draw and optimizer state.
RECIPE = Recipe(
    model="cnn4",
    optimizer="sgd",
    lr=0.05,
    epochs=3,
    batch_size=16,
    milestones=(2,),
    weight_decay=5e-4,
    mixup_alpha=0.3,
    augment="shift_flip",
    bf16=False,
)
#: The same under bf16 autocast, at a rate where bf16's rounding (a relative 2**-8 per product) stays at its own size
#: over three epochs instead of growing, as it does at 0.05 on eight-pixel images, in separately trained models too.
BF16_RECIPE = Recipe(
    model="cnn4",
    optimizer="sgd",
    lr=0.01,
    epochs=3,
    batch_size=16,
    milestones=(2,),
    weight_decay=5e-4,
    mixup_alpha=0.3,
    augment="shift_flip",
    bf16=True,
)
#: bf16: each stacked convolution rounds its sums to bf16 in another order than a separate one. Measured on the
#: three folds below: train losses within 0.008 and held-out probabilities within 0.004, as close as the same models
#: trained separately come to their fp32 selves.
BF16_TOLERANCE = {"atol": 3e-2, "rtol": 0}
#: Fold sizes whose epochs end differently: 4 full batches; 4 and one of 5; 5 and one of 1 (skipped). The fifth
#: step trains two models on batches of different sizes and leaves the first alone.
SIZES = (64, 69, 81)


class Killed(Exception):
    """Stands for the job being killed right after a checkpoint was written."""


def _folds(make_separable_images, *, sizes=SIZES, validation=True):
    """Training inputs, targets, seeds and validation data of one model per size, and held-out inputs."""
    x, labels = make_separable_images(seed=0, num_samples=sum(sizes) + 60, num_classes=3, shape=(1, 8, 8))
    ends = np.cumsum([0, *sizes])
    xs = [x[start:end] for start, end in zip(ends, ends[1:])]
    targets = [np.eye(3, dtype=np.float32)[labels[start:end]] for start, end in zip(ends, ends[1:])]
    validations = [
        (x[-60 + 20 * i :][:20], labels[-60 + 20 * i :][:20]) if validation else None for i in range(len(sizes))
    ]
    return {"xs": xs, "targets": targets, "seeds": [11 + i for i in range(len(sizes))], "validations": validations}, x[
        -60:
    ]


def _separately(folds, *, recipe=RECIPE, resumes=None):
    resumes = resumes or [None] * len(folds["xs"])
    return [
        train_model(recipe=recipe, x=x, targets=t, seed=seed, validation=validation, device=CPU, resume=resume)
        for x, t, seed, validation, resume in zip(
            folds["xs"], folds["targets"], folds["seeds"], folds["validations"], resumes
        )
    ]


def _assert_same_models(got, expected, held_out):
    for stacked, separate in zip(got, expected, strict=True):
        assert stacked.best_epoch == separate.best_epoch
        assert stacked.validation_accuracy == separate.validation_accuracy
        np.testing.assert_allclose(stacked.train_loss, separate.train_loss, **TOLERANCE)
        expected_state = separate.model.state_dict()
        for name, tensor in stacked.model.state_dict().items():
            tolerance = STATISTICS_TOLERANCE if "running" in name else TOLERANCE
            torch.testing.assert_close(tensor, expected_state[name], **tolerance)
        np.testing.assert_allclose(
            predict_proba(stacked.model, held_out, device=CPU),
            predict_proba(separate.model, held_out, device=CPU),
            **TOLERANCE,
        )


@pytest.mark.parametrize("validation", [True, False], ids=["best epoch by validation", "last epoch"])
def test_stacked_models_are_the_separately_trained_ones_over_unequal_folds(validation, make_separable_images):
    folds, held_out = _folds(make_separable_images, validation=validation)
    got = train_stacked(recipe=RECIPE, **folds, device=CPU)
    _assert_same_models(got, _separately(folds), held_out)
    if not validation:
        assert [result.best_epoch for result in got] == [RECIPE.epochs] * len(SIZES)


def test_in_bf16_the_stacked_models_are_the_separately_trained_ones_to_bf16_rounding(make_separable_images):
    """bf16 asked for: batch norm inside the stacked program takes a bf16 input beside fp32 weights as the unstacked
    kernel does (it once failed with 'expected scalar type BFloat16 but found Float')."""
    folds, held_out = _folds(make_separable_images, validation=False)
    got, expected = train_stacked(recipe=BF16_RECIPE, **folds, device=CPU), _separately(folds, recipe=BF16_RECIPE)
    for stacked, separate in zip(got, expected, strict=True):
        assert stacked.bf16 is separate.bf16 is True
        assert stacked.best_epoch == separate.best_epoch == BF16_RECIPE.epochs
        np.testing.assert_allclose(stacked.train_loss, separate.train_loss, **BF16_TOLERANCE)
        np.testing.assert_allclose(
            predict_proba(stacked.model, held_out, device=CPU),
            predict_proba(separate.model, held_out, device=CPU),
            **BF16_TOLERANCE,
        )


def test_a_killed_stacked_training_in_bf16_resumes_to_the_uninterrupted_models(
    make_separable_images, kill_after, tmp_path
):
    """The same program resumed: equal to the last bit, not within bf16's rounding."""
    folds, held_out = _folds(make_separable_images)
    resume = tmp_path / "K3.resume.pt"
    expected = train_stacked(recipe=BF16_RECIPE, **folds, device=CPU)
    disarm = kill_after(2)
    with pytest.raises(Killed):
        train_stacked(recipe=BF16_RECIPE, **folds, device=CPU, resume=resume)
    disarm()
    got = train_stacked(recipe=BF16_RECIPE, **folds, device=CPU, resume=resume)
    for resumed, uninterrupted in zip(got, expected, strict=True):
        assert resumed.bf16 is True and resumed.train_loss == uninterrupted.train_loss
        for name, tensor in resumed.model.state_dict().items():
            torch.testing.assert_close(tensor, uninterrupted.model.state_dict()[name], atol=0, rtol=0)


@pytest.fixture
def float64():
    """Networks built and trained in float64, where summation order leaves no trace at fp32's tolerance."""
    dtype = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(dtype)


def test_in_float64_the_stacked_models_agree_to_rounding_in_the_last_digits(make_separable_images, float64):
    """The same computation, not an approximation: what differs in fp32 is the order of sums."""
    folds, held_out = _folds(make_separable_images)
    folds["xs"], held_out = [x.astype(np.float64) for x in folds["xs"]], held_out.astype(np.float64)
    folds["validations"] = [(x.astype(np.float64), labels) for x, labels in folds["validations"]]
    got, expected = train_stacked(recipe=RECIPE, **folds, device=CPU), _separately(folds)
    for stacked, separate in zip(got, expected, strict=True):
        assert stacked.best_epoch == separate.best_epoch
        np.testing.assert_allclose(stacked.train_loss, separate.train_loss, atol=1e-12, rtol=0)
        for name, tensor in stacked.model.state_dict().items():
            torch.testing.assert_close(tensor, separate.model.state_dict()[name], atol=1e-12, rtol=0)


@pytest.mark.parametrize(
    "recipe",
    [
        Recipe(
            model="mlp", optimizer="sgd", lr=0.1, epochs=2, batch_size=16, momentum=0.0, mixup_alpha=None, bf16=False
        ),
        Recipe(
            model="mlp",
            optimizer="adam",
            lr=1e-3,
            epochs=3,
            batch_size=16,
            milestones=(2,),
            weight_decay=5e-4,
            mixup_alpha=0.3,
            bf16=False,
        ),
    ],
    ids=["sgd without mixup or momentum", "adam with mixup"],
)
def test_without_mixup_or_momentum_by_adam_and_with_equal_folds_too(recipe, make_separable_images):
    for sizes in ((48, 48), SIZES):
        folds, held_out = _folds(make_separable_images, sizes=sizes)
        _assert_same_models(
            train_stacked(recipe=recipe, **folds, device=CPU), _separately(folds, recipe=recipe), held_out
        )


@pytest.fixture
def kill_after(monkeypatch):
    """Make the next training die right after the ``count``-th checkpoint it saves; undo with the returned call."""
    save = EpochCheckpoint.save

    def arm(count: int):
        saved = []

        def save_then_die(self, state):
            save(self, state)
            saved.append(self.path)
            if len(saved) == count:
                raise Killed

        monkeypatch.setattr(EpochCheckpoint, "save", save_then_die)
        return lambda: monkeypatch.setattr(EpochCheckpoint, "save", save)

    return arm


def test_a_killed_stack_resumes_from_its_one_checkpoint_to_the_uninterrupted_models(
    make_separable_images, kill_after, tmp_path, caplog
):
    """Killed after its epoch 2 was saved: the whole stack goes on from there, and every model ends as never
    interrupted, bit for bit; the stack saved one file, not one per model, and removes it at the end."""
    folds, _ = _folds(make_separable_images)
    resume = tmp_path / "K3.resume.pt"
    expected = train_stacked(recipe=RECIPE, **folds, device=CPU)
    disarm = kill_after(2)
    with pytest.raises(Killed):
        train_stacked(recipe=RECIPE, **folds, device=CPU, resume=resume)
    disarm()
    assert [path.name for path in tmp_path.iterdir()] == [resume.name]
    with caplog.at_level(logging.INFO, logger="enkcvs"):
        got = train_stacked(recipe=RECIPE, **folds, device=CPU, resume=resume)
    assert "after epoch 2" in caplog.text and not resume.exists()
    for resumed, uninterrupted in zip(got, expected, strict=True):
        assert resumed.train_loss == uninterrupted.train_loss
        assert resumed.validation_accuracy == uninterrupted.validation_accuracy
        for name, tensor in resumed.model.state_dict().items():
            torch.testing.assert_close(tensor, uninterrupted.model.state_dict()[name], atol=0, rtol=0)


def test_a_stack_checkpoints_every_few_epochs_where_asked(make_separable_images, monkeypatch, tmp_path):
    from enkcvs.training.device import Execution

    saved = []
    save = EpochCheckpoint.save
    monkeypatch.setattr(EpochCheckpoint, "save", lambda self, state: (saved.append(state["epoch"]), save(self, state)))
    folds, _ = _folds(make_separable_images)
    recipe = Recipe(**{**RECIPE.__dict__, "epochs": 5})
    train_stacked(
        recipe=recipe, **folds, execution=Execution(device=CPU, checkpoint_every=2), resume=tmp_path / "K3.resume.pt"
    )
    assert saved == [2, 4]  # never after the last epoch


def test_each_model_logs_its_epochs_in_the_lines_the_device_is_read_from(make_separable_images, caplog):
    folds, _ = _folds(make_separable_images, sizes=(40, 40))
    with caplog.at_level(logging.INFO, logger="enkcvs"):
        train_stacked(recipe=RECIPE, **folds, device=CPU)
    lines = [record.getMessage() for record in caplog.records if "samples/s trained" in record.getMessage()]
    assert [line.split("  ")[:2] for line in lines[:2]] == [["model 1/2", "epoch 1/3"], ["model 2/2", "epoch 1/3"]]
    assert len(lines) == 2 * RECIPE.epochs and {epoch_device(line) for line in lines} == {"cpu"}


def test_what_cannot_be_stacked_is_refused_with_the_fix(make_separable_images):
    folds, _ = _folds(make_separable_images, sizes=(20, 20))
    tokens = [np.zeros((20, 2, 6), dtype=np.int64)] * 2
    with pytest.raises(ValueError, match="token ids.*train each model on its own"):
        train_stacked(
            recipe=Recipe(model="mlp", optimizer="sgd", lr=0.1, epochs=1, mixup_alpha=None, bf16=False),
            **{**folds, "xs": tokens},
            device=CPU,
        )
    streamed = [torch.utils.data.TensorDataset(torch.as_tensor(x), torch.arange(len(x))) for x in folds["xs"]]
    with pytest.raises(ValueError, match="image files.*train each model on its own"):
        train_stacked(recipe=RECIPE, **{**folds, "xs": streamed}, device=CPU)
    images, labels = make_separable_images(seed=1, num_samples=8, num_classes=3, shape=(1, 28, 28))
    dropout = Recipe(model="coteaching_cnn9", optimizer="sgd", lr=0.1, epochs=1, mixup_alpha=None, bf16=False)
    with pytest.raises(ValueError, match="coteaching_cnn9, whose dropout.*train each model on its own"):
        train_stacked(
            recipe=dropout,
            xs=[images],
            targets=[np.eye(3, dtype=np.float32)[labels]],
            seeds=[1],
            validations=[None],
            device=CPU,
        )
    decay = Recipe(model="cnn4", optimizer="sgd", lr=0.1, epochs=1, lr_step_decay=5e-3, bf16=False)
    with pytest.raises(ValueError, match="time-based or linear lr decay.*train each model on its own"):
        train_stacked(recipe=decay, **folds, device=CPU)
    with pytest.raises(ValueError, match="one of each per model"):
        train_stacked(recipe=RECIPE, **{**folds, "seeds": [1]}, device=CPU)


def test_a_train_stack_job_gives_each_fold_the_table_of_its_fold_job(make_separable_images, tmp_path):
    """M = 2 iterations of K = 3 folds, six models in one job: each (m, k) table unstacked from it is the one its
    own train_fold job writes, within float rounding, with the same best epoch and scores, marked ``stacked``."""
    from enkcvs.data.datasets import Dataset, save_dataset
    from enkcvs.io import read_table
    from enkcvs.pipeline.steps.folds import train_fold, train_stack, unstack_fold
    from enkcvs.pipeline.steps.noise import make_noisy_labels
    from enkcvs.training.device import Execution

    x, y = make_separable_images(seed=2, num_samples=150, num_classes=3)
    save_dataset(Dataset(x, y, x[:9], y[:9], ("a", "b", "c")), tmp_path / "data.npz")
    make_noisy_labels(
        dataset=tmp_path / "data.npz",
        noise="sym0.2",
        seed=3,
        asymmetric_map=None,
        code="test",
        output=tmp_path / "labels.parquet",
    )
    recipe = {
        "model": "cnn4",
        "optimizer": "sgd",
        "lr": 0.05,
        "epochs": 3,
        "batch_size": 16,
        "mixup_alpha": 0.3,
        "bf16": False,
    }
    job = dict(
        dataset=tmp_path / "data.npz",
        labels=tmp_path / "labels.parquet",
        recipe=recipe,
        seed=1,
        num_folds=3,
        execution=Execution(device=CPU),
    )
    stack = tmp_path / "K3.parquet"
    train_stack(**job, iterations=2, output=stack, provenance_fields={"K": "3"})
    for m, k in [(m, k) for m in (1, 2) for k in (1, 2, 3)]:
        train_fold(
            **job,
            iteration=m,
            fold=k,
            output=tmp_path / f"fold-m{m}-k{k}.parquet",
            provenance_fields={"m": str(m), "k": str(k)},
        )
        unstack_fold(
            stack=stack,
            iteration=m,
            fold=k,
            output=tmp_path / f"m{m}" / f"k{k}.parquet",
            provenance_fields={"m": str(m), "k": str(k)},
        )
        expected, expected_meta = read_table(tmp_path / f"fold-m{m}-k{k}.parquet")
        got, got_meta = read_table(tmp_path / f"m{m}" / f"k{k}.parquet")
        pd.testing.assert_frame_equal(got, expected, check_exact=False, **TOLERANCE)
        assert (got_meta["m"], got_meta["k"], got_meta["stacked"]) == (str(m), str(k), True)
        for field in ("best_epoch", "validation_accuracy", "recipe", "bf16", "cuda_graphs", "device"):
            assert got_meta[field] == expected_meta[field], field
    with pytest.raises(ValueError, match="holds no fold 1 of iteration 3: it was trained for fewer"):
        unstack_fold(stack=stack, iteration=3, fold=1, output=tmp_path / "m3.parquet", provenance_fields={})


class _CountedOps(torch.utils._python_dispatch.TorchDispatchMode):
    """Counts the operators dispatched while it is on: the host's work, whatever the tensors hold."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.calls += 1
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize(
    "recipe",
    [RECIPE, RECIPE_ADAM := Recipe(model="mlp", optimizer="adam", lr=1e-3, epochs=1, batch_size=16, bf16=False)],
)
def test_a_stacked_step_dispatches_as_many_operators_for_six_models_as_for_two(recipe, make_separable_images):
    """The host's cost of a step does not grow with the models stacked: every model's batch, augmentation and mixup
    come from the epoch's (G, ...) draws, and one optimizer step updates every stacked parameter."""
    from enkcvs.training.device import Execution
    from enkcvs.training.stacked import StackTraining

    x, labels = make_separable_images(seed=0, num_samples=64, num_classes=4)
    targets = np.eye(4, dtype=np.float32)[labels]
    counted = {}
    for models in (2, 6):  # (one model takes other views: a dimension of size one)
        training = StackTraining(
            recipe=recipe,
            xs=[x] * models,
            targets=[targets] * models,
            seeds=list(range(1, models + 1)),
            validations=[None] * models,
            execution=Execution(device=CPU),
        )
        training._draw_epoch()
        training.full_step()  # the first step creates the gradients and the optimizer's state
        with _CountedOps() as ops:
            training.full_step()
        counted[models] = ops.calls
    assert counted[6] == counted[2] > 0
