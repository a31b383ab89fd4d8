"""A code change reruns what it touches and nothing else: each rule carries the fingerprint of the package code its
script runs (:mod:`enkcvs.pipeline.fingerprint`), read from the source without importing it."""

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from enkcvs.pipeline.fingerprint import code_fingerprint

REPO = Path(__file__).resolve().parents[1]
TEST_CONFIG = REPO / ".test" / "config" / "config.yaml"


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


@pytest.fixture
def toy(tmp_path):
    """A package ``toy`` of a few modules in ``tmp_path / "src"`` and a script that runs part of it."""
    _write(
        tmp_path / "src",
        {
            "toy/__init__.py": '''
                """The package."""
                def __getattr__(name):
                    from toy.extra import helper
                    return helper
            ''',
            "toy/step.py": '''
                """A step."""
                def run():
                    from toy.method import core  # imported where it is used
                    return core.value()
            ''',
            "toy/method/__init__.py": "",
            "toy/method/core.py": '''
                """Core."""
                def value():
                    """The value."""
                    return 1  # one
            ''',
            "toy/method/unused.py": "def other():\n    return 2\n",
            "toy/extra.py": "def helper():\n    return 3\n",
            "toy/sources/__init__.py": "import importlib\n\ndef load(name):\n    return importlib.import_module(name)\n",
            "toy/sources/loader.py": "def read():\n    return 4\n",
            "toy/report/__init__.py": "",
            "toy/report/templates/page.md.j2": "{{ value }}\n",
        },
    )
    script = tmp_path / "script.py"
    script.write_text("from toy.step import run\n\nrun()\n")
    return tmp_path / "src", script


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_an_edit_of_code_the_script_runs_changes_its_fingerprint_even_through_a_function_level_import(toy):
    source, script = toy
    before = code_fingerprint(script=script, source=source)
    _edit(source / "toy" / "method" / "core.py", "return 1", "return 10")
    assert code_fingerprint(script=script, source=source) != before


@pytest.mark.parametrize(
    ("module", "old", "new"),
    [
        ("method/core.py", "# one", "# the first"),  # a comment
        ("method/core.py", '"""The value."""', '"""The value, said otherwise."""'),  # a docstring
        ("method/core.py", "return 1", "return (\n        1\n    )"),  # the layout
        ("method/unused.py", "return 2", "return 20"),  # a module the script never imports
        ("extra.py", "return 3", "return 30"),  # a lazy export of the package the script never asks for
        ("sources/loader.py", "return 4", "return 40"),  # a package the script never imports
        ("report/templates/page.md.j2", "value", "other"),  # data of a package the script never imports
    ],
)
def test_an_edit_the_script_does_not_run_keeps_its_fingerprint(toy, module, old, new):
    source, script = toy
    before = code_fingerprint(script=script, source=source)
    _edit(source / "toy" / module, old, new)
    assert code_fingerprint(script=script, source=source) == before


def test_modules_imported_by_name_at_run_time_and_package_data_count(toy):
    source, script = toy
    script.write_text("from toy.sources import load\nfrom toy import report, helper\n")
    fingerprints = [code_fingerprint(script=script, source=source)]
    for module, old, new in [
        ("sources/loader.py", "return 4", "return 40"),  # importlib.import_module in the package
        ("report/templates/page.md.j2", "value", "other"),  # a template of an imported package
        ("extra.py", "return 3", "return 30"),  # the package's lazy export the script asks for
    ]:
        _edit(source / "toy" / module, old, new)
        fingerprints.append(code_fingerprint(script=script, source=source))
    assert len(set(fingerprints)) == len(fingerprints)


def _planned(done: subprocess.CompletedProcess) -> dict[str, int]:
    """Jobs by rule of a dry run (its "Job stats" table); {} when it has nothing to do."""
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return {rule: int(count) for rule, count in re.findall(r"^(\w+) +(\d+)$", done.stdout, flags=re.MULTILINE)}


@pytest.mark.workflow
def test_a_code_change_reruns_the_jobs_whose_code_it_changes_and_no_others(repository_copy):
    def snakemake(*args):
        command = [sys.executable, "-m", "snakemake", "--cores", "2", "--configfile", str(TEST_CONFIG), *args]
        return subprocess.run(command, cwd=repository_copy, capture_output=True, text=True, check=False)

    ran = snakemake()
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    assert _planned(snakemake("-n")) == {}
    package = repository_copy / "src" / "enkcvs"

    _edit(package / "method" / "selection.py", '"""', '"""A docstring edited. ')  # the module's docstring
    assert _planned(snakemake("-n")) == {}

    _edit(package / "method" / "selection.py", "\ndef ", "\nEDITED = True\n\n\ndef ")
    selection = _planned(snakemake("-n"))
    assert selection.get("select_samples") == 1 and selection.get("train_final_selected") == 1
    assert not {"train_fold", "train_final_baseline", "prepare_dataset", "inject_noise"} & set(selection)
    assert snakemake().returncode == 0

    _edit(package / "report" / "render.py", "\ndef ", "\nEDITED = True\n\n\ndef ")
    report = _planned(snakemake("-n"))
    assert report and "table2" in report
    trainings_and_steps = {"train_fold", "train_final_baseline", "train_final_selected", "select_samples"}
    assert not trainings_and_steps & set(report)
