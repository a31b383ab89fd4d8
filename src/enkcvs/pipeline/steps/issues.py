"""The label-issue rules' steps (``workflow/rules/issues.smk``): rankings of the samples most likely mislabelled, per
seed and merged over the seeds (one step for both), cleanlab's beside the merged one, and E-NKCVS on a user's own
out-of-fold probabilities."""

from typing import Any

import numpy as np

from enkcvs.data.datasets import load_dataset
from enkcvs.io import PathLike, atomic_path, provenance, read_table_metadata, write_json, write_table
from enkcvs.labelissues.determinism import dataset_digests
from enkcvs.labelissues.issues import dataset_row_names, write_issue_files
from enkcvs.labelissues.oof import load_labels, load_probabilities, select
from enkcvs.pipeline.predictions import read_iterations, stack_iterations


def write_label_issues(
    *,
    dataset: PathLike,
    predictions: list[PathLike],
    labels: list[PathLike],
    threshold: int,
    top: int,
    table: PathLike,
    summary: PathLike,
    provenance_fields: dict[str, Any],
) -> None:
    """One ranking of the samples, most to least likely mislabelled, from one seed or merged over several: the S
    seeds' M iterations taken as one ensemble of S x M iterations (votes, pseudo labels and the review list from all
    of them, Section 3.2), a sample kept when selected in at least t x S of them (t per seed on average); written as
    the label-issue table in the data's order (:meth:`enkcvs.labelissues.oof.SelectionResult.to_frame`, each row
    named by the user's id or image path, else its number) and a Markdown summary with the top ``top`` rows. Several
    seeds only where they share the given labels (``real`` noise, or one seed): synthetic noise draws other labels per
    seed, which no merged ranking can describe (ValueError).

    :func:`enkcvs.labelissues.oof.select` ranks, as ``enkcvs find-issues`` does: the samples sorted by a digest of
    each one's content (:func:`enkcvs.labelissues.determinism.dataset_digests`), so that a shuffled copy of a file
    ranks its rows alike, ties and the review list's end included.

    Parameters
    ----------
    dataset : the prepared dataset (class names, ids, image paths, the content of each sample).
    predictions : the S x M x K held-out prediction tables; each names its seed, iteration and fold in its metadata.
    labels : the S noisy-label tables, one per seed.
    threshold : t, the votes per seed.
    top : the rows the summary shows.
    table, summary : the parquet and Markdown files written.
    provenance_fields : the wildcards (dataset, noise and, for one seed's ranking, seed).
    """
    given, seeds, _, probabilities = read_merged_iterations(predictions, labels=labels)
    data = load_dataset(dataset)
    result = select(
        probabilities=probabilities,
        labels=given,
        threshold=threshold * len(seeds),
        class_names=data.class_names,
        sample_keys=dataset_digests(data),
    )
    fields = {
        **provenance_fields,
        "seeds": seeds,
        "K": read_table_metadata(predictions[0])["K"],
        "M": result.iterations // len(seeds),
    }
    rule = f"E-NKCVS with K = {fields['K']}, M = {fields['M']}, t = {threshold} (noise setting {fields['noise']}"
    if len(seeds) == 1:
        rule += f", seed {seeds[0]})"
    else:
        rule += (
            f") over seeds {', '.join(map(str, seeds))}: {result.iterations} iterations in all, a sample kept when "
            f"selected in at least {result.threshold} of them"
        )
    write_issue_files(
        issues=result.to_frame(**dataset_row_names(data)),
        rule=rule,
        metadata=provenance(**fields, threshold=threshold),
        top=top,
        table=table,
        summary=summary,
    )


def read_merged_iterations(
    predictions: list[PathLike], *, labels: list[PathLike]
) -> tuple[np.ndarray, list[int], np.ndarray, np.ndarray]:
    """Every seed's iterations of one dataset and noise setting as one ensemble: the given labels (N,), the seeds,
    and the S x M iterations' held-out predicted labels (S x M, N) and probabilities (S x M, N, Q), seed by seed.
    ``predictions``: the S x M x K held-out prediction tables, each naming its seed in its metadata; ``labels``: the
    S noisy-label tables. ValueError where the seeds' tables do not match or their given labels differ (synthetic
    noise draws other labels per seed, which no merged ensemble can describe)."""
    by_seed: dict[int, list[PathLike]] = {}
    for path in predictions:
        by_seed.setdefault(int(read_table_metadata(path)["seed"]), []).append(path)
    label_files = {int(read_table_metadata(path)["seed"]): path for path in labels}
    if sorted(by_seed) != sorted(label_files):
        raise ValueError(f"predictions of seeds {sorted(by_seed)} but label tables of seeds {sorted(label_files)}")
    given, iterations = None, []
    for seed in sorted(by_seed):
        label_table, num_classes, seed_iterations = read_iterations(by_seed[seed], labels=label_files[seed])
        if given is not None and not np.array_equal(given, label_table["given"].to_numpy()):
            raise ValueError(
                f"{label_files[seed]}: the given labels differ from seed {min(by_seed)}'s, so the seeds' rankings "
                "describe different noisy datasets and cannot be merged; read each seed's label_issues.parquet"
            )
        given = label_table["given"].to_numpy()
        iterations += seed_iterations
    return given, sorted(by_seed), *stack_iterations(iterations, num_classes=num_classes)


def compare_real_label_issues(
    *,
    predictions: list[PathLike],
    labels: list[PathLike],
    threshold: int,
    markdown: PathLike,
    csv: PathLike,
    provenance_fields: dict[str, Any],
) -> None:
    """E-NKCVS's merged ranking of labels whose errors are unknown beside cleanlab's on the same out-of-fold
    probabilities (:func:`enkcvs.labelissues.confident.agreement_on_real_labels`; t per seed, as the merged ranking), as
    a Markdown table under a line saying what was compared, and as CSV."""
    from enkcvs.labelissues.confident import CLEANLAB_DEFAULT_FILTER, agreement_on_real_labels

    given, seeds, _, probabilities = read_merged_iterations(predictions, labels=labels)
    frame = agreement_on_real_labels(probabilities=probabilities, given=given, threshold=threshold * len(seeds))
    heading = (
        f"E-NKCVS ({len(probabilities)} iterations of seed{'s' if len(seeds) > 1 else ''} "
        f"{', '.join(map(str, seeds))}, kept when selected in at least {threshold * len(seeds)}) and cleanlab's "
        f"find_label_issues (filter_by={CLEANLAB_DEFAULT_FILTER}, ranked by self-confidence) on the same mean "
        f"out-of-fold probabilities of {len(given):,} samples "
        f"({provenance_fields['dataset']}, noise {provenance_fields['noise']}): samples flagged, and the k most "
        "likely mislabelled of each ranking; `both`: in both sets."
    )
    with atomic_path(markdown) as tmp:
        tmp.write_text(f"{heading}\n\n{frame.to_markdown(index=False)}\n")
    with atomic_path(csv) as tmp:
        frame.to_csv(tmp, index=False)


def select_out_of_fold(
    *,
    probabilities: PathLike,
    labels: PathLike,
    true_labels: PathLike | None,
    settings: dict[str, Any],
    table: PathLike,
    metrics: PathLike,
    provenance_fields: dict[str, Any],
) -> None:
    """E-NKCVS on the user's own out-of-fold probabilities (no training): the ranked label-issue table, both sets'
    sizes and, with true labels, the kept set's precision and recall (Eq. prec-rec), the review list's (as cleanlab
    scores its flags) and the corrected Theorem 1's prediction; ``provenance_fields`` (wildcards, code) go into
    both's provenance."""
    id_column = settings.get("id_column")
    ids = None if id_column is None else load_labels(labels, column=id_column)
    result = select(
        probabilities=load_probabilities(probabilities),
        labels=load_labels(labels, column=settings.get("label_column")),
        threshold=settings["threshold"],
        true_labels=None if true_labels is None else load_labels(true_labels, column=settings.get("true_label_column")),
        sample_keys=ids,  # ties by the samples' ids too, as the command ranks them
    )
    meta = provenance(
        **provenance_fields,
        probabilities=str(probabilities),
        labels=str(labels),
        true_labels=str(true_labels),
        **settings,
    )
    write_table(result.to_frame(ids=ids, id_column=id_column), table, metadata=meta)
    scores = {
        key: getattr(result, key)
        for key in ("kept_precision", "kept_recall", "review_precision", "review_recall", "theorem1")
    }
    sizes = {"kept": int(result.selected.sum()), "in_review_list": int(result.in_review_list.sum())}
    write_json({**meta, "iterations": result.iterations, **sizes, **scores}, metrics)
