"""The Snakemake workflow catalog's conventions: the workflow's files are formatted by snakefmt (every ``Snakefile``
and ``workflow/rules/*.smk``, none left out), ``.snakemake-workflow-catalog.yml`` describes its usage truthfully, and
every ``report(...)`` output names a category, the paper's first. (``snakemake --lint``: tests/test_workflow.py.)"""

import re
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
RULES = sorted((REPO / "workflow" / "rules").glob("*.smk"))
#: The categories of the paper's own tables and figures: the report's menu sorts categories alphabetically.
PAPER_PREFIX = "Paper - "


def _report_categories() -> list[str]:
    """The ``category=`` of every ``report(...)`` output in workflow/rules/*.smk, in file order."""
    text = "".join(path.read_text() for path in RULES)
    calls = re.findall(r'report\(\s*"[^"]+",((?:[^()"]|"[^"]*")*)\)', text)  # its arguments: strings kept whole
    assert calls
    return [match[1] if (match := re.search(r'category="([^"]+)"', call)) else None for call in calls]


def test_snakefmt_finds_nothing_to_change_in_any_workflow_file():
    """What `make lint` runs: the Snakefile and the whole rules folder, nothing excluded (each file counted)."""
    makefile = (REPO / "Makefile").read_text()
    assert "$(BIN)/snakefmt --check workflow/\n" in makefile.split("\nlint:", 1)[1].split("\n\n")[0]
    done = subprocess.run(
        [sys.executable, "-m", "snakefmt", "--check", "workflow/"], capture_output=True, text=True, cwd=REPO
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"All {1 + len(RULES)} file(s) would be left unchanged" in done.stdout + done.stderr


def test_the_catalog_file_describes_conda_deployment_and_the_report():
    spec = yaml.safe_load((REPO / ".snakemake-workflow-catalog.yml").read_text())
    usage = spec["usage"]
    assert set(usage) == {"mandatory-flags", "software-stack-deployment", "report"}
    flags = usage["mandatory-flags"]
    assert set(flags) == {"desc", "flags"} and flags["desc"].strip()
    assert flags["flags"] in ("--software-deployment-method conda", "--sdm conda", "--use-conda")
    assert usage["software-stack-deployment"] == {"conda": True, "singularity": False, "singularity+conda": False}
    assert usage["report"] is True
    # conda: true holds only where every rule runs in a conda env (tests/test_envs.py checks each env file)
    for path in RULES:
        for name, body in re.findall(r"^rule (\w+):(.*?)(?=^rule |\Z)", path.read_text(), flags=re.M | re.DOTALL):
            assert re.search(r"^\s+conda:\n\s+\"\.\./\.\./envs/\w+\.yaml\"", body, flags=re.M), f"{name}: no conda env"
    for named in re.findall(r"config/[\w.-]+\.yaml|profiles/\w+|docs/[\w.-]+\.md", flags["desc"]):
        assert (REPO / named).exists(), named


def test_every_report_output_has_a_category_and_the_papers_sort_first():
    categories = _report_categories()
    assert None not in categories
    # the report's menu sorts them: the paper's tables, figure and theorem must come first
    ordered = sorted(set(categories), key=str.casefold)
    paper = [category for category in ordered if category.startswith(PAPER_PREFIX)]
    assert ordered[: len(paper)] == paper
    assert {
        f"{PAPER_PREFIX}{name}"
        for name in (
            "Table 1 (selection)",
            "Table 2 (test accuracy)",
            "Table 3 (real-world data)",
            "Figure 1 (sensitivity)",
            "Theorem 1",
        )
    } == set(paper)
    # a colon would end the name of the link target Snakemake defines for each category in the captions' reST
    assert not [category for category in categories if ":" in category]
    description = (REPO / "workflow" / "report" / "workflow.rst").read_text()
    paper_part = description.split("Supplement", 1)[0]
    assert all(name in paper_part for name in ("Table 1", "Table 2", "Table 3", "Figure 1", "Theorem 1"))


def test_the_citation_names_the_packages_version():
    import enkcvs

    citation = yaml.safe_load((REPO / "CITATION.cff").read_text())
    assert citation["version"] == enkcvs.__version__
