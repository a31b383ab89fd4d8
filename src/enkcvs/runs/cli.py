"""The command line of recorded runs, ``python -m enkcvs.runs``: ``run --name NAME --configfile FILE`` runs the
workflow on a config, timed, and records it in ``results/recorded/NAME`` (:mod:`enkcvs.recording`; a run killed or
stopped at a scheduler's time limit goes on when the same command is given again); ``readme`` (``make readme``)
renders the generated pages (README.md, docs/results.md, benchmarks/README.md) from the recorded runs and benchmark
records (:mod:`enkcvs.report.pages`), and ``readme --check`` only names those that differ; ``compare`` lists the cells in which two runs' tables differ (:mod:`enkcvs.recording.compare`).
"""

import argparse
import shutil
import sys
from pathlib import Path

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
    run.add_argument(
        "--snakemake",
        default=shutil.which("snakemake") or str(Path(sys.executable).with_name("snakemake")),
        help="the snakemake to run (default: the one on PATH)",
    )
    run.add_argument(
        "--profile", type=Path, help="a Snakemake profile, which sets cores and GPU jobs: profiles/gpu-node"
    )
    readme = commands.add_parser("readme", help="render the generated pages from the recorded runs")
    readme.add_argument("--check", action="store_true", help="only name the pages that differ (exit 1)")
    compare = commands.add_parser("compare", help="how the tables of two runs' report folders differ")
    compare.add_argument("first", type=Path)
    compare.add_argument("second", type=Path)
    return parser


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


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if getattr(args, "configfile", None) is not None and not args.configfile.exists():
        parser.error(f"--configfile {args.configfile} does not exist")
    if args.command == "run":
        return _run(args)
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
