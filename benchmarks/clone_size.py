"""What cloning the repository costs: the git pack a full clone of one branch receives, beside a clone of its last
commit alone (``git clone --depth 1``), and how much of the full history's objects lie under given path prefixes
(e.g. run checkpoints that an early commit carried and a later one removed: they stay in every full clone). Both
clones go through git's pack protocol (a ``file://`` URL), as a clone from a server would. Run from the checkout, e.g.
``python benchmarks/clone_size.py --prefix results/carried/ --out benchmarks/results/clone_size-<date>.json``.
Reports numbers, asserts nothing.
"""

import argparse
import json
import subprocess
import tempfile
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

MIB = 2**20


def git(*arguments: str, cwd: Path, text_input: str | None = None) -> str:
    return subprocess.run(
        ["git", *arguments], cwd=cwd, input=text_input, capture_output=True, text=True, check=True
    ).stdout


def pack_bytes(repository: Path) -> int:
    """The bytes of a bare repository's pack files: what its clone received."""
    return sum(path.stat().st_size for path in (repository / "objects" / "pack").glob("*.pack"))


def clone_bytes(source: Path, *, branch: str, depth: int | None) -> int:
    """The pack bytes of a bare clone of ``branch`` of ``source`` (its whole history, or its last ``depth`` commits)."""
    with tempfile.TemporaryDirectory(prefix="clone-size-") as folder:
        shallow = ["--depth", str(depth)] if depth else []
        git(
            "clone",
            "--quiet",
            "--bare",
            "--single-branch",
            "--branch",
            branch,
            *shallow,
            source.resolve().as_uri(),
            "clone.git",
            cwd=Path(folder),
        )
        return pack_bytes(Path(folder) / "clone.git")


def history_bytes_under(repository: Path, *, branch: str, prefixes: list[str]) -> dict[str, int]:
    """Per prefix, the on-disk bytes (as packed, deltas included) of every blob that any commit of ``branch`` held
    at a path under it."""
    objects = git("rev-list", "--objects", branch, cwd=repository)
    paths = {}
    for line in objects.splitlines():
        name, _, path = line.partition(" ")
        if path and any(path.startswith(prefix) for prefix in prefixes):
            paths[name] = path
    sizes = git(
        "cat-file",
        "--batch-check=%(objectname) %(objecttype) %(objectsize:disk)",
        cwd=repository,
        text_input="".join(f"{name}\n" for name in paths),
    )
    found = defaultdict(int)
    for line in sizes.splitlines():
        name, kind, size = line.split()
        if kind == "blob":
            found[next(prefix for prefix in prefixes if paths[name].startswith(prefix))] += int(size)
    return {prefix: found[prefix] for prefix in prefixes}


def measure(repository: Path, *, branch: str, prefixes: list[str]) -> dict:
    """Full and last-commit clone sizes of ``branch`` in MiB, and the history's bytes under each prefix."""
    return {
        "branch": branch,
        "commit": git("rev-parse", branch, cwd=repository).strip(),
        "commits": int(git("rev-list", "--count", branch, cwd=repository)),
        "full_clone_mib": round(clone_bytes(repository, branch=branch, depth=None) / MIB, 1),
        "last_commit_clone_mib": round(clone_bytes(repository, branch=branch, depth=1) / MIB, 1),
        "history_mib_under": {
            prefix: round(size / MIB, 1)
            for prefix, size in history_bytes_under(repository, branch=branch, prefixes=prefixes).items()
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repository", type=Path, default=Path("."), help="the checkout measured (default: here)")
    parser.add_argument("--branch", default="main", help="the branch a clone receives")
    parser.add_argument(
        "--prefix",
        dest="prefixes",
        action="append",
        default=[],
        metavar="PATH/",
        help="a path prefix whose share of the history is measured (repeatable)",
    )
    parser.add_argument("--out", type=Path, required=True, help="the JSON written")
    arguments = parser.parse_args()
    results = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "git": git("--version", cwd=arguments.repository).strip(),
        **measure(arguments.repository, branch=arguments.branch, prefixes=arguments.prefixes),
    }
    arguments.out.parent.mkdir(parents=True, exist_ok=True)
    arguments.out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
