"""How long ``enkcvs find-issues --data`` takes per kind of data (view ``rank-speed``: the block
``<file stem>/rank-speed`` of a JSON that ``benchmarks/rank_speed.py`` wrote under ``benchmarks/results/``): the
measured preparation and fold model, the whole ranking projected from them (M x K fold models), scaled to the
projected size, and the whole command where it was timed."""

import json
from pathlib import Path

import pandas as pd

from enkcvs.recording.provenance import duration


def _row(run: dict) -> dict:
    recipe = run["recipe"]
    frozen = " on frozen embeddings" if run.get("text_recipe") == "frozen" else ""  # heads on a text encoder's
    return {
        "kind": run["kind"],
        "samples": f"{run['samples']:,}",
        "recipe": f"{recipe['model']}{frozen}, {recipe['epochs']} epochs",
        "reading and preparing": duration(run["prepare_seconds"]),
        "one fold model": duration(run["fold_model_seconds"]),
        f"all {run['fold_models']} fold models and preparation (projected)": duration(run["projected_seconds"]),
        "whole command (measured)": duration(run["whole_seconds"]) if "whole_seconds" in run else "not run",
        f"at {run['projected_to']:,} samples (projected)": duration(run["projected_seconds_at_target"]),
    }


def rank_speed_view(path: Path, *, paper_config: Path | None = None) -> str:
    """The benchmark's setting (CPU and instruction sets, threads, load, K and M) and a row per kind of data."""
    found = json.loads(Path(path).read_text())
    load = ", ".join(f"{value:.1f}" for value in found["load_average"])
    flags = ", ".join(found["cpu_flags"]) or "none of the listed instruction sets"
    set_limits = found.get("instruction_set_limits", {})
    limits = " ".join(f"{name}={value}" for name, value in set_limits.items())
    limits = f"; kernels limited by {limits}" if limits else ""
    header = (
        f"Ranking speed of {found['date'][:10]} (`{Path(path).name}`) on {found['device']} "
        f"({found['cpu']}: {flags}{limits}), {found['threads']} torch thread(s), load average {load} while it "
        "ran; "
        f"K = {found['K']}, M = {found['M']}, each kind with the command's default recipe:\n\n"
    )
    frame = pd.DataFrame([_row(run) for run in found["runs"]])
    return header + frame.to_markdown(index=False) + "\n"
