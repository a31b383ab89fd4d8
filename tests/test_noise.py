"""Noise injection (Definitions 1-2, exact per-class counts) and noise-setting parsing."""

import numpy as np
import pytest

from enkcvs.method.noise import (
    asymmetric_transition_matrix,
    empirical_transition_matrix,
    inject_noise,
    superclass_asymmetric_map,
    symmetric_transition_matrix,
)
from enkcvs.method.noise_settings import ASYMMETRIC_MAPS, NoiseSpec, parse_noise

# Uneven class sizes so a per-class count error cannot hide behind a global one.
CLASS_SIZES = [7, 10, 13, 21, 25]
RATES = [0.0, 0.2, 0.45, 0.8]
# Q = 5 mapping with a swap (0 <-> 1), a one-way flip (3 -> 4) and untouched classes 2 and 4.
TOY_MAP = {0: 1, 1: 0, 3: 4}


@pytest.mark.parametrize("rate", RATES)
def test_symmetric_flips_exactly_round_eps_n_per_class(make_labels, rate):
    """docs/paper-notes.md: exactly round(eps * n_c) samples of every class c are flipped (no Bernoulli draws)."""
    true = make_labels(seed=1, n_per_class=CLASS_SIZES, num_classes=5)
    noisy = inject_noise(true, spec=NoiseSpec("sym", rate), num_classes=5, seed=7)
    for c, n_c in enumerate(CLASS_SIZES):
        # A flip that landed back on its source would not count here, so this also checks "never the source class".
        assert int((noisy[true == c] != c).sum()) == round(rate * n_c), f"class {c}"


@pytest.mark.parametrize("rate", RATES)
def test_asymmetric_flips_exactly_round_eps_n_to_mapped_target(make_labels, rate):
    """Mapped classes lose exactly round(eps * n_c) samples, all to their target; unmapped classes stay clean."""
    true = make_labels(seed=2, n_per_class=CLASS_SIZES, num_classes=5)
    noisy = inject_noise(true, spec=NoiseSpec("asym", rate), num_classes=5, seed=7, mapping=TOY_MAP)
    for c, n_c in enumerate(CLASS_SIZES):
        flipped = noisy[(true == c) & (noisy != c)]
        if c in TOY_MAP:
            assert len(flipped) == round(rate * n_c), f"class {c}"
            assert np.all(flipped == TOY_MAP[c]), f"class {c} flipped off its target"
        else:
            assert len(flipped) == 0, f"unmapped class {c} was touched"


@pytest.mark.parametrize("name", sorted(ASYMMETRIC_MAPS))
def test_asymmetric_noise_with_shipped_maps_follows_map_from_true_label(make_labels, name):
    """With chains (MNIST 2->7->1) and swaps (5<->6), a flip follows the map of the *true* class, once."""
    mapping = ASYMMETRIC_MAPS[name]
    num_classes = 6 if name == "trec" else 10
    true = make_labels(seed=3, n_per_class=40, num_classes=num_classes)
    noisy = inject_noise(true, spec=parse_noise("asym0.4"), num_classes=num_classes, seed=11, mapping=mapping)
    changed = noisy != true
    expected_target = np.array([mapping.get(int(c), -1) for c in true[changed]])
    np.testing.assert_array_equal(noisy[changed], expected_target)
    for c in range(num_classes):
        assert int(changed[true == c].sum()) == (16 if c in mapping else 0)


def test_shipped_asymmetric_maps_match_paper_notes():
    """Pins the maps of docs/paper-notes.md ("The asymmetric maps") so an accidental edit is caught."""
    assert ASYMMETRIC_MAPS["mnist"] == {2: 7, 3: 8, 5: 6, 6: 5, 7: 1}
    assert ASYMMETRIC_MAPS["cifar10"] == {9: 1, 2: 0, 4: 7, 3: 5, 5: 3}
    # ABBR=0, DESC=1, ENTY=2, HUM=3, LOC=4, NUM=5: ABBR<->ENTY, DESC<->HUM, LOC->HUM.
    assert ASYMMETRIC_MAPS["trec"] == {0: 2, 2: 0, 1: 3, 3: 1, 4: 3}


def test_symmetric_flips_reach_every_other_class(make_labels):
    """Uniform over the Q-1 other classes: with many flips every off-diagonal cell is hit, the diagonal never."""
    true = make_labels(seed=4, n_per_class=300, num_classes=4)
    noisy = inject_noise(true, spec=NoiseSpec("sym", 0.5), num_classes=4, seed=5)
    counts = np.zeros((4, 4), dtype=int)
    np.add.at(counts, (true[noisy != true], noisy[noisy != true]), 1)
    off_diagonal = ~np.eye(4, dtype=bool)
    assert np.all(counts[off_diagonal] > 0)
    assert np.all(np.diag(counts) == 0)
    # The largest and smallest source classes: 0 and Q-1 must reach their neighbours (off-by-one guard).
    assert counts[0, 1] > 0 and counts[3, 2] > 0


def test_same_seed_same_noise_and_different_seed_different_noise(make_labels):
    """Seed s gives the same noisy labels to every method; another seed draws other flips."""
    true = make_labels(seed=6, n_per_class=50, num_classes=5)
    spec = parse_noise("sym0.4")
    first = inject_noise(true, spec=spec, num_classes=5, seed=3)
    again = inject_noise(true.copy(), spec=spec, num_classes=5, seed=3)
    other = inject_noise(true, spec=spec, num_classes=5, seed=4)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
    # Different seeds move the flips, not their number.
    assert (first != true).sum() == (other != true).sum()


def test_inject_noise_leaves_input_untouched_and_returns_int64(make_labels):
    true = make_labels(seed=8, n_per_class=20, num_classes=3)
    before = true.copy()
    noisy = inject_noise(true, spec=NoiseSpec("sym", 0.5), num_classes=3, seed=0)
    np.testing.assert_array_equal(true, before)
    assert noisy.dtype == np.int64 and noisy.shape == true.shape


def test_zero_rate_is_identity(make_labels):
    true = make_labels(seed=9, n_per_class=15, num_classes=4)
    np.testing.assert_array_equal(inject_noise(true, spec=parse_noise("sym0"), num_classes=4, seed=1), true)


def test_asymmetric_without_mapping_raises(make_labels):
    true = make_labels(seed=10, n_per_class=5, num_classes=3)
    with pytest.raises(ValueError, match="mapping"):
        inject_noise(true, spec=NoiseSpec("asym", 0.2), num_classes=3, seed=0)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("sym0.2", NoiseSpec("sym", 0.2)),
        ("asym0.4", NoiseSpec("asym", 0.4)),
        ("sym0", NoiseSpec("sym", 0.0)),
        ("sym0.85", NoiseSpec("sym", 0.85)),
    ],
)
def test_parse_noise_accepts(text, expected):
    assert parse_noise(text) == expected


@pytest.mark.parametrize(
    "text",
    ["", "sym", "sym1", "sym1.0", "sym-0.2", "sym.2", "sym0.", "sym0.2x", "asym 0.4", "SYM0.2", "gauss0.2", "0.2"],
)
def test_parse_noise_rejects_garbage_with_a_message(text):
    with pytest.raises(ValueError, match=r"does not parse.*'sym0\.2'"):
        parse_noise(text)


def test_parse_noise_rejects_trailing_newline():
    """The wildcard must be the whole string; ``re.match`` with ``$`` accepts a trailing newline."""
    with pytest.raises(ValueError, match="does not parse"):
        parse_noise("sym0.2\n")


@pytest.mark.parametrize("num_classes", [2, 3, 10])
@pytest.mark.parametrize("rate", RATES)
def test_symmetric_transition_matrix_definition_1(num_classes, rate):
    matrix = symmetric_transition_matrix(rate=rate, num_classes=num_classes)
    assert matrix.shape == (num_classes, num_classes)
    np.testing.assert_allclose(matrix.sum(axis=1), 1.0)
    np.testing.assert_allclose(np.diag(matrix), 1.0 - rate)
    np.testing.assert_allclose(matrix[~np.eye(num_classes, dtype=bool)], rate / (num_classes - 1))


@pytest.mark.parametrize("rate", RATES)
def test_asymmetric_transition_matrix_definition_2(rate):
    matrix = asymmetric_transition_matrix(rate=rate, num_classes=5, mapping=TOY_MAP)
    np.testing.assert_allclose(matrix.sum(axis=1), 1.0)
    for source, target in TOY_MAP.items():
        assert matrix[source, source] == pytest.approx(1.0 - rate)
        assert matrix[source, target] == pytest.approx(rate)
    for clean in (2, 4):
        np.testing.assert_array_equal(matrix[clean], np.eye(5)[clean])


def test_empirical_transition_matches_symmetric_for_large_n(make_labels):
    """Exact counts make the diagonal exact; the off-diagonal is a multinomial draw, within 5 sigma."""
    true = make_labels(seed=12, n_per_class=2000, num_classes=5)
    noisy = inject_noise(true, spec=NoiseSpec("sym", 0.4), num_classes=5, seed=13)
    empirical = empirical_transition_matrix(true_labels=true, noisy_labels=noisy, num_classes=5)
    expected = symmetric_transition_matrix(rate=0.4, num_classes=5)
    np.testing.assert_allclose(empirical.sum(axis=1), 1.0)
    np.testing.assert_allclose(np.diag(empirical), np.diag(expected))
    np.testing.assert_allclose(empirical, expected, atol=0.03)


def test_empirical_transition_equals_asymmetric_exactly(make_labels):
    """With eps * n_c integral and a deterministic target, the empirical matrix is Definition 2 exactly."""
    true = make_labels(seed=14, n_per_class=20, num_classes=5)
    noisy = inject_noise(true, spec=NoiseSpec("asym", 0.25), num_classes=5, seed=1, mapping=TOY_MAP)
    empirical = empirical_transition_matrix(true_labels=true, noisy_labels=noisy, num_classes=5)
    np.testing.assert_allclose(empirical, asymmetric_transition_matrix(rate=0.25, num_classes=5, mapping=TOY_MAP))


def test_empirical_transition_absent_class_row_is_zero():
    """A class with no samples gives a zero row rather than a division by zero."""
    empirical = empirical_transition_matrix(
        true_labels=np.array([0, 0, 2]), noisy_labels=np.array([0, 2, 2]), num_classes=3
    )
    np.testing.assert_allclose(empirical, [[0.5, 0.0, 0.5], [0.0, 0.0, 0.0], [0.0, 0.0, 1.0]])


# Q = 12 classes in 4 super-classes of 3, 3, 4 and 2 members (not contiguous, as CIFAR-100's are not).
SUPERCLASSES = np.array([0, 1, 2, 0, 1, 2, 0, 1, 2, 2, 3, 3])


def test_superclass_pairs_swap_one_seeded_pair_inside_each_superclass():
    mapping = superclass_asymmetric_map(superclasses=SUPERCLASSES, variant="cifar100_pairs", seed=5)
    assert len(mapping) == 2 * 4  # one pair per super-class
    for source, target in mapping.items():
        assert mapping[target] == source and source != target
        assert SUPERCLASSES[source] == SUPERCLASSES[target]
    assert mapping == superclass_asymmetric_map(superclasses=SUPERCLASSES, variant="cifar100_pairs", seed=5)
    others = [superclass_asymmetric_map(superclasses=SUPERCLASSES, variant="cifar100_pairs", seed=s) for s in range(9)]
    assert len({tuple(sorted(m.items())) for m in others}) > 1  # the pairs are part of the seeded draw


def test_superclass_next_flips_each_class_to_the_next_of_its_superclass():
    mapping = superclass_asymmetric_map(superclasses=SUPERCLASSES, variant="cifar100_next", seed=0)
    assert mapping == {0: 3, 3: 6, 6: 0, 1: 4, 4: 7, 7: 1, 2: 5, 5: 8, 8: 9, 9: 2, 10: 11, 11: 10}
    with pytest.raises(ValueError, match="unknown super-class map 'cifar100_random'"):
        superclass_asymmetric_map(superclasses=SUPERCLASSES, variant="cifar100_random", seed=0)


def test_real_noise_injects_nothing_and_has_no_rate():
    spec = parse_noise("real")
    assert spec.kind == "real" and np.isnan(spec.rate)
    labels = np.array([0, 1, 2, 1])
    np.testing.assert_array_equal(inject_noise(labels, spec=spec, num_classes=3, seed=0), labels)
