"""The K = 10, M = 5 cells of the full-MNIST row of Table 2, recorded in order at one commit
(``python -m enkcvs.runs cells``, ``make record-cells``).

A cell is ``config/experiments/mnist-full-k10.yaml`` at one of the paper's full-MNIST noise settings
(:data:`SETTINGS`), with three seeds (:data:`SEEDS`), the paper's four methods (:data:`METHODS`) and fp32 training
(``bf16: false``). The cell files are written here (:func:`write_cells`), each headed by its expected time on one GPU,
computed from the rate that a recorded run measured on one (:func:`gpu_rate`, :func:`expected_seconds`). Each cell is
recorded as ``results/recorded/mnist-k10-<file stem>`` by :func:`enkcvs.recording.run.run_and_record`
(:func:`record_cells`), and a record there joins the README's row (:func:`enkcvs.report.claims.mnist_row`).
"""

import json
import math
import os
import re
import subprocess
import textwrap
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from enkcvs.io import PathLike, git_state
from enkcvs.recording.provenance import RUN_HOME
from enkcvs.recording.run import run_and_record

#: The config the cells slice: the data, recipe and selection of the row at K = 10, M = 5, t = 2.
PARENT = "config/experiments/mnist-full-k10.yaml"
#: The folder of the cells, one config a noise setting, in the order they are recorded.
CELLS = "config/experiments/cells"
#: The prefix of a cell's record under ``results/recorded``: ``mnist-k10-<file stem>``.
RECORD_PREFIX = "mnist-k10-"
#: The paper's full-MNIST noise settings of Table 2, in the order the row needs them (the headline cell first).
SETTINGS = ("asym0.4", "sym0.8", "asym0.2", "sym0.0", "sym0.2", "sym0.4", "sym0.6")
#: The seeds of every cell.
SEEDS = (1, 2, 3)
#: The paper's four methods of Table 2.
METHODS = ("ce", "coteaching", "sl", "enkcvs")
#: The baselines' options: SL on its authors' schedule, Co-teaching forgetting at the actual noise rate.
BASELINES = {
    "sl": {"alpha": 0.01, "beta": 1.0, "schedule": "authors"},
    "coteaching": {"forget_rate": "actual", "warmup_epochs": 10},
}
#: The recorded run whose GPU rate times the cells.
RATE_RECORD = "mnist-full-k10"
#: Training jobs side by side on the GPU as that record ran them (``--resources gpu=12``, the header of
#: :data:`PARENT`), and as the cells are recorded by default.
GPU_JOBS = 12
#: The most a cell may be expected to take on one GPU.
LIMIT_SECONDS = 3600.0
#: The Snakemake profile the cells are recorded with by default.
PROFILE = "profiles/gpu-node"


@dataclass(frozen=True)
class GpuRate:
    """What a recorded run's GPU part cost: ``models`` trained in ``seconds`` of wall time on ``gpu``, with
    ``gpu_jobs`` training jobs side by side, ``resumed`` of them from epoch checkpoints an earlier machine left,
    ``bf16`` whether they trained in bf16 (``auto``, which a GPU that supports it takes as true)."""

    record: str
    gpu: str
    models: int
    seconds: float
    resumed: int
    gpu_jobs: int
    bf16: bool

    @property
    def per_model(self) -> float:
        """Seconds of the GPU's wall time a model trained."""
        return self.seconds / self.models


def gpu_rate(*, record: PathLike, gpu_jobs: int = GPU_JOBS) -> GpuRate:
    """The GPU part of a recorded run that a CPU began and a GPU finished: its Snakemake invocations after the last
    save made on a machine without a GPU (``carried`` in its ``provenance.json``), and the training jobs of its
    ``resources.csv`` less those done at that save.

    Parameters
    ----------
    record : path
        The record's folder (``results/recorded/mnist-full-k10``).
    gpu_jobs : int
        The training jobs it ran side by side on the GPU (the record keeps its profile's path, not its content).

    Returns
    -------
    GpuRate
        The models trained on the GPU and the seconds they took.
    """
    record = Path(record)
    facts = json.loads((record / "provenance.json").read_text())
    on_cpu = [save for save in facts.get("carried", []) if not save["machine"].get("gpus")]
    if not facts["machine"].get("gpus") or not on_cpu:
        raise ValueError(f"{record} was not begun on a CPU and finished on a GPU: no GPU part to time")
    before = set(on_cpu[-1]["invocations"])
    seconds = sum(run["seconds"] for run in facts["invocations"] if run["log"] not in before)
    resources = pd.read_csv(record / "resources.csv")
    trained = int(resources.loc[resources["rule"].str.startswith("train_"), "jobs"].sum())
    recipes = [dataset["recipe"] for dataset in yaml.safe_load(facts["config"])["datasets"].values()]
    return GpuRate(
        record=record.name,
        gpu=facts["machine"]["gpus"][0],
        models=trained - int(on_cpu[-1]["training_jobs"]),
        seconds=float(seconds),
        resumed=int(on_cpu[-1]["in_flight_checkpoints"]),
        gpu_jobs=gpu_jobs,
        bf16=all(recipe.get("bf16", "auto") is not False for recipe in recipes),
    )


def models_trained(*, config: dict[str, Any]) -> int:
    """The models a cell's config trains: M x K fold models and a final model of each method per noise setting and
    seed, Co-teaching's two networks counted as two."""
    K, M = config["selection"]["K"], config["selection"]["M"]
    finals = len(config["methods"]) + ("coteaching" in config["methods"])
    settings = sum(len(dataset["noise"]) for dataset in config["datasets"].values())
    return settings * len(config["seeds"]) * (M * K + finals)


def expected_seconds(*, config: dict[str, Any], rate: GpuRate) -> float:
    """A cell's expected wall time on one GPU: its models (:func:`models_trained`) at the rate's seconds a model,
    a final model counted as a fold model."""
    return models_trained(config=config) * rate.per_model


def cell_config(*, parent: dict[str, Any], noise: str) -> dict[str, Any]:
    """``parent`` at one noise setting, with :data:`SEEDS`, :data:`METHODS` and their :data:`BASELINES`, in fp32."""
    config = json.loads(json.dumps(parent))
    ((name, dataset),) = config["datasets"].items()
    dataset["noise"] = [noise]
    dataset["recipe"]["bf16"] = False
    dataset["baselines"] = json.loads(json.dumps(BASELINES))
    config["seeds"] = list(SEEDS)
    config["methods"] = list(METHODS)
    return {
        **{key: config[key] for key in ("datasets", "seeds", "selection")},
        **{key: value for key, value in config.items() if key not in ("datasets", "seeds", "selection")},
    }


def stem(*, index: int, noise: str) -> str:
    """A cell's file stem: ``01-asym0.4``."""
    return f"{index:02d}-{noise}"


def _minutes(seconds: float) -> int:
    return math.ceil(seconds / 60)


def header(*, index: int, total: int, noise: str, config: dict[str, Any], rate: GpuRate) -> str:
    """A cell file's header: what it trains, its expected time on one GPU and how it is recorded."""
    seconds = expected_seconds(config=config, rate=rate)
    K, M, t = (config["selection"][key] for key in "KMt")
    seeds = config["seeds"]
    folds = len(seeds) * M * K
    precision = (
        "That rate is bf16's: fp32's on a GPU is not measured, so the time is a lower bound."
        if rate.bf16
        else "That rate is fp32's."
    )
    lines = [
        f"Cell {index} of {total} of the full-MNIST row of Table 2 at the paper's K = {K}, M = {M}, t = {t}: "
        f"{PARENT} at {noise}, seeds {', '.join(map(str, seeds[:-1]))} and {seeds[-1]}, the paper's four methods "
        "(CE, Co-teaching forgetting at the actual noise rate, SL on its authors' schedule, E-NKCVS), in fp32 "
        "(bf16: false).",
        f"Expected: at least {_minutes(seconds)} min on one {rate.gpu} with {rate.gpu_jobs} training jobs side by "
        f"side: its {models_trained(config=config)} models ({folds} fold models, then the final ones, Co-teaching's two "
        f"networks as two) at {rate.per_model:.1f} s a model, the rate results/recorded/{rate.record} measured "
        f"there ({rate.models} models in {rate.seconds:.0f} s, {rate.resumed} of them resumed from checkpoints; "
        f"a final model counted as a fold model). {precision}",
        "Recorded with the other cells, in order and at one commit (python -m enkcvs.runs cells):",
        "  make record-cells PROFILE=profiles/gpu-node",
    ]
    # an indented line (the command) is kept whole
    wrapped = [
        [line] if line.startswith(" ") else textwrap.wrap(line, width=118, break_on_hyphens=False) for line in lines
    ]
    return "".join(f"# {line}\n" for group in wrapped for line in group)


def cell_files(*, root: PathLike = ".") -> dict[str, str]:
    """The cells' files as :func:`write_cells` writes them: {file name: text}, from :data:`PARENT` and the rate of
    :data:`RATE_RECORD`.

    Raises ``ValueError`` where a cell is expected to take longer than :data:`LIMIT_SECONDS` (to be split by seeds).
    """
    root = Path(root)
    parent = yaml.safe_load((root / PARENT).read_text())
    rate = gpu_rate(record=root / RUN_HOME / RATE_RECORD)
    files = {}
    for index, noise in enumerate(SETTINGS, start=1):
        config = cell_config(parent=parent, noise=noise)
        if expected_seconds(config=config, rate=rate) > LIMIT_SECONDS:
            raise ValueError(f"the cell at {noise} is expected to take over an hour on one GPU: split it by seeds")
        body = yaml.safe_dump(config, sort_keys=False, default_flow_style=None, width=118)
        files[f"{stem(index=index, noise=noise)}.yaml"] = (
            header(index=index, total=len(SETTINGS), noise=noise, config=config, rate=rate) + body
        )
    return files


def write_cells(*, root: PathLike = ".") -> list[Path]:
    """(Re)write :data:`CELLS` as :func:`cell_files` makes them, removing any other cell file; returns the files."""
    folder = Path(root) / CELLS
    folder.mkdir(parents=True, exist_ok=True)
    files = cell_files(root=root)
    for path in folder.glob("*.yaml"):
        if path.name not in files:
            path.unlink()
    for name, text in files.items():
        (folder / name).write_text(text)
    return [folder / name for name in files]


def cells(*, root: PathLike = ".") -> list[Path]:
    """The shipped cell configs, in the order they are recorded."""
    return sorted((Path(root) / CELLS).glob("*.yaml"))


def record_name(*, cell: PathLike) -> str:
    """The record of a cell: ``mnist-k10-<file stem>``."""
    return RECORD_PREFIX + Path(cell).stem


def recorded_commit(*, root: PathLike, cell: PathLike) -> str | None:
    """The commit a cell's record was made at (with ``+dirty`` where its tree had changes), None if unrecorded."""
    provenance = Path(root) / RUN_HOME / record_name(cell=cell) / "provenance.json"
    if not provenance.exists():
        return None
    git = json.loads(provenance.read_text()).get("git", {})
    return f"{git.get('commit', 'unknown')}{'+dirty' if git.get('dirty') is not False else ''}"


def _short(commit: str) -> str:
    """A commit as :func:`recorded_commit` gives it, shortened: ``0123456789ab`` or ``0123456789ab+dirty``."""
    name, _, dirty = commit.partition("+")
    return name[:12] + (f"+{dirty}" if dirty else "")


def _git_now(*, root: Path) -> dict[str, Any]:
    """:func:`enkcvs.io.git_state` of ``root`` as it is now (not as a call earlier in the process cached it)."""
    return getattr(git_state, "__wrapped__", git_state)(root=root)


def refusal(*, root: PathLike = ".") -> str | None:
    """Why the cells may not be recorded in the checkout at ``root`` now (None where they may): its tracked files
    changed since its commit, or a cell recorded at another commit than the checkout's (one commit for the row)."""
    root = Path(root).resolve()
    git = _git_now(root=root)
    if git.get("commit") in (None, "unknown") or git.get("dirty") is not False:
        return (
            "the working tree's tracked files differ from its commit (or it is no git checkout): commit or drop "
            "the changes first (git status), so that every cell of the row is recorded at one commit"
        )
    for cell in cells(root=root):
        made = recorded_commit(root=root, cell=cell)
        if made is not None and made != git["commit"]:
            return (
                f"{RUN_HOME}/{record_name(cell=cell)} was recorded at {_short(made)}, this checkout is at "
                f"{git['commit'][:12]}: the row's cells are recorded at one commit; check out {made[:12]} to "
                f"record the rest, or move the recorded cells away ({RUN_HOME}/{RECORD_PREFIX}*) to record them "
                "all again here"
            )
    return None


def gpu_jobs_option(*, gpu_jobs: int) -> list[str]:
    """The Snakemake option that lets ``gpu_jobs`` training jobs (each asking for ``gpu=1``) run side by side; on the
    command line it replaces the profile's ``gpu`` resource."""
    return ["--resources", f"gpu={gpu_jobs}"]


def dry_run(
    *, snakemake: str, profile: PathLike = PROFILE, gpu_jobs: int = GPU_JOBS, root: PathLike = "."
) -> list[dict[str, Any]]:
    """Snakemake's dry run of every cell in the checkout at ``root``, with the profile and GPU jobs
    :func:`record_cells` runs (:func:`gpu_jobs_option`), up to four side by side: no job runs.

    Returns
    -------
    list of dict
        Each cell's ``cell`` (file name), ``jobs`` (Snakemake's total), ``trained`` (its training jobs), expected
        ``minutes`` (at least, on one ``gpu`` with ``gpu_jobs`` training jobs side by side:
        :func:`expected_seconds`) and ``status`` (``to record``, or the commit of its record).

    Raises
    ------
    RuntimeError
        Where a dry run fails (its output's end in the message).
    """
    root = Path(root)
    rate = gpu_rate(record=root / RUN_HOME / RATE_RECORD)
    shipped = cells(root=root)
    command = [snakemake, "-n", "--nolock", "--quiet", "rules", "--profile", str((root / profile).resolve())]
    command += gpu_jobs_option(gpu_jobs=gpu_jobs)
    with ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
        runs = list(
            pool.map(
                lambda cell: subprocess.run(
                    [*command, "--configfile", str(cell.resolve())], capture_output=True, text=True, cwd=root
                ),
                shipped,
            )
        )
    found = []
    for cell, done in zip(shipped, runs):
        counts = {rule: int(n) for rule, n in re.findall(r"^(\w+)\s+(\d+)$", done.stdout + done.stderr, re.M)}
        if done.returncode != 0 or "total" not in counts:
            raise RuntimeError(f"the dry run of {cell.name} failed:\n{(done.stdout + done.stderr)[-2000:]}")
        made = recorded_commit(root=root, cell=cell)
        found.append(
            {
                "cell": cell.name,
                "jobs": counts["total"],
                "trained": sum(n for rule, n in counts.items() if rule.startswith("train_")),
                "gpu": rate.gpu,
                "gpu_jobs": rate.gpu_jobs,
                "minutes": _minutes(expected_seconds(config=yaml.safe_load(cell.read_text()), rate=rate)),
                "status": "to record" if made is None else f"recorded at {_short(made)}",
            }
        )
    return found


def record_cells(*, snakemake: str, profile: PathLike = PROFILE, gpu_jobs: int = GPU_JOBS) -> list[Path]:
    """Record every cell of the checkout in the working directory not yet recorded at its commit, in order, as
    ``mnist-k10-<file stem>`` (:func:`enkcvs.recording.run.run_and_record`, which resumes a killed run), with
    ``profile`` at ``gpu_jobs`` training jobs side by side (:func:`gpu_jobs_option`).

    Parameters
    ----------
    snakemake : str
        The ``snakemake`` to run.
    profile : path
        The Snakemake profile (default :data:`PROFILE`).
    gpu_jobs : int
        Training jobs side by side (default :data:`GPU_JOBS`, as the record that times the cells ran).

    Returns
    -------
    list of Path
        The records written, in order (none for the cells already recorded at the commit).

    Raises
    ------
    RuntimeError
        Where the checkout may not record the row (:func:`refusal`), or a run fails (the same command goes on).
    ValueError
        Where a cell's outputs were all there already (as :func:`~enkcvs.recording.run.run_and_record`).
    """
    if reason := refusal(root="."):
        raise RuntimeError(reason)
    commit = _git_now(root=Path.cwd())["commit"]
    recorded = []
    for cell in cells():
        if recorded_commit(root=".", cell=cell) == commit:
            print(f"{record_name(cell=cell)}: recorded at {commit[:12]}, skipped")
            continue
        recorded.append(
            run_and_record(
                name=record_name(cell=cell),
                configfile=cell,
                snakemake=snakemake,
                profile=profile,
                options=gpu_jobs_option(gpu_jobs=gpu_jobs),
            )
        )
    return recorded
