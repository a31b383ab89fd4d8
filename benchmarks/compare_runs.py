"""Two recorded runs of the workflow side by side, before and after a change: wall time, jobs and each training rule's
job time, from their provenance and resource tables, with the ratio of their wall times. The JSON keeps what a page
cites once the runs themselves are retired from ``results/recorded/``.

Run ``python benchmarks/compare_runs.py --before DIR --after DIR --out benchmarks/results/<name>-<date>.json`` with
two folders ``make record`` wrote (``results/recorded/<name>``, or a copy elsewhere); see benchmarks/README.md. Both
should come from one machine under the same instruction-set limits: the JSON keeps each run's machine and limits, and
refuses a pair that differs in them. Reports numbers, asserts nothing about them.
"""

import argparse
import json
from pathlib import Path

import pandas as pd

#: What a run's provenance.json contributes to the comparison.
PROVENANCE_KEYS = (
    "name",
    "configfile",
    "config",
    "git",
    "recorded",
    "machine",
    "instruction_set_limits",
    "jobs",
    "wall_seconds",
    "versions",
)


def recorded_run(folder: Path) -> dict:
    """A recorded run's provenance (:data:`PROVENANCE_KEYS`) and its training rules' rows of ``resources.csv``."""
    provenance = json.loads((folder / "provenance.json").read_text())
    resources = pd.read_csv(folder / "resources.csv")
    return {
        **{key: provenance.get(key) for key in PROVENANCE_KEYS},
        "training_jobs_by_rule": resources.to_dict(orient="records"),
    }


def compare(before: Path, after: Path) -> dict:
    """Both runs and the ratio of their wall times; refuses runs from different machines or limits."""
    runs = {"before": recorded_run(before), "after": recorded_run(after)}
    for key in ("machine", "instruction_set_limits"):
        if runs["before"][key] != runs["after"][key]:
            raise SystemExit(
                f"{before} and {after} differ in {key} ({runs['before'][key]} against "
                f"{runs['after'][key]}): compare runs recorded on one machine under the same limits"
            )
    return {
        "what": "two recorded runs of the workflow, before and after a change, on one machine",
        "runs": runs,
        "wall_ratio_before_to_after": runs["before"]["wall_seconds"] / runs["after"]["wall_seconds"],
        "job_ratio_before_to_after": runs["before"]["jobs"] / runs["after"]["jobs"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="the recorded run before the change (a folder)")
    parser.add_argument("--after", type=Path, required=True, help="the recorded run after it")
    parser.add_argument("--out", type=Path, required=True, help="the JSON to write")
    args = parser.parse_args()
    comparison = compare(args.before, args.after)
    args.out.write_text(json.dumps(comparison, indent=1) + "\n")
    before, after = comparison["runs"]["before"], comparison["runs"]["after"]
    print(
        f"{before['name']}: {before['jobs']} jobs, {before['wall_seconds']:.0f} s; {after['name']}: "
        f"{after['jobs']} jobs, {after['wall_seconds']:.0f} s; {comparison['wall_ratio_before_to_after']:.2f}x"
    )


if __name__ == "__main__":
    main()
