"""What a Table 2 cell cost (enkcvs.report.trainings): the models one seed of each method trains at (K, M)."""

import pytest

from enkcvs.method.ensemble import budget_members
from enkcvs.method.incv import ITERATIONS
from enkcvs.method.methods import METHODS
from enkcvs.report.trainings import config_trainings, trainings


@pytest.mark.parametrize(
    ("method", "expected"),
    [
        ("ce", 1),
        ("sl", 1),
        ("gce", 1),
        ("ce_mixup", 1),
        ("coteaching", 2),  # two networks trained together
        ("ss_only", 4 * 3 + 1),
        ("enkcvs", 4 * 3 + 1),
        ("cl_prune", 4 * 3 + 1),
        ("ce_mixup_ensemble", 3 * (4 - 1) + 1),
        ("incv", 2 * 5 + 1),
    ],
)
def test_each_method_costs_its_final_models_and_the_fold_models_it_needs(method, expected):
    assert trainings(method=method, num_folds=4, iterations=3, incv_iterations=5) == expected


def test_the_ensemble_has_as_many_members_as_the_workflow_trains_and_a_count_it_cannot_know_is_none():
    assert trainings(method="ce_mixup_ensemble", num_folds=10, iterations=5, incv_iterations=None) == budget_members(
        num_folds=10, iterations=5
    )
    assert trainings(method="enkcvs", num_folds=None, iterations=None, incv_iterations=None) is None
    assert trainings(method="incv", num_folds=4, iterations=3, incv_iterations=None) is None
    assert all(trainings(method=method, num_folds=3, iterations=2, incv_iterations=4) >= 1 for method in METHODS)
    with pytest.raises(ValueError, match="unknown method"):
        trainings(method="mentornet", num_folds=3, iterations=2, incv_iterations=4)


def test_a_recorded_config_gives_the_datasets_own_selection_and_incvs_default():
    config = {
        "selection": {"K": 4, "M": 3, "t": 2},
        "datasets": {"mnist": {"selection": {"K": 10, "M": 5, "t": 2}}, "digits": {}},
    }
    assert config_trainings(config=config, dataset="mnist", method="enkcvs") == 51
    assert config_trainings(config=config, dataset="digits", method="enkcvs") == 13
    assert config_trainings(config=config, dataset="digits", method="incv") == 2 * ITERATIONS + 1
