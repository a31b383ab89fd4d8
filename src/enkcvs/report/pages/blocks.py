"""The pages' generated blocks: the results the Markdown pages show, rendered from the recorded runs (around them, the
prose of README.md, ``docs/``, ``benchmarks/README.md`` and ``config/README.md`` binds each number to the field it
states, as a bound value of :mod:`enkcvs.report.pages.values` that :func:`regenerate` rewrites too:
``tests/test_page_numbers.py``).

A page (README.md, ``docs/*.md``, ``benchmarks/README.md``, ``config/README.md``: :data:`PAGES`) holds generated
blocks between markers::

    <!-- recorded: default/table2.md -->
    ...generated, never edited...
    <!-- /recorded -->

A key is ``<run>/<view>``: the run a recorded run's folder in :data:`enkcvs.recording.provenance.RUN_HOME`
(``results/recorded/``: the runs the pages cite as results and as speed comparisons),
the view a rendered file of the run (``table2.md``), one of :data:`VIEWS`, one of :data:`PAIR_VIEWS` against another
run (``diff:<other run>``: the cells that differ), or one of :data:`MULTI_VIEWS` over the run and others
(``row:<run>+<run>``: one Table 2 row gathered from them). A run that is history only is retired from there into
a history under ``benchmarks/results/`` (:mod:`enkcvs.recording.retire`), whose blocks are ``<history>/<view>`` with
one of :data:`HISTORY_VIEWS` (``<history>`` the JSON's name without ``.json``). This module names the views; they are
computed in :mod:`enkcvs.report.views`. :func:`regenerate` rewrites a page's blocks; ``python -m enkcvs.runs readme``
(``make readme``) rewrites every page's, and ``--check`` only reports the blocks that differ.
"""

import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from enkcvs.io import PathLike
from enkcvs.recording.provenance import RUN_HOME, run_line
from enkcvs.recording.retire import read_history
from enkcvs.report.pages.values import regenerate_values
from enkcvs.report.views.diff import run_difference
from enkcvs.report.views.gpu_check import gpu_check_view
from enkcvs.report.views.issues import label_issues
from enkcvs.report.views.ladder import ladder_beside, ladder_extremes, ladder_steps, ladder_walk
from enkcvs.report.views.rank_speed import rank_speed_view
from enkcvs.report.views.retired import retired_difference, retired_run_line, retired_table2_beside
from enkcvs.report.views.review_list import review_list_view
from enkcvs.report.views.row import row_view
from enkcvs.report.views.selection import (
    ranking_verdict,
    selection_beside,
    table1_agreement,
    table1_trend,
    theory_misses,
    theory_summary,
)
from enkcvs.report.views.standing import standing, standing_over
from enkcvs.report.views.table2 import (
    forget_rate_beside,
    forget_rate_tally,
    noise_cost,
    paper_beside,
    table2_beside,
    table2_ordering,
)
from enkcvs.report.views.vs_cleanlab import vs_cleanlab_view

#: Views of a recorded run computed from its files, beside the files themselves.
VIEWS: dict[str, Callable[[Path], str]] = {
    "run": run_line,
    "table1-agreement": table1_agreement,
    "table1-trend": table1_trend,
    "table2-ordering": table2_ordering,
    "paper-beside": paper_beside,
    "ladder-steps": ladder_steps,
    "ladder-extremes": ladder_extremes,
    "ladder-walk": ladder_walk,
    "noise-cost": noise_cost,
    "theory-misses": theory_misses,
    "theory-summary": theory_summary,
    "ranking-verdict": ranking_verdict,
    "label-issues": label_issues,
    "standing": standing,
}

#: Views that set a recorded run against another: ``<run>/<view>:<other run>``.
PAIR_VIEWS: dict[str, Callable[[Path, Path], str]] = {
    "diff": run_difference,
    "ladder-beside": ladder_beside,
    "table2-beside": table2_beside,
    "forget-rate": forget_rate_beside,
}

#: Views over a run and others, in the order given: ``<run>/<view>:<run>+<run>...``, where ``<run>[<method>,...]``
#: takes only those methods' cells of that run.
MULTI_VIEWS = {
    "row": row_view,
    "standing": standing_over,
    "forget-rate-tally": forget_rate_tally,
    "selection-beside": selection_beside,
}
#: Views of a benchmark's JSON rather than of a recorded run: ``<file stem>/<view>``, the file in ``results``
#: (:func:`render_block`; relative to the repository root, as is the paper's config the views read).
FILE_VIEWS = {
    "gpu-check": gpu_check_view,
    "review-list": review_list_view,
    "rank-speed": rank_speed_view,
    "vs-cleanlab": vs_cleanlab_view,
}
BENCHMARK_RESULTS = "benchmarks/results"
#: Views of a history of retired runs (:mod:`enkcvs.report.views.retired`), each with the runs it names:
#: ``run:<retired run>``, ``diff:<run>:<other run>`` (the first against the second, either retired or recorded) and
#: ``table2-beside:<recorded run>:<retired run>``.
HISTORY_VIEWS = ("run", "diff", "table2-beside")
RUN_SPEC = re.compile(r"(?P<run>[^\[\]+]+)(?:\[(?P<methods>[a-z_]+(?:,[a-z_]+)*)\])?")

MARKER = re.compile(r"(<!-- recorded: (?P<key>\S+) -->\n)(?P<body>.*?)(<!-- /recorded -->)", re.DOTALL)
#: The Markdown pages whose generated blocks ``make readme`` rewrites (globs, relative to the repository root).
PAGES = ("README.md", "docs/*.md", "benchmarks/README.md", "config/README.md")


def pages(base: PathLike = ".") -> list[Path]:
    """The pages of :data:`PAGES` that exist under ``base``, in that order."""
    return [path for pattern in PAGES for path in sorted(Path(base).glob(pattern))]


Roots = PathLike | Sequence[PathLike]


def find_run(name: str, root: Roots = RUN_HOME) -> Path | None:
    """The folder of the recorded run ``name``: the first of the folders ``root`` (one or several) that holds it."""
    roots = [root] if isinstance(root, (str, Path)) else list(root)
    return next((Path(folder) / name for folder in roots if (Path(folder) / name / "provenance.json").exists()), None)


def render_block(key: str, *, root: Roots = RUN_HOME, results: PathLike = BENCHMARK_RESULTS) -> str:
    """The generated text of the block ``key`` (``<run>/<view or file>``), the run found in ``root``
    (:func:`find_run`); or of a benchmark's JSON in ``results`` (:data:`FILE_VIEWS`), or of a history of retired runs
    there (:data:`HISTORY_VIEWS`)."""
    name, _, view = key.partition("/")
    history = Path(results) / f"{name}.json"
    if view.partition(":")[0] in HISTORY_VIEWS and history.is_file():
        return _history_block(key, history, root=root)
    if view in FILE_VIEWS:
        path = Path(results) / f"{name}.json"
        if not path.exists():
            raise FileNotFoundError(f"block {key!r}: {path} does not exist; write it with benchmarks/gpu_check.py")
        return FILE_VIEWS[view](path, paper_config=Path(results).parents[1] / "config" / "paper.yaml")
    run = find_run(name, root)
    if run is None:
        raise FileNotFoundError(
            f"block {key!r}: no recorded run {name} in {root}; record it with "
            f"`python -m enkcvs.runs run --name {name} --configfile ...`"
        )
    if view in VIEWS:
        return VIEWS[view](run)
    pair_view, _, other_name = view.partition(":")
    if pair_view in MULTI_VIEWS:
        specs = [RUN_SPEC.fullmatch(spec) for spec in other_name.split("+")]
        if None in specs:
            raise ValueError(
                f"block {key!r}: write the runs to gather as <run> or <run>[<method>,<method>], joined by +"
            )
        others = [(find_run(spec["run"], root), spec["methods"]) for spec in specs]
        missing = [spec["run"] for spec, (found, _) in zip(specs, others) if found is None]
        if missing:
            raise FileNotFoundError(f"block {key!r}: no recorded run {', '.join(missing)} to gather with {name}")
        return MULTI_VIEWS[pair_view](
            [(run, None), *((found, None if methods is None else set(methods.split(","))) for found, methods in others)]
        )
    if pair_view in PAIR_VIEWS:
        other = find_run(other_name, root)
        if other is None:
            raise FileNotFoundError(f"block {key!r}: no recorded run {other_name} to set {name} against")
        return PAIR_VIEWS[pair_view](other, run)
    path = run / view
    if not path.exists():
        raise FileNotFoundError(
            f"block {key!r}: {path} does not exist; views: {sorted(VIEWS)}, "
            f"{[v + ':<run>' for v in PAIR_VIEWS]}, {[v + ':<run>+<run>' for v in MULTI_VIEWS]} "
            "or a file"
        )
    return path.read_text().rstrip("\n") + "\n"


def _history_block(key: str, path: Path, *, root: Roots) -> str:
    """The generated text of a block of :data:`HISTORY_VIEWS` over the history at ``path``."""
    view, *names = key.partition("/")[2].split(":")
    if len(names) != (1 if view == "run" else 2):
        raise ValueError(
            f"block {key!r}: write <history>/run:<retired run>, <history>/diff:<run>:<other run> or "
            "<history>/table2-beside:<recorded run>:<retired run>"
        )
    history = read_history(path)
    if view == "run":
        return retired_run_line(history, name=names[0], source=f"{BENCHMARK_RESULTS}/{path.name}")
    if view == "diff":
        return retired_difference(history, second=names[0], first=names[1])
    run = find_run(names[0], root)
    if run is None:
        raise FileNotFoundError(f"block {key!r}: no recorded run {names[0]} in {root}")
    return retired_table2_beside(history, run=run, retired=names[1])


def regenerate(text: str, *, root: Roots = RUN_HOME, results: PathLike = BENCHMARK_RESULTS) -> tuple[str, list[str]]:
    """``text`` with every recorded block regenerated (:func:`render_block`) and every bound value rewritten from its
    field (:mod:`enkcvs.report.pages.values`), and the keys of the blocks and values that changed."""
    changed = []

    def replace(match: re.Match) -> str:
        body = render_block(match["key"], root=root, results=results)
        if body != match["body"]:
            changed.append(match["key"])
        return match.group(1) + body + match.group(4)

    text = MARKER.sub(replace, text)
    text, values = regenerate_values(text, base=Path(results).parents[1], homes=root)
    return text, changed + values


def regenerate_pages(paths: Iterable[PathLike], *, root: Roots = RUN_HOME, write: bool = True) -> dict[Path, list[str]]:
    """Regenerate the blocks of every page in ``paths`` (written back unless ``write`` is false): per page, the keys
    of the blocks that changed. Every page is rendered before any is written, so a missing run leaves all of them."""
    rendered = {}
    for path in map(Path, paths):
        text = path.read_text()
        rendered[path] = (text, *regenerate(text, root=root))
    if write:
        for path, (text, new, _) in rendered.items():
            if new != text:
                path.write_text(new)
    return {path: changed for path, (_, _, changed) in rendered.items()}
