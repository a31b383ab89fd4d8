"""Out-of-fold probabilities from the library (enkcvs.training.crossval): the workflow's fold step is the same code."""

import re
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from test_steps import RECIPE, run_fold

from enkcvs.data.datasets import load_dataset
from enkcvs.io import read_table
from enkcvs.training import crossval
from enkcvs.training.crossval import out_of_fold_probabilities


def test_the_stack_equals_the_workflows_fold_files(tiny_inputs, single_thread):  # the fold step runs 1 thread
    data = load_dataset(tiny_inputs / "data.npz")
    labels, meta = read_table(tiny_inputs / "labels.parquet")
    given = labels["given"].to_numpy()
    stack = out_of_fold_probabilities(
        x=data.x_train, labels=given, recipe=RECIPE, num_folds=2, iterations=2, seed=3, num_classes=3
    )
    assert stack.shape == (2, 60, 3) and np.allclose(stack.sum(axis=2), 1.0, atol=1e-5)
    for m in (1, 2):
        for k in (1, 2):
            path = tiny_inputs / f"m{m}k{k}.parquet"
            run_fold(tiny_inputs, m, k, path)
            frame = read_table(path)[0]
            np.testing.assert_array_equal(stack[m - 1, frame["sample"]], frame[["prob_0", "prob_1", "prob_2"]])
    assert not np.array_equal(stack[0], stack[1])  # fresh folds and initialisation per iteration


def test_a_dataset_of_pairs_is_stacked_and_labels_are_checked(tiny_inputs):
    data = load_dataset(tiny_inputs / "data.npz")
    pairs = torch.utils.data.TensorDataset(torch.from_numpy(data.x_train), torch.from_numpy(data.y_train))
    from_pairs = out_of_fold_probabilities(x=pairs, recipe=RECIPE, num_folds=2, iterations=1, seed=3)
    from_arrays = out_of_fold_probabilities(
        x=data.x_train, labels=data.y_train, recipe=RECIPE, num_folds=2, iterations=1, seed=3
    )
    np.testing.assert_array_equal(from_pairs, from_arrays)
    with pytest.raises(ValueError, match="labels are needed"):
        out_of_fold_probabilities(x=data.x_train, recipe=RECIPE)
    with pytest.raises(ValueError, match="encode them as 0..Q-1"):
        out_of_fold_probabilities(x=data.x_train, labels=data.y_train.astype(str), recipe=RECIPE)


def test_the_docs_example_runs():
    """docs/your-data.md's out-of-fold example, verbatim."""
    readme = (Path(__file__).parents[1] / "docs" / "your-data.md").read_text()
    (code,) = [
        block
        for block in re.findall(r"```python\n(.*?)```", readme, flags=re.DOTALL)
        if "out_of_fold_probabilities(" in block
    ]
    namespace = {}
    exec(compile(code, "docs/your-data.md", "exec"), namespace)
    assert namespace["oof"].shape == (3, 1797, 10) and sorted(namespace["issues"]["rank"])[:3] == [1, 2, 3]


@pytest.mark.parametrize(
    "progress, terminal", [(True, False), (False, False), (True, True)], ids=["to a file", "not asked", "to a terminal"]
)
@pytest.mark.parametrize("stacked", [False, True], ids=["one by one", "stacked"])
def test_progress_outside_a_terminal_is_a_line_at_the_start_and_per_epoch_with_the_time_left(
    progress, terminal, stacked, tiny_inputs, capsys, monkeypatch
):
    """Where stderr is a file (a log, a cluster job's output) a bar would be lost: a line before the first epoch, then
    lines (here one per epoch: LINE_SECONDS 0) with the time left; in a terminal, tqdm's bar alone."""
    monkeypatch.setattr(sys.stderr, "isatty", lambda: terminal, raising=False)
    monkeypatch.setattr(crossval, "LINE_SECONDS", 0.0)
    data = load_dataset(tiny_inputs / "data.npz")
    recipe = {"model": "mlp", "optimizer": "sgd", "lr": 0.1, "epochs": 3, "batch_size": 16, "bf16": False}
    out_of_fold_probabilities(
        x=data.x_train,
        labels=data.y_train,
        recipe=recipe,
        num_folds=2,
        iterations=2,
        progress=progress,
        stacked=stacked,
    )
    err = capsys.readouterr().err
    what = "4 fold models, trained together" if stacked else "epochs of 4 fold models"
    epochs = 3 if stacked else 12
    lines = [line for line in re.split(r"[\r\n]", err) if re.match(f"{what}: \\d+ of \\d+ epochs done", line)]
    if not progress or terminal:
        assert lines == [] and (f"{what}: 100%" in err) == terminal
        return
    assert err.startswith(f"{what}: {epochs} epochs to train; the time left follows the first\n")
    first = (
        "1 of 3 epochs done (epoch 1 of 3)" if stacked else "1 of 12 epochs done (iteration 1, fold 1, epoch 1 of 3)"
    )
    assert len(lines) == epochs and lines[0].startswith(f"{what}: {first}, ")
    assert all(re.search(r", \d+ s so far, about \d+ s left$", line) for line in lines)
    assert lines[-1].endswith("about 0 s left")


def test_the_time_left_leaves_out_the_start_up_of_the_first_unit(monkeypatch):
    """The first unit carries the start-up (imports, allocations, a first compilation): once two are done, the time
    left is the pace of the others, so the estimate converges instead of starting far too long."""
    clock = iter([0.0, 10.0, 11.0, 11.0, 12.0, 12.0])  # start; first unit after 10 s; then 1 s a unit
    monkeypatch.setattr(crossval.time, "perf_counter", lambda: next(clock))
    bar = crossval.Progress(total=10, shown=False, unit="epoch", what="epochs")
    bar.end("1")
    bar.end("2")
    assert bar.left() == pytest.approx(8.0)  # 8 units left at 1 s each, not at the first's 10 s
    bar.end("3")
    assert bar.left() == pytest.approx(7.0)


#: bf16 forced either way (a CPU trains fp32 unless the recipe asks); bf16's rounding (a relative 2**-8 per product)
#: lands in another order in a stacked matrix product than in a separate one.
STACKED_TOLERANCE = {False: {"atol": 1e-5, "rtol": 0}, True: {"atol": 3e-2, "rtol": 0}}


@pytest.mark.filterwarnings("ignore:recipe.bf16. true, but bf16 is")  # AVX2-only CPUs emulate bf16 slowly
@pytest.mark.parametrize("bf16", [False, True], ids=["fp32", "bf16"])
@pytest.mark.parametrize("standardize", [False, True], ids=["raw", "standardised"])
def test_stacked_fold_models_give_the_probabilities_of_those_trained_one_by_one(bf16, standardize, single_thread):
    """The M x K fold models trained together (own data's features and embeddings) are the ones trained one by one:
    the same folds, initialisations, draws and per-fold scaling, their held-out probabilities within rounding."""
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 3, 90)
    x = (rng.normal(size=(90, 1, 1, 6)) + labels[:, None, None, None] * [3.0, 0, 0, 0, 0, 0]) * [1, 1, 1, 1, 50, 0.1]
    recipe = {
        "model": "mlp",
        "optimizer": "adam",
        "lr": 1e-3,
        "weight_decay": 5e-4,
        "epochs": 3,
        "batch_size": 16,
        "mixup_alpha": 0.3,
        "bf16": bf16,
    }
    common = {
        "x": x.astype(np.float32),
        "labels": labels,
        "recipe": recipe,
        "num_folds": 3,
        "iterations": 2,
        "seed": 4,
        "num_classes": 3,
        "standardize": standardize,
    }
    one_by_one = out_of_fold_probabilities(**common)
    stacked = out_of_fold_probabilities(**common, stacked=True)
    assert stacked.shape == (2, 90, 3) and np.allclose(stacked.sum(axis=2), 1.0, atol=1e-5)
    np.testing.assert_allclose(stacked, one_by_one, **STACKED_TOLERANCE[bf16])
    assert not np.array_equal(stacked[0], stacked[1])  # fresh folds and initialisation per iteration


def test_stacking_images_streamed_from_their_files_is_refused_before_training():
    from enkcvs.data.datasets import Dataset

    files = Dataset(
        x_train=np.array(["a.png", "b.png", "c.png", "d.png"]),
        y_train=np.array([0, 1, 0, 1]),
        x_test=np.array([]),
        y_test=np.array([], dtype=np.int64),
        class_names=("a", "b"),
        modality="image_files",
    )
    with pytest.raises(ValueError, match="not images streamed from files: stacked=False"):
        out_of_fold_probabilities(x=files, recipe=RECIPE, num_folds=2, iterations=1, stacked=True)


def test_fold_models_trained_one_by_one_are_taken_from_the_cache_once_finished(tiny_inputs, tmp_path, monkeypatch):
    from enkcvs.training.foldcache import FoldCache

    data = load_dataset(tiny_inputs / "data.npz")
    recipe = {"model": "mlp", "optimizer": "sgd", "lr": 0.1, "epochs": 2, "batch_size": 16, "bf16": False}
    common = {"x": data.x_train, "labels": data.y_train, "recipe": recipe, "num_folds": 2, "iterations": 2}
    cache = FoldCache(tmp_path / "folds")
    trained = out_of_fold_probabilities(**common, cache=cache)
    assert sorted(path.name for path in cache.folder.iterdir()) == [f"fold-{m}-{k}.npz" for m in (1, 2) for k in (1, 2)]
    (cache.folder / "fold-2-2.npz").unlink()  # as a run stopped before its last fold model
    real = crossval.fold_probabilities
    calls = []
    monkeypatch.setattr(crossval, "fold_probabilities", lambda **kw: calls.append(kw) or real(**kw))
    np.testing.assert_array_equal(out_of_fold_probabilities(**common, cache=cache), trained)
    assert [(call["iteration"], call["fold"]) for call in calls] == [(2, 2)]


def test_the_docs_own_model_example_runs_on_a_table():
    """docs/your-data.md's three lines with a classifier of one's own, verbatim, on scikit-learn's iris."""
    from sklearn.datasets import load_iris

    page = (Path(__file__).parents[1] / "docs" / "your-data.md").read_text()
    (code,) = [block for block in re.findall(r"```python\n(.*?)```", page, flags=re.DOTALL) if "find_issues(" in block]
    features, labels = load_iris(return_X_y=True)
    namespace = {"X": features, "y": labels}
    exec(compile(code, "docs/your-data.md", "exec"), namespace)
    issues = namespace["issues"]
    assert issues["row"].tolist() == list(range(1, len(labels) + 1)) and sorted(issues["rank"]) == list(range(1, 151))
    assert (issues["given_label"] == labels).all() and issues["is_label_issue"].sum() < len(labels)
