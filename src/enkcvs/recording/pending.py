"""Record what is pending, within a time limit: a list of configs in priority order, each recorded whole
(``results/recorded/<config name>``) or not at all, a later call going on where an earlier one stopped.

For a machine held for a while (a GPU node's allocation, a preemptible instance): ``python -m enkcvs.runs pending
--time-limit 9m config/a.yaml config/b.yaml`` skips every config recorded already, runs the first one that is not
under the limit (:func:`enkcvs.recording.run.run_and_record`) and, once it is recorded, the next, until the list
is done or the time is up. A run stopped at the limit keeps its finished jobs and epoch checkpoints in the working
directory, where the next call goes on with them; with ``saves``, a folder outside the working directory (shared
storage, or whatever the next machine will see), it is also saved there as ``<name>.tar.gz``
(:func:`enkcvs.continuing.carry.save_run`) and restored from there first by the next call, on any machine. Only
records are written into the repository's folders: nothing of an unfinished run.
"""

import logging
import time
from collections.abc import Sequence
from pathlib import Path

from enkcvs.continuing.carry import check_outside_working_directory, restore_run, save_run
from enkcvs.io import PathLike
from enkcvs.recording.provenance import RUN_HOME
from enkcvs.recording.run import gpu_refusal, run_and_record

log = logging.getLogger(__name__)


def record_name(configfile: PathLike) -> str:
    """The record a config is recorded as: its file name without the extension (``config/experiments/mnist-full.yaml`` ->
    ``mnist-full``)."""
    return Path(configfile).stem


def record_pending(*, configfiles: Sequence[PathLike], deadline: float, cores: str, snakemake: str,
                   saves: PathLike | None = None, root: PathLike = RUN_HOME,
                   profile: PathLike | None = None) -> dict[str, str]:
    """Record each of ``configfiles`` in order (:func:`record_name`) unless recorded already under ``root``, until
    the :func:`time.monotonic` ``deadline``; ``saves`` as the module says. Returns each config's state: ``recorded``
    (now), ``recorded already``, ``stopped`` (at the deadline, to go on) or ``not started``.

    Raises ``ValueError``, before anything runs, when two configs would be recorded under one name, ``saves`` lies
    inside the working directory or a config needs a GPU this machine lacks
    (:func:`enkcvs.recording.run.gpu_refusal`)."""
    names = [record_name(path) for path in configfiles]
    if len(set(names)) != len(names):
        twice = sorted({name for name in names if names.count(name) > 1})
        raise ValueError(f"configs recorded under one name: {', '.join(twice)}; give each config its own file name")
    if saves is not None:
        check_outside_working_directory(saves, option="--saves")
    refusals = [refusal for path in configfiles if (refusal := gpu_refusal(path, profile=profile)) is not None]
    if refusals:
        raise ValueError("; ".join(refusals))
    states = {}
    for configfile, name in zip(configfiles, names):
        if (Path(root) / name / "provenance.json").is_file():
            states[name] = "recorded already"
            continue
        if time.monotonic() >= deadline or "stopped" in states.values():
            states[name] = "not started"
            continue
        saved = None if saves is None else Path(saves) / f"{name}.tar.gz"
        if saved is not None and saved.is_file():
            log.info("%s: %d files restored from %s", name, restore_run(
                name=name, snakemake=[snakemake], configfile=configfile, source=saved, cores=cores), saved)
        record = run_and_record(name=name, configfile=configfile, cores=cores, snakemake=snakemake, root=root,
                                deadline=deadline, profile=profile)
        if record is not None:
            states[name] = "recorded"
            continue
        states[name] = "stopped"
        if saved is not None:
            try:
                save_run(name=name, snakemake=[snakemake], configfile=configfile, to=saved)
            except FileNotFoundError as error:  # nothing finished yet: an earlier save stays as it is
                log.info("%s: nothing saved: %s", name, error)
    return states
