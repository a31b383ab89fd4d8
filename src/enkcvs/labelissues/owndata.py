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

import sys
import warnings
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from enkcvs.data import image_embeddings
from enkcvs.data.checkpoints import DEFAULT_CHECKPOINT
from enkcvs.data.datasets import Dataset
from enkcvs.data.embeddings import POOLING, embed_texts
from enkcvs.data.sources import own
from enkcvs.io import provenance, write_json
from enkcvs.labelissues import determinism
from enkcvs.labelissues.issues import dataset_row_names
from enkcvs.labelissues.oof import DEFAULT_FOLDS, DEFAULT_REPETITIONS, DEFAULT_SCORE, DEFAULT_SEED
from enkcvs.labelissues.outputs import (
    checked_out,
    checked_review_top,
    checked_threshold,
    warn_when_most_are_not_kept,
    write_ranking,
)
from enkcvs.labelissues.ownchecks import check_class_sizes, check_kind_options, check_packages
from enkcvs.labelissues.ownkind import infer_kind, with_detected_id
from enkcvs.labelissues.review import DEFAULT_TOP
from enkcvs.training.recipe import Recipe

#: The recipe each kind of data trains its fold models with (``--epochs`` replaces ``epochs``). A table: the
#: one-hidden-layer ``mlp``; images: the paper's MNIST network ``cnn4``, trained from scratch on :data:`IMAGE_SIZE`
#: pixel centre crops; texts: the same ``mlp`` on the texts' embeddings by the frozen default checkpoint
#: (:data:`enkcvs.data.checkpoints.DEFAULT_CHECKPOINT`, packaged), with mixup of the embeddings; its settings won on ranking
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
    standardize: bool = True  # features z-scored and imputed inside each fold (enkcvs.training.standardize)
    text_recipe: str | None = None  # texts: one of enkcvs.labelissues.ownchecks.TEXT_RECIPES
    encoder: str | None = None  # images: the frozen torchvision backbone whose embeddings the heads train on
    classifier: Any = None  # the user's unfitted scikit-learn-compatible classifier (--classifier), else None
    classifier_spec: str | None = None  # the --classifier factory that made it

    @property
    def model(self) -> str:
        """The fold models in words: the recipe's model (or the user's classifier), and for frozen texts or encoded
        images what it trains on."""
        frozen = DEFAULT_CHECKPOINT if self.text_recipe == "frozen" else self.encoder
        model = self.recipe.model if self.classifier is None else type(self.classifier).__name__
        return f"{model} on frozen {frozen} embeddings" if frozen else model

    @property
    def in_memory(self) -> bool:
        """Whether the fold models train on features held in memory (a table's, or embeddings)."""
        return isinstance(self.inputs, np.ndarray) and self.inputs.dtype.kind == "f"

    @cached_property
    def digests(self) -> np.ndarray:
        """(N,) a digest of each sample's content: its features, text or image path, label and id
        (:func:`enkcvs.labelissues.determinism.dataset_digests`)."""
        return determinism.dataset_digests(self.data)

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
        }.get(self.kind, {})
        return {
            "data": str(self.path.resolve()),
            "data_sha256": determinism.data_digest(self.digests),  # of the rows' content, in any order
            "kind": self.kind,
            "columns": self.columns,
            "samples": len(self.data.y_train),
            "classes": list(self.data.class_names),
            **(
                {"recipe": self.recipe.to_dict()}
                if self.classifier is None
                else {"classifier": {"factory": self.classifier_spec, "estimator": repr(self.classifier)}}
            ),
            "standardized": self.standardize and self.in_memory,
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
    classifier: str | None = None,
    cache: bool = True,
    by_rank: bool = False,
) -> str:
    """Train the M x K fold models on the user's ``data`` (:func:`read_own_data`, :func:`own_probabilities`), select
    and rank its samples (:func:`enkcvs.labelissues.oof.select`), and write the label-issue table to ``out`` (.csv or
    .parquet; each row named by its id, else its image's path, else its number; sorted by rank with ``by_rank``,
    else in the data's order), the review sheet of its top ``review_top``
    samples beside it (:func:`own_review_sheet`) and what produced it (:func:`provenance_path`: data, seed, K, M, t,
    recipe, package versions, device and threads: :func:`enkcvs.labelissues.determinism.computed_with`). Every check
    runs before training, every file is written after it. The same rows in any order, on any number of threads, give
    the same files (:mod:`enkcvs.labelissues.determinism`), but for the provenance's record of the threads.

    Parameters
    ----------
    folds, repetitions, seed : K, M and the seed; None: :data:`DEFAULT_FOLDS`, :data:`DEFAULT_REPETITIONS`,
        :data:`DEFAULT_SEED`.
    threshold : t in 1..M; None: 1 for M = 1, else 2.
    cache : keep each finished fold model's held-out probabilities in the cache (:mod:`enkcvs.training.foldcache`,
        keyed by the data and every setting), and take those a stopped run of the same data and settings left, so
        that it goes on where it stopped; False: train every fold model afresh.
    others : as :func:`read_own_data` takes them (``data`` its ``path``).

    Returns
    -------
    The summary line: both sets' sizes and the files written.
    """
    from enkcvs.labelissues.oof import select
    from enkcvs.labelissues.parallel import fold_processes

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
        classifier=classifier,
        folds=folds,
    )
    samples = own_data.data
    one_by_one = own_data.classifier is None and not own_data.in_memory  # images from scratch, fine-tuned texts
    processes = fold_processes(models=folds * repetitions, one_by_one=one_by_one)
    stack = own_probabilities(
        own_data, folds=folds, repetitions=repetitions, seed=seed, cache=cache, processes=processes
    )
    result = select(
        probabilities=stack,
        labels=samples.y_train,
        threshold=threshold,
        class_names=samples.class_names,
        sample_keys=own_data.digests,
    )
    frame = result.to_frame(**dataset_row_names(samples))
    _warn_when_most_are_not_kept(~frame["kept"].to_numpy())
    caption = (
        f"E-NKCVS ranking of {data.name}: K = {folds}, M = {repetitions} iterations, a sample kept when "
        f"selected in at least t = {result.threshold}; {own_data.model}, seed {seed}"
    )
    sheet = own_review_sheet(own_data, issues=frame, caption=caption, top=review_top or DEFAULT_TOP)
    summary = write_ranking(frame, result=result, sheet=sheet, out=out, by_rank=by_rank)
    record = provenance(
        command="enkcvs find-issues",
        seed=seed,
        K=folds,
        M=repetitions,
        t=result.threshold,
        score=DEFAULT_SCORE,
        **own_data.provenance(),
        computed_with=determinism.computed_with(processes=processes),
    )
    write_json(record, provenance_path(out))
    epochs = "" if own_data.classifier is not None else f", {own_data.recipe.epochs} epochs"
    return (
        f"{repetitions} x {folds} fold models trained ({own_data.model}{epochs}, seed {seed}); {summary}; how it was "
        f"made in {provenance_path(out)}"
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
    classifier: str | None = None,
    folds: int | None = None,
) -> OwnData:
    """Read ``path`` as data of ``kind`` (None: inferred, :func:`infer_kind`) with every check that can fail before
    training: the file and its columns, the labels, the packages the kind needs, the texts' tokenizer; texts are
    then encoded (``text_recipe`` ``"frozen"``: :func:`enkcvs.data.embeddings.embed_texts`, cached) or tokenised.

    Parameters
    ----------
    path : a folder of class folders (images), or a CSV / parquet file.
    kind : one of :data:`KINDS`, or None.
    label_column : the labels' column of a file; None: ``label`` where the file has it.
    id_column : a column of unique ids that names the rows in the ranking; None: the column that looks like row ids
        (:func:`enkcvs.labelissues.ownkind.with_detected_id`), where a file has one.
    image_column, text_column : the column of image paths / texts; None: an image column is found by name
        (:data:`enkcvs.labelissues.ownkind.IMAGE_COLUMNS`).
    feature_columns : a table's feature columns; None: every column but the label and id columns.
    standardize : z-score features held in memory (a table's, embeddings) and impute their missing values inside each
        fold (:mod:`enkcvs.training.standardize`); False keeps them as they are, refusing a table's missing values.
    text_recipe : how texts train, one of :data:`enkcvs.labelissues.ownchecks.TEXT_RECIPES`; None: ``"frozen"`` for
        texts. Texts only.
    encoder : images: a torchvision classification model (``resnet18``) whose frozen embeddings the fold models'
        heads train on (:func:`enkcvs.data.image_embeddings.embed_images`, cached), its weights from torchvision's
        cache (refused without them); None: ``cnn4`` trained from scratch on the pixels. Images only.
    epochs : the fold models' epochs; None: the kind's :data:`DEFAULT_RECIPES`.
    classifier : ``MODULE:FACTORY``, a function returning an unfitted scikit-learn-compatible classifier to train as
        the fold models instead of the recipe's (:func:`enkcvs.labelissues.ownmodel.classifier_from_factory`); for
        features held in memory: a table's, texts' frozen embeddings, images' with an ``encoder``.
    folds : K, to check before anything is encoded that every class has at least K samples; None: unchecked.

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
    check_kind_options(
        path=path,
        kind=kind,
        feature_columns=feature_columns,
        standardize=standardize,
        text_recipe=text_recipe,
        encoder=encoder,
        classifier=classifier,
    )
    check_packages(kind)
    columns = with_detected_id(path, columns=columns, feature_columns=feature_columns)
    if encoder is not None and (problem := image_embeddings.weights_problem(encoder)) is not None:
        raise ValueError(problem)
    estimator = None
    if classifier is not None:
        from enkcvs.labelissues.ownmodel import classifier_from_factory

        estimator = classifier_from_factory(classifier)
    text_recipe = (text_recipe or "frozen") if kind == "texts" else None
    recipe = (
        FINETUNE_RECIPE if text_recipe == "finetune" else DEFAULT_RECIPES[HEADS] if encoder else DEFAULT_RECIPES[kind]
    )
    recipe = Recipe.from_dict({**recipe, **({} if epochs is None else {"epochs": epochs})})
    data = _load(path, kind=kind, columns=columns, feature_columns=feature_columns, missing=standardize)
    if folds is not None:
        check_class_sizes(data, folds=folds, path=path)
    print(
        f"read {len(data.y_train)} samples of {data.num_classes} classes from {path} ({kind})",
        file=sys.stderr,
        flush=True,
    )
    if text_recipe == "frozen" or encoder:
        frozen = encoder or DEFAULT_CHECKPOINT
        print(f"encoding {len(data.y_train)} {kind} with {frozen} (once; cached for later runs)", file=sys.stderr)
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
        classifier=estimator,
        classifier_spec=classifier,
    )


def _in_command_words(message: str) -> str:
    """A message of the own-data loaders, worded in the command's options (:data:`COMMAND_WORDS`)."""
    for workflow_words, command_words in COMMAND_WORDS.items():
        message = message.replace(workflow_words, command_words)
    return message


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


def own_probabilities(
    own_data: OwnData, *, folds: int, repetitions: int, seed: int, cache: bool = True, processes: int = 1
) -> np.ndarray:
    """The (M, N, Q) out-of-fold probabilities of ``own_data``'s samples: M = ``repetitions`` K-fold
    cross-validations of K = ``folds`` with fresh folds, seeded by ``seed`` as the workflow seeds them; features held
    in memory (a table's, embeddings) z-scored and imputed inside each fold unless ``own_data.standardize`` is False
    (for embeddings, measured: benchmarks/find_issues_vs_cleanlab.py); progress on stderr. The user's classifier
    trains as :func:`enkcvs.training.crossval.classifier_probabilities` trains it; the recipe's fold models on
    features in memory train stacked, all M x K together (``stacked`` of
    :func:`enkcvs.training.crossval.out_of_fold_probabilities`), the others one by one, or in ``processes`` side by
    side (:mod:`enkcvs.labelissues.parallel`). With ``cache``, finished fold models are kept and taken again
    (:class:`enkcvs.training.foldcache.FoldCache`, keyed by the inputs, labels and settings). The same rows in any
    order, on any number of threads or ``processes``, give the same probabilities, bitwise: the samples train sorted
    by their ``own_data.digests``, each fold model on one thread (:mod:`enkcvs.labelissues.determinism`).
    """
    from enkcvs.labelissues.parallel import parallel_fold_probabilities
    from enkcvs.training.crossval import classifier_probabilities, out_of_fold_probabilities
    from enkcvs.training.device import Execution, default_device
    from enkcvs.training.foldcache import FoldCache, cache_key

    order = determinism.canonical_order(own_data.digests)  # (N,): row i of the canonical order is sample order[i]
    data, inputs, labels = own_data.data, determinism.in_order(own_data.inputs, order), own_data.data.y_train[order]
    standardize = own_data.standardize and own_data.in_memory
    settings = {"K": folds, "M": repetitions, "seed": seed, "standardize": standardize, "kind": own_data.kind}
    settings["training"] = "rows in canonical order, one thread"  # an older cache's fold models trained otherwise
    model = (
        {"recipe": own_data.recipe.to_dict()}
        if own_data.classifier is None
        else {"classifier": repr(own_data.classifier)}
    )
    folds_cache = (
        FoldCache.for_key(cache_key(inputs=_cache_inputs(inputs), labels=labels, settings={**settings, **model}))
        if cache
        else None
    )
    common = {"num_folds": folds, "iterations": repetitions, "seed": seed, "num_classes": data.num_classes}
    with determinism.one_thread():
        if own_data.classifier is not None:
            stack = classifier_probabilities(
                classifier=own_data.classifier,
                features=inputs.reshape(len(inputs), -1),
                labels=labels,
                standardize=standardize,
                progress=True,
                cache=folds_cache,
                **common,
            )
        elif processes > 1:
            stack = parallel_fold_probabilities(
                x=inputs, labels=labels, recipe=own_data.recipe, processes=processes, cache=folds_cache, **common
            )
        else:
            stack = out_of_fold_probabilities(
                x=inputs,
                labels=labels,
                recipe=own_data.recipe,
                execution=Execution(device=default_device(), loader_workers=0),
                progress=True,
                standardize=standardize,
                stacked=own_data.in_memory,
                cache=folds_cache,
                **common,
            )
    return stack[:, np.argsort(order)]  # back in the data's order


def _cache_inputs(inputs: np.ndarray | Dataset):
    """The fold models' ``inputs`` as the cache keys them: the array, or the image files' paths, sizes and times."""
    if isinstance(inputs, np.ndarray):
        return inputs
    root = Path(inputs.image_root or ".")
    return [f"{path}:{(stat := (root / str(path)).stat()).st_size}:{stat.st_mtime_ns}" for path in inputs.x_train]


def own_review_sheet(own_data: OwnData, **sheet):
    """The review sheet of ``own_data``'s ranking (``sheet``: the ``issues``, ``caption`` and ``top``
    of :func:`enkcvs.labelissues.review.draw_review_sheet`): a figure of the images, or Markdown of the texts or the
    table's feature values."""
    from enkcvs.labelissues.review import draw_review_sheet, table_sheet, text_sheet

    data = own_data.data
    if own_data.kind == "images":
        return draw_review_sheet(images=data.x_train, root=data.image_root, **sheet)
    if own_data.kind == "texts":
        return text_sheet(texts=data.x_train, **sheet)
    return table_sheet(features=data.x_train, feature_names=data.feature_names, **sheet)


def _load(
    path: Path, *, kind: str, columns: dict[str, str | None], feature_columns: list[str] | None, missing: bool
) -> Dataset:
    """The data at ``path`` through the workflow's own-data loader of its kind (a table's missing values kept for the
    folds to impute where ``missing``, else refused), its errors and lines worded in the command's options."""
    try:
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            data = _loaded(path, kind=kind, columns=columns, feature_columns=feature_columns, missing=missing)
    except (ValueError, FileNotFoundError) as error:
        raise type(error)(_in_command_words(str(error))) from None
    for warning in said:  # the class names are kept in the output: their numbering is no news here
        if "numbered in sorted order and kept as class names" not in str(warning.message):
            warnings.warn(_in_command_words(str(warning.message)), type(warning.message), stacklevel=4)
    return data


def _loaded(
    path: Path, *, kind: str, columns: dict[str, str | None], feature_columns: list[str] | None, missing: bool
) -> Dataset:
    """The data at ``path`` through the workflow's own-data loader of its kind."""
    if path.is_dir():
        return own.load_image_folder(root=str(path), resize=IMAGE_SIZE, crop=IMAGE_SIZE)
    common = {"path": str(path), "label_column": columns["label"], "id_column": columns["id"]}
    if kind == "images":
        return own.load_image_table(**common, image_column=columns["image"], resize=IMAGE_SIZE, crop=IMAGE_SIZE)
    if kind == "texts":
        return own.load_text_table(**common, text_column=columns["text"])
    return own.load_table(**common, feature_columns=feature_columns, missing="keep" if missing else "refuse")


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
