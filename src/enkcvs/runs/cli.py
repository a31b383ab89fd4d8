"""The command line of recorded runs, ``python -m enkcvs.runs``: ``run --name NAME --configfile FILE`` runs the
workflow on a config, timed, and records it in ``results/recorded/NAME`` (:mod:`enkcvs.recording`; ``--time-limit 2h``
stops it after two hours instead, to be started again or, with ``--carry-on-stop PATH``, saved there); ``carry
--to PATH`` and ``restore --from PATH`` move an unfinished run to another machine through a folder or archive of the
user's (:mod:`enkcvs.continuing.carry`);
``pending --time-limit 9m CONFIG...`` records a list of configs in priority order, each whole or not at all, within
the limit (:mod:`enkcvs.recording.pending`); ``readme`` (``make readme``) rewrites the generated blocks and bound
values of every page (README.md, ``docs/*.md``, ``benchmarks/README.md``, ``config/README.md``) from the recorded runs (:mod:`enkcvs.report.pages.blocks`), and
``readme --check`` only reports those that differ; ``compare`` lists the cells in which two runs' tables differ
(:mod:`enkcvs.recording.compare`).
"""

import argparse
import sys
import time
from pathlib import Path

from enkcvs.continuing.carry import restore_run, save_run
from enkcvs.continuing.deadline import STOPPED_AT_LIMIT, parse_duration
from enkcvs.recording.compare import compare_runs
from enkcvs.recording.pending import record_pending
from enkcvs.recording.run import run_and_record
from enkcvs.report.pages.blocks import pages, regenerate_pages


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m enkcvs.runs", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run the workflow on a config, timed, and record its report")
    run.add_argument("--name", required=True, help="the record's folder under results/recorded")
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
    run.add_argument("--carry-on-stop", type=Path, metavar="PATH",
                     help="with --time-limit: save what the stopped run finished into PATH (as `carry --to PATH` "
                          "does), to go on on another machine")
    carry = commands.add_parser("carry", help="save what a run has finished into a folder or archive outside the "
                                "working directory, to be restored on another machine (the run may be going on)")
    restore = commands.add_parser("restore", help="put a saved run back (rebuilding its datasets), so that `run` "
                                  "with the same name goes on where it was saved")
    for moved in (carry, restore):
        moved.add_argument("--name", required=True, help="the run's name, as `run --name` gives it")
        moved.add_argument("--configfile", required=True, type=Path)
        moved.add_argument("--snakemake", default=str(Path(sys.executable).with_name("snakemake")))
    carry.add_argument("--to", required=True, type=Path, metavar="PATH",
                       help="the save's folder, or an archive ending in .tar, .tar.gz or .tgz (an earlier save there "
                            "is replaced)")
    restore.add_argument("--from", required=True, type=Path, metavar="PATH", dest="source",
                         help="the folder or archive `carry --to` wrote")
    restore.add_argument("--cores", default="all")
    pending = commands.add_parser("pending", help="record configs in priority order within a time limit, each whole "
                                  "or not at all, going on where an earlier call stopped")
    pending.add_argument("configfiles", nargs="+", type=Path, metavar="CONFIG",
                         help="configs in priority order, each recorded as results/recorded/<its file name>")
    pending.add_argument("--time-limit", required=True, metavar="DURATION",
                         help="stop then (2h, 9m, 1:30:00), the run going on keeping its epoch checkpoints")
    pending.add_argument("--saves", type=Path, metavar="FOLDER",
                         help="save a run stopped at the limit into FOLDER/<name>.tar.gz, outside the working "
                              "directory, and restore it from there first the next time")
    pending.add_argument("--cores", default="all")
    pending.add_argument("--snakemake", default=str(Path(sys.executable).with_name("snakemake")))
    pending.add_argument("--profile", type=Path, help="a Snakemake profile to run with, e.g. profiles/slurm")
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
    try:
        record = run_and_record(name=args.name, configfile=args.configfile, cores=args.cores,
                                snakemake=args.snakemake, first=args.first, deadline=deadline, profile=args.profile)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if record is not None:
        print(record)
        return 0
    print(f"{args.name}: stopped at its time limit of {args.time_limit}, the training jobs' epoch checkpoints kept; "
          "the same command goes on from there", file=sys.stderr)
    if args.carry_on_stop is not None:
        try:
            saved = save_run(name=args.name, snakemake=[args.snakemake], configfile=args.configfile,
                             to=args.carry_on_stop)
            print(f"carried to {saved}")
        except FileNotFoundError as error:  # nothing finished yet: an earlier save stays as it is
            print(f"nothing carried: {error}", file=sys.stderr)
    return STOPPED_AT_LIMIT


def _moved(args: argparse.Namespace) -> int:
    """The ``carry`` and ``restore`` commands."""
    try:
        if args.command == "carry":
            print(save_run(name=args.name, snakemake=[args.snakemake], configfile=args.configfile, to=args.to))
        else:
            restored = restore_run(name=args.name, snakemake=[args.snakemake], configfile=args.configfile,
                                   source=args.source, cores=args.cores)
            print(f"{restored} files of {args.name} restored: go on with `python -m enkcvs.runs run "
                  f"--name {args.name} --configfile {args.configfile}`")
    except (FileNotFoundError, ValueError, RuntimeError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


def _pending(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """The ``pending`` command: each config's state on a line; 0 when all are recorded, else the time limit's
    status."""
    missing = [str(path) for path in args.configfiles if not path.is_file()]
    if missing:
        parser.error(f"no config file {', '.join(missing)}")
    try:
        deadline = time.monotonic() + parse_duration(args.time_limit)
    except ValueError as error:
        parser.error(f"--time-limit {error}")
    try:
        states = record_pending(configfiles=args.configfiles, deadline=deadline, cores=args.cores,
                                snakemake=args.snakemake, saves=args.saves, profile=args.profile)
    except (FileNotFoundError, ValueError, RuntimeError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for name, state in states.items():
        print(f"{name}: {state}")
    return 0 if all(state.startswith("recorded") for state in states.values()) else STOPPED_AT_LIMIT


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
        elif args.carry_on_stop is not None:
            parser.error("--carry-on-stop needs --time-limit")
        return _run(args)
    if args.command in ("carry", "restore"):
        return _moved(args)
    if args.command == "pending":
        return _pending(args, parser)
    if args.command == "compare":
        print(compare_runs(args.first, args.second).to_markdown(index=False))
        return 0
    try:
        changed = regenerate_pages(args.pages or pages(), write=not args.check)
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
