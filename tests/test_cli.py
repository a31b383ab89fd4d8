"""The ``enkcvs find-issues`` command line: end to end on CSV and parquet; bad files refused with nothing written."""

import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from PIL import Image
from test_oof import make_planted

from enkcvs.labelissues.cli import main

NAMES = np.array(["ant", "bee", "cat", "dog"])


def with_unknown_class(directory):
    labels = pd.read_csv(directory / "labels.csv")
    labels.loc[3, "animal"] = "eel"
    labels.to_csv(directory / "labels.csv", index=False)


def with_nan(directory):
    probabilities = np.load(directory / "oof.npy")
    probabilities[1, 17, 2] = np.nan
    np.save(directory / "oof.npy", probabilities)


@pytest.fixture
def planted(tmp_path):
    """(probabilities .npy (M, N, Q), labels .csv with an id and a string label column, given, true)."""
    probabilities, given, true = make_planted(seed=7, num_samples=200)
    np.save(tmp_path / "oof.npy", probabilities)
    pd.DataFrame({"photo": [f"img{i:03d}.jpg" for i in range(200)], "animal": NAMES[given]}).to_csv(
        tmp_path / "labels.csv", index=False
    )
    return probabilities, given, true


def test_csv_end_to_end_with_ids_and_class_names(tmp_path, planted, capsys):
    _, given, true = planted
    code = main(
        [
            "find-issues",
            "--probabilities",
            str(tmp_path / "oof.npy"),
            "--labels",
            str(tmp_path / "labels.csv"),
            "--label-column",
            "animal",
            "--id-column",
            "photo",
            "--class-names",
            ",".join(NAMES),
            "--out",
            str(tmp_path / "issues.csv"),
        ]
    )
    assert code == 0
    frame = pd.read_csv(tmp_path / "issues.csv")
    assert list(frame.columns) == [  # one column a fact, the rows named by the file's ids
        "photo",
        "is_label_issue",
        "label_score",
        "given_label",
        "predicted_label",
        "rank",
        "votes",
        "kept",
    ]
    # In the labels' order, as cleanlab's frames: data[frame.is_label_issue] picks the listed rows.
    assert (frame["photo"] == [f"img{i:03d}.jpg" for i in range(200)]).all()
    assert (frame["given_label"] == NAMES[given]).all()
    assert sorted(frame["rank"]) == list(range(1, 201))
    assert frame.sort_values("rank")["label_score"].is_monotonic_increasing
    errors = given != true
    assert errors[frame.sort_values("rank").index[: errors.sum()]].mean() > 0.8  # the planted errors first
    listed, kept = int(frame["is_label_issue"].sum()), int(frame["kept"].sum())
    assert 0 < listed < 200 - kept and not (frame["is_label_issue"] & frame["kept"]).any()  # inside the not kept
    assert errors[frame["is_label_issue"]].mean() > errors[~frame["kept"]].mean()
    assert (
        f"{listed} of 200 samples in the review list (likely label errors: the first not kept of the ranking, as many "
        f"as confident learning finds among them); {kept} kept for training (selected in at least t = 2 of M = 3 "
        "iterations)"
    ) in capsys.readouterr().out


def test_parquet_in_and_out_with_iterations(tmp_path, planted):
    probabilities, given, _ = planted
    rows = [
        pd.DataFrame({"iteration": m, "sample": np.arange(200), **{f"prob_{c}": p[:, c] for c in range(4)}})
        for m, p in enumerate(probabilities, start=1)
    ]
    pd.concat(rows).sample(frac=1.0, random_state=0).to_parquet(tmp_path / "oof.parquet")  # order must not matter
    pd.DataFrame({"y": given}).to_parquet(tmp_path / "labels.parquet")
    code = main(
        [
            "find-issues",
            "--probabilities",
            str(tmp_path / "oof.parquet"),
            "--labels",
            str(tmp_path / "labels.parquet"),
            "-t",
            "3",
            "--out",
            str(tmp_path / "issues.parquet"),
        ]
    )
    assert code == 0
    frame = pd.read_parquet(tmp_path / "issues.parquet")
    assert frame["votes"].max() == 3 and frame["kept"].tolist() == (frame["votes"] >= 3).tolist()
    assert frame["row"].tolist() == list(range(1, 201))  # no ids: the labels file's rows, 1 the first
    sorted_out = tmp_path / "sorted.csv"
    assert (
        main(
            ["find-issues", "--probabilities", str(tmp_path / "oof.parquet"), "--labels"]
            + [str(tmp_path / "labels.parquet"), "-t", "3", "--sorted", "--out", str(sorted_out)]
        )
        == 0
    )
    ranked = pd.read_csv(sorted_out)  # the same rows, most likely mislabelled first
    assert ranked["rank"].tolist() == list(range(1, 201))
    pd.testing.assert_frame_equal(ranked, frame.sort_values("rank").reset_index(drop=True), check_exact=True)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: np.save(d / "oof.npy", np.load(d / "oof.npy")[:, :150]), r"shape \(N,\) = \(150,\)"),
        (
            with_unknown_class,
            r"1 label names no probability column \(eel\); the classes, from --class-names, are "
            r"ant, bee, cat, dog\. Fix: correct those labels, or check --class-names",
        ),
        (with_nan, "1 NaN or infinite entries"),
        (lambda d: np.save(d / "oof.npy", np.load(d / "oof.npy") * 0.9), "do not sum to 1"),
        (lambda d: (d / "labels.csv").unlink(), r"--labels \S+labels\.csv: no such file\. Fix: give the CSV file"),
    ],
    ids=["rows", "classes", "nan", "sums", "missing"],
)
def test_bad_files_exit_2_and_write_nothing(tmp_path, planted, capsys, change, message):
    change(tmp_path)
    code = main(
        [
            "find-issues",
            "--probabilities",
            str(tmp_path / "oof.npy"),
            "--labels",
            str(tmp_path / "labels.csv"),
            "--label-column",
            "animal",
            "--class-names",
            ",".join(NAMES),
            "--out",
            str(tmp_path / "out" / "issues.csv"),
        ]
    )
    assert code == 2
    error = capsys.readouterr().err
    assert error.startswith("enkcvs find-issues: error: ") and re.search(message, error), error
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def with_repeated_ids(directory):
    labels = pd.read_csv(directory / "labels.csv")
    labels.loc[[5, 9], "photo"] = "img001.jpg"
    labels.loc[42, "photo"] = "img007.jpg"
    labels.to_csv(directory / "labels.csv", index=False)


@pytest.mark.parametrize(
    "change, message",
    [
        (
            with_repeated_ids,
            r"labels\.csv: the ids in --id-column photo repeat \('img001\.jpg' on rows 1, 5, 9; "
            r"'img007\.jpg' on rows 7, 42; rows 0-based in sample order, header not counted\), so "
            r"they cannot name a sample\. Fix: make the ids unique, or pass another --id-column",
        ),
        (
            lambda d: (d / "labels.csv").write_text(""),
            r"the labels file \S+labels\.csv is empty\. Fix: point at the file that holds them",
        ),
        (
            lambda d: (d / "labels.csv").write_text("photo,animal\n"),
            r"the labels file \S+labels\.csv holds no rows\. Fix: one row per sample, under a header",
        ),
        (
            lambda d: (d / "labels.csv").write_bytes(b'photo,animal\n"img000.jpg,ant\n'),
            r"the labels file \S+labels\.csv is unreadable \(ParserError: .*\)\. Fix: write it again as .npy, "
            r".parquet or .csv",
        ),
    ],
    ids=["repeated ids", "empty", "header only", "unreadable"],
)
def test_bad_labels_files_name_the_file_and_the_fix_and_write_nothing(tmp_path, planted, capsys, change, message):
    change(tmp_path)
    code = main(
        [
            "find-issues",
            "--probabilities",
            str(tmp_path / "oof.npy"),
            "--labels",
            str(tmp_path / "labels.csv"),
            "--label-column",
            "animal",
            "--id-column",
            "photo",
            "--out",
            str(tmp_path / "out" / "issues.csv"),
        ]
    )
    assert code == 2
    error = capsys.readouterr().err
    assert error.startswith("enkcvs find-issues: error: ") and re.search(message, error), error
    assert not (tmp_path / "out").exists()


def test_usage_errors_and_help():
    command = [sys.executable, "-m", "enkcvs.labelissues.cli", "find-issues"]
    bad_suffix = subprocess.run(
        [*command, "--probabilities", "a.npy", "--labels", "b.csv", "--out", "issues.txt"],
        capture_output=True,
        text=True,
    )
    assert bad_suffix.returncode == 2 and "unknown extension '.txt'" in bad_suffix.stderr
    missing = subprocess.run(command, capture_output=True, text=True)
    assert missing.returncode == 2 and "--probabilities" in missing.stderr
    shown = subprocess.run([*command, "--help"], capture_output=True, text=True)
    assert shown.returncode == 0 and "--id-column" in shown.stdout and "label_score" in shown.stdout
    assert "--sorted" in shown.stdout


def test_the_help_describes_each_text_recipe_and_names_the_measured_default(capsys, monkeypatch):
    from enkcvs.labelissues.owndata import DEFAULT_TEXT_RECIPE, TEXT_RECIPES

    monkeypatch.setenv("COLUMNS", "2000")  # argparse's lines unwrapped
    with pytest.raises(SystemExit) as exited:
        main(["find-issues", "--help"])
    shown = capsys.readouterr().out
    assert exited.value.code == 0 and "--text-recipe {frozen,tfidf,both,raw,finetune}" in shown
    assert f"how texts train (default {DEFAULT_TEXT_RECIPE}, frozen with --classifier): frozen: " in shown
    assert all(f"; {name}: {words}" in shown for name, words in TEXT_RECIPES.items() if name != "frozen")
    assert "TfidfVectorizer(sublinear_tf=True, ngram_range=(1, 2), min_df=2)" in shown
    assert "or the texts themselves (--text-recipe raw)" in shown  # what --classifier trains on


def test_version_prints_the_installed_package_s_version(capsys):
    from importlib.metadata import version

    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0 and capsys.readouterr().out == f"enkcvs {version('enkcvs')}\n"


def test_probabilities_off_by_rounding_are_accepted_and_further_off_refused_in_our_words(tmp_path, planted, capsys):
    probabilities, _, _ = planted
    probabilities[:, 5] = [1 + 5e-6, 0, 0, 0]  # cleanlab alone refuses any entry above 1 + 1e-6
    np.save(tmp_path / "oof.npy", probabilities)
    assert main(find_issues_args(tmp_path)) == 0 and "warning" not in capsys.readouterr().err
    probabilities[2, 8] = [1.005, 0, 0, 0]  # within the tolerance: renormalised, in one line
    np.save(tmp_path / "oof.npy", probabilities)
    assert main(find_issues_args(tmp_path)) == 0
    said = capsys.readouterr().err
    assert said.count("warning") == 1 and "1 probability rows sum to 1 only within 0.01 (worst sum 1.005;" in said
    probabilities[2, 8] = [1.0101, 0, 0, 0]
    np.save(tmp_path / "oof.npy", probabilities)
    assert main(find_issues_args(tmp_path)) == 2
    error = capsys.readouterr().err
    assert re.search(
        r"error: 1 probability rows do not sum to 1 within 0\.01 \(worst sum 1\.0101; the first row 8 of repetition "
        r"3 \(0-based in sample order\)\): pass class probabilities",
        error,
    ), error
    assert "Values in pred_probs" not in error


def find_issues_args(directory, *extra):
    return [
        "find-issues",
        "--probabilities",
        str(directory / "oof.npy"),
        "--labels",
        str(directory / "labels.csv"),
        "--label-column",
        "animal",
        "--class-names",
        ",".join(NAMES),
        "--out",
        str(directory / "out" / "issues.csv"),
        *extra,
    ]


@pytest.fixture
def reviewable(tmp_path, planted):
    """The planted files plus 200 images (.npy (N, H, W, 3) and PNG files, one at an absolute path) and texts."""
    rng = np.random.default_rng(3)
    np.save(tmp_path / "images.npy", rng.integers(0, 256, size=(200, 6, 5, 3), dtype=np.uint8))
    (tmp_path / "pictures").mkdir()
    files = [f"pictures/{i}.png" for i in range(200)]
    files[0] = str(tmp_path / files[0])  # absolute paths are read as they are
    for i in range(200):
        colour = tuple(int(c) for c in rng.integers(0, 256, size=3))
        Image.new("RGB", (5, 6), colour).save(tmp_path / f"pictures/{i}.png")
    labels = pd.read_csv(tmp_path / "labels.csv")
    labels.assign(file=files, note=[f"note {i} | of\nrow {i}" for i in range(200)]).to_csv(
        tmp_path / "labels.csv", index=False
    )
    return planted


@pytest.mark.parametrize("option", [["--images", "images.npy"], ["--image-column", "file"]], ids=["npy", "column"])
def test_the_review_sheet_of_user_images_is_written_beside_the_table(tmp_path, reviewable, capsys, option):
    if option[0] == "--images":
        option = ["--images", str(tmp_path / option[1])]
    code = main(find_issues_args(tmp_path, *option, "--review-top", "5", "--id-column", "photo"))
    assert code == 0, capsys.readouterr().err
    out = tmp_path / "out"
    assert sorted(path.name for path in out.iterdir()) == ["issues.csv", "issues.review.pdf", "issues.review.png"]
    assert (out / "issues.review.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "issues.review.pdf").read_bytes()[:5] == b"%PDF-"
    assert "review sheet" in capsys.readouterr().out


def test_the_review_sheet_of_a_text_column_holds_the_top_samples(tmp_path, reviewable):
    _, given, _ = reviewable
    assert main(find_issues_args(tmp_path, "--text-column", "note", "--review-top", "6")) == 0
    frame = pd.read_csv(tmp_path / "out" / "issues.csv")
    sheet = (tmp_path / "out" / "issues.review.md").read_text()
    assert sheet.startswith("# E-NKCVS ranking of labels.csv: M = 3 iterations")
    rows = [line for line in sheet.splitlines() if line.startswith("|")][2:]
    assert len(rows) == 6
    for line, row in zip(rows, frame.sort_values("rank").head(6).to_dict("records")):
        cells = [cell.strip() for cell in line.strip("|").replace("\\|", "\0").split("|")]
        sample = row["row"] - 1  # the rows are numbered from 1, the first after the header
        assert cells[:3] == [str(row["rank"]), str(row["row"]), f"note {sample} \0 of ↵ row {sample}"]
        assert cells[3:6] == [NAMES[given[sample]], row["predicted_label"], str(row["votes"])]


def with_missing_picture(directory):
    (directory / "pictures" / "17.png").unlink()


def with_unreadable_picture(directory):
    for i in range(200):
        (directory / "pictures" / f"{i}.png").write_bytes(b"no image")


@pytest.mark.parametrize(
    "option, change, message",
    [
        (
            ["--images", "images.npy"],
            lambda d: np.save(d / "images.npy", np.zeros((150, 6, 5, 3))),
            "150 images for 200 labelled samples. Fix: give one per labelled sample",
        ),
        (
            ["--images", "images.npy"],
            lambda d: np.save(d / "images.npy", np.zeros((200, 30))),
            r"an image batch is \(N, H, W\), \(N, H, W, C\) or \(N, C, H, W\) .* got shape \(200, 30\)",
        ),
        (
            ["--image-column", "file"],
            with_missing_picture,
            r"1 of 200 image files do not exist \(row 18: \S+pictures/17\.png; rows numbered from 1, the first after",
        ),
        (
            ["--image-column", "file"],
            with_unreadable_picture,
            r"the image file \S+pictures/\d+\.png \(row \d+, 1 = the first\) is unreadable",
        ),
        (["--text-column", "note", "--review-top", "0"], None, "--review-top 0: a review sheet shows N >= 1 samples"),
        (
            ["--images", "images.npy", "--text-column", "note"],
            None,
            "--images and --text-column each choose what the review sheet shows; pass only one of them",
        ),
        (["--review-top", "3"], None, "pass --images, --image-column or --text-column too"),
        (
            ["--text-column", "notes"],
            None,
            r"--labels \S+labels\.csv has no column 'notes' for --text-column; its columns are \['photo', 'animal', "
            r"'file', 'note'\]\. Fix: pass --text-column with one of them",
        ),
    ],
    ids=["count", "shape", "missing", "unreadable", "top", "both", "top alone", "no column"],
)
def test_bad_review_inputs_exit_2_and_write_nothing(tmp_path, reviewable, capsys, option, change, message):
    if change is not None:
        change(tmp_path)
    option = [str(tmp_path / value) if value.endswith(".npy") else value for value in option]
    code = main(find_issues_args(tmp_path, *option))
    assert code == 2
    error = capsys.readouterr().err
    assert error.startswith("enkcvs find-issues: error: ") and re.search(message, error), error
    assert not (tmp_path / "out").exists()


def run(
    directory, capsys, *options, labels="labels.csv", probabilities="oof.npy", label_column=("--label-column", "animal")
):
    """(exit status, stderr, the output table or None) of ``enkcvs find-issues`` on the planted files."""
    code = main(
        [
            "find-issues",
            "--probabilities",
            str(directory / probabilities),
            "--labels",
            str(directory / labels),
            *label_column,
            "--out",
            str(directory / "out" / "issues.csv"),
            *options,
        ]
    )
    written = directory / "out" / "issues.csv"
    return code, capsys.readouterr().err, pd.read_csv(written) if written.exists() else None


def named_columns(directory, probabilities, *, order, prefix):
    """The planted probabilities as a long .csv whose class columns are named (``prefix`` + name) in ``order``."""
    rows = [
        pd.DataFrame(
            {"iteration": m, "sample": np.arange(p.shape[0]), **{f"{prefix}{NAMES[c]}": p[:, c] for c in order}}
        )
        for m, p in enumerate(probabilities, start=1)
    ]
    pd.concat(rows).to_csv(directory / "named.csv", index=False)


@pytest.mark.parametrize("prefix", ["prob_", ""], ids=["prob_<class>", "<class>"])
def test_string_labels_match_named_probability_columns_by_name_in_any_order(tmp_path, planted, capsys, prefix):
    probabilities, given, _ = planted
    named_columns(tmp_path, probabilities, order=[2, 0, 3, 1], prefix=prefix)  # not the sorted order
    code, error, frame = run(tmp_path, capsys, probabilities="named.csv")
    assert code == 0 and error == "", error
    _, _, reference = run(tmp_path, capsys, "--class-names", ",".join(NAMES))
    pd.testing.assert_frame_equal(frame, reference)
    assert (frame["given_label"] == NAMES[given]).all()  # in the labels' order


def test_string_labels_and_unnamed_columns_are_refused_naming_the_fix(tmp_path, planted, capsys):
    code, error, frame = run(tmp_path, capsys)
    assert code == 2 and frame is None and not (tmp_path / "out").exists()
    assert re.search(
        r"^enkcvs find-issues: error: --labels \S+labels\.csv holds class names \(ant, bee, cat, dog\) "
        r"but the columns of --probabilities \S+oof\.npy are not named, so which column is which class "
        r"is unknown\. Fix: pass --class-names A,B,\.\.\. naming the probability columns in order .*or "
        r"--classes-in-sorted-order if the columns follow the names' sorted order$",
        error,
    ), error
    code, error, sorted_order = run(tmp_path, capsys, "--classes-in-sorted-order")  # said explicitly: sorted order
    _, _, reference = run(tmp_path, capsys, "--class-names", ",".join(NAMES))
    assert code == 0 and error == "" and sorted_order.equals(reference)


@pytest.mark.parametrize(
    "options, message",
    [
        (
            ["--class-names", "bee,ant,cat,dog"],
            r"--class-names contradicts the column names of --probabilities \S+named\.csv \(cat, ant, dog, bee\), which "
            r"name the classes already\. Fix: drop --class-names",
        ),
        (["--classes-in-sorted-order"], r"--classes-in-sorted-order contradicts the column names of --probabilities"),
    ],
    ids=["class names", "sorted order"],
)
def test_an_order_that_contradicts_the_column_names_is_refused(tmp_path, planted, capsys, options, message):
    named_columns(tmp_path, planted[0], order=[2, 0, 3, 1], prefix="prob_")
    code, error, frame = run(tmp_path, capsys, *options, probabilities="named.csv")
    assert code == 2 and frame is None and re.search(message, error), error


def with_blank_label(directory):
    labels = pd.read_csv(directory / "labels.csv")
    labels.loc[3, "animal"] = None
    labels.to_csv(directory / "labels.csv", index=False)


def test_a_missing_label_names_its_line_and_id(tmp_path, planted, capsys):
    with_blank_label(tmp_path)
    code, error, frame = run(tmp_path, capsys, "--id-column", "photo", "--class-names", ",".join(NAMES))
    assert code == 2 and frame is None and not (tmp_path / "out").exists()
    assert re.search(
        r"error: \S+labels\.csv: 1 empty cell in the label column 'animal': line 5 \(photo "
        r"'img003\.jpg'\); lines of the file, the header is line 1\. Fix: give every sample its "
        r"value, or drop the sample from both files$",
        error,
    ), error


def test_missing_labels_are_named_by_line_past_multiline_cells_and_by_parquet_row(tmp_path, reviewable, capsys):
    labels = pd.read_csv(tmp_path / "labels.csv")  # every note spans two lines: row 3 starts on line 8
    labels.loc[[3, 150], "animal"] = ["", None]
    labels.to_csv(tmp_path / "labels.csv", index=False)
    code, error, _ = run(tmp_path, capsys, "--class-names", ",".join(NAMES))
    assert code == 2 and "2 empty cells in the label column 'animal': line 8, line 302; lines of the file" in error
    labels.to_parquet(tmp_path / "labels.parquet")
    code, error, _ = run(tmp_path, capsys, "--class-names", ",".join(NAMES), labels="labels.parquet")
    assert code == 2 and "2 empty cells in the label column 'animal': row 4, row 151; rows 1-based" in error


def test_over_half_flagged_warns_with_the_likely_cause_without_a_source_line(tmp_path, planted, capsys):
    code, error, frame = run(tmp_path, capsys, "--class-names", "bee,cat,dog,ant")  # the wrong order
    assert code == 0 and (~frame["kept"]).mean() > 0.5
    flagged = int((~frame["kept"]).sum())
    assert re.fullmatch(
        rf"enkcvs find-issues: warning: {flagged} of 200 samples \(\d+%\) are not kept \(selected in fewer than t "
        r"iterations\)\. Over half usually means the probabilities do not fit the labels: classes matched to the wrong "
        r"probability columns \(matched here by --class-names\), the rows of the two files in different sample "
        r"orders, or probabilities that are not out-of-fold predictions for these labels\. Check these before trusting "
        r"the ranking\n",
        error,
    )
    command = [
        sys.executable,
        "-m",
        "enkcvs.labelissues.cli",
        "find-issues",
        "--probabilities",
        str(tmp_path / "oof.npy"),
        "--labels",
        str(tmp_path / "labels.csv"),
        "--label-column",
        "animal",
        "--class-names",
        "bee,cat,dog,ant",
        "--out",
        str(tmp_path / "again.csv"),
    ]
    shown = subprocess.run(command, capture_output=True, text=True)
    assert shown.returncode == 0 and shown.stderr.startswith("enkcvs find-issues: warning: ")
    assert "cli.py" not in shown.stderr and "warnings.warn" not in shown.stderr and len(shown.stderr.splitlines()) == 1


@pytest.mark.parametrize(
    "change, options, message",
    [
        (
            None,
            [],
            r"--labels \S+labels\.csv has columns \['photo', 'animal'\]: pass --label-column naming the one "
            r"that holds the labels$",
        ),
        (
            None,
            ["--label-column", "animals"],
            r"--labels \S+labels\.csv has no column 'animals' for --label-column; "
            r"its columns are \['photo', 'animal'\]\. Fix: pass --label-column",
        ),
        (
            lambda d: np.save(d / "labels.npy", np.arange(200) % 4),
            ["--label-column", "animal"],
            r"--label-column animal: --labels \S+labels\.npy is a \.npy array, which has no columns\. Fix: drop "
            r"--label-column",
        ),
        (
            None,
            ["--label-column", "animal", "--class-names", "ant,bee,cat"],
            r"--class-names ant,bee,cat: expected Q = 4 distinct names, one per probability column, in column order",
        ),
        (
            None,
            ["--label-column", "animal", "--class-names", ",".join(NAMES), "-t", "5"],
            r"--threshold 5: a sample gets at most one vote from each of the M = 3 repetitions, so t lies in 1\.\.3\. "
            r"Fix: pass --threshold between 1 and 3",
        ),
    ],
    ids=["no label column", "wrong label column", "npy has no columns", "class count", "threshold"],
)
def test_messages_speak_the_command_s_options(tmp_path, planted, capsys, change, options, message):
    if change is not None:
        change(tmp_path)
    labels = "labels.npy" if change is not None else "labels.csv"
    code, error, frame = run(tmp_path, capsys, *options, labels=labels, label_column=())
    assert code == 2 and frame is None and not (tmp_path / "out").exists()
    assert re.search(message, error) and "column=" not in error and "class_names" not in error, error


@pytest.mark.parametrize(
    "option, message",
    [
        (
            "--labels",
            r"--labels points to a folder, give the CSV file \(or a \.parquet / \.npy\) of the labels: "
            r"\S+ is a folder; it holds labels\.csv, oof\.npy$",
        ),
        (
            "--probabilities",
            r"--probabilities points to a folder, give the \.npy, \.csv or \.parquet file of the "
            r"probabilities: \S+ is a folder; it holds labels\.csv, oof\.npy$",
        ),
        (
            "--out",
            r"--out points to a folder, give the file to write: \S+ is a folder\. Fix: e\.g\. --out "
            r"\S+/issues\.csv$",
        ),
    ],
    ids=["labels", "probabilities", "out"],
)
def test_a_folder_where_a_file_belongs_says_so(tmp_path, planted, capsys, option, message):
    arguments = {
        "--probabilities": str(tmp_path / "oof.npy"),
        "--labels": str(tmp_path / "labels.csv"),
        "--out": str(tmp_path / "out" / "issues.csv"),
        option: str(tmp_path),
    }
    code = main(
        [
            "find-issues",
            "--label-column",
            "animal",
            "--class-names",
            ",".join(NAMES),
            *[item for pair in arguments.items() for item in pair],
        ]
    )
    error = capsys.readouterr().err.strip()
    assert code == 2 and re.search(message, error), error
    assert not (tmp_path / "out").exists() and not (tmp_path / "issues.csv").exists()


@pytest.mark.parametrize("score", ["self_confidence", "normalized_margin", "confidence_weighted_entropy"])
def test_score_is_cleanlab_s_label_quality_on_the_mean_probabilities(tmp_path, planted, capsys, score):
    from cleanlab.rank import get_label_quality_scores

    probabilities, given, _ = planted
    code, error, frame = run(tmp_path, capsys, "--class-names", ",".join(NAMES), "--score", score)
    assert code == 0, error
    expected = get_label_quality_scores(labels=given, pred_probs=probabilities.mean(axis=0), method=score)
    np.testing.assert_allclose(frame["label_score"], expected, rtol=1e-6)
    assert (frame.sort_values("rank")["label_score"].diff().dropna() >= 0).all()  # rank 1: the lowest score
    _, _, default = run(tmp_path, capsys, "--class-names", ",".join(NAMES))
    assert frame["kept"].equals(default["kept"]) and frame["votes"].equals(default["votes"])  # only the ranking moved


def review_list_is_the_first_not_kept_of_the_ranking(frame: pd.DataFrame) -> None:
    ranked = frame[~frame["kept"]].sort_values("rank")
    listed = int(frame["is_label_issue"].sum())
    assert ranked["is_label_issue"].tolist() == [True] * listed + [False] * (len(ranked) - listed)
    assert not (frame["is_label_issue"] & frame["kept"]).any()


def test_the_review_list_s_length_follows_cleanlab_s_filter_options(tmp_path, planted, capsys):
    names = ["--class-names", ",".join(NAMES)]
    _, _, default = run(tmp_path, capsys, *names)
    _, _, half = run(tmp_path, capsys, *names, "--frac-noise", "0.5")
    _, _, by_class = run(
        tmp_path, capsys, *names, "--filter-by", "prune_by_class", "--num-to-remove-per-class", "1,1,1,1"
    )
    _, _, all_wrong = run(tmp_path, capsys, *names, "--filter-by", "predicted_neq_given")
    for frame in (default, half, by_class, all_wrong):
        review_list_is_the_first_not_kept_of_the_ranking(frame)
        assert frame["kept"].equals(default["kept"]) and frame["rank"].equals(default["rank"])
    lengths = [int(frame["is_label_issue"].sum()) for frame in (default, half, by_class, all_wrong)]
    assert 0 < lengths[1] < lengths[0] and lengths[2] <= 4 and lengths[3] >= lengths[0], lengths


@pytest.mark.parametrize(
    "options, message",
    [
        (["--frac-noise", "0"], r"--frac-noise 0\.0: a share of the estimated errors\. Fix: pass it in \(0, 1\]"),
        (
            ["--num-to-remove-per-class", "1,2"],
            r"--num-to-remove-per-class 1,2: 2 counts for Q = 4 classes\. Fix: pass one count of 0 or more for each "
            r"of the Q = 4 classes, in class order \(ant, bee, cat, dog\)$",
        ),
        (["--filter-by", "random"], r"argument --filter-by: invalid choice"),
    ],
    ids=["frac noise", "counts", "filter"],
)
def test_bad_list_options_exit_2_naming_the_fix(tmp_path, planted, capsys, options, message):
    if options[0] == "--filter-by":
        with pytest.raises(SystemExit) as exited:
            run(tmp_path, capsys, "--class-names", ",".join(NAMES), *options)
        assert exited.value.code == 2 and re.search(message, capsys.readouterr().err)
        return
    code, error, frame = run(tmp_path, capsys, "--class-names", ",".join(NAMES), *options)
    assert code == 2 and frame is None and re.search(message, error), error


def test_a_labels_file_not_in_utf_8_names_its_likely_encoding_and_the_fix(tmp_path, planted, capsys):
    labels = pd.read_csv(tmp_path / "labels.csv")
    labels.loc[0, "photo"] = "caf\u00e9.jpg"
    labels.to_csv(tmp_path / "labels.csv", index=False, encoding="cp1252")
    code, error, _ = run(tmp_path, capsys, "--class-names", ",".join(NAMES))
    assert code == 2 and re.search(
        r"labels\.csv is not UTF-8 \(it holds the byte 0xe9\); it reads as cp1252\. Fix: save it as UTF-8, e\.g\. "
        r"pandas\.read_csv\(path, encoding='cp1252'\)",
        error,
    ), error


@pytest.fixture
def table(tmp_path):
    """``enkcvs example``'s table: 60 rows of 3 classes (cat, dog, owl), ``animal`` the label column."""
    assert main(["example", "--out", str(tmp_path / "animals.csv"), "--samples", "60"]) == 0
    return tmp_path / "animals.csv"


def untrained(monkeypatch):
    """Fold models that fail the test if any trains."""
    import enkcvs.labelissues.find

    def trains(*_, **__):
        raise AssertionError("a fold model trained before the options were refused")

    monkeypatch.setattr(enkcvs.labelissues.find, "fold_probabilities", trains)


@pytest.mark.parametrize(
    "options, message",
    [
        *(
            (
                ["--filter-by", name, "--num-to-remove-per-class", "1,1,1"],
                rf"--num-to-remove-per-class goes with --filter-by prune_by_noise_rate, prune_by_class or both, not "
                rf"with --filter-by {name}, which takes no counts\. Fix: pass --filter-by prune_by_class \(the counts "
                r"per given class\), or drop --num-to-remove-per-class$",
            )
            for name in ("confident_learning", "predicted_neq_given", "low_self_confidence")
        ),
        (
            ["--filter-by", "low_normalized_margin", "--frac-noise", "0.5"],
            r"--frac-noise 0\.5 goes with --filter-by prune_by_noise_rate, prune_by_class or both, not with --filter-by "
            r"low_normalized_margin, whose list cleanlab does not scale\. Fix: drop --frac-noise, or pass one of "
            r"those filters$",
        ),
        (
            ["--filter-by", "prune_by_class", "--frac-noise", "0.5", "--num-to-remove-per-class", "1,1,1"],
            r"--frac-noise 0\.5 and --num-to-remove-per-class each set how many samples cleanlab flags: the counts "
            r"replace the estimate of the errors that --frac-noise scales\. Fix: drop one of them$",
        ),
        (
            ["--num-to-remove-per-class", "1,-1,1"],
            r"--num-to-remove-per-class 1,-1,1: counts of samples, 0 or more\. Fix: pass one count of 0 or more for "
            r"each class, in class order$",
        ),
    ],
    ids=["confident learning", "predicted neq given", "low self confidence", "frac noise", "both", "negative"],
)
def test_list_options_that_do_not_go_together_are_refused_before_any_file_is_read(
    tmp_path, monkeypatch, capsys, options, message
):
    untrained(monkeypatch)
    missing = tmp_path / "no such folder" / "animals.csv"  # read, it would be refused as missing
    for source in (
        ["--data", str(missing), "--label-column", "animal"],
        ["--probabilities", str(missing.with_suffix(".npy")), "--labels", str(missing)],
    ):
        code = main(["find-issues", *source, "--out", str(tmp_path / "out" / "issues.csv"), *options])
        error = capsys.readouterr().err.strip()
        assert code == 2 and re.search(message, error.removeprefix("enkcvs find-issues: error: ")), error
        assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("counts", ["1,1", "1,1,1,1"])
def test_counts_not_one_per_class_are_refused_before_any_fold_model_trains(
    tmp_path, table, monkeypatch, capsys, counts
):
    untrained(monkeypatch)
    code = main(
        [
            *("find-issues", "--data", str(table), "--label-column", "animal", "--id-column", "id"),
            *("--out", str(tmp_path / "out" / "issues.csv"), "--num-to-remove-per-class", counts),
        ]
    )
    error = capsys.readouterr().err.strip()
    count = len(counts.split(","))
    assert code == 2 and error == (
        f"enkcvs find-issues: error: --num-to-remove-per-class {counts}: {count} counts for Q = 3 classes. Fix: pass "
        "one count of 0 or more for each of the Q = 3 classes, in class order (cat, dog, owl)"
    ), error
    assert not (tmp_path / "out").exists() and "fold model" not in error


def test_counts_and_filters_that_go_together_reach_the_fold_models(tmp_path, table, monkeypatch, capsys):
    untrained(monkeypatch)
    for options in (
        ["--filter-by", "prune_by_class", "--num-to-remove-per-class", "1,0,2"],
        ["--filter-by", "both", "--frac-noise", "0.5"],
        ["--filter-by", "confident_learning", "--frac-noise", "1"],
    ):
        with pytest.raises(AssertionError, match="a fold model trained"):
            main(
                [
                    *("find-issues", "--data", str(table), "--label-column", "animal", "--id-column", "id"),
                    *("--out", str(tmp_path / "issues.csv"), *options),
                ]
            )
