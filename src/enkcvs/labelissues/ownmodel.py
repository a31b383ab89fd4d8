"""E-NKCVS with a model of your own: any scikit-learn-compatible classifier trained as the M x K fold models, as
cleanlab's ``CleanLearning(clf)`` takes one, and the label-issue frame back in the data's order.

    from sklearn.linear_model import LogisticRegression
    import enkcvs
    issues = enkcvs.find_issues(features=X, labels=y, classifier=LogisticRegression(max_iter=1000))

``enkcvs find-issues --data table.csv --classifier mypackage.models:make_classifier`` does the same from the command
line: the factory is imported and called with no arguments for the unfitted classifier.
"""

import importlib
from collections.abc import Hashable, Sequence

import numpy as np
import pandas as pd

from enkcvs.labelissues.oof import (
    DEFAULT_FOLDS,
    DEFAULT_REPETITIONS,
    DEFAULT_SEED,
    encoded_labels,
    select,
)


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
    progress: bool = False,
) -> pd.DataFrame:
    """Train ``classifier`` as the M x K fold models on ``features`` and the given ``labels``
    (:func:`enkcvs.training.crossval.classifier_probabilities`), select and rank the samples
    (:func:`enkcvs.labelissues.oof.select`), and return the label-issue frame: one row per sample in the data's order,
    numbered from 1 (``row``), cleanlab's ``is_label_issue``, ``label_score``, ``given_label`` and ``predicted_label``,
    then ``rank``, ``votes`` and ``kept`` (:func:`enkcvs.labelissues.issues.label_issue_table`), as the command
    writes it.

    Parameters
    ----------
    features : (N, ...) an array or a pandas frame, as ``classifier.fit`` takes it (preprocess inside ``classifier``,
        e.g. a scikit-learn pipeline, so that each fold model fits it on its own training part).
    labels : (N,) the given labels: ints in 0..Q-1, or class names (mapped in the order of ``class_names`` or, without
        it, of their sorted distinct values).
    classifier : an unfitted estimator with ``fit(X, y)`` and ``predict_proba(X)``; cloned for every fold model.
    folds, repetitions, seed : K, M and the seed of the folds (and of ``random_state``, where the classifier has one).
    threshold : t in 1..M; None: 1 for M = 1, else 2.
    class_names : the Q class names in class-index order.
    progress : show the progress over the fold models on stderr.

    Returns
    -------
    pandas.DataFrame, N rows.
    """
    from enkcvs.training.crossval import classifier_probabilities

    values = np.asarray(labels)
    if len(values) != len(features):
        raise ValueError(
            f"labels hold {len(values)} entries for {len(features)} rows of features: pass one label per row, in order"
        )
    if class_names is None and values.dtype.kind not in "iu":
        class_names = sorted(set(values.tolist()))
    names = None if class_names is None else tuple(class_names)
    num_classes = len(names) if names else int(values.max()) + 1
    codes, _ = encoded_labels(
        values, what="labels", num_samples=len(values), num_classes=num_classes, class_names=names, infer_names=False
    )
    if not 2 <= folds <= len(codes):
        raise ValueError(f"folds={folds}: K must lie in 2..N = {len(codes)}")
    stack = classifier_probabilities(
        classifier=classifier,
        features=features,
        labels=codes,
        num_classes=num_classes,
        num_folds=folds,
        iterations=repetitions,
        seed=seed,
        progress=progress,
    )
    result = select(probabilities=stack, labels=codes, threshold=threshold, class_names=names)
    return result.to_frame()


def classifier_from_factory(spec: str):
    """The unfitted classifier that ``spec``, ``"package.module:function"``, returns when called with no arguments;
    ValueError naming the problem and the fix where it cannot be imported or called, or lacks ``fit`` or
    ``predict_proba``."""
    module_name, colon, name = spec.partition(":")
    if not colon or not module_name or not name:
        raise ValueError(
            f"--classifier {spec}: expected MODULE:FACTORY, e.g. mymodels:make_classifier, a function of an "
            "importable module that returns an unfitted scikit-learn-compatible classifier"
        )
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ValueError(
            f"--classifier {spec}: cannot import {module_name} ({error}). Fix: install it, or run from the folder "
            "that holds it"
        ) from None
    factory = getattr(module, name, None)
    if not callable(factory):
        raise ValueError(f"--classifier {spec}: {module_name} has no function {name}. Fix: name one it defines")
    classifier = factory()
    missing = [method for method in ("fit", "predict_proba") if not callable(getattr(classifier, method, None))]
    if missing:
        raise ValueError(
            f"--classifier {spec}: what {name}() returns ({type(classifier).__name__}) has no {' or '.join(missing)}. "
            "Fix: return a scikit-learn-compatible classifier with fit(X, y) and predict_proba(X)"
        )
    return classifier
