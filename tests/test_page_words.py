"""No page can state a result in words that its record does not back: a quantity in words (``two`` seeds,
``twice``, ``more than double``, ``half``, ``the largest``) and a direction between two bound values (one bound
value ``above``, ``below``, ``rises`` or ``falls`` against another) in the hand-written prose of a page
(:data:`test_page_numbers.PAGES`, prose as :func:`test_page_numbers.unbound` reads it) is either generated (a block)
or bound like a number: a count by the ``words`` format of a bound value, ``<!--v:SOURCE#FIELD|words-->two<!--/v-->``
(:mod:`enkcvs.report.pages.values`), whose text ``make readme`` rewrites from its field.

The pages held 232 such claims unbound when this test was written (an audit found some of them wrong: "three seeds"
for two, "more than double" for one measurement of four, "the largest" step for the second largest). Those left are
listed in :data:`BASELINE` and may only go: a claim not listed fails, and so does a listed one no longer on its page
(bound, generated or rephrased), so that the list is cut as the pages are mended and never grows.
"""

import re
from functools import cache
from pathlib import Path

import pytest
from test_page_numbers import BOUND, PAGES, REPO, unbound

#: A quantity in words: counts, multiples and fractions, and the superlatives that rank values.
WORD_QUANTITY = re.compile(
    r"(?<![\w-])(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twice|thrice|double[sd]?|triple[sd]?"
    r"|halve[sd]?|half|a third|a quarter|largest|smallest|highest|lowest)(?![\w-])",
    re.IGNORECASE,
)
#: A direction between two bound values of one sentence.
DIRECTION = re.compile(
    rf"{BOUND}[^.;:]*?(?<![\w-])(?:above|below|rises?|falls?|higher|lower|exceeds?)(?![\w-])"
    rf"[^.;:]*?{BOUND}",
    re.IGNORECASE,
)
#: The unbound word claims the pages still hold, one per line: the page, a tab, the claim as :func:`word_claims`
#: words it. Only ever shortened.
BASELINE = Path(__file__).with_name("page_words_baseline.txt")


@cache
def word_claims(text: str) -> tuple[str, ...]:
    """Every unbound quantity in words and direction between two bound values of a page's prose."""
    return tuple(
        problem
        for claims in (WORD_QUANTITY, DIRECTION)
        for problem in unbound(text, claims=claims)
        if " in '..." in problem
    )  # unbound's other lines (a bound value off its field) are test_page_numbers'


def baseline() -> dict[str, list[str]]:
    listed = {}
    for line in BASELINE.read_text().splitlines():
        page, _, claim = line.partition("\t")
        listed.setdefault(page, []).append(claim)
    return listed


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(REPO)))
def test_no_page_states_a_new_result_in_words_unbound(page):
    name = str(page.relative_to(REPO))
    found, listed = word_claims(page.read_text()), baseline().get(name, [])
    new = [claim for claim in found if claim not in listed]
    assert new == [], (
        f"{name}: {len(new)} quantities or directions in words bound to nothing (bind a count with "
        "<!--v:SOURCE#FIELD|words-->, state a gap as a bound number, or generate the sentence):\n" + "\n".join(new)
    )


def test_the_baseline_lists_only_claims_still_on_their_page():
    """A claim bound or rephrased leaves the list with it: the list only shrinks."""
    stale = [
        f"{page}\t{claim}"
        for page, claims in baseline().items()
        for claim in claims
        if claim not in word_claims((REPO / page).read_text())
    ]
    assert stale == [], f"{BASELINE.name}: remove these lines, no longer on their pages:\n" + "\n".join(stale)


PLANTED = [
    "## Two seeds\n\nThe selection ran at three seeds, as the paper's did.\n",
    "## Graphs\n\nCUDA graphs more than double the step loop's rate.\n",
    "## Steps\n\nThe step *SS's wrong labels* is the ladder's largest negative step.\n",
    "## Recall\n\nThe measured recall <!--v:mnist-full/provenance.json#jobs-->24<!--/v--> lies below the theorem's "
    "<!--v:mnist-full/provenance.json#jobs-->24<!--/v--> in every setting.\n",
]


@pytest.mark.parametrize("planted", PLANTED, ids=["a count", "a multiple", "a superlative", "a direction"])
def test_a_planted_claim_in_words_is_refused(planted):
    assert word_claims(planted), planted


def test_a_count_bound_in_words_is_no_claim_and_is_checked_against_its_field():
    from enkcvs.report.pages.values import render_value

    assert render_value("config/config.yaml#seeds.len|words", base=REPO, homes=REPO / "results/recorded") == "two"
    bound = "## Seeds\n\nThe demo ran at <!--v:config/config.yaml#seeds.len|words-->two<!--/v--> seeds.\n"
    assert word_claims(bound) == () and unbound(bound) == []
    wrong = bound.replace("-->two<", "-->three<")
    assert any("shows 'three', its field 'two'" in problem for problem in unbound(wrong))
    with pytest.raises(ValueError, match="format 'words' writes the whole numbers 0 to 12, not 1.3"):
        render_value("enkcvs.training.precision#SPEEDUP_NEEDED|words", base=REPO, homes=REPO / "results/recorded")
