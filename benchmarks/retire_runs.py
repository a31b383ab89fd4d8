"""Retire recorded runs that are history only: write what the pages cite of them into one JSON under
``benchmarks/results/`` (:mod:`enkcvs.recording.retire`: each run's provenance, config, training rules' job times and
Table 2 cells, and how pairs of runs' tables differ), so that their folders can leave ``results/recorded/`` and the
pages' blocks read the JSON instead (``<history>/run:<run>``, ``<history>/diff:<run>:<other run>``,
``<history>/table2-beside:<recorded run>:<retired run>``; see docs/reproducibility.md).

Run ``python benchmarks/retire_runs.py --out benchmarks/results/<name>.json --what TEXT --runs DIR [DIR ...]
[--diff SECOND_DIR:FIRST_DIR ...]`` on the folders ``make record`` wrote, before removing them; a pair may name a run
that stays recorded. Reports what it wrote, asserts nothing about it.
"""

import argparse
import json
import shlex
import sys
from pathlib import Path

from enkcvs.recording.retire import run_history


def _pair(text: str) -> tuple[Path, Path]:
    second, colon, first = text.partition(":")
    if not colon:
        raise argparse.ArgumentTypeError(f"{text!r}: write SECOND_DIR:FIRST_DIR")
    return Path(second), Path(first)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="the JSON to write")
    parser.add_argument("--what", required=True, help="what the runs were, in a sentence")
    parser.add_argument("--runs", type=Path, nargs="+", required=True, help="the recorded runs to retire (folders)")
    parser.add_argument(
        "--diff",
        type=_pair,
        nargs="*",
        default=[],
        metavar="SECOND_DIR:FIRST_DIR",
        help="pairs of recorded runs whose tables' difference a page cites, the second against the first",
    )
    args = parser.parse_args()
    history = run_history(
        what=args.what,
        runs=args.runs,
        differences=args.diff,
        made_by=shlex.join(["python", "benchmarks/retire_runs.py", *sys.argv[1:]]),
    )
    args.out.write_text(json.dumps(history, indent=1) + "\n")
    for item in history["differences"]:
        print(
            f"{item['second']} against {item['first']}: {sum(c['differ'] for c in item['columns'])} of "
            f"{sum(c['cells'] for c in item['columns'])} cells differ"
        )
    print(f"{args.out}: {len(history['runs'])} runs, {len(history['differences'])} differences")


if __name__ == "__main__":
    main()
