"""What each output a Table 2 cell pools ran with, and what differs among them: the commit (with ``+`` where the
checkout had uncommitted changes), the job's code fingerprint, the machine, the device, the precision, torch's thread
count and torch's version (:data:`FIELDS`). A final model's JSON holds what :func:`enkcvs.io.provenance` and its job
recorded; a recorded run adds its machine; a fact no record holds reads :data:`NOT_RECORDED`, and one a record can
only narrow down lists its candidates joined by :data:`ALTERNATIVE`.
"""

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pandas as pd

#: The facts of one output, in the order tables name them.
FIELDS = ("commit", "code", "machine", "device", "precision", "threads", "torch")
#: A fact no record holds.
NOT_RECORDED = "not recorded"
#: Between the candidates of a fact a record narrows down without fixing it: ``9db74e1 or de59a47``.
ALTERNATIVE = " or "
#: The mark of a cell pooling outputs whose facts differ, or may.
DIFFERS_MARK = "†"
#: Characters of a commit shown.
SHORT_COMMIT = 7


def commit_text(git: Mapping | None) -> str:
    """A commit as tables show it: its first :data:`SHORT_COMMIT` characters, ``+`` where the checkout had
    uncommitted changes; :data:`NOT_RECORDED` where ``git`` (``{"commit", "dirty"}``) is None or names none."""
    commit = (git or {}).get("commit")
    if not isinstance(commit, str) or commit == "unknown":
        return NOT_RECORDED
    return commit[:SHORT_COMMIT] + ("+" if git.get("dirty") else "")


def _value(record: pd.Series, column: str) -> object | None:
    value = record.get(column)
    return None if value is None or (isinstance(value, float) and pd.isna(value)) else value


def output_facts(results: pd.DataFrame) -> list[dict[str, object]]:
    """The facts of each final-model record of ``results`` (:func:`enkcvs.report.tables.collect_records`' frame, one
    row per JSON): its ``seed`` and :data:`FIELDS` as text, :data:`NOT_RECORDED` where its JSON lacks the field (the
    machine always: a run records it once, :func:`enkcvs.recording.record.record_run`)."""
    facts = []
    for _, record in results.iterrows():
        commit = _value(record, "git.commit")
        bf16, threads = _value(record, "bf16"), _value(record, "torch_threads")
        seed = _value(record, "seed")
        facts.append(
            {
                "seed": None if seed is None else int(seed),
                "commit": commit_text(None if commit is None else {"commit": commit, "dirty": record.get("git.dirty")}),
                "code": _value(record, "code") or NOT_RECORDED,
                "machine": NOT_RECORDED,
                "device": _either(_value(record, "device"), str),
                "precision": _either(bf16, lambda on: "bf16" if on else "float32"),
                "threads": _either(threads, lambda count: str(int(count))),
                "torch": _value(record, "versions.torch") or NOT_RECORDED,
            }
        )
    return facts


def differing(facts: Iterable[Mapping[str, object]]) -> list[str]:
    """The :data:`FIELDS` whose values differ, or may, among the outputs ``facts`` (each a mapping of the fields to
    text): more than one output and more than one value among them, each of a fact's candidates
    (:data:`ALTERNATIVE`) counted, :data:`NOT_RECORDED` beside a recorded value counted too. One output differs in
    nothing."""
    facts = list(facts)
    if len(facts) < 2:
        return []
    return [
        field for field in FIELDS if len({value for fact in facts for value in str(fact[field]).split(ALTERNATIVE)}) > 1
    ]


def facts_json(facts: Iterable[Mapping[str, object]]) -> str:
    """Outputs' facts as a Table 2 CSV keeps them (column ``provenance``): a JSON list, sorted by seed."""
    return json.dumps(sorted(facts, key=lambda fact: (fact["seed"] is None, fact["seed"] or 0)), sort_keys=True)


def machine_text(machine: Mapping | None) -> str:
    """A recorded machine as the facts name it: its GPUs, or its CPU where it had none; :data:`NOT_RECORDED` for
    None."""
    if machine is None:
        return NOT_RECORDED
    return ", ".join(machine["gpus"]) if machine.get("gpus") else f"{machine['cpu']} (no GPU)"


def _alternatives(values: Iterable[str]) -> str:
    return ALTERNATIVE.join(dict.fromkeys(values))


def _either(value: Any, text: Callable[[Any], str]) -> str:
    """A recorded fact as text: :data:`NOT_RECORDED` where absent; the values of an ensemble's members that differ
    joined by "or"."""
    if value is None:
        return NOT_RECORDED
    values = value if isinstance(value, list) else [value]
    return " or ".join(NOT_RECORDED if item is None else text(item) for item in values)


def recorded_facts(*, meta: Mapping, seeds: Iterable[int], provenance: object) -> list[dict[str, object]]:
    """The facts of the outputs of one recorded run's Table 2 cell, one per seed of ``seeds``, each with its
    ``seed``. ``meta``: the run's ``provenance.json``; ``provenance``: the cell's column of that name in the run's
    table2.csv (its outputs' facts, :func:`facts_json`), or NaN where the record predates it. The machine is the
    run's; where the run was resumed in several parts (``carried``: each part's commit and machine, not which
    outputs it made) the machine, and for a record without its outputs' facts the commit, are any of its parts',
    and torch's version, kept for the last part alone, may be another. A record without its outputs' facts holds
    no code fingerprint, device, precision or thread count of them."""
    earlier_parts = list(meta.get("carried") or [])
    machine = _alternatives(machine_text(part.get("machine")) for part in [*earlier_parts, meta])
    if isinstance(provenance, str):
        return [{**fact, "machine": machine} for fact in json.loads(provenance)]
    torch = meta.get("versions", {}).get("torch", NOT_RECORDED)
    run = {
        "commit": _alternatives(commit_text(part.get("git")) for part in [*earlier_parts, meta]),
        "code": NOT_RECORDED,
        "machine": machine,
        "device": NOT_RECORDED,
        "precision": NOT_RECORDED,
        "threads": NOT_RECORDED,
        "torch": _alternatives([torch, *([NOT_RECORDED] if earlier_parts else [])]),
    }
    return [{"seed": seed, **run} for seed in sorted(seeds)]
