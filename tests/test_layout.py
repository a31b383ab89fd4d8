"""The paths the library reads back from a working directory are the paths the workflow's rules write."""

from pathlib import Path

import pytest

from enkcvs.pipeline import layout

RULES = Path(__file__).parents[1] / "workflow" / "rules"
PATTERNS = {name: value for name, value in vars(layout).items() if name.isupper()}


def test_the_layout_names_the_files_the_library_reads():
    assert {
        "DATASET",
        "TOKENS",
        "NOISE_LABELS",
        "FOLD",
        "SELECTION",
        "SELECTION_METRICS",
        "CL_SELECTION",
        "FINAL_BASELINE",
        "FINAL_SELECTED",
        "FINAL_PRUNED",
    } <= set(PATTERNS)


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_each_path_is_a_rule_output(name):
    rules = "\n".join(path.read_text() for path in sorted(RULES.glob("*.smk")))
    assert f'="{PATTERNS[name]}"' in rules.replace(" ", ""), (
        f"layout.{name} is no rule's named output: {PATTERNS[name]}"
    )
