"""Recorded runs: a finished run's rendered report kept with its provenance, the source of every result number in
the Markdown pages.

A recorded run is a finished run's rendered report copied to ``results/recorded/<name>/`` (runs the pages cite as
results) or ``benchmarks/results/runs/<name>/`` (speed comparisons) beside ``provenance.json``: the config it ran,
when, on which machine (CPU model and instruction sets), how long, with which packages and commit, on which data
(each dataset file's SHA-256, and its source's checksum check where it has one).
``python -m enkcvs.runs.recorded run --name NAME --configfile FILE`` runs the workflow on a config, timed, and records
it (``--time-limit 2h`` stops it after two hours instead, to be started again or, with ``--carry-on-stop``,
carried: :mod:`enkcvs.runs.deadline`); ``readme`` (``make readme``) rewrites the generated blocks of every page
(README.md, ``docs/*.md``, ``benchmarks/README.md``, ``config/README.md``) from the recorded runs, through
:mod:`enkcvs.runs.pages`, and ``readme --check`` only reports the blocks that differ; ``compare`` lists the cells in
which two runs' tables differ; ``carry`` and ``restore`` move an unfinished run to another machine through the
repository (:mod:`enkcvs.runs.carry`).
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from functools import partial
from pathlib import Path

import numpy as np
import yaml

from enkcvs.data.datasets import load_dataset
from enkcvs.data.sources import get_source
from enkcvs.io import PathLike, atomic_folder, git_state, package_versions, read_table
from enkcvs.machine import instruction_set_limits, machine_description
from enkcvs.runs.carry import (CARRIED_HOME, carried_saves, restore_run, save_run, saves_file, since_file,
                               snakemake_logs)
from enkcvs.runs.deadline import STOPPED_AT_LIMIT, parse_duration, run_until
from enkcvs.runs.pages import pages, regenerate_pages
from enkcvs.runs.views.diff import compare_runs
from enkcvs.runs.views.provenance import RUN_HOMES
from enkcvs.workflow.layout import DATASET


#: Rendered files a recorded run keeps (tables as Markdown and CSV, figures as PNG).
RECORDED_SUFFIXES = (".md", ".csv", ".png")
#: Where a run's label-issue rankings merged over its seeds lie: ``<dataset>/<noise>/`` below it.
ISSUES = Path("results/issues")
#: How often the Snakemake invocation of a group of targets built first asks whether they are (a dry run: about
#: 2 s of one core).
POLL_SECONDS = 60.0


def keep_label_issues(*, issues: PathLike, into: PathLike) -> None:
    """Copy every merged label-issue ranking of ``issues`` (``<dataset>/<noise>/``, not the seeds' own) into
    ``into/issues/<dataset>/<noise>/``: its rendered files (summary, review sheets, cleanlab beside it) and, as
    ``label_issues.csv``, the rows it does not keep (the full ranking of every sample stays with the run)."""
    for table in sorted(Path(issues).glob("*/*/label_issues.parquet")):
        kept = Path(into) / "issues" / table.parent.relative_to(issues)
        kept.mkdir(parents=True)
        for path in sorted(table.parent.iterdir()):
            if path.is_file() and path.suffix in RECORDED_SUFFIXES:
                shutil.copyfile(path, kept / path.name)
        ranking = read_table(table)[0]
        flagged = ~ranking["kept"] if "kept" in ranking else ranking["is_label_issue"]  # the latter: older tables
        ranking[flagged].to_csv(kept / "label_issues.csv", index=False)


def record_run(*, name: str, configfile: PathLike, report: PathLike, wall_seconds: float, jobs: int | None,
               command: list[str], root: PathLike = "results/recorded", git: dict | None = None,
               invocations: list[dict] | None = None, first: Sequence[Sequence[str]] = (),
               data: dict | None = None, carried: list[dict] | None = None, issues: PathLike | None = None) -> Path:
    """Copy a finished run's rendered report into ``root/name/`` with its provenance, and with ``issues`` (a run's
    ``results/issues``) its merged label-issue rankings (:func:`keep_label_issues`), replacing an earlier record of
    that name as a whole (written beside it, then swapped in, so a failure leaves the old record). ``git`` is the
    checkout's state when the run started (default: now); ``invocations`` the Snakemake invocations the wall
    time sums (:func:`snakemake_invocations`); ``first`` the groups of targets ``command`` built, in order, before
    the rest;
    ``data`` what it trained on (:func:`data_provenance`); ``carried`` the saves that moved it between machines
    (:func:`enkcvs.runs.carry.save_run`), each with its machine and commit.

    Raises ``FileNotFoundError`` when ``report`` holds no rendered file."""
    report, root = Path(report), Path(root)
    files = sorted(path for path in report.glob("*") if path.suffix in RECORDED_SUFFIXES)
    if not files:
        raise FileNotFoundError(f"{report} holds no rendered table or figure: run the workflow first")
    with atomic_folder(root / name) as staging:
        for path in files:
            shutil.copyfile(path, staging / path.name)
        if issues is not None:
            keep_label_issues(issues=issues, into=staging)
        provenance = {
            "name": name,
            "recorded": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "configfile": str(configfile),
            "config": Path(configfile).read_text(),
            "command": command,
            "first": first,
            "wall_seconds": round(wall_seconds, 1),
            "jobs": jobs,
            "machine": machine_description(),
            "instruction_set_limits": instruction_set_limits(),
            "versions": package_versions(),
            "git": git or git_state(),
            "invocations": invocations or [],
            "data": data or {},
            "carried": carried or [],
        }
        (staging / "provenance.json").write_text(json.dumps(provenance, indent=2, sort_keys=True) + "\n")
    return root / name


def data_provenance(*, configfile: PathLike) -> dict:
    """What a finished run trained on, per dataset of ``configfile``: its built file
    (:data:`enkcvs.workflow.layout.DATASET`, relative to the working directory) with the file's SHA-256 and what built
    it (source, options, commit), and, where the source checks data against published checksums
    (:attr:`enkcvs.data.sources.Source.check`: the official MNIST's), that check made on the very arrays the run trained
    on. A dataset not built is listed as missing."""
    datasets = (yaml.safe_load(Path(configfile).read_text()) or {}).get("datasets") or {}
    found = {}
    for name, entry in datasets.items():
        path = Path(DATASET.format(dataset=name))
        if not path.is_file():
            found[name] = {"file": str(path), "missing": True}
            continue
        with open(path, "rb") as handle:
            digest = hashlib.file_digest(handle, "sha256").hexdigest()
        with np.load(path) as arrays:
            built = json.loads(str(arrays["provenance"]))
        found[name] = {"file": str(path), "sha256": digest, "source": entry["source"],
                       "built": {key: built.get(key) for key in ("source", "options", "git")}}
        check = get_source(entry["source"]).check
        if check is not None:
            found[name]["check"] = check(load_dataset(path))
    return found


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


def run_and_record(*, name: str, configfile: PathLike, cores: str, snakemake: str, root: PathLike = RUN_HOMES[0],
                   first: Sequence[Sequence[str]] = (), deadline: float | None = None,
                   profile: PathLike | None = None) -> Path | None:
    """Run the workflow on ``configfile`` through ``workflow/run.sh`` (resuming a killed run), count its jobs (the
    whole DAG's, by a forced dry run) and record the report. The wall time is the sum over the run's Snakemake
    invocations (:func:`snakemake_invocations`): the first one's start is kept in
    ``.snakemake/recorded/<name>.since`` until the record is written, so a run killed and resumed later is timed
    whole. A failed run records nothing. The record goes to ``root/name/`` (``benchmarks/results/runs`` for a speed
    comparison). ``profile``: a Snakemake profile the workflow runs with (``profiles/slurm``).

    ``first``: groups of Snakemake targets built before the rest, one invocation per group in the order given, so
    that what matters most is finished should a long run be cut short (:func:`first_invocations`: the next group
    fills the cores a group's last jobs leave idle); a resumed run passes them again (a finished group costs a dry
    run).

    A run carried from other machines (:func:`enkcvs.runs.carry.restore_run`) lists their saves in the record, and its
    carried folder, no longer needed once the record is written, is removed.

    ``deadline`` (a :func:`time.monotonic` time): the run is stopped when it passes
    (:func:`enkcvs.runs.deadline.run_until`, the training jobs keeping their epoch checkpoints) and None returned,
    nothing recorded: the same call goes on from there, and what it finished can be carried
    (:func:`enkcvs.runs.carry.save_run`)."""
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
    record = record_run(name=name, configfile=configfile, report="results/report",
                        wall_seconds=sum(invocation["seconds"] for invocation in runs),
                        jobs=int(planned.group(1)) if planned else 0, command=command, git=git, invocations=runs,
                        root=root, first=first, data=data_provenance(configfile=configfile),
                        carried=carried_saves(name), issues=ISSUES)
    began.unlink()
    saves_file(name).unlink(missing_ok=True)
    shutil.rmtree(Path(CARRIED_HOME) / name, ignore_errors=True)
    return record


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m enkcvs.runs.recorded", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run the workflow on a config, timed, and record its report")
    run.add_argument("--name", required=True, help="the record's folder under --root")
    run.add_argument("--root", default=RUN_HOMES[0], choices=RUN_HOMES,
                     help="results/recorded (results the pages cite) or benchmarks/results/runs (speed comparisons)")
    run.add_argument("--configfile", required=True, type=Path)
    run.add_argument("--cores", default="all")
    run.add_argument("--snakemake", default=str(Path(sys.executable).with_name("snakemake")))
    run.add_argument("--profile", type=Path, help="a Snakemake profile to run with, e.g. profiles/slurm")
    run.add_argument("--first", nargs="+", action="append", default=[], metavar="TARGET",
                     help="targets to build before the rest, one Snakemake invocation per --first in the order given "
                          "(what should be finished if a long run is cut short), the next group filling its idle "
                          "cores; repeat it for the next group")
    run.add_argument("--time-limit", metavar="DURATION",
                     help="stop the run after this long (2h, 90m, 1:30:00), the training jobs keeping their epoch "
                          f"checkpoints, and exit with status {STOPPED_AT_LIMIT}; the same command goes on from there")
    run.add_argument("--carry-on-stop", action="store_true",
                     help="with --time-limit: carry what the stopped run finished into results/carried/NAME "
                          "(as `carry` does), to go on on another machine")
    carry = commands.add_parser("carry", help="save what a run has finished into results/carried/NAME, to be "
                                "committed and restored on another machine (the run may be going on)")
    restore = commands.add_parser("restore", help="put a carried run back (rebuilding its datasets), so that "
                                  "`run` with the same name goes on where it was saved")
    for moved in (carry, restore):
        moved.add_argument("--name", required=True, help="the run's name, as `run --name` gives it")
        moved.add_argument("--configfile", required=True, type=Path)
        moved.add_argument("--snakemake", default=str(Path(sys.executable).with_name("snakemake")))
    restore.add_argument("--cores", default="all")
    readme = commands.add_parser("readme", help="regenerate the generated blocks of the Markdown pages")
    readme.add_argument("--check", action="store_true", help="only report blocks that differ (exit 1)")
    readme.add_argument("pages", nargs="*", type=Path,
                        help="pages to regenerate (default: README.md, docs/*.md, benchmarks/README.md, "
                             "config/README.md)")
    compare = commands.add_parser("compare", help="how the tables of two runs' report folders differ")
    compare.add_argument("first", type=Path)
    compare.add_argument("second", type=Path)
    return parser


def _run(args: argparse.Namespace) -> int:
    """The ``run`` command: the record's path, or at its time limit the run stopped (and carried)."""
    deadline = None if args.time_limit is None else time.monotonic() + parse_duration(args.time_limit)
    record = run_and_record(name=args.name, configfile=args.configfile, cores=args.cores, snakemake=args.snakemake,
                            root=args.root, first=args.first, deadline=deadline, profile=args.profile)
    if record is not None:
        print(record)
        return 0
    print(f"{args.name}: stopped at its time limit of {args.time_limit}, the training jobs' epoch checkpoints kept; "
          "the same command goes on from there", file=sys.stderr)
    if args.carry_on_stop:
        try:
            print(f"carried to {save_run(name=args.name, snakemake=[args.snakemake], configfile=args.configfile)}")
        except FileNotFoundError as error:  # nothing finished yet: an earlier carried folder stays as it is
            print(f"nothing carried: {error}", file=sys.stderr)
    return STOPPED_AT_LIMIT


def _moved(args: argparse.Namespace) -> int:
    """The ``carry`` and ``restore`` commands."""
    try:
        if args.command == "carry":
            print(save_run(name=args.name, snakemake=[args.snakemake], configfile=args.configfile))
        else:
            restored = restore_run(name=args.name, snakemake=[args.snakemake], configfile=args.configfile,
                                   cores=args.cores)
            print(f"{restored} files of {args.name} restored: go on with `python -m enkcvs.runs.recorded run "
                  f"--name {args.name} --configfile {args.configfile}`")
    except (FileNotFoundError, ValueError, RuntimeError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if getattr(args, "configfile", None) is not None and not args.configfile.exists():
        parser.error(f"--configfile {args.configfile} does not exist")
    if args.command == "run":
        if args.time_limit is not None:
            try:
                parse_duration(args.time_limit)
            except ValueError as error:
                parser.error(f"--time-limit {error}")
        elif args.carry_on_stop:
            parser.error("--carry-on-stop needs --time-limit")
        return _run(args)
    if args.command in ("carry", "restore"):
        return _moved(args)
    if args.command == "compare":
        print(compare_runs(args.first, args.second).to_markdown(index=False))
        return 0
    try:
        changed = regenerate_pages(args.pages or pages(), root=RUN_HOMES, write=not args.check)
    except FileNotFoundError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for page, keys in changed.items():
        if args.check:
            for key in keys:
                print(f"{page}: block {key!r} differs from the recorded runs; run `make readme`", file=sys.stderr)
        else:
            print(f"{page}: {len(keys)} block(s) regenerated" + (f": {', '.join(keys)}" if keys else ""))
    return 1 if args.check and any(changed.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
