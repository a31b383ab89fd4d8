"""Find label issues with E-NKCVS in your own data, or in out-of-fold probabilities you already have.

Its arguments are parsed into one :class:`enkcvs.labelissues.request.Request`, ranked by
:func:`enkcvs.labelissues.find.write_issues`. ``enkcvs find-issues --data animals.csv --label-column animal --out
issues.csv`` trains the M x K fold models on the data (images, texts or a table: :mod:`enkcvs.labelissues.owndata`);
``enkcvs find-issues --probabilities oof.npy --labels labels.csv --out issues.csv`` reads out-of-fold probabilities
instead. ``enkcvs example --out animals.csv`` writes a small table with known label errors to try it on
(:mod:`enkcvs.labelissues.example`). Exit status 0 on success (warnings on stderr, one line each), 2 on a malformed
command line or a bad input file or option (the message names the problem and the fix; nothing is written, no fold
model trains: options that contradict each other are refused before any file is read, and counts that do not fit
the classes before anything is encoded or any fold model trains).
"""

import argparse
import sys
import warnings
from pathlib import Path

from enkcvs.labelissues.oof import DEFAULT_SCORE, FILTERS, SCORES
from enkcvs.labelissues.request import Request
from enkcvs.labelissues.review import DEFAULT_TOP


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",")]


def parser() -> argparse.ArgumentParser:
    from importlib.metadata import PackageNotFoundError, version

    main = argparse.ArgumentParser(prog="enkcvs", description=__doc__.split("\n\n")[0])
    try:
        installed = version("enkcvs")
    except PackageNotFoundError:  # run from a checkout that was never installed: no version to speak of
        installed = "(not installed: pip install -e . in the checkout)"
    main.add_argument("--version", action="version", version=f"%(prog)s {installed}")
    commands = main.add_subparsers(dest="command", required=True)
    _find_issues_parser(commands)
    example = commands.add_parser(
        "example",
        help="write a small table with known label errors to try find-issues on",
        description="A CSV of 3 animals' measurements (columns id, x0..x4, animal) with a share of the labels flipped "
        "to another class, and beside it the flipped rows (<stem>.flipped.csv: id, given_label, true_label).",
    )
    example.add_argument("--out", required=True, type=Path, metavar="FILE.csv", help="the table to write")
    example.add_argument("--samples", type=int, default=300, metavar="N", help="rows (default 300)")
    example.add_argument("--flipped", type=float, default=0.1, metavar="SHARE", help="share flipped (default 0.1)")
    example.add_argument("--seed", type=int, default=1, help="seeds the features and the flips (default 1)")
    return main


def _find_issues_parser(commands) -> None:
    """The ``find-issues`` sub-command's options, one per field of :class:`enkcvs.labelissues.request.Request`."""

    command = commands.add_parser(
        "find-issues",
        help="rank samples by how likely their label is wrong: from your data (trained here) or from out-of-fold "
        "probabilities",
        description="E-NKCVS: M repetitions of K-fold cross-validation predict every sample from models that did not "
        "train on it; a sample is kept (the set to train on) when at least t of them predict its label; every sample "
        "is ranked by --score (rank 1 first), and the first not-kept samples of the ranking, as many as confident "
        "learning finds among them, form the review list (is_label_issue). One row per sample in the data's order: "
        "its id, path or row (1 = the first after the header), is_label_issue, label_score, given_label, "
        "predicted_label, rank, votes, kept.",
    )
    add = command.add_argument
    add("--out", required=True, type=Path, metavar="FILE", help="the ranked table: .csv or .parquet")
    add(
        "--label-column",
        metavar="COLUMN",
        help="the label column (default: 'label' where --data has it; needed when --labels has several columns)",
    )
    add("--id-column", metavar="COLUMN", help="unique ids naming rows (--data: else a row-id column)")
    add("--sorted", dest="by_rank", action="store_true", help="the table most likely wrong first")
    add("--threshold", "-t", type=int, metavar="T", help="votes to be kept (default: 1 for M = 1, else 2, the paper's)")
    _list_options(command)
    _data_options(command)
    _probabilities_options(command)


def _list_options(command) -> None:
    """The options of the ranking's score and the review list's length."""
    ranking = command.add_argument_group(
        "the ranking and the review list's length",
        "on the mean of the M repetitions' out-of-fold probabilities",
    )
    ranking.add_argument(
        "--score",
        choices=SCORES[1:],
        default=DEFAULT_SCORE,
        help="label_score, low = likely mislabelled: logit_margin, log P(given label) - log P(most probable other "
        "class) (default), or cleanlab.rank.get_label_quality_scores(method=SCORE)",
    )
    ranking.add_argument(
        "--filter-by",
        choices=FILTERS,
        default=FILTERS[0],
        help="cleanlab.filter.find_label_issues' filter_by, on the calibrated mean probabilities: the review list "
        "holds as many not-kept samples, first in the ranking, as it flags among the not-kept ones (default "
        "%(default)s); the kept set does not change",
    )
    ranking.add_argument(
        "--frac-noise",
        type=float,
        default=1.0,
        metavar="SHARE",
        help="find_label_issues' frac_noise, with --filter-by prune_by_noise_rate, prune_by_class or both: cleanlab "
        "flags about this share of the errors it estimates, a shorter review list (default 1); a share below 1 is "
        "refused with the other filters, which cleanlab does not scale, and with --num-to-remove-per-class, whose "
        "counts replace the estimate",
    )
    ranking.add_argument(
        "--num-to-remove-per-class",
        type=lambda text: [int(count) for count in _names(text)],
        metavar="N1,N2,...",
        help="find_label_issues' num_to_remove_per_class, one count N_k per class k in class order, in place of "
        "cleanlab's estimate of the errors. With --filter-by prune_by_class cleanlab flags the N_k samples labelled k "
        "with the lowest probability of k; with prune_by_noise_rate (the default) up to N_k samples labelled another "
        "class, those whose probability of k exceeds that of their label the most; with both, the samples both flag. "
        "It then drops those whose most probable class is their label, so the review list holds at most N_1 + N_2 + "
        "... samples. Refused with the other filters, which take no counts",
    )


def _data_options(command) -> None:
    """The options of ``--data``, trained on here."""
    from enkcvs.labelissues.oof import DEFAULT_FOLDS, DEFAULT_REPETITIONS, DEFAULT_SEED
    from enkcvs.labelissues.owndata import DEFAULT_TEXT_RECIPE, KINDS, TEXT_RECIPES, recipe_text

    data = command.add_argument_group(
        "from your data",
        "trains the M x K fold models here (progress on stderr), then writes the ranking, the review sheet beside it "
        "(issues.csv -> issues.review.png and .pdf for images, issues.review.md for texts and tables) and "
        "issues.provenance.json (data, seed, K, M, t, recipe, device, threads). Default recipes: "
        + "; ".join(f"{kind}: {recipe_text(kind)}" for kind in KINDS),
    )
    add = data.add_argument
    add(
        "--data",
        type=Path,
        metavar="PATH",
        help="a folder with one sub-folder of images per class, or a .csv/.parquet file: image paths (relative to its "
        "folder, or absolute) and labels, texts and labels, or numeric features and labels",
    )
    add(
        "--kind",
        choices=KINDS,
        help="what --data holds (default: images for a folder or a file with an --image-column or a column named "
        "path or image; texts with --text-column; else table)",
    )
    add("--feature-columns", metavar="A,B,...", type=_names, help="a table's features (default: all but label, id)")
    add(
        "--no-standardize",
        action="store_true",
        help="keep a table's features or the embeddings (--encoder, --text-recipe frozen) as they are (default: "
        "z-scored with the statistics of each fold model's own training part, missing values imputed by its mean; "
        "--text-recipe both z-scores the embeddings in its own pipeline)",
    )
    add(
        "--classifier",
        metavar="MODULE:FACTORY",
        help="your own scikit-learn-compatible classifier as the fold models: a function of an importable module that "
        "returns it unfitted (e.g. mymodels:make_classifier); it trains on a table's features, images' embeddings "
        "(--encoder), texts' embeddings (--text-recipe frozen, the default with --classifier) or the texts themselves "
        "(--text-recipe raw)",
    )
    add(
        "--no-cache",
        action="store_true",
        help="train every fold model afresh (default: finished fold models are cached, keyed by the data and "
        "settings, so that a stopped run started again goes on where it stopped)",
    )
    add(
        "--text-recipe",
        choices=TEXT_RECIPES,
        help=f"how texts train (default {DEFAULT_TEXT_RECIPE}, frozen with --classifier): "
        + "; ".join(f"{name}: {recipe_text('texts', text_recipe=name)}" for name in TEXT_RECIPES),
    )
    add(
        "--encoder",
        metavar="ARCHITECTURE",
        help="images: a torchvision classification model (e.g. resnet18) whose frozen ImageNet embeddings the fold "
        "models' light heads train on, each image encoded once, cached; its weights from torchvision's cache, refused "
        f"without them (the fix names the command that fetches them). Default: {recipe_text('images')}, from scratch",
    )
    add("--folds", "-K", type=int, metavar="K", help=f"folds of each cross-validation (default {DEFAULT_FOLDS})")
    add("--repetitions", "-M", type=int, metavar="M", help=f"cross-validations (default {DEFAULT_REPETITIONS})")
    add("--epochs", type=int, metavar="N", help="epochs of each fold model (default: the recipe's)")
    add(
        "--seed",
        type=int,
        help="seeds folds and models: the same seed gives the same ranking, whatever the order of the rows, the "
        f"number of threads or --jobs (default {DEFAULT_SEED})",
    )
    add(
        "--jobs",
        type=int,
        metavar="N",
        help="fold models trained side by side in N processes, each on one thread: those that train one by one on a "
        "CPU (images from scratch, --text-recipe finetune; default: as many as torch has threads). Fold models on "
        "features in memory train together as one stacked program, and --classifier or the texts' tfidf and both "
        "pipelines in this process, whatever N",
    )


def _probabilities_options(command) -> None:
    """The options of ``--probabilities`` (no training) and of the review sheet."""
    given = command.add_argument_group("from out-of-fold probabilities", "no training")
    add = given.add_argument
    add(
        "--probabilities",
        type=Path,
        metavar="FILE",
        help=".npy (N, Q) or (M, N, Q), or .parquet/.csv with one column per class: prob_0..prob_{Q-1}, or named by "
        "class (prob_<class> or <class>); and 'iteration' 1..M, 'sample' for M > 1",
    )
    add(
        "--labels",
        type=Path,
        metavar="FILE",
        help="the given labels: .csv/.parquet (a label column; rows in the probabilities' order, or a 'sample' column) "
        "or .npy",
    )
    add(
        "--class-names",
        metavar="A,B,...",
        type=_names,
        help="the class of each probability column, in column order, for string labels and unnamed columns",
    )
    add(
        "--classes-in-sorted-order",
        action="store_true",
        help="the probability columns follow the string labels' sorted order (instead of --class-names)",
    )
    sheet = command.add_argument_group(
        "review sheet",
        "the top samples, most likely mislabelled first, with class names, votes and label score, written beside "
        "--out; from probabilities give one of --images, --image-column or --text-column",
    )
    add = sheet.add_argument
    add(
        "--images",
        type=Path,
        metavar="FILE.npy",
        help="N images in the labels' order: (N, H, W), (N, H, W, C), (N, C, H, W)",
    )
    add(
        "--image-column",
        metavar="COLUMN",
        help="image paths in --data or the labels file (relative to it, or absolute)",
    )
    add("--text-column", metavar="COLUMN", help="a column of texts in --data or the labels file")
    add("--review-top", type=int, metavar="N", help=f"samples on the sheet (default {DEFAULT_TOP})")


def main(argv: list[str] | None = None) -> int:
    """Run the command: its summary on stdout; its warnings and errors, one line each, on stderr. Exit status 0, or
    2 for a malformed command line or bad input (nothing written)."""
    arguments = parser().parse_args(argv)  # exits with 2 on a malformed command line
    options = {key: value for key, value in vars(arguments).items() if key != "command"}
    summary, failure = None, None

    def said(message, *_):  # as it happens, the message alone, without the source line the default format shows
        print(f"enkcvs {arguments.command}: warning: {message}", file=sys.stderr, flush=True)

    with warnings.catch_warnings():
        warnings.simplefilter("default")
        warnings.showwarning = said
        try:
            if arguments.command == "example":
                from enkcvs.labelissues.example import write_example

                summary = write_example(**options)
            else:
                from enkcvs.labelissues.find import write_issues

                summary = write_issues(Request(**options))
        except (ValueError, OSError) as error:
            failure = error
    if failure is not None:
        print(f"enkcvs {arguments.command}: error: {failure}", file=sys.stderr)
        return 2
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
