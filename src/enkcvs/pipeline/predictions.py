"""The held-out prediction tables of the cross-validations (one parquet per fold k of iteration m, written by
:func:`enkcvs.pipeline.steps.folds.train_fold`) and the noisy-label table they are checked against, read back for the
steps that vote on them (selection, the label-issue rankings, the comparison with confident learning).

A prediction table has one row per held-out sample: ``sample`` (0..N-1), ``given``, ``predicted`` and ``prob_0`` ..
``prob_{Q-1}``; its metadata names its iteration ``m``, fold ``k`` and fold count ``K``. Every function here checks
what it reads and names the file and the defect; none imports torch.
"""

import numpy as np
import pandas as pd

from enkcvs.io import PathLike, read_table, read_table_metadata


def read_label_table(path: PathLike) -> tuple[pd.DataFrame, int]:
    """The noisy-label table (:func:`enkcvs.pipeline.steps.noise.make_noisy_labels`) and Q, checked.

    Returns
    -------
    The table, N rows with columns ``sample``, ``true`` (-1 throughout when unknown) and ``given``; and Q, the
    number of classes.

    Raises
    ------
    ValueError
        Naming the file, for labels outside 0..Q-1 (true labels: unless all -1).
    """
    labels, meta = read_table(path)
    num_classes = int(meta["num_classes"])
    true_unknown = (labels["true"] == -1).all()
    for column in ("given",) if true_unknown else ("true", "given"):
        if not labels[column].between(0, num_classes - 1).all():
            raise ValueError(f"{path}: '{column}' labels outside 0..{num_classes - 1}: delete it and rerun")
    return labels, num_classes


def prediction_table_problems(frame: pd.DataFrame, *, num_samples: int, num_classes: int) -> list[str]:
    """Defects of one fold's prediction table (empty when sound): missing columns, a class count other than Q,
    samples outside 0..N-1 or repeated, labels outside 0..Q-1, probability rows that are not distributions."""
    prob_columns = [f"prob_{c}" for c in range(num_classes)]
    missing = [c for c in ("sample", "given", "predicted", *prob_columns) if c not in frame.columns]
    extra = sorted(c for c in frame.columns if c.startswith("prob_") and c not in prob_columns)
    problems = []
    if missing:
        problems.append(f"missing columns {missing}")
    if extra:
        problems.append(f"has {len(prob_columns) + len(extra)} probability columns for Q = {num_classes} classes")
    if missing or extra:
        return problems
    samples = frame["sample"].to_numpy()
    if ((samples < 0) | (samples >= num_samples)).any():
        problems.append(f"sample indices outside 0..{num_samples - 1}")
    if len(np.unique(samples)) != len(samples):
        problems.append(f"{len(samples) - len(np.unique(samples))} duplicated samples")
    for column in ("given", "predicted"):
        labels = frame[column].to_numpy()
        if ((labels < 0) | (labels >= num_classes)).any():
            problems.append(f"'{column}' labels outside 0..{num_classes - 1}")
    probabilities = frame[prob_columns].to_numpy()
    if not np.isfinite(probabilities).all() or not np.allclose(probabilities.sum(axis=1), 1.0, atol=1e-3):
        problems.append("probability rows that are not finite or do not sum to 1")
    return problems


def assemble_iteration(folds: list[pd.DataFrame], *, num_samples: int, num_classes: int) -> pd.DataFrame:
    """Join the K held-out prediction tables of one iteration into one row per sample, checking completeness.

    Parameters
    ----------
    folds : K tables with columns ``sample``, ``given``, ``predicted`` and ``prob_0`` .. ``prob_{Q-1}``.
    num_samples : N, the number of training samples every iteration must cover exactly once.
    num_classes : Q.

    Returns
    -------
    Table of N rows sorted by ``sample``.
    """
    frame = pd.concat(folds, ignore_index=True)
    prob_columns = [f"prob_{c}" for c in range(num_classes)]
    missing_columns = {"sample", "given", "predicted", *prob_columns} - set(frame.columns)
    if missing_columns:
        raise ValueError(f"prediction tables lack columns {sorted(missing_columns)} (expected Q = {num_classes})")
    counts = np.bincount(frame["sample"].to_numpy(), minlength=num_samples)
    if len(counts) != num_samples or (counts != 1).any():
        raise ValueError(
            f"the folds of an iteration must predict each of the {num_samples} samples exactly once: "
            f"{int((counts[:num_samples] == 0).sum())} missing, {int((counts > 1).sum())} repeated, "
            f"{max(len(counts) - num_samples, 0)} out of range"
        )
    return frame.sort_values("sample", ignore_index=True)


def group_by_iteration(predictions: list[PathLike]) -> dict[int, list[PathLike]]:
    """The M x K prediction files by iteration m (read from their metadata): m -> its K files in fold order.

    Raises
    ------
    ValueError
        Unless the files are exactly folds 1..K of iterations 1..M, for one K.
    """
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


def read_iteration(paths: list[PathLike], *, labels: PathLike, given: np.ndarray, num_classes: int) -> pd.DataFrame:
    """One iteration's K prediction tables, each checked (:func:`prediction_table_problems`), joined into N rows
    sorted by sample (:func:`assemble_iteration`) whose ``given`` column must equal ``given`` (N,), the labels read
    from the noisy-label table ``labels``; errors name the file and the defect."""
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


def read_iterations(predictions: list[PathLike], *, labels: PathLike) -> tuple[pd.DataFrame, int, list[pd.DataFrame]]:
    """The noisy-label table and Q (:func:`read_label_table`), and the M iterations' held-out predictions, each joined
    into one table of N rows (:func:`read_iteration`), in iteration order 1..M."""
    label_table, num_classes = read_label_table(labels)
    given = label_table["given"].to_numpy()
    iterations = [
        read_iteration(paths, labels=labels, given=given, num_classes=num_classes)
        for _, paths in sorted(group_by_iteration(predictions).items())
    ]
    return label_table, num_classes, iterations


def stack_iterations(iterations: list[pd.DataFrame], *, num_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """The iterations' held-out predicted labels (M, N) and class probabilities (M, N, Q), from the M tables of N rows
    :func:`read_iterations` joined."""
    prob_columns = [f"prob_{c}" for c in range(num_classes)]
    predicted = np.stack([frame["predicted"].to_numpy() for frame in iterations])
    return predicted, np.stack([frame[prob_columns].to_numpy() for frame in iterations])
