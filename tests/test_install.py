"""The package installs beside others: pyproject.toml states ranges, not pins (the pins are the lock's), and at the
lowest versions its ranges admit it ranks a user's out-of-fold probabilities (``enkcvs find-issues
--probabilities``) in a fresh virtual environment, installed from the package index."""

import re
import subprocess
import tomllib
import venv
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from packaging.version import Version

pytestmark = pytest.mark.install

REPO = Path(__file__).resolve().parents[1]
#: What cleanlab needs beside the core, held at a release of the lower bounds' time, so that the run tests those and
#: not whichever scikit-learn is newest (cleanlab asks for scikit-learn>=1.1; the data extra's range starts at 1.4).
OF_ITS_TIME = ["scikit-learn==1.4.2"]


def lower_bounds() -> list[str]:
    """Each core dependency of pyproject.toml at its lower bound (``name>=x`` -> ``name==x``)."""
    dependencies = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    pins = []
    for dependency in dependencies:
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)>=([0-9][0-9A-Za-z.]*)", dependency)
        assert match, f"{dependency!r}: a core dependency states its lowest version (name>=x), not a pin"
        pins.append(f"{match[1]}=={match[2]}")
    return pins


def test_the_package_states_ranges_and_the_lock_pins_them():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    requirements = project["dependencies"] + [r for group in project["optional-dependencies"].values() for r in group]
    assert not [r for r in requirements if "==" in r], "pins belong to requirements.lock"
    locked = dict(line.split("==") for line in (REPO / "requirements.lock").read_text().split() if "==" in line)
    locked = {name.lower().replace("_", "-"): version for name, version in locked.items()}
    for requirement in requirements:
        name = re.split(r"[<>=\[ ]", requirement, maxsplit=1)[0].lower().replace("_", "-")
        if name != "enkcvs":
            assert name in locked, f"{requirement} is not pinned in requirements.lock"


def test_at_its_lowest_versions_the_package_ranks_out_of_fold_probabilities(tmp_path):
    environment = tmp_path / "venv"
    venv.create(environment, with_pip=True)
    python = environment / "bin" / "python"
    pip = [str(python), "-m", "pip", "install", "--quiet", "--no-cache-dir", "--disable-pip-version-check"]
    for arguments in ([*lower_bounds(), *OF_ITS_TIME], ["--no-deps", str(REPO)]):
        done = subprocess.run([*pip, *arguments], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-3000:]
    labels = np.repeat(np.arange(3), 20)
    probabilities = np.full((2, 60, 3), 0.05, dtype=np.float32)
    probabilities[:, np.arange(60), labels] = 0.9
    flipped = np.arange(0, 60, 10)  # six given labels that every model disagrees with
    given = labels.copy()
    given[flipped] = (labels[flipped] + 1) % 3
    np.save(tmp_path / "oof.npy", probabilities)
    np.save(tmp_path / "labels.npy", given)
    done = subprocess.run(
        [
            str(environment / "bin" / "enkcvs"),
            "find-issues",
            "--probabilities",
            str(tmp_path / "oof.npy"),
            "--labels",
            str(tmp_path / "labels.npy"),
            "--out",
            str(tmp_path / "issues.csv"),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    issues = pd.read_csv(tmp_path / "issues.csv")
    assert sorted(issues.loc[issues["is_label_issue"], "row"] - 1) == flipped.tolist()  # rows count from 1
    versions = subprocess.run(
        [
            str(python),
            "-c",
            "import numpy, pandas, pyarrow, cleanlab, scipy; print(numpy.__version__, "
            "pandas.__version__, pyarrow.__version__, cleanlab.__version__, scipy.__version__)",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert [Version(found) for found in versions] == [Version(pin.split("==")[1]) for pin in lower_bounds()]
