"""The workflow as its users first run it: a Snakemake with nothing else installed (`conda create -n snakemake
snakemake`) parses, lints and dry-runs every shipped config, and `snakemake --use-conda` builds every env and runs
the workflow's test config (.test/config/config.yaml) with its report, from the clone, as a module deployed into
another folder and as a module from a repository at a commit (github(...)). conda is stood in for by
tests/conda_stand_in.py, which follows conda's handling of an env file."""

import json
import os
import subprocess
import sys
from pathlib import Path

import conda_stand_in
import pytest

pytestmark = pytest.mark.workflow

REPO = Path(__file__).resolve().parents[1]
TEST_CONFIG = REPO / ".test" / "config" / "config.yaml"
SHIPPED_CONFIGS = sorted(
    [
        *(REPO / "config").glob("*.yaml"),
        *(REPO / "config" / "experiments").rglob("*.yaml"),
        TEST_CONFIG,
        *(REPO / "tests" / "config").glob("*.yaml"),
    ]
)


def _locked_version(name: str) -> str:
    """The version requirements.lock pins for ``name``."""
    for line in (REPO / "requirements.lock").read_text().splitlines():
        if line.lower().startswith(f"{name}=="):
            return line.split("==")[1].split()[0]
    raise LookupError(f"requirements.lock pins no {name}")


@pytest.fixture(scope="session")
def snakemake_only(tmp_path_factory) -> Path:
    """The ``snakemake`` command of a fresh virtual environment holding Snakemake (the locked version, with what its
    reports need) and what it depends on, nothing else."""
    prefix = tmp_path_factory.mktemp("snakemake-only")
    subprocess.run([sys.executable, "-m", "venv", str(prefix)], check=True)
    subprocess.run(
        # conda-forge's snakemake package holds the report's dependencies too (snakemake-minimal does not)
        [
            prefix / "bin" / "python",
            "-m",
            "pip",
            "install",
            "--quiet",
            f"snakemake[reports]=={_locked_version('snakemake')}",
        ],
        check=True,
        env=_environment(),
    )
    for package in ("numpy", "pandas", "pyarrow", "torch", "enkcvs"):
        missing = subprocess.run(
            [prefix / "bin" / "python", "-c", f"import {package}"], capture_output=True, env=_environment()
        )
        assert missing.returncode != 0, f"the Snakemake-only environment has {package}"
    return prefix / "bin" / "snakemake"


@pytest.fixture(scope="session")
def conda_path(tmp_path_factory) -> str:
    """PATH with the conda stand-in first."""
    bin_folder = conda_stand_in.install(tmp_path_factory.mktemp("conda"))
    return os.pathsep.join([str(bin_folder), os.environ["PATH"]])


def _environment(path: str | None = None, cache: Path | None = None) -> dict[str, str]:
    """The test's environment without its own PYTHONPATH (a user's shell has none), with ``path`` as PATH and
    ``cache`` as the user's cache folder (where Snakemake keeps its source cache)."""
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    if path is not None:
        environment["PATH"] = path
    if cache is not None:
        environment["XDG_CACHE_HOME"] = str(cache)
    return environment


def _snakemake(
    snakemake: Path, *args: str, cwd: Path, path: str | None = None, cache: Path | None = None
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(snakemake), *args], cwd=cwd, capture_output=True, text=True, env=_environment(path, cache), check=False
    )


def test_a_snakemake_with_nothing_else_parses_lints_and_dry_runs_every_shipped_config(snakemake_only, tmp_path):
    lint = _snakemake(snakemake_only, "--lint", cwd=REPO)
    assert lint.returncode == 0, lint.stdout[-3000:] + lint.stderr[-3000:]
    assert len(SHIPPED_CONFIGS) > 30
    failed = {}
    for config in SHIPPED_CONFIGS:
        workdir = tmp_path / config.stem
        dry = _snakemake(
            snakemake_only, "-n", "--quiet", "--configfile", str(config), "--directory", str(workdir), cwd=REPO
        )
        if dry.returncode != 0:
            failed[str(config.relative_to(REPO))] = dry.stderr[-1500:]
    assert failed == {}


def test_the_stand_in_refuses_an_install_relative_to_the_env_files_folder_as_conda_does(conda_path, repository_copy):
    """An env that installs the package with ``-e ..`` (as envs/ did) cannot be built where Snakemake puts the env
    file: the stand-in is no more lenient than conda."""
    copy = repository_copy
    env = copy / "envs" / "analysis.yaml"
    env.write_text(env.read_text() + "  - pip =26.3\n  - pip:\n      - -e ..\n")
    created = _snakemake(
        Path(sys.executable).with_name("snakemake"),
        "--use-conda",
        "--conda-create-envs-only",
        "--cores",
        "1",
        "--configfile",
        str(TEST_CONFIG),
        cwd=copy,
        path=conda_path,
    )
    assert created.returncode != 0
    assert "does not appear to be a Python project" in created.stdout + created.stderr


def test_the_test_config_runs_through_conda_envs_and_writes_its_report(
    snakemake_only, conda_path, repository_copy, write_module_snakefile, commit_all, tmp_path
):
    conda_prefix = tmp_path / "conda-envs"
    with_envs = ["--use-conda", "--conda-prefix", str(conda_prefix), "--cores", "2"]
    args = [*with_envs, "--configfile", str(TEST_CONFIG)]
    workdir = repository_copy
    commit = commit_all(workdir)  # before any run writes into it
    done = _snakemake(snakemake_only, *args, cwd=workdir, path=conda_path)
    assert done.returncode == 0, done.stderr[-4000:]
    assert (workdir / "results" / "report" / "table2.md").is_file()
    report = _snakemake(snakemake_only, *args, "--report", "report.zip", cwd=workdir, path=conda_path)
    assert report.returncode == 0, report.stderr[-3000:]
    assert (workdir / "report.zip").stat().st_size > 0
    envs = sorted(path for path in conda_prefix.iterdir() if path.is_dir() and (path / "bin" / "python").exists())
    assert len(envs) == len(list((REPO / "envs").glob("*.yaml"))) - 1  # the text env serves text datasets only
    for env in envs:  # no env holds the package: every job imported it from the workflow's own source
        alone = subprocess.run([env / "bin" / "python", "-c", "import enkcvs"], capture_output=True, env=_environment())
        assert alone.returncode != 0, f"{env.name} holds a copy of enkcvs"

    def _selections_of(project: Path, cache: Path | None = None) -> subprocess.CompletedProcess:
        """The module that ``project``'s Snakefile declares, run up to its selections with the envs built above."""
        return _snakemake(
            snakemake_only, *with_envs, "--until", "select_samples", cwd=project, path=conda_path, cache=cache
        )

    # A module of another folder, sharing the envs: they fit its code as well (they hold none), so none is built anew.
    deployed = write_module_snakefile(
        tmp_path / "deployed", snakefile=workdir / "workflow" / "Snakefile", configfile=str(TEST_CONFIG)
    )
    module = _selections_of(deployed)
    assert module.returncode == 0, module.stderr[-3000:]
    assert "Creating conda environment" not in module.stdout + module.stderr
    assert (deployed / "results" / "selection" / "digits" / "sym0.4" / "seed1").is_dir()

    # A module from a repository at a commit, as snakedeploy declares it: github(...). Snakemake keeps a bare clone
    # in its source cache; made here from a local repository (no network), where Snakemake would clone it.
    cache = tmp_path / "cache"
    clone = cache / "snakemake" / "snakemake" / "source-cache" / "snakemake-git-cache" / "github.com" / "owner"
    clone.mkdir(parents=True)
    subprocess.run(["git", "clone", "--quiet", "--bare", str(workdir), str(clone / "enkcvs")], check=True)
    hosted = tmp_path / "hosted"
    hosted.mkdir()
    (hosted / "Snakefile").write_text(
        f'configfile: "{TEST_CONFIG}"\n\n\nmodule enkcvs:\n    snakefile:\n'
        f'        github("owner/enkcvs", path="workflow/Snakefile", commit="{commit}")\n'
        "    config:\n        config\n\n\nuse rule * from enkcvs\n"
    )
    (workdir / "src" / "enkcvs" / "method" / "selection.py").write_text("raise ImportError('not the commit')\n")
    from_commit = _selections_of(hosted, cache=cache)
    # (its envs are built anew: Snakemake reads a hosted env file without its last newline, so its hash differs)
    assert from_commit.returncode == 0, from_commit.stderr[-3000:]
    assert (hosted / "results" / "selection" / "digits" / "sym0.4" / "seed1").is_dir()
    assert (hosted / ".snakemake" / "enkcvs-source" / commit / "src" / "enkcvs" / "method" / "selection.py").is_file()
    metrics = json.loads(next((hosted / "results" / "selection").rglob("metrics.json")).read_text())
    assert metrics["git"] == {"commit": commit, "dirty": None}  # the copy has no .git; its commit is recorded
