"""Self-describing, atomically written artifacts (parquet with provenance, JSON) and the dataset ``.npz``."""

import json
import os
import stat
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from enkcvs.data.datasets import Dataset, load_dataset, save_dataset
from enkcvs.data.sources import load_source
from enkcvs.io import (
    atomic_path,
    git_state,
    install_command,
    provenance,
    read_json,
    read_table,
    write_json,
    write_table,
)


def _frame():
    return pd.DataFrame(
        {
            "sample": np.arange(4, dtype=np.int64),
            "given": np.array([2, 0, 1, 1], dtype=np.int64),
            "selected": [True, False, True, False],
            "beta": np.array([0.0, 0.25, 0.5, 1.0], dtype=np.float64),
            "name": ["a", "b", "c", "d"],
        }
    )


def test_table_round_trip_keeps_frame_and_metadata(tmp_path):
    metadata = {"seed": 3, "noise": "sym0.2", "recipe": {"lr": 0.01, "milestones": [10, 30]}, "best_epoch": None}
    path = tmp_path / "deep" / "dir" / "table.parquet"  # parents are created
    write_table(_frame(), path, metadata=metadata)
    frame, meta = read_table(path)
    pd.testing.assert_frame_equal(frame, _frame())
    assert meta == metadata


def test_table_without_provenance_reads_empty_metadata(tmp_path):
    path = tmp_path / "plain.parquet"
    _frame().to_parquet(path)
    assert read_table(path)[1] == {}


def test_provenance_adds_package_versions():
    meta = provenance(seed=1)
    assert meta["seed"] == 1
    assert {"python", "numpy", "pandas", "pyarrow"} <= set(meta["versions"])
    json.dumps(meta)  # must be storable as JSON metadata


def test_atomic_path_leaves_nothing_when_the_block_raises(tmp_path):
    target = tmp_path / "out.json"
    with pytest.raises(RuntimeError, match="boom"):
        with atomic_path(target) as tmp:
            tmp.write_text("partial")
            raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []  # neither the target nor the temporary file


def test_atomic_path_keeps_the_old_file_when_the_block_raises(tmp_path):
    target = tmp_path / "out.json"
    target.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("new")
            raise RuntimeError
    assert target.read_text() == "old"
    assert list(tmp_path.iterdir()) == [target]


def test_atomic_path_renames_on_success(tmp_path):
    target = tmp_path / "out.txt"
    with atomic_path(target) as tmp:
        assert tmp != target and tmp.parent == target.parent  # same file system: the rename is atomic
        tmp.write_text("done")
        assert not target.exists()  # nothing visible until the block succeeds
    assert target.read_text() == "done"
    assert list(tmp_path.iterdir()) == [target]


def test_atomic_outputs_respect_the_umask(tmp_path):
    """Artifacts should get ordinary permissions (0o666 & ~umask), not mkstemp's private 0o600."""
    old = os.umask(0o022)
    try:
        write_json({"a": 1}, tmp_path / "out.json")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "out.json").stat().st_mode) == 0o644


def test_write_json_round_trip_sorted_and_newline_terminated(tmp_path):
    payload = {"b": [1, 2.5], "a": {"z": None, "y": "text"}}
    path = tmp_path / "sub" / "metrics.json"
    write_json(payload, path)
    assert read_json(path) == payload
    text = path.read_text()
    assert text.endswith("}\n") and text.index('"a"') < text.index('"b"')
    assert list(path.parent.iterdir()) == [path]


def test_dataset_npz_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    dataset = Dataset(
        x_train=rng.uniform(size=(6, 1, 8, 8)).astype(np.float32),
        y_train=np.arange(6, dtype=np.int64) % 3,
        x_test=rng.uniform(size=(3, 1, 8, 8)).astype(np.float32),
        y_test=np.arange(3, dtype=np.int64),
        class_names=("zero", "one", "two"),
    )
    save_dataset(dataset, tmp_path / "d.npz")
    loaded = load_dataset(tmp_path / "d.npz")
    for field in ("x_train", "y_train", "x_test", "y_test"):
        np.testing.assert_array_equal(getattr(loaded, field), getattr(dataset, field))
        assert getattr(loaded, field).dtype == getattr(dataset, field).dtype
    assert loaded.class_names == dataset.class_names and loaded.num_classes == 3


def test_load_source_rejects_unknown_names_and_options():
    with pytest.raises(KeyError, match="unknown dataset source 'cifar1000'"):
        load_source("cifar1000")
    with pytest.raises(TypeError, match=r"source 'sklearn_digits' takes the options \[\], not \['root'\]"):
        load_source("sklearn_digits", root="x")


def test_a_checkout_reads_as_changed_by_its_code_and_not_by_what_runs_write_under_results(tmp_path):
    """A record that removed a run's tracked files under results/ left the next record's commit reading "dirty"."""
    for path in ("code.py", "results/recorded/run/manifest.json", "benchmarks/results/old/table.md"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("one\n")
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "start"], check=True)
    state = git_state.__wrapped__  # uncached: the checkout changes between calls
    assert state(root=tmp_path)["dirty"] is False
    (tmp_path / "results/recorded/run/manifest.json").unlink()
    (tmp_path / "benchmarks/results/old/table.md").write_text("two\n")
    assert state(root=tmp_path)["dirty"] is False
    (tmp_path / "code.py").write_text("two\n")
    assert state(root=tmp_path)["dirty"] is True


def test_a_copy_without_git_names_the_commit_it_is_told(tmp_path):
    """A copy of the working tree without .git (rsync, a tarball on a cluster node): ENKCVS_GIT_COMMIT names the
    commit it is a copy of, its state unknown."""
    probe = "from pathlib import Path; from enkcvs.io import git_state; print(git_state(root=Path('.')))"
    told = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "ENKCVS_GIT_COMMIT": "abc1234"},
    ).stdout
    assert told.strip() == "{'commit': 'abc1234', 'dirty': None}"
    assert git_state(root=tmp_path) == {"commit": "unknown"}


@pytest.mark.parametrize(
    ("recorded", "command"),
    [
        (
            '{"dir_info": {"editable": true}, "url": "file:///home/me/enkcvs"}',
            "pip install -e '/home/me/enkcvs[train]'",
        ),
        ('{"dir_info": {}, "url": "file:///tmp/enkcvs-0.1.0.tar.gz"}', "pip install '/tmp/enkcvs-0.1.0.tar.gz[train]'"),
        (
            '{"vcs_info": {"vcs": "git", "commit_id": "abc123"}, "url": "https://example.org/enkcvs.git"}',
            "pip install 'enkcvs[train] @ git+https://example.org/enkcvs.git@abc123'",
        ),
        (None, "pip install 'enkcvs[train]'"),
    ],
)
def test_the_install_command_adds_an_extra_from_where_the_package_came(recorded, command, monkeypatch):
    """A missing extra is fixed from the checkout, archive or repository pip installed the package from (PEP 610);
    the registry's name only where pip recorded no origin (a registry install)."""
    import enkcvs.io

    class Installed:
        def read_text(self, name):
            return recorded if name == "direct_url.json" else None

    monkeypatch.setattr(enkcvs.io, "distribution", lambda name: Installed())
    assert install_command(extras="train") == command


def test_an_install_from_a_repository_commit_records_that_commit(tmp_path, monkeypatch):
    """Installed from a VCS URL (no checkout beside the library), the provenance names the commit pip recorded."""
    import enkcvs.io

    class Installed:
        def read_text(self, name):
            return '{"vcs_info": {"vcs": "git", "commit_id": "abc123"}, "url": "https://example.org/enkcvs.git"}'

    monkeypatch.setattr(enkcvs.io, "__file__", str(tmp_path / "site-packages" / "enkcvs" / "io.py"))
    monkeypatch.setattr(enkcvs.io, "distribution", lambda name: Installed())
    monkeypatch.delenv(enkcvs.io.COMMIT_VARIABLE, raising=False)
    git_state.cache_clear()
    try:
        assert git_state() == {"commit": "abc123", "dirty": None}
        assert git_state(root=tmp_path) == {"commit": "unknown"}  # a working directory is not the library's install
    finally:
        git_state.cache_clear()
