"""Workflow steps on a tiny dataset: deterministic outputs, and loud failures (naming the file and the defect) on
corrupt inputs and training faults, with no output written."""

import json
import pkgutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import torch

import enkcvs.pipeline.steps
from enkcvs.data.datasets import load_dataset
from enkcvs.io import read_table, write_table
from enkcvs.labelissues.determinism import dataset_digests
from enkcvs.labelissues.oof import select
from enkcvs.pipeline.steps.final import train_final
from enkcvs.pipeline.steps.folds import train_fold
from enkcvs.pipeline.steps.issues import write_label_issues
from enkcvs.pipeline.steps.select import select_samples
from enkcvs.training.device import Execution
from enkcvs.training.recipe import Recipe
from enkcvs.training.train import train_model

RECIPE = {"model": "mlp", "optimizer": "sgd", "lr": 0.1, "epochs": 2, "batch_size": 32}


def run_fold(base, iteration, fold, output):
    train_fold(
        dataset=base / "data.npz",
        labels=base / "labels.parquet",
        recipe=RECIPE,
        seed=3,
        num_folds=2,
        iteration=iteration,
        fold=fold,
        execution=Execution(device=torch.device("cpu")),
        output=output,
        provenance_fields={"K": "2", "m": str(iteration), "k": str(fold)},
    )


def test_same_seed_gives_byte_identical_prediction_files(tiny_inputs):
    run_fold(tiny_inputs, 1, 1, tiny_inputs / "a.parquet")
    run_fold(tiny_inputs, 1, 1, tiny_inputs / "b.parquet")
    assert (tiny_inputs / "a.parquet").read_bytes() == (tiny_inputs / "b.parquet").read_bytes()


@pytest.fixture
def one_iteration(tiny_inputs):
    """The two fold tables of iteration 1 (K = 2) and the keyword arguments of a selection over them."""
    paths = [tiny_inputs / f"k{fold}.parquet" for fold in (1, 2)]
    for fold, path in enumerate(paths, start=1):
        run_fold(tiny_inputs, 1, fold, path)
    outputs = {"table": tiny_inputs / "out" / "selection.parquet", "metrics": tiny_inputs / "out" / "metrics.json"}
    arguments = {
        "labels": tiny_inputs / "labels.parquet",
        "threshold": 1,
        "provenance_fields": {"noise": "sym0.2"},
        **outputs,
    }
    return paths, arguments


def corrupt(path, edit):
    """Rewrite a fold table through ``edit(frame) -> frame``, keeping its metadata, into a new file."""
    frame, meta = read_table(path)
    target = path.with_name("corrupt-" + path.name)
    write_table(edit(frame), target, metadata=meta)
    return target


def test_a_complete_iteration_is_selected(one_iteration):
    paths, arguments = one_iteration
    select_samples(predictions=paths, **arguments)
    selection, _ = read_table(arguments["table"])
    assert len(selection) == 60 and selection["selected"].sum() > 0


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda f: f.iloc[1:], r"1 missing"),
        (lambda f: pd.concat([f, f.iloc[:1]]), r"1 duplicated samples"),
        (lambda f: f.drop(columns="prob_2"), r"missing columns \['prob_2'\]"),
        (lambda f: f.assign(prob_3=0.0), r"4 probability columns for Q = 3"),
        (lambda f: f.assign(given=f["given"].where(f.index > 0, 7)), r"'given' labels outside 0..2"),
        (lambda f: f.assign(predicted=-1), r"'predicted' labels outside 0..2"),
        (lambda f: f.assign(prob_0=np.nan), r"not finite or do not sum to 1"),
    ],
)
def test_a_corrupt_fold_table_fails_naming_the_file_and_defect(one_iteration, edit, message):
    paths, arguments = one_iteration
    bad = corrupt(paths[1], edit)
    with pytest.raises(ValueError, match=message) as error:
        select_samples(predictions=[paths[0], bad], **arguments)
    assert str(bad) in str(error.value)
    assert not arguments["table"].exists() and not arguments["metrics"].exists()


def test_aggregation_never_runs_over_an_incomplete_fold_set(one_iteration):
    paths, arguments = one_iteration
    with pytest.raises(ValueError, match=r"iteration 1 has folds \[1\] of K = 2"):
        select_samples(predictions=paths[:1], **arguments)
    with pytest.raises(ValueError, match="both hold fold k = 1"):
        select_samples(predictions=[paths[0], paths[0]], **arguments)
    assert not arguments["table"].exists()


def two_seeds(base, *, shift_second=0):
    """Both folds (K = 2, M = 1) of seeds 3 and 4 and one label table per seed: the same given labels, or seed 4's
    shifted by ``shift_second`` classes (as synthetic noise draws other labels per seed)."""
    frame, meta = read_table(base / "labels.parquet")
    predictions, labels = [], []
    for seed in (3, 4):
        labels.append(base / f"labels{seed}.parquet")
        shift = shift_second if seed == 4 else 0
        write_table(frame.assign(given=(frame["given"] + shift) % 3), labels[-1], metadata={**meta, "seed": seed})
        for fold in (1, 2):
            predictions.append(base / f"s{seed}k{fold}.parquet")
            train_fold(
                dataset=base / "data.npz",
                labels=labels[-1],
                recipe=RECIPE,
                seed=seed,
                num_folds=2,
                iteration=1,
                fold=fold,
                execution=Execution(device=torch.device("cpu")),
                output=predictions[-1],
                provenance_fields={"seed": str(seed), "K": "2", "m": "1", "k": str(fold)},
            )
    return predictions, labels


def test_merged_label_issues_are_one_ensemble_of_every_seeds_iterations(tiny_inputs):
    predictions, labels = two_seeds(tiny_inputs)
    out = {"table": tiny_inputs / "merged.parquet", "summary": tiny_inputs / "merged.md"}
    write_label_issues(
        dataset=tiny_inputs / "data.npz",
        predictions=predictions,
        labels=labels,
        threshold=1,
        top=5,
        provenance_fields={"dataset": "tiny", "noise": "sym0.2"},
        **out,
    )
    merged, meta = read_table(out["table"])
    stack = [pd.concat([read_table(p)[0] for p in predictions[i : i + 2]]).sort_values("sample") for i in (0, 2)]
    expected = select(
        probabilities=[s[["prob_0", "prob_1", "prob_2"]].to_numpy() for s in stack],
        labels=read_table(labels[0])[0]["given"].to_numpy(),
        threshold=2,
        class_names=["a", "b", "c"],
        sample_keys=dataset_digests(load_dataset(tiny_inputs / "data.npz")),  # as the command ranks
    )
    pd.testing.assert_frame_equal(merged, expected.to_frame())  # rows numbered 1..N, in the data's order
    assert merged["votes"].max() == 2 and meta["seeds"] == [3, 4] and meta["threshold"] == 1
    summary = out["summary"].read_text()
    assert "over seeds 3, 4: 2 iterations in all, a sample kept when selected in at least 2" in summary
    one = {"table": tiny_inputs / "seed3.parquet", "summary": tiny_inputs / "seed3.md"}
    fields = {"dataset": "tiny", "noise": "sym0.2", "seed": "3"}
    write_label_issues(
        dataset=tiny_inputs / "data.npz",
        predictions=predictions[:2],
        labels=labels[:1],
        threshold=1,
        top=5,
        provenance_fields=fields,
        **one,
    )
    seed3, meta = read_table(one["table"])
    assert seed3["votes"].max() == 1 and meta["seeds"] == [3] and meta["seed"] == "3" and meta["M"] == 1
    assert "E-NKCVS with K = 2, M = 1, t = 1 (noise setting sym0.2, seed 3). Review list" in one["summary"].read_text()


def test_seeds_with_other_given_labels_are_not_merged(tiny_inputs):
    predictions, labels = two_seeds(tiny_inputs, shift_second=1)
    out = {"table": tiny_inputs / "merged.parquet", "summary": tiny_inputs / "merged.md"}
    with pytest.raises(ValueError, match="given labels differ from seed 3's"):
        write_label_issues(
            dataset=tiny_inputs / "data.npz",
            predictions=predictions,
            labels=labels,
            threshold=1,
            top=5,
            provenance_fields={"dataset": "tiny", "noise": "sym0.2"},
            **out,
        )
    assert not out["table"].exists() and not out["summary"].exists()


def test_a_truncated_dataset_archive_fails_naming_the_file(tiny_inputs):
    archive = tiny_inputs / "data.npz"
    archive.write_bytes(archive.read_bytes()[:500])
    with pytest.raises(ValueError, match=r"data.npz is truncated or corrupt.*delete it and rerun"):
        load_dataset(archive)
    with pytest.raises(ValueError, match="truncated or corrupt"):
        run_fold(tiny_inputs, 1, 1, tiny_inputs / "never.parquet")
    assert not (tiny_inputs / "never.parquet").exists()


def test_labels_out_of_range_fail_naming_the_file(tiny_inputs):
    labels = tiny_inputs / "labels.parquet"
    frame, meta = read_table(labels)
    write_table(frame.assign(given=frame["given"] + 5), labels, metadata=meta)
    with pytest.raises(ValueError, match=r"labels.parquet: 'given' labels outside 0..2"):
        train_final(
            dataset=tiny_inputs / "data.npz",
            labels=labels,
            selection=None,
            method="ce",
            recipe=RECIPE,
            gamma=0.2,
            seed=1,
            execution=Execution(device=torch.device("cpu")),
            output=tiny_inputs / "never.json",
            provenance_fields={},
        )
    assert not (tiny_inputs / "never.json").exists()


def test_a_non_finite_loss_stops_training_at_its_epoch_and_batch():
    x = np.ones((40, 1, 4, 4), dtype=np.float32)
    x[25] = np.nan  # sample 25 poisons whichever batch draws it in the first epoch
    targets = np.eye(3, dtype=np.float32)[np.arange(40) % 3]
    recipe = Recipe(model="mlp", optimizer="sgd", lr=0.1, epochs=2, batch_size=8, mixup_alpha=None)
    with pytest.raises(FloatingPointError, match=r"non-finite loss nan at epoch 1, batch [1-5]: lower recipe.lr"):
        train_model(recipe=recipe, x=x, targets=targets, seed=0)


def test_out_of_memory_names_the_batch_size_to_lower(monkeypatch):
    def exhausted(*args, **kwargs):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    monkeypatch.setattr("enkcvs.method.losses.soft_cross_entropy", exhausted)  # train_model looks its loss up there
    recipe = Recipe(model="mlp", optimizer="sgd", lr=0.1, epochs=1, batch_size=16)
    x, targets = np.zeros((32, 1, 4, 4), dtype=np.float32), np.eye(2, dtype=np.float32)[np.arange(32) % 2]
    with pytest.raises(
        MemoryError, match=r"epoch 1, batch 1 with batch_size 16: lower recipe.batch_size \(e.g. to 8\)"
    ):
        train_model(recipe=recipe, x=x, targets=targets, seed=0)


def test_selection_and_report_steps_never_import_torch():
    """Hundreds of aggregation and report jobs each start a process: they must not pay torch's import (the training
    steps import it inside the step)."""
    steps = [f"enkcvs.pipeline.steps.{step.name}" for step in pkgutil.iter_modules(enkcvs.pipeline.steps.__path__)]
    modules = [
        *steps,
        "enkcvs.report.render",
        "enkcvs.method.selection",
        "enkcvs.method.weights",
        "enkcvs.method.theory",
    ]
    probe = (
        f"import sys, {', '.join(modules)}; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'torch', 'torchvision', 'transformers'}))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_real_noise_keeps_the_labels_and_selection_scores_nothing(tiny_inputs):
    from enkcvs.pipeline.steps.noise import make_noisy_labels

    tmp_path = tiny_inputs
    make_noisy_labels(
        dataset=tmp_path / "data.npz",
        noise="real",
        seed=3,
        asymmetric_map=None,
        code="test",
        output=tmp_path / "labels.parquet",
    )
    labels = read_table(tmp_path / "labels.parquet")[0]
    assert (labels["true"] == -1).all() and (labels["given"] == load_dataset(tmp_path / "data.npz").y_train).all()
    paths = [tmp_path / f"k{fold}.parquet" for fold in (1, 2)]
    for fold, path in enumerate(paths, start=1):
        run_fold(tmp_path, 1, fold, path)
    select_samples(
        predictions=paths,
        labels=tmp_path / "labels.parquet",
        threshold=1,
        table=tmp_path / "selection.parquet",
        metrics=tmp_path / "metrics.json",
        provenance_fields={"noise": "real"},
    )
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert metrics["true_labels_known"] is False and "precision" not in metrics and "theorem1" not in metrics
    assert metrics["selected"] == int(read_table(tmp_path / "selection.parquet")[0]["selected"].sum())


def test_superclass_noise_stays_inside_superclasses_and_is_recorded(tmp_path):
    from enkcvs.data.datasets import Dataset, save_dataset
    from enkcvs.io import read_table_metadata
    from enkcvs.pipeline.steps.noise import make_noisy_labels

    superclasses = np.array([0, 0, 1, 1, 1, 2])
    y = np.repeat(np.arange(6), 10)
    x = np.zeros((60, 1, 2, 2), np.uint8)
    save_dataset(Dataset(x, y, x[:6], y[:6], tuple("abcdef"), superclasses=superclasses), tmp_path / "data.npz")
    make_noisy_labels(
        dataset=tmp_path / "data.npz",
        noise="asym0.4",
        seed=1,
        asymmetric_map="cifar100_pairs",
        code="test",
        output=tmp_path / "labels.parquet",
    )
    labels = read_table(tmp_path / "labels.parquet")[0]
    flipped = labels[labels["true"] != labels["given"]]
    assert len(flipped) == 4 * 4  # two pairs (super-classes 0 and 1; 2 has one class), 4 of 10 flipped each
    assert (superclasses[flipped["true"]] == superclasses[flipped["given"]]).all()
    mapping = read_table_metadata(tmp_path / "labels.parquet")["mapping"]
    assert {int(s): t for s, t in mapping.items()} == dict(zip(flipped["true"], flipped["given"]))
