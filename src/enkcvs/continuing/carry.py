"""Carry an unfinished run to another machine: its finished jobs saved to a folder or archive, restored elsewhere.

A run of many hours may outlive the machine it started on (a cluster job's time limit, a laptop needed back, a
preempted cloud instance). :func:`save_run` copies what a run has finished into a folder or archive the user names
(shared storage, a disk to take along; never the repository: unfinished runs' checkpoints have no place in its
history); on the next machine :func:`restore_run` rebuilds from it what is cheap (the datasets and noisy labels, by
Snakemake with the training rules omitted) and puts the finished jobs back so that Snakemake reruns none of them,
and the recorder (:func:`enkcvs.recording.run.run_and_record`) goes on from there, timing the run over every
Snakemake invocation and machine, and listing each save's machine and commit in the record's provenance.

What is carried: every output Snakemake's ``--summary`` calls up to date, of every rule that depends on a training
rule (fold models, final models and what sits between them: selections, cleanlab's kept sets), with each one's log,
benchmark file and Snakemake metadata record (so a later change of its params or rule still reruns it), the
Snakemake logs the run's wall time is summed from, and the epoch checkpoints of the training jobs still going
(:mod:`enkcvs.training.resume`: they go on from their last epoch there). The datasets are not: they can be tens of
megabytes and are rebuilt byte for byte from their sources. ``manifest.json`` lists every carried file with its SHA-256,
in the order the run wrote them; a restore refuses a carried file whose checksum differs, and gives the files fresh
modification times in that order, all after the rebuilt inputs, so Snakemake's timestamps agree with its DAG.
"""

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

from enkcvs.io import PathLike, atomic_folder, atomic_path, git_state
from enkcvs.machine import machine_description
from enkcvs.training.resume import SUFFIX, checkpoint_path

#: A save named with one of these endings is written as that archive (:func:`shutil.make_archive`'s formats).
ARCHIVES = {".tar": "tar", ".tar.gz": "gztar", ".tgz": "gztar"}
#: The rules that train models: the expensive jobs a carried run must not repeat.
TRAINING_RULES = ("train_fold", "train_final_baseline", "train_final_selected")
#: The rules that train several models in one job, one rule per group of settings and named after it
#: (workflow/rules/{folds,final}.smk: config training_jobs, stacked_folds, stacked_finals), begin with these.
GROUPED_TRAINING_RULES = ("train_selection_", "train_finals_")
#: Where those rules write their outputs (and, while they train, their epoch checkpoints).
TRAINING_OUTPUTS = ("results/folds/", "results/final/")
#: Snakemake's working state in a working directory, and where a carried run keeps its parts of it.
SNAKEMAKE_STATE = {"metadata": ".snakemake/metadata", "invocations": ".snakemake/log"}
#: Snakemake writes one log per invocation, named by its local start time.
SNAKEMAKE_LOG = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{6}\.\d+)\.snakemake\.log$")


def since_file(name: str) -> Path:
    """The file holding when a recorded run's first Snakemake invocation began
    (:func:`enkcvs.recording.run.run_and_record`)."""
    return Path(".snakemake/recorded") / f"{name}.since"


def saves_file(name: str) -> Path:
    """The saves that brought the run in this working directory where it is: those of the save it was restored
    from, then each of its own (:func:`carried_saves`)."""
    return Path(".snakemake/recorded") / f"{name}.saves.json"


def carried_saves(name: str) -> list[dict]:
    """Every save of the run ``name`` in this working directory so far (:func:`saves_file`): those of the save it
    was restored from, then each of its own; none for a run that never moved."""
    return json.loads(saves_file(name).read_text()) if saves_file(name).is_file() else []


def check_outside_working_directory(path: PathLike, *, option: str) -> Path:
    """``path``, a save's place given as ``option``; ValueError where it lies inside the working directory, whose
    ``make clean`` would remove it and whose git checkout would carry its checkpoints in every clone's history."""
    if Path(path).resolve().is_relative_to(Path.cwd().resolve()):
        raise ValueError(f"{option} {path} lies inside the working directory {Path.cwd()}: save the run outside it "
                         f"(shared storage, another disk), e.g. {option} ../saves/{Path(path).name}")
    return Path(path)


def archive_format(path: PathLike) -> str | None:
    """The archive format a save at ``path`` is written in (:data:`ARCHIVES`), or None for a folder."""
    return next((kind for ending, kind in ARCHIVES.items() if str(path).endswith(ending)), None)


def _write_saves(name: str, saves: list[dict]) -> None:
    saves_file(name).parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(saves_file(name)) as tmp:
        tmp.write_text(json.dumps(saves, indent=2) + "\n")


def snakemake_logs(*, since: datetime,
                   log_dir: PathLike = SNAKEMAKE_STATE["invocations"]) -> list[tuple[Path, datetime]]:
    """Snakemake's logs in ``log_dir`` that started at or after ``since`` (local time, as Snakemake names them: a
    run's invocations, not an earlier run's), in order, each with its start."""
    found = []
    for path in sorted(Path(log_dir).glob("*.snakemake.log")):
        name = SNAKEMAKE_LOG.match(path.name)
        if name and (start := datetime.strptime(name.group(1), "%Y-%m-%dT%H%M%S.%f")) >= since:
            found.append((path, start))
    return found


def is_training_rule(rule: str) -> bool:
    """Whether ``rule`` trains models (:data:`TRAINING_RULES`, :data:`GROUPED_TRAINING_RULES`)."""
    return rule in TRAINING_RULES or rule.startswith(GROUPED_TRAINING_RULES)


def training_rules(*, snakemake: Sequence[str], configfile: PathLike) -> list[str]:
    """The training rules of the config's workflow: the grouped ones are named after its settings."""
    return [rule for rule in _snakemake(snakemake, configfile, "--list-rules").split() if is_training_rule(rule)]


def benchmark_file(output: str, rule: str) -> str:
    """The benchmark file of the training job of ``rule`` that wrote ``output``, as ``workflow/rules/{folds,
    final}.smk`` declare them: ``results/<stage>/<path>.<suffix>`` -> ``results/benchmarks/<stage>/<path>.tsv`` for
    a job of one model; one file per selection (``.../seed<s>/K<K>/selection.tsv``) or per setting
    (``.../seed<s>/finals.tsv``) for a job of several."""
    path = Path(output).relative_to("results")
    if rule.startswith("train_selection_"):  # folds/<dataset>/<noise>/seed<s>/K<K>/m<m>/k<k>.parquet
        return str(Path("results/benchmarks", *path.parts[:5], "selection.tsv"))
    if rule.startswith("train_finals_"):  # final/<dataset>/<noise>/seed<s>/[K/M/t/]<method>.json
        return str(Path("results/benchmarks", *path.parts[:4], "finals.tsv"))
    return str(Path("results/benchmarks") / path.with_suffix(".tsv"))


def metadata_file(output: str) -> Path:
    """Snakemake's metadata record of ``output`` in its file-based store: the path, URL-safe base64 encoded."""
    return Path(SNAKEMAKE_STATE["metadata"]) / base64.urlsafe_b64encode(output.encode()).decode()


def _snakemake(snakemake: Sequence[str], configfile: PathLike, *args: str) -> str:
    done = subprocess.run([*snakemake, "--configfile", str(configfile), *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(done.args)} failed:\n{done.stderr[-3000:]}")
    return done.stdout


def upstream_rules(*, snakemake: Sequence[str], configfile: PathLike) -> set[str]:
    """The rules of the whole run that do not depend on a training rule (datasets, noisy labels, their tables): what
    a restore rebuilds instead of carrying."""
    stats = _snakemake(snakemake, configfile, "-n", "--forceall", "--omit-from",
                       *training_rules(snakemake=snakemake, configfile=configfile))
    return {rule for rule, _ in re.findall(r"^(\w+)\s+(\d+)$", stats, re.MULTILINE)} - {"total"}


def job_outputs(*, snakemake: Sequence[str], configfile: PathLike) -> list[tuple[str, str, list[str], str]]:
    """Every output of the run's jobs that depend on a training rule, as Snakemake's ``--summary`` lists them:
    (output, rule, logs, status), status ``ok`` when it is up to date."""
    upstream = upstream_rules(snakemake=snakemake, configfile=configfile)
    outputs = []
    for line in _snakemake(snakemake, configfile, "--summary").splitlines():
        fields = line.split("\t")
        if len(fields) != 6 or fields[0] == "output_file":
            continue
        output, _, rule, logs, status, _ = fields
        if rule not in upstream:
            outputs.append((output, rule, [log for log in logs.split(",") if log and log != "-"], status))
    return outputs


def finished_files(outputs: Sequence[tuple[str, str, list[str], str]]) -> list[str]:
    """Every file of the finished jobs among ``outputs`` (:func:`job_outputs`): each up-to-date output, its logs and,
    for a training job, its benchmark file. Paths relative to the working directory."""
    files = []
    for output, rule, logs, status in outputs:
        if status != "ok" or not Path(output).is_file():
            continue
        files.append(output)
        files += [log for log in logs if Path(log).is_file()]
        if is_training_rule(rule) and Path(benchmark_file(output, rule)).is_file():
            files.append(benchmark_file(output, rule))
    return list(dict.fromkeys(files))


def in_flight_checkpoints(outputs: Sequence[tuple[str, str, list[str], str]]) -> list[str]:
    """The epoch checkpoints of the run's training jobs among ``outputs`` (:func:`job_outputs`) not finished yet (a
    finished job removes its own). Only this run's: a checkpoint of another run in the same working directory stays
    out, whatever its folder."""
    return sorted({str(checkpoint_path(output)) for output, rule, _, status in outputs
                   if is_training_rule(rule) and status != "ok" and checkpoint_path(output).is_file()})


def _sha256(path: Path) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _carry_invocations(name: str, staging: Path) -> list[str]:
    """Copy the run's start and the Snakemake logs of its invocations since (what the recorder sums its wall time
    over) into ``staging``; returns the logs' names."""
    since = since_file(name)
    if not since.is_file():
        return []
    shutil.copyfile(since, staging / "since")
    (staging / "invocations").mkdir()
    logs = [log for log, _ in snakemake_logs(since=datetime.fromisoformat(since.read_text().strip()))]
    for log in logs:
        shutil.copyfile(log, staging / "invocations" / log.name)
    return [log.name for log in logs]


def save_run(*, name: str, snakemake: Sequence[str], configfile: PathLike, to: PathLike) -> Path:
    """Copy what the run in the working directory has finished into the folder ``to`` (or, where its name ends in
    ``.tar``, ``.tar.gz`` or ``.tgz``, that archive of it), replacing an earlier save there as a whole (written beside
    it, then swapped in), with ``manifest.json``: the files, their SHA-256 in the order they were written, and every
    save so far (when, machine, commit, how many training jobs, how many unfinished ones with an epoch checkpoint).
    The run may be going on: a job that finishes during the save is carried by the next one. Returns ``to``.

    Raises ``FileNotFoundError`` when the run has finished no job a restore could not rebuild, and ``ValueError``
    when ``to`` lies inside this working directory (``make clean`` would remove it, and a git checkout would track
    it)."""
    to = check_outside_working_directory(to, option="--to")
    outputs = job_outputs(snakemake=snakemake, configfile=configfile)
    files = finished_files(outputs)
    if not files:
        raise FileNotFoundError(f"the run of {configfile} here has finished no training job yet: nothing to carry")
    files.sort(key=lambda path: os.stat(path).st_mtime_ns)
    kind = archive_format(to)
    if kind is None:
        with atomic_folder(to) as staging:
            saves = _stage(staging, name=name, configfile=configfile, files=files, outputs=outputs)
    else:
        with tempfile.TemporaryDirectory() as staging, atomic_path(to) as tmp:
            saves = _stage(Path(staging), name=name, configfile=configfile, files=files, outputs=outputs)
            shutil.move(shutil.make_archive(str(tmp), kind, root_dir=staging), tmp)
    _write_saves(name, saves)
    return to


def _stage(staging: Path, *, name: str, configfile: PathLike, files: list[str],
           outputs: Sequence[tuple[str, str, list[str], str]]) -> list[dict]:
    """Write a save of the run (:func:`save_run`) into the empty folder ``staging``; returns its saves so far."""
    for path in files:
        (staging / "files" / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, staging / "files" / path)
        record = metadata_file(path)
        if record.is_file():
            (staging / "metadata").mkdir(exist_ok=True)
            shutil.copyfile(record, staging / "metadata" / record.name)
    training_jobs = sum(1 for path in files if path.startswith(TRAINING_OUTPUTS))
    checkpoints = []
    for path in in_flight_checkpoints(outputs):
        (staging / "files" / path).parent.mkdir(parents=True, exist_ok=True)
        try:
            shutil.copyfile(path, staging / "files" / path)
        except FileNotFoundError:  # its job finished meanwhile; the next save carries the output
            continue
        checkpoints.append(path)
    invocations = _carry_invocations(name, staging)
    manifest = {
        "name": name,
        "configfile": str(configfile),
        "files": {path: _sha256(staging / "files" / path) for path in [*files, *checkpoints]},
        "saves": [*carried_saves(name), {
            "saved": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "training_jobs": training_jobs,
            "in_flight_checkpoints": len(checkpoints),
            "invocations": invocations,
            "machine": machine_description(),
            "git": git_state(root=Path.cwd()),
        }],
    }
    (staging / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest["saves"]


def _went_on_from(name: str, manifest: dict) -> bool:
    """Whether the run here began with the saves of ``manifest`` and still holds every finished file it carries (an
    epoch checkpoint of it may have moved on or been removed by its finished job)."""
    here = carried_saves(name)
    if not here or here[:len(manifest["saves"])] != manifest["saves"]:
        return False
    return all(Path(path).is_file() and _sha256(Path(path)) == digest
               for path, digest in manifest["files"].items() if not path.endswith(SUFFIX))


def restore_run(*, name: str, snakemake: Sequence[str], configfile: PathLike, source: PathLike,
                cores: str = "all") -> int:
    """Put the run saved in the folder or archive ``source`` (:func:`save_run`) back into the working directory:
    check every carried file against its SHA-256 first, then rebuild the rules that do not depend on training
    (Snakemake with the training rules omitted), then copy the carried files in, newer than those rebuilt inputs and
    in the order they were written, with their Snakemake metadata, logs and the logs of the run's earlier
    invocations. Returns how many files were restored.

    Raises ``FileNotFoundError`` when ``source`` holds no saved run, and ``ValueError``, before anything is written,
    when it holds another run, when a carried file is damaged or when a file here differs from its carried copy (a
    run going on here would be overwritten).

    A working directory that already went on from this save (restored from it or saved to it, every finished file it
    carries here unchanged) restores nothing and returns 0, as restoring would bring back older copies of what went
    on here: a job script may restore before every ``run``, and a requeued job goes on from its own working
    directory."""
    source = Path(source)
    if archive_format(source) is not None and source.is_file():
        with tempfile.TemporaryDirectory() as unpacked:
            shutil.unpack_archive(source, unpacked, filter="data")
            return _restore(name=name, snakemake=snakemake, configfile=configfile, folder=Path(unpacked),
                            cores=cores, shown=source)
    return _restore(name=name, snakemake=snakemake, configfile=configfile, folder=source, cores=cores, shown=source)


def _restore(*, name: str, snakemake: Sequence[str], configfile: PathLike, folder: Path, cores: str,
             shown: Path) -> int:
    """:func:`restore_run` from the save unpacked in ``folder`` (``shown`` in messages)."""
    if not (folder / "manifest.json").is_file():
        raise FileNotFoundError(f"{shown} holds no saved run: save one with `python -m enkcvs.runs carry --name "
                                f"{name} --configfile {configfile} --to {shown}`")
    manifest = json.loads((folder / "manifest.json").read_text())
    if manifest["name"] != name:
        raise ValueError(f"{shown} holds the run {manifest['name']!r}, not {name!r}: restore it with --name "
                         f"{manifest['name']}")
    if _went_on_from(name, manifest):
        return 0
    damaged = [path for path, digest in manifest["files"].items() if _sha256(folder / "files" / path) != digest]
    if damaged:
        raise ValueError(f"{len(damaged)} carried file(s) of {shown} differ from their SHA-256 in manifest.json, "
                         f"e.g. {damaged[0]}: copy the save again from where it was written")
    differing = [path for path, digest in manifest["files"].items()
                 if Path(path).is_file() and _sha256(Path(path)) != digest]
    if differing:
        raise ValueError(f"{len(differing)} file(s) here differ from the carried run {name}, e.g. {differing[0]}: "
                         "restore into a working directory without that run's outputs (make clean)")
    _snakemake(snakemake, configfile, "--cores", cores, "--omit-from",
               *training_rules(snakemake=snakemake, configfile=configfile))
    start = time.time() + 1.0
    for rank, path in enumerate(manifest["files"]):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(folder / "files" / path, path)
        os.utime(path, (start + rank / 1000, start + rank / 1000))
    for part, home in SNAKEMAKE_STATE.items():
        if (folder / part).is_dir():
            Path(home).mkdir(parents=True, exist_ok=True)
            for saved in (folder / part).iterdir():
                shutil.copyfile(saved, Path(home) / saved.name)
    _write_saves(name, manifest["saves"])
    since = since_file(name)
    if (folder / "since").is_file() and not since.is_file():
        since.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(folder / "since", since)
    return len(manifest["files"])
