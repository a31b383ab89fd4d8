"""A user's own data files for ``enkcvs find-issues --data``: which kind they are, the recipe each kind trains with,
the data read and checked in the command's words before anything trains, their out-of-fold probabilities
(:func:`enkcvs.training.crossval.out_of_fold_probabilities`, the code of the workflow's fold jobs) and their review
sheet.

Three kinds, each read by the workflow's own-data source of the same data (:mod:`enkcvs.data.sources.own`):

- ``images``: a folder with one sub-folder of images per class (source ``image_folder``), or a CSV / parquet file
  of image paths and labels (``image_table``); with ``encoder``, each image encoded once by that frozen torchvision
  backbone (:mod:`enkcvs.data.image_embeddings`) and the fold models light heads on the embeddings, as for texts;
- ``texts``: a CSV / parquet file with a text column and a label column (``text_table``), each text encoded once
  by the packaged MiniLM (:mod:`enkcvs.data.embeddings`) and the fold models light heads on the embeddings, or, with
  ``text_recipe`` ``"finetune"``, the transformer fine-tuned in every fold model;
- ``table``: a CSV / parquet file of numeric feature columns and a label column (``table``).
"""

import importlib.util
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from enkcvs.data import image_embeddings
from enkcvs.data.datasets import Dataset
from enkcvs.data.embeddings import POOLING, embed_texts
from enkcvs.data.sources import own
from enkcvs.data.text import DEFAULT_CHECKPOINT
from enkcvs.io import install_command, provenance, write_json
from enkcvs.labelissues.issues import with_sample_column
from enkcvs.labelissues.outputs import (
    checked_out,
    checked_review_top,
    checked_threshold,
    warn_when_most_are_not_kept,
    write_ranking,
)
from enkcvs.labelissues.ownkind import infer_kind
from enkcvs.labelissues.review import DEFAULT_TOP
from enkcvs.training.recipe import Recipe

DEFAULT_FOLDS = 4  # K
DEFAULT_REPETITIONS = 3  # M
DEFAULT_SEED = 1

#: The recipe each kind of data trains its fold models with (``--epochs`` replaces ``epochs``). A table: the
#: one-hidden-layer ``mlp``; images: the paper's MNIST network ``cnn4``, trained from scratch on :data:`IMAGE_SIZE`
#: pixel centre crops; texts: the same ``mlp`` on the texts' embeddings by the frozen default checkpoint
#: (:data:`enkcvs.data.text.DEFAULT_CHECKPOINT`, packaged), with mixup of the embeddings; its settings won on ranking
#: quality and time in benchmarks/text_heads.py (benchmarks/results/text_heads-2026-11-28.json).
#: Images are read in the main process (no DataLoader workers: no worker start per epoch on small folders). Images
#: with an ``encoder`` train the texts' heads recipe on its embeddings (``HEADS``).
DEFAULT_RECIPES: dict[str, dict[str, Any]] = {
    "table": {
        "model": "mlp",
        "optimizer": "sgd",
        "lr": 0.05,
        "momentum": 0.9,
        "weight_decay": 5e-4,
        "epochs": 20,
        "batch_size": 64,
        "mixup_alpha": 0.3,
    },
    "images": {
        "model": "cnn4",
        "optimizer": "sgd",
        "lr": 0.05,
        "momentum": 0.9,
        "weight_decay": 5e-4,
        "epochs": 15,
        "batch_size": 64,
        "mixup_alpha": 0.3,
    },
    "texts": {
        "model": "mlp",
        "optimizer": "adam",
        "lr": 1e-3,
        "momentum": 0.9,
        "weight_decay": 5e-4,
        "epochs": 10,
        "batch_size": 128,
        "mixup_alpha": 0.3,
    },
}
HEADS = "texts"  # the recipe of light heads on frozen embeddings, images' with an encoder too
#: How texts train (``--text-recipe``): ``frozen``, heads on the frozen checkpoint's embeddings
#: (``DEFAULT_RECIPES["texts"]``); ``finetune``, the checkpoint fine-tuned in each fold model with
#: :data:`FINETUNE_RECIPE`.
TEXT_RECIPES = ("frozen", "finetune")
#: The workflow's text recipe (``config/experiments/trec-minilm.yaml``): the checkpoint fine-tuned without mixup
#: (token ids cannot be mixed).
FINETUNE_RECIPE: dict[str, Any] = {
    "model": "text_classifier",
    "optimizer": "adam",
    "lr": 1e-4,
    "epochs": 2,
    "batch_size": 32,
    "mixup_alpha": None,
}
IMAGE_SIZE = 64  # images: the shorter side resized to this many pixels, then the centre square cropped
MAX_TOKENS = 64  # texts: tokens kept per text, as the workflow's datasets.<name>.max_length default
#: The third-party packages each kind needs, with the extra of the ``enkcvs`` package that installs them: training,
#: then the review sheet (a figure for images, Markdown for texts and tables).
NEEDED = {
    "images": {"torch": "train", "torchvision": "train", "PIL": "train", "matplotlib": "report"},
    "texts": {"torch": "train", "transformers": "train", "tabulate": "report"},
    "table": {"torch": "train", "tabulate": "report"},
}
#: The own-data loaders' words for their options (a workflow config's), and the command's for the same.
COMMAND_WORDS = {
    "point source_options.path at": "point --data at",
    "point source_options.root at": "point --data at",
    "set source_options to existing column names": "pass existing column names",
    "source_options.feature_columns": "--feature-columns",
    "source_options.label_column": "--label-column",
    "source_options.id_column": "--id-column",
}


@dataclass(frozen=True)
class OwnData:
    """A user's data read and checked, ready to train on."""

    path: Path  # the --data file or folder
    kind: str  # one of KINDS
    columns: dict[str, str | None]  # the columns read: label, id, image, text
    data: Dataset  # the samples, labels, class names and ids, as the workflow prepares them
    recipe: Recipe  # the fold models' recipe
    inputs: np.ndarray | Dataset  # what the fold models train on: features, embeddings, token ids, or the image files
    standardize: bool = True  # a table's features z-scored inside each fold (enkcvs.training.standardize)
    text_recipe: str | None = None  # texts: one of TEXT_RECIPES
    encoder: str | None = None  # images: the frozen torchvision backbone whose embeddings the heads train on

    @property
    def model(self) -> str:
        """The fold models in words: the recipe's model, and for frozen texts or encoded images what it trains on."""
        frozen = DEFAULT_CHECKPOINT if self.text_recipe == "frozen" else self.encoder
        return f"{self.recipe.model} on frozen {frozen} embeddings" if frozen else self.recipe.model

    def provenance(self) -> dict[str, Any]:
        """What the ranking was computed from, for its provenance record."""
        frozen = self.text_recipe == "frozen"
        encoder = {"encoder": {"checkpoint": DEFAULT_CHECKPOINT, "pooling": POOLING}} if frozen else {}
        images = (
            {
                "encoder": {
                    "torchvision": self.encoder,
                    "weights": str(image_embeddings.default_weights(self.encoder)),
                    "pooling": image_embeddings.POOLING,
                }
            }
            if self.encoder
            else {"image_size": IMAGE_SIZE}
        )
        size = {
            "images": images,
            "texts": {"max_tokens": MAX_TOKENS, "text_recipe": self.text_recipe, **encoder},
            "table": {"standardized": self.standardize},
        }.get(self.kind, {})
        return {
            "data": str(self.path.resolve()),
            "kind": self.kind,
            "columns": self.columns,
            "samples": len(self.data.y_train),
            "classes": list(self.data.class_names),
            "recipe": self.recipe.to_dict(),
            **size,
        }


def find_issues_in_data(
    *,
    data: Path,
    out: Path,
    kind: str | None = None,
    label_column: str | None = None,
    id_column: str | None = None,
    image_column: str | None = None,
    text_column: str | None = None,
    feature_columns: list[str] | None = None,
    standardize: bool = True,
    text_recipe: str | None = None,
    encoder: str | None = None,
    folds: int | None = None,
    repetitions: int | None = None,
    epochs: int | None = None,
    seed: int | None = None,
    threshold: int | None = None,
    review_top: int | None = None,
) -> str:
    """Train the M x K fold models on the user's ``data`` (:func:`read_own_data`, :func:`own_probabilities`), select
    and rank its samples (:func:`enkcvs.labelissues.oof.select`), and write the label-issue table to ``out`` (.csv or
    .parquet; each sample's image path or text after its row and id), the review sheet of its top ``review_top``
    samples beside it (:func:`own_review_sheet`) and what produced it (:func:`provenance_path`: data, seed, K, M, t,
    recipe, package versions). Every check runs before training, every file is written after it.

    Parameters
    ----------
    folds, repetitions, seed : K, M and the seed; None: :data:`DEFAULT_FOLDS`, :data:`DEFAULT_REPETITIONS`,
        :data:`DEFAULT_SEED`.
    threshold : t in 1..M; None: 1 for M = 1, else 2.
    others : as :func:`read_own_data` takes them (``data`` its ``path``).

    Returns
    -------
    The summary line: both sets' sizes and the files written.
    """
    from enkcvs.labelissues.oof import select

    checked_out(out)
    checked_review_top(review_top)
    folds = DEFAULT_FOLDS if folds is None else folds
    repetitions = DEFAULT_REPETITIONS if repetitions is None else repetitions
    seed = DEFAULT_SEED if seed is None else seed
    for option, value, least in (("folds", folds, 2), ("repetitions", repetitions, 1), ("epochs", epochs, 1)):
        if value is not None and value < least:
            raise ValueError(f"--{option} {value}: pass --{option} {least} or more")
    checked_threshold(threshold, iterations=repetitions)
    own_data = read_own_data(
        path=data,
        kind=kind,
        label_column=label_column,
        id_column=id_column,
        image_column=image_column,
        text_column=text_column,
        feature_columns=feature_columns,
        standardize=standardize,
        text_recipe=text_recipe,
        encoder=encoder,
        epochs=epochs,
    )
    samples = own_data.data
    if folds > len(samples.y_train):
        raise ValueError(
            f"--folds {folds}: --data {data} holds {len(samples.y_train)} samples, too few for {folds} "
            "folds. Fix: pass fewer --folds"
        )
    _check_class_sizes(samples, folds=folds, path=data)
    stack = own_probabilities(own_data, folds=folds, repetitions=repetitions, seed=seed)
    result = select(probabilities=stack, labels=samples.y_train, threshold=threshold, class_names=samples.class_names)
    ids = samples.id_column or None
    frame = with_sample_column(result.to_frame(ids=samples.sample_ids, id_column=ids), dataset=samples)
    _warn_when_most_are_not_kept(~frame["kept"].to_numpy())
    caption = (
        f"E-NKCVS ranking of {data.name}: K = {folds}, M = {repetitions} iterations, a sample kept when "
        f"selected in at least t = {result.threshold}; {own_data.model}, seed {seed}"
    )
    sheet = own_review_sheet(own_data, issues=frame, caption=caption, top=review_top or DEFAULT_TOP, id_column=ids)
    summary = write_ranking(frame, result=result, sheet=sheet, out=out)
    record = provenance(
        command="enkcvs find-issues", seed=seed, K=folds, M=repetitions, t=result.threshold, **own_data.provenance()
    )
    write_json(record, provenance_path(out))
    return (
        f"{repetitions} x {folds} fold models trained ({own_data.model}, {own_data.recipe.epochs} epochs, "
        f"seed {seed}); {summary}; how it was made in {provenance_path(out)}"
    )


def provenance_path(out: Path) -> Path:
    """Where what produced the ranking ``out`` is recorded: ``issues.csv`` -> ``issues.provenance.json``."""
    return out.with_name(f"{out.stem}.provenance.json")


def read_own_data(
    *,
    path: Path,
    kind: str | None = None,
    label_column: str | None = None,
    id_column: str | None = None,
    image_column: str | None = None,
    text_column: str | None = None,
    feature_columns: list[str] | None = None,
    standardize: bool = True,
    text_recipe: str | None = None,
    encoder: str | None = None,
    epochs: int | None = None,
) -> OwnData:
    """Read ``path`` as data of ``kind`` (None: inferred, :func:`infer_kind`) with every check that can fail before
    training: the file and its columns, the labels, the packages the kind needs, the texts' tokenizer; texts are
    then encoded (``text_recipe`` ``"frozen"``: :func:`enkcvs.data.embeddings.embed_texts`, cached) or tokenised.

    Parameters
    ----------
    path : a folder of class folders (images), or a CSV / parquet file.
    kind : one of :data:`KINDS`, or None.
    label_column : the labels' column of a file; None: ``label`` where the file has it.
    id_column : a column of unique ids carried to the ranking.
    image_column, text_column : the column of image paths / texts; None: an image column is found by name
        (:data:`enkcvs.labelissues.ownkind.IMAGE_COLUMNS`).
    feature_columns : a table's feature columns; None: every column but the label and id columns.
    standardize : z-score a table's features inside each fold (:mod:`enkcvs.training.standardize`); False only
        for a table.
    text_recipe : how texts train, one of :data:`TEXT_RECIPES`; None: ``"frozen"`` for texts. Texts only.
    encoder : images: a torchvision classification model (``resnet18``) whose frozen embeddings the fold models'
        heads train on (:func:`enkcvs.data.image_embeddings.embed_images`, cached), its weights from torchvision's
        cache (refused without them); None: ``cnn4`` trained from scratch on the pixels. Images only.
    epochs : the fold models' epochs; None: the kind's :data:`DEFAULT_RECIPES`.

    Returns
    -------
    OwnData, its inputs (N, ...) in the file's row order (a folder: sorted by class, then path): frozen texts'
    embeddings (N, 1, 1, D) float32, laid out as a table's features, and likewise images' with an ``encoder``;
    fine-tuned texts' token ids (N, 2, L).

    Raises
    ------
    ValueError, FileNotFoundError : bad input, the message worded in the command's options with the fix.
    """
    kind, columns = infer_kind(
        path=path,
        kind=kind,
        label_column=label_column,
        id_column=id_column,
        image_column=image_column,
        text_column=text_column,
    )
    _check_kind_options(
        path=path,
        kind=kind,
        feature_columns=feature_columns,
        standardize=standardize,
        text_recipe=text_recipe,
        encoder=encoder,
    )
    _check_packages(kind)
    if encoder is not None and (problem := image_embeddings.weights_problem(encoder)) is not None:
        raise ValueError(problem)
    text_recipe = (text_recipe or "frozen") if kind == "texts" else None
    recipe = (
        FINETUNE_RECIPE if text_recipe == "finetune" else DEFAULT_RECIPES[HEADS] if encoder else DEFAULT_RECIPES[kind]
    )
    recipe = Recipe.from_dict({**recipe, **({} if epochs is None else {"epochs": epochs})})
    try:
        with warnings.catch_warnings():  # the class names are kept in the output: their numbering is no news here
            warnings.filterwarnings("ignore", message=".*numbered in sorted order and kept as class names")
            data = _load(path, kind=kind, columns=columns, feature_columns=feature_columns)
    except (ValueError, FileNotFoundError) as error:
        message = str(error)
        for workflow_words, command_words in COMMAND_WORDS.items():
            message = message.replace(workflow_words, command_words)
        raise type(error)(message) from None
    inputs = (
        _embeddings(data)
        if text_recipe == "frozen"
        else _tokens(data, recipe=recipe)
        if text_recipe
        else _image_embeddings(data, encoder=encoder)
        if encoder
        else data.x_train
        if kind == "table"
        else data
    )  # a table's features are in memory, images are files
    return OwnData(
        path=path,
        kind=kind,
        columns=columns,
        data=data,
        recipe=recipe,
        inputs=inputs,
        standardize=standardize,
        text_recipe=text_recipe,
        encoder=encoder,
    )


def recipe_text(kind: str, *, text_recipe: str = "frozen") -> str:
    """The default recipe of ``kind`` (texts: trained as ``text_recipe`` says) in words, for the command's help."""
    recipe = FINETUNE_RECIPE if kind == "texts" and text_recipe == "finetune" else DEFAULT_RECIPES[kind]
    mixup = "no mixup" if recipe["mixup_alpha"] is None else f"mixup alpha {recipe['mixup_alpha']}"
    encoder = "frozen embeddings by " * (text_recipe == "frozen")
    size = {
        "images": f" on {IMAGE_SIZE} x {IMAGE_SIZE} centre crops",
        "texts": f" ({encoder}{DEFAULT_CHECKPOINT}, {MAX_TOKENS} tokens a text)",
    }.get(kind, "")
    return (
        f"{recipe['model']}{size}, {recipe['optimizer']} lr {recipe['lr']:g}, {recipe['epochs']} epochs of "
        f"batches of {recipe['batch_size']}, {mixup}"
    )


def own_probabilities(own_data: OwnData, *, folds: int, repetitions: int, seed: int) -> np.ndarray:
    """The (M, N, Q) out-of-fold probabilities of ``own_data``'s samples: M = ``repetitions`` K-fold
    cross-validations of K = ``folds`` with fresh folds, seeded by ``seed`` as the workflow seeds them, a table's
    features z-scored inside each fold unless ``own_data.standardize`` is False; a bar over the M x K fold models on
    stderr. Fold models on features held in memory (a table's, the texts' embeddings) train stacked, all M x K
    together (``stacked`` of :func:`enkcvs.training.crossval.out_of_fold_probabilities`)."""
    from enkcvs.training.crossval import out_of_fold_probabilities
    from enkcvs.training.device import Execution, default_device

    data, inputs = own_data.data, own_data.inputs
    return out_of_fold_probabilities(
        x=inputs,
        labels=data.y_train,
        recipe=own_data.recipe,
        execution=Execution(device=default_device(), loader_workers=0),
        num_folds=folds,
        iterations=repetitions,
        seed=seed,
        num_classes=data.num_classes,
        progress=True,
        standardize=own_data.kind == "table" and own_data.standardize,
        stacked=isinstance(inputs, np.ndarray) and inputs.dtype.kind == "f",
    )


def own_review_sheet(own_data: OwnData, **sheet):
    """The review sheet of ``own_data``'s ranking (``sheet``: the ``issues``, ``caption``, ``top`` and ``id_column``
    of :func:`enkcvs.labelissues.review.draw_review_sheet`): a figure of the images, or Markdown of the texts or the
    table's feature values."""
    from enkcvs.labelissues.review import draw_review_sheet, table_sheet, text_sheet

    data = own_data.data
    if own_data.kind == "images":
        return draw_review_sheet(images=data.x_train, root=data.image_root, **sheet)
    if own_data.kind == "texts":
        return text_sheet(texts=data.x_train, **sheet)
    return table_sheet(features=data.x_train, feature_names=data.feature_names, **sheet)


def _check_kind_options(
    *,
    path: Path,
    kind: str,
    feature_columns: list[str] | None,
    standardize: bool,
    text_recipe: str | None,
    encoder: str | None,
) -> None:
    """ValueError with the fix for an option that does not fit the data's ``kind`` (or is unknown)."""
    if feature_columns is not None and kind != "table":
        raise ValueError(
            f"--feature-columns chooses a table's features, but --data {path} is read as {kind}. Fix: "
            "drop --feature-columns, or pass --kind table"
        )
    if not standardize and kind != "table":
        raise ValueError(
            f"--no-standardize keeps a table's features as they are, but --data {path} is read as {kind}. "
            "Fix: drop --no-standardize, or pass --kind table"
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


def _check_class_sizes(data: Dataset, *, folds: int, path: Path) -> None:
    """ValueError naming the smallest class and the fix where it has fewer samples than the K = ``folds`` folds: the
    folds are drawn without regard to the labels (:func:`enkcvs.method.folds.kfold_assignment`), so the fold model
    that predicts a sample of a class of c < K samples trains on at most c - 1 of them (none for c = 1) and flags it
    whatever its label."""
    counts = np.bincount(data.y_train, minlength=data.num_classes)  # (Q,)
    smallest = int(counts.argmin())
    count, name = int(counts[smallest]), data.class_names[smallest]
    if count >= folds:
        return
    fix = (
        f"pass --folds {count} or fewer, or add samples of class {name!r}"
        if count >= 2
        else f"add samples of class {name!r} (a class needs at least 2), or drop its row"
    )
    raise ValueError(
        f"--folds {folds}: class {name!r} of --data {path} has {count} sample{'s' * (count != 1)}, fewer "
        f"than the {folds} folds, so the fold models that predict them learn too few of that class and "
        f"flag them whatever their labels. Fix: {fix}"
    )


def _check_packages(kind: str) -> None:
    """ValueError naming the extra to install, before anything is read, for a package the kind needs and this
    environment lacks."""
    missing = {package: extra for package, extra in NEEDED[kind].items() if importlib.util.find_spec(package) is None}
    if missing:
        extras = ",".join(sorted(set(missing.values())))
        raise ValueError(
            f"--data of kind {kind} needs {', '.join(missing)}, not installed here. Fix: "
            f"{install_command(extras=extras)} (or pass --probabilities from a model of your own)"
        )


def _load(path: Path, *, kind: str, columns: dict[str, str | None], feature_columns: list[str] | None) -> Dataset:
    """The data at ``path`` through the workflow's own-data loader of its kind."""
    if path.is_dir():
        return own.load_image_folder(root=str(path), resize=IMAGE_SIZE, crop=IMAGE_SIZE)
    common = {"path": str(path), "label_column": columns["label"], "id_column": columns["id"]}
    if kind == "images":
        return own.load_image_table(**common, image_column=columns["image"], resize=IMAGE_SIZE, crop=IMAGE_SIZE)
    if kind == "texts":
        return own.load_text_table(**common, text_column=columns["text"])
    return own.load_table(**common, feature_columns=feature_columns)


def _embeddings(data: Dataset) -> np.ndarray:
    """The texts' embeddings by the frozen default checkpoint, as a table's features (N, 1, 1, D) float32."""
    try:
        vectors = embed_texts(list(data.x_train), checkpoint=DEFAULT_CHECKPOINT, max_tokens=MAX_TOKENS)  # (N, D)
    except (RuntimeError, ImportError) as error:
        raise ValueError(str(error)) from None
    return vectors.reshape(len(vectors), 1, 1, -1)


def _image_embeddings(data: Dataset, *, encoder: str) -> np.ndarray:
    """The images' embeddings by the frozen ``encoder``, as a table's features (N, 1, 1, D) float32."""
    vectors = image_embeddings.embed_images(list(data.x_train), root=data.image_root, encoder=encoder)  # (N, D)
    return vectors.reshape(len(vectors), 1, 1, -1)


def _tokens(data: Dataset, *, recipe: Recipe) -> np.ndarray:
    """The texts' token ids (N, 2, L) for the recipe's checkpoint, as the workflow's tokenise rule makes them."""
    from enkcvs.data.text import tokenize

    try:
        return tokenize(
            list(data.x_train),
            checkpoint=recipe.model_options.get("checkpoint", DEFAULT_CHECKPOINT),
            max_length=MAX_TOKENS,
        )
    except (RuntimeError, ImportError) as error:
        raise ValueError(str(error)) from None


def _warn_when_most_are_not_kept(flags: np.ndarray) -> None:
    """A warning with the likely causes when over half of the (N,) samples are not kept (``flags``)."""
    warn_when_most_are_not_kept(
        flags,
        causes=(
            ": the fold models predict fewer than half of the given labels. Likely the recipe is too short for this data "
            "(raise --epochs) or the data too small to learn from, rarely that many labels are wrong. Check these before "
            "trusting the ranking"
        ),
    )
