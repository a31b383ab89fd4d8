"""One function per workflow step: read the step's inputs, call the method, write self-describing outputs.

The thin scripts under ``workflow/scripts`` call exactly one of these. Steps that train import torch themselves, so
the selection and report steps start fast.
"""

import json
import logging
from typing import Any

import numpy as np
import pandas as pd

from enkcvs.datasets import load_dataset, save_dataset
from enkcvs.inputs import split_inputs, subset_inputs
from enkcvs.io import PathLike, atomic_path, provenance, read_table, read_table_metadata, write_json, write_table
from enkcvs.issues import ISSUE_OUTCOME, write_issue_files
from enkcvs.metrics import (
    accuracy,
    precision_by_given_class,
    precision_recall,
    pseudo_label_accuracy,
    selection_set_sizes,
)
from enkcvs.noise import (
    ASYMMETRIC_MAPS,
    SUPERCLASS_MAPS,
    inject_noise,
    parse_noise,
    superclass_asymmetric_map,
)
from enkcvs.oof import load_labels, load_probabilities, select
from enkcvs.predictions import read_iterations, read_label_table, stack_iterations
from enkcvs.recipe import Recipe
from enkcvs.rng import Purpose, derive_seed
from enkcvs.selection import ensemble_outcome
from enkcvs.sources import get_source, load_source
from enkcvs.theory import corollary_precision_recall, empirical_theorem1, iteration_dependence

log = logging.getLogger(__name__)


def check_layout(*, source: str, options: dict[str, Any], output: PathLike) -> None:
    """Verify a user-supplied dataset's folder layout (Clothing-1M, WebVision) before anything trains on it.

    Raises ``FileNotFoundError`` listing everything missing (the source's own error); on success writes a JSON record.
    """
    get_source(source).check_layout(**options)
    write_json(provenance(source=source, options=options), output)


def prepare_dataset(*, source: str, options: dict[str, Any], output: PathLike) -> None:
    """Load a dataset source (downloading it where allowed) and store it as the project's ``.npz``."""
    save_dataset(load_source(source, **options), output, metadata=provenance(source=source, options=options))


def tokenize_dataset(*, dataset: PathLike, checkpoint: str, max_length: int, output: PathLike) -> None:
    """Tokenise a text dataset once per (dataset, checkpoint): ``.npz`` with ``train`` (N, 2, L) and ``test``
    (N_test, 2, L) int64 arrays (token ids and attention mask), reused by every fold and final job."""
    from enkcvs.text import tokenize

    data = load_dataset(dataset)
    if data.modality != "text":
        raise ValueError(f"{dataset} holds {data.modality} data; only text datasets are tokenised")
    arrays = {"train": tokenize(list(data.x_train), checkpoint=checkpoint, max_length=max_length)}
    arrays["test"] = (  # a user's own data has no test split
        tokenize(list(data.x_test), checkpoint=checkpoint, max_length=max_length)
        if len(data.x_test)
        else arrays["train"][:0]
    )
    meta = provenance(checkpoint=checkpoint, max_length=max_length)
    with atomic_path(output) as tmp, open(tmp, "wb") as handle:
        np.savez(handle, **arrays, provenance=np.array(json.dumps(meta, sort_keys=True)))


def make_noisy_labels(
    *, dataset: PathLike, noise: str, seed: int, asymmetric_map: str | None, output: PathLike
) -> None:
    """Write the noisy training labels of one (dataset, noise, seed): columns ``sample``, ``true``, ``given``.

    ``true`` is -1 (unknown) for ``real`` noise: the dataset's own labels are the given ones.
    """
    data = load_dataset(dataset)
    spec = parse_noise(noise)
    mapping = None
    if spec.kind == "asym" and asymmetric_map in SUPERCLASS_MAPS:
        if data.superclasses is None:
            raise ValueError(f"asymmetric_map {asymmetric_map!r} needs super-classes, which {dataset} does not have")
        mapping = superclass_asymmetric_map(superclasses=data.superclasses, variant=asymmetric_map, seed=seed)
    elif spec.kind == "asym":
        mapping = ASYMMETRIC_MAPS[asymmetric_map]
    given = inject_noise(data.y_train, spec=spec, num_classes=data.num_classes, seed=seed, mapping=mapping)
    true = np.full_like(given, -1) if spec.kind == "real" else data.y_train
    frame = pd.DataFrame({"sample": np.arange(len(given)), "true": true, "given": given})
    meta = provenance(
        noise=noise,
        seed=seed,
        asymmetric_map=asymmetric_map,
        mapping={str(source): target for source, target in sorted((mapping or {}).items())},
        num_classes=data.num_classes,
    )
    write_table(frame, output, metadata=meta)


def train_fold(
    *,
    dataset: PathLike,
    labels: PathLike,
    recipe: dict[str, Any],
    seed: int,
    num_folds: int,
    iteration: int,
    fold: int,
    threads: int,
    output: PathLike,
    provenance_fields: dict[str, Any],
    tokens: PathLike | None = None,
    gpus: int = 0,
    allow_cpu_fallback: bool = False,
) -> None:
    """Algorithm 1, lines 4-9, for fold k of iteration m: train on D minus D_k (10% held out to pick the best epoch
    by noisy-label accuracy) and predict D_k. ``iteration`` and ``fold`` are 1-based.

    Writes a table with ``sample``, ``given``, ``predicted`` and ``prob_0..prob_{Q-1}``. ``tokens`` is the text
    dataset's tokenised file (:func:`tokenize_dataset`); ``gpus`` and ``allow_cpu_fallback`` as
    :func:`enkcvs.train.job_device`. A killed job started again goes on from its last epoch
    (:func:`enkcvs.resume.checkpoint_path` of ``output``).
    """
    import torch

    from enkcvs.crossval import fold_probabilities
    from enkcvs.resume import checkpoint_path
    from enkcvs.train import job_device

    device = job_device(gpus=gpus, allow_cpu_fallback=allow_cpu_fallback)
    torch.set_num_threads(threads)
    data = load_dataset(dataset)
    x_train = split_inputs(data, tokens, split="train")
    label_table, num_classes = read_label_table(labels)
    given = label_table["given"].to_numpy()
    recipe_ = Recipe.from_dict(recipe)
    log.info("read %s and %s", dataset, labels)
    held_out, probabilities, result = fold_probabilities(
        recipe=recipe_,
        inputs=lambda indices, train: subset_inputs(data, x_train, indices, train=train),
        given=given,
        num_classes=num_classes,
        seed=seed,
        num_folds=num_folds,
        iteration=iteration,
        fold=fold,
        device=device,
        resume=checkpoint_path(output),
    )
    frame = pd.DataFrame({"sample": held_out, "given": given[held_out], "predicted": probabilities.argmax(axis=1)})
    frame = frame.join(pd.DataFrame(probabilities, columns=[f"prob_{c}" for c in range(num_classes)]))
    meta = provenance(
        **provenance_fields,
        recipe=recipe_.to_dict(),
        best_epoch=result.best_epoch,
        validation_accuracy=result.validation_accuracy,
        device=str(next(result.model.parameters()).device),
        bf16=result.bf16,
    )
    write_table(frame, output, metadata=meta)
    log.info("wrote %s (weights of epoch %d)", output, result.best_epoch)


def select_samples(
    *,
    predictions: list[PathLike],
    labels: PathLike,
    threshold: int,
    table: PathLike,
    metrics: PathLike,
    provenance_fields: dict[str, Any],
) -> None:
    """Algorithm 2 and Section 3.2 for one (dataset, noise, seed, K, M, t): votes, SS, pseudo labels, beta.

    Parameters
    ----------
    predictions : the M x K held-out prediction tables; each names its iteration m and fold k in its metadata.
    labels : the noisy-label table (true labels are used for the metrics only).
    threshold : t.
    table : output parquet, one row per sample.
    metrics : output JSON with |CS|, |SS|, |CSS|, precision, recall, per-iteration accuracy and Theorem 1.
    """
    label_table, num_classes, iterations = read_iterations(predictions, labels=labels)
    given, true = label_table["given"].to_numpy(), label_table["true"].to_numpy()
    predicted, probabilities = stack_iterations(iterations, num_classes=num_classes)
    outcome = ensemble_outcome(
        predicted=predicted, mean_probabilities=probabilities.mean(axis=0), given=given, threshold=threshold
    )
    selection = pd.DataFrame({"sample": np.arange(len(given)), "given": given, **outcome})  # columns in that order
    selected = outcome["selected"]
    write_table(selection, table, metadata=provenance(**provenance_fields, threshold=threshold))

    if (true == -1).all():  # 'real' noise: no true labels, so nothing to score the selection against
        write_json(provenance(**provenance_fields, selected=int(selected.sum()), true_labels_known=False), metrics)
        return
    sizes = selection_set_sizes(selected=selected, given=given, true=true)
    rest = ~selected
    spec = parse_noise(provenance_fields["noise"])
    q = [accuracy(true=true, predicted=row) for row in predicted]
    theory = empirical_theorem1(
        true=true, given=given, predicted=predicted, threshold=threshold, num_classes=num_classes
    )
    corollary = corollary_precision_recall(rate=spec.rate, accuracy=float(np.mean(q)), num_classes=num_classes)
    write_json(
        provenance(
            **provenance_fields,
            **sizes,
            **precision_recall(sizes=sizes),
            precision_by_given_class=precision_by_given_class(selected=selected, given=given, true=true),
            true_labels_known=True,
            iteration_accuracy=q,
            pseudo_label_accuracy=pseudo_label_accuracy(
                pseudo=outcome["pseudo"][rest], given=given[rest], true=true[rest]
            ),
            theorem1=theory,
            corollary=corollary,
            iteration_dependence=(
                iteration_dependence(true=true, predicted=predicted, num_classes=num_classes)
                if len(predicted) > 1
                else None
            ),
        ),
        metrics,
    )


def train_final(
    *,
    dataset: PathLike,
    labels: PathLike,
    selection: PathLike | None,
    method: str,
    recipe: dict[str, Any],
    gamma: float,
    seed: int,
    threads: int,
    output: PathLike,
    provenance_fields: dict[str, Any],
    options: dict[str, Any] | None = None,
    tokens: PathLike | None = None,
    gpus: int = 0,
    allow_cpu_fallback: bool = False,
) -> None:
    """Train a final model of ``method`` from scratch and write its clean test accuracy (last epoch) as JSON.

    ``options`` are the method's hyperparameters (see :func:`enkcvs.methods.final_training`; co-teaching's
    ``forget_rate`` is resolved by :func:`enkcvs.methods.resolve_forget_rate`), recorded in the JSON beside what the
    model trained with (mixup alpha, loss, forget rate); ``tokens`` is a text dataset's tokenised file; ``gpus`` and
    ``allow_cpu_fallback`` as :func:`enkcvs.train.job_device`. A killed job started again goes on from its last epoch
    (:func:`enkcvs.resume.checkpoint_path` of ``output``).
    """
    import torch

    from enkcvs.methods import GAMMA_METHODS, final_recipe, final_training, final_training_set, resolve_forget_rate
    from enkcvs.resume import checkpoint_path
    from enkcvs.train import job_device, predict_proba, train_model

    device = job_device(gpus=gpus, allow_cpu_fallback=allow_cpu_fallback)
    torch.set_num_threads(threads)
    data = load_dataset(dataset)
    label_table, num_classes = read_label_table(labels)
    given, true = label_table["given"].to_numpy(), label_table["true"].to_numpy()
    indices, targets = final_training_set(
        method=method,
        given=given,
        num_classes=num_classes,
        selection=read_table(selection)[0] if selection else None,
        gamma=gamma,
        true=true,
    )
    options = dict(options or {})
    resolved = dict(options)
    if "forget_rate" in resolved:
        noise = read_table_metadata(labels)["noise"]
        resolved["forget_rate"] = resolve_forget_rate(resolved["forget_rate"], noise=noise, given=given, true=true)
        log.info("co-teaching forgets %s: %.4f", options["forget_rate"], resolved["forget_rate"])
    training = final_training(method=method, options=resolved)
    recipe_ = final_recipe(Recipe.from_dict(recipe), training=training)
    log.info("%s: read %s and %s%s; training on %d samples, mixup alpha %s", method, dataset, labels,
             f" and {selection}" if selection else "", len(indices), recipe_.mixup_alpha)
    result = train_model(
        recipe=recipe_,
        x=subset_inputs(data, split_inputs(data, tokens, split="train"), indices, train=True),
        targets=targets,
        seed=derive_seed(seed, Purpose.FINAL),
        device=device,
        resume=checkpoint_path(output),
        **training.train_model_arguments(),
    )
    test_inputs = subset_inputs(data, split_inputs(data, tokens, split="test"))
    predicted = predict_proba(
        result.model, test_inputs, device=device, workers=recipe_.loader_workers, bf16=result.bf16
    ).argmax(axis=1)
    test_accuracy = accuracy(true=data.y_test, predicted=predicted)
    write_json(
        provenance(
            **{**provenance_fields, "method": method},
            gamma=gamma if method in GAMMA_METHODS else None,
            options=options,
            trained_with=training.record(recipe_),
            recipe=recipe_.to_dict(),
            bf16=result.bf16,
            train_samples=len(indices),
            test_accuracy=test_accuracy,
            final_train_loss=result.train_loss[-1],
        ),
        output,
    )
    log.info("wrote %s (clean test accuracy %.4f)", output, test_accuracy)


def compare_confident_learning(
    *, predictions: list[PathLike], labels: PathLike, threshold: int, output: PathLike, ranking: PathLike,
    provenance_fields: dict
) -> None:
    """E-NKCVS (M = 1 and the configured M, t) beside cleanlab's ``find_label_issues`` methods on the very same
    out-of-fold probabilities: precision and recall of the kept and of the flagged set, one row per method
    (``output``); and how well E-NKCVS's label quality and cleanlab's label-quality scores rank the true label errors
    first (``ranking``)."""
    from enkcvs.confident import compare_rankings, compare_with_confident_learning

    label_table, num_classes, iterations = read_iterations(predictions, labels=labels)
    _, probabilities = stack_iterations(iterations, num_classes=num_classes)
    given, true = label_table["given"].to_numpy(), label_table["true"].to_numpy()
    meta = provenance(**provenance_fields, threshold=threshold)
    frames = {
        output: compare_with_confident_learning(probabilities=probabilities, given=given, true=true,
                                                threshold=threshold),
        ranking: compare_rankings(probabilities=probabilities, given=given, true=true),
    }
    for path, frame in frames.items():
        for position, key in enumerate(("dataset", "noise", "seed")):
            frame.insert(position, key, provenance_fields[key])
        write_table(frame, path, metadata=meta)


def confident_learning_selection(
    *, predictions: list[PathLike], labels: PathLike, output: PathLike, provenance_fields: dict[str, Any]
) -> None:
    """Confident learning's kept set, for prune-and-retrain (method ``cl_prune``; Northcutt et al. 2021, Section 5):
    cleanlab's ``find_label_issues`` with its default filter on the mean of the M iterations' out-of-fold
    probabilities (the ones E-NKCVS votes over). Writes one row per sample in sample order: ``sample``, ``flagged``
    and ``selected`` = not flagged, the column final training reads (:func:`enkcvs.methods.final_training_set`)."""
    from enkcvs.confident import CLEANLAB_DEFAULT_FILTER, cleanlab_flags

    label_table, num_classes, iterations = read_iterations(predictions, labels=labels)
    _, probabilities = stack_iterations(iterations, num_classes=num_classes)
    flagged = cleanlab_flags(probabilities=probabilities.mean(axis=0), labels=label_table["given"].to_numpy(),
                             method=CLEANLAB_DEFAULT_FILTER)
    frame = pd.DataFrame({"sample": label_table["sample"].to_numpy(), "flagged": flagged, "selected": ~flagged})
    meta = provenance(**provenance_fields, filter_by=CLEANLAB_DEFAULT_FILTER, iterations=len(iterations))
    write_table(frame, output, metadata=meta)
    log.info("confident learning flags %d of %d samples; wrote %s", flagged.sum(), len(flagged), output)


def write_label_issues(*, dataset: PathLike, selection: PathLike, top: int, table: PathLike, summary: PathLike) -> None:
    """One seed's samples ranked from most to least likely mislabeled (lowest label quality first), with class names
    (and the user's ids), and a Markdown summary with the top ``top`` rows."""
    frame, meta = read_table(selection)
    fields = {key: meta[key] for key in ("dataset", "noise", "seed", "K", "M", "threshold")}
    outcome = {column: frame[column].to_numpy() for column in ISSUE_OUTCOME}
    rule = (
        f"E-NKCVS with K = {fields['K']}, M = {fields['M']}, t = {fields['threshold']} (noise setting "
        f"{fields['noise']}, seed {fields['seed']})"
    )
    write_issue_files(dataset=load_dataset(dataset), given=frame["given"].to_numpy(), outcome=outcome,
                      iterations=int(meta["M"]), rule=rule, metadata=provenance(**fields, selection=str(selection)),
                      top=top, table=table, summary=summary)


def merge_label_issues(
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
    """One ranking from every seed: the S seeds' M iterations taken as one ensemble of S x M iterations (votes, pseudo
    labels, beta and label quality from all of them, Section 3.2), a sample kept when selected in at least t x S of
    them (t per seed on average). Only for seeds that share the given labels (``real`` noise, or one seed): synthetic
    noise draws other labels per seed, which no merged ranking can describe (ValueError).

    Parameters
    ----------
    dataset : the prepared dataset (class names, ids, texts or paths).
    predictions : the S x M x K held-out prediction tables; each names its seed, iteration and fold in its metadata.
    labels : the S noisy-label tables, one per seed.
    threshold : t, the votes per seed.
    top, table, summary : as :func:`write_label_issues`.
    """
    given, seeds, predicted, probabilities = read_merged_iterations(predictions, labels=labels)
    iterations = len(predicted)
    outcome = ensemble_outcome(predicted=predicted, mean_probabilities=probabilities.mean(axis=0), given=given,
                               threshold=threshold * len(seeds))
    fields = {**provenance_fields, "seeds": seeds, "K": read_table_metadata(predictions[0])["K"],
              "M": iterations // len(seeds)}
    rule = (
        f"E-NKCVS with K = {fields['K']}, M = {fields['M']}, t = {threshold} (noise setting {fields['noise']}) over "
        f"seeds {', '.join(map(str, fields['seeds']))}: {iterations} iterations in all, a sample kept when "
        f"selected in at least {threshold * len(seeds)} of them"
    )
    write_issue_files(dataset=load_dataset(dataset), given=given, outcome=outcome, iterations=iterations,
                      rule=rule, metadata=provenance(**fields, threshold=threshold), top=top, table=table,
                      summary=summary)


def read_merged_iterations(predictions: list[PathLike], *, labels: list[PathLike]) -> tuple[
        np.ndarray, list[int], np.ndarray, np.ndarray]:
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


def compare_real_label_issues(*, predictions: list[PathLike], labels: list[PathLike], threshold: int,
                              markdown: PathLike, csv: PathLike, provenance_fields: dict[str, Any]) -> None:
    """E-NKCVS's merged ranking of labels whose errors are unknown beside cleanlab's on the same out-of-fold
    probabilities (:func:`enkcvs.confident.agreement_on_real_labels`; t per seed, as the merged ranking), as a
    Markdown table under a line saying what was compared, and as CSV."""
    from enkcvs.confident import CLEANLAB_DEFAULT_FILTER, agreement_on_real_labels

    given, seeds, _, probabilities = read_merged_iterations(predictions, labels=labels)
    frame = agreement_on_real_labels(probabilities=probabilities, given=given, threshold=threshold * len(seeds))
    heading = (
        f"E-NKCVS (t = {threshold} per seed over seeds {', '.join(map(str, seeds))}, {len(probabilities)} "
        f"iterations) and cleanlab's find_label_issues (filter_by={CLEANLAB_DEFAULT_FILTER}, ranked by "
        f"self-confidence) on the same mean out-of-fold probabilities of {len(given)} samples "
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
) -> None:
    """E-NKCVS on the user's own out-of-fold probabilities (no training): the ranked label-issue table and, with
    true labels, precision, recall and the corrected Theorem 1's prediction."""
    result = select(
        probabilities=load_probabilities(probabilities),
        labels=load_labels(labels, column=settings.get("label_column")),
        threshold=settings["threshold"],
        true_labels=None if true_labels is None else load_labels(true_labels, column=settings.get("true_label_column")),
    )
    id_column = settings.get("id_column")
    ids = None if id_column is None else load_labels(labels, column=id_column)
    meta = provenance(probabilities=str(probabilities), labels=str(labels), true_labels=str(true_labels), **settings)
    write_table(result.to_frame(ids=ids, id_column=id_column), table, metadata=meta)
    scores = {"precision": result.precision, "recall": result.recall, "theorem1": result.theorem1}
    write_json({**meta, "iterations": result.iterations, "selected": int(result.selected.sum()), **scores}, metrics)
