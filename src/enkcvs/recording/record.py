"""Recording a finished run: its rendered report copied to ``results/recorded/<name>/`` beside ``provenance.json``
(the config it ran, when, on which machine, how long, with which packages and commit, on which data), and its merged
label-issue rankings kept with it. Every result number of the generated pages comes from such a record
(:mod:`enkcvs.report.pages`); :mod:`enkcvs.recording.provenance` reads one back."""

import hashlib
import json
import shutil
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import yaml

from enkcvs.data.datasets import load_dataset
from enkcvs.data.sources import get_source
from enkcvs.io import PathLike, atomic_folder, git_state, package_versions, read_table
from enkcvs.machine import instruction_set_limits, machine_description
from enkcvs.pipeline.layout import DATASET
from enkcvs.recording.provenance import RUN_HOME

#: Rendered files a recorded run keeps (tables as Markdown and CSV, figures as PNG).
RECORDED_SUFFIXES = (".md", ".csv", ".png")
#: Where a run's label-issue rankings merged over its seeds lie: ``<dataset>/<noise>/`` below it.
ISSUES = Path("results/issues")


def keep_label_issues(*, issues: PathLike, into: PathLike) -> None:
    """Copy every merged label-issue ranking of ``issues`` (``<dataset>/<noise>/``, not the seeds' own) into
    ``into/issues/<dataset>/<noise>/``: its rendered files (summary, review sheets, cleanlab beside it) and, as
    ``label_issues.csv``, the rows it does not keep (the full ranking of every sample stays with the run)."""
    for table in sorted(Path(issues).glob("*/*/label_issues.parquet")):
        kept = Path(into) / "issues" / table.parent.relative_to(issues)
        kept.mkdir(parents=True)
        for path in sorted(table.parent.iterdir()):
            if path.is_file() and path.suffix in RECORDED_SUFFIXES:
                shutil.copyfile(path, kept / path.name)
        ranking = read_table(table)[0]
        flagged = ~ranking["kept"] if "kept" in ranking else ranking["is_label_issue"]  # the latter: older tables
        ranking[flagged].to_csv(kept / "label_issues.csv", index=False)


def record_run(
    *,
    name: str,
    configfile: PathLike,
    report: PathLike,
    wall_seconds: float,
    jobs: int | None,
    command: list[str],
    root: PathLike = RUN_HOME,
    git: dict | None = None,
    invocations: list[dict] | None = None,
    data: dict | None = None,
    issues: PathLike | None = None,
) -> Path:
    """Copy a finished run's rendered report into ``root/name/`` with its provenance, and with ``issues`` (a run's
    ``results/issues``) its merged label-issue rankings (:func:`keep_label_issues`), replacing an earlier record of
    that name as a whole (written beside it, then swapped in, so a failure leaves the old record). ``git`` is the
    checkout's state when the run started (default: now); ``invocations`` the Snakemake invocations the wall
    time sums (:func:`enkcvs.recording.run.snakemake_invocations`); ``data`` what it trained on
    (:func:`data_provenance`).

    Raises ``FileNotFoundError`` when ``report`` holds no rendered file."""
    report, root = Path(report), Path(root)
    files = sorted(path for path in report.glob("*") if path.suffix in RECORDED_SUFFIXES)
    if not files:
        raise FileNotFoundError(f"{report} holds no rendered table or figure: run the workflow first")
    with atomic_folder(root / name) as staging:
        for path in files:
            shutil.copyfile(path, staging / path.name)
        if issues is not None:
            keep_label_issues(issues=issues, into=staging)
        provenance = {
            "name": name,
            "recorded": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "configfile": str(configfile),
            "config": Path(configfile).read_text(),
            "command": command,
            "wall_seconds": round(wall_seconds, 1),
            "jobs": jobs,
            "machine": machine_description(),
            "instruction_set_limits": instruction_set_limits(),
            "versions": package_versions(),
            "git": git or git_state(),
            "invocations": invocations or [],
            "data": data or {},
        }
        (staging / "provenance.json").write_text(json.dumps(provenance, indent=2, sort_keys=True) + "\n")
    return root / name


def data_provenance(*, configfile: PathLike) -> dict:
    """What a finished run trained on, per dataset of ``configfile``: its built file
    (:data:`enkcvs.pipeline.layout.DATASET`, relative to the working directory) with the file's SHA-256 and what built
    it (source, options, commit), and, where the source checks data against published checksums
    (:attr:`enkcvs.data.sources.Source.check`: the official MNIST's), that check made on the very arrays the run trained
    on. A dataset not built is listed as missing."""
    datasets = (yaml.safe_load(Path(configfile).read_text()) or {}).get("datasets") or {}
    found = {}
    for name, entry in datasets.items():
        path = Path(DATASET.format(dataset=name))
        if not path.is_file():
            found[name] = {"file": str(path), "missing": True}
            continue
        with open(path, "rb") as handle:
            digest = hashlib.file_digest(handle, "sha256").hexdigest()
        with np.load(path) as arrays:
            built = json.loads(str(arrays["provenance"]))
        found[name] = {
            "file": str(path),
            "sha256": digest,
            "source": entry["source"],
            "built": {key: built.get(key) for key in ("source", "options", "git", "code")},
        }
        check = get_source(entry["source"]).check
        if check is not None:
            found[name]["check"] = check(load_dataset(path))
    return found
