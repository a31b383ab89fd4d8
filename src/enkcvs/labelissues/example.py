"""A small example of a user's own data with known label errors, to try ``enkcvs find-issues --data`` on:
``enkcvs example --out animals.csv``.

The table holds measurements of three animals: five numeric features drawn around one centre per class (seeded),
a label column ``animal`` with a share of the labels flipped to another class, and an id column ``id``. The rows
whose label was flipped are written beside it (``animals.flipped.csv``: id, given and true label), so that a ranking
can be checked against them.
"""

from pathlib import Path

import numpy as np
import pandas as pd

from enkcvs.io import atomic_path

CLASSES = ("cat", "dog", "owl")
FEATURES = 5
SEPARATION = 3.0  # distance of each class's centre from the origin, in standard deviations of the features


def write_example(*, out: Path, samples: int = 300, flipped: float = 0.1, seed: int = 1) -> str:
    """Write the example table of ``samples`` rows to ``out`` (.csv), a share ``flipped`` of its labels replaced by
    another class, and the flipped rows beside it (``<stem>.flipped.csv``), both seeded by ``seed``; returns a summary
    naming both files and the next command."""
    if out.suffix.lower() != ".csv":
        raise ValueError(f"--out {out}: the example is a CSV file. Fix: e.g. --out {out.with_suffix('.csv')}")
    if samples < 3 * len(CLASSES) or not 0 <= flipped < 1:
        raise ValueError(
            f"--samples {samples}, --flipped {flipped}: the example needs at least "
            f"{3 * len(CLASSES)} rows and a share in [0, 1) of them flipped"
        )
    rng = np.random.default_rng(seed)
    true = rng.permutation(np.arange(samples) % len(CLASSES))  # (N,)
    centres = SEPARATION * np.eye(len(CLASSES), FEATURES)  # (Q, F)
    features = centres[true] + rng.normal(size=(samples, FEATURES))  # (N, F)
    given = true.copy()
    rows = rng.choice(samples, size=round(flipped * samples), replace=False)
    given[rows] = (true[rows] + rng.integers(1, len(CLASSES), size=len(rows))) % len(CLASSES)  # another class
    names = np.array(CLASSES)
    ids = np.array([f"A{row:04d}" for row in range(samples)])
    table = pd.DataFrame(features.round(3), columns=[f"x{j}" for j in range(FEATURES)])
    table.insert(0, "id", ids)
    table["animal"] = names[given]
    flips = pd.DataFrame(
        {"id": ids[np.sort(rows)], "given_label": names[given[np.sort(rows)]], "true_label": names[true[np.sort(rows)]]}
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    truth = out.with_name(f"{out.stem}.flipped.csv")
    for frame, path in ((table, out), (flips, truth)):
        with atomic_path(path) as tmp:
            frame.to_csv(tmp, index=False)
    return (
        f"{samples} rows, {len(rows)} labels flipped to another class, in {out} (the flipped rows in {truth}). "
        f"Next: enkcvs find-issues --data {out} --label-column animal --id-column id --out issues.csv"
    )
