"""The checks of ``enkcvs find-issues --data`` that need no data read, or only its labels: options that do not fit the
kind of data, packages the kind needs, and classes too small for the folds; each a ValueError naming the fix, raised
before anything is encoded or trained."""

import importlib.util
from pathlib import Path

import numpy as np

from enkcvs.data.datasets import Dataset
from enkcvs.io import install_command

#: How texts train (``--text-recipe``): ``frozen``, heads on the frozen checkpoint's embeddings (the ``texts``
#: recipe of :data:`enkcvs.labelissues.owndata.DEFAULT_RECIPES`); ``finetune``, the checkpoint fine-tuned in each fold
#: model with :data:`enkcvs.labelissues.owndata.FINETUNE_RECIPE`.
TEXT_RECIPES = ("frozen", "finetune")
#: The third-party packages each kind needs, with the extra of the ``enkcvs`` package that installs them: training,
#: then the review sheet (a figure for images, Markdown for texts and tables).
NEEDED = {
    "images": {"torch": "train", "torchvision": "train", "PIL": "train", "matplotlib": "report"},
    "texts": {"torch": "train", "transformers": "train", "tabulate": "report"},
    "table": {"torch": "train", "tabulate": "report"},
}


def check_kind_options(
    *,
    path: Path,
    kind: str,
    feature_columns: list[str] | None,
    standardize: bool,
    text_recipe: str | None,
    encoder: str | None,
    classifier: str | None = None,
) -> None:
    """ValueError with the fix for an option that does not fit the data's ``kind`` (or is unknown)."""
    if classifier is not None and (kind == "images" and encoder is None or text_recipe == "finetune"):
        raise ValueError(
            f"--classifier {classifier} trains on features held in memory, and --data {path} is read as "
            f"{'images without --encoder' if kind == 'images' else 'texts to fine-tune'}. Fix: pass "
            f"{'--encoder resnet18' if kind == 'images' else 'no --text-recipe'}, or drop --classifier"
        )
    if feature_columns is not None and kind != "table":
        raise ValueError(
            f"--feature-columns chooses a table's features, but --data {path} is read as {kind}. Fix: "
            "drop --feature-columns, or pass --kind table"
        )
    if not standardize and kind == "images" and encoder is None:
        raise ValueError(
            f"--no-standardize keeps a table's features or the embeddings as they are, but --data {path} is read as "
            "images without --encoder. Fix: drop --no-standardize, or pass --encoder"
        )
    if text_recipe not in (None, *TEXT_RECIPES) or text_recipe is not None and kind != "texts":
        fix = f"use one of {', '.join(TEXT_RECIPES)}" if kind == "texts" else "drop --text-recipe, or pass --kind texts"
        raise ValueError(
            f"--text-recipe {text_recipe} chooses how texts train, and --data {path} is read as {kind}. Fix: {fix}"
        )
    if encoder is not None and kind != "images":
        raise ValueError(
            f"--encoder {encoder} encodes images, and --data {path} is read as {kind}. Fix: drop "
            "--encoder, or pass --kind images"
        )


#: Classes an error names one by one; the rest are counted.
NAMED_CLASSES = 5


def check_class_sizes(data: Dataset, *, folds: int, path: Path) -> None:
    """ValueError where the data hold fewer samples than the K = ``folds`` folds, or naming, in one message, every
    class with fewer samples than that, and the fix:
    the folds are drawn without regard to the labels (:func:`enkcvs.method.folds.kfold_assignment`), so the fold model
    that predicts a sample of a class of c < K samples trains on at most c - 1 of them (none for c = 1) and flags it
    whatever its label."""
    if folds > len(data.y_train):
        raise ValueError(
            f"--folds {folds}: --data {path} holds {len(data.y_train)} samples, too few for {folds} folds. Fix: pass "
            "fewer --folds"
        )
    counts = np.bincount(data.y_train, minlength=data.num_classes)  # (Q,)
    small = [index for index in np.argsort(counts, kind="stable") if counts[index] < folds]
    if not small:
        return
    named = ", ".join(f"{data.class_names[index]!r} ({counts[index]})" for index in small[:NAMED_CLASSES])
    if len(small) > NAMED_CLASSES:
        named += f" and {len(small) - NAMED_CLASSES} more"
    smallest = int(counts[small[0]])
    fewer = f"pass --folds {smallest} or fewer, or " if smallest >= 2 else ""
    unique = (
        "every label is unique (an id column?): name the column of the classes with --label-column, or "
        if counts.max() == 1
        else ""
    )
    raise ValueError(
        f"--folds {folds}: {len(small)} of {data.num_classes} classes of --data {path} "
        f"{'have' if len(small) != 1 else 'has'} fewer samples than the {folds} folds: {named}; the fold models that "
        f"predict them learn too few of their class and flag them whatever their labels. Fix: {unique}{fewer}add "
        f"samples of these classes, or drop their rows (at --folds {folds} a class needs {folds} samples, and "
        "--folds is at least 2)"
    )


def check_packages(kind: str) -> None:
    """ValueError naming the extra to install, before anything is read, for a package the kind needs and this
    environment lacks."""
    missing = {package: extra for package, extra in NEEDED[kind].items() if importlib.util.find_spec(package) is None}
    if missing:
        extras = ",".join(sorted(set(missing.values())))
        raise ValueError(
            f"--data of kind {kind} needs {', '.join(missing)}, not installed here. Fix: "
            f"{install_command(extras=extras)} (or pass --probabilities from a model of your own)"
        )
