"""Noise settings by name (Section 2, Definitions 1-2): ``sym0.2`` (symmetric, epsilon = 0.2), ``asym0.4``
(asymmetric) or ``real`` (the dataset's labels are noisy already, as Clothing-1M's and WebVision's: nothing is
injected and the true labels are unknown); that string is also the ``{noise}`` wildcard of the workflow. The standard
library alone, so that the workflow checks its config with nothing but Snakemake installed; the injection itself is
:mod:`enkcvs.method.noise`.
"""

import re
from dataclasses import dataclass

#: Asymmetric flips, source class -> target class (docs/paper-notes.md, "The asymmetric maps"); unmapped classes stay clean.
ASYMMETRIC_MAPS: dict[str, dict[int, int]] = {
    "mnist": {2: 7, 3: 8, 5: 6, 6: 5, 7: 1},
    "cifar10": {9: 1, 2: 0, 4: 7, 3: 5, 5: 3},
    # TREC coarse labels in the order ABBR, DESC, ENTY, HUM, LOC, NUM.
    "trec": {0: 2, 2: 0, 1: 3, 3: 1, 4: 3},
}

#: Asymmetric maps built from the dataset's super-classes (CIFAR-100's coarse labels; docs/paper-notes.md, "The asymmetric maps").
SUPERCLASS_MAPS = ("cifar100_pairs", "cifar100_next")

NOISE_PATTERN = re.compile(r"(?P<kind>sym|asym)(?P<rate>0(\.\d+)?)|(?P<real>real)")


@dataclass(frozen=True)
class NoiseSpec:
    """A parsed noise setting: ``kind`` is ``"sym"``, ``"asym"`` or ``"real"``; ``rate`` is epsilon in [0, 1) (NaN,
    unknown, for ``"real"``)."""

    kind: str
    rate: float


def parse_noise(spec: str) -> NoiseSpec:
    """Parse ``sym0.2`` / ``asym0.4``; raise ``ValueError`` naming the accepted form otherwise."""
    match = NOISE_PATTERN.fullmatch(spec)
    if match is None:
        raise ValueError(
            f"noise setting {spec!r} does not parse: write 'sym' or 'asym' followed by a rate in [0, 1), "
            "e.g. 'sym0.2' or 'asym0.4', or 'real' for labels that are noisy already"
        )
    if match["real"]:
        return NoiseSpec(kind="real", rate=float("nan"))
    return NoiseSpec(kind=match["kind"], rate=float(match["rate"]))
