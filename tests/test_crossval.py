"""Out-of-fold probabilities from the library (enkcvs.training.crossval): the workflow's fold step is the same code."""

import re
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from enkcvs.data.datasets import load_dataset
from enkcvs.io import read_table
from enkcvs.training.crossval import out_of_fold_probabilities
from test_steps import RECIPE, run_fold


def test_the_stack_equals_the_workflows_fold_files(tiny_inputs, single_thread):  # the fold step runs 1 thread
    data = load_dataset(tiny_inputs / "data.npz")
    labels, meta = read_table(tiny_inputs / "labels.parquet")
    given = labels["given"].to_numpy()
    stack = out_of_fold_probabilities(x=data.x_train, labels=given, recipe=RECIPE, num_folds=2, iterations=2, seed=3,
                                      num_classes=3)
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
    from_arrays = out_of_fold_probabilities(x=data.x_train, labels=data.y_train, recipe=RECIPE, num_folds=2,
                                            iterations=1, seed=3)
    np.testing.assert_array_equal(from_pairs, from_arrays)
    with pytest.raises(ValueError, match="labels are needed"):
        out_of_fold_probabilities(x=data.x_train, recipe=RECIPE)
    with pytest.raises(ValueError, match="encode them as 0..Q-1"):
        out_of_fold_probabilities(x=data.x_train, labels=data.y_train.astype(str), recipe=RECIPE)


def test_the_docs_example_runs():
    """docs/your-data.md's out-of-fold example, verbatim."""
    readme = (Path(__file__).parents[1] / "docs" / "your-data.md").read_text()
    (code,) = [block for block in re.findall(r"```python\n(.*?)```", readme, flags=re.DOTALL)
               if "out_of_fold_probabilities(" in block]
    namespace = {}
    exec(compile(code, "docs/your-data.md", "exec"), namespace)
    assert namespace["oof"].shape == (3, 1797, 10) and namespace["issues"]["rank"].tolist()[:3] == [1, 2, 3]


@pytest.mark.parametrize("progress, terminal", [(True, False), (False, False), (True, True)],
                         ids=["to a file", "not asked", "to a terminal"])
def test_progress_outside_a_terminal_is_a_line_per_fold_model_with_the_time_left(progress, terminal, tiny_inputs,
                                                                                 capsys, monkeypatch):
    """Where stderr is a file (a log, a cluster job's output) a bar would be lost: a line per fold model instead; in
    a terminal, tqdm's bar alone."""
    monkeypatch.setattr(sys.stderr, "isatty", lambda: terminal, raising=False)
    data = load_dataset(tiny_inputs / "data.npz")
    recipe = {"model": "mlp", "optimizer": "sgd", "lr": 0.1, "epochs": 1, "batch_size": 16}
    out_of_fold_probabilities(x=data.x_train, labels=data.y_train, recipe=recipe, num_folds=2, iterations=2,
                              progress=progress)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("fold model ")]
    if not progress or terminal:
        assert lines == [] and ("fold models: 100%" in err) == terminal
        return
    assert len(lines) == 4 and lines[0].startswith("fold model 1 of 4 trained (iteration 1 of 2, fold 1 of 2): ")
    assert all(re.search(r": \d+ s so far, about \d+ s left$", line) for line in lines)
    assert lines[-1].endswith("about 0 s left")
