"""What a Table 2 cell cost: the models each method trains from scratch for one seed, at a run's selection (K, M).

A training is one model trained for its recipe's epochs. A fold model trains on (K - 1) / K of the training set (less
its validation share), a final model on all of it that its method keeps, so E-NKCVS's K M + 1 trainings come to
M (K - 1) + 1 on the full data: the members of the ensemble matched on that budget
(:func:`enkcvs.method.ensemble.budget_members`).
"""

from collections.abc import Mapping

from enkcvs.method.ensemble import budget_members
from enkcvs.method.incv import ITERATIONS
from enkcvs.method.methods import ENSEMBLE_METHODS, METHODS, OWN_SELECTION_METHODS, SELECTION_METHODS

#: Methods that train two networks together, each on the full data, as one final model (Han et al. 2018).
TWO_NETWORK_METHODS = ("coteaching",)


def trainings(*, method: str, num_folds: int | None, iterations: int | None, incv_iterations: int | None) -> int | None:
    """The models ``method`` trains for one seed of a Table 2 cell.

    Parameters
    ----------
    method : a name of :data:`enkcvs.method.methods.METHODS`.
    num_folds : K of the run's selection (None: unknown).
    iterations : M of the run's selection (None: unknown).
    incv_iterations : INCV's iterations N (``baselines.incv.iterations``; None: unknown).

    Returns
    -------
    1 for a method of one final model; 2 for co-teaching (:data:`TWO_NETWORK_METHODS`); K M fold models + 1 final for
    a method trained on a selection (:data:`~enkcvs.method.methods.SELECTION_METHODS`); M (K - 1) + 1 members for the
    ensemble (:data:`~enkcvs.method.methods.ENSEMBLE_METHODS`); 2 N + 1 for INCV, two models an iteration and its final
    model (at most: fewer iterations run where its candidates run out). None where the count needs a number given
    as None.

    Raises ``ValueError`` for a name not in :data:`~enkcvs.method.methods.METHODS`.
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; known: {', '.join(METHODS)}")
    if method in SELECTION_METHODS or method in ENSEMBLE_METHODS:
        if num_folds is None or iterations is None:
            return None
        if method in ENSEMBLE_METHODS:
            return budget_members(num_folds=num_folds, iterations=iterations)
        return num_folds * iterations + 1
    if method in OWN_SELECTION_METHODS:
        return None if incv_iterations is None else 2 * incv_iterations + 1
    return 2 if method in TWO_NETWORK_METHODS else 1


def config_trainings(*, config: Mapping, dataset: str, method: str) -> int | None:
    """:func:`trainings` of ``method`` on ``dataset`` at what a run's ``config`` (as its record keeps the text, no
    defaults filled) sets: the dataset's own selection or else the run's (K, M), and INCV's
    ``baselines.incv.iterations`` or else its default :data:`enkcvs.method.incv.ITERATIONS`."""
    entry = (config.get("datasets") or {}).get(dataset) or {}
    selection = entry.get("selection") or config.get("selection") or {}
    incv = (entry.get("baselines") or {}).get("incv") or {}
    return trainings(
        method=method,
        num_folds=selection.get("K"),
        iterations=selection.get("M"),
        incv_iterations=incv.get("iterations", ITERATIONS),
    )
