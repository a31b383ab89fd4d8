"""Running the workflow on a config, timed, and recording it (:func:`run_and_record`): through ``workflow/run.sh``
(which resumes a killed run), the groups of targets asked for first built first, its wall time summed over its
Snakemake invocations, stopped at a time limit (:mod:`enkcvs.continuing.deadline`) to go on later or elsewhere
(:mod:`enkcvs.continuing.carry`)."""

import os
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from datetime import datetime
from functools import partial
from pathlib import Path

import yaml

from enkcvs.continuing.carry import carried_saves, saves_file, since_file, snakemake_logs
from enkcvs.continuing.deadline import run_until
from enkcvs.io import PathLike, git_state
from enkcvs.recording.provenance import RUN_HOME
from enkcvs.recording.record import ISSUES, data_provenance, record_run

#: How often the Snakemake invocation of a group of targets built first asks whether they are (a dry run: about
#: 2 s of one core).
POLL_SECONDS = 60.0


LOG_EVENT = re.compile(r"^\[(\w{3} \w{3} [ \d]\d \d{2}:\d{2}:\d{2} \d{4})\]$", re.MULTILINE)


def snakemake_invocations(*, log_dir: PathLike = ".snakemake/log", since: datetime) -> list[dict]:
    """The Snakemake invocations of a run (several where it was killed and resumed): every log in
    ``log_dir`` started at or after ``since`` (local time, as Snakemake names its logs) that ran a job, with the
    seconds from its start to its last timestamped event (a killed invocation's last event is its last job's start or
    end; the minutes of a job cut off by the kill are lost with it)."""
    found = []
    for path, start in snakemake_logs(log_dir=log_dir, since=since):
        events = LOG_EVENT.findall(path.read_text(errors="replace"))
        if not events:
            continue
        last = datetime.strptime(" ".join(events[-1].split()), "%a %b %d %H:%M:%S %Y")
        found.append({"log": path.name, "seconds": round(max((last - start).total_seconds(), 0.0), 1)})
    return found


def first_invocations(first: Sequence[Sequence[str]]) -> list[tuple[list[str], list[str]]]:
    """The Snakemake invocations of a run that builds the groups of targets ``first`` before the rest: per group, its
    targets and those it is filled with, then the rest (no targets: the workflow's ``all``).

    A group's invocation prioritises the group (``--prioritize``) and is stopped as soon as the group is built
    (:func:`targets_built`), but is given the next group (or ``all``) as well: Snakemake starts that group's jobs on
    the cores the group's last jobs leave idle, and the next invocation takes them up where they were stopped (a
    training job from its epoch checkpoint)."""
    groups = [list(group) for group in first]
    fills = [*groups[1:], ["all"]]
    return [*zip(groups, fills), ([], [])]


def targets_built(*, snakemake: str, configfile: PathLike, targets: Sequence[str]) -> bool:
    """Whether ``targets`` are built and up to date, by a dry run beside the run that builds them (no lock taken).
    A target that names a file must exist first, so that a run still far from it costs no dry run."""
    if any(("/" in target or "." in target) and not Path(target).exists() for target in targets):
        return False
    dry = subprocess.run([snakemake, "-n", "--nolock", "--rerun-incomplete", *targets, "--configfile",
                          str(configfile)], capture_output=True, text=True)
    return dry.returncode == 0 and "Nothing to be done" in dry.stdout + dry.stderr


def _announced(built: Callable[[], bool], targets: Sequence[str]) -> bool:
    """``built()``, saying when it holds that the invocation is stopped on purpose: Snakemake's log then reports the
    jobs it was stopped in as failed."""
    if not built():
        return False
    print(f"recorded: the {len(targets)} target(s) asked for first are built; their invocation is stopped and the jobs "
          "it started beside them go on in the next", file=sys.stderr, flush=True)
    return True


def gpu_refusal(configfile: PathLike, *, profile: PathLike | None) -> str | None:
    """Why a run of ``configfile`` must not start here, or None: its training jobs each ask for a GPU
    (``gpu.per_training_job``) without leave to fall back to the CPU, it runs on this machine (no cluster
    ``profile``), and torch sees no GPU here. Every training job would fail after the data were prepared, or, had it
    fallen back, train for far longer than the config says it takes."""
    gpu = (yaml.safe_load(Path(configfile).read_text()) or {}).get("gpu") or {}
    if profile is not None or not gpu.get("per_training_job") or gpu.get("allow_cpu_fallback"):
        return None
    import torch

    if torch.cuda.is_available():
        return None
    return (f"{configfile} asks for a GPU for each training job (gpu.per_training_job: {gpu['per_training_job']}) "
            f"and torch {torch.__version__} sees none on this machine: run it where one is (a GPU node, or a "
            "cluster through --profile profiles/slurm), or, knowing what its header says the CPU costs, set "
            "gpu.allow_cpu_fallback: true")


def run_and_record(*, name: str, configfile: PathLike, cores: str, snakemake: str, root: PathLike = RUN_HOME,
                   first: Sequence[Sequence[str]] = (), deadline: float | None = None,
                   profile: PathLike | None = None) -> Path | None:
    """Run the workflow on ``configfile`` through ``workflow/run.sh`` (resuming a killed run), count its jobs (the
    whole DAG's, by a forced dry run) and record the report. The wall time is the sum over the run's Snakemake
    invocations (:func:`snakemake_invocations`): the first one's start is kept in
    ``.snakemake/recorded/<name>.since`` until the record is written, so a run killed and resumed later is timed
    whole. A failed run records nothing. The record goes to ``root/name/``. ``profile``: a Snakemake profile the workflow runs with (``profiles/slurm``).

    ``first``: groups of Snakemake targets built before the rest, one invocation per group in the order given, so
    that what matters most is finished should a long run be cut short (:func:`first_invocations`: the next group
    fills the cores a group's last jobs leave idle); a resumed run passes them again (a finished group costs a dry
    run).

    A run carried from other machines (:func:`enkcvs.continuing.carry.restore_run`) lists their saves in the record; the
    saves themselves, the user's own folders or archives, are left where they are.

    ``deadline`` (a :func:`time.monotonic` time): the run is stopped when it passes
    (:func:`enkcvs.continuing.deadline.run_until`, the training jobs keeping their epoch checkpoints) and None returned,
    nothing recorded: the same call goes on from there, and what it finished can be carried
    (:func:`enkcvs.continuing.carry.save_run`).

    Raises ``ValueError``, before anything runs, where the run needs a GPU this machine lacks (:func:`gpu_refusal`),
    and, recording nothing, where no job ran (the outputs were all there already: no run to time)."""
    if (refusal := gpu_refusal(configfile, profile=profile)) is not None:
        raise ValueError(refusal)
    environment = {**os.environ, "SNAKEMAKE": snakemake}
    dry = subprocess.run([snakemake, "-n", "--forceall", "--configfile", str(configfile)], capture_output=True,
                         text=True)
    planned = re.search(r"^total\s+(\d+)$", dry.stdout, re.MULTILINE)
    command = ["workflow/run.sh", "--cores", cores, *(["--profile", str(profile)] if profile else []),
               "--configfile", str(configfile)]
    # the workflow that runs is the working directory's (not necessarily this library's checkout), as it is when
    # the run starts: the README may be edited while a long run goes on
    git = git_state(root=Path.cwd())
    began = since_file(name)
    if not began.exists():
        began.parent.mkdir(parents=True, exist_ok=True)
        began.write_text(datetime.now().strftime("%Y-%m-%dT%H:%M:%S") + "\n")
    since = datetime.fromisoformat(began.read_text().strip())
    for targets, fill in first_invocations(first):  # before the options: --configfile takes every word after it
        prioritize, until = [], None
        if targets:  # a group: first, and its invocation stopped once it is built
            built = partial(targets_built, snakemake=snakemake, configfile=configfile, targets=targets)
            if built():  # a resumed run's finished group: no invocation to start and stop
                continue
            prioritize, until = ["--prioritize", *targets], partial(_announced, built, targets)
        if not run_until([command[0], *targets, *fill, *prioritize, *command[1:]], env=environment,
                         deadline=deadline, until=until, poll=POLL_SECONDS):
            return None
    runs = snakemake_invocations(since=since)
    if not runs:
        raise ValueError(f"no job of {configfile} ran here since {since:%Y-%m-%d %H:%M}: its outputs in results/ are "
                         "an earlier run's, which this record cannot time; `make clean` and record again")
    record = record_run(name=name, configfile=configfile, report="results/report",
                        wall_seconds=sum(invocation["seconds"] for invocation in runs),
                        jobs=int(planned.group(1)) if planned else 0, command=command, git=git, invocations=runs,
                        root=root, first=first, data=data_provenance(configfile=configfile),
                        carried=carried_saves(name), issues=ISSUES)
    began.unlink()
    saves_file(name).unlink(missing_ok=True)
    return record

