"""Scheduling cost of the paper's job DAG under Snakemake's greedy and ILP schedulers, and the default run's wall time.

Run ``python benchmarks/workflow_speed.py --help``; see benchmarks/README.md. Reports numbers, asserts nothing. Every
Snakemake call runs the repository's Snakefile in a fresh temporary working directory (``-d``), so results/ and
.snakemake/ of the repository are never touched; the workflow profile (profiles/default, found next to the Snakefile)
applies as in any run, and ``--scheduler`` overrides its ``scheduler: greedy`` where ILP is measured.

Measures
--------
1. **DAG build** of ``--configfile`` (default config/paper.yaml): ``snakemake --dag > /dev/null``, start
   to exit. ``--dag`` parses the Snakefile and builds the whole job DAG with every job's needrun state
   (``Workflow._prepare_dag`` + ``Workflow._build_dag``, the same calls a run starts with), then prints one dot node
   per job, from which the job count is read. ``--summary`` builds the same DAG and then queries every output file;
   ``--list-rules`` builds no DAG.
2. **Dry run** (``-n``) per ``--scheduler``: no measurement of a scheduler, shown to make that point. Snakemake 9
   replaces the scheduler by greedy in dry and touch runs (``DAGApi.execute``: executor "dryrun" or "touch" gives
   ``scheduler = "greedy"``, with ``omit_prioritize_by_temp_and_input``), and a dry run selects no jobs at all
   (``JobScheduler.schedule``: ``if self.dryrun: run = needrun``): the table shows the plugin used and 0 selection
   calls for both.
3. **Touch run** (``--touch``) per ``--scheduler``, the measurement: every job goes through the real scheduling loop
   (``JobScheduler.job_selector``: the stat of the ready jobs' inputs, the list of remaining jobs, the scheduler
   plugin; then resource bookkeeping and job finishing), while the touch executor runs nothing (the outputs do not
   exist, so it only logs a warning per job). The process is instrumented (``INSTRUMENTED``): it puts the requested
   plugin back with its default settings, as a real run has it, and times every ``job_selector`` call. Each job
   finishes at once, so each call refills all ``--cores`` slots (64 by default, the width of a cluster run).
   In a real run, jobs of minutes to hours finish one at a time and each finish starts a call that fills one slot from
   the same large ready set (up to 7,200 ``train_fold`` jobs here). So after each call the instrumented process times
   the same call again with one free core (the "1-slot" probe, resources restored after, its time taken off the wall
   time); sum(probe s x jobs the real call selected) / jobs estimates the per-job selection cost of such a run, at
   the ready sets of this run (column ``ready/job``; a call costs more the more jobs are ready). ``--cores 1``
   measures one-slot calls directly, at the smaller ready sets that a one-core run keeps (default config, 3 runs each:
   greedy 1.1-1.8 ms/job estimated at 73 ready jobs, 0.7-0.9 measured at 30; ILP 11-12 against 7.5-8.8). The probe
   leaves out the per-round copy of the ready set in ``JobScheduler.schedule``.
4. **A bare workflow of the same shape** (``bare_snakefile``): as many jobs, the folds' fan-in to each selection
   (M x K of the config) and the chain noise -> fold -> selection -> the rest, each rule a ``touch`` with no log,
   benchmark, env, params or script. Its dry run (``-n``, same ``--cores``) is what Snakemake alone costs for a DAG of
   that size on this machine; ``paper / bare`` is the share the workflow's rules add.
5. With ``--default-run``: wall time and job count of ``snakemake --cores all`` with the default config
   (config/config.yaml, which the Snakefile loads when no --configfile is given), profile included as in ``make run``
   (about 8-10 min on 2 cores); with ``--compare-threads`` also with two threads per training job (``--set-threads
   train_fold=2 train_final_baseline=2 train_final_selected=2``) and the ratio of the wall times.

Columns: ``jobs`` (Snakemake's job-stats total); ``wall s`` (process start to exit); ``sel calls`` (``job_selector``
calls); ``(wall-DAG)/job ms`` = (wall - DAG build) / jobs, the whole per-job cost after the DAG build (for the touch
run: selection, bookkeeping, the touch executor, job metadata); ``jobs/s`` = jobs / (wall - DAG build);
``select/job ms`` = seconds inside ``job_selector`` / jobs; ``1-slot/job ms``, the estimate above. Then the touch
runs' ratios ilp / greedy. Each number is the median of ``--repeats`` runs (default 1; a touch run of the paper DAG
takes about a minute).

Usage
-----
::

    python benchmarks/workflow_speed.py [--cores 64] [--repeats 1] [--configfile config/paper.yaml] [--out r.json]
    python benchmarks/workflow_speed.py --skip-scheduling --default-run [--compare-threads]
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import yaml

from enkcvs.io import git_state
from enkcvs.machine import machine_description
from enkcvs.pipeline.plan import TRAINING_RULES

REPO = Path(__file__).resolve().parents[1]
SNAKEFILE = REPO / "workflow" / "Snakefile"
PAPER_CONFIG = REPO / "config" / "paper.yaml"
SCHEDULERS = ("greedy", "ilp")
#: Runs Snakemake's command line in this process with ``JobScheduler.job_selector`` timed and writes the counts as
#: JSON to $WORKFLOW_SPEED_STATS at exit. With $WORKFLOW_SPEED_SCHEDULER set, the JobScheduler gets that scheduler
#: plugin with its default settings (and default greedy settings for the fallback), as a real run would: Snakemake
#: itself swaps in greedy with ``omit_prioritize_by_temp_and_input`` for --touch and -n (``DAGApi.execute``). With
#: $WORKFLOW_SPEED_PROBE set, each call is followed by the same call on the same ready jobs with the free resources of
#: before it but one free core (the 1-slot probe); the probe's changes to the free resources are undone.
INSTRUMENTED = """import json, os, sys, time
start = time.perf_counter()
from snakemake.logging import logger
from snakemake.scheduling.greedy import SchedulerSettings as GreedySettings
from snakemake.scheduling.job_scheduler import JobScheduler
from snakemake_interface_scheduler_plugins.registry import SchedulerPluginRegistry
stats = {"calls": 0, "selected": 0, "ready_weighted": 0, "select_s": 0.0, "probe_s": 0.0, "probe_weighted_s": 0.0,
         "fallbacks": 0}
original_init, original = JobScheduler.__init__, JobScheduler.job_selector
def init(self, workflow, executor_plugin, scheduler, greedy_settings):
    name = os.environ.get("WORKFLOW_SPEED_SCHEDULER")
    if name:
        plugin = SchedulerPluginRegistry().get_plugin(name)
        scheduler, greedy_settings = plugin.scheduler(workflow.dag, plugin.settings_cls(), logger), GreedySettings()
    select = scheduler.select_jobs
    def counted(*args):
        selected = select(*args)
        stats["fallbacks"] += selected is None
        return selected
    scheduler.select_jobs = counted
    stats["scheduler"] = type(scheduler).__module__
    original_init(self, workflow, executor_plugin, scheduler, greedy_settings)
def timed(self, jobs):
    before = dict(self.resources)
    tick = time.perf_counter()
    selected = original(self, jobs)
    stats["select_s"] += time.perf_counter() - tick
    stats["calls"] += 1
    stats["selected"] += len(selected)
    stats["ready_weighted"] += len(jobs) * len(selected)
    if os.environ.get("WORKFLOW_SPEED_PROBE"):
        after = dict(self.resources)
        self.resources.update(before, _cores=min(before["_cores"], 1))
        tick = time.perf_counter()
        original(self, jobs)
        probe = time.perf_counter() - tick
        self.resources.update(after)
        stats["probe_s"] += probe
        stats["probe_weighted_s"] += probe * len(selected)
    return selected
JobScheduler.__init__, JobScheduler.job_selector = init, timed
from snakemake.cli import main
try:
    main(sys.argv[1:])
finally:
    stats["process_s"] = time.perf_counter() - start
    with open(os.environ["WORKFLOW_SPEED_STATS"], "w") as out:
        json.dump(stats, out)"""


def profile_scheduler() -> str:
    """The scheduler that the workflow profile (profiles/default/config.yaml) sets; Snakemake's default is ILP."""
    with open(REPO / "profiles" / "default" / "config.yaml") as profile:
        return yaml.safe_load(profile).get("scheduler", "ilp")


def snakemake_args(workdir: str, *args: str, configfile: Path | None = None) -> list[str]:
    """Snakemake's arguments for the repository's Snakefile run in ``workdir`` (with ``configfile``, else the
    default config/config.yaml)."""
    config = ["--configfile", str(configfile)] if configfile else []
    return ["-s", str(SNAKEFILE), "-d", workdir, *config, *args]


def dag_build(configfile: Path) -> tuple[float, int]:
    """Seconds of ``snakemake --dag`` to /dev/null in a fresh directory (start to exit) and the DAG's job count."""
    with tempfile.TemporaryDirectory(prefix="workflow_speed_") as workdir:
        command = [sys.executable, "-m", "snakemake", *snakemake_args(workdir, "--dag", configfile=configfile)]
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        seconds = time.perf_counter() - start
    return seconds, len(re.findall(r"^\s*\d+\[label = ", done.stdout, flags=re.MULTILINE))


def instrumented_run(configfile: Path, *args: str, scheduler: str | None = None, probe: bool = False) -> dict:
    """Wall seconds (less the probes' time), job count and selection counts of one Snakemake run in a fresh temporary
    directory, with ``job_selector`` timed in-process and ``scheduler`` (a plugin name) put back (INSTRUMENTED). The
    job count is Snakemake's job-stats total."""
    with tempfile.TemporaryDirectory(prefix="workflow_speed_") as workdir:
        stats_path = Path(workdir) / "stats.json"
        run_dir = str(Path(workdir) / "run")
        env = dict(
            os.environ,
            WORKFLOW_SPEED_STATS=str(stats_path),
            WORKFLOW_SPEED_SCHEDULER=scheduler or "",
            WORKFLOW_SPEED_PROBE="1" if probe else "",
        )
        command = [sys.executable, "-c", INSTRUMENTED, *snakemake_args(run_dir, *args, configfile=configfile)]
        start = time.perf_counter()
        done = subprocess.run(command, check=False, capture_output=True, text=True, env=env)
        wall = time.perf_counter() - start
        if done.returncode:
            sys.exit(f"failed ({done.returncode}): {' '.join(command[3:])}\n{done.stderr[-3000:]}")
        stats = json.loads(stats_path.read_text())
    totals = re.findall(r"^total\s+(\d+)\s*$", done.stdout + done.stderr, flags=re.MULTILINE)
    return {**stats, "jobs": int(totals[-1]) if totals else None, "wall_s": wall - stats["probe_s"]}


def scheduling(configfile: Path, cores: int, repeats: int) -> dict:
    """Measure the DAG build, dry runs and touch runs of ``configfile`` (module docstring), medians over ``repeats``."""
    builds = [dag_build(configfile) for _ in range(repeats)]
    dag_s, dag_jobs = statistics.median(seconds for seconds, _ in builds), builds[0][1]
    runs = []
    for mode, flags in (("dry run", ("-n",)), ("touch run", ("--touch",))):
        for scheduler in SCHEDULERS:
            args = (*flags, "--scheduler", scheduler, "--cores", str(cores))
            touch = mode == "touch run"
            measured = [
                instrumented_run(configfile, *args, scheduler=scheduler if touch else None, probe=touch)
                for _ in range(repeats)
            ]
            row = {
                key: statistics.median(run[key] for run in measured) if key != "scheduler" else value
                for key, value in measured[0].items()
            }
            row["scheduler_module"] = row.pop("scheduler")
            jobs = row["jobs"]
            row.update(
                mode=mode,
                scheduler=scheduler,
                per_job_ms=1e3 * (row["wall_s"] - dag_s) / jobs,
                jobs_per_s=jobs / (row["wall_s"] - dag_s),
                select_per_job_ms=1e3 * row["select_s"] / jobs,
                ready_per_job=row["ready_weighted"] / jobs,
                one_slot_per_job_ms=1e3 * row["probe_weighted_s"] / jobs if touch else None,
            )
            runs.append(row)
    bare = [bare_dry_run(configfile, job_counts(configfile), cores) for _ in range(repeats)]
    dry = next(row for row in runs if row["mode"] == "dry run" and row["scheduler"] == "greedy")
    bare_s = statistics.median(run["wall_s"] for run in bare)
    return {
        "bare_workflow": {**bare[0], "wall_s": bare_s, "paper_over_bare": dry["wall_s"] / bare_s},
        "configfile": str(configfile.resolve().relative_to(REPO))
        if configfile.resolve().is_relative_to(REPO)
        else str(configfile),
        "cores": cores,
        "repeats": repeats,
        "dag_build_s": dag_s,
        "dag_jobs": dag_jobs,
        "runs": runs,
    }


def bare_snakefile(*, jobs: int, folds: int, selections: int, noise: int, votes: int) -> str:
    """A Snakefile of ``jobs`` jobs shaped as a config's DAG, with nothing but shell rules: ``noise`` label jobs,
    ``folds`` fold jobs (one label file each), ``selections`` jobs reading ``votes`` fold files each, and one job per
    selection output for the rest (jobs less the others and ``all``)."""
    rest = jobs - folds - selections - noise - 1
    return f"""rule all:
    input:
        expand("rest/{{i}}", i=range({rest})),
        expand("noise/{{i}}", i=range({noise})),


rule noise:
    output:
        "noise/{{i}}",
    shell:
        "touch {{output}}"


rule fold:
    input:
        lambda w: f"noise/{{int(w.i) % {noise}}}",
    output:
        "folds/{{i}}",
    shell:
        "touch {{output}}"


rule selection:
    input:
        lambda w: [f"folds/{{(int(w.i) * {votes} + j) % {folds}}}" for j in range({votes})],
    output:
        "selections/{{i}}",
    shell:
        "touch {{output}}"


rule rest:
    input:
        lambda w: f"selections/{{int(w.i) % {selections}}}",
    output:
        "rest/{{i}}",
    shell:
        "touch {{output}}"
"""


def bare_dry_run(configfile: Path, counts: dict[str, int], cores: int) -> dict:
    """Wall seconds of a dry run of :func:`bare_snakefile` shaped as ``configfile``'s DAG (job counts ``counts`` by
    rule, Snakemake's job stats), in a fresh directory, and its job count."""
    selection = yaml.safe_load(configfile.read_text())["selection"]
    shape = {
        "jobs": counts["total"],
        "folds": counts["train_fold"],
        "selections": counts["select_samples"] + counts.get("compare_confident_learning", 0),
        "noise": counts["inject_noise"],
        "votes": selection["M"] * selection["K"],
    }
    with tempfile.TemporaryDirectory(prefix="workflow_speed_bare_") as workdir:
        snakefile = Path(workdir) / "Snakefile"
        snakefile.write_text(bare_snakefile(**shape))
        command = [sys.executable, "-m", "snakemake", "-s", str(snakefile), "-d", workdir, "-n", "--cores", str(cores)]
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        wall = time.perf_counter() - start
    totals = re.findall(r"^total\s+(\d+)\s*$", done.stdout + done.stderr, flags=re.MULTILINE)
    return {"shape": shape, "jobs": int(totals[-1]), "wall_s": wall}


def job_counts(configfile: Path) -> dict[str, int]:
    """Snakemake's job stats of a dry run of ``configfile`` (no job listed), by rule, with ``total``."""
    with tempfile.TemporaryDirectory(prefix="workflow_speed_") as workdir:
        command = [
            sys.executable,
            "-m",
            "snakemake",
            *snakemake_args(workdir, "-n", "--quiet", "rules", configfile=configfile),
        ]
        done = subprocess.run(command, capture_output=True, text=True, check=True)
    return {rule: int(count) for rule, count in re.findall(r"^(\w+)\s+(\d+)$", done.stdout + done.stderr, re.M)}


def print_scheduling(results: dict, profile: str) -> None:
    """Print the scheduling table and the touch run's ilp / greedy ratios."""
    print(
        f"DAG of {results['configfile']}: --dag build {results['dag_build_s']:.2f} s, "
        f"{results['dag_jobs']} jobs; --cores {results['cores']}; median of {results['repeats']}"
    )
    columns = (
        "jobs",
        "wall s",
        "sel calls",
        "ready/job",
        "(wall-DAG)/job ms",
        "jobs/s",
        "select/job ms",
        "1-slot/job ms",
    )
    widths = [max(len(column), 6) for column in columns]
    print(
        f"{'run':<10} {'--scheduler':<17} {'plugin used':<12}",
        *(f"{column:>{width}}" for column, width in zip(columns, widths, strict=True)),
    )
    touch = {}
    for row in results["runs"]:
        name = f"{row['scheduler']}{' (profile)' if row['scheduler'] == profile else ''}"
        plugin = row["scheduler_module"].rsplit(".", 1)[-1] + (
            f" ({row['fallbacks']:.0f} fb)" if row["fallbacks"] else ""
        )
        one_slot = "-" if row["one_slot_per_job_ms"] is None else f"{row['one_slot_per_job_ms']:.2f}"
        values = (
            f"{row['jobs']}",
            f"{row['wall_s']:.1f}",
            f"{row['calls']:.0f}",
            f"{row['ready_per_job']:.0f}",
            f"{row['per_job_ms']:.2f}",
            f"{row['jobs_per_s']:.0f}",
            f"{row['select_per_job_ms']:.2f}",
            one_slot,
        )
        print(
            f"{row['mode']:<10} {name:<17} {plugin:<12}",
            *(f"{value:>{width}}" for value, width in zip(values, widths, strict=True)),
        )
        if row["mode"] == "touch run":
            touch[row["scheduler"]] = row
    bare = results["bare_workflow"]
    print(
        f"bare workflow of the same shape ({bare['jobs']} jobs, {bare['shape']['votes']} folds a selection): "
        f"dry run {bare['wall_s']:.1f} s; the workflow's (greedy) / bare: {bare['paper_over_bare']:.2f}"
    )
    ilp, greedy = touch["ilp"], touch["greedy"]
    print(
        "touch run, ilp / greedy: (wall-DAG)/job "
        f"{ilp['per_job_ms'] / greedy['per_job_ms']:.2f}, select/job "
        f"{ilp['select_per_job_ms'] / greedy['select_per_job_ms']:.2f}, 1-slot/job "
        f"{ilp['one_slot_per_job_ms'] / greedy['one_slot_per_job_ms']:.2f}"
    )


def default_run(extra: tuple[str, ...] = ()) -> dict:
    """Wall seconds and job count of ``snakemake --cores all`` with the default config in a fresh temporary
    directory (profile included, as ``make run``), plus ``extra`` arguments. The log is kept only on failure."""
    with tempfile.TemporaryDirectory(prefix="workflow_speed_default_") as workdir:
        command = [sys.executable, "-m", "snakemake", *snakemake_args(workdir, "--cores", "all", *extra)]
        start = time.perf_counter()
        done = subprocess.run(command, check=False, capture_output=True, text=True)
        wall = time.perf_counter() - start
    if done.returncode:
        sys.exit(f"default run failed ({done.returncode}): {' '.join(command)}\n{done.stderr[-3000:]}")
    steps = re.findall(r"(\d+) of (\d+) steps \(100%\) done", done.stderr)
    return {"command": command[3:], "wall_s": wall, "jobs": int(steps[-1][1]) if steps else None}


def main() -> None:
    """Parse the command line, measure, print and optionally write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--configfile",
        type=Path,
        default=PAPER_CONFIG,
        help="config of the DAG to schedule (default config/paper.yaml)",
    )
    parser.add_argument("--cores", type=int, default=64, help="--cores of the dry and touch runs (default 64)")
    parser.add_argument("--repeats", type=int, default=1, help="runs per measurement, median reported (default 1)")
    parser.add_argument("--skip-scheduling", action="store_true", help="skip the paper DAG's scheduling measurement")
    parser.add_argument("--default-run", action="store_true", help="also time the default run (~8-10 min on 2 cores)")
    parser.add_argument(
        "--compare-threads", action="store_true", help="with --default-run: also with 2 threads per training job"
    )
    parser.add_argument("--out", help="write all results to this JSON file")
    args = parser.parse_args()
    results = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "cpus": os.cpu_count(),
        "machine": machine_description(),
        "load_average_before": os.getloadavg(),
        "git": git_state(root=REPO),
    }
    if not args.skip_scheduling:
        profile = profile_scheduler()
        results["profile_scheduler"] = profile
        results["scheduling"] = scheduling(args.configfile, args.cores, args.repeats)
        print_scheduling(results["scheduling"], profile)
    if args.default_run:
        runs = {"default": default_run()}
        if args.compare_threads:
            runs["2 threads"] = default_run(("--set-threads", *(f"{rule}=2" for rule in TRAINING_RULES)))
        for name, run in runs.items():
            print(
                f"default run ({name}): {run['wall_s']:.1f} s, {run['jobs']} jobs: snakemake {' '.join(run['command'])}"
            )
        if args.compare_threads:
            print(f"2 threads / default wall time: {runs['2 threads']['wall_s'] / runs['default']['wall_s']:.2f}")
        results["default_runs"] = runs
    if args.out:
        with open(args.out, "w") as out:
            json.dump(results, out, indent=2)


if __name__ == "__main__":
    main()
