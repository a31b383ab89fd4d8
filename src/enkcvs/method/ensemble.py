"""An ensemble of final models given E-NKCVS's training budget (not in the paper): how many members it has, and its
prediction, the mean of its members' class probabilities. Imports nothing outside the standard library: the
workflow's planning, which runs with Snakemake alone, reads the budget."""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


def budget_members(*, num_folds: int, iterations: int) -> int:
    """The members an ensemble gets for E-NKCVS's training at (K, M).

    Parameters
    ----------
    num_folds : K.
    iterations : M.

    Returns
    -------
    M (K - 1) + 1.
    """
    # Counted in trainings on the full data: each of the M x K fold models trains on (K - 1) / K of it, and the final
    # model on all of it, so E-NKCVS spends M K (K - 1) / K + 1 = M (K - 1) + 1 (epochs alike).
    return iterations * (num_folds - 1) + 1


def ensemble_probabilities(probabilities: "np.ndarray") -> "np.ndarray":
    """The ensemble's class probabilities (N, Q): the mean of its E members' softmax probabilities (E, N, Q)."""
    return probabilities.astype("float64").mean(axis=0)
