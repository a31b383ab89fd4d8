"""A sitting of bounded length: carried runs restored, trained for at most so many seconds, then recorded where they
finish and carried again where they do not, each packed into one archive to bring back.

Made for a lent machine (``make gpu-sitting``, benchmarks/README.md): it starts bare from a copy of the repository,
is held for minutes, and gives back only a few files of a limited size. What a run finished there travels back in
``<pack>/<name>.tar.gz`` (in volumes ``<name>.tar.gz.1``, ``.2``, ... where it exceeds the size a file may have),
holding ``results/recorded/<name>/`` (the run finished: its record, the machine's GPU named in it) or
``results/carried/<name>/`` (the run goes on elsewhere: :mod:`enkcvs.runs.carry`); :func:`unpack` puts it back in the
repository's root, a record retiring the run's carried folder, to be committed.
``python -m enkcvs.runs.sitting --run NAME CONFIG [FIRST ...] --seconds S --pack DIR`` (``--run`` repeated: the runs
one after the other, all within the ``S`` seconds); ``--unpack ARCHIVE ...`` puts archives back in place;
``--fit-send MIB --carry PATH ...`` makes what a device run is sent from here fit (:func:`fit_send`).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from enkcvs.io import PathLike, atomic_folder, atomic_path
from enkcvs.runs.carry import CARRIED_HOME, drop_checkpoints, restore_run, save_run
from enkcvs.runs.recorded import run_and_record
from enkcvs.runs.views.provenance import RUN_HOMES
from enkcvs.training.resume import SUFFIX


VOLUME = re.compile(r"(?P<archive>.+\.tar\.gz)\.(?P<number>\d+)")


def pack_folder(folder: Path, *, into: Path, volume_bytes: int | None = None) -> list[Path]:
    """``into/<folder's name>.tar.gz`` holding ``folder`` under its path relative to the working directory (so it
    unpacks in place in the repository's root), written whole or not at all; where it exceeds ``volume_bytes``, cut
    into the volumes ``<name>.tar.gz.1``, ``.2``, ... of at most that size instead. Returns the files written."""
    archive = into / f"{folder.name}.tar.gz"
    with atomic_path(archive) as tmp, tarfile.open(tmp, "w:gz") as tar:
        tar.add(folder, arcname=str(folder))
    if volume_bytes is None or archive.stat().st_size <= volume_bytes:
        return [archive]
    volumes = []
    with open(archive, "rb") as whole:
        while chunk := whole.read(volume_bytes):
            volumes.append(archive.with_name(f"{archive.name}.{len(volumes) + 1}"))
            with atomic_path(volumes[-1]) as tmp:
                tmp.write_bytes(chunk)
    archive.unlink()
    return volumes


def _joined(archive: Path) -> Path:
    """The archive itself, or, for its first volume (``<name>.tar.gz.1``), the volumes beside it joined into one
    temporary file (the caller removes it). Raises ``ValueError`` for a later volume, which its first one brings."""
    volume = VOLUME.fullmatch(archive.name)
    if volume is None:
        return archive
    if volume["number"] != "1":
        raise ValueError(f"{archive} is volume {volume['number']} of {volume['archive']}: unpack its volume 1, "
                         "which brings the others beside it")
    handle, name = tempfile.mkstemp(suffix=".tar.gz")  # not beside the volumes: their folder may be read-only
    os.close(handle)
    joined = Path(name)
    with open(joined, "wb") as whole:
        number = 1
        while (part := archive.with_name(f"{volume['archive']}.{number}")).is_file():
            whole.write(part.read_bytes())
            number += 1
    return joined


def _run_folder(members: list[tarfile.TarInfo], *, homes: tuple[Path, ...]) -> Path | None:
    """The one run's folder (``<home>/<name>``) that every member lies in, as plain files and folders; else None."""
    folders = {Path(member.name).parts[:3] for member in members}
    folder = Path(*folders.pop()) if len(folders) == 1 else None
    plain = all(".." not in Path(member.name).parts and (member.isfile() or member.isdir()) for member in members)
    return folder if plain and folder is not None and len(folder.parts) == 3 and folder.parent in homes else None


def unpack(archive: PathLike) -> Path:
    """Put a sitting's archive (:func:`pack_folder`) back in the repository's root, the working directory: its
    folder replaces the one there whole, and a record that arrives retires the run's carried folder. Returns the
    folder. Raises ``ValueError``, before writing anything, for an archive that holds anything but one run's folder
    under ``results/recorded/`` or ``results/carried/`` (a link, a path out of it)."""
    homes = (Path(RUN_HOMES[0]), Path(CARRIED_HOME))
    joined = _joined(Path(archive))
    try:
        folder = _unpack_whole(joined, name=archive, homes=homes)
    finally:
        if joined != Path(archive):
            joined.unlink()
    if folder.parent == homes[0]:
        shutil.rmtree(homes[1] / folder.name, ignore_errors=True)
    return folder


def _unpack_whole(archive: Path, *, name: PathLike, homes: tuple[Path, ...]) -> Path:
    """:func:`unpack` of one whole archive (``name``: what the messages call it)."""
    with tarfile.open(archive) as tar:
        members = tar.getmembers()
        folder = _run_folder(members, homes=homes)
        if folder is None:
            raise ValueError(f"{name} holds {sorted(member.name for member in members)[:3]}..., not one run's "
                             "folder under results/recorded/ or results/carried/: unpack only what `make gpu-sitting` "
                             "packed")
        with atomic_folder(folder) as staging:
            for member in members:
                if member.isfile():
                    target = staging / Path(member.name).relative_to(folder)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    with tar.extractfile(member) as source, open(target, "wb") as copy:
                        shutil.copyfileobj(source, copy)
    return folder


def _over(pack: Path, *, max_bytes: int | None, max_files: int | None) -> bool:
    """Whether the files in ``pack`` exceed what the machine gives back (in bytes, in files)."""
    files = [path for path in pack.iterdir() if path.is_file()]
    return ((max_bytes is not None and sum(path.stat().st_size for path in files) > max_bytes)
            or (max_files is not None and len(files) > max_files))


def sit(*, runs: Sequence[Sequence[str]], seconds: float, cores: str, snakemake: str, pack: Path,
        max_archive_bytes: int | None = None, max_pack_bytes: int | None = None,
        max_pack_files: int | None = None) -> list[dict]:
    """Go on with each run of ``runs`` (``[name, configfile, *first targets]``) in turn, all within ``seconds``:
    restore its carried folder where there is one, run it (:func:`enkcvs.runs.recorded.run_and_record`, the first
    targets built first) until it finishes, and is recorded, or the time is up, and what it finished is carried
    (:func:`enkcvs.runs.carry.save_run`); then pack the record or the carried folder into ``pack``, in volumes of at
    most ``max_archive_bytes`` (:func:`pack_folder`). Where a carried run's archive takes ``pack`` over
    ``max_pack_bytes`` or ``max_pack_files`` (what the machine gives back, with whatever else ``pack`` holds), it is
    packed again without its epoch checkpoints (:func:`enkcvs.runs.carry.drop_checkpoints`), the outcome saying so. A
    run whose turn comes after the time is up is left as it was. Returns per run its name, outcome and archives."""
    deadline = time.monotonic() + seconds
    outcomes = []
    for name, configfile, *first in runs:
        if time.monotonic() >= deadline:
            outcomes.append({"name": name, "outcome": "not started: the time was up", "archives": []})
            continue
        if (Path(CARRIED_HOME) / name / "manifest.json").is_file():
            restore_run(name=name, snakemake=[snakemake], configfile=configfile, cores=cores)
        record = run_and_record(name=name, configfile=configfile, cores=cores, snakemake=snakemake,
                                first=[first] if first else [], deadline=deadline)
        if record is not None:
            outcomes.append({"name": name, "outcome": "finished and recorded",
                             "archives": pack_folder(record, into=pack, volume_bytes=max_archive_bytes)})
            continue
        try:
            carried = save_run(name=name, snakemake=[snakemake], configfile=configfile)
        except FileNotFoundError as error:  # nothing finished: the carried folder, if any, is still the right one
            outcomes.append({"name": name, "outcome": f"stopped at the time limit; {error}", "archives": []})
            continue
        archives = pack_folder(carried, into=pack, volume_bytes=max_archive_bytes)
        outcome = "stopped at the time limit and carried"
        if _over(pack, max_bytes=max_pack_bytes, max_files=max_pack_files):
            for archive in archives:
                archive.unlink()
            dropped = drop_checkpoints(carried)
            archives = pack_folder(carried, into=pack, volume_bytes=max_archive_bytes)
            outcome = f"{outcome} without its {dropped} epoch checkpoints"
        outcomes.append({"name": name, "outcome": outcome, "archives": archives})
    return outcomes


def send_bytes(*, carry: Sequence[PathLike] = ()) -> int:
    """The bytes a device run is sent from the checkout in the working directory: the files git tracks (as they are:
    one deleted is not sent) and those it would track (not ignored), then the ignored paths of ``carry``."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            capture_output=True, check=True).stdout
    files = {Path(os.fsdecode(name)) for name in listed.split(b"\0") if name}
    for path in map(Path, carry):
        files |= {path} if path.is_file() else {found for found in path.rglob("*") if found.is_file()}
    return sum(path.stat().st_size for path in files if path.is_file() and not path.is_symlink())


def fit_send(*, max_bytes: int, carry: Sequence[PathLike] = (), root: PathLike = CARRIED_HOME) -> list[str]:
    """Keep what a device run is sent (:func:`send_bytes`) within ``max_bytes``: the epoch checkpoints of the carried
    runs under ``root`` are dropped from the working tree (:func:`~enkcvs.runs.carry.drop_checkpoints`), largest
    first, until it fits; their jobs start afresh there. ``git checkout -- results/carried`` puts them back. Returns
    the runs whose checkpoints were dropped; ``ValueError`` where it still does not fit, before anything is dropped."""
    over = send_bytes(carry=carry) - max_bytes
    if over <= 0:
        return []
    checkpoints = {folder.name: sum(path.stat().st_size for path in (folder / "files").rglob(f"*{SUFFIX}"))
                   for folder in sorted(Path(root).iterdir()) if (folder / "manifest.json").is_file()}
    if sum(checkpoints.values()) < over:
        raise ValueError(f"what a device run is sent exceeds {max_bytes / 2**20:.0f} MiB by {over / 2**20:.1f} MiB, "
                         f"more than the carried runs' epoch checkpoints ({sum(checkpoints.values()) / 2**20:.1f} "
                         "MiB): carry fewer paths, or commit fewer carried runs")
    dropped = []
    for name in sorted(checkpoints, key=checkpoints.get, reverse=True):
        if over <= 0:
            break
        drop_checkpoints(Path(root) / name)
        over -= checkpoints[name]
        dropped.append(name)
    return dropped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m enkcvs.runs.sitting", description=__doc__.split("\n\n")[0])
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--run", nargs="+", action="append", metavar=("NAME CONFIG", "FIRST"),
                      help="a run to go on with: its name (as `enkcvs.runs.recorded run --name` gives it), its "
                           "config, then targets to build before the rest; repeat for the next run")
    what.add_argument("--unpack", nargs="+", type=Path, metavar="ARCHIVE",
                      help="put archives a sitting packed back in place, here in the repository's root")
    what.add_argument("--fit-send", type=float, metavar="MIB",
                      help="here, before a device run: drop the carried runs' epoch checkpoints from the working "
                           "tree where what the run is sent (this checkout and --carry) would exceed MIB")
    parser.add_argument("--carry", nargs="*", default=[], type=Path, metavar="PATH",
                        help="with --fit-send: the ignored paths the device run carries")
    parser.add_argument("--seconds", type=float, help="how long all the runs may train together")
    parser.add_argument("--cores", default="all", help="Snakemake's --cores: the training jobs side by side")
    beside = Path(sys.executable).with_name("snakemake")  # a virtual environment's; else the one on PATH
    parser.add_argument("--snakemake", default=str(beside) if beside.exists() else shutil.which("snakemake"))
    parser.add_argument("--pack", type=Path, help="the folder the archives are written to")
    parser.add_argument("--max-archive-mib", type=float, default=None,
                        help="an archive above this is cut into volumes of this size")
    parser.add_argument("--max-pack-mib", type=float, default=None,
                        help="a carried run whose archive takes --pack above this is packed without its epoch "
                             "checkpoints")
    parser.add_argument("--max-pack-files", type=int, default=None,
                        help="likewise for the number of files in --pack")
    args = parser.parse_args(argv)
    if args.unpack:
        later = {path for path in args.unpack if (volume := VOLUME.fullmatch(path.name)) and volume["number"] != "1"
                 and path.with_name(f"{volume['archive']}.1") in args.unpack}  # its volume 1 brings it
        for archive in [path for path in args.unpack if path not in later]:
            try:
                print(f"{archive} -> {unpack(archive)}")
            except (OSError, tarfile.TarError, ValueError) as error:
                print(f"error: {error}", file=sys.stderr)
                return 2
        return 0
    if args.fit_send is not None:
        try:
            dropped = fit_send(max_bytes=int(args.fit_send * 2**20), carry=args.carry)
        except ValueError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        print(f"{send_bytes(carry=args.carry) / 2**20:.1f} MiB to send"
              + (f"; the epoch checkpoints of {', '.join(dropped)} dropped from the working tree (`git checkout -- "
                 f"{CARRIED_HOME}` puts them back once the device run is sent)" if dropped else ""))
        return 0
    for run in args.run:
        if len(run) < 2:
            parser.error(f"--run {' '.join(run)}: give the run's name and its config file")
        if not Path(run[1]).is_file():
            parser.error(f"--run {' '.join(run)}: config file {run[1]} does not exist")
    if args.seconds is None or args.seconds <= 0:
        parser.error(f"--seconds {args.seconds}: give a positive number of seconds")
    if args.pack is None or not args.pack.is_dir():
        parser.error(f"--pack {args.pack}: give a folder that exists")
    mib = {name: None if value is None else int(value * 2**20)
           for name, value in (("archive", args.max_archive_mib), ("pack", args.max_pack_mib))}
    for outcome in sit(runs=args.run, seconds=args.seconds, cores=args.cores, snakemake=args.snakemake,
                       pack=args.pack, max_archive_bytes=mib["archive"], max_pack_bytes=mib["pack"],
                       max_pack_files=args.max_pack_files):
        archives = ", ".join(map(str, outcome["archives"]))
        print(f"{outcome['name']}: {outcome['outcome']}" + (f" -> {archives}" if archives else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
