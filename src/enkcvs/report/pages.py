"""The pages generated from recorded runs and benchmark records (``make readme``): each page a Jinja2 template of
``enkcvs/report/templates/`` rendered with the data its function returns. The sentences are the templates'; the
numbers, orderings and verdicts the data's. ``python -m enkcvs.runs readme --check`` (and a test) finds a committed
page that differs from its rendering.
"""

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from enkcvs.recording.provenance import duration
from enkcvs.report import claims, floor, versus
from enkcvs.report.gathered import selection_title
from enkcvs.report.output_provenance import DIFFERS_MARK, FIELDS, NOT_RECORDED
from enkcvs.report.paper import METHOD_NAMES
from enkcvs.report.paper_table2 import reading_text
from enkcvs.report.readings import READINGS
from enkcvs.report.reproducibility import kernel_classes
from enkcvs.report.statistics import SIGNIFICANCE


def signed(value: float, digits: int = 1) -> str:
    """A difference in points: ``+0.9``, ``-56.9``; one that rounds to zero is ``+0.0`` (never ``-0.0``)."""
    return f"{round(value, digits) + 0.0:+.{digits}f}"


def pvalue(value: float | None) -> str:
    """A p-value as the pages print it (two significant digits)."""
    return "n/a" if value is None else f"{value:.2g}"


def markdown(frame: pd.DataFrame) -> str:
    return frame.to_markdown(index=False)


def machine(facts: dict) -> str:
    """A recorded run's machine: its CPU, cores and CPU flags, and its GPUs."""
    host = facts["machine"]
    gpus = f", {', '.join(host['gpus'])}" if host.get("gpus") else ""
    return f"{host['cores']} cores of an {host['cpu']} ({', '.join(host['cpu_flags'])}){gpus}"


def readme_data(root: Path) -> dict[str, Any]:
    """The README's first screen: each claim's data (:mod:`enkcvs.report.claims`)."""
    mnist = claims.row_cells(root, claims.mnist_row(root))
    trec = claims.row_cells(root, claims.TREC_ROW)
    return {
        "mnist": claims.row_summary(mnist),
        "mnist_orderings": claims.orderings(mnist),
        "largest_gap": claims.largest_gap_reading(root, mnist),
        "cells": sorted(path.relative_to(root).as_posix() for path in (root / claims.CELLS).glob("*.yaml")),
        "trec": claims.row_summary(trec),
        "trec_run": claims.run_facts(root, "trec-full"),
        "trec_places": claims.places(trec),
        "theorem": claims.theorem_gaps(root),
        "reweighting": claims.reweighting(root, "default"),
        "matched": claims.matched(root),
        "cifar10": claims.estimate(root, "config/experiments/cifar10.yaml"),
        "cifar100": claims.estimate(root, "config/experiments/cifar100.yaml"),
        "real_world": claims.estimate(root, "config/experiments/real-world.yaml"),
        "default": claims.run_facts(root, "default"),
        "significance": SIGNIFICANCE,
        "duration": duration,
    }


def seed_facts(cells: pd.DataFrame) -> pd.DataFrame:
    """What each seed's outputs of a gathered row ran with (``cells``: :func:`enkcvs.report.claims.row_cells`, its
    ``method`` printed): a row per run, seed and facts (:data:`enkcvs.report.output_provenance.FIELDS`), naming the
    row's cells they gave."""
    rows: dict[tuple, list[str]] = {}
    for cell in cells.itertuples():
        title = f"{cell.noise} {cell.method}" + (f" ({cell.selection})" if cell.selection != "-" else "")
        for fact in cell.facts:
            rows.setdefault((fact["run"], fact["seed"], *(fact[field] for field in FIELDS)), []).append(title)
    frame = pd.DataFrame(
        [(f"`{run}`", seed, "; ".join(titles), *facts) for (run, seed, *facts), titles in rows.items()],
        columns=["run", "seed", "cells", *FIELDS],
    )
    return frame.sort_values("seed", kind="stable")


def results_data(root: Path) -> dict[str, Any]:
    """docs/results.md: the default run's report, the full-MNIST and TREC rows beside the paper's, Theorem 1 per
    run, and every recorded run."""
    home = claims.records(root)
    mnist = claims.row_cells(root, claims.mnist_row(root))
    mnist = mnist.assign(
        method=[METHOD_NAMES[m] for m in mnist["method"]],
        selection=[selection_title(s) or "-" for s in mnist["selection"]],
        noise=[f"{k} {r:g}" for k, r in zip(mnist["noise_kind"], mnist["noise_rate"])],
    )
    row = mnist[
        [
            "noise",
            "method",
            "selection",
            "trainings",
            "mean",
            "std",
            "runs",
            "published",
            "published_std",
            "side",
            "gap",
            "p",
            "differs",
        ]
    ].round({"std": 2, "gap": 2, "p": 3})
    row["mean"] = [
        f"{mean:.2f}{f' {DIFFERS_MARK}' if differs else ''}" for mean, differs in zip(row["mean"], row["differs"])
    ]
    for reading in ("last10", "best"):  # beside the last epoch's mean: the cells' other readings, alike for all
        texts = [reading_text(cell, reading, decimals=2) for _, cell in mnist.iterrows()]
        row.insert(row.columns.get_loc("runs"), READINGS[reading], texts)
    theory = []
    for path in sorted(home.glob("*/theory.csv")):
        table = pd.read_csv(path)
        theory.append(
            {
                "run": path.parent.name,
                "selections": len(table),
                "precision gap": f"{table['precision_gap'].min():+.2f} to {table['precision_gap'].max():+.2f}",
                "recall gap": f"{table['recall_gap'].min():+.2f} to {table['recall_gap'].max():+.2f}",
            }
        )
    runs = []
    for path in sorted(home.glob("*/provenance.json")):
        facts = claims.run_facts(root, path.parent.name)
        runs.append(
            {
                "run": f"`{facts['name']}`",
                "config": f"`{facts['configfile']}`",
                "jobs": facts["jobs"] or "-",
                "wall time": duration(facts["wall_seconds"]),
                "machine": machine(facts),
                "commit": (facts["commit"] or "unknown")[:7],
            }
        )
    default = home / "default"
    kernels = kernel_classes(records=home, first="default", second=claims.KERNELS_RUN)
    return {
        "default": claims.run_facts(root, "default"),
        "kernels": kernels,
        "kernels_tables": markdown(kernels.tables[kernels.tables["cells_differ"] > 0].round(2)),
        "kernels_cells": markdown(kernels.cells.round(2)),
        "machine": machine,
        "report": {
            name: (default / f"{name}.md").read_text().strip()
            for name in ("table2", "table1", "theory", "confident_learning", "ranking", "noise", "resources")
        },
        "mnist_row": markdown(row.rename(columns={"differs": "outputs differ in"})),
        "mnist_seeds": markdown(seed_facts(mnist)),
        "differs_mark": DIFFERS_MARK,
        "not_recorded": NOT_RECORDED,
        "trec_table": (home / "trec-full" / "table2.md").read_text().strip(),
        "trec_run": claims.run_facts(root, "trec-full"),
        "matched_table": (home / claims.MATCHED_RUN / "matched.md").read_text().strip(),
        "matched_run": claims.run_facts(root, claims.MATCHED_RUN),
        "theory": markdown(pd.DataFrame(theory)),
        "runs": markdown(pd.DataFrame(runs)),
        "duration": duration,
    }


def _field(record: Any, path: str) -> Any:
    """A value of a benchmark record by its path: dotted keys, ``[key=value,...]`` picking a list's item."""
    for part in path.split("."):
        if part.startswith("[") and part.endswith("]"):
            wanted = dict(pair.split("=") for pair in part[1:-1].split(","))
            record = next(item for item in record if all(str(item.get(k)) == v for k, v in wanted.items()))
        else:
            record = record[part]
    return record


def benchmarks_data(root: Path) -> dict[str, Any]:
    """benchmarks/README.md: each speed target of ``benchmarks/targets/speed.yaml`` beside the latest figure measured
    for it (its record, where one is committed), or "not measured"."""
    targets = yaml.safe_load((root / "benchmarks" / "targets" / "speed.yaml").read_text())
    rows = []
    for name, target in targets.items():
        loaded = [(path, json.loads(path.read_text())) for path in sorted(root.glob(target["record"]))]
        done = [(path, data) for path, data in loaded if data.get("status", "done") == "done"]  # a part may be skipped
        measured, record = "not measured", "none yet"
        if done:
            path, data = done[-1]
            measured = f"{_field(data, target['field']) * target.get('scale', 1):.3g}"
            record = f"`{path.relative_to(root).as_posix()}`"
        rows.append(
            {
                "target": f"`{name}`",
                "what": target["what"],
                "target value": f"{target['target']:g}",
                "unit": target["unit"],
                "latest measured": measured,
                "record": record,
            }
        )
    bench, said = latest_benchmark(root, "find_issues_vs_cleanlab")
    frame = versus.runs_frame(bench)
    vs_cleanlab = {
        **said,
        "what": "Labels flipped on purpose in tables, texts and images",
        "data": _data_sets(frame),
        "means": versus.means(frame).to_markdown(index=False, floatfmt=".3f"),
        "verdicts": versus.verdicts(frame).to_markdown(index=False, floatfmt="+.3f"),
        "ingredients": versus.ingredients(frame).to_markdown(index=False, floatfmt="+.3f")
        if all(arm in bench["runs"][0] for step in versus.INGREDIENTS for arm in step[:2])
        else None,
        "noise": ", ".join(frame["noise"].unique()),
        "tfidf": any("cleanlab_tfidf" in run for run in bench["runs"]),
        # the score E-NKCVS ranked by: recorded from the logit margin's arrival on, cleanlab's self-confidence before
        "score": bench["settings"].get("score", "self_confidence"),
    }
    return {
        "targets": markdown(pd.DataFrame(rows)),
        "vs_cleanlab": vs_cleanlab,
        "given": given_probabilities_data(root),
        "recipes": text_recipes_data(root),
        "significance": SIGNIFICANCE,
    }


def latest_benchmark(root: Path, script: str) -> tuple[dict, dict]:
    """The newest record of ``benchmarks/<script>.py`` in benchmarks/results/, and what every section of the page says
    of a record: its path, date, machine, settings and seeds."""
    record = sorted((root / "benchmarks" / "results").glob(f"{script}-*.json"))[-1]
    bench = json.loads(record.read_text())
    return bench, {
        "record": record.relative_to(root).as_posix(),
        "date": bench["date"][:10],
        "machine": f"{bench['cpu']} ({', '.join(bench['cpu_flags'])})",
        "settings": bench["settings"],
        "seeds": ", ".join(map(str, bench["settings"]["seeds"])),
    }


def _data_sets(frame: pd.DataFrame) -> str:
    """The data sets of a record's runs, each with its kind, in the order they ran."""
    return ", ".join(f"{data} ({kind})" for kind, data in frame[["kind", "data"]].drop_duplicates().to_numpy())


def text_recipes_data(root: Path) -> dict:
    """The latest record of benchmarks/text_recipes.py: what ran where, each arm's means per data set and over the
    sets, and the recipe of the best mean F1 and P@k."""
    bench, said = latest_benchmark(root, "text_recipes")
    table = pd.DataFrame.from_dict(bench["means"], orient="index").T  # (arm measure) x data set
    return {
        **said,
        "noise": ", ".join(bench["settings"]["noise"]),
        "table": table.rename_axis("arm").reset_index().to_markdown(index=False, floatfmt=".3f"),
        "best": bench["best"],
    }


def given_probabilities_data(root: Path) -> dict:
    """The latest record of benchmarks/given_probabilities.py: what ran where, the floor table and the scores'."""
    bench, said = latest_benchmark(root, "given_probabilities")
    frame = floor.runs_frame(bench)
    table, scores = floor.floor_table(bench, frame=frame), floor.score_table(frame)
    sources = frame["probabilities"].unique()
    return {
        **said,
        "data": _data_sets(frame),
        "models": "; ".join(p for p in sources if "published" not in p),
        "published": "; ".join(p for p in sources if "published" in p),
        "fewest_below": floor.fewest_below(scores),
        "noise": ", ".join(bench["settings"]["noise"]),
        "floor": f"{floor.FLOOR:g}",
        "sets": len(table),
        "held": int(table[table.columns[-1]].sum()),
        "table": table.to_markdown(index=False, floatfmt=".3f"),
        "scores": scores.to_markdown(index=False, floatfmt=".3f"),
    }


#: Each generated page: its template and the function of its data.
PAGES: dict[str, tuple[str, Callable[[Path], dict[str, Any]]]] = {
    "README.md": ("README.md.j2", readme_data),
    "docs/results.md": ("results.md.j2", results_data),
    "benchmarks/README.md": ("benchmarks.md.j2", benchmarks_data),
}


def environment():
    """The templates' Jinja2 environment: undefined names fail, blocks leave no blank lines."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("enkcvs.report", "templates"),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters.update(signed=signed, pvalue=pvalue, isnan=lambda value: value is None or math.isnan(value))
    return env


def render(page: str, root: Path) -> str:
    template, data = PAGES[page]
    return environment().get_template(template).render(**data(root))


def regenerate(root: Path, *, write: bool = True) -> list[str]:
    """The generated pages whose committed text differs from their rendering; with ``write``, rewritten."""
    changed = []
    for page in PAGES:
        text, path = render(page, root), root / page
        if not path.is_file() or path.read_text() != text:
            changed.append(page)
            if write:
                path.write_text(text)
    return changed
