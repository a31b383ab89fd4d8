"""What installing the ``enkcvs`` package costs on disk: the distributions ``pip install ".[EXTRAS]"`` brings, found by
walking the package's requirements (with their markers) through the distributions installed in this environment, each
sized by the files its RECORD lists. Grouped as a user weighs them: PyTorch, its CUDA libraries (``nvidia-*``) and
triton, which a machine without an NVIDIA GPU never uses, and the rest. Run in an environment where the package is
installed with the extras, e.g. ``python benchmarks/install_size.py --extras train,report --out
benchmarks/results/install_size-<date>.json``. Reports numbers, asserts nothing.
"""

import argparse
import importlib.metadata as metadata
import json
import platform
import re
from datetime import UTC, datetime
from pathlib import Path

from packaging.requirements import Requirement

#: How the distributions are grouped, by their normalised names.
GROUPS = {"CUDA libraries": re.compile(r"^nvidia-"), "triton": re.compile(r"^triton$"), "torch": re.compile(r"^torch$")}


def normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def closure(name: str, *, extras: set[str]) -> set[str]:
    """The normalised names of ``name`` and every distribution it requires, with ``extras`` of ``name`` itself,
    as installed here (requirements whose markers do not hold on this machine, or not installed, left out)."""
    found, queue = set(), [(name, frozenset(extras))]
    while queue:
        current, wanted = queue.pop()
        try:
            distribution = metadata.distribution(current)
        except metadata.PackageNotFoundError:
            continue
        key = normalised(distribution.metadata["Name"])
        if key in found and not wanted:
            continue
        found.add(key)
        for text in distribution.requires or []:
            requirement = Requirement(text)
            environments = [{"extra": extra} for extra in wanted] or [{"extra": ""}]
            if requirement.marker is None or any(requirement.marker.evaluate(env) for env in environments):
                if normalised(requirement.name) not in found:
                    queue.append((requirement.name, frozenset(requirement.extras)))
    return found


def installed_bytes(name: str) -> int:
    """The bytes of the files distribution ``name``'s RECORD lists."""
    return sum(file.size or 0 for file in metadata.distribution(name).files or [])


def group_of(name: str) -> str:
    return next((group for group, pattern in GROUPS.items() if pattern.match(name)), "everything else")


def measure(extras: set[str]) -> dict:
    """The distributions of ``enkcvs[extras]`` and their sizes, in MiB, total and per group."""
    sizes = {name: installed_bytes(name) / 2**20 for name in sorted(closure("enkcvs", extras=extras))}
    groups = {group: 0.0 for group in [*GROUPS, "everything else"]}
    for name, size in sizes.items():
        groups[group_of(name)] += size
    return {
        "extras": sorted(extras),
        "distributions": len(sizes),
        "total_mib": round(sum(sizes.values()), 1),
        "groups_mib": {group: round(size, 1) for group, size in groups.items()},
        "largest_mib": {name: round(size, 1) for name, size in sorted(sizes.items(), key=lambda item: -item[1])[:10]},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--extras",
        type=lambda text: [part for part in text.split(",") if part],
        default=["train", "report"],
        help="the extras measured beside the core alone",
    )
    parser.add_argument("--out", type=Path, required=True, help="the JSON written")
    arguments = parser.parse_args()
    import torch

    results = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "platform": f"{platform.system()} {platform.machine()}",
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "installs": [measure(set()), measure(set(arguments.extras))],
    }
    arguments.out.parent.mkdir(parents=True, exist_ok=True)
    arguments.out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results["installs"], indent=1))


if __name__ == "__main__":
    main()
