"""E-NKCVS on out-of-fold (OOF) predicted probabilities: selection without training anything.

Any cross-validation that predicts each sample from a model that never saw it yields NKCVS's held-out predictions
(Algorithm 1); M repetitions with different splits yield E-NKCVS's (Algorithm 2). :func:`select` applies the paper's
voting, pseudo labels and entropy weights to them, lists the likely label errors for review beside the kept set, and
scores both when the true labels are known. The labels become class indices here, once, for every route
(:func:`encoded_labels`); the files of probabilities and labels are read here too.
"""

import csv
import warnings
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np
import pandas as pd

from enkcvs.io import PathLike
from enkcvs.labelissues.determinism import canonical_order, row_digests, stable_ranks
from enkcvs.labelissues.issues import label_issue_table, row_names
from enkcvs.method.metrics import error_list_scores, precision_recall, selection_set_sizes
from enkcvs.method.ranking import SCORES as RANKING_SCORES
from enkcvs.method.selection import ensemble_outcome
from enkcvs.method.theory import empirical_theorem1

# Every row is rescaled to sum 1: rows off by at most RENORMALISED_ABOVE (float32 rounding) silently, rows off by up to
# ROW_SUM_TOLERANCE (probabilities stored as float16 sum to 1 within ~3e-3) with one line, rows off by more refused;
# entries down to -ENTRY_TOLERANCE are float rounding, clipped to 0 (cleanlab refuses them beyond 1e-6).
ROW_SUM_TOLERANCE = 1e-2
RENORMALISED_ABOVE = 1e-5
ENTRY_TOLERANCE = 1e-4
#: K, M and the seed of the cross-validation a user's own data runs through unless told.
DEFAULT_FOLDS, DEFAULT_REPETITIONS, DEFAULT_SEED = 4, 3, 1
#: What ranks the samples (``label_score``), on the mean of the M repetitions' probabilities: cleanlab's
#: ``get_label_quality_scores`` methods, the margin against the suggested label and the logit margin
#: (:mod:`enkcvs.method.ranking`).
CLEANLAB_SCORES = ("self_confidence", "normalized_margin", "confidence_weighted_entropy")
SCORES = ("label_quality", *CLEANLAB_SCORES, "logit_margin")
#: Every label-issue table's score unless told, chosen on probabilities given once by benchmarks/given_probabilities.py
#: (overconfident and rounded ones among them) against cleanlab's three scores and the floor of
#: :data:`enkcvs.report.floor.FLOOR` (its table in benchmarks/README.md).
DEFAULT_SCORE = "logit_margin"
#: ``filter_by`` of ``cleanlab.filter.find_label_issues``, which counts the review list; its default first.
FILTERS = ("prune_by_noise_rate", "prune_by_class", "both", "confident_learning", "predicted_neq_given")
FILTERS += ("low_normalized_margin", "low_self_confidence")
#: The filters that read ``frac_noise`` and ``num_to_remove_per_class``: with the others ``find_label_issues`` ignores
#: the first (with a warning) and refuses the second, so both are refused here before anything is computed.
COUNTED_FILTERS = FILTERS[:3]


@dataclass(frozen=True, eq=False)  # eq on array fields would be ambiguous
class SelectionResult:
    """E-NKCVS applied to OOF probabilities, every array (N,) in the input's sample order: ``given`` labels (class
    indices), ``selected`` (the kept set SS to train on: in at least ``threshold`` of the M ``iterations``),
    ``in_review_list`` (the likely label errors to check), ``votes``, ``pseudo_labels`` (the most frequent predicted
    label), ``beta`` (H(P) / log Q), ``prob_given`` (the given label's mean probability), ``label_quality`` (the
    ranking's score, low = likely mislabelled), ``rank`` (1 = most likely mislabelled); ``class_names`` (None for
    integer labels without names); given the true labels, both sets' scores and corrected Theorem 1's expectation.
    """

    given: np.ndarray
    selected: np.ndarray
    in_review_list: np.ndarray
    votes: np.ndarray
    pseudo_labels: np.ndarray
    beta: np.ndarray
    prob_given: np.ndarray
    label_quality: np.ndarray
    rank: np.ndarray
    class_names: tuple[Hashable, ...] | None
    iterations: int
    threshold: int
    kept_precision: float | None = None
    kept_recall: float | None = None
    review_precision: float | None = None
    review_recall: float | None = None
    theorem1: dict[str, float] | None = None

    def __post_init__(self):
        for field in fields(self):  # frozen means the arrays too
            value = getattr(self, field.name)
            if isinstance(value, np.ndarray):
                value.setflags(write=False)

    def to_frame(
        self,
        *,
        labels_as_names: bool = True,
        ids: np.ndarray | None = None,
        id_column: str | None = None,
        paths: np.ndarray | None = None,
    ) -> pd.DataFrame:
        """The label-issue table (:func:`enkcvs.labelissues.issues.label_issue_table`), one row per sample in the
        input's order, named by ``ids`` (N,) under ``id_column`` (default ``id``), else by the images' ``paths`` (N,),
        else by its number from 1; labels as class names where there are names and ``labels_as_names``."""
        return label_issue_table(
            given=self.given,
            predicted=self.pseudo_labels,
            label_score=self.label_quality,
            is_label_issue=self.in_review_list,
            votes=self.votes,
            kept=self.selected,
            rank=self.rank,
            names=row_names(count=len(self.given), ids=ids, id_column=id_column or "id", paths=paths),
            class_names=self.class_names if labels_as_names else None,
        )


def select(
    *,
    probabilities: np.ndarray | Sequence[np.ndarray],
    labels: Sequence[Hashable] | np.ndarray,
    threshold: int | None = None,
    true_labels: Sequence[Hashable] | np.ndarray | None = None,
    class_names: Sequence[Hashable] | None = None,
    score: str = DEFAULT_SCORE,
    sample_keys: np.ndarray | None = None,
    filter_by: str = FILTERS[0],
    frac_noise: float = 1.0,
    num_to_remove_per_class: Sequence[int] | None = None,
) -> SelectionResult:
    """E-NKCVS selection (Algorithm 2, Eq. contains), pseudo labels and beta (Section 3.2) from OOF probabilities.

    The samples are processed sorted by a digest of each one's label, probabilities and ``sample_keys``
    (:func:`enkcvs.labelissues.determinism.canonical_order`) and handed back in their order: the same samples in any
    order get the same result, bitwise. ValueError naming the fix, before any computation, for malformed input.

    Parameters
    ----------
    probabilities : (N, Q), (M, N, Q) or a list of M (N, Q); row i predicted by a model that did not train on sample i.
    labels : (N,) class indices, or names numbered by ``class_names`` (Q, the columns' names) as :func:`encoded_labels`.
    threshold : t; default 1 for M = 1, else 2.
    true_labels : (N,) optional; they add both sets' scores and Theorem 1.
    score : what ranks the samples: ``"logit_margin"`` (:func:`enkcvs.method.ranking.logit_margin`), one of
        :data:`CLEANLAB_SCORES` (``cleanlab.rank.get_label_quality_scores`` on the mean probabilities), or
        ``"label_quality"``, the margin against the suggested label.
    sample_keys : (N,) what else tells the samples apart (ids, digests of their data), or None.
    filter_by, frac_noise, num_to_remove_per_class : ``cleanlab.filter.find_label_issues``' options on the calibrated
        mean probabilities: the review list holds as many not-kept samples, first in the ranking, as it flags among them.

    Returns
    -------
    SelectionResult
    """
    stack = _checked_probabilities(probabilities)  # (M, N, Q)
    iterations, num_samples, num_classes = stack.shape
    names = checked_class_names(class_names, num_classes=num_classes)
    sizes = {"num_samples": num_samples, "num_classes": num_classes}
    given, names = encoded_labels(labels, what="labels", class_names=names, infer_names=True, **sizes)
    true = None
    if true_labels is not None:
        true, _ = encoded_labels(true_labels, what="true_labels", class_names=names, infer_names=False, **sizes)
    threshold = checked_threshold(threshold, iterations=iterations)
    cleanlab = checked_list_options(
        score=score, filter_by=filter_by, frac_noise=frac_noise, per_class=num_to_remove_per_class, classes=num_classes
    )

    predicted = stack.argmax(axis=2)  # (M, N)
    digests = row_digests(given, stack.transpose(1, 0, 2), sample_keys)  # (N,) each sample's (M, Q) and label
    order = canonical_order(digests)
    mean = stack.mean(axis=0)[order]
    outcome = ensemble_outcome(
        predicted=predicted[:, order],
        mean_probabilities=mean,
        given=given[order],
        threshold=threshold,
        score=score if score in RANKING_SCORES else DEFAULT_SCORE,
    )
    if score not in RANKING_SCORES or cleanlab:
        outcome.update(_cleanlab_ranking(mean=mean, given=given[order], outcome=outcome, score=score, **cleanlab))
    outcome = {name: values[np.argsort(order)] for name, values in outcome.items()}  # back in the samples' order
    scores = {}
    if true is not None:
        kept = precision_recall(sizes=selection_set_sizes(selected=outcome["selected"], given=given, true=true))
        listed = error_list_scores(listed=outcome["in_review_list"], given=given, true=true)
        scores = {
            f"{name}_{key}": value
            for name, values in (("kept", kept), ("review", listed))
            for key, value in values.items()
        }
        scores["theorem1"] = empirical_theorem1(
            true=true, given=given, predicted=predicted, threshold=threshold, num_classes=num_classes
        )
    return SelectionResult(
        given=given,
        selected=outcome["selected"],
        in_review_list=outcome["in_review_list"],
        votes=outcome["votes"],
        pseudo_labels=outcome["pseudo"],
        beta=outcome["beta"],
        prob_given=outcome["prob_given"],
        label_quality=outcome["label_quality"],
        rank=stable_ranks(label_quality=outcome["label_quality"], listed=outcome["in_review_list"], digests=digests),
        class_names=names,
        iterations=iterations,
        threshold=threshold,
        **scores,
    )


def checked_list_options(*, score: str, filter_by: str, frac_noise: float, per_class, classes: int) -> dict:
    """The cleanlab options that differ from the review list's defaults (empty: the default list); ValueError, with
    the choices, for an unknown score or filter, a ``frac_noise`` outside (0, 1] or ``per_class`` not Q counts."""
    for name, value, choices in (("score", score, SCORES), ("filter_by", filter_by, FILTERS)):
        if value not in choices:
            raise ValueError(f"{name}={value!r}: choose one of {', '.join(choices)}")
    if not 0 < frac_noise <= 1:
        raise ValueError(f"frac_noise={frac_noise!r}: a share of the estimated errors, in (0, 1]. Fix: pass e.g. 0.5")
    if per_class is not None and (len(per_class) != classes or min(per_class) < 0):
        raise ValueError(
            f"num_to_remove_per_class={list(per_class)}: one count of 0 or more for each of the Q = {classes} "
            "classes, in class order"
        )
    if problem := list_options_conflict(filter_by=filter_by, frac_noise=frac_noise, per_class=per_class):
        raise ValueError(problem)
    options = {"filter_by": filter_by, "frac_noise": frac_noise, "num_to_remove_per_class": per_class}
    return {} if options == {"filter_by": FILTERS[0], "frac_noise": 1.0, "num_to_remove_per_class": None} else options


def _keyword(name: str, value=None) -> str:
    """A list option as Python takes it: ``name`` or ``name='value'``."""
    return name if value is None else f"{name}={value!r}"


def list_options_conflict(
    *, filter_by: str, frac_noise: float, per_class, option: Callable[..., str] = _keyword
) -> str | None:
    """What is wrong with the list options together, in words with the fix, or None: ``per_class`` counts or a
    ``frac_noise`` below 1 with a filter outside :data:`COUNTED_FILTERS` (cleanlab refuses the counts and ignores the
    share), or both together (the counts replace the estimate of the errors that the share scales).
    ``option(name, value=None)`` writes an option as the caller takes it."""
    counts, share = option("num_to_remove_per_class"), option("frac_noise", frac_noise)
    if per_class is not None and frac_noise != 1:
        return (
            f"{share} and {counts} each set how many samples cleanlab flags: the counts replace the estimate of the "
            f"errors that {option('frac_noise')} scales. Fix: drop one of them"
        )
    if filter_by in COUNTED_FILTERS:
        return None
    filters = ", ".join(COUNTED_FILTERS[:-1]) + f" or {COUNTED_FILTERS[-1]}"
    if per_class is not None:
        return (
            f"{counts} goes with {option('filter_by')} {filters}, not with {option('filter_by', filter_by)}, which "
            f"takes no counts. Fix: pass {option('filter_by', 'prune_by_class')} (the counts per given class), or "
            f"drop {counts}"
        )
    if frac_noise != 1:
        return (
            f"{share} goes with {option('filter_by')} {filters}, not with {option('filter_by', filter_by)}, whose "
            f"list cleanlab does not scale. Fix: drop {option('frac_noise')}, or pass one of those filters"
        )
    return None


def _cleanlab_ranking(*, mean: np.ndarray, given: np.ndarray, outcome: dict, score: str, **cleanlab) -> dict:
    """``label_quality`` by cleanlab's ``score`` (the margin kept as is) and the review list counted by cleanlab's
    ``find_label_issues`` with the ``cleanlab`` options on the calibrated ``mean`` (N, Q) probabilities: the first
    not-kept samples of the ranking, as many as it flags among them (as :func:`enkcvs.method.review_list.review_list`,
    which counts with its defaults)."""
    from cleanlab.filter import find_label_issues
    from cleanlab.rank import get_label_quality_scores

    from enkcvs.method.review_list import calibrated_probabilities, review_list

    quality = outcome["label_quality"]
    if score in CLEANLAB_SCORES:
        quality = get_label_quality_scores(labels=given, pred_probs=mean, method=score)
    if not cleanlab:
        return {
            "label_quality": quality,
            "in_review_list": review_list(
                probabilities=mean, given=given, not_kept=~outcome["selected"], score=quality
            ),
        }
    calibrated = calibrated_probabilities(probabilities=mean, given=given)
    with warnings.catch_warnings():  # cleanlab's note on small classes: the command checks class sizes itself
        warnings.filterwarnings("ignore", message="May not flag all label issues in class")
        flagged = find_label_issues(labels=given, pred_probs=calibrated, n_jobs=1, **cleanlab)
    candidates = np.flatnonzero(~outcome["selected"])
    listed = np.zeros(len(given), dtype=bool)
    listed[candidates[np.argsort(quality[candidates], kind="stable")[: int(flagged[candidates].sum())]]] = True
    return {"label_quality": quality, "in_review_list": listed}


def _checked_probabilities(probabilities) -> np.ndarray:
    """The probabilities as one (M, N, Q) float array, or ValueError naming what is wrong and how to fix it."""
    if isinstance(probabilities, list | tuple):
        arrays = [np.asarray(p, dtype=float) for p in probabilities]
        if not arrays or any(a.ndim != 2 for a in arrays):
            raise ValueError(
                f"probabilities as a list must hold M >= 1 arrays of shape (N, Q); got shapes "
                f"{[a.shape for a in arrays]}: pass one (N, Q) array per repetition of the cross-validation"
            )
        for name, axis in (("Q (classes)", 1), ("N (samples)", 0)):
            if len({a.shape[axis] for a in arrays}) > 1:
                raise ValueError(
                    f"the repetitions' probabilities differ in {name}: {[a.shape[axis] for a in arrays]}; every "
                    "repetition must predict the same samples over the same classes, in the same order"
                )
        stack = np.stack(arrays)
    else:
        stack = np.asarray(probabilities, dtype=float)
        if stack.ndim not in (2, 3):
            raise ValueError(
                f"probabilities must be (N, Q) or (M, N, Q); got shape {stack.shape}: pass one row of class "
                "probabilities per sample, stacked over the M repetitions if there are several"
            )
        stack = stack[None] if stack.ndim == 2 else stack
    if stack.shape[2] < 2 or stack.shape[1] == 0:
        raise ValueError(f"probabilities need N >= 1 samples and Q >= 2 classes; got (M, N, Q) = {stack.shape}")
    if not np.isfinite(stack).all():
        raise ValueError(
            f"probabilities hold {int((~np.isfinite(stack)).sum())} NaN or infinite entries (the first in "
            f"{_first_row(~np.isfinite(stack).all(axis=2))}): check the model's outputs and drop or re-predict those "
            "samples"
        )
    if (below := stack < -ENTRY_TOLERANCE).any():
        raise ValueError(
            f"probabilities hold {int(below.sum())} negative entries (minimum {stack.min():.4g}; the first in "
            f"{_first_row(below.any(axis=2))}): these look like logits or log-probabilities; apply softmax (or exp) "
            "first"
        )
    stack = np.clip(stack, 0.0, None)
    sums = stack.sum(axis=2)  # (M, N)
    distance = np.abs(sums - 1.0)
    worst = f"worst sum {sums.flat[distance.argmax()]:.8g}"
    if (beyond := distance > ROW_SUM_TOLERANCE * (1 + 1e-9)).any():  # a row summing to 1.01 is within 0.01
        raise ValueError(
            f"{int(beyond.sum())} probability rows do not sum to 1 within {ROW_SUM_TOLERANCE} ({worst}; the first "
            f"{_first_row(beyond)}): pass class probabilities, e.g. apply softmax to logits"
        )
    if (rescaled := distance > RENORMALISED_ABOVE).any():
        warnings.warn(
            f"{int(rescaled.sum())} probability rows sum to 1 only within {ROW_SUM_TOLERANCE} ({worst}; e.g. stored "
            "as float16): renormalised to sum 1",
            stacklevel=3,
        )
    return stack / sums[..., None]


def _first_row(rows: np.ndarray) -> str:
    """The first True of an (M, N) mask of rows: its row (0-based) and, for M > 1, its repetition (1-based)."""
    m, i = np.argwhere(rows)[0]
    return f"row {i}" + (f" of repetition {m + 1}" if len(rows) > 1 else "") + " (0-based in sample order)"


def checked_class_names(class_names, *, num_classes: int | None, option: str = "class_names"):
    """``class_names`` as a tuple, or None; ValueError, worded in ``option``, unless Q distinct names."""
    if class_names is None:
        return None
    names = tuple(np.asarray(class_names, dtype=object).tolist())
    if num_classes is not None and not len(names) == len(set(names)) == num_classes:
        raise ValueError(
            f"{option} {','.join(map(str, names))}: expected Q = {num_classes} distinct names, one per probability "
            "column, in column order"
        )
    return names


def are_indices(values: np.ndarray) -> bool:
    """Whether labels are class indices: integers, or floats of integer value (readers turn integer columns into
    floats)."""
    return values.dtype.kind in "iu" or (
        values.dtype.kind == "f" and bool(np.isfinite(values).all()) and bool((values == np.round(values)).all())
    )


def encoded_labels(
    labels,
    *,
    what: str,
    num_samples: int,
    num_classes: int,
    class_names: tuple | None,
    infer_names: bool,
    source: str = "class_names",
) -> tuple[np.ndarray, tuple[Hashable, ...] | None]:
    """(N,) class indices of ``labels`` (N,) and the class names: class indices are kept; names are matched to
    ``class_names`` (from ``source``, in words) as text or, without them and with ``infer_names``, numbered in their
    sorted order with a warning. ``what`` names the labels in the errors."""
    values = np.asarray(labels)
    if values.ndim != 1 or len(values) != num_samples:
        raise ValueError(
            f"{what} must have shape (N,) = ({num_samples},) like the probabilities; got shape {values.shape}: "
            "pass one label per probability row, in the same sample order"
        )
    if are_indices(values):  # class indices, named by class_names if any
        codes = values.astype(np.int64)
        if (outside := (codes < 0) | (codes >= num_classes)).any():
            raise ValueError(
                f"{int(outside.sum())} {what} lie outside 0..{num_classes - 1} (Q = {num_classes} probability "
                f"columns), e.g. {codes[outside][:5].tolist()}: labels must index the probability columns"
            )
        return codes, class_names
    if class_names is None:
        if not infer_names:
            raise ValueError(
                f"{what} are not integers but labels are: pass class_names to map both to 0..{num_classes - 1}"
            )
        try:
            class_names = tuple(np.unique(values).tolist())
        except TypeError:
            raise ValueError(f"{what} mix types that cannot be sorted: pass class_names in column order") from None
        if len(class_names) != num_classes:
            fix = "check the label column" if len(class_names) > num_classes else "pass class_names in column order"
            raise ValueError(
                f"{what} have {len(class_names)} distinct values but the probabilities have Q = {num_classes} "
                f"columns: {fix}"
            )
        kind = "strings" if all(isinstance(name, str) for name in class_names) else "not integers"
        mapping = {name: index for index, name in enumerate(class_names)}
        warnings.warn(f"{what} are {kind}; mapped to 0..{num_classes - 1} as {mapping}", stacklevel=3)
    index = {str(name): code for code, name in enumerate(class_names)}
    texts = [str(value) for value in values.tolist()]
    if unknown := sorted({text for text in texts if text not in index}):
        count = sum(text not in index for text in texts)
        raise ValueError(
            f"{what}: {'1 label names' if count == 1 else f'{count} labels name'} no probability column "
            f"({', '.join(unknown[:5])}{', ...' if len(unknown) > 5 else ''}); the classes, from {source}, are "
            f"{', '.join(index)}. Fix: correct those labels, or check {source}"
        )
    return np.array([index[text] for text in texts], dtype=np.int64), class_names


def checked_threshold(threshold: int | None, *, iterations: int, option: str = "threshold") -> int:
    """t: ``threshold``, default 1 for M = 1, else 2; ValueError, worded in ``option``, for a t outside 1..M."""
    if threshold is None:
        return 1 if iterations == 1 else 2
    if not isinstance(threshold, int | np.integer) or not 1 <= threshold <= iterations:
        raise ValueError(
            f"{option} {threshold!r}: a sample gets at most one vote from each of the M = {iterations} repetitions, "
            f"so t lies in 1..{iterations}. Fix: pass {option} between 1 and {iterations}"
        )
    return int(threshold)


def _read_file(path: PathLike, *, what: str) -> pd.DataFrame | np.ndarray:
    """The array of a ``.npy`` file or the table of a ``.parquet`` / ``.csv`` file; errors naming the file and the
    fix where it is missing, empty, unreadable, not UTF-8 or without rows."""
    from enkcvs.data.sources.own import _unreadable

    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a folder, not a {what} file. Fix: point at the file itself")
    if not path.is_file():
        raise FileNotFoundError(f"no {what} file at {path}")
    suffix = path.suffix.lower()
    if suffix not in (".npy", ".parquet", ".csv"):
        raise ValueError(f"{path}: unknown extension {path.suffix!r} for {what}; use .npy, .parquet or .csv")
    if path.stat().st_size == 0:
        raise ValueError(f"the {what} file {path} is empty. Fix: point at the file that holds them")
    try:
        if suffix == ".npy":
            return np.load(path, allow_pickle=False)
        table = pd.read_parquet(path) if suffix == ".parquet" else pd.read_csv(path)
    except UnicodeDecodeError as error:
        raise _unreadable(str(path), error) from None
    except (ValueError, OSError, EOFError) as error:  # pandas' and pyarrow's parser errors are ValueErrors
        raise ValueError(
            f"the {what} file {path} is unreadable ({type(error).__name__}: {error}). Fix: write it again as .npy, "
            ".parquet or .csv"
        ) from error
    if table.empty:
        raise ValueError(f"the {what} file {path} holds no rows. Fix: one row per sample, under a header")
    return table


def load_probabilities(path: PathLike) -> np.ndarray:
    """The (N, Q) or (M, N, Q) probabilities of :func:`load_named_probabilities` whose columns are class indices;
    columns named by class are refused (their names would be lost)."""
    values, names = load_named_probabilities(path)
    if names is not None:
        raise ValueError(
            f"{path}: the probability columns name the classes ({', '.join(names)}); load them with "
            "load_named_probabilities, which returns those names to pass to select as class_names"
        )
    return values


def load_named_probabilities(path: PathLike) -> tuple[np.ndarray, tuple[str, ...] | None]:
    """OOF probabilities (N, Q) or (M, N, Q) from a ``.npy`` array, or a ``.parquet`` / ``.csv`` table with one column
    per class (``prob_<class>``, else every column but ``iteration``, 1..M, and ``sample``; rows sorted by both), and
    the class each column names, in column order (None for a ``.npy`` array or columns ``prob_0`` .. ``prob_{Q-1}``)."""
    frame = _read_file(path, what="probabilities")
    if isinstance(frame, np.ndarray):
        return frame.astype(float), None
    prefixed = [c for c in frame.columns if str(c).startswith("prob_")]
    columns = prefixed or [c for c in frame.columns if c not in ("iteration", "sample")]
    names = [str(c).removeprefix("prob_") if prefixed else str(c) for c in columns]
    if not columns or all(name.isdigit() for name in names):
        order = sorted(range(len(names)), key=lambda i: int(names[i]))
        if not columns or [int(names[i]) for i in order] != list(range(len(names))):
            raise ValueError(
                f"{path}: expected columns prob_0..prob_{{Q-1}} (one per class) or one column per class named "
                f"prob_<class> or <class>; found columns {list(frame.columns)}"
            )
        columns, names = [columns[i] for i in order], None
    frame = frame.sort_values([c for c in ("iteration", "sample") if c in frame.columns], kind="stable")
    try:
        values = frame[columns].to_numpy(dtype=float)  # (M * N, Q)
    except (ValueError, TypeError):
        raise ValueError(
            f"{path}: the class columns {columns} must all hold probabilities; some hold text. Fix: keep only the "
            "probability columns (besides iteration and sample), or name them prob_<class>"
        ) from None
    names = None if names is None else tuple(names)
    if "iteration" not in frame.columns:
        return values, names
    sizes = frame.groupby("iteration").size()
    if sizes.nunique() != 1:
        raise ValueError(f"{path}: iterations hold different numbers of rows {sizes.to_dict()}; each must hold all N")
    if "sample" in frame.columns:
        samples = frame["sample"].to_numpy().reshape(len(sizes), -1)
        if (samples != samples[0]).any():
            raise ValueError(f"{path}: iterations cover different samples; each must predict the same N samples")
    return values.reshape(len(sizes), -1, len(columns)), names


class ColumnError(ValueError):
    """A column asked of a labels file that it does not have: ``columns`` lists the file's, None for a ``.npy``
    array (no columns)."""

    def __init__(self, message: str, *, columns: list | None):
        super().__init__(message)
        self.columns = columns


def load_labels(
    path: PathLike, *, column: str | None = None, what: str = "label", id_column: str | None = None
) -> np.ndarray:
    """(N,) labels from a ``.npy`` array or a ``.csv`` / ``.parquet`` ``column`` (the only one besides ``sample`` where
    None; rows sorted by ``sample`` if present); ``what`` it holds names it in the errors: :class:`ColumnError` for a
    column the file lacks, ValueError naming the line (and ``id_column`` value) of each empty cell but of a text."""
    frame = _read_file(path, what="labels")
    if isinstance(frame, np.ndarray):
        if column is not None:
            raise ColumnError(
                f"{path}: column={column!r} applies to .csv and .parquet tables, not .npy arrays", columns=None
            )
        if frame.ndim == 1 and frame.dtype.kind == "f":
            _refuse_empty_cells(pd.Series(frame), path=Path(path), what=f"{what} array")
        return frame
    candidates = [c for c in frame.columns if c != "sample"]
    if column is None and len(candidates) == 1:
        column = candidates[0]
    if column not in frame.columns:
        raise ColumnError(
            f"{path}: no {what} column {column!r}; the file has columns {list(frame.columns)}: pass column=<one of them>",
            columns=list(frame.columns),
        )
    if what != "text":
        ids = frame[id_column] if id_column in frame.columns and id_column != column else None
        _refuse_empty_cells(frame[column], path=Path(path), what=f"{what} column {column!r}", ids=ids)
    if "sample" in frame.columns:
        frame = frame.sort_values("sample", kind="stable")
    return frame[column].to_numpy()


def _refuse_empty_cells(values: pd.Series, *, path: Path, what: str, ids: pd.Series | None = None) -> None:
    """ValueError naming each empty cell of ``values``: by the line of a ``.csv`` (header = line 1), the 1-based row of
    a ``.parquet``, the 0-based index of a ``.npy``; and its id."""
    empty = (values.isna() | values.map(lambda value: isinstance(value, str) and not value.strip())).to_numpy()
    if not empty.any():
        return
    positions = np.flatnonzero(empty)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        lines = _csv_record_lines(path)
        lines = lines if len(lines) == len(values) else list(range(2, len(values) + 2))
        places, scheme = [f"line {lines[p]}" for p in positions], "lines of the file, the header is line 1"
    else:
        kind, kinds, base = ("row", "rows", 1) if suffix == ".parquet" else ("index", "indices", 0)
        places, scheme = [f"{kind} {p + base}" for p in positions], f"{kinds} {base}-based"
    if ids is not None:
        places = [f"{place} ({ids.name} {ids.iloc[p]!r})" for place, p in zip(places, positions)]
    shown = ", ".join(places[:5]) + (f" and {len(places) - 5} more" if len(places) > 5 else "")
    raise ValueError(
        f"{path}: {len(places)} empty {'cell' if len(places) == 1 else 'cells'} in the {what}: {shown}; {scheme}. "
        "Fix: give every sample its value, or drop the sample from both files"
    )


def _csv_record_lines(path: Path) -> list[int]:
    """The line (1-based) each data record of a CSV file starts on; a quoted cell may span lines."""
    starts, line = [], 0
    with path.open(newline="", encoding="utf-8", errors="replace") as handle:
        reader = csv.reader(handle)
        for record in reader:
            if record:
                starts.append(line + 1)
            line = reader.line_num
    return starts[1:]
