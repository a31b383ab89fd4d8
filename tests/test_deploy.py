"""The workflow as users deploy it: from an empty folder whose Snakefile holds only a ``module`` directive, and by
``snakedeploy deploy-workflow`` from a clone at a tag, it dry-runs and runs the tiny config; its jobs import the
package from the clone's src/. Run there from empty caches, the tiny config gives every report table byte for byte
as the run in the repository does: no timing decides a number."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.workflow

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake"]


def _fresh_caches(folder: Path) -> dict[str, str]:
    """The environment of a run whose caches (the library's, torch.compile's) start empty, in ``folder``."""
    return {
        **os.environ,
        "ENKCVS_CACHE_DIR": str(folder / "cache"),
        "TORCHINDUCTOR_CACHE_DIR": str(folder / "cache" / "torchinductor"),
    }


def _report_tables(workdir: Path) -> dict[str, bytes]:
    """Every report table (Markdown, CSV, LaTeX) but the training jobs' measured time and memory."""
    return {
        path.name: path.read_bytes()
        for path in sorted((workdir / "results" / "report").iterdir())
        if path.suffix in {".md", ".csv", ".tex"} and path.stem != "resources"
    }


def test_a_module_deployment_runs_the_tiny_config_to_the_tables_of_the_repositorys_run(
    tiny_run, tiny_config, write_module_snakefile, tmp_path
):
    deployed = write_module_snakefile(
        tmp_path / "deployed", snakefile=REPO / "workflow" / "Snakefile", configfile="config.yaml"
    )
    shutil.copy(tiny_config, deployed / "config.yaml")
    environment = _fresh_caches(tmp_path)
    dry = subprocess.run(
        [*SNAKEMAKE, "-n", "--cores", "2"], cwd=deployed, capture_output=True, text=True, env=environment
    )
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert re.search(r"^train_fold +\d+$", dry.stdout, flags=re.MULTILINE)
    done = subprocess.run([*SNAKEMAKE, "--cores", "2"], cwd=deployed, capture_output=True, text=True, env=environment)
    assert done.returncode == 0, done.stderr[-3000:]
    expected, got = _report_tables(tiny_run), _report_tables(deployed)
    assert len(expected) > 15 and sorted(got) == sorted(expected)
    assert [name for name in expected if got[name] != expected[name]] == []


def test_snakedeploy_deploys_the_workflow_at_a_tag_from_a_local_clone(tiny_config, tmp_path):
    """snakedeploy copies the config and profiles and writes a module Snakefile. From GitHub it declares the module
    as ``github("owner/repo", path="workflow/Snakefile", tag=...)``, which Snakemake clones at the tag. From a local
    clone (no network here) its provider leaves the checkout to the user and writes the module's path relative to the
    written file, which Snakemake cannot follow (and Snakemake 9.27's ``gitfile`` of a local repository fails on
    rules with scripts), so here the declaration is the path of the clone checked out at the tag."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "tag", "deployed"], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "--quiet", "deployed"], check=True)
    dest = tmp_path / "dest"
    deployed = subprocess.run(
        [
            str(Path(sys.executable).with_name("snakedeploy")),
            "deploy-workflow",
            str(clone),
            str(dest),
            "--tag",
            "deployed",
            "--name",
            "enkcvs",
        ],
        capture_output=True,
        text=True,
    )
    assert deployed.returncode == 0, deployed.stderr[-3000:]
    assert (dest / "config" / "config.yaml").is_file() and (dest / "profiles" / "slurm" / "config.yaml").is_file()
    snakefile = (dest / "workflow" / "Snakefile").read_text()
    assert "module enkcvs:" in snakefile and "use rule * from enkcvs" in snakefile
    assert '"workflow/Snakefile"' in snakefile  # the module's path in the repository, as github() would take it
    declared = re.sub(r"snakefile:\s*\n\s*\S+", f'snakefile:\n        "{clone / "workflow" / "Snakefile"}"', snakefile)
    (dest / "workflow" / "Snakefile").write_text(declared)
    shutil.copy(tiny_config, dest / "config" / "config.yaml")
    environment = _fresh_caches(tmp_path)
    dry = subprocess.run([*SNAKEMAKE, "-n", "--cores", "2"], cwd=dest, capture_output=True, text=True, env=environment)
    assert dry.returncode == 0, dry.stderr[-3000:]
    done = subprocess.run(
        [*SNAKEMAKE, "--cores", "2", "--until", "table1"], cwd=dest, capture_output=True, text=True, env=environment
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert (dest / "results" / "report" / "table1.csv").is_file()


def test_a_module_named_by_gitfile_stops_naming_the_routes_that_work(
    tiny_config, repository_copy, commit_all, tmp_path
):
    """Snakemake's ``gitfile(...)`` of a local repository cannot run rules with scripts (Snakemake 9.27): the workflow
    stops as Snakemake reads it, saying what to name instead."""
    commit_all(repository_copy)
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(tiny_config, project / "config.yaml")
    (project / "Snakefile").write_text(
        'configfile: "config.yaml"\n\n\nmodule enkcvs:\n    snakefile:\n'
        f'        gitfile("{repository_copy}", path="workflow/Snakefile", ref="HEAD")\n'
        "    config:\n        config\n\n\nuse rule * from enkcvs\n"
    )
    dry = subprocess.run([*SNAKEMAKE, "-n", "--cores", "1"], cwd=project, capture_output=True, text=True)
    assert dry.returncode != 0
    assert "clone it (git clone URL enkcvs" in dry.stdout + dry.stderr and "github(...)" in dry.stdout + dry.stderr
