"""What ``enkcvs find-issues`` is asked: what to read, which model, and the settings, in one frozen
:class:`Request`, and the checks that need no file read, each a ValueError in the command's words naming the fix."""

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from enkcvs.labelissues.oof import (
    DEFAULT_FOLDS,
    DEFAULT_REPETITIONS,
    DEFAULT_SCORE,
    DEFAULT_SEED,
    FILTERS,
    checked_threshold,
    list_options_conflict,
)
from enkcvs.labelissues.review import DEFAULT_TOP

#: Output formats, by the suffix of ``--out``.
OUT_SUFFIXES = (".csv", ".parquet")
#: The options of one input only, refused with the other: the data's (training) and the probabilities'.
DATA_ONLY = tuple(
    "kind feature_columns no_standardize text_recipe encoder folds repetitions epochs seed classifier no_cache jobs".split()
)
PROBABILITIES_ONLY = ("labels", "class_names", "classes_in_sorted_order", "images")


@dataclass(frozen=True)
class Request:
    """One ``enkcvs find-issues``: the command's options by their names (None: not given, its default).

    ``data`` (trained on here) or ``probabilities`` (with their ``labels``) says what to rank; ``out`` where the
    table goes (.csv or .parquet), the review sheet and the provenance beside it.
    """

    out: Path | None = None
    data: Path | None = None
    probabilities: Path | None = None
    labels: Path | None = None
    label_column: str | None = None
    id_column: str | None = None
    image_column: str | None = None
    text_column: str | None = None
    feature_columns: list[str] | None = None
    kind: str | None = None
    class_names: list[str] | None = None
    classes_in_sorted_order: bool = False
    images: Path | None = None
    no_standardize: bool = False
    text_recipe: str | None = None
    encoder: str | None = None
    classifier: str | None = None
    no_cache: bool = False
    folds: int | None = None
    repetitions: int | None = None
    epochs: int | None = None
    seed: int | None = None
    threshold: int | None = None
    score: str = DEFAULT_SCORE
    filter_by: str = FILTERS[0]
    frac_noise: float = 1.0
    num_to_remove_per_class: list[int] | None = None
    jobs: int | None = None
    review_top: int | None = None
    by_rank: bool = False

    @property
    def settings(self) -> dict:
        """K, M and the seed, defaults filled in."""
        return {
            "folds": DEFAULT_FOLDS if self.folds is None else self.folds,
            "repetitions": DEFAULT_REPETITIONS if self.repetitions is None else self.repetitions,
            "seed": DEFAULT_SEED if self.seed is None else self.seed,
        }

    @property
    def list_options(self) -> dict:
        """How :func:`enkcvs.labelissues.oof.select` ranks and counts the review list."""
        return {
            "score": self.score,
            "filter_by": self.filter_by,
            "frac_noise": self.frac_noise,
            "num_to_remove_per_class": self.num_to_remove_per_class,
        }

    def checked(self) -> "Request":
        """This request when every check that needs no file passes: one input, its options only, ``--out``, the
        counts; ValueError naming the fix otherwise."""
        if (self.probabilities is None) == (self.data is None):
            raise ValueError(
                "pass one of --data PATH (your images, texts or table, trained on here) or --probabilities FILE "
                "(out-of-fold probabilities from a model of your own)"
                if self.data is None
                else "--data and --probabilities each give what to rank: pass only one of them"
            )
        others, which, other = (
            (PROBABILITIES_ONLY, "--probabilities", "--data")
            if self.data is not None
            else (DATA_ONLY, "--data", "--probabilities")
        )
        if passed := [name for name in others if getattr(self, name) not in (None, False)]:
            flags = " and ".join(_flag(name) for name in passed)
            raise ValueError(
                f"{flags} go{'es' if len(passed) == 1 else ''} with {which}, not with {other}. Fix: drop {flags}"
            )
        if self.out is not None and self.out.is_dir():
            raise ValueError(
                f"--out points to a folder, give the file to write: {self.out} is a folder. Fix: e.g. --out "
                f"{self.out / 'issues.csv'}"
            )
        if self.out is not None and self.out.suffix.lower() not in OUT_SUFFIXES:
            raise ValueError(
                f"--out {self.out}: unknown extension {self.out.suffix!r}; use one of {list(OUT_SUFFIXES)}"
            )
        if self.review_top is not None and self.review_top < 1:
            raise ValueError(
                f"--review-top {self.review_top}: a review sheet shows N >= 1 samples. Fix: pass --review-top 1 or "
                f"more (default {DEFAULT_TOP})"
            )
        for option, least in (("folds", 2), ("repetitions", 1), ("epochs", 1), ("jobs", 1)):
            if (value := getattr(self, option)) is not None and value < least:
                raise ValueError(f"{_flag(option)} {value}: pass {_flag(option)} {least} or more")
        if self.frac_noise is not None and not 0 < self.frac_noise <= 1:
            raise ValueError(f"--frac-noise {self.frac_noise}: a share of the estimated errors. Fix: pass it in (0, 1]")
        if (counts := self.num_to_remove_per_class) is not None and any(count < 0 for count in counts):
            raise ValueError(
                f"--num-to-remove-per-class {','.join(map(str, counts))}: counts of samples, 0 or more. Fix: pass "
                "one count of 0 or more for each class, in class order"
            )
        if problem := list_options_conflict(
            filter_by=self.filter_by, frac_noise=self.frac_noise, per_class=counts, option=_option
        ):
            raise ValueError(problem)
        if self.class_names is not None and self.classes_in_sorted_order:
            raise ValueError(
                "--class-names and --classes-in-sorted-order each set the class of each probability column; pass "
                "only one of them"
            )
        if self.data is not None:
            checked_threshold(self.threshold, iterations=self.settings["repetitions"], option="--threshold")
            return self
        if self.labels is None:
            raise ValueError(
                "--probabilities needs the given labels: pass --labels FILE, rows in the probabilities' order"
            )
        shows = [name for name in ("images", "image_column", "text_column") if getattr(self, name) is not None]
        if len(shows) > 1:
            raise ValueError(
                f"{' and '.join(map(_flag, shows))} each choose what the review sheet shows; pass only one of them"
            )
        if self.review_top is not None and not shows:
            raise ValueError(
                "--review-top sizes the review sheet, which needs what to show: pass --images, --image-column or "
                "--text-column too"
            )
        return self

    def check_counts(self, classes: Sequence) -> None:
        """ValueError naming the fix unless ``--num-to-remove-per-class`` holds one count for each of the ``classes``
        (their names, or indices, in class order): run by the readers as soon as the labels are read, before anything
        is encoded or any fold model trains."""
        counts = self.num_to_remove_per_class
        if counts is None or len(counts) == len(classes):
            return
        shown = ", ".join(map(str, classes[:10])) + (", ..." if len(classes) > 10 else "")
        raise ValueError(
            f"--num-to-remove-per-class {','.join(map(str, counts))}: {len(counts)} "
            f"{'count' if len(counts) == 1 else 'counts'} for Q = {len(classes)} classes. Fix: pass one count of 0 "
            f"or more for each of the Q = {len(classes)} classes, in class order ({shown})"
        )


def _option(name: str, value=None) -> str:
    """A list option as the command takes it: ``--name`` or ``--name value``."""
    return _flag(name) if value is None else f"{_flag(name)} {value}"


def _flag(name: str) -> str:
    """The command's option of a :class:`Request` field."""
    return "--" + name.replace("_", "-")
