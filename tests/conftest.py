"""Seeded tiny factories shared by the unit tests.

Every factory takes an explicit seed so each test is reproducible and independent of test order. Nothing here reads
outside the repository. Factories are exposed as fixtures that return callables (``make_labels(seed=..., ...)``), so
tests can build several variants without importing from ``conftest``.
"""

import atexit
import functools
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Sequence
from pathlib import Path

import filelock
import numpy as np
import pandas as pd
import pytest
import yaml

# The library's caches (texts' embeddings) and torch.compile's kernels of this test session, Snakemake's jobs and the
# benchmarks' subprocesses included, stay out of ~/.cache and /tmp/torchinductor_*, and go with the session: a CI
# machine's disk is not ours to fill.
_SESSION_CACHE = tempfile.mkdtemp(prefix="enkcvs-test-cache-")
os.environ["ENKCVS_CACHE_DIR"] = _SESSION_CACHE
os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(_SESSION_CACHE, "torchinductor")
atexit.register(shutil.rmtree, _SESSION_CACHE, ignore_errors=True)
# Workers side by side (pytest-xdist) share the cores: each takes its share of threads rather than all of them, so
# that the intra-op thread pools of torch and BLAS do not fight over cores. Training jobs set their own from Snakemake.
if workers := os.environ.get("PYTEST_XDIST_WORKER_COUNT"):
    os.environ.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // int(workers))))


def _make_labels(*, seed: int, n_per_class: int | Sequence[int], num_classes: int) -> np.ndarray:
    """Shuffled int64 labels with exactly ``n_per_class`` samples of each class (an int, or one count per class)."""
    counts = [n_per_class] * num_classes if np.isscalar(n_per_class) else list(n_per_class)
    assert len(counts) == num_classes
    labels = np.repeat(np.arange(num_classes, dtype=np.int64), counts)
    return np.random.default_rng(seed).permutation(labels)


def _make_prediction_folds(*, seed: int, num_samples: int, num_folds: int, num_classes: int) -> list[pd.DataFrame]:
    """K held-out prediction tables (``sample``, ``given``, ``predicted``, ``prob_*``) covering 0..N-1 once, each
    fold's rows in shuffled order, as one NKCVS iteration would write them."""
    rng = np.random.default_rng(seed)
    given = rng.integers(0, num_classes, size=num_samples)
    probabilities = rng.dirichlet(np.ones(num_classes), size=num_samples)
    fold_of = rng.permutation(np.arange(num_samples) % num_folds)
    tables = []
    for fold in range(num_folds):
        members = rng.permutation(np.flatnonzero(fold_of == fold))
        table = pd.DataFrame(
            {"sample": members, "given": given[members], "predicted": probabilities[members].argmax(axis=1)}
        )
        for c in range(num_classes):
            table[f"prob_{c}"] = probabilities[members, c]
        tables.append(table)
    return tables


def _make_separable_images(
    *, seed: int, num_samples: int, num_classes: int, shape: tuple[int, int, int] = (1, 8, 8)
) -> tuple[np.ndarray, np.ndarray]:
    """Float32 images (N, C, H, W) whose class c lights up a distinct pixel block, plus small noise: linearly
    separable, so a tiny model must fit them."""
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.arange(num_samples) % num_classes).astype(np.int64)
    x = rng.normal(0.0, 0.1, size=(num_samples, *shape)).astype(np.float32)
    flat = x.reshape(num_samples, -1)
    block = flat.shape[1] // num_classes
    for c in range(num_classes):
        flat[labels == c, c * block : (c + 1) * block] += 1.0
    return flat.reshape(num_samples, *shape), labels


@pytest.fixture
def make_labels():
    """Factory: ``make_labels(seed=, n_per_class=, num_classes=)`` -> shuffled labels with exact class counts."""
    return _make_labels


@pytest.fixture
def make_prediction_folds():
    """Factory: ``make_prediction_folds(seed=, num_samples=, num_folds=, num_classes=)`` -> K prediction tables."""
    return _make_prediction_folds


@pytest.fixture
def make_separable_images():
    """Factory: ``make_separable_images(seed=, num_samples=, num_classes=)`` -> (x (N,1,8,8), labels (N,))."""
    return _make_separable_images


REPO = Path(__file__).resolve().parents[1]
TINY_CONFIG = REPO / "tests" / "config" / "tiny.yaml"
IMPORT_PROBE = REPO / "tests" / "import_probe"  # its sitecustomize.py logs the packages each job imports
# conda-forge names of PyPI packages where they differ
CONDA_NAMES = {"torch": "pytorch"}


def _run_snakemake(
    workdir: Path, *args: str, config: Path = TINY_CONFIG, import_log: Path | None = None, timeout: float | None = None
) -> subprocess.CompletedProcess:
    """Run Snakemake on the repository's workflow in ``workdir`` (2 cores unless ``args`` say otherwise), killed
    after ``timeout`` seconds if given; with ``import_log``, every Python process of the run logs in a folder of its
    own there the third-party packages it imports, and once the run ends its rules' env files must list them all
    (:func:`_check_envs_cover_imports`), so each workflow run of the suite is checked by the test that started it."""
    command = [
        sys.executable,
        "-m",
        "snakemake",
        "-s",
        str(REPO / "workflow" / "Snakefile"),
        "-d",
        str(workdir),
        "--configfile",
        str(config),
        "--cores",
        "2",
        *args,
    ]
    env = run_log = None  # None: the caller's environment, unchanged
    if import_log is not None:
        run_log = Path(tempfile.mkdtemp(dir=import_log))
        python_path = [str(IMPORT_PROBE), *filter(None, [os.environ.get("PYTHONPATH")])]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(python_path), "ENKCVS_IMPORT_LOG": str(run_log)}
    done = subprocess.run(command, check=False, capture_output=True, text=True, cwd=workdir, env=env, timeout=timeout)
    if run_log is not None:
        _check_envs_cover_imports(run_log)
    return done


def _session_folder(tmp_path_factory) -> Path:
    """The temporary folder of the whole session: shared by its workers when pytest-xdist runs tests side by side
    (each worker's own folder lies inside it), the session's own folder otherwise."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def import_log(tmp_path_factory) -> Path:
    """The folder where every workflow run of this test session, whichever worker started it, logs its jobs' imports
    (one JSON file a process)."""
    folder = _session_folder(tmp_path_factory) / "import_log"
    folder.mkdir(exist_ok=True)
    return folder


@pytest.fixture(scope="session")
def run_snakemake(import_log):
    """``run_snakemake(workdir, *args, config=...)`` -> CompletedProcess."""
    return functools.partial(_run_snakemake, import_log=import_log)


def _rule_environments() -> dict[str, tuple[Path, Path | None]]:
    """Every rule of workflow/rules/*.smk (those an ``if`` defines too) -> (its rules file, the env file its
    ``conda:`` names, or None)."""
    environments = {}
    for rules_file in sorted((REPO / "workflow" / "rules").glob("*.smk")):
        blocks = re.findall(
            r"^[ \t]*rule (\w+):(.*?)(?=^[ \t]*rule |\Z)", rules_file.read_text(), flags=re.DOTALL | re.MULTILINE
        )
        for name, body in blocks:
            environments[name] = (rules_file, _conda(body, rules_file=rules_file))
    return environments


def _conda(body: str, *, rules_file: Path) -> Path | None:
    """The env file a rule's ``body`` names under ``conda:``, or None."""
    match = re.search(r"conda:\s*\n\s*\"([^\"]+)\"", body)
    return (rules_file.parent / match[1]).resolve() if match else None


@pytest.fixture(scope="session")
def conda_names() -> dict[str, str]:
    """PyPI name -> conda-forge name, where they differ."""
    return CONDA_NAMES


@pytest.fixture(scope="session")
def rule_environments() -> dict[str, tuple[Path, Path | None]]:
    """rule -> (its rules file, the env file its ``conda:`` directive names, or None)."""
    return _rule_environments()


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _env_packages(env: Path) -> set[str]:
    """The (normalised) names of every package an env file lists, conda and pip."""
    dependencies = yaml.safe_load(env.read_text())["dependencies"]
    requirements = [d for d in dependencies if isinstance(d, str)]
    requirements += [r for d in dependencies if isinstance(d, dict) for r in d.get("pip") or []]
    return {_normalise(re.split(r"[\s=<>!~\[]", r.strip(), maxsplit=1)[0]) for r in requirements}


@functools.cache
def _packages_distributions() -> dict[str, list[str]]:
    return importlib.metadata.packages_distributions()


def _check_envs_cover_imports(import_log: Path) -> dict[str, set[str]]:
    """Read the import log; assert that each rule's env file lists (under its conda name, or in its pip section)
    the distribution of every third-party module the rule's jobs imported. Returns rule -> imported modules."""
    imported: dict[str, set[str]] = {}
    for path in sorted(import_log.rglob("*.json")):
        record = json.loads(path.read_text())
        if record["rule"] is not None:  # not a job (Snakemake itself, say): its env is the test's own
            imported.setdefault(record["rule"], set()).update(record["modules"])
    distributions = _packages_distributions()
    environments = _rule_environments()
    problems = []
    for rule, modules in sorted(imported.items()):
        env = environments.get(rule, (None, None))[1]
        if env is None:
            problems.append(f"rule {rule}: no rule of that name with a conda env in workflow/rules/*.smk")
            continue
        listed = _env_packages(env)
        for module in sorted(modules):
            names = distributions.get(module)
            if not names:
                problems.append(f"rule {rule} imports {module}, which no installed distribution provides")
                continue
            conda = {_normalise(CONDA_NAMES.get(_normalise(name), name)) for name in names}
            if not conda & listed:
                name = names[0]
                problems.append(
                    f"rule {rule} imports {module}, but {env.relative_to(REPO)} lists none of {sorted(conda)}: add "
                    f"'{CONDA_NAMES.get(_normalise(name), _normalise(name))} ={importlib.metadata.version(name)}' "
                    "to its dependencies (or its pip: section if conda-forge lacks it), pinned as in pyproject.toml"
                )
    assert not problems, "env files miss packages their rules import:\n  " + "\n  ".join(problems)
    return imported


@pytest.fixture(scope="session")
def assert_envs_cover_imports(import_log):
    """``assert_envs_cover_imports(folder=<the session's import log>)``: assert that every rule's env file lists each
    third-party package its jobs imported in the workflow runs logged there (``tests/import_probe``); returns rule
    -> imported modules. Each run is also checked as it ends, by the test that started it."""
    return lambda folder=import_log: _check_envs_cover_imports(folder)


@pytest.fixture(scope="session")
def tiny_config() -> Path:
    return TINY_CONFIG


def _result_files(workdir: Path) -> dict[str, bytes]:
    """Every data, noise, fold, selection, final and report file but the training jobs' measured time and memory
    (``benchmarks/``, ``report/resources.*``), which no two runs share."""
    files = {}
    for path in sorted((workdir / "results").rglob("*")):
        measured = "benchmarks" in path.parts or path.stem == "resources"
        if path.is_file() and path.suffix in {".npz", ".parquet", ".json", ".csv", ".md", ".tex"} and not measured:
            files[str(path.relative_to(workdir))] = path.read_bytes()
    return files


@pytest.fixture(scope="session")
def result_files():
    """``result_files(workdir)`` -> every result file of a working directory by path, bytes (what two runs that
    should agree must agree on)."""
    return _result_files


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory, run_snakemake) -> Path:
    """The tiny config run once to completion (a working directory with results/); tests only read it. With workers
    side by side, the first to need it runs it and the others wait for that run rather than repeat it."""
    folder = _session_folder(tmp_path_factory)
    workdir, finished = folder / "tiny", folder / "tiny.finished"
    with filelock.FileLock(folder / "tiny.lock"):
        if not finished.exists():
            shutil.rmtree(workdir, ignore_errors=True)  # a worker's failed run: try again, and fail on its own log
            workdir.mkdir()
            done = run_snakemake(workdir)
            assert done.returncode == 0, done.stderr[-4000:]
            finished.touch()
    return workdir


@pytest.fixture
def tiny_inputs(tmp_path):
    """A prepared seeded 3-class dataset of 60 (1, 4, 4) images (``data.npz``) with symmetric noise
    (``labels.parquet``, seed 3) in ``tmp_path``."""
    from enkcvs.data.datasets import Dataset, save_dataset
    from enkcvs.pipeline.steps.noise import make_noisy_labels

    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(3), 20)
    x = (rng.normal(size=(60, 1, 4, 4)) + y[:, None, None, None]).astype(np.float32)
    save_dataset(Dataset(x, y, x[:9], y[:9], ("a", "b", "c")), tmp_path / "data.npz")
    make_noisy_labels(
        dataset=tmp_path / "data.npz",
        noise="sym0.2",
        seed=3,
        asymmetric_map=None,
        code="test",
        output=tmp_path / "labels.parquet",
    )
    return tmp_path


@pytest.fixture
def single_thread():
    """Bit-identical CPU runs need a fixed thread count; restore the caller's afterwards."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _stand_in_workflow(folder: Path, *, fail_first: bool = False) -> Path:
    """The real workflow/run.sh in ``folder`` around a stand-in snakemake (returned): each invocation appends its
    arguments to invocations.txt and writes a Snakemake log of a 30 s invocation and a report, or fails the first time
    with ``fail_first``; the record's start (as run_and_record writes it) predates every invocation."""
    (folder / "workflow").mkdir()
    shutil.copy(REPO / "workflow" / "run.sh", folder / "workflow" / "run.sh")
    fake = folder / "snakemake"
    fake.write_text(
        textwrap.dedent(f"""\
        #!/usr/bin/env bash
        case "$*" in
            *-n*) echo "total 5"; exit 0;;
            *--unlock*) exit 0;;
        esac
        echo "$*" >> invocations.txt
        mkdir -p .snakemake/log results/report
        invocation=$(ls .snakemake/log | wc -l)
        printf '[Tue Nov 24 0%d:00:00 2026]\\n[Tue Nov 24 0%d:00:30 2026]\\n' $((invocation + 1)) $((invocation + 1)) \\
            > .snakemake/log/2026-11-24T0$((invocation + 1))0000.000000.snakemake.log
        {'[ "$invocation" -gt 0 ] || exit 1  # the first invocation is killed' if fail_first else ""}
        printf 'a\\n1\\n' > results/report/table2.csv
        """)
    )
    fake.chmod(0o755)
    (folder / "config.yaml").write_text("seeds: [1]\n")
    since = folder / ".snakemake" / "recorded" / "demo.since"
    since.parent.mkdir(parents=True)
    since.write_text("2026-11-24T00:00:00\n")
    return fake


@pytest.fixture
def stand_in_workflow():
    return _stand_in_workflow


def _copy_of_the_repository(folder: Path) -> Path:
    """The files of a clone that the workflow reads (workflow, package source, envs, configs, profiles), copied into
    ``folder``: a checkout a test may edit."""
    for part in ("workflow", "src", "envs", "config", "profiles", ".test"):
        shutil.copytree(REPO / part, folder / part, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    return folder


@pytest.fixture
def repository_copy(tmp_path) -> Path:
    """A copy of the repository's workflow and package source in ``tmp_path / "clone"`` that the test may edit."""
    return _copy_of_the_repository(tmp_path / "clone")


def _commit_all(folder: Path) -> str:
    """``folder`` made a git repository of one commit holding its files; returns the commit."""
    git = ["git", "-C", str(folder), "-c", "user.name=test", "-c", "user.email=test@example.org"]
    subprocess.run([*git, "init", "--quiet"], check=True)
    subprocess.run([*git, "add", "--all"], check=True)
    subprocess.run([*git, "commit", "--quiet", "-m", "the deployed version"], check=True)
    return subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture(scope="session")
def commit_all():
    """``commit_all(folder)`` -> the commit of a new git repository in ``folder`` holding its files (a repository
    at a commit, as a module may be deployed from)."""
    return _commit_all


def _write_module_snakefile(folder: Path, *, snakefile: Path, configfile: str) -> Path:
    """A project's ``Snakefile`` in ``folder`` that uses the workflow at ``snakefile`` as a module with the config
    ``configfile`` (as a user's project would); returns ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "Snakefile").write_text(
        f'configfile: "{configfile}"\n\n\n'
        f'module enkcvs:\n    snakefile:\n        "{snakefile}"\n    config:\n        config\n\n\n'
        "use rule * from enkcvs\n"
    )
    return folder


@pytest.fixture(scope="session")
def write_module_snakefile():
    """``write_module_snakefile(folder, snakefile=..., configfile=...)`` -> the folder of a project using the
    workflow as a module."""
    return _write_module_snakefile
