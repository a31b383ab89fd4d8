"""Recorded runs, and the README's result tables generated from them (no number in README.md is typed by hand).

A recorded run is a finished run's rendered report copied to ``results/recorded/<name>/`` beside ``provenance.json``:
the config it ran, when, on which machine (CPU model and instruction sets), how long, with which packages and commit.
README.md holds generated blocks between markers::

    <!-- recorded: default/table2.md -->
    ...generated, never edited...
    <!-- /recorded -->

``python -m enkcvs.recorded readme`` (``make readme``) rewrites every block from ``results/recorded/``;
``--check`` only reports blocks that differ (the test suite runs it). A key is ``<run>/<view>``, the view a rendered
file of the run (``table2.md``), one of :data:`VIEWS`, or one of :data:`PAIR_VIEWS` against another run
(``diff:<other run>``: the cells that differ). ``python -m enkcvs.recorded run --name NAME --configfile
FILE`` runs the workflow on a config, timed, and records it; ``compare`` sets two runs' tables side by side.
"""

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from enkcvs.comparison import method_rank
from enkcvs.io import git_state, package_versions
from enkcvs.machine import CPU_FLAGS, cpu_flags, cpu_model, instruction_set_limits
from enkcvs.methods import METHOD_TITLES
from enkcvs.paper import published_results

PathLike = str | Path

#: Rendered files a recorded run keeps (tables as Markdown and CSV, figures as PNG).
RECORDED_SUFFIXES = (".md", ".csv", ".png")
MARKER = re.compile(r"(<!-- recorded: (?P<key>\S+) -->\n)(?P<body>.*?)(<!-- /recorded -->)", re.DOTALL)


def machine() -> dict:
    """The machine a run is recorded on: CPU model, logical cores, memory, the instruction sets in
    :data:`enkcvs.machine.CPU_FLAGS` it has, and the operating system."""
    memory = re.search(r"^MemTotal:\s*(\d+) kB", Path("/proc/meminfo").read_text() if Path("/proc/meminfo").exists()
                       else "", re.MULTILINE)
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "memory_gib": round(int(memory.group(1)) / 2**20, 1) if memory else None,
        "cpu_flags": cpu_flags(),
        "system": platform.platform(),
    }


def record_run(*, name: str, configfile: PathLike, report: PathLike, wall_seconds: float, jobs: int | None,
               command: list[str], root: PathLike = "results/recorded", git: dict | None = None,
               sittings: list[dict] | None = None) -> Path:
    """Copy a finished run's rendered report into ``root/name/`` with its provenance, replacing an earlier record of
    that name as a whole (written beside it, then swapped in, so a failure leaves the old record). ``git`` is the
    checkout's state when the run started (default: now); ``sittings`` the Snakemake invocations the wall time sums
    (:func:`snakemake_sittings`).

    Raises ``FileNotFoundError`` when ``report`` holds no rendered file."""
    report, root = Path(report), Path(root)
    files = sorted(path for path in report.glob("*") if path.suffix in RECORDED_SUFFIXES)
    if not files:
        raise FileNotFoundError(f"{report} holds no rendered table or figure: run the workflow first")
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=root))
    for path in files:
        shutil.copyfile(path, staging / path.name)
    provenance = {
        "name": name,
        "recorded": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "configfile": str(configfile),
        "config": Path(configfile).read_text(),
        "command": command,
        "wall_seconds": round(wall_seconds, 1),
        "jobs": jobs,
        "machine": machine(),
        "instruction_set_limits": instruction_set_limits(),
        "versions": package_versions(),
        "git": git or git_state(),
        "sittings": sittings or [],
    }
    (staging / "provenance.json").write_text(json.dumps(provenance, indent=2, sort_keys=True) + "\n")
    destination = root / name
    old = root / f".{name}.old"
    if destination.exists():
        destination.rename(old)
    staging.rename(destination)
    shutil.rmtree(old, ignore_errors=True)
    return destination


#: Snakemake writes one log per invocation, named by its local start time.
SNAKEMAKE_LOG = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{6}\.\d+)\.snakemake\.log$")
LOG_EVENT = re.compile(r"^\[(\w{3} \w{3} [ \d]\d \d{2}:\d{2}:\d{2} \d{4})\]$", re.MULTILINE)


def snakemake_sittings(*, log_dir: PathLike = ".snakemake/log", since: datetime) -> list[dict]:
    """The Snakemake invocations of a run that took several sittings (killed, then resumed): every log in
    ``log_dir`` started at or after ``since`` (local time, as Snakemake names its logs) that ran a job, with the
    seconds from its start to its last timestamped event (a killed sitting's last event is its last job's start or
    end; the minutes of a job cut off by the kill are lost with it)."""
    found = []
    for path in sorted(Path(log_dir).glob("*.snakemake.log")):
        name = SNAKEMAKE_LOG.match(path.name)
        if not name:
            continue
        start = datetime.strptime(name.group(1), "%Y-%m-%dT%H%M%S.%f")
        if start < since:  # an earlier run's log: not read
            continue
        events = LOG_EVENT.findall(path.read_text(errors="replace"))
        if not events:
            continue
        last = datetime.strptime(" ".join(events[-1].split()), "%a %b %d %H:%M:%S %Y")
        found.append({"log": path.name, "seconds": round(max((last - start).total_seconds(), 0.0), 1)})
    return found


def run_and_record(*, name: str, configfile: PathLike, cores: str, snakemake: str) -> Path:
    """Run the workflow on ``configfile`` through ``workflow/run.sh`` (resuming a killed run), count its jobs (the
    whole DAG's, by a forced dry run) and record the report. The wall time is the sum over the run's sittings
    (:func:`snakemake_sittings`): the first sitting's start is kept in ``.snakemake/recorded/<name>.since`` until
    the record is written, so a run killed and resumed in a later sitting is timed whole. A failed run records
    nothing."""
    environment = {**os.environ, "SNAKEMAKE": snakemake}
    dry = subprocess.run([snakemake, "-n", "--forceall", "--configfile", str(configfile)], capture_output=True,
                         text=True)
    planned = re.search(r"^total\s+(\d+)$", dry.stdout, re.MULTILINE)
    command = ["workflow/run.sh", "--cores", cores, "--configfile", str(configfile)]
    # the workflow that runs is the working directory's (not necessarily this library's checkout), as it is when
    # the run starts: the README may be edited while a long run goes on
    git = git_state(root=Path.cwd())
    since_file = Path(".snakemake/recorded") / f"{name}.since"
    if not since_file.exists():
        since_file.parent.mkdir(parents=True, exist_ok=True)
        since_file.write_text(datetime.now().strftime("%Y-%m-%dT%H:%M:%S") + "\n")
    since = datetime.fromisoformat(since_file.read_text().strip())
    subprocess.run(command, env=environment, check=True)
    runs = snakemake_sittings(since=since)
    record = record_run(name=name, configfile=configfile, report="results/report",
                        wall_seconds=sum(sitting["seconds"] for sitting in runs),
                        jobs=int(planned.group(1)) if planned else 0, command=command, git=git, sittings=runs)
    since_file.unlink()
    return record


def _duration(seconds: float) -> str:
    minutes, seconds = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if hours else f"{minutes} min {seconds} s"


def run_line(run: Path) -> str:
    """One sentence naming a recorded run: when, on what, how long, from which commit."""
    meta = json.loads((run / "provenance.json").read_text())
    host = meta["machine"]
    flags = ", ".join(host["cpu_flags"]) or "none of " + "/".join(CPU_FLAGS)
    commit = meta["git"].get("commit", "unknown")[:7] + (" (dirty)" if meta["git"].get("dirty") else "")
    jobs = f"{meta['jobs']} jobs in " if meta.get("jobs") else ""
    parts = len(meta.get("sittings") or [])
    over = f" (over {parts} sittings, the run killed and resumed)" if parts > 1 else ""
    command = meta.get("command") or []
    asked = command[command.index("--cores") + 1] if "--cores" in command[:-1] else "all"
    cores = f"{host['cores']} cores" if asked == "all" else f"{asked} of the {host['cores']} cores"
    limits = meta.get("instruction_set_limits") or {}
    if limits:
        flags += "; kernels limited by " + ", ".join(f"{key}={value}" for key, value in sorted(limits.items()))
    return (
        f"Run `{meta['name']}` (`{meta['configfile']}`), recorded {meta['recorded']}: {jobs}"
        f"{_duration(meta['wall_seconds'])}{over} of `snakemake` on {cores} of an {host['cpu']} "
        f"({flags}), torch {meta['versions'].get('torch', '?')}, commit {commit}; "
        f"files in `results/recorded/{run.name}/`.\n"
    )


def _ranking(methods: pd.Series, values: pd.Series) -> str:
    """Methods from the best to the worst value, ``=`` between equal values (the paper prints one decimal)."""
    pairs = sorted(zip(values, methods), key=lambda pair: -pair[0])
    text = f"{METHOD_TITLES.get(pairs[0][1], pairs[0][1])} {pairs[0][0]:.1f}"
    for (before, _), (value, method) in zip(pairs, pairs[1:]):
        text += f" {'=' if value == before else '>'} {METHOD_TITLES.get(method, method)} {value:.1f}"
    return text


def table2_ordering(run: Path) -> str:
    """Per setting of the run's Table 2: the methods from best to worst mean, beside the paper's own ordering where
    the setting has a paper cell for every method, and whether E-NKCVS comes first where the paper has it first
    (ties included). The paper does not have it first everywhere: at noise 0 CE ties or beats it (TREC: CE 96.5,
    E-NKCVS 96.4). A setting without paper cells counts as one where the paper's claim (E-NKCVS first) applies."""
    table = pd.read_csv(run / "table2.csv")
    table = table[table["runs"] > 0]
    lines, first, claimed, kept = [], 0, 0, 0
    for (dataset, kind, rate), rows in table.groupby(["dataset", "noise_kind", "noise_rate"], sort=False):
        ours = bool(rows.loc[rows["method"] == "enkcvs", "mean"].max() == rows["mean"].max())
        line = f"- {dataset} {kind} {rate:g}: {_ranking(rows['method'], rows['mean'])}"
        published = rows["published"] if "published" in rows else pd.Series(dtype=float)
        papers = published.notna().all() and not published.empty
        if papers:
            line += f" (paper: {_ranking(rows['method'], published)})"
        paper_first = not papers or bool(published[rows["method"] == "enkcvs"].max() == published.max())
        first += ours
        claimed += paper_first
        kept += ours and paper_first
        lines.append(line)
    verdict = "holds" if kept == claimed else "does not hold" if kept == 0 else "holds in part"
    return (f"E-NKCVS has the best mean in {first} of {len(lines)} settings. The paper has it first (ties included) "
            f"in {claimed} of them, and here it is first in {kept} of those: the paper's ordering {verdict} "
            f"here.\n\n" + "\n".join(lines) + "\n")


def table1_agreement(run: Path) -> str:
    """Whether the run's Table 1 reads like the paper's (high precision) and how close the corrected Theorem 1
    comes to the measured precision and recall."""
    table = pd.read_csv(run / "table1.csv")
    misses = (table["theorem1_precision"] - table["precision"]).abs().gt(2) | (
        table["theorem1_recall"] - table["recall"]).abs().gt(2)
    return (
        f"Selection precision is {table['precision'].min():.1f}-{table['precision'].max():.1f} % and recall "
        f"{table['recall'].min():.1f}-{table['recall'].max():.1f} % over the {len(table)} settings; the corrected "
        f"Theorem 1 is within 2 points of both in {int((~misses).sum())} of them "
        f"(Theorem 1 minus measured recall: {(table['theorem1_recall'] - table['recall']).min():+.1f} to "
        f"{(table['theorem1_recall'] - table['recall']).max():+.1f} points).\n"
    )


def _falls(values: pd.Series) -> bool:
    return bool((values.diff().dropna() <= 0).all())


def table1_trend(run: Path) -> str:
    """Whether the run's selection follows the paper's Table 1 (CIFAR-10 only): precision and recall falling as the
    symmetric noise rate rises, per dataset of the run with at least two symmetric rates."""
    paper = published_results()
    paper = paper[(paper["table"] == 1) & (paper["noise_kind"] == "sym")]
    rates = sorted(paper["noise_rate"].unique())
    ends = {metric: paper[paper["metric"] == metric].set_index("noise_rate")["value"]
            for metric in ("precision", "recall")}
    lines = [f"The paper's Table 1 (CIFAR-10, K = 10, M = 5, t = 2): from symmetric noise {rates[0]:g} to "
             f"{rates[-1]:g}, precision falls from {ends['precision'][rates[0]]:.2f} to "
             f"{ends['precision'][rates[-1]]:.2f} % and recall from {ends['recall'][rates[0]]:.2f} to "
             f"{ends['recall'][rates[-1]]:.2f} %."]
    table = pd.read_csv(run / "table1.csv")
    for dataset, rows in table[table["noise_kind"] == "sym"].groupby("dataset", sort=False):
        rows = rows.sort_values("noise_rate")
        if len(rows) < 2:
            continue
        falls = [metric for metric in ("precision", "recall") if _falls(rows[metric])]
        verdict = ("the paper's trend holds" if len(falls) == 2 else f"only {falls[0]} falls throughout" if falls
                   else "neither falls throughout")
        lines.append(
            f"- {dataset} (K = {rows['K'].iloc[0]}, M = {rows['M'].iloc[0]}, t = {rows['t'].iloc[0]}), symmetric "
            f"{' / '.join(f'{rate:g}' for rate in rows['noise_rate'])}: precision "
            f"{' / '.join(f'{value:.2f}' for value in rows['precision'])}, recall "
            f"{' / '.join(f'{value:.2f}' for value in rows['recall'])}: {verdict}.")
    if len(lines) == 1:
        lines.append("- This run has no dataset with two or more symmetric noise rates.")
    return lines[0] + "\n\n" + "\n".join(lines[1:]) + "\n"


def _setting_labels(frame: pd.DataFrame) -> list[str]:
    """One label per row for a Table 2 setting: ``mnist5k asym 0.4``."""
    return [f"{d} {k} {r:g}" for d, k, r in zip(frame["dataset"], frame["noise_kind"], frame["noise_rate"])]


def ladder_steps(run: Path) -> str:
    """The ablation ladder as steps: how many points each ingredient adds (or loses), per setting."""
    table = pd.read_csv(run / "ablation.csv")
    steps = {
        "noise (CE - CE true)": ("ce_mean", "ce_true_mean"),
        "a perfect selection (CS only - CE)": ("cs_only_mean", "ce_mean"),
        "SS's missed clean samples (CSS only - CS only)": ("css_only_mean", "cs_only_mean"),
        "SS's wrong labels (SS only - CSS only)": ("ss_only_mean", "css_only_mean"),
        "pseudo labels (SS + pseudo - SS only)": ("ss_pseudo_mean", "ss_only_mean"),
        "beta and gamma (E-NKCVS - SS + pseudo)": ("enkcvs_mean", "ss_pseudo_mean"),
        "E-NKCVS - CE true": ("enkcvs_mean", "ce_true_mean"),
    }
    frame = pd.DataFrame({"setting": _setting_labels(table)})
    for title, (a, b) in steps.items():
        frame[title] = [f"{x:+.2f}" for x in table[a] - table[b]]
    return frame.to_markdown(index=False) + "\n"


def ladder_beside(first: Path, second: Path) -> str:
    """The ablation ladders of two recorded runs side by side on the settings they share (view
    ``<second>/ladder-beside:<first>``): each run's fold models, selection, the two losses inside SS, the oracle and
    E-NKCVS, and the strongest baselines of its Table 2."""
    keys = ["dataset", "noise_kind", "noise_rate"]
    rows = []
    for run in (first, second):
        ladder, results = pd.read_csv(run / "ablation.csv"), pd.read_csv(run / "table2.csv")
        config = yaml.safe_load(json.loads((run / "provenance.json").read_text())["config"])
        for row in ladder.itertuples():
            method_means = results[(results["dataset"] == row.dataset) & (results["noise_kind"] == row.noise_kind)
                                   & (results["noise_rate"] == row.noise_rate)].set_index("method")["mean"]
            rows.append({
                "dataset": row.dataset, "noise_kind": row.noise_kind, "noise_rate": row.noise_rate,
                "run": run.name, "model": config["datasets"][row.dataset]["recipe"]["model"],
                "seeds": row.seeds, "out-of-fold acc. %": row.oof_accuracy,
                "precision / recall %": f"{row.precision:.1f} / {row.recall:.1f}",
                "SS's missed clean samples": row.css_only_mean - row.cs_only_mean,
                "SS's wrong labels": row.ss_only_mean - row.css_only_mean,
                "CS only": row.cs_only_mean, "E-NKCVS": row.enkcvs_mean,
                **{METHOD_TITLES[m]: method_means.get(m, np.nan) for m in ("coteaching", "sl")},
            })
    frame = pd.DataFrame(rows)
    shared = frame.groupby(keys)["run"].transform("nunique") == 2
    frame = frame[shared]
    if frame.empty:
        return f"`{second.name}` and `{first.name}` share no setting of the ablation ladder.\n"
    frame.insert(0, "setting", _setting_labels(frame))
    frame = frame.sort_values("setting", kind="stable").drop(columns=keys)
    return frame.to_markdown(index=False, floatfmt=".1f") + "\n"


def _span(values: pd.Series) -> str:
    low, high = f"{values.min():.1f}", f"{values.max():.1f}"
    return low if low == high else f"{low}-{high}"


def noise_cost(run: Path) -> str:
    """What the noise costs each method, with each side's own ceiling taken out (view ``noise-cost``): here, a method's
    test accuracy minus CE's on the true labels (the ablation ladder's ceiling of this data and recipe); in the paper,
    its cell minus the paper's CE at noise 0 on that dataset. Settings with a paper cell only."""
    keys = ["dataset", "noise_kind", "noise_rate"]
    ceiling = pd.read_csv(run / "ablation.csv")[[*keys, "ce_true_mean"]]
    results = pd.read_csv(run / "table2.csv").merge(ceiling, on=keys)
    results = results[results["published"].notna()]
    if results.empty:
        return f"`{run.name}` has no setting with both the ablation ladder and a paper cell.\n"
    paper = published_results()
    clean = paper[(paper["table"] == 2) & (paper["noise_rate"] == 0) & (paper["method"] == "ce")]
    results["paper_ceiling"] = results["paper_dataset"].map(clean.set_index("dataset")["value"])
    results["ours"] = results["mean"] - results["ce_true_mean"]
    results["paper"] = results["published"] - results["paper_ceiling"]
    results["setting"] = _setting_labels(results)
    results["cell"] = [f"{ours:+.1f} ({paper:+.1f})" for ours, paper in zip(results["ours"], results["paper"])]
    frame = results.pivot(index="setting", columns="method", values="cell")
    rank = method_rank(results)
    frame = frame.loc[results["setting"].unique(), sorted(frame.columns, key=rank.get)].rename(columns=METHOD_TITLES)
    ceilings = "; ".join(
        f"{dataset} {_span(group['ce_true_mean'])} % here, {group['paper_dataset'].iloc[0]} "
        f"{group['paper_ceiling'].iloc[0]:.1f} % in the paper"
        for dataset, group in results.groupby("dataset", sort=False))
    return ("Points each method loses to the noise: here its test accuracy minus CE's on the true labels, in "
            f"parentheses the paper's cell minus the paper's CE at noise 0 (ceilings: {ceilings}).\n\n"
            + frame.reset_index().to_markdown(index=False) + "\n")


def ranking_verdict(run: Path) -> str:
    """Per setting, E-NKCVS's label-quality AUPRC against the best cleanlab score's (mean over seeds), and where
    it is not at least as high."""
    table = pd.read_csv(run / "ranking.csv")
    rows = []
    for (dataset, noise), group in table.groupby(["dataset", "noise"], sort=False):
        scores = group.set_index("method")["auprc"]
        cleanlab = scores[scores.index.str.startswith("cleanlab")]
        rows.append({"setting": f"{dataset} {noise}", "E-NKCVS label quality": scores["E-NKCVS label quality"],
                     "votes, then P(given)": scores["E-NKCVS votes, then P(given)"],
                     "best cleanlab": cleanlab.max(), "which": cleanlab.idxmax().removeprefix("cleanlab ")})
    frame = pd.DataFrame(rows)
    frame["difference"] = frame["E-NKCVS label quality"] - frame["best cleanlab"]
    behind = frame[frame["difference"] < 0]
    summary = (f"AUPRC (%) of each ranking of the true label errors: E-NKCVS's label quality is at least as high as "
               f"the best cleanlab score in {len(frame) - len(behind)} of {len(frame)} settings")
    if not behind.empty:
        summary += (f"; behind in {', '.join(behind['setting'])} by {(-behind['difference']).max():.2f} points at "
                    "most")
    return summary + ".\n\n" + frame.to_markdown(index=False, floatfmt=".2f") + "\n"


def theory_misses(run: Path) -> str:
    """Every selection of the run where the corrected Theorem 1 misses the measured precision or recall by more than
    2 points, beside the evidence of correlated iterations (agreement and all-wrong shares, measured against their
    values under independence)."""
    table = pd.read_csv(run / "theory.csv")
    missed = table[(table["precision_gap"].abs() > 2) | (table["recall_gap"].abs() > 2)]
    if missed.empty:
        return "Theorem 1 is within 2 points of every measured precision and recall of this run.\n"
    columns = {"dataset": "dataset", "noise": "noise", "seed": "seed", "K": "K", "M": "M", "t": "t",
               "precision_gap": "precision: Theorem 1 - measured", "recall_gap": "recall: Theorem 1 - measured",
               "agreement": "agreement %", "agreement_independent": "if independent %",
               "all_wrong": "all wrong %", "all_wrong_independent": "if independent % "}
    return missed[list(columns)].rename(columns=columns).to_markdown(index=False, floatfmt=".2f") + "\n"


def run_difference(first: Path, second: Path) -> str:
    """How the tables of two recorded runs differ (view ``<second>/diff:<first>``): a summary line, the differences
    in Tables 1-2 beside the spread over seeds, then per table the differing cells and the largest difference."""
    frame = compare_runs(first, second)
    cells, differ = int(frame["cells"].sum()), int(frame["differ"].sum())
    summary = (f"`{second.name}` against `{first.name}`: {differ} of {cells} numeric table cells differ "
               f"({len(frame['table'].unique())} tables).\n")
    changed = frame[frame["differ"] > 0]
    if changed.empty:
        return summary
    largest = changed.loc[changed.groupby("table")["max_abs_difference"].idxmax()].set_index("table")
    per_table = pd.DataFrame({
        "cells": frame.groupby("table")["cells"].sum(),
        "differ": frame.groupby("table")["differ"].sum(),
        "largest difference": largest["max_abs_difference"],
        "in column": largest["column"],
    }).dropna().reset_index()
    return summary + _tolerance(first, second) + "\n" + per_table.to_markdown(index=False, floatfmt=".4g") + "\n"


def _tolerance(first: Path, second: Path) -> str:
    """The differences a reader of Tables 1-2 meets, beside the spread over seeds of the same Table 2 cells."""
    lines = []
    if (first / "table2.csv").exists() and (second / "table2.csv").exists():
        a, b = pd.read_csv(first / "table2.csv"), pd.read_csv(second / "table2.csv")
        if len(a) == len(b):
            shift = (a["mean"] - b["mean"]).abs()
            lines.append(f"Table 2 test accuracy: means differ by up to {shift.max():.2f} points (median "
                         f"{shift.median():.2f}); the std over seeds of the same cells is up to "
                         f"{a['std'].max():.2f} (median {a['std'].median():.2f}).")
    if (first / "table1.csv").exists() and (second / "table1.csv").exists():
        a, b = pd.read_csv(first / "table1.csv"), pd.read_csv(second / "table1.csv")
        if len(a) == len(b):
            rates = max((a[c] - b[c]).abs().max() for c in ("precision", "recall"))
            lines.append(f"Table 1 selection: precision and recall differ by up to {rates:.2f} points, "
                         f"|SS| by up to {(a['SS'] - b['SS']).abs().max():g} samples (mean over seeds).")
    return "".join(f"- {line}\n" for line in lines)


#: Views of a recorded run computed from its files, beside the files themselves.
VIEWS: dict[str, Callable[[Path], str]] = {
    "run": run_line,
    "table1-agreement": table1_agreement,
    "table1-trend": table1_trend,
    "table2-ordering": table2_ordering,
    "ladder-steps": ladder_steps,
    "noise-cost": noise_cost,
    "theory-misses": theory_misses,
    "ranking-verdict": ranking_verdict,
}

#: Views that set a recorded run against another: ``<run>/<view>:<other run>``.
PAIR_VIEWS: dict[str, Callable[[Path, Path], str]] = {
    "diff": run_difference,
    "ladder-beside": ladder_beside,
}


def render_block(key: str, *, root: PathLike = "results/recorded") -> str:
    """The generated text of the README block ``key`` (``<run>/<view or file>``)."""
    name, _, view = key.partition("/")
    run = Path(root) / name
    if not (run / "provenance.json").exists():
        raise FileNotFoundError(f"README block {key!r}: no recorded run {run}; record it with "
                                f"`python -m enkcvs.recorded run --name {name} --configfile ...`")
    if view in VIEWS:
        return VIEWS[view](run)
    pair_view, _, other_name = view.partition(":")
    if pair_view in PAIR_VIEWS:
        other = Path(root) / other_name
        if not (other / "provenance.json").exists():
            raise FileNotFoundError(f"README block {key!r}: no recorded run {other} to set {name} against")
        return PAIR_VIEWS[pair_view](other, run)
    path = run / view
    if not path.exists():
        raise FileNotFoundError(f"README block {key!r}: {path} does not exist; views: {sorted(VIEWS)}, "
                                f"{[v + ':<run>' for v in PAIR_VIEWS]} or a file")
    return path.read_text().rstrip("\n") + "\n"


def regenerate(text: str, *, root: PathLike = "results/recorded") -> tuple[str, list[str]]:
    """``text`` with every recorded block regenerated, and the keys of the blocks that changed."""
    changed = []

    def replace(match: re.Match) -> str:
        body = render_block(match["key"], root=root)
        if body != match["body"]:
            changed.append(match["key"])
        return match.group(1) + body + match.group(4)

    return MARKER.sub(replace, text), changed


#: Tables of measurements of the run itself (job time and memory), which differ between any two runs: not results.
MEASURED_TABLES = ("resources.csv",)


def compare_runs(first: PathLike, second: PathLike) -> pd.DataFrame:
    """Every numeric column of every CSV result table two runs share (:data:`MEASURED_TABLES` left out): how many
    cells differ and by how much at most."""
    rows = []
    for path in sorted(Path(first).glob("*.csv")):
        other = Path(second) / path.name
        if not other.exists() or path.name in MEASURED_TABLES:
            continue
        a, b = pd.read_csv(path), pd.read_csv(other)
        if a.shape != b.shape:
            rows.append({"table": path.name, "column": "(shape)", "cells": a.size, "differ": a.size,
                         "max_abs_difference": np.nan})
            continue
        for column in a.select_dtypes("number"):
            x, y = a[column].to_numpy(float), b[column].to_numpy(float)
            differ = ~((x == y) | (np.isnan(x) & np.isnan(y)))
            rows.append({"table": path.name, "column": column, "cells": len(x), "differ": int(differ.sum()),
                         "max_abs_difference": float(np.nanmax(np.abs(x - y))) if differ.any() else 0.0})
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m enkcvs.recorded", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run the workflow on a config, timed, and record its report")
    run.add_argument("--name", required=True, help="the record's folder under results/recorded/")
    run.add_argument("--configfile", required=True, type=Path)
    run.add_argument("--cores", default="all")
    run.add_argument("--snakemake", default=str(Path(sys.executable).with_name("snakemake")))
    readme = commands.add_parser("readme", help="regenerate README.md's recorded blocks")
    readme.add_argument("--check", action="store_true", help="only report blocks that differ (exit 1)")
    readme.add_argument("--readme", type=Path, default=Path("README.md"))
    compare = commands.add_parser("compare", help="how the tables of two runs' report folders differ")
    compare.add_argument("first", type=Path)
    compare.add_argument("second", type=Path)
    args = parser.parse_args(argv)
    if args.command == "run":
        if not args.configfile.exists():
            parser.error(f"--configfile {args.configfile} does not exist")
        print(run_and_record(name=args.name, configfile=args.configfile, cores=args.cores, snakemake=args.snakemake))
        return 0
    if args.command == "compare":
        print(compare_runs(args.first, args.second).to_markdown(index=False))
        return 0
    text = args.readme.read_text()
    try:
        new, changed = regenerate(text)
    except FileNotFoundError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.check:
        for key in changed:
            print(f"{args.readme}: block {key!r} differs from results/recorded/; run `make readme`", file=sys.stderr)
        return 1 if changed else 0
    args.readme.write_text(new)
    print(f"{args.readme}: {len(changed)} block(s) regenerated" + (f": {', '.join(changed)}" if changed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
