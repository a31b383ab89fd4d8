"""The same list whatever the threads or the row order: ``enkcvs find-issues`` on one thread and on two, on a file and
on a shuffled copy of it, writes the same rows (compared after undoing the shuffle), bitwise, and says what it ran
with; so do the workflow's label-issue steps on shuffled inputs and on BLAS pools of one thread and of two (the
whole own-data route, fold jobs included: tests/test_own_data_workflow.py)."""

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from enkcvs.data.datasets import Dataset, save_dataset
from enkcvs.io import read_table, write_table
from enkcvs.labelissues.cli import main
from enkcvs.labelissues.example import write_example
from enkcvs.pipeline.steps.issues import select_out_of_fold, write_label_issues
from tests.test_find_issues_from_files import CLASSES, write_images

FAST = ["--folds", "2", "--repetitions", "2", "--epochs", "3"]
TABLE = ["--label-column", "animal", "--id-column", "id"]


def find_issues(data: Path, out: Path, *options, threads: int = 1) -> tuple[pd.DataFrame, dict]:
    """``enkcvs find-issues --data data`` with torch on ``threads`` threads (as ``OMP_NUM_THREADS`` or the cores set
    them); the table and the provenance record."""
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        assert main(["find-issues", "--data", str(data), *map(str, options), "--no-cache", "--out", str(out)]) == 0
    finally:
        torch.set_num_threads(before)
    return pd.read_csv(out), json.loads(out.with_name(f"{out.stem}.provenance.json").read_text())


def shuffled(path: Path, *, seed: int) -> Path:
    """A copy of the CSV ``path`` with its rows in another order."""
    copy = path.with_name(f"shuffled-{path.name}")
    pd.read_csv(path).sample(frac=1, random_state=seed).to_csv(copy, index=False)
    return copy


def same_rows(first: pd.DataFrame, second: pd.DataFrame, *, key: str) -> None:
    """Every column equal, bitwise, once ``second``'s rows are put in ``first``'s order by ``key``, the column that
    names them."""
    second = second.set_index(key).loc[first[key]].reset_index()
    pd.testing.assert_frame_equal(first, second[first.columns], check_exact=True)


def test_one_thread_and_two_give_the_same_ranking_bitwise(tmp_path):
    write_example(out=tmp_path / "animals.csv", samples=200, flipped=0.2, seed=2)
    one, said_one = find_issues(tmp_path / "animals.csv", tmp_path / "one.csv", *TABLE, *FAST, threads=1)
    two, said_two = find_issues(tmp_path / "animals.csv", tmp_path / "two.csv", *TABLE, *FAST, threads=2)
    pd.testing.assert_frame_equal(one, two, check_exact=True)  # label_score to the last bit, the list, the ranks
    assert (tmp_path / "one.review.md").read_text() == (tmp_path / "two.review.md").read_text()
    assert (said_one["computed_with"]["threads"], said_two["computed_with"]["threads"]) == (1, 2)
    assert said_two["computed_with"]["fitting_threads"] == 1 and said_two["computed_with"]["device"] in ("cpu", "cuda")


def test_a_shuffled_file_gives_the_same_rows(tmp_path):
    write_example(out=tmp_path / "animals.csv", samples=200, flipped=0.2, seed=2)
    first, said = find_issues(tmp_path / "animals.csv", tmp_path / "first.csv", *TABLE, *FAST)
    copy = shuffled(tmp_path / "animals.csv", seed=5)
    second, said_again = find_issues(copy, tmp_path / "second.csv", *TABLE, *FAST)
    assert first["is_label_issue"].any() and not first["id"].equals(second["id"])  # a list, of rows moved
    same_rows(first, second, key="id")
    assert said["data_sha256"] == said_again["data_sha256"]  # the same rows, in any order
    sheets = [(tmp_path / f"{name}.review.md").read_text().splitlines() for name in ("first", "second")]
    assert sheets[0][1:] == sheets[1][1:]  # but for the title, which names the file


def test_images_side_by_side_in_processes_rank_as_in_one_on_a_shuffled_file(tmp_path):
    """Images from scratch on a CPU: one thread trains the fold models in one process, ``--jobs 2`` in two, each on
    one thread; a shuffled CSV of the paths, so trained, ranks as the file in order does in one process."""
    pd.DataFrame(write_images(tmp_path, seed=1), columns=["path", "label"]).to_csv(tmp_path / "images.csv", index=False)
    options = ["--folds", "2", "--repetitions", "2", "--epochs", "1"]
    first, said_first = find_issues(tmp_path / "images.csv", tmp_path / "first.csv", *options, threads=1)
    copy = shuffled(tmp_path / "images.csv", seed=3)
    second, said = find_issues(copy, tmp_path / "second.csv", *options, "--jobs", "2", threads=1)
    same_rows(first, second, key="path")
    if said["computed_with"]["device"] == "cpu":
        assert (said_first["computed_with"]["fold_processes"], said["computed_with"]["fold_processes"]) == (1, 2)
    assert set(first["given_label"]) == set(CLASSES)


def tied_probabilities(*, num_samples: int = 120, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(M = 2, N, Q = 3) probabilities and (N,) labels in which pairs of samples tie in every score (the same
    probability of their label, the rival's the same) without being the same row."""
    rng = np.random.default_rng(seed)
    given = rng.integers(0, 3, size=num_samples)
    stack = rng.dirichlet(np.ones(3), size=(2, num_samples))
    for first in range(0, num_samples, 8):  # sample first + 1: sample first's probabilities, the other two swapped
        given[first + 1] = given[first]
        others = [c for c in range(3) if c != given[first]]
        stack[:, first + 1] = stack[:, first]
        stack[:, first + 1, others] = stack[:, first, others[::-1]]
    return stack, given


def test_the_out_of_fold_step_ranks_shuffled_files_alike_ties_included(tmp_path):
    """The workflow's ``select_out_of_fold`` step (and ``--probabilities``): ties in the ranking go by the samples'
    content, not their rows; the file reversed reverses every tie's rows."""
    stack, given = tied_probabilities()
    tables = {}
    for name, order in (("in order", np.arange(len(given))), ("reversed", np.arange(len(given))[::-1])):
        folder = tmp_path / name.replace(" ", "-")
        folder.mkdir()
        np.save(folder / "oof.npy", stack[:, order])
        pd.DataFrame({"id": [f"S{i:03d}" for i in order], "label": given[order]}).to_csv(folder / "labels.csv")
        select_out_of_fold(
            probabilities=folder / "oof.npy",
            labels=folder / "labels.csv",
            true_labels=None,
            settings={"threshold": 2, "label_column": "label", "id_column": "id"},
            table=folder / "issues.parquet",
            metrics=folder / "metrics.json",
            provenance_fields={"name": "tied", "code": "0123456789abcdef"},
        )
        tables[name] = read_table(folder / "issues.parquet")[0]
    assert tables["in order"]["label_score"].duplicated().any()  # the ties are there
    same_rows(tables["in order"], tables["reversed"], key="id")
    ranked = tables["in order"].sort_values("rank")
    listed = ranked.loc[~ranked["kept"], "is_label_issue"]
    assert listed.any() and listed.head(listed.sum()).all()  # the list: the ranking's first not kept, ties too


def write_seed(folder: Path, *, stack: np.ndarray, given: np.ndarray, order: np.ndarray) -> dict:
    """A prepared dataset of texts with ids, its labels (``real``, seed 1) and one fold table (K = 1) per iteration of
    ``stack`` (M, N, Q), the samples in ``order``: the inputs of the workflow's label-issue steps."""
    folder.mkdir()
    texts, ids = np.array([f"text {i}" for i in range(len(given))]), np.array([f"S{i:03d}" for i in order])
    dataset = Dataset(texts[order], given[order], texts[:0], given[:0], ("a", "b", "c"), modality="text")
    save_dataset(dataclasses.replace(dataset, sample_ids=ids, id_column="id"), folder / "data.npz")
    samples = {"sample": np.arange(len(given)), "given": given[order]}
    write_table(
        pd.DataFrame({**samples, "true": -1}), folder / "labels.parquet", metadata={"num_classes": 3, "seed": 1}
    )
    predictions = []
    for m, iteration in enumerate(stack[:, order], start=1):
        frame = pd.DataFrame({**samples, "predicted": iteration.argmax(axis=1)})
        frame[[f"prob_{c}" for c in range(3)]] = iteration.astype(np.float32)
        predictions.append(folder / f"m{m}.parquet")
        write_table(frame, predictions[-1], metadata={"seed": 1, "m": m, "k": 1, "K": 1})
    return {"dataset": folder / "data.npz", "predictions": predictions, "labels": [folder / "labels.parquet"]}


def test_the_label_issue_steps_rank_shuffled_rows_alike_ties_included(tmp_path):
    """The workflow's ``label_issues`` and ``merged_label_issues`` steps (one function): the same samples in another
    order get the same rows, ties in the ranking and at the review list's end included, and the same summary."""
    stack, given = tied_probabilities()
    tables = {}
    for name, order in (("in order", np.arange(len(given))), ("reversed", np.arange(len(given))[::-1])):
        folder = tmp_path / name.replace(" ", "-")
        write_label_issues(
            **write_seed(folder, stack=stack, given=given, order=order),
            threshold=2,
            top=5,
            table=folder / "issues.parquet",
            summary=folder / "summary.md",
            provenance_fields={"dataset": "texts", "noise": "real", "seed": "1"},
        )
        tables[name] = read_table(folder / "issues.parquet")[0]
    assert tables["in order"]["label_score"].duplicated().any() and tables["in order"]["is_label_issue"].any()
    same_rows(tables["in order"], tables["reversed"], key="id")
    summaries = [(tmp_path / folder / "summary.md").read_text() for folder in ("in-order", "reversed")]
    assert summaries[0] == summaries[1]


#: The review list of the label-issue steps (:func:`enkcvs.labelissues.oof.select`) in a process of its own, whose
#: thread pools its environment sizes: probabilities and labels from the .npz file argv[1], the outcome to argv[2].
SELECT = """
import sys
import numpy as np
from enkcvs.labelissues.oof import select

with np.load(sys.argv[1]) as inputs:
    result = select(probabilities=inputs["stack"], labels=inputs["given"])
np.savez(sys.argv[2], quality=result.label_quality, listed=result.in_review_list, rank=result.rank)
"""


def test_the_label_issue_steps_give_the_same_list_on_thread_pools_of_one_and_two(tmp_path):
    """The label-issue steps fit nothing (numpy, scipy and cleanlab): the same list, bitwise, with their BLAS and
    OpenMP pools at one thread as at two."""
    stack, given = tied_probabilities(num_samples=20000)
    np.savez(tmp_path / "inputs.npz", stack=stack, given=given)
    names = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
    for threads in ("1", "2"):
        env = {**os.environ, **dict.fromkeys(names, threads)}
        command = [sys.executable, "-c", SELECT, tmp_path / "inputs.npz", tmp_path / f"threads{threads}.npz"]
        subprocess.run(command, check=True, env=env)
    with np.load(tmp_path / "threads1.npz") as one, np.load(tmp_path / "threads2.npz") as two:
        assert one["listed"].any() and all(np.array_equal(one[name], two[name]) for name in one.files)
