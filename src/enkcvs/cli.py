"""The ``enkcvs`` command: E-NKCVS on predictions a user already has.

``enkcvs find-issues --probabilities oof.npy --labels labels.csv --out issues.csv`` ranks every sample from most to
least likely mislabelled (:func:`enkcvs.oof.select`). Exit status 0 on success, 1 when an input file is bad (the
message names the problem and the fix; nothing is written), 2 on a malformed command line.
"""

import argparse
import sys
from pathlib import Path

import numpy as np

from enkcvs.io import atomic_path


#: Output formats, by the suffix of ``--out``.
WRITERS = {
    ".csv": lambda frame, path: frame.to_csv(path, index=False),
    ".parquet": lambda frame, path: frame.to_parquet(path, index=False),
}


def find_issues(
    *,
    probabilities: Path,
    labels: Path,
    out: Path,
    label_column: str | None = None,
    id_column: str | None = None,
    class_names: list[str] | None = None,
    threshold: int | None = None,
) -> str:
    """Select and rank the samples of ``labels`` by their out-of-fold ``probabilities``; write the label-issue table
    (:meth:`enkcvs.oof.SelectionResult.to_frame`, with the user's ``id_column`` after ``sample``) to ``out`` (.csv or
    .parquet, written only when every check passed). Returns a one-line summary; ValueError / FileNotFoundError on
    bad input."""
    from enkcvs.oof import load_labels, load_probabilities, select

    writer = WRITERS.get(out.suffix.lower())
    if writer is None:
        raise ValueError(f"--out {out}: unknown extension {out.suffix!r}; use one of {sorted(WRITERS)}")
    given = load_labels(labels, column=label_column)
    ids = None if id_column is None else _unique_ids(load_labels(labels, column=id_column), labels=labels,
                                                     column=id_column)
    result = select(probabilities=load_probabilities(probabilities), labels=given, threshold=threshold,
                    class_names=class_names)
    frame = result.to_frame(ids=ids, id_column=id_column)
    with atomic_path(out) as tmp:
        writer(frame, tmp)
    flagged = int(frame["is_label_issue"].sum())
    return (f"{flagged} of {len(frame)} samples are label issues (selected in fewer than t = {result.threshold} of "
            f"M = {result.iterations} iterations); every sample ranked in {out}")


def _unique_ids(ids: np.ndarray, *, labels: Path, column: str) -> np.ndarray:
    """``ids`` (N,), read from column ``column`` of the file ``labels``, when no id repeats; ValueError naming the
    repeated ids and their rows otherwise."""
    from enkcvs.ids import repeated_ids

    repeated = repeated_ids(ids)
    if repeated:
        raise ValueError(f"{labels}: the ids in --id-column {column} repeat ({repeated}; rows 0-based in sample order, "
                         "header not counted), so they cannot name a sample. Fix: make the ids unique, or pass "
                         "another --id-column")
    return ids


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(prog="enkcvs", description=__doc__.split("\n\n")[0])
    commands = main.add_subparsers(dest="command", required=True)
    command = commands.add_parser(
        "find-issues",
        help="rank samples by how likely their label is wrong, from out-of-fold probabilities",
        description="E-NKCVS on out-of-fold probabilities: a sample is kept when at least t of the M cross-validation "
        "repetitions predict its given label; every sample is ranked by label quality (lowest first). Writes one row "
        "per sample: given_label, suggested_label, is_label_issue, label_quality, votes, beta, rank.",
    )
    command.add_argument("--probabilities", required=True, type=Path, metavar="FILE",
                         help=".npy (N, Q) or (M, N, Q), or .parquet/.csv with columns prob_0..prob_{Q-1} "
                         "(and 'iteration' 1..M, 'sample' for M > 1)")
    command.add_argument("--labels", required=True, type=Path, metavar="FILE",
                         help="the given labels: .csv/.parquet (a label column; rows in the probabilities' order, "
                         "or a 'sample' column) or .npy")
    command.add_argument("--label-column", metavar="COLUMN", help="the label column (needed when the file has several)")
    command.add_argument("--id-column", metavar="COLUMN", help="a column of the labels file carried to the output")
    command.add_argument("--class-names", metavar="A,B,...", type=lambda text: text.split(","),
                         help="the class of each probability column, in column order (string labels otherwise map "
                         "in sorted order, with a warning)")
    command.add_argument("--threshold", "-t", type=int, metavar="T",
                         help="votes a sample needs to be kept (default: 1 for M = 1, else 2, the paper's)")
    command.add_argument("--out", required=True, type=Path, metavar="FILE", help="the ranked table: .csv or .parquet")
    return main


def main(argv: list[str] | None = None) -> int:
    arguments = parser().parse_args(argv)  # exits with 2 on a malformed command line
    options = {key: value for key, value in vars(arguments).items() if key != "command"}
    try:
        print(find_issues(**options))
    except (ValueError, FileNotFoundError) as error:
        print(f"enkcvs find-issues: error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
