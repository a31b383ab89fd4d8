"""Out-of-fold probabilities with the project's training engine: E-NKCVS's M x K cross-validation (Algorithm 1,
lines 2-9, repeated M times with fresh folds and initialisation as in Algorithm 2) for a user's own data.

:func:`fold_probabilities` is one fold, the step each ``train_fold`` job of the workflow runs;
:func:`selection_probabilities` the M x K folds of a selection trained together (``train_selection`` jobs);
:func:`out_of_fold_probabilities` runs all M x K of them in this process and returns the (M, N, Q) stack that
:func:`enkcvs.select` and ``enkcvs find-issues`` read. The same seed gives the same folds, initialisations and
probabilities as the workflow.
"""

import logging
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from enkcvs.data.datasets import Dataset
from enkcvs.method.folds import fold_indices
from enkcvs.rng import Purpose, derive_seed
from enkcvs.training.foldcache import FoldCache
from enkcvs.training.inputs import subset_inputs
from enkcvs.training.recipe import Recipe
from enkcvs.training.standardize import standardized

log = logging.getLogger(__name__)


def fold_probabilities(
    *,
    recipe: Recipe,
    inputs: Callable[[np.ndarray, bool], Any],
    given: np.ndarray,
    num_classes: int,
    seed: int,
    num_folds: int,
    iteration: int,
    fold: int,
    device=None,
    execution=None,
    loss: str = "ce",
    loss_params: dict[str, float] | None = None,
    resume=None,
    standardize: bool = False,
    on_epoch: Callable[[int], None] | None = None,
):
    """Train fold k of iteration m (1-based) on the given labels and predict its held-out samples.

    Parameters
    ----------
    recipe : the training recipe.
    inputs : ``inputs(indices, train)`` -> the model inputs of those samples (an array (n, ...) or a streamed torch
        Dataset, see :func:`enkcvs.training.train.train_model`); ``train`` asks for training-time augmentation of
        streamed data.
    given : (N,) given labels in 0..Q-1.
    num_classes : Q.
    seed, num_folds, iteration, fold : the run's seed, K, m and k.
    device : torch device; default :func:`enkcvs.training.device.default_device`.
    execution : how it runs (:class:`enkcvs.training.device.Execution`), instead of ``device``.
    loss, loss_params : the training loss (E-NKCVS's fold models: cross-entropy; :mod:`enkcvs.pipeline.tuning` scores
        others on the same split), see :func:`enkcvs.method.losses.make_loss`.
    resume : the training's epoch checkpoint file, as :func:`enkcvs.training.train.train_model` takes it (None: none).
    standardize : z-score features (N, ..., F) inside the fold, by the mean and standard deviation of its training
        part alone (:func:`enkcvs.training.standardize.standardized`): for tables, whose columns come in units of
        their own; missing values (NaN) are imputed by the same mean. Array inputs only.
    on_epoch : called with the epoch's number after each (progress).

    Returns
    -------
    held_out : (n_k,) sample indices of fold k.
    probabilities : (n_k, Q) float32 predicted class probabilities of the held-out samples.
    result : the :class:`enkcvs.training.train.TrainingResult` (best epoch, per-epoch history, model).
    """
    from enkcvs.training.device import Execution, default_device
    from enkcvs.training.evaluate import predict_proba
    from enkcvs.training.train import train_model

    execution = execution or Execution(device=device or default_device())
    held_out, training, inputs = _fold_training(
        recipe=recipe,
        inputs=inputs,
        given=given,
        num_classes=num_classes,
        seed=seed,
        num_folds=num_folds,
        iteration=iteration,
        fold=fold,
        standardize=standardize,
    )
    result = train_model(
        recipe=recipe,
        **training,
        execution=execution,
        loss=loss,
        loss_params=loss_params,
        resume=resume,
        on_epoch=on_epoch,
    )
    probabilities = predict_proba(
        result.model,
        inputs(held_out, False),
        device=execution.device,
        workers=execution.loader_workers,
        bf16=result.bf16,
    )
    return held_out, probabilities, result


def _fold_training(
    *,
    recipe: Recipe,
    inputs: Callable[[np.ndarray, bool], Any],
    given: np.ndarray,
    num_classes: int,
    seed: int,
    num_folds: int,
    iteration: int,
    fold: int,
    standardize: bool,
) -> tuple[np.ndarray, dict[str, Any], Callable[[np.ndarray, bool], Any]]:
    """Fold k of iteration m's held-out samples (n_k,), what its model trains on (``x``, ``targets``, ``seed`` and
    ``validation`` as :func:`enkcvs.training.train.train_model` takes them), and the fold's ``inputs`` (with
    ``standardize``: z-scored by its training part, D minus D_k)."""
    train, validation, held_out = fold_indices(
        num_samples=len(given),
        num_folds=num_folds,
        seed=seed,
        iteration=iteration,
        fold=fold,
        validation_fraction=recipe.validation_fraction,
    )
    if standardize:
        scaled = standardized(inputs(np.arange(len(given)), False), training=np.concatenate([train, validation]))
        inputs = lambda indices, _train: scaled[indices]  # noqa: E731
    log.info(
        "fold %d of %d, iteration %d: training on %d samples, %d held out for the best epoch, predicting %d",
        fold,
        num_folds,
        iteration,
        len(train),
        len(validation),
        len(held_out),
    )
    return (
        held_out,
        {
            "x": inputs(train, True),
            "targets": np.eye(num_classes, dtype=np.float32)[given[train]],
            "seed": derive_seed(seed, Purpose.INIT, num_folds, iteration, fold),
            "validation": (inputs(validation, False), given[validation]) if len(validation) else None,
        },
        inputs,
    )


def selection_probabilities(
    *,
    recipe: Recipe,
    inputs: Callable[[np.ndarray, bool], Any],
    given: np.ndarray,
    num_classes: int,
    seed: int,
    num_folds: int,
    iterations: Sequence[int],
    device=None,
    execution=None,
    resume=None,
    standardize: bool = False,
    on_epoch: Callable[[int], None] | None = None,
) -> list[tuple[np.ndarray, np.ndarray, Any]]:
    """The K folds of each iteration m of ``iterations`` (a whole selection's M x K, or one iteration's K) trained
    together as one stacked program (:func:`enkcvs.training.stacked.train_stacked`): what :func:`fold_probabilities`
    returns for each (m, k), within float rounding. Arguments as there (cross-entropy only); ``resume`` is the
    stack's one epoch checkpoint file (None: none). Inputs must be arrays in memory (images, tables), and the model
    free of dropout.

    Returns
    -------
    M x K (held_out (n_k,), probabilities (n_k, Q) float32, :class:`enkcvs.training.train.TrainingResult`), in the
    order (m, k) = (first, 1), (first, 2), ..., (last, K).
    """
    from enkcvs.training.device import Execution, default_device
    from enkcvs.training.evaluate import predict_proba
    from enkcvs.training.stacked import train_stacked

    execution = execution or Execution(device=device or default_device())
    folds = [
        _fold_training(
            recipe=recipe,
            inputs=inputs,
            given=given,
            num_classes=num_classes,
            seed=seed,
            num_folds=num_folds,
            iteration=iteration,
            fold=fold,
            standardize=standardize,
        )
        for iteration in iterations
        for fold in range(1, num_folds + 1)
    ]
    trainings = [training for _, training, _ in folds]
    results = train_stacked(
        recipe=recipe,
        xs=[training["x"] for training in trainings],
        targets=[training["targets"] for training in trainings],
        seeds=[training["seed"] for training in trainings],
        validations=[training["validation"] for training in trainings],
        execution=execution,
        resume=resume,
        on_epoch=on_epoch,
    )
    return [
        (
            held_out,
            predict_proba(
                result.model,
                fold_inputs(held_out, False),
                device=execution.device,
                workers=execution.loader_workers,
                bf16=result.bf16,
            ),
            result,
        )
        for (held_out, _, fold_inputs), result in zip(folds, results)
    ]


def out_of_fold_probabilities(
    *,
    x: np.ndarray | Sequence | Dataset,
    labels: np.ndarray | None = None,
    recipe: Recipe | dict[str, Any],
    num_folds: int = 4,
    iterations: int = 3,
    seed: int = 1,
    num_classes: int | None = None,
    device=None,
    execution=None,
    progress: bool = False,
    standardize: bool = False,
    stacked: bool = False,
    cache: FoldCache | None = None,
) -> np.ndarray:
    """Every sample's class probabilities from models that did not train on it, M times with fresh folds.

    Parameters
    ----------
    x : (N, ...) model inputs as :func:`enkcvs.training.train.train_model` takes them (images (N, C, H, W) float32 in
        [0, 1], features (N, F) float32 for ``mlp``, token ids (N, 2, L) int64 from :func:`enkcvs.data.text.tokenize`
        for ``text_classifier``), a torch-style dataset whose items are (input, label) pairs, e.g. a torchvision
        dataset with ``transform=ToTensor()`` (its inputs are stacked into one array), or a prepared
        :class:`enkcvs.data.datasets.Dataset` of images or image files (its training split; image files are streamed
        from disk, as the workflow's fold jobs read them).
    labels : (N,) given labels in 0..Q-1; from the dataset's items or training split when omitted.
    recipe : a :class:`enkcvs.training.recipe.Recipe` or its mapping (as under ``recipe:`` in a config).
    num_folds, iterations : K and M.
    seed : seeds folds, validation hold-outs and initialisations exactly as the workflow does.
    num_classes : Q; default the prepared dataset's classes, else the largest label + 1.
    device, execution : the torch device (default :func:`enkcvs.training.device.default_device`), or how the fold
        models train instead (:class:`enkcvs.training.device.Execution`: device, DataLoader workers).
    progress : show the progress over every epoch of the M x K fold models on stderr, with the time left at the pace
        measured so far (:class:`Progress`).
    standardize : z-score features (N, ..., F) inside each fold, by the mean and standard deviation of the fold's
        training part alone, and impute their missing values (NaN) by that mean
        (:func:`enkcvs.training.standardize.standardized`): for tables, whose columns come in units of their own.
        Array inputs only.
    stacked : train the M x K fold models together as one stacked program (:func:`selection_probabilities`), each
        still its own training: the probabilities of the models trained one by one within float rounding, sooner
        where small models leave the hardware idle (benchmarks/rank_speed.py times both ways on a table and on
        texts' embeddings). Arrays in memory and a model free of dropout only; all M x K training sets are held at
        once.
    cache : keep each finished fold model's held-out probabilities there and take those it holds instead of training
        again (stacked: the stack's epoch checkpoint), so that a stopped run goes on where it stopped.

    Returns
    -------
    (M, N, Q) float32, rows summing to 1.
    """
    if stacked and isinstance(x, Dataset) and x.modality == "image_files":
        raise ValueError("stacked=True trains inputs held in memory, not images streamed from files: stacked=False")
    recipe = recipe if isinstance(recipe, Recipe) else Recipe.from_dict(recipe)
    x, labels, num_classes, inputs = _fold_inputs(x, labels=labels, num_classes=num_classes)
    if labels is None:
        raise ValueError("labels are needed with array inputs: pass labels=(N,) class indices")
    given = _checked_inputs(x, labels=labels, standardize=standardize)
    num_classes = num_classes or int(given.max()) + 1
    stack = np.empty((iterations, len(given), num_classes), dtype=np.float32)
    common = {
        "recipe": recipe,
        "inputs": inputs,
        "given": given,
        "num_classes": num_classes,
        "seed": seed,
        "num_folds": num_folds,
        "device": device,
        "execution": execution,
        "standardize": standardize,
    }
    models = iterations * num_folds
    if stacked:
        bar = Progress(
            total=recipe.epochs, shown=progress, unit="epoch", what=f"{models} fold models, trained together"
        )
        folds = selection_probabilities(
            **common,
            iterations=range(1, iterations + 1),
            resume=None if cache is None else cache.stack_checkpoint,
            on_epoch=lambda epoch: bar.end(f"epoch {epoch} of {recipe.epochs}"),
        )
        for index, (held_out, probabilities, _) in enumerate(folds):
            stack[index // num_folds, held_out] = probabilities
        bar.close()
        return stack
    pending = pending_folds(cache=cache, stack=stack, num_folds=num_folds)
    done = f" ({models - len(pending)} taken from the cache)" if len(pending) < models else ""
    bar = Progress(
        total=len(pending) * recipe.epochs, shown=progress, unit="epoch", what=f"epochs of {models} fold models{done}"
    )
    for m, k in pending:
        held_out, probabilities, _ = fold_probabilities(
            **common,
            iteration=m,
            fold=k,
            on_epoch=lambda epoch, m=m, k=k: bar.end(f"iteration {m}, fold {k}, epoch {epoch} of {recipe.epochs}"),
        )
        finished_fold(cache=cache, stack=stack, iteration=m, fold=k, held_out=held_out, probabilities=probabilities)
    bar.close()
    return stack


def pending_folds(*, cache: FoldCache | None, stack: np.ndarray, num_folds: int) -> list[tuple[int, int]]:
    """Fill ``stack`` (M, N, Q) with the held-out probabilities of the fold models ``cache`` holds; returns the
    (m, k) of those left to train, in order. With :func:`finished_fold`, how every way of training the fold models,
    one by one or side by side, uses the cache."""
    pending = []
    for m in range(1, len(stack) + 1):
        for k in range(1, num_folds + 1):
            found = None if cache is None else cache.load(iteration=m, fold=k)
            if found is None:
                pending.append((m, k))
            else:
                stack[m - 1, found[0]] = found[1]
    return pending


def finished_fold(
    *,
    cache: FoldCache | None,
    stack: np.ndarray,
    iteration: int,
    fold: int,
    held_out: np.ndarray,
    probabilities: np.ndarray,
) -> None:
    """Fold k of iteration m's held-out probabilities into ``stack`` (M, N, Q), and into ``cache`` where there is
    one."""
    stack[iteration - 1, held_out] = probabilities
    if cache is not None:
        cache.save(iteration=iteration, fold=fold, held_out=held_out, probabilities=probabilities)


def _checked_inputs(x, *, labels, standardize: bool) -> np.ndarray:
    """The (N,) labels as class indices, or ValueError with the fix for labels that are not, or for features that
    ``standardize`` cannot scale or that hold missing values without it."""
    given = np.asarray(labels)
    if given.shape != (len(x),) or given.dtype.kind not in "iu" or given.min() < 0:
        raise ValueError(
            f"labels must be (N,) = ({len(x)},) class indices >= 0; got shape {given.shape}, dtype "
            f"{given.dtype}: encode them as 0..Q-1 first"
        )
    if standardize and not (isinstance(x, np.ndarray) and x.dtype.kind == "f"):
        raise ValueError("standardize=True z-scores numeric features: pass x as a float array (N, ..., F)")
    if not standardize and isinstance(x, np.ndarray) and x.dtype.kind == "f" and np.isnan(x).any():
        raise ValueError(
            "the features hold missing values (NaN), which standardize=True imputes inside each fold. Fix: pass "
            "standardize=True, or fill the missing values in"
        )
    return given


def classifier_probabilities(
    *,
    classifier,
    features,
    labels: np.ndarray,
    num_classes: int | None = None,
    num_folds: int = 4,
    iterations: int = 3,
    seed: int = 1,
    standardize: bool = False,
    progress: bool = False,
    cache: FoldCache | None = None,
) -> np.ndarray:
    """:func:`out_of_fold_probabilities` with any scikit-learn-compatible classifier as the fold models: the same
    M x K folds (:func:`enkcvs.method.folds.fold_indices`, without a validation hold-out: a classifier has no epochs
    to choose from), each fold model a fresh ``sklearn.base.clone`` of ``classifier`` (its ``random_state``, where it
    has one, derived from the seed as the engine's initialisations are) fitted on D minus D_k and asked for
    ``predict_proba`` on D_k.

    Parameters
    ----------
    classifier : an unfitted estimator with ``fit(X, y)`` and ``predict_proba(X)``, e.g. a scikit-learn pipeline.
    features : (N, ...) an array, or a pandas frame (rows taken with ``iloc``), as ``classifier`` takes them.
    labels : (N,) given labels in 0..Q-1.
    num_classes : Q; default the largest label + 1. A class a fold's training part lacks gets probability 0.
    num_folds, iterations, seed, cache : as :func:`out_of_fold_probabilities`.
    standardize : z-score an array's features inside each fold and impute their missing values
        (:func:`enkcvs.training.standardize.standardized`) before the classifier sees them.
    progress : show the progress over the fold models on stderr (:class:`Progress`).

    Returns
    -------
    (M, N, Q) float32, rows summing to 1.
    """
    from sklearn.base import clone

    given = np.asarray(labels, dtype=np.int64)
    num_classes = num_classes or int(given.max()) + 1
    for method in ("fit", "predict_proba"):
        if not callable(getattr(classifier, method, None)):
            raise ValueError(
                f"the classifier {type(classifier).__name__} has no {method}(): pass a scikit-learn-compatible "
                "classifier with fit(X, y) and predict_proba(X), e.g. sklearn.linear_model.LogisticRegression()"
            )
    if standardize:
        features = np.asarray(features, dtype=np.float64)
    stack = np.empty((iterations, len(given), num_classes), dtype=np.float32)
    pending = pending_folds(cache=cache, stack=stack, num_folds=num_folds)
    bar = Progress(total=len(pending), shown=progress, unit="model", what=f"{iterations * num_folds} fold models")
    for m, k in pending:
        held_out, probabilities = _classifier_fold(
            clone(classifier),
            features=features,
            standardize=standardize,
            given=given,
            num_classes=num_classes,
            folds={"seed": seed, "num_folds": num_folds, "iteration": m, "fold": k},
        )
        finished_fold(cache=cache, stack=stack, iteration=m, fold=k, held_out=held_out, probabilities=probabilities)
        bar.end(f"iteration {m}, fold {k}")
    bar.close()
    return stack


def _classifier_fold(
    classifier, *, features, standardize: bool, given: np.ndarray, num_classes: int, folds: dict[str, int]
) -> tuple[np.ndarray, np.ndarray]:
    """The fold ``folds`` names (seed, K, m, k) by a fresh ``classifier``: (held_out (n_k,), probabilities (n_k, Q)
    float32)."""
    train, _, held_out = fold_indices(num_samples=len(given), validation_fraction=0, **folds)
    if "random_state" in classifier.get_params():
        seed = derive_seed(folds["seed"], Purpose.INIT, folds["num_folds"], folds["iteration"], folds["fold"])
        classifier.set_params(random_state=seed % 2**32)
    if standardize:
        features = standardized(features, training=train)
    rows = features.iloc if hasattr(features, "iloc") else features
    classifier.fit(rows[train], given[train])
    probabilities = np.zeros((len(held_out), num_classes), dtype=np.float32)
    probabilities[:, np.asarray(classifier.classes_, dtype=np.int64)] = classifier.predict_proba(rows[held_out])
    return held_out, probabilities


#: Seconds between two progress lines where no bar is shown.
LINE_SECONDS = 10.0


class Progress:
    """Progress over ``total`` units of training (epochs, or fold models) on stderr, with the time left at the pace
    measured so far (from the second unit on once two are done: the first carries the start-up): tqdm's bar in a
    terminal; else, where a bar would be lost (a log file, a cluster job's output), a line at the start, then one
    every :data:`LINE_SECONDS` and at the end."""

    def __init__(self, *, total: int, shown: bool, unit: str, what: str):
        from tqdm import tqdm

        terminal = sys.stderr.isatty()
        self.total, self.done, self.lines, self.unit, self.what = total, 0, shown and not terminal, unit, what
        self.started = self.first = self.printed = time.perf_counter()
        self.bar = tqdm(total=total, desc=what, unit=unit, disable=not (shown and terminal))
        if self.lines and total:
            print(f"{what}: {total} {unit}s to train; the time left follows the first", file=sys.stderr, flush=True)

    def left(self) -> float:
        """Seconds left at the pace measured so far."""
        now = time.perf_counter()
        if self.done >= 2:
            return (now - self.first) / (self.done - 1) * (self.total - self.done)
        return (now - self.started) / max(self.done, 1) * (self.total - self.done)

    def end(self, unit: str) -> None:
        """One ``unit`` (its name in words) done."""
        self.done += 1
        now = time.perf_counter()
        if self.done == 1:
            self.first = now
        self.bar.set_postfix_str(unit, refresh=False)
        self.bar.update()
        if self.lines and (now - self.printed >= LINE_SECONDS or self.done in (1, self.total)):
            self.printed = now
            print(
                f"{self.what}: {self.done} of {self.total} {self.unit}s done ({unit}), {now - self.started:.0f} s "
                f"so far, about {self.left():.0f} s left",
                file=sys.stderr,
                flush=True,
            )

    def close(self) -> None:
        self.bar.close()


def _fold_inputs(x, *, labels: np.ndarray | None, num_classes: int | None):
    """``x`` as :func:`out_of_fold_probabilities` takes it -> (its N samples' inputs, the labels, Q, and
    ``inputs(indices, train)`` for :func:`fold_probabilities`); labels and Q from a dataset where not given."""
    if isinstance(x, Dataset):
        if x.modality == "text":
            raise ValueError("a text dataset's inputs are token ids: pass x=enkcvs.data.text.tokenize(texts, ...)")
        data, split = x, x.x_train
        labels = data.y_train if labels is None else labels
        return (
            split,
            labels,
            num_classes or data.num_classes,
            (lambda indices, train: subset_inputs(data, split, indices, train=train)),
        )
    if not isinstance(x, np.ndarray):
        items = [x[i] for i in range(len(x))]
        x = np.stack([np.asarray(item[0], dtype=np.float32) for item in items])
        labels = np.array([int(item[1]) for item in items]) if labels is None else labels
    return x, labels, num_classes, lambda indices, train: x[indices]
