"""The label-issue table: every sample with its E-NKCVS outcome in the data's order, in cleanlab's terms, named as its
file names it and ranked (built by :meth:`enkcvs.labelissues.oof.SelectionResult.to_frame` on every route); and the
workflow's files of it. Two sets, each for its use: ``kept``, the paper's selection (Eq. contains), a clean set to
train on; ``is_label_issue``, the review list, the likely label errors for a person to check
(:mod:`enkcvs.method.review_list`).
"""

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from enkcvs.data.datasets import Dataset
from enkcvs.io import PathLike, atomic_path, write_table

#: The column that numbers the rows where nothing else names them: 1 is the file's first row after its header.
ROW_COLUMN = "row"
#: The column of an image's path, which names its row where the file has no id column.
PATH_COLUMN = "path"


def row_names(
    *, count: int, ids: np.ndarray | None = None, id_column: str | None = None, paths: np.ndarray | None = None
) -> tuple[str, np.ndarray]:
    """The column that names each of ``count`` rows and its values (count,): ``ids`` under ``id_column``; else the
    images' ``paths`` under :data:`PATH_COLUMN`; else the row's number in the file under :data:`ROW_COLUMN`, 1 the
    first after the header."""
    if ids is not None:
        return id_column, np.asarray(ids)
    if paths is not None:
        return PATH_COLUMN, np.asarray(paths)
    return ROW_COLUMN, np.arange(1, count + 1)


def dataset_row_names(dataset: Dataset) -> dict[str, Any]:
    """What names ``dataset``'s training samples, as :func:`row_names` (and ``to_frame``) take it: its ids, or the
    paths of its image files."""
    return {
        "ids": dataset.sample_ids,
        "id_column": dataset.id_column or None,
        "paths": dataset.x_train if dataset.modality == "image_files" else None,
    }


def label_issue_table(
    *,
    given: np.ndarray,
    predicted: np.ndarray,
    label_score: np.ndarray,
    is_label_issue: np.ndarray,
    votes: np.ndarray,
    kept: np.ndarray,
    rank: np.ndarray,
    names: tuple[str, np.ndarray],
    class_names: Sequence[Hashable] | None = None,
) -> pd.DataFrame:
    """Every sample with its E-NKCVS outcome, one column a fact, in the data's order (row i is sample i, so
    ``data[issues.is_label_issue]`` selects the listed rows as with cleanlab): first the row's name (``names``: the
    column and its values, :func:`row_names`); then cleanlab's columns as Datalab's ``get_issues("label")`` names
    them, ``is_label_issue`` (the review list: the likely label errors to check), ``label_score`` (in [0, 1], higher
    = cleaner), ``given_label`` and ``predicted_label`` (the one label suggested instead); then ``rank`` (1 = most
    likely mislabelled) and the method's own, ``votes`` (the iterations that predicted the given label) and
    ``kept`` (selected in at least t of them: the set to train on). Labels are class names where ``class_names`` are
    given, else indices. All arrays (N,)."""
    lookup = np.array(class_names, dtype=object) if class_names else None

    def labels(codes: np.ndarray) -> np.ndarray:
        return codes if lookup is None else lookup[codes]

    column, values = names
    return pd.DataFrame(
        {
            column: values,
            "is_label_issue": np.asarray(is_label_issue, dtype=bool),
            "label_score": label_score,
            "given_label": labels(given),
            "predicted_label": labels(predicted),
            "rank": rank,
            "votes": votes,
            "kept": np.asarray(kept, dtype=bool),
        }
    )


def in_rank_order(issues: pd.DataFrame) -> pd.DataFrame:
    """A label-issue table sorted by ``rank``: the most likely mislabelled first."""
    return issues.sort_values("rank", kind="stable")


def two_sets_sentence(issues: pd.DataFrame) -> str:
    """Both sets of a label-issue table in one sentence: the review list's length and the kept set's, each with what
    it is for."""
    total, listed, kept = len(issues), int(issues["is_label_issue"].sum()), int(issues["kept"].sum())
    return (
        "Review list (likely label errors to check: the first not kept of the ranking, as many as confident learning "
        f"finds among them on the calibrated probabilities): {listed} of {total} samples ({100 * listed / total:.1f}%). "
        f"Kept (the paper's selection, to train on): {kept} ({100 * kept / total:.1f}%); the other {total - kept} were selected too few times."
    )


def write_issue_files(
    *, issues: pd.DataFrame, rule: str, metadata: dict[str, Any], top: int, table: PathLike, summary: PathLike
) -> None:
    """Write the label-issue table ``issues`` (:func:`label_issue_table`) to ``table`` (parquet, with its provenance
    ``metadata``) and a Markdown ``summary``: ``rule``, the selection rule in words, then the ``top`` rows by rank."""
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
