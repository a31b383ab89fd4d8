"""Label-noise injection (Section 2, Definitions 1-2; exact counts as docs/paper-notes.md decides).

A noise setting is named as :mod:`enkcvs.method.noise_settings` parses it.
"""

import numpy as np

from enkcvs.method.noise_settings import SUPERCLASS_MAPS, NoiseSpec
from enkcvs.rng import Purpose, generator


def symmetric_transition_matrix(*, rate: float, num_classes: int) -> np.ndarray:
    """Definition 1: T_jj = 1 - eps, T_jk = eps / (Q - 1). Returns shape (Q, Q)."""
    off = rate / (num_classes - 1)
    matrix = np.full((num_classes, num_classes), off)
    np.fill_diagonal(matrix, 1.0 - rate)
    return matrix


def asymmetric_transition_matrix(*, rate: float, num_classes: int, mapping: dict[int, int]) -> np.ndarray:
    """Definition 2: T_jj = 1 - eps and T_j,map(j) = eps for mapped classes j; identity rows elsewhere. Shape (Q, Q)."""
    matrix = np.eye(num_classes)
    for source, target in mapping.items():
        matrix[source, source] = 1.0 - rate
        matrix[source, target] = rate
    return matrix


def superclass_asymmetric_map(*, superclasses: np.ndarray, variant: str, seed: int) -> dict[int, int]:
    """The asymmetric map of a dataset with super-classes (CIFAR-100's "flip two sub-classes within each
    super-class", Appendix; docs/paper-notes.md decides the reading).

    Parameters
    ----------
    superclasses : (Q,) super-class of each class.
    variant : ``"cifar100_pairs"`` (default reading): in each super-class, one seeded pair of its sub-classes flip
        into each other; ``"cifar100_next"`` (common in the literature): each class flips to the next class of its
        super-class, circularly, in class order.
    seed : the run's seed (the pairs are part of the noise draw).

    Returns
    -------
    source -> target class.
    """
    rng = generator(seed, Purpose.NOISE, 1)
    mapping = {}
    for superclass in np.unique(superclasses):
        members = np.flatnonzero(superclasses == superclass)
        if len(members) < 2:
            continue
        if variant == "cifar100_pairs":
            first, second = (int(c) for c in rng.choice(members, size=2, replace=False))
            mapping |= {first: second, second: first}
        elif variant == "cifar100_next":
            mapping |= {int(c): int(members[(i + 1) % len(members)]) for i, c in enumerate(members)}
        else:
            raise ValueError(f"unknown super-class map {variant!r}; use one of {SUPERCLASS_MAPS}")
    return mapping


def inject_noise(
    labels: np.ndarray, *, spec: NoiseSpec, num_classes: int, seed: int, mapping: dict[int, int] | None = None
) -> np.ndarray:
    """Return noisy labels: exactly ``round(eps * n_c)`` samples of each source class c are flipped.

    Parameters
    ----------
    labels : (N,) int array of true labels in 0..Q-1.
    spec : the noise setting.
    num_classes : Q.
    seed : the run's seed; the flips depend on it alone, so every method of a seed sees the same noisy labels.
    mapping : source -> target class, required for asymmetric noise.

    Returns
    -------
    (N,) int64 array of given (noisy) labels.
    """
    labels = np.asarray(labels, dtype=np.int64)
    if spec.kind == "real":
        return labels.copy()
    if spec.kind == "asym" and mapping is None:
        raise ValueError("asymmetric noise needs a class mapping (the dataset's 'asymmetric_map')")
    rng = generator(seed, Purpose.NOISE)
    noisy = labels.copy()
    sources = range(num_classes) if spec.kind == "sym" else sorted(mapping)
    for source in sources:
        members = np.flatnonzero(labels == source)
        flipped = rng.choice(members, size=round(spec.rate * len(members)), replace=False)
        if spec.kind == "sym":
            # Uniform over the Q - 1 other classes: draw from 0..Q-2 and skip the source class.
            offsets = rng.integers(0, num_classes - 1, size=len(flipped))
            noisy[flipped] = offsets + (offsets >= source)
        else:
            noisy[flipped] = mapping[source]
    return noisy


def empirical_transition_matrix(*, true_labels: np.ndarray, noisy_labels: np.ndarray, num_classes: int) -> np.ndarray:
    """Row-normalised counts T_jk = #(y*=j, y=k) / #(y*=j) of an injected noise. Shape (Q, Q)."""
    counts = np.zeros((num_classes, num_classes))
    np.add.at(counts, (true_labels, noisy_labels), 1.0)
    return counts / np.maximum(counts.sum(axis=1, keepdims=True), 1.0)


def actual_noise_rate(*, given: np.ndarray, true: np.ndarray) -> float:
    """The share of samples whose given label is wrong, (N,), (N,) -> float. Symmetric noise flips round(eps * n_c) of
    every class, so this is epsilon up to rounding; an asymmetric map flips only its source classes, so it is below
    epsilon (MNIST, CIFAR-10: 5 of 10 classes, about eps / 2). Co-teaching's authors set the forget rate to it."""
    given, true = np.asarray(given), np.asarray(true)
    if (true < 0).any():
        raise ValueError("the actual noise rate needs the true labels, which only injected noise knows")
    return float(np.mean(given != true))
