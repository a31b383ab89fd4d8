"""The command line of recorded runs, ``python -m enkcvs.runs``: ``run --name NAME --configfile FILE`` runs the
workflow on a config, timed, and records it in ``results/recorded/NAME`` (:mod:`enkcvs.recording`; a run killed or
stopped at a scheduler's time limit goes on when the same command is given again); ``readme`` (``make readme``)
renders the generated pages (README.md, docs/results.md, benchmarks/README.md) from the recorded runs and benchmark
records (:mod:`enkcvs.report.pages`), and ``readme --check`` only names those that differ; ``compare`` lists the cells in which two runs' tables differ (:mod:`enkcvs.recording.compare`);
``cells`` records the K = 10, M = 5 cells of the full-MNIST row in order at one commit, and ``cells --dry-run`` dry-runs
them (:mod:`enkcvs.recording.cells`).
"""

import argparse
import shutil
import sys
from pathlib import Path

from enkcvs.recording import cells
from enkcvs.recording.compare import compare_runs
from enkcvs.recording.run import run_and_record
from enkcvs.report.pages import regenerate


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m enkcvs.runs", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run the workflow on a config, timed, and record its report")
    run.add_argument("--name", required=True, help="the record's folder under results/recorded")
    run.add_argument("--configfile", required=True, type=Path)
    run.add_argument("--cores", help="cores to run on (default: the profile's, else all)")
    run.add_argument("--snakemake", default=_snakemake(), help="the snakemake to run (default: the one on PATH)")
    run.add_argument(
        "--profile", type=Path, help="a Snakemake profile, which sets cores and GPU jobs: profiles/gpu-node"
    )
    readme = commands.add_parser("readme", help="render the generated pages from the recorded runs")
    readme.add_argument("--check", action="store_true", help="only name the pages that differ (exit 1)")
    compare = commands.add_parser("compare", help="how the tables of two runs' report folders differ")
    compare.add_argument("first", type=Path)
    compare.add_argument("second", type=Path)
    row = commands.add_parser(
        "cells", help=f"record the K = 10, M = 5 cells of the full-MNIST row ({cells.CELLS}) in order, one commit"
    )
    row.add_argument("--profile", type=Path, default=Path(cells.PROFILE), help=f"default: {cells.PROFILE}")
    row.add_argument(
        "--gpu-jobs",
        type=int,
        default=cells.GPU_JOBS,
        help=f"training jobs side by side (default: {cells.GPU_JOBS}, as the record timing the cells ran)",
    )
    row.add_argument("--dry-run", action="store_true", help="Snakemake's dry run of every cell: its jobs, its time")
    row.add_argument("--write", action="store_true", help=f"rewrite {cells.CELLS} from {cells.PARENT}, then stop")
    row.add_argument("--snakemake", default=_snakemake(), help="the snakemake to run (default: the one on PATH)")
    return parser


def _snakemake() -> str:
    return shutil.which("snakemake") or str(Path(sys.executable).with_name("snakemake"))


def _run(args: argparse.Namespace) -> int:
    """The ``run`` command: the record's path, or why there is none."""
    try:
        print(
            run_and_record(
                name=args.name,
                configfile=args.configfile,
                cores=args.cores,
                snakemake=args.snakemake,
                profile=args.profile,
            )
        )
    except (RuntimeError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


def _cells(args: argparse.Namespace) -> int:
    """The ``cells`` command: the cells rewritten, dry-run or recorded, or why not."""
    try:
        if args.write:
            for path in cells.write_cells():
                print(f"{path}: written")
            return 0
        if args.dry_run:
            for found in cells.dry_run(snakemake=args.snakemake, profile=args.profile, gpu_jobs=args.gpu_jobs):
                print(
                    f"{found['cell']}: {found['jobs']} jobs, {found['trained']} of them training; expected at least "
                    f"{found['minutes']} min on one {found['gpu']} with {found['gpu_jobs']} jobs side by side; {found['status']}"
                )
            if reason := cells.refusal():
                print(f"note: a run would not start here: {reason}")
            return 0
        for record in cells.record_cells(snakemake=args.snakemake, profile=args.profile, gpu_jobs=args.gpu_jobs):
            print(record)
    except (RuntimeError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if getattr(args, "configfile", None) is not None and not args.configfile.exists():
        parser.error(f"--configfile {args.configfile} does not exist")
    if args.command == "run":
        return _run(args)
    if args.command == "cells":
        return _cells(args)
    if args.command == "compare":
        print(compare_runs(args.first, args.second).to_markdown(index=False))
        return 0
    changed = regenerate(Path.cwd(), write=not args.check)
    for page in changed:
        print(
            f"{page}: differs from its rendering; run `make readme`" if args.check else f"{page}: rendered",
            file=sys.stderr if args.check else sys.stdout,
        )
    return 1 if args.check and changed else 0
