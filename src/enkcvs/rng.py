"""Seeds derived from the run's seed and the job's coordinates, so every job can be rebuilt alone."""

from enum import IntEnum

import numpy as np


class Purpose(IntEnum):
    """What a derived seed is for; a different purpose gives an independent stream."""

    NOISE = 0
    FOLDS = 1
    VALIDATION = 2
    INIT = 3
    FINAL = 4
    PEER = 5  # co-teaching's second network
    INCV = 6  # INCV's halves and the models trained on them (Chen et al. 2019)
    ENSEMBLE = 7  # the members of an ensemble of final models


def derive_seed(seed: int, purpose: Purpose, *keys: int) -> int:
    """Return a 32-bit seed that depends only on ``seed``, ``purpose`` and ``keys`` (e.g. K, m, k)."""
    return int(np.random.SeedSequence([int(seed), int(purpose), *map(int, keys)]).generate_state(1)[0])


def generator(seed: int, purpose: Purpose, *keys: int) -> np.random.Generator:
    """A numpy generator seeded by :func:`derive_seed`."""
    return np.random.default_rng(derive_seed(seed, purpose, *keys))
