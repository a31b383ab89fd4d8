"""The command line of recorded runs, ``python -m enkcvs.runs``: ``run --name NAME --configfile FILE`` runs the
workflow on a config, timed, and records it in ``results/recorded/NAME`` (:mod:`enkcvs.recording`; a run killed or
stopped at a scheduler's time limit goes on when the same command is given again); ``readme`` (``make readme``)
rewrites the generated blocks and bound values of every page (README.md, ``docs/*.md``, ``benchmarks/README.md``,
``config/README.md``) from the recorded runs (:mod:`enkcvs.report.pages.blocks`), and ``readme --check`` only reports
those that differ; ``compare`` lists the cells in which two runs' tables differ (:mod:`enkcvs.recording.compare`).
"""

import argparse
import sys
from pathlib import Path

from enkcvs.recording.compare import compare_runs
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
    readme = commands.add_parser("readme", help="regenerate the generated blocks of the Markdown pages")
    readme.add_argument("--check", action="store_true", help="only report blocks that differ (exit 1)")
    readme.add_argument(
        "pages",
        nargs="*",
        type=Path,
        help="pages to regenerate (default: README.md, docs/*.md, benchmarks/README.md, config/README.md)",
    )
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
