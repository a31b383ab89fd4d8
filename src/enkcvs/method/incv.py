"""Iterative Noisy Cross-Validation (INCV; Chen et al., ICML 2019, "Understanding and Utilizing Deep Neural Networks
Trained with Noisy Labels", Algorithm 1): a selection of likely clean samples by cross-validation on random halves, a
baseline for E-NKCVS's selection. Torch-free: the models come from a callable (:mod:`enkcvs.training.incv` trains the
workflow's).

Algorithm 1: the selected set S starts empty and the candidates C hold every sample. In each of N iterations C is
split at random into halves C1 and C2; f1 trains on S and C1, f2 on S and C2 (S as it was when the iteration began);
S1 are the samples of C2 whose f1 prediction is their given label, S2 those of C1 by f2; R1 are the r |S1| samples of
C2 with the largest cross-entropy under f1, R2 likewise; S grows by S1 and S2, and C loses S1, S2, R1 and R2. The
remove ratio r = epsilon / (1 - epsilon), capped at 2, comes from the noise rate epsilon estimated once, from the
first model's agreement with the labels it did not train on (:func:`estimated_noise_rate`).

Simplified against the authors' code (``INCV.py`` of github.com/chenpf1025/noisy_label_understanding_utilizing; see
docs/paper-notes.md, "The baselines matched on what E-NKCVS gets"): the removal runs in every noise setting, as
Algorithm 1 has it (their code removes only where it is told the noise is symmetric, which a method cannot know);
epsilon comes from their formula in closed form (their code searches a grid); the models are trained by the caller
(the workflow trains them as E-NKCVS's fold models, not with their Adam schedule); and their final step, a Co-teaching
variant on S and C, is left to the caller (the workflow trains on S alone, as ``ss_only`` does).
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from enkcvs.rng import Purpose, generator

#: The most samples a half removes per selected one: the authors' cap on epsilon / (1 - epsilon).
REMOVE_RATIO_CAP = 2.0
#: The authors' iterations N.
ITERATIONS = 4


@dataclass(frozen=True)
class IncvSelection:
    """What INCV selected: ``selected`` (N,) bool, S; ``removed`` (N,) bool, the samples dropped from the candidates
    as largest-loss and never selected; ``iteration`` (N,) int, the iteration that selected a sample (0: none); the
    estimated ``noise_rate`` epsilon and the ``remove_ratio`` r it gave."""

    selected: np.ndarray
    removed: np.ndarray
    iteration: np.ndarray
    noise_rate: float
    remove_ratio: float


def estimated_noise_rate(*, agreement: float, num_classes: int) -> float:
    """The noise rate epsilon at which a model trained on noisy labels agrees with held-out noisy labels at the rate
    ``agreement`` under symmetric noise, by Chen et al.'s (2019) test accuracy on noisy labels, agreement =
    (1 - epsilon)^2 + epsilon^2 / (Q - 1): its root in [0, (Q - 1) / Q], where the agreement falls from 1 to 1 / Q;
    below 1 / Q, (Q - 1) / Q. Their code searches a grid of 0.001 for it; this is the closed form."""
    q = num_classes
    discriminant = 1 - q / (q - 1) * (1 - agreement)
    return float((q - 1) / q * (1 - np.sqrt(max(discriminant, 0.0))))


def remove_ratio(noise_rate: float) -> float:
    """r of Algorithm 1: epsilon / (1 - epsilon) largest-loss samples removed per selected one (about the wrong labels
    a half holds per right one), at most :data:`REMOVE_RATIO_CAP`."""
    return min(REMOVE_RATIO_CAP, noise_rate / (1 - noise_rate)) if noise_rate < 1 else REMOVE_RATIO_CAP


def largest_losses(*, probabilities: np.ndarray, given: np.ndarray, count: int) -> np.ndarray:
    """Positions (count,) of the ``count`` samples with the largest cross-entropy of their given labels (n,) under
    ``probabilities`` (n, Q)."""
    losses = -np.log(probabilities[np.arange(len(given)), given] + 1e-8)
    return np.argsort(losses, kind="stable")[len(losses) - count :] if count > 0 else np.array([], dtype=np.int64)


def incv_selection(
    *,
    given: np.ndarray,
    num_classes: int,
    seed: int,
    train_and_predict: Callable[..., np.ndarray],
    iterations: int = ITERATIONS,
) -> IncvSelection:
    """INCV's selected set S (Algorithm 1, as the module docstring says).

    Parameters
    ----------
    given : (N,) given labels in 0..Q-1.
    num_classes : Q.
    seed : the run's seed: iteration i splits the candidates by ``generator(seed, Purpose.INCV, i)``.
    train_and_predict : ``train_and_predict(train=(n,), predict=(m,), iteration=i, half=h)`` -> (m, Q) class
        probabilities of the samples ``predict`` by a fresh model trained on the samples ``train`` with their given
        labels; ``half`` is 1 for f1 (trained with C1), 2 for f2.
    iterations : N; fewer run where the candidates run out.

    Returns
    -------
    :class:`IncvSelection`.
    """
    selected, removed = np.zeros(len(given), dtype=bool), np.zeros(len(given), dtype=bool)
    chosen_in = np.zeros(len(given), dtype=np.int64)
    candidates = np.ones(len(given), dtype=bool)
    rate = ratio = None
    for i in range(1, iterations + 1):
        pool = generator(seed, Purpose.INCV, i).permutation(np.flatnonzero(candidates))
        if len(pool) < 2:
            break
        halves = (np.sort(pool[: len(pool) // 2]), np.sort(pool[len(pool) // 2 :]))
        kept = np.flatnonzero(selected)  # S as the iteration began: both halves train with it
        found, dropped = [], []
        for half, (train, held_out) in enumerate((halves, halves[::-1]), start=1):
            probabilities = train_and_predict(
                train=np.concatenate([kept, train]), predict=held_out, iteration=i, half=half
            )  # (m, Q)
            agrees = probabilities.argmax(axis=1) == given[held_out]
            if rate is None:  # the first model's agreement: the authors estimate epsilon once, from it
                rate = estimated_noise_rate(agreement=float(agrees.mean()), num_classes=num_classes)
                ratio = remove_ratio(rate)
            found.append(held_out[agrees])
            count = min(int(ratio * agrees.sum()), len(held_out))
            dropped.append(held_out[largest_losses(probabilities=probabilities, given=given[held_out], count=count)])
        found, dropped = np.concatenate(found), np.concatenate(dropped)
        selected[found], chosen_in[found] = True, i
        candidates[found] = candidates[dropped] = False
        removed[dropped] = True
    removed &= ~selected
    return IncvSelection(
        selected=selected,
        removed=removed,
        iteration=chosen_in,
        noise_rate=float("nan") if rate is None else rate,
        remove_ratio=float("nan") if ratio is None else ratio,
    )
