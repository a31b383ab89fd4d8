"""The one path from a read :class:`enkcvs.labelissues.source.Source` to the label-issue table: the fold models'
out-of-fold probabilities where none were given (:func:`fold_probabilities`), the selection and ranking
(:func:`enkcvs.labelissues.oof.select`), and, for the command, the files (:func:`write_issues`); ``enkcvs.find_issues``
(:func:`find_issues`) takes the same path with a classifier of the user's on arrays in memory.

    from sklearn.linear_model import LogisticRegression
    import enkcvs
    issues = enkcvs.find_issues(features=X, labels=y, classifier=LogisticRegression(max_iter=1000))
"""

import warnings
from collections.abc import Hashable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from enkcvs.io import atomic_path, provenance, save_figure, write_json
from enkcvs.labelissues import determinism
from enkcvs.labelissues.issues import in_rank_order
from enkcvs.labelissues.oof import (
    DEFAULT_FOLDS,
    DEFAULT_REPETITIONS,
    DEFAULT_SCORE,
    DEFAULT_SEED,
    FILTERS,
    SelectionResult,
    checked_list_options,
    checked_threshold,
    select,
)
from enkcvs.labelissues.request import Request
from enkcvs.labelissues.review import DEFAULT_TOP
from enkcvs.labelissues.source import Source, in_memory


def find_issues(
    *,
    features,
    labels: Sequence[Hashable] | np.ndarray,
    classifier,
    folds: int = DEFAULT_FOLDS,
    repetitions: int = DEFAULT_REPETITIONS,
    seed: int = DEFAULT_SEED,
    threshold: int | None = None,
    class_names: Sequence[Hashable] | None = None,
    score: str = DEFAULT_SCORE,
    filter_by: str = FILTERS[0],
    frac_noise: float = 1.0,
    num_to_remove_per_class: Sequence[int] | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Train ``classifier`` as the M x K fold models, select and rank the samples, and return the label-issue table
    as the command writes it: one row per sample in the data's order, numbered from 1 (``row``).

    Parameters
    ----------
    features : (N, ...) an array or a pandas frame as ``classifier.fit`` takes it (preprocess inside a pipeline).
    labels : (N,) class indices, or class names numbered in the order of ``class_names`` (Q,), else sorted.
    classifier : an unfitted estimator with ``fit(X, y)`` and ``predict_proba(X)``; cloned for every fold model.
    folds, repetitions, seed, threshold : K, M, the seed (of the folds and of the classifier's ``random_state``), t.
    score, filter_by, frac_noise, num_to_remove_per_class : as :func:`enkcvs.labelissues.oof.select` takes them.
    progress : the progress over the fold models on stderr.

    Returns
    -------
    pandas.DataFrame, N rows.
    """
    if not 2 <= folds <= len(labels):
        raise ValueError(f"folds={folds}: K must lie in 2..N = {len(labels)}")
    source = in_memory(features=features, labels=labels, classifier=classifier, class_names=class_names)
    checked_list_options(  # before any fold model trains
        score=score,
        filter_by=filter_by,
        frac_noise=frac_noise,
        per_class=num_to_remove_per_class,
        classes=len(source.class_names) if source.class_names else int(source.labels.max()) + 1,
    )
    request = Request(
        folds=folds,
        repetitions=repetitions,
        seed=seed,
        threshold=threshold,
        score=score,
        filter_by=filter_by,
        frac_noise=frac_noise,
        num_to_remove_per_class=num_to_remove_per_class,
    )
    stack = fold_probabilities(source, request=request, progress=progress, processes=1)
    return _selected(source, stack=stack, request=request).to_frame(**source.row_names)


def write_issues(request: Request) -> str:
    """Rank the samples of a request's ``--data`` (trained on here) or ``--probabilities`` and write the label-issue
    table to ``--out``, the review sheet beside it (:func:`review_paths`) and, from data, what produced it
    (:func:`provenance_path`); every check runs before training, every file is written after it. Returns the summary
    line; ValueError / OSError in the command's words."""
    from enkcvs.labelissues.owndata import read_data
    from enkcvs.labelissues.parallel import fold_processes
    from enkcvs.labelissues.source import read_probabilities

    request = request.checked()
    source = read_data(request) if request.data is not None else read_probabilities(request)
    settings = request.settings
    processes = 1
    if source.probabilities is None:
        one_by_one = source.classifier is None and not source.in_memory  # images from scratch, fine-tuned texts
        models = settings["folds"] * settings["repetitions"]
        processes = fold_processes(models=models, one_by_one=one_by_one, jobs=request.jobs)
        stack = fold_probabilities(source, request=request, processes=processes, progress=True)
    else:
        stack = source.probabilities
        if stack.ndim in (2, 3):  # select names any other shape
            checked_threshold(request.threshold, iterations=len(stack) if stack.ndim == 3 else 1, option="--threshold")
    result = _selected(source, stack=stack, request=request)
    frame = result.to_frame(**source.row_names)
    if (not_kept := int((~frame["kept"]).sum())) > len(frame) / 2:
        warnings.warn(
            f"{not_kept} of {len(frame)} samples ({100 * not_kept / len(frame):.0f}%) are not kept (selected in fewer "
            f"than t iterations){source.cause}",
            stacklevel=2,
        )
    caption = f"E-NKCVS ranking of {source.path.name}: "
    if source.probabilities is None:
        caption += f"K = {settings['folds']}, M = {result.iterations} iterations, a sample kept when selected in at "
        caption += f"least t = {result.threshold}; {source.model}, seed {settings['seed']}"
    else:
        caption += f"M = {result.iterations} iterations, a sample kept when selected in at least t = {result.threshold}"
    top = request.review_top or DEFAULT_TOP
    sheet = None if source.sheet is None else source.sheet(issues=frame, caption=caption, top=top)  # before writing
    summary = _write(frame, result=result, sheet=sheet, out=request.out, by_rank=request.by_rank)
    if source.probabilities is not None:
        return summary
    record = provenance(
        command="enkcvs find-issues",
        seed=settings["seed"],
        K=settings["folds"],
        M=settings["repetitions"],
        t=result.threshold,
        **request.list_options,
        **source.provenance,
        computed_with=determinism.computed_with(processes=processes),
    )
    write_json(record, provenance_path(request.out))
    epochs = "" if source.classifier is not None else f", {source.recipe.epochs} epochs"
    return (
        f"{settings['repetitions']} x {settings['folds']} fold models trained ({source.model}{epochs}, seed "
        f"{settings['seed']}); {summary}; how it was made in {provenance_path(request.out)}"
    )


def _selected(source: Source, *, stack: np.ndarray, request: Request) -> SelectionResult:
    """:func:`enkcvs.labelissues.oof.select` on ``stack`` (M, N, Q) and the source's labels with the request's t and
    list options."""
    return select(
        probabilities=stack,
        labels=source.labels,
        threshold=request.threshold,
        class_names=source.class_names,
        sample_keys=source.keys,
        **request.list_options,
    )


def fold_probabilities(source: Source, *, request: Request, processes: int, progress: bool) -> np.ndarray:
    """The (M, N, Q) out-of-fold probabilities of the source's samples from the request's K, M and seed, as the
    workflow seeds them: the user's classifier as :func:`enkcvs.training.crossval.classifier_probabilities` trains
    it; the recipe's fold models on features in memory stacked, all M x K together (z-scored inside each fold unless
    ``--no-standardize``), the others one by one or in ``processes`` side by side
    (:mod:`enkcvs.labelissues.parallel`); finished fold models cached unless ``--no-cache``. With the source's
    ``keys``, the samples train sorted by them, each fold model on one thread: the same rows in any order, on any
    threads or ``processes``, give the same probabilities, bitwise (:mod:`enkcvs.labelissues.determinism`)."""
    from enkcvs.labelissues.parallel import parallel_fold_probabilities
    from enkcvs.training.crossval import classifier_probabilities, out_of_fold_probabilities
    from enkcvs.training.device import Execution, default_device
    from enkcvs.training.foldcache import FoldCache, cache_key

    settings = request.settings
    order = np.arange(len(source.labels)) if source.keys is None else determinism.canonical_order(source.keys)
    inputs = source.inputs if source.keys is None else determinism.in_order(source.inputs, order)
    labels = source.labels[order]
    standardize = source.standardize and source.in_memory
    common = {
        "num_folds": settings["folds"],
        "iterations": settings["repetitions"],
        "seed": settings["seed"],
        "num_classes": len(source.class_names) if source.class_names else int(source.labels.max()) + 1,
    }
    cache = None
    if source.data is not None and not request.no_cache:
        key = {"K": common["num_folds"], "M": common["iterations"], "seed": common["seed"]}
        key |= {"standardize": standardize, "kind": source.kind, "training": "rows in canonical order, one thread"}
        key |= (
            {"recipe": source.recipe.to_dict()}
            if source.classifier is None
            else {"classifier": repr(source.classifier)}
        )
        cache = FoldCache.for_key(cache_key(inputs=_cache_inputs(inputs), labels=labels, settings=key))
    with determinism.one_thread():
        if source.classifier is not None:
            features = inputs.reshape(len(inputs), -1) if source.data is not None and source.in_memory else inputs
            try:
                stack = classifier_probabilities(
                    classifier=source.classifier,
                    features=features,
                    labels=labels,
                    standardize=standardize,
                    progress=progress,
                    cache=cache,
                    **common,
                )
            except (AttributeError, TypeError, ValueError) as error:  # a classifier of texts handed embeddings, or back
                if source.kind != "texts" or request.classifier is None:
                    raise
                raw = source.text_recipe == "raw"
                handed, other = ("texts as they are", "frozen") if raw else ("texts' embeddings", "raw")
                raise ValueError(
                    f"--classifier {request.classifier} failed on the {handed} ({type(error).__name__}: {error}). Fix: "
                    f"pass --text-recipe {other} to hand it {'their embeddings' if raw else 'the texts as they are'}"
                ) from None
        elif processes > 1:
            stack = parallel_fold_probabilities(
                x=inputs, labels=labels, recipe=source.recipe, processes=processes, cache=cache, **common
            )
        else:
            stack = out_of_fold_probabilities(
                x=inputs,
                labels=labels,
                recipe=source.recipe,
                execution=Execution(device=default_device(), loader_workers=0),
                progress=progress,
                standardize=standardize,
                stacked=source.in_memory,
                cache=cache,
                **common,
            )
    return stack[:, np.argsort(order)]  # back in the data's order


def _cache_inputs(inputs):
    """The fold models' ``inputs`` as the cache keys them: the array or frame, or the image files' paths, sizes and
    times."""
    if isinstance(inputs, np.ndarray | pd.DataFrame):
        return inputs
    root = Path(inputs.image_root or ".")
    return [f"{path}:{(stat := (root / str(path)).stat()).st_size}:{stat.st_mtime_ns}" for path in inputs.x_train]


def review_paths(out: Path) -> dict[str, Path]:
    """The review sheet's files beside the table ``out``: ``issues.csv`` -> ``issues.review.png``, ``.pdf`` (images)
    and ``issues.review.md`` (texts and tables)."""
    return {suffix: out.with_name(f"{out.stem}.review.{suffix}") for suffix in ("png", "pdf", "md")}


def provenance_path(out: Path) -> Path:
    """Where what produced the ranking ``out`` is recorded: ``issues.csv`` -> ``issues.provenance.json``."""
    return out.with_name(f"{out.stem}.provenance.json")


def _write(frame: pd.DataFrame, *, result: SelectionResult, sheet, out: Path, by_rank: bool) -> str:
    """Write the label-issue ``frame`` to ``out`` in its format (sorted by rank with ``by_rank``) and ``sheet`` (a
    figure, Markdown text, or None) beside it; returns the summary line of both sets and where they were written."""
    with atomic_path(out) as tmp:
        table = in_rank_order(frame) if by_rank else frame
        table.to_csv(tmp, index=False) if out.suffix.lower() == ".csv" else table.to_parquet(tmp, index=False)
    written = ""
    if isinstance(sheet, str):
        from enkcvs.labelissues.review import write_markdown

        write_markdown(sheet, path=review_paths(out)["md"])
        written = f"; review sheet {review_paths(out)['md']}"
    elif sheet is not None:
        import matplotlib.pyplot as plt

        save_figure(sheet, png=review_paths(out)["png"], pdf=review_paths(out)["pdf"], dpi=150)
        plt.close(sheet)
        written = f"; review sheet {review_paths(out)['png']} and {review_paths(out)['pdf']}"
    listed, kept = int(frame["is_label_issue"].sum()), int(frame["kept"].sum())
    order = "most likely mislabelled first" if by_rank else "in the data's order"
    return (
        f"{listed} of {len(frame)} samples in the review list (likely label errors: the first not kept of the "
        f"ranking, as many as confident learning finds among them); {kept} kept for training (selected in at least "
        f"t = {result.threshold} of M = {result.iterations} iterations); every sample ranked in {out} "
        f"({order}){written}"
    )
