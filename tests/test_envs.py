"""Conda environments: every rule names one that exists, every package is pinned, and the pins agree with
pyproject.toml (conda itself cannot be reached from the test machine)."""

import re
import tomllib
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
ENVS = sorted((REPO / "envs").glob("*.yaml"))
# conda-forge names of PyPI packages where they differ
CONDA_NAMES = {"torch": "pytorch"}


def pyproject_pins() -> dict[str, str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    requirements = project["dependencies"] + [r for group in project["optional-dependencies"].values() for r in group]
    pins = {}
    for requirement in requirements:
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)==([0-9][0-9A-Za-z.]*)", requirement)
        if match:
            pins[CONDA_NAMES.get(match[1].lower(), match[1].lower())] = match[2]
    return pins


@pytest.mark.parametrize("env", ENVS, ids=[env.stem for env in ENVS])
def test_every_package_is_pinned_and_agrees_with_pyproject(env):
    spec = yaml.safe_load(env.read_text())
    assert "conda-forge" in spec["channels"]
    pins = pyproject_pins()
    conda = [d for d in spec["dependencies"] if isinstance(d, str)]
    from_pip = [r for d in spec["dependencies"] if isinstance(d, dict) for r in d["pip"]]  # PyPI-only packages
    assert not from_pip or any(d.startswith("pip ") for d in conda), f"{env.name}: a pip section needs pip itself"
    for dependency in conda + from_pip:
        name, _, version = dependency.replace("==", "=").partition("=")
        name, version = name.strip(), version.strip()
        assert re.fullmatch(r"[0-9][0-9A-Za-z.]*", version), f"{env.name}: {dependency!r} is not pinned"
        if name in pins:
            assert pins[name] == version, f"{env.name} pins {name} {version}, pyproject.toml {pins[name]}"


def test_every_rule_names_an_existing_environment():
    rules = sorted((REPO / "workflow" / "rules").glob("*.smk"))
    referenced = []
    for rules_file in rules:
        text = rules_file.read_text()
        blocks = re.findall(r"^rule (\w+):(.*?)(?=^rule |\Z)", text, flags=re.S | re.M)
        for name, body in blocks:
            match = re.search(r"conda:\s*\n\s*\"([^\"]+)\"", body)
            assert match, f"rule {name} in {rules_file.name} has no conda env"
            path = (rules_file.parent / match[1]).resolve()
            assert path.exists(), f"rule {name} names {match[1]}, which does not exist"
            referenced.append(path)
    assert set(referenced) == {env.resolve() for env in ENVS}, "an env file is used by no rule"


def test_the_lock_file_installs_the_pyproject_pins():
    locked = {}
    for line in (REPO / "requirements.lock").read_text().splitlines():
        name, _, version = line.partition("==")
        locked[CONDA_NAMES.get(name.strip().lower(), name.strip().lower())] = version.strip()
    for name, version in pyproject_pins().items():
        assert locked.get(name) == version, f"requirements.lock has {name} {locked.get(name)}, pyproject {version}"
