"""The pages. Generated ones (README.md, docs/results.md, benchmarks/README.md) are their templates' rendering of the
records; hand-written prose (the other pages, and the templates' own words) states no measured figure, no quantity
or comparison in words and no ordering: it links to the generated table that holds it. Every linked or named
repository path, module and section exists, every code fence closes, and the prose stays short."""

import importlib
import re
from pathlib import Path

import pytest

from enkcvs.report import pages

REPO = Path(__file__).resolve().parents[1]
GENERATED = sorted(pages.PAGES)
HAND_WRITTEN = ["config/README.md", "docs/paper-notes.md", "docs/running.md", "docs/your-data.md", "results/README.md"]
TEMPLATES = sorted((REPO / "src" / "enkcvs" / "report" / "templates").glob("*.j2"))
PAGES = sorted({*GENERATED, *HAND_WRITTEN, *(p.relative_to(REPO).as_posix() for p in REPO.glob("docs/*.md"))})

#: A measured figure: a number with a unit of time, size, speed, share or gap.
MEASURED = re.compile(
    r"\b\d[\d,.]*\s*(?:%|percent|ms|s|seconds?|min|minutes?|h|hours?|GPU-hours|days?|MiB|MB|GiB|GB|x|points?|"
    r"samples/s|jobs|times)(?![\w/])",
    re.IGNORECASE,
)
#: A quantity or comparison in words, which only a measurement could back.
QUANTITY = re.compile(
    r"\b(?:twice|thrice|half (?:of|the|as)|a third|a quarter|several times|dozens|hundreds|thousands|"
    r"a few (?:seconds|minutes|hours|points|tenths)|faster|slower|fastest|slowest|much (?:more|less)|far (?:more|"
    r"less|below|above)|by far|nearly all|almost all|most of the time|an order of magnitude)\b",
    re.IGNORECASE,
)
#: Words that order two results.
ORDERING = re.compile(
    r"\b(?:outperform\w*|beats?|better than|worse than|ahead of (?!time)|higher than|lower than|more accurate|"
    r"less accurate|is the highest|is the lowest|lies above|lies below|ranks? better|leads|trails)\b",
    re.IGNORECASE,
)
FENCE = re.compile(r"^```.*?^```[ \t]*$", flags=re.DOTALL | re.MULTILINE)
JINJA = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", flags=re.DOTALL)
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
#: A repository path named in code (`src/...`, `config/...`): its first folder, to tell it from an output path.
TRACKED_FOLDERS = ("benchmarks/", "config/", "docs/", "envs/", "profiles/", "src/", "tests/", "workflow/")


def _without_code(text: str) -> str:
    return re.sub(r"`[^`\n]*`", "", FENCE.sub("", text))


def _prose(text: str) -> str:
    """The words of a hand-written page or template: no code, no link targets, no template expressions."""
    return re.sub(r"\]\([^)]*\)", "]", _without_code(JINJA.sub(" ", text)))


def _hand_written() -> list[tuple[str, str]]:
    sources = [(page, (REPO / page).read_text()) for page in HAND_WRITTEN]
    return sources + [(template.name, template.read_text()) for template in TEMPLATES]


def test_each_generated_page_is_its_templates_rendering_of_the_records():
    assert pages.regenerate(REPO, write=False) == [], "run `make readme`"


@pytest.mark.parametrize(("name", "text"), _hand_written(), ids=[name for name, _ in _hand_written()])
def test_hand_written_prose_states_no_measured_figure_quantity_or_ordering(name, text):
    words = " ".join(_prose(text).split())
    found = [
        f"{kind}: {match.group(0)!r}"
        for kind, pattern in (("figure", MEASURED), ("quantity", QUANTITY), ("ordering", ORDERING))
        for match in pattern.finditer(words)
    ]
    assert found == [], f"{name} states what only a generated table may"


def test_the_checks_catch_what_they_refuse():
    assert MEASURED.search("took 1 min 3 s") and MEASURED.search("about 158 GPU-hours") and MEASURED.search("3.2x")
    assert not MEASURED.search("8x8 digits, K = 10, M = 5, Python >= 3.11")
    assert QUANTITY.search("several times faster") and ORDERING.search("E-NKCVS outperforms SL")
    assert _prose("a `3 s` span and {{ seconds }} s") == "a  span and   s"


def _anchors(page: Path) -> set[str]:
    """GitHub's anchors of a page's headings: lower case, punctuation but '-' and '_' dropped, spaces to '-'."""
    headings = re.findall(r"^#+\s+(.*?)\s*$", FENCE.sub("", page.read_text()), flags=re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-") for heading in headings}


def _named(text: str) -> list[str]:
    """Repository paths and modules a page names in inline code."""
    return re.findall(r"`([^`\n]+)`", FENCE.sub("", text))


@pytest.mark.parametrize("page", PAGES)
def test_every_link_path_module_and_section_a_page_names_exists(page):
    path = REPO / page
    text = path.read_text()
    broken = []
    for target in LINK.findall(re.sub(r"`[^`\n]*`", "", FENCE.sub("", text))):
        if re.match(r"^[a-z]+:", target):
            continue  # http(s), mailto: not checked offline
        name, _, anchor = target.partition("#")
        file = (path.parent / name).resolve() if name else path
        if not file.exists():
            broken.append(f"link {target}")
        elif anchor and (file.suffix != ".md" or anchor not in _anchors(file)):
            broken.append(f"section {target}")
    for code in _named(text):
        if re.fullmatch(r"[\w./-]+", code) and code.startswith(TRACKED_FOLDERS) and "..." not in code:
            if not (REPO / code).exists():
                broken.append(f"path {code}")
        elif re.fullmatch(r"enkcvs(\.\w+)+", code):
            parts = code.split(".")
            for split in range(len(parts), 0, -1):
                try:
                    found = importlib.import_module(".".join(parts[:split]))
                except ImportError:
                    continue
                for attribute in parts[split:]:
                    found = getattr(found, attribute, None)
                if found is None:
                    broken.append(f"module {code}")
                break
    assert broken == []


@pytest.mark.parametrize("page", PAGES)
def test_every_code_fence_closes_on_a_line_of_its_own(page):
    fences = [line for line in (REPO / page).read_text().splitlines() if line.lstrip().startswith("```")]
    assert len(fences) % 2 == 0, f"{page}: a code fence is left open"
    assert all(line.strip() == "```" for line in fences[1::2]), f"{page}: text after a closing fence"


def test_the_prose_is_short():
    prose = [
        REPO / "README.md",
        *REPO.glob("docs/*.md"),
        *(REPO / folder / "README.md" for folder in ("config", "results", "benchmarks")),
    ]
    lines = {path.relative_to(REPO).as_posix(): len(path.read_text().splitlines()) for path in prose}
    assert {page: count for page, count in lines.items() if count > 300} == {}
    assert sum(lines.values()) <= 1500, lines


def test_the_readmes_first_screen_answers_each_claim_of_the_paper():
    """Its claims table, within the first screen: a row per claim and one for what the paper does not measure
    (E-NKCVS beside matched baselines), each with a verdict, and each claim not run with the config that runs it."""
    readme = (REPO / "README.md").read_text()
    table = readme.split("## The paper's claims, and what was reproduced", 1)[1].split("\n## ", 1)[0]
    assert readme.index("## The paper's claims") < 1500  # after the introduction and the two commands
    rows = [line for line in table.splitlines() if line.startswith("| **")]
    claims = [re.match(r"\| \*\*(.+?)\*\*", row).group(1) for row in rows]
    assert claims == [
        "Table 1",
        "Table 2, MNIST",
        "Table 2, CIFAR-10",
        "Table 2, CIFAR-100",
        "Table 2, TREC",
        "Table 3",
        "Figure 1",
        "Theorem 1",
        "The ordering",
        "Not in the paper: what E-NKCVS adds over mixup alone and over equal compute",
    ]
    for row in rows:
        claim, ran, verdict, rest = [cell.strip() for cell in row.strip("|").split("|")]
        assert verdict and rest, claim
        if verdict.startswith("not run"):
            assert re.search(r"config/experiments/[\w-]+\.yaml", rest), claim
