"""The reader of a user's own files for ``enkcvs find-issues --data`` (:func:`read_data`): which kind they are, the
recipe each kind trains with, and the data read, checked and encoded in the command's words before anything trains,
through the workflow's own-data sources (:mod:`enkcvs.data.sources.own`). ``images``: a folder of class folders or a
table of image paths (with ``--encoder``, heads on a frozen torchvision backbone's embeddings); ``texts``: a table
with a text column (:data:`TEXT_RECIPES`); ``table``: features.
"""

import importlib
import importlib.util
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from enkcvs.data import image_embeddings
from enkcvs.data.checkpoints import DEFAULT_CHECKPOINT
from enkcvs.data.datasets import Dataset
from enkcvs.data.embeddings import POOLING, embed_texts
from enkcvs.data.sources import own
from enkcvs.data.sources.columns import id_like_columns, read_values
from enkcvs.io import install_command
from enkcvs.labelissues import determinism
from enkcvs.labelissues.issues import dataset_row_names
from enkcvs.labelissues.request import Request
from enkcvs.labelissues.source import Source
from enkcvs.training.recipe import Recipe

KINDS = ("images", "texts", "table")
#: TF-IDF's settings in the fold models of texts: words and word pairs (a question's "how many", "who is"), counts
#: damped (1 + log tf: a word said twice is not twice the evidence), and terms of a single text of a fold model's
#: training part left out (one text says nothing of how a term goes with a class; they are most of the word pairs,
#: and the logistic regression fits several times faster without them).
TFIDF = {"sublinear_tf": True, "ngram_range": (1, 2), "min_df": 2}
_TFIDF = f"TfidfVectorizer({', '.join(f'{key}={value}' for key, value in TFIDF.items())})"
#: How texts train (``--text-recipe``), in words: the packaged MiniLM's frozen embeddings to heads, TF-IDF of the
#: texts or both to a logistic regression (:func:`text_pipeline`), the texts as they are to the user's
#: ``--classifier``, or the MiniLM fine-tuned.
TEXT_RECIPES = {
    "frozen": "light heads on the packaged MiniLM's frozen embeddings, each text encoded once and cached, minutes on "
    "a CPU",
    "tfidf": f"{_TFIDF} and LogisticRegression(max_iter=2000) on the texts, one scikit-learn pipeline fitted in each "
    "fold model on its training part, seconds on a CPU",
    "both": f"{_TFIDF} of the texts beside their frozen MiniLM embeddings (each text encoded once and cached; "
    "z-scored, then scaled to unit length as a TF-IDF row is) to one LogisticRegression(max_iter=2000), one "
    "scikit-learn pipeline fitted in each fold model on its training part",
    "raw": "the texts as they are, a 1-D array of str, to your --classifier, e.g. make_pipeline(TfidfVectorizer(), "
    "LogisticRegression())",
    "finetune": "the transformer fine-tuned in every fold model, hours on a CPU",
}
#: The text recipe without ``--text-recipe`` (with ``--classifier``: ``frozen``, the classifier on the embeddings).
#: benchmarks/text_recipes.py chose it, the best mean review-list F1 and ranking P@k over its sets (its record in
#: benchmarks/results/, its table in benchmarks/README.md).
DEFAULT_TEXT_RECIPE = "both"
#: The recipe each kind of data trains its fold models with (``--epochs`` replaces ``epochs``). A table: the
#: one-hidden-layer ``mlp``; images: the paper's MNIST network ``cnn4``, trained from scratch on :data:`IMAGE_SIZE`
#: pixel centre crops; texts of ``--text-recipe frozen`` (and images with an ``encoder``): the same ``mlp`` on the
#: frozen embeddings, with mixup; its settings won on ranking quality and time in benchmarks/text_heads.py.
DEFAULT_RECIPES: dict[str, dict[str, Any]] = {
    kind: {**recipe, "momentum": 0.9, "weight_decay": 5e-4, "mixup_alpha": 0.3}
    for kind, recipe in {
        "table": {"model": "mlp", "optimizer": "sgd", "lr": 0.05, "epochs": 20, "batch_size": 64},
        "images": {"model": "cnn4", "optimizer": "sgd", "lr": 0.05, "epochs": 15, "batch_size": 64},
        "texts": {"model": "mlp", "optimizer": "adam", "lr": 1e-3, "epochs": 10, "batch_size": 128},
    }.items()
}
#: The workflow's text recipe (``config/experiments/trec-minilm.yaml``): the checkpoint fine-tuned without mixup.
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
#: Texts or images encoded between two progress lines, at least: at most 20 lines, since each call reads the cache.
ENCODED_AT_ONCE = 256
#: The third-party packages each kind needs, with the extra of the ``enkcvs`` package that installs them.
NEEDED = {
    "images": {"torch": "train", "torchvision": "train", "PIL": "train", "matplotlib": "report"},
    "texts": {"torch": "train", "transformers": "train", "tabulate": "report"},
    "table": {"torch": "train", "tabulate": "report"},
}
#: Column names taken as image paths when ``--image-column`` is not given (compared in lower case).
IMAGE_COLUMNS = ("path", "image", "image_path", "filepath", "file", "filename")
DEFAULT_LABEL_COLUMN = "label"
NAMED_CLASSES = 5  # classes an error names one by one; the rest are counted
#: The own-data loaders' words for their options (a workflow config's), and the command's for the same.
COMMAND_WORDS = {
    "point source_options.path at": "point --data at",
    "point source_options.root at": "point --data at",
    "set source_options to existing column names": "pass existing column names",
    "source_options.feature_columns": "--feature-columns",
    "source_options.label_column": "--label-column",
    "source_options.id_column": "--id-column",
}


def read_data(request: Request) -> Source:
    """The ``--data`` of a request read as its kind (:func:`infer_kind`) with every check that can fail before
    training (options against the kind, packages, columns, labels, class sizes against K), then encoded: texts'
    and images' embeddings (N, 1, 1, D) float32 with progress lines on stderr, texts beside their embeddings in a
    frame (``both``), or fine-tuned texts' token ids (N, 2, L); texts as they are for ``tfidf`` and ``raw``.
    ValueError / FileNotFoundError in the command's words, with the fix."""
    path, folds = request.data, request.settings["folds"]
    kind, columns = infer_kind(request)
    check_kind_options(request, kind=kind)
    if missing := {name: extra for name, extra in NEEDED[kind].items() if importlib.util.find_spec(name) is None}:
        raise ValueError(
            f"--data of kind {kind} needs {', '.join(missing)}, not installed here. Fix: "
            f"{install_command(extras=','.join(sorted(set(missing.values()))))} (or pass --probabilities from a "
            "model of your own)"
        )
    columns = with_detected_id(path, columns=columns, feature_columns=request.feature_columns)
    encoder = request.encoder
    if encoder is not None and (problem := image_embeddings.weights_problem(encoder)) is not None:
        raise ValueError(problem)
    classifier = None if request.classifier is None else classifier_from_factory(request.classifier)
    default = "frozen" if request.classifier else DEFAULT_TEXT_RECIPE  # a --classifier of texts: their embeddings
    text_recipe = (request.text_recipe or default) if kind == "texts" else None
    classifier = text_pipeline(text_recipe) if text_recipe in ("tfidf", "both") else classifier
    recipe = FINETUNE_RECIPE if text_recipe == "finetune" else DEFAULT_RECIPES["texts" if encoder else kind]
    recipe = Recipe.from_dict({**recipe, **({} if request.epochs is None else {"epochs": request.epochs})})
    data = _load(request, kind=kind, columns=columns)
    request.check_counts(data.class_names)
    check_class_sizes(data, folds=folds, path=path)
    print(
        f"read {len(data.y_train)} samples of {data.num_classes} classes from {path} ({kind})",
        file=sys.stderr,
        flush=True,
    )
    embedded = text_recipe in ("frozen", "both")
    if embedded:
        inputs = _encoded(data, kind="texts", frozen=DEFAULT_CHECKPOINT)
        inputs = _text_frame(data.x_train, embeddings=inputs) if text_recipe == "both" else inputs
    elif encoder:
        inputs = _encoded(data, kind="images", frozen=encoder)
    elif text_recipe == "finetune":
        inputs = _tokens(data, recipe=recipe)
    else:  # a table's features, the texts as they are (tfidf, raw), images from scratch
        inputs = data if kind == "images" else data.x_train
    keys = determinism.dataset_digests(data)
    frozen = {"checkpoint": DEFAULT_CHECKPOINT, "pooling": POOLING} if embedded else None
    if encoder:
        weights = str(image_embeddings.default_weights(encoder))
        frozen = {"torchvision": encoder, "weights": weights, "pooling": image_embeddings.POOLING}
    model = (
        {"recipe": recipe.to_dict()}
        if classifier is None
        else {"pipeline": repr(classifier)}
        if request.classifier is None
        else {"classifier": {"factory": request.classifier, "estimator": repr(classifier)}}
    )
    standardize = not request.no_standardize
    record = {
        "data": str(path.resolve()),
        "data_sha256": determinism.data_digest(keys),  # of the rows' content, in any order
        "kind": kind,
        "columns": columns,
        "samples": len(data.y_train),
        "classes": list(data.class_names),
        **model,
        "standardized": standardize and isinstance(inputs, np.ndarray) and inputs.dtype.kind == "f",
        **({"image_size": IMAGE_SIZE} if kind == "images" and not encoder else {}),
        **({"text_recipe": text_recipe} if kind == "texts" else {}),
        **({"max_tokens": MAX_TOKENS} if text_recipe in ("frozen", "both", "finetune") else {}),
        **({"encoder": frozen} if frozen else {}),
    }
    return Source(
        path=path,
        kind=kind,
        labels=data.y_train,
        class_names=data.class_names,
        row_names=dataset_row_names(data),
        keys=keys,
        inputs=inputs,
        recipe=recipe,
        classifier=classifier,
        standardize=standardize,
        sheet=_sheet(data, kind=kind),
        cause=(
            ": the fold models predict fewer than half of the given labels. Likely the recipe is too short for this "
            "data (raise --epochs) or the data too small to learn from, rarely that many labels are wrong. Check "
            "these before trusting the ranking"
        ),
        data=data,
        text_recipe=text_recipe,
        provenance=record,
    )


def infer_kind(request: Request) -> tuple[str, dict[str, str | None]]:
    """The kind of ``--data`` and the columns it is read from (label, id, image, text): a folder holds images; a
    file holds texts given ``--text-column``, images given ``--image-column`` or with a column named as in
    :data:`IMAGE_COLUMNS`, a table otherwise. ``--kind`` given is checked against the data instead."""
    path, kind = request.data, request.kind
    given = {name: getattr(request, f"{name}_column") for name in ("label", "id", "image", "text")}
    if kind is not None and kind not in KINDS:
        raise ValueError(f"--kind {kind}: unknown kind of data; use one of {', '.join(KINDS)}")
    if not path.exists():
        raise FileNotFoundError(
            f"--data {path}: no such file or folder. Fix: give a folder with one sub-folder of images per class, or "
            "a CSV or parquet file"
        )
    if path.is_dir():
        passed = [f"--{name}-column" for name, value in given.items() if value is not None]
        if kind not in (None, "images") or passed:
            what = f"--kind {kind}" if kind not in (None, "images") else " and ".join(passed)
            raise ValueError(
                f"--data {path} is a folder, read as images with one sub-folder per class (the class names), which "
                f"takes no {what}. Fix: drop {what}, or give a CSV file"
            )
        return "images", given
    header = own.table_header(str(path))
    if given["label"] is None and DEFAULT_LABEL_COLUMN not in header:
        raise ValueError(
            f"--data {path} has no column named {DEFAULT_LABEL_COLUMN!r} for the labels; its columns are {header}. "
            "Fix: pass --label-column naming the one that holds the labels"
        )
    given["label"] = given["label"] or DEFAULT_LABEL_COLUMN
    found = [column for column in header if column.lower() in IMAGE_COLUMNS]
    if len(found) > 1 and kind in (None, "images") and not given["image"] and not given["text"]:
        raise ValueError(f"columns {found} could each hold the image paths. Fix: pass --image-column naming it")
    found = found[0] if found else None
    kind = kind or ("texts" if given["text"] else "images" if given["image"] or found else "table")
    if kind == "texts" and given["text"] is None:
        raise ValueError(
            f"--kind texts: say which column of --data {path} holds the texts. Fix: pass --text-column (its "
            f"columns are {header})"
        )
    if kind == "images":
        given["image"] = given["image"] or found
    if kind == "images" and given["image"] is None:
        raise ValueError(
            f"--kind images: --data {path} has no column of image paths named {'/'.join(IMAGE_COLUMNS)}. Fix: pass "
            f"--image-column (its columns are {header})"
        )
    if kind == "table" and given["image"] or kind != "texts" and given["text"]:
        option = "--image-column" if kind == "table" and given["image"] else "--text-column"
        raise ValueError(f"{option} does not fit --kind {kind}. Fix: drop {option}, or the --kind")
    for name, column in given.items():
        if column is not None and column not in header:
            raise ValueError(
                f"--{name}-column {column}: --data {path} has no such column; its columns are {header}. Fix: pass "
                f"--{name}-column with one of them"
            )
    return kind, given


def check_kind_options(request: Request, *, kind: str) -> None:
    """ValueError with the fix for an option that does not fit the data's ``kind`` (or is unknown)."""
    path, text_recipe, encoder, classifier = request.data, request.text_recipe, request.encoder, request.classifier
    if text_recipe not in (None, *TEXT_RECIPES) or text_recipe is not None and kind != "texts":
        fix = f"use one of {', '.join(TEXT_RECIPES)}" if kind == "texts" else "drop --text-recipe, or pass --kind texts"
        raise ValueError(
            f"--text-recipe {text_recipe} chooses how texts train, and --data {path} is read as {kind}. Fix: {fix}"
        )
    if classifier is not None and kind == "images" and encoder is None:
        raise ValueError(
            f"--classifier {classifier} trains on features held in memory, and --data {path} is read as images "
            "without --encoder. Fix: pass --encoder resnet18, or drop --classifier"
        )
    if classifier is not None and text_recipe in ("tfidf", "both", "finetune"):
        raise ValueError(
            f"--classifier {classifier} and --text-recipe {text_recipe} each choose the fold models. Fix: pass "
            "--text-recipe raw (your classifier on the texts) or frozen (on their embeddings), or drop one of them"
        )
    if text_recipe == "raw" and classifier is None:
        raise ValueError(
            "--text-recipe raw hands the texts as they are to your --classifier, and none is given. Fix: pass "
            "--classifier MODULE:FACTORY (e.g. returning make_pipeline(TfidfVectorizer(), LogisticRegression())), "
            "or another --text-recipe"
        )
    if request.feature_columns is not None and kind != "table":
        raise ValueError(
            f"--feature-columns chooses a table's features, but --data {path} is read as {kind}. Fix: drop "
            "--feature-columns, or pass --kind table"
        )
    if request.no_standardize and kind == "images" and encoder is None:
        raise ValueError(
            f"--no-standardize keeps a table's features or the embeddings as they are, but --data {path} is read as "
            "images without --encoder. Fix: drop --no-standardize, or pass --encoder"
        )
    if encoder is not None and kind != "images":
        raise ValueError(
            f"--encoder {encoder} encodes images, and --data {path} is read as {kind}. Fix: drop --encoder, or pass "
            "--kind images"
        )


def check_class_sizes(data: Dataset, *, folds: int, path: Path) -> None:
    """ValueError where the data hold fewer samples than the K = ``folds`` folds, or, in one message, for the classes
    with fewer samples than that (counted, the first :data:`NAMED_CLASSES` named), with the fix: the folds are drawn
    without regard to the labels (:func:`enkcvs.method.folds.kfold_assignment`), so the fold model that predicts a
    sample of a class of c < K samples trains on at most c - 1 of them and flags it whatever its label."""
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
    named += f" and {len(small) - NAMED_CLASSES} more" if len(small) > NAMED_CLASSES else ""
    fewer = f"pass --folds {counts[small[0]]} or fewer, or " if counts[small[0]] >= 2 else ""
    unique = "every label is unique (an id column?): name the column of the classes with --label-column, or "
    raise ValueError(
        f"--folds {folds}: {len(small)} of {data.num_classes} classes of --data {path} "
        f"{'have' if len(small) != 1 else 'has'} fewer samples than the {folds} folds: {named}; the fold models that "
        f"predict them learn too few of their class and flag them whatever their labels. Fix: "
        f"{unique if counts.max() == 1 else ''}{fewer}add samples of these classes, or drop their rows (at --folds "
        f"{folds} a class needs {folds} samples, and --folds is at least 2)"
    )


def with_detected_id(path: Path, *, columns: dict[str, str | None], feature_columns: list[str] | None) -> dict:
    """``columns`` with, where no ``--id-column`` names the rows of a file, the first column that looks like row ids
    (:func:`enkcvs.data.sources.columns.id_like_columns` of the values as read: text, integers or whole floats, never
    dates or times), is not read otherwise and holds a unique value on every row; said in one warning."""
    import pandas as pd

    if path.is_dir() or columns["id"] is not None:
        return columns
    used = {columns["label"], columns["image"], columns["text"], *(feature_columns or ())}
    if not (candidates := [column for column in own.table_header(str(path)) if column not in used]):
        return columns
    read = pd.read_csv if path.suffix.lower() == ".csv" else pd.read_parquet
    frame = read(path, **({"usecols": candidates} if read is pd.read_csv else {"columns": candidates}))
    for column in id_like_columns(read_values(frame)[0]):
        if frame[column].notna().all() and frame[column].is_unique:
            warnings.warn(
                f"{path}: column {column!r} looks like row ids: it names the rows in the output, and is no feature. "
                "Fix: pass --id-column to name the rows by another column, or --feature-columns to train on it",
                stacklevel=3,
            )
            return {**columns, "id": column}
    return columns


def classifier_from_factory(spec: str):
    """The unfitted classifier that ``spec``, ``"package.module:function"``, returns when called with no arguments;
    ValueError naming the fix where it cannot be imported or called, or lacks ``fit`` or ``predict_proba``."""
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
    if not callable(factory := getattr(module, name, None)):
        raise ValueError(f"--classifier {spec}: {module_name} has no function {name}. Fix: name one it defines")
    classifier = factory()
    if missing := [method for method in ("fit", "predict_proba") if not callable(getattr(classifier, method, None))]:
        raise ValueError(
            f"--classifier {spec}: what {name}() returns ({type(classifier).__name__}) has no {' or '.join(missing)}. "
            "Fix: return a scikit-learn-compatible classifier with fit(X, y) and predict_proba(X)"
        )
    return classifier


def text_pipeline(text_recipe: str):
    """The unfitted fold model of ``--text-recipe tfidf`` (a pipeline of TF-IDF by :data:`TFIDF` and a logistic
    regression on the texts (N,)) or ``both`` (the same TF-IDF of the ``text`` column and the embedding columns after
    it, of :func:`_text_frame`, to one logistic regression). Each text's embedding is z-scored, then scaled to unit
    length as its TF-IDF row is: z-scored alone, its D = 384 columns outweighed the TF-IDF row under the one penalty
    and the review list fell well below either feature alone on benchmarks/text_recipes.py's sets."""
    from sklearn.compose import ColumnTransformer
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import Normalizer, StandardScaler

    features = TfidfVectorizer(**TFIDF)
    if text_recipe == "both":
        embedding = make_pipeline(StandardScaler(), Normalizer())
        features = ColumnTransformer([("text", features, "text"), ("embedding", embedding, slice(1, None))])
    return make_pipeline(features, LogisticRegression(max_iter=2000))


def recipe_text(kind: str, *, text_recipe: str | None = None) -> str:
    """The recipe of ``kind`` (texts: trained as ``text_recipe`` says, default :data:`DEFAULT_TEXT_RECIPE`) in words,
    for the command's help."""
    text_recipe = text_recipe or DEFAULT_TEXT_RECIPE
    if kind == "texts" and text_recipe not in ("frozen", "finetune"):
        return TEXT_RECIPES[text_recipe]
    recipe = FINETUNE_RECIPE if kind == "texts" and text_recipe == "finetune" else DEFAULT_RECIPES[kind]
    mixup = "no mixup" if recipe["mixup_alpha"] is None else f"mixup alpha {recipe['mixup_alpha']}"
    size = {
        "images": f" on {IMAGE_SIZE} x {IMAGE_SIZE} centre crops",
        "texts": f" ({DEFAULT_CHECKPOINT}, {MAX_TOKENS} tokens a text)",
    }.get(kind, "")
    words = (
        f"{recipe['model']}{size}, {recipe['optimizer']} lr {recipe['lr']:g}, {recipe['epochs']} epochs of "
        f"batches of {recipe['batch_size']}, {mixup}"
    )
    return f"{TEXT_RECIPES[text_recipe]}: {words}" if kind == "texts" else words


def _load(request: Request, *, kind: str, columns: dict[str, str | None]) -> Dataset:
    """The data through the workflow's own-data loader of its kind (a table's missing values kept for the folds to
    impute unless ``--no-standardize``), its errors and lines worded in the command's options."""
    path = request.data
    common = {"path": str(path), "label_column": columns["label"], "id_column": columns["id"]}
    try:
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            if path.is_dir():
                data = own.load_image_folder(root=str(path), resize=IMAGE_SIZE, crop=IMAGE_SIZE)
            elif kind == "images":
                data = own.load_image_table(**common, image_column=columns["image"], resize=IMAGE_SIZE, crop=IMAGE_SIZE)
            elif kind == "texts":
                data = own.load_text_table(**common, text_column=columns["text"])
            else:
                missing = "refuse" if request.no_standardize else "keep"
                data = own.load_table(**common, feature_columns=request.feature_columns, missing=missing)
    except (ValueError, FileNotFoundError) as error:
        raise type(error)(_in_command_words(str(error))) from None
    for warning in said:  # the class names are kept in the output: their numbering is no news here
        if "numbered in sorted order and kept as class names" not in str(warning.message):
            warnings.warn(_in_command_words(str(warning.message)), type(warning.message), stacklevel=4)
    return data


def _in_command_words(message: str) -> str:
    """A message of the own-data loaders, worded in the command's options (:data:`COMMAND_WORDS`)."""
    for workflow_words, command_words in COMMAND_WORDS.items():
        message = message.replace(workflow_words, command_words)
    return message


def _encoded(data: Dataset, *, kind: str, frozen: str) -> np.ndarray:
    """The embeddings of the texts or images of ``data`` by the ``frozen`` checkpoint or torchvision encoder, as a
    table's features (N, 1, 1, D) float32, :data:`ENCODED_AT_ONCE` (or a twentieth) at a time with a progress line
    on stderr after each ("encoding texts: 512/1483"); each cached, so a second run encodes nothing new."""
    items, count = list(data.x_train), len(data.x_train)
    print(f"encoding {count} {kind} with {frozen} (once; cached for later runs)", file=sys.stderr)
    parts, step = [], max(ENCODED_AT_ONCE, -(-count // 20))
    for start in range(0, count, step):
        chunk = items[start : start + step]
        try:
            if kind == "texts":
                parts.append(embed_texts(chunk, checkpoint=frozen, max_tokens=MAX_TOKENS))  # (n, D)
            else:
                parts.append(image_embeddings.embed_images(chunk, root=data.image_root, encoder=frozen))
        except (RuntimeError, ImportError) as error:
            raise ValueError(str(error)) from None
        print(f"encoding {kind}: {start + len(chunk)}/{count}", file=sys.stderr, flush=True)
    vectors = np.concatenate(parts)
    return vectors.reshape(len(vectors), 1, 1, -1)


def _text_frame(texts: np.ndarray, *, embeddings: np.ndarray):
    """The inputs of ``--text-recipe both``: a pandas frame of the ``text`` (N,) and the columns ``embedding_0`` ...
    of its ``embeddings`` (N, 1, 1, D)."""
    import pandas as pd

    vectors = pd.DataFrame(embeddings.reshape(len(texts), -1)).add_prefix("embedding_")
    return pd.concat([pd.Series(texts, name="text"), vectors], axis=1)


def _tokens(data: Dataset, *, recipe: Recipe) -> np.ndarray:
    """The texts' token ids (N, 2, L) for the recipe's checkpoint, as the workflow's tokenise rule makes them."""
    from enkcvs.data.text import tokenize

    checkpoint = recipe.model_options.get("checkpoint", DEFAULT_CHECKPOINT)
    try:
        return tokenize(list(data.x_train), checkpoint=checkpoint, max_length=MAX_TOKENS)
    except (RuntimeError, ImportError) as error:
        raise ValueError(str(error)) from None


def _sheet(data: Dataset, *, kind: str):
    """What draws the review sheet of own data: a figure of the images, or Markdown of the texts or features."""
    from enkcvs.labelissues.review import draw_review_sheet, table_sheet, text_sheet

    if kind == "images":
        return lambda **sheet: draw_review_sheet(images=data.x_train, root=data.image_root, **sheet)
    if kind == "texts":
        return lambda **sheet: text_sheet(texts=data.x_train, **sheet)
    return lambda **sheet: table_sheet(features=data.x_train, feature_names=data.feature_names, **sheet)
