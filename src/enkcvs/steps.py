"""One function per workflow step: read the step's inputs, call the method, write self-describing outputs.

The thin scripts under ``workflow/scripts`` call exactly one of these. Steps that train import torch themselves, so
the selection and report steps start fast.
"""

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from enkcvs.datasets import load_dataset, load_source, save_dataset
from enkcvs.folds import kfold_assignment, validation_split
from enkcvs.io import provenance, read_table, read_table_metadata, write_json, write_table
from enkcvs.metrics import accuracy, class_prior, confusion_matrix, precision_recall, selection_set_sizes
from enkcvs.noise import ASYMMETRIC_MAPS, empirical_transition_matrix, inject_noise, parse_noise
from enkcvs.recipe import Recipe
from enkcvs.rng import Purpose, derive_seed, generator
from enkcvs.selection import assemble_iteration, ensemble_selection, prediction_table_problems, selection_votes
from enkcvs.theory import corollary_precision_recall, theorem1_precision_recall
from enkcvs.weights import entropy_weight, label_entropy, predicted_label_distribution, pseudo_labels

PathLike = str | Path


def prepare_dataset(*, source: str, output: PathLike) -> None:
    """Load a packaged dataset source and store it as the project's ``.npz``."""
    save_dataset(load_source(source), output, metadata=provenance(source=source))


def make_noisy_labels(
    *, dataset: PathLike, noise: str, seed: int, asymmetric_map: str | None, output: PathLike
) -> None:
    """Write the noisy training labels of one (dataset, noise, seed): columns ``sample``, ``true``, ``given``."""
    data = load_dataset(dataset)
    spec = parse_noise(noise)
    mapping = ASYMMETRIC_MAPS[asymmetric_map] if spec.kind == "asym" else None
    given = inject_noise(data.y_train, spec=spec, num_classes=data.num_classes, seed=seed, mapping=mapping)
    frame = pd.DataFrame({"sample": np.arange(len(given)), "true": data.y_train, "given": given})
    meta = provenance(noise=noise, seed=seed, asymmetric_map=asymmetric_map, num_classes=data.num_classes)
    write_table(frame, output, metadata=meta)


def _load_labels(path: PathLike) -> tuple[pd.DataFrame, int]:
    """The noisy-label table and Q, checked: labels outside 0..Q-1 raise ``ValueError`` naming the file."""
    labels, meta = read_table(path)
    num_classes = int(meta["num_classes"])
    for column in ("true", "given"):
        if not labels[column].between(0, num_classes - 1).all():
            raise ValueError(f"{path}: '{column}' labels outside 0..{num_classes - 1}: delete it and rerun")
    return labels, num_classes


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
) -> None:
    """Algorithm 1, lines 4-9, for fold k of iteration m: train on D minus D_k (10% held out to pick the best epoch
    by noisy-label accuracy) and predict D_k. ``iteration`` and ``fold`` are 1-based.

    Writes a table with ``sample``, ``given``, ``predicted`` and ``prob_0..prob_{Q-1}``.
    """
    import torch

    from enkcvs.train import predict_proba, train_model

    torch.set_num_threads(threads)
    data = load_dataset(dataset)
    label_table, num_classes = _load_labels(labels)
    given = label_table["given"].to_numpy()
    recipe_ = Recipe.from_dict(recipe)
    folds = kfold_assignment(num_samples=len(given), num_folds=num_folds, seed=seed, iteration=iteration)
    held_out = np.flatnonzero(folds == fold - 1)
    train_idx, val_idx = validation_split(
        np.flatnonzero(folds != fold - 1),
        fraction=recipe_.validation_fraction,
        rng=generator(seed, Purpose.VALIDATION, num_folds, iteration, fold),
    )
    result = train_model(
        recipe=recipe_,
        x=data.x_train[train_idx],
        targets=np.eye(num_classes, dtype=np.float32)[given[train_idx]],
        seed=derive_seed(seed, Purpose.INIT, num_folds, iteration, fold),
        validation=(data.x_train[val_idx], given[val_idx]) if len(val_idx) else None,
    )
    probabilities = predict_proba(result.model, data.x_train[held_out])
    frame = pd.DataFrame({"sample": held_out, "given": given[held_out], "predicted": probabilities.argmax(axis=1)})
    frame = frame.join(pd.DataFrame(probabilities, columns=[f"prob_{c}" for c in range(num_classes)]))
    meta = provenance(
        **provenance_fields,
        recipe=recipe_.to_dict(),
        best_epoch=result.best_epoch,
        validation_accuracy=result.validation_accuracy,
        device=str(next(result.model.parameters()).device),
    )
    write_table(frame, output, metadata=meta)


def _group_by_iteration(predictions: list[PathLike]) -> dict[int, list[PathLike]]:
    """Prediction files by iteration m (from their metadata), checked to be iterations 1..M of folds 1..K each."""
    by_iteration: dict[int, dict[int, PathLike]] = {}
    num_folds = set()
    for path in predictions:
        meta = read_table_metadata(path)
        m, k = int(meta["m"]), int(meta["k"])
        num_folds.add(int(meta["K"]))
        folds = by_iteration.setdefault(m, {})
        if k in folds:
            raise ValueError(f"{path} and {folds[k]} both hold fold k = {k} of iteration m = {m}")
        folds[k] = path
    if len(num_folds) != 1:
        raise ValueError(f"the prediction tables were made for different K: {sorted(num_folds)}")
    (K,) = num_folds
    if sorted(by_iteration) != list(range(1, len(by_iteration) + 1)):
        raise ValueError(f"the prediction tables cover iterations {sorted(by_iteration)}, not 1..M")
    for m, folds in by_iteration.items():
        if sorted(folds) != list(range(1, K + 1)):
            raise ValueError(f"iteration {m} has folds {sorted(folds)} of K = {K}: aggregation needs every fold")
    return {m: [folds[k] for k in sorted(folds)] for m, folds in by_iteration.items()}


def _assemble_checked(
    paths: list[PathLike], *, labels: PathLike, given: np.ndarray, num_classes: int
) -> pd.DataFrame:
    """One iteration's K tables, each checked, joined into N rows; errors name the file and the defect."""
    frames = []
    for path in paths:
        frame = read_table(path)[0]
        problems = prediction_table_problems(frame, num_samples=len(given), num_classes=num_classes)
        if problems:
            raise ValueError(f"{path}: " + "; ".join(problems) + ". Delete it and rerun to rebuild it.")
        frames.append(frame)
    try:
        iteration = assemble_iteration(frames, num_samples=len(given), num_classes=num_classes)
    except ValueError as error:
        raise ValueError(f"{', '.join(map(str, paths))}: {error}") from None
    if not np.array_equal(iteration["given"].to_numpy(), given):
        raise ValueError(f"{', '.join(map(str, paths))}: given labels differ from those in {labels}")
    return iteration


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
    label_table, num_classes = _load_labels(labels)
    given, true = label_table["given"].to_numpy(), label_table["true"].to_numpy()
    iterations = [
        _assemble_checked(paths, labels=labels, given=given, num_classes=num_classes)
        for _, paths in sorted(_group_by_iteration(predictions).items())
    ]
    predicted = np.stack([frame["predicted"].to_numpy() for frame in iterations])  # (M, N)
    prob_columns = [f"prob_{c}" for c in range(num_classes)]
    mean_probabilities = np.mean([frame[prob_columns].to_numpy() for frame in iterations], axis=0)  # (N, Q)
    votes = selection_votes(predicted=predicted, given=given)
    selected = ensemble_selection(votes=votes, threshold=threshold)
    distribution = predicted_label_distribution(predicted=predicted, num_classes=num_classes)
    entropy = label_entropy(distribution)
    selection = pd.DataFrame(
        {
            "sample": np.arange(len(given)),
            "given": given,
            "votes": votes,
            "selected": selected,
            "pseudo": pseudo_labels(distribution=distribution, mean_probabilities=mean_probabilities),
            "entropy": entropy,
            "beta": entropy_weight(entropy=entropy, num_classes=num_classes),
            "prob_given": mean_probabilities[np.arange(len(given)), given],
        }
    )
    write_table(selection, table, metadata=provenance(**provenance_fields, threshold=threshold))

    sizes = selection_set_sizes(selected=selected, given=given, true=true)
    spec = parse_noise(provenance_fields["noise"])
    q = [accuracy(true=true, predicted=row) for row in predicted]
    theory = theorem1_precision_recall(
        prior=class_prior(true=true, num_classes=num_classes),
        transition=empirical_transition_matrix(true_labels=true, noisy_labels=given, num_classes=num_classes),
        confusion=confusion_matrix(true=np.tile(true, len(predicted)), predicted=predicted, num_classes=num_classes),
        iterations=len(predicted),
        threshold=threshold,
    )
    corollary = corollary_precision_recall(rate=spec.rate, accuracy=float(np.mean(q)), num_classes=num_classes)
    write_json(
        provenance(
            **provenance_fields,
            **sizes,
            **precision_recall(sizes=sizes),
            iteration_accuracy=q,
            theorem1=theory,
            corollary=corollary,
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
) -> None:
    """Train a final model of ``method`` from scratch and write its clean test accuracy (last epoch) as JSON.

    ``options`` are the method's hyperparameters (see :func:`enkcvs.methods.training_options`), recorded in the JSON.
    """
    import torch

    from enkcvs.methods import final_training_set, training_options
    from enkcvs.train import predict_proba, train_model

    torch.set_num_threads(threads)
    data = load_dataset(dataset)
    label_table, num_classes = _load_labels(labels)
    indices, targets = final_training_set(
        method=method,
        given=label_table["given"].to_numpy(),
        num_classes=num_classes,
        selection=read_table(selection)[0] if selection else None,
        gamma=gamma,
    )
    recipe_ = Recipe.from_dict(recipe)
    options = dict(options or {})
    result = train_model(
        recipe=recipe_,
        x=data.x_train[indices],
        targets=targets,
        seed=derive_seed(seed, Purpose.FINAL),
        **training_options(method=method, options=options),
    )
    predicted = predict_proba(result.model, data.x_test).argmax(axis=1)
    write_json(
        provenance(
            **{**provenance_fields, "method": method},
            gamma=gamma if method == "enkcvs" else None,
            options=options,
            recipe=recipe_.to_dict(),
            train_samples=len(indices),
            test_accuracy=accuracy(true=data.y_test, predicted=predicted),
            final_train_loss=result.train_loss[-1],
        ),
        output,
    )
