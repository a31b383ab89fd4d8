"""Models trained stacked (enkcvs.training.stacked) are the models train_model trains from the same arguments: the same
losses, best epochs and predictions within float rounding, over folds of unequal size, resumed from either's epoch
checkpoints; what cannot be stacked is refused with the fix."""

import json
import logging
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import yaml

from enkcvs.training.evaluate import predict_proba
from enkcvs.training.recipe import Recipe
from enkcvs.training.resume import EpochCheckpoint
from enkcvs.training.stacked import train_stacked
from enkcvs.training.train import EPOCH_LINE, epoch_device, train_model

CPU = torch.device("cpu")
TINY_CONFIG = Path(__file__).resolve().parent / "config" / "tiny.yaml"
pytestmark = pytest.mark.usefixtures("single_thread")
#: fp32, one thread: a stacked convolution sums in another order than K separate ones, nothing more.
TOLERANCE = {"atol": 1e-5, "rtol": 1e-5}
#: Mixup, augmentation, momentum, weight decay and a milestone: every per-model draw and optimizer state.
RECIPE = Recipe(model="cnn4", optimizer="sgd", lr=0.05, epochs=3, batch_size=16, milestones=(2,), weight_decay=5e-4,
                mixup_alpha=0.3, augment="shift_flip", bf16=False)
#: The same under bf16 autocast, at a rate where bf16's rounding (a relative 2**-8 per product) stays at its own size
#: over three epochs instead of growing, as it does at 0.05 on eight-pixel images, in separately trained models too.
BF16_RECIPE = Recipe(model="cnn4", optimizer="sgd", lr=0.01, epochs=3, batch_size=16, milestones=(2,),
                     weight_decay=5e-4, mixup_alpha=0.3, augment="shift_flip", bf16=True)
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
    validations = [(x[-60 + 20 * i:][:20], labels[-60 + 20 * i:][:20]) if validation else None
                   for i in range(len(sizes))]
    return {"xs": xs, "targets": targets, "seeds": [11 + i for i in range(len(sizes))],
            "validations": validations}, x[-60:]


def _separately(folds, *, recipe=RECIPE, resumes=None):
    resumes = resumes or [None] * len(folds["xs"])
    return [train_model(recipe=recipe, x=x, targets=t, seed=seed, validation=validation, device=CPU, resume=resume)
            for x, t, seed, validation, resume in zip(folds["xs"], folds["targets"], folds["seeds"],
                                                      folds["validations"], resumes)]


def _assert_same_models(got, expected, held_out):
    for stacked, separate in zip(got, expected, strict=True):
        assert stacked.best_epoch == separate.best_epoch
        assert stacked.validation_accuracy == separate.validation_accuracy
        np.testing.assert_allclose(stacked.train_loss, separate.train_loss, **TOLERANCE)
        expected_state = separate.model.state_dict()
        for name, tensor in stacked.model.state_dict().items():
            torch.testing.assert_close(tensor, expected_state[name], **TOLERANCE)
        np.testing.assert_allclose(predict_proba(stacked.model, held_out, device=CPU),
                                   predict_proba(separate.model, held_out, device=CPU), **TOLERANCE)


@pytest.mark.parametrize("validation", [True, False], ids=["best epoch by validation", "last epoch"])
def test_stacked_models_are_the_separately_trained_ones_over_unequal_folds(validation, make_separable_images):
    folds, held_out = _folds(make_separable_images, validation=validation)
    got = train_stacked(recipe=RECIPE, **folds, device=CPU)
    _assert_same_models(got, _separately(folds), held_out)
    if not validation:
        assert [result.best_epoch for result in got] == [RECIPE.epochs] * len(SIZES)


@pytest.mark.filterwarnings("ignore:recipe.bf16. true, but bf16 is")  # AVX2-only CPUs emulate bf16 slowly
def test_in_bf16_the_stacked_models_are_the_separately_trained_ones_to_bf16_rounding(make_separable_images):
    """bf16 forced, whatever this CPU's probe would choose: batch norm inside the stacked program takes a bf16
    input beside fp32 weights as the unstacked kernel does (it once failed with 'expected scalar type BFloat16 but
    found Float')."""
    folds, held_out = _folds(make_separable_images, validation=False)
    got, expected = train_stacked(recipe=BF16_RECIPE, **folds, device=CPU), _separately(folds, recipe=BF16_RECIPE)
    for stacked, separate in zip(got, expected, strict=True):
        assert stacked.bf16 is separate.bf16 is True
        assert stacked.best_epoch == separate.best_epoch == BF16_RECIPE.epochs
        np.testing.assert_allclose(stacked.train_loss, separate.train_loss, **BF16_TOLERANCE)
        np.testing.assert_allclose(predict_proba(stacked.model, held_out, device=CPU),
                                   predict_proba(separate.model, held_out, device=CPU), **BF16_TOLERANCE)


@pytest.mark.filterwarnings("ignore:recipe.bf16. true, but bf16 is")
def test_a_killed_stacked_training_in_bf16_resumes_to_the_uninterrupted_models(make_separable_images, kill_after,
                                                                              tmp_path):
    """The same program resumed: equal to the last bit, not within bf16's rounding."""
    folds, held_out = _folds(make_separable_images)
    resumes = [tmp_path / f"k{k}.resume.pt" for k in range(1, len(SIZES) + 1)]
    expected = train_stacked(recipe=BF16_RECIPE, **folds, device=CPU)
    disarm = kill_after(len(SIZES) + 1)
    with pytest.raises(Killed):
        train_stacked(recipe=BF16_RECIPE, **folds, device=CPU, resumes=resumes)
    disarm()
    got = train_stacked(recipe=BF16_RECIPE, **folds, device=CPU, resumes=resumes)
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


def test_without_mixup_or_momentum_and_with_equal_folds_too(make_separable_images):
    recipe = Recipe(model="mlp", optimizer="sgd", lr=0.1, epochs=2, batch_size=16, momentum=0.0, mixup_alpha=None,
                    bf16=False)
    folds, held_out = _folds(make_separable_images, sizes=(48, 48))
    _assert_same_models(train_stacked(recipe=recipe, **folds, device=CPU), _separately(folds, recipe=recipe),
                        held_out)


def test_a_model_without_a_batch_in_a_step_is_left_alone(make_separable_images, monkeypatch):
    """The first model's epochs have a step fewer: it must take exactly its own steps (weight decay and momentum
    would move it on any other)."""
    from enkcvs.training.optimizer import MomentumSGD

    steps = []
    step = MomentumSGD.step
    monkeypatch.setattr(MomentumSGD, "step", lambda self: (steps.append(id(self)), step(self))[1])
    folds, _ = _folds(make_separable_images)
    train_stacked(recipe=RECIPE, **folds, device=CPU)
    assert sorted(steps.count(optimizer) for optimizer in set(steps)) == [4 * 3, 5 * 3, 5 * 3]


class _Replayed(torch.nn.Module):
    """Stands in for the stack's CUDA graphs on a CPU: the same forward pass, the shape of each batch it ran on
    recorded."""

    def __init__(self, forward, shapes):
        super().__init__()
        self.stacked_forward, self.shapes = forward, shapes

    def forward(self, xb):
        self.shapes.append(tuple(xb.shape[:2]))
        return self.stacked_forward(xb)


def test_a_stacks_full_steps_replay_from_its_graph_the_others_run_eager_and_training_is_unchanged(
        make_separable_images, monkeypatch, caplog):
    """Three models over folds of 64, 69 and 81 samples, batches of 16: the four steps of an epoch where every model
    has a full batch replay from the stack's graph, the epoch's ragged last steps run eager, and the models are the
    eager stack's, bit for bit."""
    import enkcvs.training.stacked as stacked

    folds, _ = _folds(make_separable_images)
    eager = train_stacked(recipe=RECIPE, **folds, device=CPU)
    replayed, steps_begun = [], []
    monkeypatch.setattr(stacked, "resolve_cuda_graphs", lambda setting, **_: True)
    monkeypatch.setattr(stacked, "compiled", lambda forward: _Replayed(forward, replayed))
    monkeypatch.setattr(stacked, "begin_step", lambda: steps_begun.append(None))
    with caplog.at_level(logging.INFO, logger="enkcvs.training.train"):
        graphed = train_stacked(recipe=RECIPE, **folds, device=CPU)
    assert replayed == [(3, 16)] * 4 * RECIPE.epochs and len(steps_begun) == len(replayed)
    for got, expected in zip(graphed, eager, strict=True):
        assert got.cuda_graphs and not expected.cuda_graphs
        assert got.train_loss == expected.train_loss and got.validation_accuracy == expected.validation_accuracy
        assert all(torch.equal(a, b) for a, b in zip(got.model.state_dict().values(),
                                                     expected.model.state_dict().values(), strict=True))
    lines = [EPOCH_LINE.search(record.getMessage()) for record in caplog.records]
    assert [line["cuda_graphs"] for line in lines if line] == [" cuda-graphs"] * 3 * RECIPE.epochs


@pytest.mark.filterwarnings("ignore:recipe.bf16. true, but bf16 is")
@pytest.mark.parametrize("recipe", [RECIPE, BF16_RECIPE], ids=["fp32", "bf16"])
def test_a_compiled_stack_trains_the_eager_stacks_models(recipe, make_separable_images, monkeypatch):
    """The stack's forward pass captured by torch.compile (AOTAutograd, batch norm's statistics updated in place
    inside the captured program, bf16 autocast around it: the CPU's share of what a CUDA graph replays): the same
    models."""
    import enkcvs.training.stacked as stacked

    folds, held_out = _folds(make_separable_images)
    eager = train_stacked(recipe=recipe, **folds, device=CPU)
    monkeypatch.setattr(stacked, "resolve_cuda_graphs", lambda setting, **_: True)
    monkeypatch.setattr(stacked, "compiled", lambda forward: torch.compile(forward, backend="aot_eager",
                                                                           dynamic=False))
    compiled = train_stacked(recipe=recipe, **folds, device=CPU)
    assert all(result.cuda_graphs and result.bf16 == recipe.bf16 for result in compiled)
    if not recipe.bf16:
        _assert_same_models(compiled, eager, held_out)
        return
    for got, expected in zip(compiled, eager, strict=True):  # bf16: its rounding's traces at most
        np.testing.assert_allclose(got.train_loss, expected.train_loss, **BF16_TOLERANCE)
        np.testing.assert_allclose(predict_proba(got.model, held_out, device=CPU, bf16=recipe.bf16),
                                   predict_proba(expected.model, held_out, device=CPU, bf16=recipe.bf16),
                                   **BF16_TOLERANCE)


def test_the_graphs_probe_times_the_stack_on_copies_and_changes_no_model(make_separable_images, monkeypatch):
    """``auto`` on a GPU probes the stack itself: a batch of each model's inputs (G, B, ...), under its own name,
    on copies of the models, so that probing leaves the training as it would be unprobed."""
    import enkcvs.training.stacked as stacked
    from enkcvs.training import graphs

    folds, _ = _folds(make_separable_images)
    unprobed = train_stacked(recipe=RECIPE, **folds, device=CPU)
    probes = []

    def probe(setting, *, build, batch, probe_name, **_):
        probes.append((probe_name, graphs.probe_cuda_graphs(build, batch(), bf16=False, graph=lambda model: model,
                                                            rounds=1, steps=2), tuple(batch().shape)))
        return False

    monkeypatch.setattr(stacked, "resolve_cuda_graphs", probe)
    probed = train_stacked(recipe=RECIPE, **folds, device=CPU)
    [(name, timings, shape)] = probes
    assert name == "cnn4, 3 stacked" and shape == (3, 16, 1, 8, 8) and timings["eager_seconds"] > 0
    for got, expected in zip(probed, unprobed, strict=True):
        assert not got.cuda_graphs and got.train_loss == expected.train_loss
        assert all(torch.equal(a, b) for a, b in zip(got.model.state_dict().values(),
                                                     expected.model.state_dict().values(), strict=True))


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


def test_a_killed_stacked_training_resumes_each_model_from_its_own_checkpoint(make_separable_images, kill_after,
                                                                              tmp_path, caplog):
    """Killed after the first model saved its epoch 2 and before the others did: the first goes on from epoch 2, the
    others from epoch 1, and all end as never interrupted."""
    folds, held_out = _folds(make_separable_images)
    resumes = [tmp_path / f"k{k}.resume.pt" for k in range(1, len(SIZES) + 1)]
    expected = train_stacked(recipe=RECIPE, **folds, device=CPU)
    disarm = kill_after(len(SIZES) + 1)
    with pytest.raises(Killed):
        train_stacked(recipe=RECIPE, **folds, device=CPU, resumes=resumes)
    disarm()
    assert all(path.is_file() for path in resumes)
    with caplog.at_level(logging.INFO, logger="enkcvs"):
        got = train_stacked(recipe=RECIPE, **folds, device=CPU, resumes=resumes)
    assert "after epoch 2" in caplog.text and "after epoch 1" in caplog.text
    assert not any(path.exists() for path in resumes)
    _assert_same_models(got, expected, held_out)


def test_a_fold_resumes_stacked_from_train_models_checkpoint_and_back(make_separable_images, kill_after, tmp_path):
    folds, held_out = _folds(make_separable_images)
    expected = _separately(folds)
    resumes = [tmp_path / f"k{k}.resume.pt" for k in range(1, len(SIZES) + 1)]
    disarm = kill_after(1)
    with pytest.raises(Killed):  # train_model of the first fold, killed after its first epoch
        _separately(folds, resumes=resumes)
    disarm()
    _assert_same_models(train_stacked(recipe=RECIPE, **folds, device=CPU, resumes=resumes), expected, held_out)
    disarm = kill_after(len(SIZES))  # now the stack killed after every model saved epoch 1
    with pytest.raises(Killed):
        train_stacked(recipe=RECIPE, **folds, device=CPU, resumes=resumes)
    disarm()
    _assert_same_models(_separately(folds, resumes=resumes), expected, held_out)


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
    with pytest.raises(ValueError, match="token ids.*stacked_folds: false"):
        train_stacked(recipe=Recipe(model="mlp", optimizer="sgd", lr=0.1, epochs=1, mixup_alpha=None, bf16=False),
                      **{**folds, "xs": tokens}, device=CPU)
    streamed = [torch.utils.data.TensorDataset(torch.as_tensor(x), torch.arange(len(x))) for x in folds["xs"]]
    with pytest.raises(ValueError, match="image files.*stacked_folds: false"):
        train_stacked(recipe=RECIPE, **{**folds, "xs": streamed}, device=CPU)
    images, labels = make_separable_images(seed=1, num_samples=8, num_classes=3, shape=(1, 28, 28))
    dropout = Recipe(model="coteaching_cnn9", optimizer="sgd", lr=0.1, epochs=1, mixup_alpha=None, bf16=False)
    with pytest.raises(ValueError, match="coteaching_cnn9, whose dropout.*stacked_folds: false"):
        train_stacked(recipe=dropout, xs=[images], targets=[np.eye(3, dtype=np.float32)[labels]], seeds=[1],
                      validations=[None], device=CPU)
    with pytest.raises(ValueError, match="one of each per model"):
        train_stacked(recipe=RECIPE, **{**folds, "seeds": [1]}, device=CPU)


@pytest.mark.parametrize("stacked", [True, False])
def test_a_train_selection_job_writes_the_tables_of_the_fold_jobs(stacked, make_separable_images, tmp_path):
    """M = 2 iterations of K = 3 folds, six models in one job: each (m, k) table is the one its own train_fold job
    writes, within float rounding as one stacked program, bit for bit one after another."""
    from enkcvs.data.datasets import Dataset, save_dataset
    from enkcvs.io import read_table
    from enkcvs.pipeline.steps.folds import train_fold, train_selection
    from enkcvs.pipeline.steps.noise import make_noisy_labels

    x, y = make_separable_images(seed=2, num_samples=150, num_classes=3)
    save_dataset(Dataset(x, y, x[:9], y[:9], ("a", "b", "c")), tmp_path / "data.npz")
    make_noisy_labels(dataset=tmp_path / "data.npz", noise="sym0.2", seed=3, asymmetric_map=None,
                      output=tmp_path / "labels.parquet")
    recipe = {"model": "cnn4", "optimizer": "sgd", "lr": 0.05, "epochs": 3, "batch_size": 16, "mixup_alpha": 0.3,
              "bf16": False}
    job = dict(dataset=tmp_path / "data.npz", labels=tmp_path / "labels.parquet", recipe=recipe, seed=1,
               num_folds=3, threads=1)
    folds = [(m, k) for m in (1, 2) for k in (1, 2, 3)]
    for m, k in folds:
        train_fold(**job, iteration=m, fold=k, output=tmp_path / f"fold-m{m}-k{k}.parquet",
                   provenance_fields={"m": str(m), "k": str(k)})
    outputs = [tmp_path / f"m{m}" / f"k{k}.parquet" for m, k in folds]
    train_selection(**job, iterations=2, outputs=outputs, provenance_fields={}, stacked=stacked)
    for (m, k), output in zip(folds, outputs, strict=True):
        expected, expected_meta = read_table(tmp_path / f"fold-m{m}-k{k}.parquet")
        got, got_meta = read_table(output)
        if stacked:
            pd.testing.assert_frame_equal(got, expected, check_exact=False, **TOLERANCE)
        else:
            pd.testing.assert_frame_equal(got, expected, check_exact=True)
        assert (got_meta["m"], got_meta["k"], got_meta.get("stacked")) == (str(m), str(k), stacked or None)
        assert got_meta["best_epoch"] == expected_meta["best_epoch"]
        assert got_meta["validation_accuracy"] == expected_meta["validation_accuracy"]
    with pytest.raises(ValueError, match="2 iterations of 3 folds need 6 outputs, got 5"):
        train_selection(**job, iterations=2, outputs=outputs[:5], provenance_fields={}, stacked=stacked)


#: A setting's final models: two groups of one recipe and loss (without mixup: ce, ce_true; with it: ce_mixup,
#: ss_only, enkcvs) and two that train alone (SL's loss; cs_only, the only one left of its recipe's group when the
#: mixup group is cut to compare a group of one).
FINALS = [("ce", {}, None), ("ce_true", {}, None), ("sl", {"alpha": 0.1, "beta": 1.0}, None),
          ("ce_mixup", {}, None), ("ss_only", {}, (2, 2, 2)), ("enkcvs", {}, (2, 2, 2))]


def _finals_params(methods, selection):
    """train_finals' models: each method's train_final arguments and the wildcards its own job would have."""
    recipe = {"model": "mlp", "optimizer": "sgd", "lr": 0.1, "epochs": 3, "batch_size": 16, "milestones": [2],
              "weight_decay": 5e-4, "mixup_alpha": 0.3, "bf16": False}
    return [{"method": method, "recipe": recipe, "gamma": 0.2 if method == "enkcvs" else None, "options": options,
             "selection": selection if point else None,
             "wildcards": {"method": method} if point else {"baseline": method}}
            for method, options, point in methods]


@pytest.mark.parametrize("stacked", [True, False])
def test_a_train_finals_job_writes_the_results_of_the_final_jobs(stacked, tiny_inputs):
    """Six final models of one setting in one job: each result is the one its own train_final job writes, bit for
    bit one after another; stacked, each group of one recipe and loss as one program (ce and ce_true; ce_mixup,
    ss_only and enkcvs), SL alone, within float rounding and marked ``stacked``."""
    from enkcvs.io import read_json, write_table
    from enkcvs.pipeline.steps.final import train_final, train_finals

    selection = tiny_inputs / "selection.parquet"
    write_table(pd.DataFrame({"sample": np.arange(60), "selected": np.arange(60) % 3 > 0,
                              "pseudo": np.arange(60) % 3, "beta": np.linspace(0, 1, 60)}), selection, metadata={})
    models = _finals_params(FINALS, selection)
    setting = dict(dataset=tiny_inputs / "data.npz", labels=tiny_inputs / "labels.parquet", seed=1, threads=1)
    for model in models:
        train_final(**setting, method=model["method"], recipe=model["recipe"], gamma=model["gamma"],
                    options=model["options"], selection=model["selection"],
                    output=tiny_inputs / f"alone-{model['method']}.json", provenance_fields=model["wildcards"])
    outputs = [tiny_inputs / "job" / f"{model['method']}.json" for model in models]
    train_finals(**setting, models=models, outputs=outputs, provenance_fields={}, stacked=stacked)
    stacked_methods = {"ce", "ce_true", "ce_mixup", "ss_only", "enkcvs"} if stacked else set()
    for model, output in zip(models, outputs, strict=True):
        got, expected = read_json(output), read_json(tiny_inputs / f"alone-{model['method']}.json")
        assert got.pop("stacked", False) == (model["method"] in stacked_methods)
        if model["method"] not in stacked_methods:
            assert got == expected
            continue
        assert got.pop("final_train_loss") == pytest.approx(expected.pop("final_train_loss"), **{"abs": 1e-5})
        assert got == expected  # the same clean test accuracy, samples, recipe and provenance
    with pytest.raises(ValueError, match="6 final models need 6 outputs, got 5"):
        train_finals(**setting, models=models, outputs=outputs[:5], provenance_fields={}, stacked=stacked)


def test_a_stacked_finals_group_of_one_trains_alone(tiny_inputs, monkeypatch):
    """A recipe and loss only one model of the setting trains with is not stacked: a stack of one saves nothing."""
    import enkcvs.training.stacked
    from enkcvs.io import read_json
    from enkcvs.pipeline.steps.final import train_finals

    stacked_groups = []
    real_train_stacked = enkcvs.training.stacked.train_stacked

    def spy(**kwargs):
        stacked_groups.append(len(kwargs["xs"]))
        return real_train_stacked(**kwargs)

    monkeypatch.setattr(enkcvs.training.stacked, "train_stacked", spy)
    models = _finals_params([FINALS[0], FINALS[1], ("cs_only", {}, None)], None)
    outputs = [tiny_inputs / f"{model['method']}.json" for model in models]
    train_finals(dataset=tiny_inputs / "data.npz", labels=tiny_inputs / "labels.parquet", seed=1, threads=1,
                 models=models, outputs=outputs, provenance_fields={}, stacked=True)
    assert stacked_groups == [2]
    assert [read_json(output).get("stacked", False) for output in outputs] == [True, True, False]


def test_the_stacked_rules_train_no_iteration_a_setting_does_not_vote_over():
    """Figure 1's M sweep (M up to 4) at sym0.4, seeds 1-2, beside the main M = 2 at every setting: the settings of
    one M share a rule only where their noises share their seeds."""
    from enkcvs.pipeline.config import SelectionJob, selection_jobs

    iterations = {("digits", noise, seed, 2): 2 for noise in ("sym0.4", "asym0.3") for seed in (1, 2, 3)}
    iterations |= {("digits", "sym0.4", seed, 2): 4 for seed in (1, 2)}
    iterations |= {("digits", "sym0.4", seed, 5): 1 for seed in (1, 2)}
    assert selection_jobs(iterations, stacked={"digits"}) == [
        SelectionJob(dataset="digits", K=2, M=2, noises=("asym0.3",), seeds=(1, 2, 3),
                     rule="train_selection_digits_K2_M2_1", stacked=True),
        SelectionJob(dataset="digits", K=2, M=2, noises=("sym0.4",), seeds=(3,),
                     rule="train_selection_digits_K2_M2_2", stacked=True),
        SelectionJob(dataset="digits", K=2, M=4, noises=("sym0.4",), seeds=(1, 2),
                     rule="train_selection_digits_K2_M4", stacked=True),
        SelectionJob(dataset="digits", K=5, M=1, noises=("sym0.4",), seeds=(1, 2),
                     rule="train_selection_digits_K5_M1", stacked=True),
    ]
    assert not any(job.stacked for job in selection_jobs(iterations, stacked={"mnist"}))


def test_the_finals_rules_group_the_settings_that_train_the_same_models():
    """Figure 1's extra models at sym0.4, seeds 1-2, beside the main models at every setting: settings share a rule
    only where they train the same models at the same seeds."""
    from enkcvs.pipeline.config import FinalModel, FinalsJob, finals_jobs

    main = [FinalModel("ce"), FinalModel("enkcvs", (2, 2, 2))]
    study = [FinalModel("ss_only", (3, 1, 1))]
    models = {("digits", noise, seed): main for noise in ("sym0.4", "asym0.3") for seed in (1, 2, 3)}
    models |= {("digits", "sym0.4", seed): main + study for seed in (1, 2)}
    models |= {("mnist", "sym0.2", 1): list(reversed(main))}
    assert finals_jobs(models) == [
        FinalsJob(dataset="digits", models=tuple(main), noises=("asym0.3",), seeds=(1, 2, 3),
                  rule="train_finals_digits_1"),
        FinalsJob(dataset="digits", models=tuple(main), noises=("sym0.4",), seeds=(3,), rule="train_finals_digits_2"),
        FinalsJob(dataset="digits", models=(*main, *study), noises=("sym0.4",), seeds=(1, 2),
                  rule="train_finals_digits_3"),
        FinalsJob(dataset="mnist", models=tuple(main), noises=("sym0.2",), seeds=(1,), rule="train_finals_mnist_1"),
    ]


def _planned(run_snakemake, workdir, config) -> tuple[set[str], set[str]]:
    """The files and rules a dry run of ``config`` plans."""
    done = run_snakemake(workdir, "-n", config=config)
    assert done.returncode == 0, done.stderr[-3000:]
    files = {path.strip() for line in done.stdout.splitlines() if line.strip().startswith("output:")
             for path in line.split("output:", 1)[1].split(",")}
    return files, set(re.findall(r"^rule (\w+):", done.stdout, flags=re.MULTILINE))


@pytest.mark.parametrize("setting, gpus, stacked", [(True, 0, True), ("auto", 1, True), ("auto", 0, False)])
def test_stacked_folds_and_finals_plan_the_same_files_from_one_job_per_selection_and_setting(
        setting, gpus, stacked, run_snakemake, tmp_path):
    """With Figure 1's study (K 2 and 3, M up to 3 at sym0.4, seed 1) beside the main K = 2, M = 2 at two seeds:
    every fold and final file the per-model jobs write, and no other, from one job per (noise, seed, K) and one per
    (noise, seed)."""
    config = yaml.safe_load(TINY_CONFIG.read_text())
    config.update(seeds=[1, 2], ablation=False, compare_confident_learning=False,
                  sensitivity={"enabled": True, "dataset": "digits", "noise": ["sym0.4"], "seeds": [1], "K": [2, 3],
                               "M": [2, 3], "t": [1]})
    paths = {}
    stacked_config = {"stacked_folds": setting, "stacked_finals": setting, "gpu": {"per_training_job": gpus}}
    for name, extra in {"per fold": {}, "stacked": stacked_config}.items():
        (tmp_path / name).mkdir()
        (path := tmp_path / name / "config.yaml").write_text(yaml.safe_dump({**config, **extra}))
        paths[name] = _planned(run_snakemake, tmp_path / name, path)
    (files, _), (stacked_files, stacked_rules) = paths["per fold"], paths["stacked"]
    assert stacked_files == files and any(path.startswith("results/folds/") for path in files)
    assert any(path.startswith("results/final/") for path in files)
    assert ("train_fold" not in stacked_rules) == stacked
    assert (not stacked_rules & {"train_final_baseline", "train_final_selected"}) == stacked
    assert any(rule.startswith("train_finals") for rule in stacked_rules) == stacked
    assert sorted(rule for rule in stacked_rules if rule.startswith("train_selection")) == ([
        "train_selection_digits_K2_M2_1", "train_selection_digits_K2_M2_2",  # asym0.3 seeds 1, 2; sym0.4 seed 2
        "train_selection_digits_K2_M3", "train_selection_digits_K3_M2"] if stacked else [])  # sym0.4 seed 1


def test_training_jobs_per_setting_plan_the_same_files_from_one_job_per_selection_and_setting(run_snakemake,
                                                                                               tmp_path):
    """The tiny config with its ablation ladder, confident learning and Figure 1's study: every fold and final
    result the per-model jobs write, and no other, from one job per selection and one per (noise, seed)."""
    config = yaml.safe_load(TINY_CONFIG.read_text())
    config.update(seeds=[1, 2], sensitivity={"enabled": True, "dataset": "digits", "noise": ["sym0.4"], "seeds": [1],
                                             "K": [2, 3], "M": [2, 3], "t": [1]})
    planned = {}
    for jobs in ("model", "setting"):
        (tmp_path / jobs).mkdir()
        (path := tmp_path / jobs / "config.yaml").write_text(yaml.safe_dump({**config, "training_jobs": jobs}))
        planned[jobs] = _planned(run_snakemake, tmp_path / jobs, path)
    (files, rules), (grouped_files, grouped_rules) = planned["model"], planned["setting"]
    trained = {path for path in files if path.startswith(("results/folds/", "results/final/"))}
    assert trained and trained <= grouped_files
    assert {path for path in grouped_files - files if not path.startswith("results/benchmarks/")} == set()
    assert {"train_fold", "train_final_baseline", "train_final_selected"} <= rules
    assert not rules & {"train_fold", "train_final_baseline", "train_final_selected"} & grouped_rules
    # the main models at asym0.3 (seeds 1, 2) and at sym0.4 (seed 2); with Figure 1's at sym0.4 seed 1
    assert sorted(rule for rule in grouped_rules if rule.startswith("train_finals")) == [
        "train_finals_digits_1", "train_finals_digits_2", "train_finals_digits_3"]


def test_a_stacked_models_checkpoint_holds_its_own_weights_only(make_separable_images, monkeypatch, tmp_path):
    """A stacked model's tensors are views of the whole stack, and torch.save writes a view's entire storage: its
    epoch checkpoint must be the size of a separately trained model's, not hold every model of the stack."""
    sizes = {}
    save = EpochCheckpoint.save

    def measured(checkpoint, state):
        save(checkpoint, state)
        sizes[checkpoint.path] = checkpoint.path.stat().st_size

    monkeypatch.setattr(EpochCheckpoint, "save", measured)
    folds, _ = _folds(make_separable_images)
    _separately(folds, resumes=[tmp_path / f"alone{k}.resume.pt" for k in range(len(SIZES))])
    train_stacked(recipe=RECIPE, **folds, device=CPU, resumes=[tmp_path / f"k{k}.resume.pt" for k in range(len(SIZES))])
    alone = [size for path, size in sizes.items() if path.name.startswith("alone")]
    stacked = [size for path, size in sizes.items() if not path.name.startswith("alone")]
    assert len(alone) == len(stacked) == len(SIZES)
    assert max(stacked) < 1.1 * max(alone)


#: The tiny config's final models on 40 % noisy digits at lr 0.05: rounding's traces grow over three epochs (float64
#: leaves none: the same computation). Measured in fp32: train losses within 0.6 %, clean test accuracies within 3 of
#: 297 test images, most of them equal; in bf16 (the suite run with ENKCVS_BF16_AUTO=true): losses within 0.7 %,
#: accuracies within 7 of 297.
STACKED_FINALS_TOLERANCE = {False: {"final_train_loss": {"rel": 0.02}, "test_accuracy": {"abs": 0.02}},
                            True: {"final_train_loss": {"rel": 0.02}, "test_accuracy": {"abs": 0.05}}}


@pytest.mark.workflow
@pytest.mark.parametrize("stacked_finals", [False, True], ids=["one after another", "finals stacked"])
def test_training_jobs_per_setting_write_what_the_per_model_jobs_write(stacked_finals, tiny_run, run_snakemake,
                                                                       result_files, tmp_path):
    """One setting of the tiny config (digits, sym0.4, seed 1: the main selection and Figure 1's) built with
    ``training_jobs: setting``: its fold tables, selections and final results are the per-model run's, byte for byte
    (the folds trained one after another in one process, the finals too); with ``stacked_finals``, the final models
    trained stacked have the same results within float rounding, marked ``stacked``, the others byte for byte."""
    expected = {path: data for path, data in result_files(tiny_run).items()
                if path.startswith("results/final/digits/sym0.4/seed1/")}
    config = yaml.safe_load(TINY_CONFIG.read_text()) | {"training_jobs": "setting", "stacked_finals": stacked_finals}
    (configfile := tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    done = run_snakemake(tmp_path, *sorted(expected), config=configfile)
    assert done.returncode == 0, done.stderr[-3000:]
    assert re.search(r"^train_finals_digits_\d+ +1$", done.stdout + done.stderr, flags=re.MULTILINE)
    assert re.search(r"^train_selection_digits_K2_M\d+ +1$", done.stdout + done.stderr, flags=re.MULTILINE)
    got, reference = result_files(tmp_path), result_files(tiny_run)
    assert expected and set(expected) <= set(got)
    differing = [path for path in got if got[path] != reference.get(path)]
    if not stacked_finals:
        assert differing == []
        return
    assert differing and [path for path in differing if not path.startswith("results/final/")] == []
    for path in differing:
        record, own = json.loads(got[path]), json.loads(reference[path])
        assert record.pop("stacked") is True and record["method"] not in ("sl", "gce", "coteaching")
        for field, tolerance in STACKED_FINALS_TOLERANCE[record["bf16"]].items():
            assert record.pop(field) == pytest.approx(own.pop(field), **tolerance), (path, field)
        assert record == own
