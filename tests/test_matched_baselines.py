"""Baselines matched on what E-NKCVS gets: SL + mixup, INCV's selection (Chen et al. 2019) on a tiny synthetic problem,
the CE + mixup ensemble's budget and prediction, and the table of E-NKCVS's paired leads (scipy's interval, Holm);
the workflow plans them from config/experiments/matched-baselines-digits.yaml and runs them end to end."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import yaml
from scipy.stats import ttest_rel

from enkcvs.io import read_json, read_table
from enkcvs.method.ensemble import budget_members, ensemble_probabilities
from enkcvs.method.incv import estimated_noise_rate, incv_selection, remove_ratio
from enkcvs.method.methods import (
    BASELINE_METHODS,
    ENSEMBLE_METHODS,
    METHODS,
    MIXUP_METHODS,
    OWN_SELECTION_METHODS,
    SELECTION_METHODS,
)
from enkcvs.pipeline.steps.final import average_ensemble, train_ensemble_member
from enkcvs.pipeline.steps.select import select_incv
from enkcvs.report.audit import audit_results
from enkcvs.report.matched import paired_leads
from enkcvs.report.statistics import CONFIDENCE, holm
from enkcvs.training.device import Execution
from enkcvs.training.final import FinalTraining, final_training, final_training_set

REPO = Path(__file__).resolve().parents[1]
STUDY = REPO / "config" / "experiments" / "matched-baselines-digits.yaml"
CPU = Execution(device=torch.device("cpu"))
RECIPE = {"model": "mlp", "optimizer": "sgd", "lr": 0.1, "epochs": 2, "batch_size": 32, "mixup_alpha": 0.3}


def test_every_method_is_a_baseline_a_selection_an_own_selection_or_an_ensemble_once():
    groups = [BASELINE_METHODS, SELECTION_METHODS, OWN_SELECTION_METHODS, ENSEMBLE_METHODS]
    assert sorted(m for group in groups for m in group) == sorted(METHODS)
    assert {"sl_mixup", "incv", "ce_mixup_ensemble"} <= set(MIXUP_METHODS)


def test_sl_with_mixup_trains_sls_loss_with_mixup_and_incv_trains_on_its_selection_alone():
    assert final_training(method="sl_mixup", options={"alpha": 0.01, "beta": 1.0}) == FinalTraining(
        mixup=True, loss="sl", loss_params={"alpha": 0.01, "beta": 1.0}
    )
    with pytest.raises(ValueError, match=r"unknown \['mixup'\]"):  # it always mixes
        final_training(method="sl_mixup", options={"alpha": 0.01, "beta": 1.0, "mixup": False})
    given = np.array([0, 1, 2, 0, 1])
    selection = pd.DataFrame({"selected": [True, False, True, False, True]})
    indices, targets = final_training_set(method="incv", given=given, num_classes=3, selection=selection)
    np.testing.assert_array_equal(indices, [0, 2, 4])
    np.testing.assert_array_equal(targets, np.eye(3)[[0, 2, 1]])
    assert final_training(method="incv", options={}) == FinalTraining(mixup=True)


# --- INCV ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("rate", [0.0, 0.2, 0.5, 0.8])
def test_the_noise_rate_estimate_inverts_the_agreement_of_symmetric_noise(rate):
    agreement = (1 - rate) ** 2 + rate**2 / 9  # Chen et al.'s test accuracy on noisy labels, Q = 10
    assert estimated_noise_rate(agreement=agreement, num_classes=10) == pytest.approx(rate)
    assert estimated_noise_rate(agreement=0.05, num_classes=10) == pytest.approx(0.9)  # below chance: the most


def test_the_remove_ratio_is_the_odds_of_a_wrong_label_capped_at_two():
    assert remove_ratio(0.2) == pytest.approx(0.25)
    assert remove_ratio(0.8) == remove_ratio(0.99) == 2.0


def _noisy_blobs(seed: int, *, num_samples: int = 600, num_classes: int = 4, rate: float = 0.4):
    """Four Gaussian blobs in the plane, a ``rate`` of labels flipped to another class at random: (x, given, true)."""
    rng = np.random.default_rng(seed)
    true = rng.integers(0, num_classes, num_samples)
    angle = 2 * np.pi * true / num_classes
    x = rng.normal(0, 1, (num_samples, 2)) + 3 * np.stack([np.cos(angle), np.sin(angle)], axis=1)
    given = true.copy()
    flip = rng.random(num_samples) < rate
    given[flip] = (true[flip] + rng.integers(1, num_classes, flip.sum())) % num_classes
    return x, given, true


def _logistic_regression(x, given, num_classes, trained):
    """INCV's ``train_and_predict`` with a logistic regression, logging each call's (train, predict) in ``trained``."""
    from sklearn.linear_model import LogisticRegression

    def train_and_predict(*, train, predict, iteration, half):
        trained.append((iteration, half, train, predict))
        model = LogisticRegression(max_iter=500).fit(x[train], given[train])
        probabilities = np.zeros((len(predict), num_classes))
        probabilities[:, model.classes_] = model.predict_proba(x[predict])
        return probabilities

    return train_and_predict


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_incv_keeps_mostly_clean_samples(seed):
    x, given, true = _noisy_blobs(seed)
    trained = []
    outcome = incv_selection(
        given=given, num_classes=4, seed=seed, train_and_predict=_logistic_regression(x, given, 4, trained)
    )
    clean = given == true
    precision = (outcome.selected & clean).sum() / outcome.selected.sum()
    assert precision > clean.mean() + 0.3  # far above the share of clean labels (about 0.6)
    assert (outcome.selected & clean).sum() / clean.sum() > 0.8  # and most clean samples kept
    assert not (outcome.selected & outcome.removed).any()
    assert set(np.unique(outcome.iteration[outcome.selected])) <= {1, 2, 3, 4}
    assert (outcome.iteration[~outcome.selected] == 0).all()
    assert 0 < outcome.noise_rate < 0.75 and outcome.remove_ratio == pytest.approx(remove_ratio(outcome.noise_rate))


def test_incv_trains_each_iteration_on_the_earlier_selection_and_one_half_and_predicts_the_other():
    x, given, _ = _noisy_blobs(4)
    trained = []
    outcome = incv_selection(
        given=given, num_classes=4, seed=4, train_and_predict=_logistic_regression(x, given, 4, trained), iterations=2
    )
    assert [(i, h) for i, h, _, _ in trained] == [(1, 1), (1, 2), (2, 1), (2, 2)]
    (_, _, train_a, half_b), (_, _, train_b, half_a) = trained[:2]
    assert sorted([*half_a, *half_b]) == list(range(len(given)))  # iteration 1: the halves of everything
    np.testing.assert_array_equal(np.sort(train_a), half_a)
    np.testing.assert_array_equal(np.sort(train_b), half_b)
    selected_first = set(np.flatnonzero(outcome.iteration == 1))
    (_, _, train_1, predict_1), (_, _, train_2, predict_2) = trained[2:]
    # iteration 2: S of iteration 1 and one half of the candidates left, the other half predicted
    assert set(train_1) == selected_first | set(predict_2) and set(train_2) == selected_first | set(predict_1)
    assert not selected_first & (set(predict_1) | set(predict_2))
    assert len(selected_first) + len(predict_1) + len(predict_2) < len(given)  # the largest losses left
    again = incv_selection(
        given=given, num_classes=4, seed=4, train_and_predict=_logistic_regression(x, given, 4, []), iterations=2
    )
    np.testing.assert_array_equal(again.selected, outcome.selected)  # seeded


@pytest.mark.usefixtures("single_thread")
def test_the_incv_step_writes_its_selection_and_scores_it(tiny_inputs):
    table, metrics = tiny_inputs / "incv.parquet", tiny_inputs / "incv.json"
    select_incv(
        dataset=tiny_inputs / "data.npz",
        labels=tiny_inputs / "labels.parquet",
        recipe=RECIPE,
        iterations=2,
        seed=3,
        execution=CPU,
        table=table,
        metrics=metrics,
        provenance_fields={"dataset": "tiny", "noise": "sym0.2", "seed": "3"},
    )
    selection, meta = read_table(table)
    labels, _ = read_table(tiny_inputs / "labels.parquet")
    scores = read_json(metrics)
    clean = labels["given"].to_numpy() == labels["true"].to_numpy()
    selected = selection["selected"].to_numpy()
    assert list(selection.columns) == ["sample", "given", "selected", "removed", "iteration"]
    assert scores["SS"] == selected.sum() > 0 and scores["CSS"] == (selected & clean).sum()
    assert scores["precision"] == pytest.approx(scores["CSS"] / scores["SS"])
    assert meta["iterations"] == scores["iterations"] == 2 and meta["recipe"] == RECIPE


# --- The CE + mixup ensemble at E-NKCVS's budget -------------------------------------------------------------------


@pytest.mark.parametrize(("K", "M", "members"), [(3, 3, 7), (10, 5, 46), (4, 3, 10), (2, 1, 2)])
def test_the_ensemble_has_as_many_members_as_enkcvs_trains_on_the_full_data(K, M, members):
    assert budget_members(num_folds=K, iterations=M) == members
    # M x K fold models on (K - 1) / K of the data each, and the final model on all of it
    assert budget_members(num_folds=K, iterations=M) == pytest.approx(M * K * (K - 1) / K + 1)


def test_the_ensembles_prediction_is_the_mean_of_its_members_probabilities():
    members = np.random.default_rng(0).dirichlet(np.ones(3), size=(4, 5))  # (E, N, Q)
    np.testing.assert_allclose(ensemble_probabilities(members), members.sum(axis=0) / 4)
    np.testing.assert_allclose(ensemble_probabilities(members).sum(axis=1), 1.0)


@pytest.mark.usefixtures("single_thread")
def test_members_train_from_their_own_seeds_and_the_ensemble_scores_their_mean(tiny_inputs):
    fields = {"dataset": "tiny", "noise": "sym0.2", "seed": "3"}
    members = [tiny_inputs / f"member{j}.parquet" for j in (1, 2, 3)]
    for j, path in enumerate(members, start=1):
        train_ensemble_member(
            dataset=tiny_inputs / "data.npz",
            labels=tiny_inputs / "labels.parquet",
            recipe=RECIPE,
            seed=3,
            member=j,
            output=path,
            provenance_fields={**fields, "member": str(j)},
            execution=CPU,
        )
    tables = [read_table(path) for path in members]
    probabilities = np.stack([frame.filter(like="prob_").to_numpy() for frame, _ in tables])  # (3, 9, 3)
    assert probabilities.shape == (3, 9, 3)
    assert len({meta["member_seed"] for _, meta in tables}) == 3  # each its own seed...
    assert not np.allclose(probabilities[0], probabilities[1])  # ...and so its own model
    assert all(meta["trained_with"]["mixup_alpha"] == 0.3 for _, meta in tables)  # CE + mixup's final model
    output = tiny_inputs / "ensemble.json"
    average_ensemble(
        members=members,
        dataset=tiny_inputs / "data.npz",
        output=output,
        provenance_fields={**fields, "K": "2", "M": "2"},
    )
    result = read_json(output)
    test_labels = np.repeat(np.arange(3), 20)[:9]  # tiny_inputs' test split
    assert result["members"] == 3 and result["method"] == "ce_mixup_ensemble"
    assert result["test_accuracy"] == pytest.approx(np.mean(probabilities.mean(axis=0).argmax(axis=1) == test_labels))
    assert result["member_test_accuracy"] == [meta["test_accuracy"] for _, meta in tables]
    # what the members trained with, once where they agree
    assert (result["device"], result["bf16"], result["torch_threads"]) == ("cpu", False, tables[0][1]["torch_threads"])
    with pytest.raises(ValueError, match=r"has 7 members, M \(K - 1\) \+ 1; given 3"):
        average_ensemble(
            members=members,
            dataset=tiny_inputs / "data.npz",
            output=output,
            provenance_fields={**fields, "K": "3", "M": "3"},
        )


# --- E-NKCVS's paired leads ----------------------------------------------------------------------------------------

#: Test accuracies (fractions) of three methods at four seeds in two settings, written by hand.
ACCURACIES = {
    ("sym", 0.2): {
        "enkcvs": [0.95, 0.94, 0.96, 0.95],
        "ce_mixup": [0.93, 0.93, 0.94, 0.92],
        "incv": [0.95, 0.93, 0.97, 0.94],
    },
    ("asym", 0.4): {
        "enkcvs": [0.90, 0.88, 0.91, 0.89],
        "ce_mixup": [0.85, 0.84, 0.86, 0.83],
        "incv": [0.91, 0.87, 0.93, 0.90],
    },
}


def _records() -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "dataset": "digits",
                "noise_kind": kind,
                "noise_rate": rate,
                "method": method,
                "seed": seed,
                "test_accuracy": accuracy,
                "source": f"{kind}{rate}/seed{seed}/{method}.json",
            }
            for (kind, rate), methods in ACCURACIES.items()
            for method, values in methods.items()
            for seed, accuracy in enumerate(values, start=1)
        ]
    )


def test_the_paired_leads_interval_and_p_are_scipys_paired_t_test_holm_adjusted():
    table = paired_leads(_records(), methods=["ce_mixup", "incv", "enkcvs"])
    assert list(zip(table["noise_kind"], table["method"])) == [
        ("sym", "ce_mixup"),
        ("sym", "incv"),
        ("asym", "ce_mixup"),
        ("asym", "incv"),
    ]
    expected_p = []
    for row in table.itertuples():
        ours = 100 * np.array(ACCURACIES[(row.noise_kind, row.noise_rate)]["enkcvs"])
        theirs = 100 * np.array(ACCURACIES[(row.noise_kind, row.noise_rate)][row.method])
        test = ttest_rel(ours, theirs)
        interval = test.confidence_interval(CONFIDENCE)
        assert (row.low, row.high) == pytest.approx((interval.low, interval.high))
        assert row.p == pytest.approx(test.pvalue)
        assert row.lead == pytest.approx((ours - theirs).mean()) and row.seeds == 4
        assert row.enkcvs_mean == pytest.approx(ours.mean()) and row.method_mean == pytest.approx(theirs.mean())
        assert set(row.sources.split(";")) == {
            f"{row.noise_kind}{row.noise_rate}/seed{seed}/{method}.json"
            for seed in range(1, 5)
            for method in ("enkcvs", row.method)
        }
        expected_p.append(test.pvalue)
    np.testing.assert_allclose(table["p_holm"], holm(p=expected_p))
    assert (table["p_holm"] >= table["p"]).all()
    sides = dict(zip(zip(table["noise_kind"], table["method"]), table["side"]))
    assert sides[("asym", "ce_mixup")] == "above" and sides[("sym", "incv")] == "unordered"


def test_seeds_pair_only_where_both_ran_and_one_seed_is_untested():
    records = _records()
    records = records[~((records["method"] == "incv") & (records["seed"] > 1))]  # INCV ran at seed 1 only
    records = records[~((records["method"] == "ce_mixup") & (records["seed"] == 4))]
    table = paired_leads(records, methods=["ce_mixup", "incv"])
    seeds = dict(zip(zip(table["noise_kind"], table["method"]), table["seeds"]))
    assert seeds == {("sym", "ce_mixup"): 3, ("sym", "incv"): 1, ("asym", "ce_mixup"): 3, ("asym", "incv"): 1}
    untested = table[table["seeds"] == 1]
    assert (untested["side"] == "untested").all() and untested[["low", "high", "p", "p_holm"]].isna().all().all()


# --- The workflow --------------------------------------------------------------------------------------------------


def _dry_run(tmp_path, *args):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "-s",
            str(REPO / "workflow" / "Snakefile"),
            "-d",
            str(tmp_path),
            "-n",
            *args,
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.workflow
def test_the_study_plans_a_members_budget_an_incv_selection_and_the_paired_table_per_setting(tmp_path):
    config = yaml.safe_load(STUDY.read_text())
    settings = len(config["datasets"]["digits"]["noise"]) * len(config["seeds"])
    assert settings >= 9 and len(config["seeds"]) >= 3
    selection = config["selection"]
    counts = {}
    for line in _dry_run(tmp_path, "--configfile", str(STUDY)).splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            counts[parts[0]] = int(parts[1])
    members = budget_members(num_folds=selection["K"], iterations=selection["M"])
    assert counts["train_ensemble_member"] == settings * members
    assert counts["average_ensemble"] == counts["select_incv"] == counts["train_final_incv"] == settings
    assert counts["train_fold"] == settings * selection["K"] * selection["M"]
    assert counts["matched"] == 1


MATCHED_TINY = {
    "datasets": {
        "digits": {
            "source": "sklearn_digits",
            "asymmetric_map": "mnist",
            "noise": ["asym0.4"],
            "recipe": {
                "model": "cnn4",
                "optimizer": "sgd",
                "lr": 0.05,
                "epochs": 2,
                "milestones": [1],
                "batch_size": 64,
            },
            "baselines": {"sl_mixup": {"alpha": 0.01, "beta": 1.0}, "incv": {"iterations": 1}},
        }
    },
    "seeds": [1, 2],
    "selection": {"K": 2, "M": 1, "t": 1},
    "methods": ["ce_mixup", "sl_mixup", "incv", "ce_mixup_ensemble", "enkcvs"],
    "sensitivity": {"enabled": False},
}


@pytest.mark.workflow
def test_the_matched_baselines_run_end_to_end_into_the_paired_table(tmp_path, run_snakemake):
    config = tmp_path / "matched.yaml"
    config.write_text(yaml.safe_dump(MATCHED_TINY))
    done = run_snakemake(tmp_path, config=config)
    assert done.returncode == 0, done.stderr[-4000:]
    table = pd.read_csv(tmp_path / "results/report/matched.csv")
    assert list(table["method"]) == ["ce_mixup", "sl_mixup", "incv", "ce_mixup_ensemble"]
    assert (table["seeds"] == 2).all() and table["p_holm"].notna().all()
    base = tmp_path / "results/final/digits/asym0.4/seed1"
    ensemble = read_json(base / "K2/M1/ce_mixup_ensemble.json")
    assert ensemble["members"] == 2 == len(list((base / "ce_mixup_ensemble").glob("member*.parquet")))
    incv = read_json(base / "incv.json")
    selection, _ = read_table(tmp_path / "results/selection/digits/asym0.4/seed1/incv/selection.parquet")
    assert incv["train_samples"] == selection["selected"].sum() and incv["trained_with"]["mixup_alpha"] == 0.3
    assert read_json(base / "sl_mixup.json")["trained_with"]["loss"] == {"name": "sl", "alpha": 0.01, "beta": 1.0}
    assert "E-NKCVS is" in (tmp_path / "results/report/matched.md").read_text()
    assert audit_results(workdir=tmp_path) == []  # every Table 2 cell traced to its files, members and INCV's included
    # a method's own setting reruns its jobs alone
    MATCHED_TINY["datasets"]["digits"]["baselines"]["incv"]["iterations"] = 2
    config.write_text(yaml.safe_dump(MATCHED_TINY))
    planned = _dry_run(tmp_path, "--configfile", str(config), "--cores", "2")
    rules = {line.split()[-1].rstrip(":") for line in planned.splitlines() if line.startswith(("rule ", "localrule "))}
    assert rules == {"select_incv", "train_final_incv", "matched", "table2", "resource_usage", "all"}
