"""Self-describing artifacts written atomically: parquet tables carry their provenance in the file metadata; JSON
records and figures (PNG and PDF) are written the same way."""

import contextlib
import functools
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from importlib.metadata import PackageNotFoundError, distribution, version
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

#: A file path as the library's functions take it.
PathLike = str | Path

PROVENANCE_KEY = b"enkcvs"
_PACKAGES = ("enkcvs", "numpy", "pandas", "pyarrow", "torch", "scikit-learn", "mlxtend", "matplotlib", "snakemake")


def package_versions() -> dict[str, str]:
    """Versions of the packages that shape the results (read from metadata; nothing is imported)."""
    versions = {"python": platform.python_version()}
    for name in _PACKAGES:
        with contextlib.suppress(PackageNotFoundError):
            versions[name] = version(name)
    return versions


def _installed_origin() -> dict[str, Any]:
    """Where pip installed this package from, as it recorded it (PEP 610's ``direct_url.json``); {} where it recorded
    nothing (a registry install) or the package is not installed."""
    try:
        recorded = distribution("enkcvs").read_text("direct_url.json")
    except PackageNotFoundError:
        recorded = None
    return json.loads(recorded) if recorded else {}


def install_command(*, extras: str) -> str:
    """The pip command that adds ``extras`` (``"report,train"``) to this package from where it was installed, as pip
    recorded it (PEP 610's ``direct_url.json``): the checkout of an editable install, the folder, archive or VCS URL of
    another; a registry's name where pip recorded none."""
    origin = _installed_origin()
    url = origin.get("url", "")
    if url.startswith("file://"):
        path = url.removeprefix("file://")
        editable = "-e " if origin.get("dir_info", {}).get("editable") else ""
        return f"pip install {editable}'{path}[{extras}]'"
    if "vcs_info" in origin:
        vcs, commit = origin["vcs_info"]["vcs"], origin["vcs_info"].get("commit_id")
        return f"pip install 'enkcvs[{extras}] @ {vcs}+{url}" + (f"@{commit}'" if commit else "'")
    if url:
        return f"pip install 'enkcvs[{extras}] @ {url}'"
    return f"pip install 'enkcvs[{extras}]'"


#: Folders of a checkout that hold what runs write (records, benchmark results), not code: a run's own outputs there
#: must not make the next record's checkout read as changed.
DATA_FOLDERS = ("results", "benchmarks/results")


#: The environment variable that names the commit of a copy of the repository that has no ``.git``
#: (:func:`git_state`).
COMMIT_VARIABLE = "ENKCVS_GIT_COMMIT"


@functools.cache
def git_state(*, root: PathLike | None = None) -> dict[str, Any]:
    """Commit of the checkout at ``root`` (default: the one the library runs from), and whether its tracked files
    outside :data:`DATA_FOLDERS` differ from it.

    ``{"commit": "unknown"}`` where that is not a git checkout (an installed wheel, a tarball), unless
    :data:`COMMIT_VARIABLE` names the commit the files are a copy of (a copy of the working tree without ``.git``,
    as ``rsync`` or a tarball takes it to a cluster node): then that commit, its state unknown (``"dirty": None``);
    for the library's own files, also the commit pip installed it from (a VCS URL).
    """
    library = root is None
    root = Path(root) if root is not None else Path(__file__).resolve().parents[2]
    if not (root / ".git").exists():
        # an install from a repository's commit (pip's VCS URL) knows it, for the library's own files
        told = os.environ.get(COMMIT_VARIABLE) or (
            _installed_origin().get("vcs_info", {}).get("commit_id") if library else None
        )
        return {"commit": told, "dirty": None} if told else {"commit": "unknown"}
    try:
        commit = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        changes = subprocess.run(
            [
                "git",
                "-C",
                str(root),
                "status",
                "--porcelain",
                "--untracked-files=no",
                "--",
                ".",
                *(f":(exclude){folder}" for folder in DATA_FOLDERS),
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return {"commit": "unknown"}
    return {"commit": commit, "dirty": bool(changes.strip())}


#: The environment variable that moves the library's caches (bf16 probes, text embeddings) from ``~/.cache/enkcvs``.
CACHE_VARIABLE = "ENKCVS_CACHE_DIR"


def cache_dir() -> Path:
    """The folder of the library's caches: ``$ENKCVS_CACHE_DIR``, else ``~/.cache/enkcvs`` (created by writers)."""
    return Path(os.environ.get(CACHE_VARIABLE) or Path.home() / ".cache" / "enkcvs")


def provenance(**fields: Any) -> dict[str, Any]:
    """What produced an artifact: the given fields (config slice, seed, wildcards, a job's code fingerprint), package
    versions, git commit, and where the process imported torch, torch's thread count as the record is written (the
    job's threads: float sums on a CPU differ in their last bits between thread counts; a block that fits on one
    thread and restores them, :func:`enkcvs.labelissues.determinism.one_thread`, is not seen)."""
    torch = sys.modules.get("torch")  # only where the job imported it: a provenance never pays for the import
    threads = {"torch_threads": torch.get_num_threads()} if torch is not None else {}
    return {**fields, "versions": package_versions(), "git": git_state(), **threads}


@contextlib.contextmanager
def atomic_path(path: PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(handle)
    try:
        yield Path(tmp)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; give the usual permissions of a new file
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(tmp)


@contextlib.contextmanager
def atomic_folder(path: PathLike) -> Iterator[Path]:
    """Yield an empty folder beside ``path``; swap it in for ``path`` (and its old contents, removed whole) only if
    the block succeeds, so a failure leaves the old folder as it was."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}."))
    try:
        yield staging
        old = path.with_name(f".{path.name}.old")
        if path.exists():
            path.rename(old)
        staging.rename(path)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def write_table(frame: pd.DataFrame, path: PathLike, *, metadata: dict[str, Any]) -> None:
    """Write ``frame`` as parquet with ``metadata`` (JSON) in the file's schema metadata, atomically."""
    table = pa.Table.from_pandas(frame, preserve_index=False)
    table = table.replace_schema_metadata(
        {**(table.schema.metadata or {}), PROVENANCE_KEY: json.dumps(metadata, sort_keys=True).encode()}
    )
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)


def read_table(path: PathLike) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Read a parquet written by :func:`write_table`: the frame and its provenance metadata."""
    table = pq.read_table(path)
    raw = (table.schema.metadata or {}).get(PROVENANCE_KEY)
    return table.to_pandas(), (json.loads(raw) if raw else {})


def read_table_metadata(path: PathLike) -> dict[str, Any]:
    """The provenance metadata of a parquet written by :func:`write_table`, without reading its rows."""
    raw = (pq.read_schema(path).metadata or {}).get(PROVENANCE_KEY)
    return json.loads(raw) if raw else {}


def write_json(payload: dict[str, Any], path: PathLike) -> None:
    """Write ``payload`` as indented, key-sorted JSON, atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n")


def read_json(path: PathLike) -> dict[str, Any]:
    """Read a JSON artifact."""
    return json.loads(Path(path).read_text())


def save_figure(figure, *, png: PathLike, pdf: PathLike, dpi: int) -> None:
    """``figure`` as PNG (at ``dpi``) and PDF, each written atomically."""
    # No creation date in the PDF, so identical runs (and resumed ones) write identical bytes.
    for path, kwargs in ((png, {"dpi": dpi}), (pdf, {"metadata": {"CreationDate": None}})):
        with atomic_path(path) as tmp:
            figure.savefig(tmp, format=Path(path).suffix[1:], bbox_inches="tight", **kwargs)
