"""The Markdown pages: every relative link resolves, and the README names every report file the workflow writes."""

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = sorted(
    {
        REPO / "README.md",
        *REPO.glob("docs/*.md"),
        REPO / "benchmarks" / "README.md",
        REPO / "config" / "README.md",
        REPO / "results" / "README.md",
    }
)
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def _without_fences(text: str) -> str:
    return re.sub(r"^```.*?^```", "", text, flags=re.DOTALL | re.MULTILINE)


def _prose(text: str) -> str:
    """The page without fenced code blocks and inline code, where brackets are code, not links."""
    return re.sub(r"`[^`\n]*`", "", _without_fences(text))


def _anchors(page: Path) -> set[str]:
    """GitHub's anchors of a page's headings: lower case, punctuation but '-' and '_' dropped (an inline code span
    keeps its text, without the backticks), spaces to '-'."""
    headings = re.findall(r"^#+\s+(.*?)\s*$", _without_fences(page.read_text()), flags=re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-") for heading in headings}


def links(page: Path) -> list[str]:
    return [
        target for target in LINK.findall(_prose(page.read_text())) if not re.match(r"^[a-z]+:", target)
    ]  # http(s), mailto: not checked offline


def test_the_pages_exist_and_have_links():
    assert all(page.exists() for page in PAGES) and len(PAGES) >= 8
    assert sum(len(links(page)) for page in PAGES) > 20


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(REPO)))
def test_every_relative_link_resolves(page):
    broken = []
    for target in links(page):
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no {file.relative_to(REPO) if file.is_relative_to(REPO) else file}")
        elif anchor and (file.suffix != ".md" or anchor not in _anchors(file)):
            broken.append(f"{target}: no heading with anchor #{anchor}")
    assert broken == []


def _expand(path: str) -> set[str]:
    """``table1.{md,csv}`` -> both names."""
    match = re.search(r"\{([\w,]+,[\w,]+)\}", path)
    if not match:
        return {path}
    return {
        name for option in match[1].split(",") for name in _expand(path[: match.start()] + option + path[match.end() :])
    }


def test_the_readme_names_every_report_file_and_log_folder():
    """The README's "What you get" table: every ``results/report/`` file a rule declares, and every ``logs/``
    folder."""
    rules = "".join(path.read_text() for path in (REPO / "workflow" / "rules").glob("*.smk"))
    declared = set(re.findall(r'"results/report/([^"/]+)"', rules))
    logs = set(re.findall(r'"logs/(\w+)/', rules))
    readme = (REPO / "README.md").read_text()
    table = readme.split("## What you get", 1)[1].split("\n## ", 1)[0]
    named = {name for cell in re.findall(r"`([^`]+)`", table) for name in _expand(cell.rsplit("/", 1)[-1])}
    assert declared - named == set()
    assert {f"logs/{folder}/" for folder in logs} - set(re.findall(r"`(logs/\w+/)`", table)) == set()
    assert declared and logs


#: Words that rank two methods' results, and what a sentence ranking them must carry: the test's verdict, or the
#: statement that it orders nothing (issue: orderings by a stated test). A comparison with the paper's own cell is
#: not an ordering of two methods here.
RANKING_WORDS = re.compile(
    r"\b(outperform\w*|beats?|better than|worse than|is the highest|is the lowest|lies above|"
    r"lies below|ranks? (?:far |marginally )?better)\b",
    re.IGNORECASE,
)
TESTED = re.compile(
    r"p = |not distinguishable|not ordered|orders? (?:none|nothing|neither)|cannot order|untested|"
    r"not tested|Welch|paired t-test|the paper's own",
    re.IGNORECASE,
)


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(REPO)))
def test_no_sentence_ranks_two_methods_without_a_test(page):
    text = re.sub(r"<!-- recorded:.*?<!-- /recorded -->", "", page.read_text(), flags=re.DOTALL)  # tested views
    sentences = re.split(r"(?<=[.;:])\s+", _without_fences(text))
    untested = [
        " ".join(sentence.split())
        for sentence in sentences
        if RANKING_WORDS.search(sentence) and not TESTED.search(sentence)
    ]
    assert not untested, f"{page.name} ranks methods without a test's verdict: {untested}"
