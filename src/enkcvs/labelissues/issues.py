"""The label-issue table: every sample with its E-NKCVS outcome in the data's order, in cleanlab's terms and its
``rank`` to sort by; and its files (the table beside the user's ids, texts or image paths, and a Markdown summary of
the most likely mislabelled).

Two sets, each for its use: ``kept`` is the paper's selection (Eq. contains), a clean set to train on, which leaves out
every sample the iterations doubt; ``in_review_list`` is the short, precision-first list of likely label errors for a
person to check (:mod:`enkcvs.method.review_list`).

Built from :func:`enkcvs.method.selection.ensemble_outcome` by :meth:`enkcvs.labelissues.oof.SelectionResult.to_frame`
(the user's own out-of-fold probabilities) and by the workflow's label-issue steps
(:mod:`enkcvs.pipeline.steps.issues`).
"""

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from enkcvs.data.datasets import Dataset
from enkcvs.io import PathLike, atomic_path, write_table
from enkcvs.labelissues.determinism import row_digests, stable_ranks

#: The per-sample outcome columns (of :func:`enkcvs.method.selection.ensemble_outcome`) a label-issue table is built
#: from.
ISSUE_OUTCOME = ("pseudo", "predicted", "votes", "beta", "prob_given", "label_quality", "selected", "in_review_list")


def label_issue_table(
    *,
    given: np.ndarray,
    pseudo: np.ndarray,
    predicted: np.ndarray,
    votes: np.ndarray,
    iterations: int,
    beta: np.ndarray,
    prob_given: np.ndarray,
    label_quality: np.ndarray,
    selected: np.ndarray,
    in_review_list: np.ndarray,
    rank: np.ndarray,
    class_names: Sequence[Hashable] | None = None,
    ids: np.ndarray | None = None,
    id_column: str | None = None,
) -> pd.DataFrame:
    """Every sample with its E-NKCVS outcome, in the data's order (row i is sample i, so ``data[issues.is_label_issue]``
    selects the flagged rows as with cleanlab), with its ``rank`` (1 = most likely mislabelled, ties not by position:
    :func:`enkcvs.labelissues.determinism.stable_ranks`) to sort by: ``sample``, the user's ``ids`` as column
    ``id_column`` (where given), first cleanlab's columns as Datalab's ``get_issues("label")`` names them,
    ``is_label_issue`` (the review list, the likely label errors to check), ``label_score`` (in [0, 1], higher =
    cleaner), ``given_label`` and ``predicted_label`` (the most probable class of the mean probabilities); then the
    project's own: ``suggested_label`` (the pseudo label, the majority of the M predictions), ``in_review_list`` (=
    ``is_label_issue``), ``kept`` (selected: votes >= t, the training set), ``label_quality`` (= ``label_score``),
    ``votes``, ``iterations``, ``beta``, ``prob_given``, ``rank``. Labels are class names where ``class_names`` are
    given, else indices. All arrays (N,)."""
    names = np.array(class_names, dtype=object) if class_names else None

    def named(labels: np.ndarray) -> np.ndarray:
        return labels if names is None else names[labels]

    listed = np.asarray(in_review_list, dtype=bool)
    return pd.DataFrame(
        {
            "sample": np.arange(len(given)),
            **({} if ids is None else {id_column: ids}),
            "is_label_issue": listed,
            "label_score": label_quality,
            "given_label": named(given),
            "predicted_label": named(predicted),
            "suggested_label": named(pseudo),
            "in_review_list": listed,
            "kept": np.asarray(selected, dtype=bool),
            "label_quality": label_quality,
            "votes": votes,
            "iterations": iterations,
            "beta": beta,
            "prob_given": prob_given,
            "rank": rank,
        }
    )


def in_rank_order(issues: pd.DataFrame) -> pd.DataFrame:
    """A label-issue table sorted by ``rank``: the most likely mislabelled first."""
    return issues.sort_values("rank", kind="stable")


def two_sets_sentence(issues: pd.DataFrame) -> str:
    """Both sets of a label-issue table in one sentence: the review list's length and the kept set's, each with what
    it is for."""
    total, listed, kept = len(issues), int(issues["in_review_list"].sum()), int(issues["kept"].sum())
    return (
        "Review list (likely label errors to check: the first not kept of the ranking, as many as confident learning "
        f"finds among them on the calibrated probabilities): {listed} of {total} samples ({100 * listed / total:.1f}%). "
        f"Kept (the paper's selection, to train on): {kept} ({100 * kept / total:.1f}%); the other {total - kept} were selected too few times."
    )


def write_issue_files(
    *,
    dataset: Dataset,
    given: np.ndarray,
    outcome: dict[str, np.ndarray],
    iterations: int,
    rule: str,
    metadata: dict[str, Any],
    top: int,
    table: PathLike,
    summary: PathLike,
) -> None:
    """Write the ranked label-issue table of ``dataset``'s training samples and its Markdown summary.

    Parameters
    ----------
    dataset : the prepared dataset: class names, and the user's ids, texts or image paths put beside each sample.
    given : (N,) the given labels.
    outcome : the (N,) arrays :data:`ISSUE_OUTCOME` names, as :func:`enkcvs.method.selection.ensemble_outcome` returns
    them.
    iterations : the number of iterations that voted.
    rule : the selection rule in words, opening the summary.
    metadata : the table's provenance; its ``dataset`` titles the summary.
    top : the number of most likely mislabelled rows the summary shows.
    table, summary : the parquet and Markdown files written.
    """
    outcomes = [outcome[column] for column in ISSUE_OUTCOME]
    # ties by each sample's content and outcome, not its position: the same rows in any order rank alike
    digests = row_digests(given, dataset.sample_ids, dataset.x_train, *outcomes)
    rank = stable_ranks(label_quality=outcome["label_quality"], listed=outcome["in_review_list"], digests=digests)
    issues = label_issue_table(
        given=given,
        iterations=iterations,
        rank=rank,
        class_names=dataset.class_names,
        ids=dataset.sample_ids,
        id_column=dataset.id_column,
        **dict(zip(ISSUE_OUTCOME, outcomes)),
    )
    issues = with_sample_column(issues, dataset=dataset)
    write_table(issues, table, metadata=metadata)
    lines = [
        f"# Label issues: {metadata['dataset']}",
        "",
        f"{rule}. {two_sets_sentence(issues)} The full ranking is `label_issues.parquet`, in the data's order "
        "(rank 1 = most likely mislabeled).",
        "",
        in_rank_order(issues).head(top).to_markdown(index=False, floatfmt=".3f"),
        "",
    ]
    with atomic_path(summary) as tmp:
        tmp.write_text("\n".join(lines))


def with_sample_column(issues: pd.DataFrame, *, dataset: Dataset) -> pd.DataFrame:
    """``issues`` (one row per sample) with each sample's text (column ``text``) or image path (``path``) after its row
    and id, for a dataset of texts or image files; unchanged otherwise."""
    if dataset.modality in ("text", "image_files"):
        position = 1 if dataset.sample_ids is None else 2
        issues.insert(position, "text" if dataset.modality == "text" else "path", dataset.x_train[issues["sample"]])
    return issues
