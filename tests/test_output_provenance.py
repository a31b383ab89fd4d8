"""What each output of a Table 2 cell ran with, and what differs among a cell's outputs
(enkcvs.report.output_provenance), on small hand-built records."""

import json

import numpy as np
import pandas as pd

from enkcvs.report.output_provenance import (
    FIELDS,
    NOT_RECORDED,
    commit_text,
    differing,
    facts_json,
    output_facts,
    recorded_facts,
)

MACHINE = {"cpu": "AMD EPYC", "cores": 2}


def _facts(seed: int, **changed: str) -> dict:
    return {"seed": seed, **dict.fromkeys(FIELDS, "same"), **changed}


def test_a_commit_is_short_marked_where_dirty_and_not_recorded_where_unknown():
    assert commit_text({"commit": "0123456789abcdef", "dirty": True}) == "0123456+"
    assert commit_text({"commit": "0123456789abcdef", "dirty": False}) == "0123456"
    assert commit_text({"commit": "unknown"}) == NOT_RECORDED == commit_text(None)


def test_one_output_differs_in_nothing_and_a_candidate_or_a_missing_value_may_differ():
    assert differing([_facts(1, threads="8")]) == []
    assert differing([_facts(1), _facts(2)]) == []
    assert differing([_facts(1, threads="2", torch="2.11.0"), _facts(2, threads="8", torch="2.11.0")]) == ["threads"]
    assert differing([_facts(1, commit="a or b"), _facts(2, commit="a or b")]) == ["commit"]
    assert differing([_facts(1, device="cuda:0"), _facts(2, device=NOT_RECORDED)]) == ["device"]


def test_a_record_with_its_outputs_facts_keeps_each_seeds_and_adds_the_runs_machine():
    kept = facts_json([_facts(2, threads="8"), _facts(1, threads="2")])
    facts = recorded_facts(meta={"machine": {**MACHINE, "gpus": ["NVIDIA H200"]}}, seeds=[1, 2], provenance=kept)
    assert [(fact["seed"], fact["threads"], fact["machine"]) for fact in facts] == [
        (1, "2", "NVIDIA H200"),
        (2, "8", "NVIDIA H200"),
    ]
    assert json.loads(kept)[0]["seed"] == 1


def test_an_older_record_gives_its_runs_facts_to_every_seed_and_a_resumed_run_each_parts():
    meta = {
        "git": {"commit": "c" * 40, "dirty": True},
        "machine": {**MACHINE, "gpus": ["NVIDIA H100"]},
        "versions": {"torch": "2.11.0"},
        "carried": [{"git": {"commit": "a" * 40, "dirty": False}, "machine": MACHINE}],
    }
    facts = recorded_facts(meta=meta, seeds=[2, 1], provenance=np.nan)
    assert [fact["seed"] for fact in facts] == [1, 2]
    assert facts[0]["commit"] == "aaaaaaa or ccccccc+"
    assert facts[0]["machine"] == "AMD EPYC (no GPU) or NVIDIA H100"
    assert facts[0]["torch"] == f"2.11.0 or {NOT_RECORDED}"  # an earlier part's environment is not recorded
    assert {facts[0][field] for field in ("code", "device", "precision", "threads")} == {NOT_RECORDED}
    assert differing(facts) == ["commit", "machine", "torch"]  # two seeds of one run, either part's


def test_an_ensembles_members_that_differ_are_named_each_and_a_fact_they_share_once():
    records = pd.DataFrame(
        [
            {"seed": 1, "device": ["cuda:0", "cpu"], "bf16": [True, False], "torch_threads": 1},
            {"seed": 2, "device": "cpu", "bf16": False, "torch_threads": [1, None]},
        ]
    )
    first, second = output_facts(records)
    assert (first["device"], first["precision"], first["threads"]) == ("cuda:0 or cpu", "bf16 or float32", "1")
    assert (second["device"], second["precision"], second["threads"]) == ("cpu", "float32", f"1 or {NOT_RECORDED}")
