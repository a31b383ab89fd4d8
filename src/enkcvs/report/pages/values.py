"""Bound values: a number in a page's prose that names the field it states, rewritten from that field by ``make
readme`` like the generated blocks (:mod:`enkcvs.report.pages.blocks`), so that a page cannot keep a number its source no
longer holds (``tests/test_page_numbers.py``)::

    took <!--v:mnist-full-seeds/provenance.json#wall_seconds|duration-->6 h 13 min<!--/v--> on two cores

A key is ``SOURCE#FIELD``, optionally several joined by `` + `` (a sum), `` - `` (a difference), `` * `` (a product) or
`` / `` (a ratio), applied left to right, then optionally ``|FORMAT``. ``SOURCE`` is

- ``paper``: the paper's published numbers (:func:`enkcvs.report.paper.published_results`), a list of rows;
- a module of the package (``enkcvs.training.precision``): its upper-case constants written as literals;
- a file relative to the repository root (``config/paper.yaml``, ``benchmarks/results/<name>.json``, a ``.csv``);
- ``<run>/<file>``: a file of a recorded run (``mnist-full/table2.csv``, ``mnist-full/provenance.json``), and
  ``<run>/config`` the config it ran with.

``FIELD`` walks into the parsed file, steps separated by dots: a key, a list index, ``[column=value,...]`` (the one
row of a list, a CSV's or the paper's, whose columns read so), ``'key'`` (a key holding dots: ``'torch.compile
default'``) or ``len`` (how many items). ``FORMAT`` is a Python
format spec (``.1f``, ``,d``, ``+.2f``), one after ``%`` for a fraction as a percentage (``%.1f``: 0.696 as
``69.6``), ``duration`` for seconds (``6 min 40 s``, ``6 h 13 min``; under a minute ``9.8 s``), ``abs.1f`` for a
difference without its sign or ``words`` for a whole number in words (``two`` seeds, :data:`NUMBER_WORDS`); without
one a value prints as it is stored.
"""

import ast
import csv
import importlib.util
import io
import json
import math
import re
from functools import cache
from pathlib import Path

import yaml

from enkcvs.io import PathLike
from enkcvs.recording.provenance import RUN_HOME, duration
from enkcvs.report.paper import published_results

#: A bound value in a page: its key, and the text it shows.
VALUE = re.compile(r"<!--v:(?P<key>[^>]*?)-->(?P<text>[^<]*)<!--/v-->")
STEP = re.compile(r"\[(?P<where>[^\]]*)\]|'(?P<quoted>[^']*)'|[^.\[']+")


def _parse(path: Path):
    """A file's content: YAML or JSON as parsed, a CSV as a list of rows (strings)."""
    text = path.read_text()
    if path.suffix == ".csv":
        return list(csv.DictReader(io.StringIO(text)))
    return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)


@cache
def _paper_rows() -> tuple[dict, ...]:
    return tuple(published_results().to_dict("records"))


def _source(name: str, base: Path, homes: tuple[Path, ...]):
    """The parsed content a key's ``SOURCE`` names."""
    if name == "paper":
        return list(_paper_rows())
    if re.fullmatch(r"enkcvs(?:\.\w+)+", name):
        return _constants(name)
    if (base / name).is_file():
        return _parse(base / name)
    run, _, file = name.partition("/")
    folder = next((home / run for home in homes if (home / run / "provenance.json").is_file()), None)
    if folder is None:
        raise FileNotFoundError(f"bound value: {name!r} is neither a file nor a recorded run's file")
    if file == "config":
        return yaml.safe_load(json.loads((folder / "provenance.json").read_text())["config"]) or {}
    return _parse(folder / file)


@cache
def _constants(module: str) -> dict:
    """A module's upper-case constants written as literals, read from its source (importing it may import torch)."""
    tree = ast.parse(Path(importlib.util.find_spec(module).origin).read_text())
    found = {}
    for node in tree.body:
        target = (
            node.target
            if isinstance(node, ast.AnnAssign)
            else (node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None)
        )
        if isinstance(target, ast.Name) and target.id.isupper() and node.value is not None:
            try:
                found[target.id] = ast.literal_eval(node.value)
            except ValueError:
                pass
    return found


def _matches(item, where: str) -> bool:
    """Whether a row reads as ``where`` (``column=value,...``): numbers compared as numbers."""
    for condition in where.split(","):
        column, _, wanted = condition.partition("=")
        value = item.get(column.strip()) if isinstance(item, dict) else None
        try:
            if not math.isclose(float(value), float(wanted)):
                return False
        except (TypeError, ValueError):
            if str(value) != wanted.strip():
                return False
    return True


def _walk(content, field: str, key: str):
    """The value at ``field`` (dot-separated steps) in ``content``."""
    for step in STEP.finditer(field):
        if step["where"] is not None:
            rows = [item for item in content if _matches(item, step["where"])]
            if len(rows) != 1:
                raise KeyError(f"bound value {key!r}: [{step['where']}] matches {len(rows)} rows, not one")
            content = rows[0]
        elif step["quoted"] is not None:  # a key holding dots: 'torch.compile default'
            content = content[step["quoted"]]
        elif step[0] == "len":
            content = len(content)
        elif isinstance(content, list):
            content = content[int(step[0])]
        else:
            if step[0] not in content:
                raise KeyError(f"bound value {key!r}: no field {step[0]!r}")
            content = content[step[0]]
    return content


def _number(value):
    """A CSV's string as the number it holds; anything else as it is."""
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


#: The whole numbers a ``words`` format writes out, as a sentence states a count.
NUMBER_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")


def _formatted(value, spec: str) -> str:
    if spec == "duration":
        return duration(float(value))
    if spec == "words":
        if float(value) != int(float(value)) or not 0 <= int(float(value)) < len(NUMBER_WORDS):
            raise ValueError(f"format 'words' writes the whole numbers 0 to {len(NUMBER_WORDS) - 1}, not {value!r}")
        return NUMBER_WORDS[int(float(value))]
    if spec.startswith("%"):
        value, spec = 100 * float(value), spec[1:]
    elif spec.startswith("abs"):
        value, spec = abs(float(value)), spec[3:]
    if isinstance(value, float) and spec.endswith("d"):
        value = round(value)
    return format(value, spec)


def value_of(key: str, *, base: PathLike = ".", homes=RUN_HOME):
    """The value a key's fields give (their sum, difference, product or ratio, left to right, where it joins several),
    before formatting."""
    base = Path(base)
    homes = tuple(base / home for home in ([homes] if isinstance(homes, (str, Path)) else homes))
    operands = re.split(r" ([-+*/]) ", key.partition("|")[0])
    values = []
    for operand in operands[::2]:
        name, hashed, field = operand.strip().partition("#")
        if not hashed:
            raise ValueError(f"bound value {key!r}: write SOURCE#FIELD")
        values.append(_number(_walk(_source(name, base, homes), field, key)))
    result = values[0]
    for operator, value in zip(operands[1::2], values[1:]):
        result = (
            result + value
            if operator == "+"
            else result - value
            if operator == "-"
            else result * value
            if operator == "*"
            else result / value
        )
    return result


def render_value(key: str, *, base: PathLike = ".", homes=RUN_HOME) -> str:
    """The text a bound value shows: its field (:func:`value_of`) in its format."""
    return _formatted(value_of(key, base=base, homes=homes), key.partition("|")[2].strip())


def regenerate_values(text: str, *, base: PathLike = ".", homes=RUN_HOME) -> tuple[str, list[str]]:
    """``text`` with every bound value rewritten from its field, and the keys of those that changed."""
    changed = []

    def replace(match: re.Match) -> str:
        shown = render_value(match["key"], base=base, homes=homes)
        if shown != match["text"]:
            changed.append(f"value {match['key']}")
        return f"<!--v:{match['key']}-->{shown}<!--/v-->"

    return VALUE.sub(replace, text), changed
