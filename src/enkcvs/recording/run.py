"""Running the workflow on a config, timed, and recording it (:func:`run_and_record`): through ``workflow/run.sh``
(which resumes a killed run), its wall time summed over its Snakemake invocations, so that a run killed and started
again is timed whole."""

import os
import re
import subprocess
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from enkcvs.io import PathLike, git_state
from enkcvs.recording.provenance import RUN_HOME
from enkcvs.recording.record import ISSUES, data_provenance, record_run

#: Snakemake writes one log per invocation into ``.snakemake/log``, named by its local start time.
SNAKEMAKE_LOG = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{6}\.\d+)\.snakemake\.log$")
#: A timestamped event of a Snakemake log.
LOG_EVENT = re.compile(r"^\[(\w{3} \w{3} [ \d]\d \d{2}:\d{2}:\d{2} \d{4})\]$", re.MULTILINE)


def since_file(name: str) -> Path:
    """The file holding when a recorded run's first Snakemake invocation began, until it is recorded."""
    return Path(".snakemake/recorded") / f"{name}.since"


def snakemake_invocations(*, log_dir: PathLike = ".snakemake/log", since: datetime) -> list[dict]:
    """The Snakemake invocations of a run (several where it was killed and resumed): every log in ``log_dir`` started
    at or after ``since`` (local time, as Snakemake names its logs) that ran a job, with the seconds from its start to
    its last timestamped event (a killed invocation's last event is its last job's start or end; the minutes of a job
    cut off by the kill are lost with it)."""
    found = []
    for path in sorted(Path(log_dir).glob("*.snakemake.log")):
        name = SNAKEMAKE_LOG.match(path.name)
        if not name or (start := datetime.strptime(name.group(1), "%Y-%m-%dT%H%M%S.%f")) < since:
            continue
        events = LOG_EVENT.findall(path.read_text(errors="replace"))
        if not events:
            continue
        last = datetime.strptime(" ".join(events[-1].split()), "%a %b %d %H:%M:%S %Y")
        found.append({"log": path.name, "seconds": round(max((last - start).total_seconds(), 0.0), 1)})
    return found


def run_and_record(
    *,
    name: str,
    configfile: PathLike,
    snakemake: str,
    cores: str | None = None,
    root: PathLike = RUN_HOME,
    profile: PathLike | None = None,
    options: Sequence[str] = (),
) -> Path:
    """Run the workflow on ``configfile`` through ``workflow/run.sh`` (resuming a killed run), count its jobs (the
    whole DAG's, by a forced dry run) and record the report into ``root/name/``. The wall time is the sum over the
    run's Snakemake invocations (:func:`snakemake_invocations`): the first one's start is kept in
    :func:`since_file` until the record is written, so a run killed (or stopped by a scheduler's time limit) and
    started again with the same command is timed whole. ``profile``: a Snakemake profile to run with
    (``profiles/gpu-node``, ``profiles/slurm``), which sets the cores and GPU jobs; ``cores`` (default: the
    profile's, else all) overrides them, as do further Snakemake ``options`` (``["--resources", "gpu=12"]``).

    Raises ``RuntimeError`` where the run fails (nothing is recorded), and ``ValueError`` where no job ran (the
    outputs were all there already: no run to time)."""
    execution = [*(["--profile", str(profile)] if profile else []), *(["--cores", cores] if cores else [])]
    if not profile and not cores:
        execution = ["--cores", "all"]
    execution += options
    dry = subprocess.run(
        [snakemake, "-n", "--forceall", *execution, "--configfile", str(configfile)], capture_output=True, text=True
    )
    planned = re.search(r"^total\s+(\d+)$", dry.stdout, re.MULTILINE)
    command = ["workflow/run.sh", *execution, "--configfile", str(configfile)]
    # the workflow that runs is the working directory's, as it is when the run starts
    git = git_state(root=Path.cwd())
    began = since_file(name)
    if not began.exists():
        began.parent.mkdir(parents=True, exist_ok=True)
        began.write_text(datetime.now().strftime("%Y-%m-%dT%H:%M:%S") + "\n")
    since = datetime.fromisoformat(began.read_text().strip())
    done = subprocess.run(command, env={**os.environ, "SNAKEMAKE": snakemake})
    if done.returncode != 0:
        raise RuntimeError(
            f"the run of {configfile} failed (exit status {done.returncode}); the same command goes "
            "on from the jobs it finished"
        )
    runs = snakemake_invocations(since=since)
    if not runs:
        raise ValueError(
            f"no job of {configfile} ran here since {since:%Y-%m-%d %H:%M}: its outputs in results/ are "
            "an earlier run's, which this record cannot time; `make clean` and record again"
        )
    record = record_run(
        name=name,
        configfile=configfile,
        report="results/report",
        wall_seconds=sum(invocation["seconds"] for invocation in runs),
        jobs=int(planned.group(1)) if planned else 0,
        command=command,
        git=git,
        invocations=runs,
        root=root,
        data=data_provenance(configfile=configfile),
        issues=ISSUES,
    )
    began.unlink()
    return record
