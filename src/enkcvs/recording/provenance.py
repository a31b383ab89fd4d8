"""A recorded run's provenance read back: where recorded runs live, the config it ran with, and the sentence that
names it (view ``run``)."""

import json
from pathlib import Path

import yaml

from enkcvs.machine import CPU_FLAGS

#: Where recorded runs live, relative to the repository root: the runs the pages cite as results, as evidence of
#: reproducibility and as speed comparisons (a run only history cites is retired: :mod:`enkcvs.recording.retire`).
RUN_HOME = "results/recorded"


def _location(run: Path) -> str:
    """Where a run lives, as the pages name it: its home (:data:`RUN_HOME`) and name."""
    folder = run.parent.as_posix()
    home = RUN_HOME if folder == RUN_HOME or folder.endswith("/" + RUN_HOME) else run.parent.name
    return f"{home}/{run.name}"


def duration(seconds: float) -> str:
    """Seconds as the pages print a wall time: ``9.8 s``, ``6 min 40 s``, ``6 h 13 min``."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, seconds = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if hours else f"{minutes} min {seconds} s"


def _gpus(host: dict) -> str:
    """The words naming a machine's GPUs, its training jobs having run on the first (' with an NVIDIA H100 ...');
    nothing for a machine without."""
    gpus = host.get("gpus") or []
    return f" with {len(gpus)} GPUs ({', '.join(gpus)})" if len(gpus) > 1 else f" with an {gpus[0]}" if gpus else ""


def run_line(run: Path) -> str:
    """One sentence naming a recorded run: when, on what, how long, from which commit, where its files are; then, for
    a run carried between machines (:mod:`enkcvs.continuing.carry`), which machine had trained how much at each save;
    then one per dataset its source checked (:func:`enkcvs.recording.record.data_provenance`)."""
    return run_sentence(json.loads((run / "provenance.json").read_text()), files=f"files in `{_location(run)}/`")


def run_sentence(meta: dict, *, files: str) -> str:
    """:func:`run_line`'s sentences from a run's provenance ``meta``, ``files`` saying where its files are."""
    host = meta["machine"]
    flags = ", ".join(host["cpu_flags"]) or "none of " + "/".join(CPU_FLAGS)
    commit = meta["git"].get("commit", "unknown")[:7] + (" (dirty)" if meta["git"].get("dirty") else "")
    jobs = f"{meta['jobs']} jobs in " if meta.get("jobs") else ""
    parts = len(meta.get("invocations") or [])
    # a run given targets to build first invokes Snakemake once per group and once for the rest, uninterrupted
    planned = len(meta.get("first") or []) + 1
    over = (
        f" (over {parts} invocations, the run killed and resumed)"
        if parts > planned
        else f" (in {parts} Snakemake invocations: the targets asked for first, then the rest)"
        if parts > 1
        else ""
    )
    command = meta.get("command") or []
    asked = command[command.index("--cores") + 1] if "--cores" in command[:-1] else "all"
    cores = f"{host['cores']} cores" if asked == "all" else f"{asked} of the {host['cores']} cores"
    limits = meta.get("instruction_set_limits") or {}
    if limits:
        flags += "; kernels limited by " + ", ".join(f"{key}={value}" for key, value in sorted(limits.items()))
    saves = meta.get("carried") or []
    carried = (
        (
            " Carried between machines: "
            + "; ".join(
                f"{save['training_jobs']} training job{'s' * (save['training_jobs'] != 1)} done when saved {save['saved']} "
                f"on an {save['machine']['cpu']} "
                f"({', '.join(save['machine']['cpu_flags'])}){_gpus(save['machine'])}, commit {save['git'].get('commit', 'unknown')[:7]}"
                for save in saves
            )
            + "."
        )
        if saves
        else ""
    )
    checked = "".join(
        f" Dataset `{name}` (source `{data['source']}`) checked against {data['check']['check']} it trained on: "
        + ("passed." if data["check"]["passed"] else f"FAILED ({'; '.join(data['check']['problems'])}).")
        for name, data in (meta.get("data") or {}).items()
        if "check" in data
    )
    return (
        f"Run `{meta['name']}` (`{meta['configfile']}`), recorded {meta['recorded']}: {jobs}"
        f"{duration(meta['wall_seconds'])}{over} of `snakemake` on {cores} of an {host['cpu']} "
        f"({flags}){_gpus(host)}, torch {meta['versions'].get('torch', '?')}, commit {commit}; "
        f"{files}.{carried}{checked}\n"
    )


def recorded_config(run: Path) -> dict:
    """The config a recorded run ran with, as its provenance keeps it."""
    return yaml.safe_load(json.loads((run / "provenance.json").read_text())["config"])
