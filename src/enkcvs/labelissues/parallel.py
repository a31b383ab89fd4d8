"""Fold models trained side by side in processes, each on one thread: on a CPU, the M x K fold models that train one
by one (images from scratch, fine-tuned texts: :func:`enkcvs.training.crossval.fold_probabilities`) take the cores
that threads inside one training would, while each stays a training on one thread, whose result does not depend on
the number of threads (:mod:`enkcvs.labelissues.determinism`) nor on the process that runs it.
"""

import concurrent.futures
import multiprocessing
from typing import Any

import numpy as np

from enkcvs.data.datasets import Dataset
from enkcvs.labelissues.determinism import one_thread
from enkcvs.training.foldcache import FoldCache
from enkcvs.training.recipe import Recipe

#: A worker process's inputs and fold settings, set once as it starts (:func:`_start`).
_WORKER: dict[str, Any] = {}


def fold_processes(*, models: int, one_by_one: bool, jobs: int | None = None) -> int:
    """How many processes train the ``models`` fold models side by side: for fold models that train ``one_by_one`` on
    a CPU, ``jobs`` (``--jobs``), else as many as torch has threads (``OMP_NUM_THREADS``, else the cores), up to
    ``models``; else 1. The probabilities are the same for any number."""
    import torch

    from enkcvs.training.device import default_device

    if not one_by_one or default_device().type != "cpu":
        return 1
    return max(1, min(jobs or torch.get_num_threads(), models))


def parallel_fold_probabilities(
    *,
    x: np.ndarray | Dataset,
    labels: np.ndarray,
    recipe: Recipe,
    num_folds: int,
    iterations: int,
    seed: int,
    num_classes: int,
    processes: int,
    cache: FoldCache | None = None,
    progress: bool = False,
) -> np.ndarray:
    """What :func:`enkcvs.training.crossval.out_of_fold_probabilities` returns for the same arguments on the CPU with
    one thread, bitwise: the (M, N, Q) float32 probabilities of ``x`` (token ids (N, 2, L) or a Dataset of image
    files) and ``labels`` (N,), the fold models trained by ``processes`` worker processes (spawned, so that no thread
    pool of this one is inherited), each on one thread; ``cache`` and ``progress`` as there."""
    from enkcvs.training.crossval import Progress, finished_fold, pending_folds

    stack = np.empty((iterations, len(labels), num_classes), dtype=np.float32)
    pending = pending_folds(cache=cache, stack=stack, num_folds=num_folds)
    bar = Progress(
        total=len(pending),
        shown=progress,
        unit="model",
        what=f"{iterations * num_folds} fold models, {processes} side by side",
    )
    common = {"recipe": recipe, "given": labels, "num_classes": num_classes, "seed": seed, "num_folds": num_folds}
    if pending:  # a process starts in seconds (torch's import): none where the cache holds every fold model
        with concurrent.futures.ProcessPoolExecutor(
            max_workers=min(processes, len(pending)),
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start,
            initargs=(x, common),
        ) as pool:
            folds = {pool.submit(_fold, m, k): (m, k) for m, k in pending}
            for done in concurrent.futures.as_completed(folds):
                m, k = folds[done]
                held_out, probabilities = done.result()
                finished_fold(
                    cache=cache, stack=stack, iteration=m, fold=k, held_out=held_out, probabilities=probabilities
                )
                bar.end(f"iteration {m}, fold {k}")
    bar.close()
    return stack


def _start(x: np.ndarray | Dataset, common: dict[str, Any]) -> None:
    """A worker's start: the inputs and fold settings it trains every fold of, kept for :func:`_fold`."""
    _WORKER.update(x=x, common=common)


def _fold(iteration: int, fold: int) -> tuple[np.ndarray, np.ndarray]:
    """Fold k of iteration m trained in this worker on one thread: (held_out (n_k,), probabilities (n_k, Q))."""
    import torch

    from enkcvs.training.crossval import fold_probabilities
    from enkcvs.training.device import Execution
    from enkcvs.training.inputs import subset_inputs

    x = _WORKER["x"]
    if isinstance(x, Dataset):
        inputs = lambda indices, train: subset_inputs(x, x.x_train, indices, train=train)  # noqa: E731
    else:
        inputs = lambda indices, _train: x[indices]  # noqa: E731
    with one_thread():
        held_out, probabilities, _ = fold_probabilities(
            inputs=inputs,
            iteration=iteration,
            fold=fold,
            execution=Execution(device=torch.device("cpu"), loader_workers=0),
            **_WORKER["common"],
        )
    return held_out, probabilities
