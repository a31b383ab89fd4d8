"""``enkcvs find-issues --data``: a user's images (a folder of class folders, a CSV of path,label), texts and table,
trained on here and ranked end to end through the command's ``main``; bad input refused before anything trains, with
nothing written; the same seed, the same ranking; and the documented first commands from a fresh install."""

import json
import os
import re
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

import enkcvs
from enkcvs.labelissues.cli import main
from enkcvs.labelissues.example import write_example

REPO = Path(__file__).resolve().parents[1]
CLASSES = ("cat", "dog", "owl")
FAST = ["--folds", "2", "--repetitions", "2", "--epochs", "2"]
TABLE = ["--label-column", "animal", "--id-column", "id"]  # the columns of enkcvs example's table
#: The label-issue table's columns after the one that names the rows: one column a fact.
COLUMNS = ["is_label_issue", "label_score", "given_label", "predicted_label", "rank", "votes", "kept"]
QUESTIONS = {
    "person": [
        "Who wrote Hamlet ?",
        "Who is Pele ?",
        "Who painted the Mona Lisa ?",
        "Who invented the telephone ?",
        "Who was the first president ?",
        "Who discovered penicillin ?",
        "Who sang Yesterday ?",
        "Who built the pyramids ?",
    ],
    "place": [
        "Where is the Eiffel Tower ?",
        "Where is Denver ?",
        "Where do penguins live ?",
        "Where is Mount Fuji ?",
        "Where is the Sahara ?",
        "Where was Mozart born ?",
        "Where is the Louvre ?",
        "Where is Lake Tahoe ?",
    ],
}


@pytest.fixture
def table(tmp_path) -> Path:
    write_example(out=tmp_path / "animals.csv", samples=120, seed=2)
    return tmp_path / "animals.csv"


def write_images(root: Path, *, seed: int) -> list[tuple[str, str]]:
    """Six tiny images per class, one colour per class plus noise; returns (path relative to ``root``, class)."""
    rng = np.random.default_rng(seed)
    written = []
    for index, name in enumerate(CLASSES):
        (root / name).mkdir(parents=True)
        for i in range(6):
            pixels = np.clip(rng.normal(80 * index + 40, 20, size=(9, 10, 3)), 0, 255).astype(np.uint8)
            Image.fromarray(pixels).save(root / name / f"{i}.png")
            written.append((f"{name}/{i}.png", name))
    return written


def run(*arguments) -> int:
    return main(["find-issues", *map(str, arguments)])


def read(out: Path) -> tuple[pd.DataFrame, dict]:
    return pd.read_csv(out), json.loads(out.with_name(f"{out.stem}.provenance.json").read_text())


def test_a_table_is_trained_on_and_ranked_with_both_sets_and_a_review_sheet(table, capsys):
    out = table.parent / "issues.csv"
    assert run("--data", table, *TABLE, *FAST, "--epochs", "4", "--out", out) == 0
    frame, record = read(out)
    assert list(frame.columns) == ["id", *COLUMNS]  # no copy of the features
    assert frame["id"].equals(pd.read_csv(table)["id"])  # in the data's order
    ranked = frame.sort_values("rank")
    assert ranked["rank"].tolist() == list(range(1, 121)) and ranked["label_score"].is_monotonic_increasing
    assert set(frame["given_label"]) == set(CLASSES) and frame["kept"].equals(frame["votes"] >= 2)
    assert not (frame["is_label_issue"] & frame["kept"]).any()  # inside the not-kept set
    flipped = set(pd.read_csv(table.with_name("animals.flipped.csv"))["id"])
    assert len(set(ranked["id"].head(len(flipped))) & flipped) >= len(flipped) / 2  # the flipped labels rank first
    assert (record["command"], record["kind"], record["seed"], record["K"], record["M"], record["t"]) == (
        "enkcvs find-issues",
        "table",
        1,
        2,
        2,
        2,
    )
    assert record["recipe"]["model"] == "mlp" and record["recipe"]["epochs"] == 4 and record["samples"] == 120
    assert record["standardized"] is True and record["columns"]["id"] == "id"
    assert "versions" in record and record["columns"]["label"] == "animal"
    sheet = out.with_name("issues.review.md").read_text()
    assert sheet.startswith("# E-NKCVS ranking of animals.csv: K = 2, M = 2 iterations") and re.search(
        r"\|\s+x0\s+\|", sheet
    )
    summary = capsys.readouterr().out
    assert summary.startswith("2 x 2 fold models trained (mlp, 4 epochs, seed 1); ")
    assert "issues.provenance.json" in summary


def test_rows_are_named_by_a_column_that_looks_like_row_ids_else_numbered_from_one(table, capsys):
    """No --id-column: the example's ``id`` column (unique, named like an index) names the rows, as the file does,
    said in one line; without it, the rows are numbered as the file's, 1 the first after the header."""
    out = table.parent / "issues.csv"
    assert run("--data", table, "--label-column", "animal", *FAST, "--out", out) == 0
    frame, record = read(out)
    assert list(frame.columns) == ["id", *COLUMNS] and frame["id"].equals(pd.read_csv(table)["id"])
    assert record["columns"]["id"] == "id"
    assert "column 'id' looks like row ids: it names the rows in the output" in capsys.readouterr().err
    sheet = out.with_name("issues.review.md").read_text().splitlines()
    first = sheet[[line.startswith("|") for line in sheet].index(True) + 2]
    top = frame.sort_values("rank").iloc[0]
    assert [cell.strip() for cell in first.strip("|").split("|")][:2] == [str(top["rank"]), top["id"]]
    pd.read_csv(table).drop(columns="id").to_csv(table, index=False)
    assert run("--data", table, "--label-column", "animal", *FAST, "--out", out) == 0
    frame, record = read(out)
    assert list(frame.columns) == ["row", *COLUMNS] and frame["row"].tolist() == list(range(1, 121))
    assert record["columns"]["id"] is None


def test_the_same_seed_gives_the_same_ranking(table):
    outs = {}
    for name, seed in (("a", 3), ("b", 3), ("c", 4)):
        outs[name] = table.parent / f"{name}.csv"
        assert run("--data", table, *TABLE, *FAST, "--seed", seed, "--out", outs[name]) == 0
    assert outs["a"].read_bytes() == outs["b"].read_bytes()
    assert outs["a"].read_bytes() != outs["c"].read_bytes()
    assert read(outs["c"])[1]["seed"] == 4


def test_a_table_s_features_are_standardised_in_each_fold_unless_told_not_to(tmp_path):
    """One informative feature in units 1e4 times the others' and a noise feature as large: the fold models, whose
    first layer is linear in the raw numbers, find the flipped labels only on standardised features."""
    write_example(out=tmp_path / "animals.csv", samples=200, seed=2)
    frame = pd.read_csv(tmp_path / "animals.csv")
    frame["x0"] *= 1e4
    frame["noise"] = np.random.default_rng(0).normal(scale=1e4, size=len(frame))
    frame.to_csv(tmp_path / "animals.csv", index=False)
    flipped = set(pd.read_csv(tmp_path / "animals.flipped.csv")["id"])
    found = {}
    for name, extra in (("standardized", []), ("raw", ["--no-standardize"])):
        out = tmp_path / f"{name}.csv"
        assert run("--data", tmp_path / "animals.csv", *TABLE, *FAST, "--epochs", "4", *extra, "--out", out) == 0
        ranking, record = read(out)
        assert record["standardized"] is (name == "standardized")
        found[name] = len(set(ranking.sort_values("rank")["id"].head(len(flipped))) & flipped)
    assert found["standardized"] >= 0.8 * len(flipped) and found["raw"] <= 0.4 * len(flipped), found


def test_an_image_folder_is_ranked_with_its_paths_and_a_review_figure(tmp_path):
    write_images(tmp_path / "photos", seed=1)
    out = tmp_path / "issues.parquet"
    assert run("--data", tmp_path / "photos", "--folds", "2", "--repetitions", "1", "--epochs", "1", "--out", out) == 0
    frame = pd.read_parquet(out)
    record = json.loads((tmp_path / "issues.provenance.json").read_text())
    assert len(frame) == 18 and list(frame.columns) == ["path", *COLUMNS]  # each row named by its image's path
    assert frame["path"].str.match(r"^(cat|dog|owl)/\d\.png$").all() and frame["votes"].max() == 1
    assert (record["kind"], record["recipe"]["model"], record["image_size"], record["t"]) == ("images", "cnn4", 64, 1)
    assert (tmp_path / "issues.review.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "issues.review.pdf").read_bytes()[:5] == b"%PDF-"


def test_a_csv_of_image_paths_and_labels_is_ranked(tmp_path):
    written = write_images(tmp_path / "photos", seed=2)
    rows = pd.DataFrame(written, columns=["image", "label"]).assign(
        image=lambda frame: "photos/" + frame["image"], uid=[f"u{i}" for i in range(len(written))]
    )
    rows.loc[0, "image"] = str(tmp_path / rows.loc[0, "image"])  # absolute paths too
    rows.to_csv(tmp_path / "labels.csv", index=False)
    out = tmp_path / "issues.csv"
    assert (
        run(
            "--data",
            tmp_path / "labels.csv",
            "--id-column",
            "uid",
            "--folds",
            "2",
            "--repetitions",
            "1",
            "--epochs",
            "1",
            "--out",
            out,
        )
        == 0
    )  # the image column found by its name, the labels by theirs
    frame, record = read(out)
    assert list(frame.columns) == ["uid", *COLUMNS] and len(frame) == 18  # named by the ids, not the paths
    assert (frame["uid"] == [f"u{i}" for i in range(18)]).all()
    assert (record["kind"], record["columns"]["image"], record["columns"]["label"]) == ("images", "image", "label")
    assert (tmp_path / "issues.review.png").is_file()


def topic_texts(*, seed: int, per_topic: int = 30) -> tuple[list[str], list[str]]:
    """Short sentences on three topics, drawn from templates (texts, topics)."""
    rng = np.random.default_rng(seed)
    topics = {
        "sport": (
            "The {} scored twice in the final match",
            ["striker", "captain", "winger", "goalkeeper", "forward"],
            "and the team {} the league",
            ["won", "lost", "led", "topped", "left"],
        ),
        "cooking": (
            "Stir the {} into the simmering sauce",
            ["butter", "garlic", "onions", "cream", "basil"],
            "and {} it before serving",
            ["season", "taste", "bake", "salt", "cool"],
        ),
        "weather": (
            "Heavy {} is expected across the region",
            ["rain", "snow", "fog", "hail", "wind"],
            "as the storm moves {} tonight",
            ["north", "inland", "east", "closer", "south"],
        ),
    }
    texts, labels = [], []
    for topic, (first, firsts, second, seconds) in topics.items():
        for _ in range(per_topic):
            texts.append(f"{first.format(rng.choice(firsts))} {second.format(rng.choice(seconds))}.")
            labels.append(topic)
    return texts, labels


#: The rows of ``topic_texts(seed=4)`` that :func:`write_topic_texts` flips, each to the next topic.
FLIPPED_TEXTS = [3, 17, 38, 52, 66, 81]
TEXTS = ["--text-column", "text", "--label-column", "topic"]  # the columns of write_topic_texts' table


def write_topic_texts(path: Path, *, ids: bool = False) -> Path:
    """A CSV of ``topic_texts(seed=4)`` (columns text and topic; id first with ``ids``), the rows of
    :data:`FLIPPED_TEXTS` labelled with the next topic."""
    texts, true = topic_texts(seed=4)
    given = list(true)
    for row in FLIPPED_TEXTS:
        given[row] = {"sport": "cooking", "cooking": "weather", "weather": "sport"}[true[row]]
    frame = pd.DataFrame({"text": texts, "topic": given})
    if ids:
        frame.insert(0, "id", [f"t{row:02d}" for row in range(len(frame))])
    frame.to_csv(path, index=False)
    return path


def flips_first(frame: pd.DataFrame) -> bool:
    """Whether the first six of the ranking ``frame`` (rows numbered from 1) hold five of :data:`FLIPPED_TEXTS`."""
    top = set(frame.sort_values("rank")["row"].head(len(FLIPPED_TEXTS)) - 1)
    return len(top & set(FLIPPED_TEXTS)) >= len(FLIPPED_TEXTS) - 1


def test_a_csv_of_texts_is_ranked_on_frozen_embeddings_when_asked(tmp_path, monkeypatch, capsys):
    import enkcvs.labelissues.owndata

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(enkcvs.labelissues.owndata, "ENCODED_AT_ONCE", 32)
    out = tmp_path / "issues.csv"
    assert (
        run("--data", write_topic_texts(tmp_path / "texts.csv"), *TEXTS, "--text-recipe", "frozen", "--out", out) == 0
    )
    said = [line for line in capsys.readouterr().err.splitlines() if line.startswith("encoding texts: ")]
    assert said == ["encoding texts: 32/90", "encoding texts: 64/90", "encoding texts: 90/90"]  # progress, in order
    frame, record = read(out)
    assert (record["text_recipe"], record["recipe"]["model"], record["encoder"]["checkpoint"]) == (
        "frozen",
        "mlp",
        "all-MiniLM-L6-v2",
    )
    assert list(frame.columns) == ["row", *COLUMNS] and frame["row"].tolist() == list(range(1, 91))  # no text copy
    assert flips_first(frame), frame.sort_values("rank").head(10)


def test_a_csv_of_texts_fine_tunes_without_mixup_and_offline_when_asked(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    texts = [(text, label) for label, questions in QUESTIONS.items() for text in questions]
    pd.DataFrame(texts, columns=["question", "kind"]).to_csv(tmp_path / "questions.csv", index=False)
    out = tmp_path / "issues.csv"
    assert (
        run(
            "--data",
            tmp_path / "questions.csv",
            "--text-column",
            "question",
            "--label-column",
            "kind",
            "--text-recipe",
            "finetune",
            "--folds",
            "2",
            "--repetitions",
            "1",
            "--epochs",
            "1",
            "--out",
            out,
        )
        == 0
    )
    frame, record = read(out)
    assert (
        list(frame.columns) == ["row", *COLUMNS]
        and len(frame) == 16
        and set(frame["given_label"]) == {"person", "place"}
    )
    assert (record["kind"], record["text_recipe"], record["recipe"]["model"], record["recipe"]["mixup_alpha"]) == (
        "texts",
        "finetune",
        "text_classifier",
        None,
    )
    sheet = (tmp_path / "issues.review.md").read_text()
    assert re.search(r"\|\s+text\s+\|", sheet) and "Who wrote Hamlet ?" in sheet


@pytest.mark.parametrize(
    "recipe, options, step",
    [
        ("tfidf", ["--text-recipe", "tfidf"], "TfidfVectorizer(min_df=2, ngram_range=(1, 2), sublinear_tf=True)"),
        ("both", [], "Normalizer()"),
    ],
    ids=["tfidf", "both by default"],
)
def test_texts_train_a_tfidf_pipeline_fitted_on_each_fold_s_training_part(tmp_path, monkeypatch, recipe, options, step):
    """--text-recipe tfidf: a TF-IDF and logistic regression pipeline on the texts as they are; both, the default: the
    same TF-IDF beside the MiniLM embeddings, z-scored and scaled to unit length. Either way each of the M x K fold
    models fits the vectoriser on the texts of its own training part only."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    fitted, original = [], TfidfVectorizer.fit_transform

    def recorded(self, raw_documents, y=None):
        fitted.append([type(text) for text in raw_documents])
        return original(self, raw_documents, y)

    monkeypatch.setattr(TfidfVectorizer, "fit_transform", recorded)
    out = tmp_path / "issues.csv"
    data = write_topic_texts(tmp_path / "texts.csv")
    assert run("--data", data, *TEXTS, *options, "--folds", "3", "--repetitions", "2", "--out", out) == 0
    assert [len(types) for types in fitted] == [60] * 6  # 2 x 3 fold models, each on 2/3 of the 90 texts
    assert all(issubclass(kind, str) for types in fitted for kind in types)  # the texts, as strings
    frame, record = read(out)
    assert record["text_recipe"] == recipe and "recipe" not in record and "classifier" not in record
    pipeline = " ".join(record["pipeline"].split())
    assert "TfidfVectorizer(min_df=2, ngram_range=(1, 2), sublinear_tf=True)" in pipeline and step in pipeline
    assert "LogisticRegression(max_iter=2000)" in pipeline
    assert (record.get("encoder", {}).get("checkpoint"), record.get("max_tokens")) == (
        ("all-MiniLM-L6-v2", 64) if recipe == "both" else (None, None)
    )
    assert list(frame.columns) == ["row", *COLUMNS] and flips_first(frame), frame.sort_values("rank").head(10)


def import_text_pipeline_module(folder: Path, monkeypatch) -> None:
    """``mytexts`` written to ``folder`` and importable: ``make()`` returns a pipeline of texts, TF-IDF and logistic
    regression with scikit-learn's defaults."""
    (folder / "mytexts.py").write_text(
        "from sklearn.feature_extraction.text import TfidfVectorizer\n"
        "from sklearn.linear_model import LogisticRegression\n"
        "from sklearn.pipeline import make_pipeline\n\n\n"
        "def make():\n"
        "    return make_pipeline(TfidfVectorizer(), LogisticRegression(max_iter=1000))\n"
    )
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(sys.modules, "mytexts", raising=False)


def test_your_own_pipeline_takes_the_texts_as_they_are_with_text_recipe_raw(tmp_path, monkeypatch, capsys):
    """--text-recipe raw hands the texts, a 1-D array of str, to --classifier; without it the classifier gets the
    texts' embeddings, which a pipeline of texts cannot read: said with the fix."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import_text_pipeline_module(tmp_path, monkeypatch)
    data, out = write_topic_texts(tmp_path / "texts.csv"), tmp_path / "issues.csv"
    assert run("--data", data, *TEXTS, "--text-recipe", "raw", "--classifier", "mytexts:make", "--out", out) == 0
    frame, record = read(out)
    assert (record["text_recipe"], record["classifier"]["factory"], "encoder" in record) == (
        "raw",
        "mytexts:make",
        False,
    )
    assert "TfidfVectorizer()" in record["classifier"]["estimator"] and flips_first(frame)
    capsys.readouterr()
    assert run("--data", data, *TEXTS, "--classifier", "mytexts:make", "--out", tmp_path / "embedded.csv") == 2
    assert re.search(
        r"--classifier mytexts:make failed on the texts' embeddings \(AttributeError: .*\)\. Fix: pass --text-recipe "
        r"raw to hand it the texts as they are\n",
        capsys.readouterr().err,
    )
    assert not (tmp_path / "embedded.csv").exists()


@pytest.mark.parametrize(
    "options",
    [["--text-recipe", "tfidf"], ["--text-recipe", "both"], ["--text-recipe", "raw", "--classifier", "mytexts:make"]],
    ids=["tfidf", "both", "raw"],
)
def test_texts_as_they_are_rank_alike_on_a_shuffled_file_and_on_two_jobs(tmp_path, monkeypatch, options):
    """The texts' pipelines, ours and a user's, rank a file on --jobs 1 as on --jobs 2 and as a shuffled copy of it
    (compared after undoing the shuffle), bitwise."""
    from tests.test_issue_determinism import find_issues, same_rows, shuffled

    import_text_pipeline_module(tmp_path, monkeypatch)
    data = write_topic_texts(tmp_path / "texts.csv", ids=True)
    options = [*TEXTS, "--id-column", "id", *options]
    one, _ = find_issues(data, tmp_path / "one.csv", *options, "--jobs", "1")
    two, _ = find_issues(data, tmp_path / "two.csv", *options, "--jobs", "2", threads=2)
    moved, _ = find_issues(shuffled(data, seed=5), tmp_path / "moved.csv", *options)
    assert one["is_label_issue"].any() and not one["id"].equals(moved["id"])  # a list, of rows moved
    pd.testing.assert_frame_equal(one, two, check_exact=True)  # is_label_issue, label_score, rank, to the last bit
    same_rows(one, moved, key="id")


def with_blank_label(table: Path) -> None:
    frame = pd.read_csv(table)
    frame.loc[[4, 9], "animal"] = None
    frame.to_csv(table, index=False)


def with_an_infinite_value(table: Path) -> None:
    frame = pd.read_csv(table)
    frame.loc[7, "x0"] = np.inf
    frame.to_csv(table, index=False)


def with_a_small_class(table: Path, *, size: int = 3) -> None:
    frame = pd.read_csv(table)
    frame.loc[: size - 1, "animal"] = "eel"
    frame.to_csv(table, index=False)


def with_a_class_of_one(table: Path) -> None:
    with_a_small_class(table, size=1)


def with_two_small_classes(table: Path) -> None:
    frame = pd.read_csv(table)
    frame.loc[:1, "animal"] = "eel"
    frame.loc[2:4, "animal"] = "gnu"
    frame.to_csv(table, index=False)


def with_unique_labels(table: Path) -> None:
    frame = pd.read_csv(table)
    frame["animal"] = [f"animal{row}" for row in range(len(frame))]
    frame.to_csv(table, index=False)


def in_cp1252(table: Path) -> None:
    frame = pd.read_csv(table)
    frame.loc[0, "animal"] = "caf\u00e9"
    frame.to_csv(table, index=False, encoding="cp1252")


def with_semicolons(table: Path) -> None:
    pd.read_csv(table).to_csv(table, index=False, sep=";")


def with_no_rows(table: Path) -> None:
    pd.read_csv(table).head(0).to_csv(table, index=False)


@pytest.mark.parametrize(
    "arguments, change, message",
    [
        ([], None, r"pass one of --data PATH .* or --probabilities FILE"),
        (["--data", "{table}", "--probabilities", "{table}"], None, "pass only one of them"),
        (["--data", "{table}", "--labels", "{table}"], None, r"--labels goes with --probabilities, not with --data"),
        (["--probabilities", "{table}", "--folds", "3"], None, r"--folds goes with --data, not with --probabilities"),
        (["--data", "{dir}/nowhere.csv"], None, r"--data \S+nowhere\.csv: no such file or folder"),
        (
            ["--data", "{table}"],
            None,
            r"has no column named 'label' for the labels; its columns are \[.*\]\. Fix: pass --label-column naming",
        ),
        (
            ["--data", "{table}", "--label-column", "species"],
            None,
            r"--label-column species: --data \S+animals\.csv has no such column; its columns are",
        ),
        (["--data", "{table}", *TABLE, "--kind", "texts"], None, "pass --text-column"),
        (["--data", "{dir}", *TABLE], None, r"is a folder, read as images .* which takes no --label-column"),
        (
            ["--data", "{table}", *TABLE],
            with_blank_label,
            r"2 of 120 rows have no label in column 'animal' \(rows 4, 9; .*\)\. Fix: label or drop those rows",
        ),
        (
            ["--data", "{table}", *TABLE],
            with_an_infinite_value,
            r"1 of 120 rows have infinite features \(rows 7; .*\)\. Fix: fill in or drop those rows",
        ),
        (["--data", "{table}", *TABLE, "--repetitions", "3", "-t", "4"], None, r"--threshold 4: .* t lies in 1\.\.3"),
        (["--data", "{table}", *TABLE, "--folds", "1"], None, r"--folds 1: pass --folds 2 or more"),
        (["--data", "{table}", *TABLE, "--folds", "121"], None, r"holds 120 samples, too few for 121 folds"),
        (["--data", "{table}", *TABLE, "--review-top", "0"], None, r"--review-top 0"),
        (
            ["--data", "{table}", *TABLE],
            with_a_small_class,
            r"--folds 4: 1 of \d+ classes of --data \S+animals\.csv has fewer samples than the 4 folds: 'eel' \(3\); "
            r".*\. Fix: "
            r"pass --folds 3 or fewer, or add samples of these classes",
        ),
        (
            ["--data", "{table}", *TABLE, "--folds", "2"],
            with_a_class_of_one,
            r"--folds 2: 1 of \d+ classes .* fewer samples than the 2 folds: 'eel' \(1\); .*\. Fix: add samples of these "
            r"classes, or drop their rows \(at --folds 2 a class needs 2 samples, and --folds is at least 2\)",
        ),
        (
            ["--data", "{table}", *TABLE],
            with_two_small_classes,
            r"--folds 4: 2 of \d+ classes .* have fewer samples than the 4 folds: 'eel' \(2\), 'gnu' \(3\); .*\. Fix: pass "
            r"--folds 2 or fewer",
        ),
        (
            ["--data", "{dir}", "--no-standardize"],
            None,
            r"--no-standardize keeps a table's features or the embeddings as they are, but --data \S+ is read as images "
            r"without --encoder\. Fix: drop",
        ),
        (["--probabilities", "{table}", "--no-standardize"], None, r"--no-standardize goes with --data"),
        (
            ["--data", "{table}", *TABLE],
            with_unique_labels,
            r"--folds 4: 120 of 120 classes .* fewer samples than the 4 folds: '\w+' \(1\), .* and 115 more; .*\. "
            r"Fix: every label is unique \(an id column\?\)",
        ),
        (["--data", "{table}", *TABLE], with_semicolons, r"separator looks like ';'"),
        (
            ["--data", "{table}", *TABLE],
            in_cp1252,
            r"animals\.csv is not UTF-8 \(it holds the byte 0xe9\); it reads as cp1252\. Fix: save it as UTF-8, e\.g\. "
            r"pandas\.read_csv\(path, encoding='cp1252'\)",
        ),
        (
            ["--data", "{table}", *TABLE],
            with_no_rows,
            r"animals\.csv is an empty table: a header \(id, x0, .*\) and no rows",
        ),
        (
            ["--data", "{table}", *TABLE, "--text-recipe", "frozen"],
            None,
            r"--text-recipe frozen chooses how texts train, and --data \S+animals\.csv is read as table\. Fix: drop",
        ),
        (["--probabilities", "{table}", "--text-recipe", "finetune"], None, r"--text-recipe goes with --data"),
        (
            ["--data", "{table}", *TABLE, "--text-column", "x0", "--text-recipe", "raw"],
            None,
            r"--text-recipe raw hands the texts as they are to your --classifier, and none is given\. Fix: pass "
            r"--classifier MODULE:FACTORY",
        ),
        (
            ["--data", "{table}", *TABLE, "--text-column", "x0", "--text-recipe", "tfidf", "--classifier", "m:make"],
            None,
            r"--classifier m:make and --text-recipe tfidf each choose the fold models\. Fix: pass --text-recipe raw",
        ),
        (
            ["--data", "{table}", *TABLE, "--text-column", "x0", "--text-recipe", "finetune", "--classifier", "m:make"],
            None,
            r"--classifier m:make and --text-recipe finetune each choose the fold models",
        ),
    ],
    ids=[
        "neither",
        "both",
        "labels with data",
        "folds with probabilities",
        "missing",
        "no label column",
        "unknown label column",
        "texts without text column",
        "folder with columns",
        "blank labels",
        "infinite value",
        "threshold",
        "one fold",
        "too many folds",
        "review top",
        "small class",
        "class of one",
        "two small classes",
        "no-standardize with images",
        "no-standardize with probabilities",
        "every label unique",
        "semicolons",
        "cp1252",
        "no rows",
        "text recipe for a table",
        "text recipe with probabilities",
        "raw texts without a classifier",
        "classifier with tfidf",
        "classifier with finetune",
    ],
)
def test_bad_input_is_refused_before_training_with_nothing_written(
    table, capsys, monkeypatch, arguments, change, message
):
    import enkcvs.training.crossval

    for trains in ("out_of_fold_probabilities", "fold_probabilities"):  # fold by fold: a standardised table
        monkeypatch.setattr(enkcvs.training.crossval, trains, lambda **_: pytest.fail("trained despite bad input"))
    if change is not None:
        change(table)
    out = table.parent / "out" / "issues.csv"
    filled = [argument.format(table=table, dir=table.parent) for argument in arguments]
    assert run(*filled, "--out", out) == 2
    error = capsys.readouterr().err
    assert error.startswith("enkcvs find-issues: error: ") and re.search(message, error), error
    assert not out.parent.exists()


def test_a_missing_image_file_is_named_with_its_row(tmp_path, capsys):
    written = write_images(tmp_path / "photos", seed=3)
    rows = pd.DataFrame(written, columns=["path", "label"]).assign(path=lambda frame: "photos/" + frame["path"])
    rows.loc[7, "path"] = "photos/cat/gone.png"
    rows.to_csv(tmp_path / "labels.csv", index=False)
    assert run("--data", tmp_path / "labels.csv", "--out", tmp_path / "issues.csv") == 2
    error = capsys.readouterr().err
    assert re.search(r"1 of 18 images in column 'path' are not files \(rows 7; .*gone\.png\)", error), error
    assert not (tmp_path / "issues.csv").exists()


def test_a_missing_training_package_names_the_extra_to_install(table, capsys, monkeypatch):
    import importlib.util

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *rest: None if name == "torch" else find_spec(name, *rest)
    )
    assert run("--data", table, *TABLE, "--out", table.parent / "issues.csv") == 2
    from enkcvs.io import install_command

    assert f"Fix: {install_command(extras='train')}" in capsys.readouterr().err


def test_the_documented_first_commands_run_from_a_fresh_install(tmp_path):
    """docs/your-data.md's install and first commands: the repository built as a wheel (by this environment's
    setuptools, the package's data in it) and installed, saying its version, offline and without its dependencies, into a new virtual environment that sees this
    one's packages (``--system-site-packages`` where they are the system's; a path file where they live in a virtual
    environment, as here), then the page's ``enkcvs`` lines run with that environment's own ``enkcvs``, on fewer
    epochs and folds."""
    page = (REPO / "docs" / "your-data.md").read_text()
    block = re.search(r"```bash\n(.*?)```", page.split("## Install", 1)[1], flags=re.DOTALL)[1]
    assert re.search(r"^pip install \S*\[train,report\]", block, flags=re.MULTILINE)
    commands = [line.split() for line in block.splitlines() if line.startswith("enkcvs ")]
    assert [command[1] for command in commands] == ["example", "find-issues"]
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(site, "outer.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--quiet",
            "--wheel-dir",
            str(tmp_path / "wheels"),
            str(REPO),
        ],
        check=True,
        cwd=tmp_path,
    )
    (wheel,) = (tmp_path / "wheels").glob("enkcvs-*.whl")
    with zipfile.ZipFile(wheel) as archive:  # the package's data: the pages' templates, the paper's published tables
        assert {"enkcvs/report/published.csv", "enkcvs/report/templates/README.md.j2"} <= set(archive.namelist())
    # the new environment sees only what it installed and the packages it is given: not a PYTHONPATH of the caller's
    clean = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
    subprocess.run(
        [python, "-m", "pip", "install", "--no-deps", "--no-index", "--quiet", str(wheel)], check=True, env=clean
    )
    version = subprocess.run([str(venv / "bin" / "enkcvs"), "--version"], capture_output=True, text=True, env=clean)
    assert version.stdout.strip() == f"enkcvs {enkcvs.__version__}", version.stderr
    fast = {"example": ["--samples", "90"], "find-issues": FAST}
    for command in commands:
        done = subprocess.run(
            [str(venv / "bin" / "enkcvs"), *command[1:], *fast[command[1]]],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            env=clean,
        )
        assert done.returncode == 0, done.stderr[-3000:]
    where = subprocess.run(
        [python, "-c", "import enkcvs; print(enkcvs.__file__)"], capture_output=True, text=True, check=True, env=clean
    ).stdout
    assert where.startswith(str(venv))  # the installed package, not this checkout
    frame = pd.read_csv(tmp_path / "issues.csv")
    assert len(frame) == 90 and set(COLUMNS + ["id"]) <= set(frame.columns)
    assert (tmp_path / "issues.review.md").is_file() and json.loads((tmp_path / "issues.provenance.json").read_text())[
        "kind"
    ] == "table"


def test_the_cpu_only_install_pins_torch_as_the_package_does():
    """docs/your-data.md's CPU-only route installs PyTorch's CPU build at the versions the lock pins, which the train
    extra's ranges admit, so that pip keeps it when it installs the package."""
    import tomllib

    from packaging.requirements import Requirement

    page = (REPO / "docs" / "your-data.md").read_text()
    (line,) = [line for line in page.splitlines() if "--index-url https://download.pytorch.org/whl/cpu" in line]
    documented = dict(part.split("==") for part in line.split() if "==" in part)
    locked = dict(line.split("==") for line in (REPO / "requirements.lock").read_text().split() if "==" in line)
    assert documented == {name: locked[name] for name in ("torch", "torchvision")}
    extra = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]["train"]
    for requirement in map(Requirement, extra):
        if requirement.name in documented:
            assert requirement.specifier.contains(documented[requirement.name]), requirement


def test_a_messy_table_is_encoded_imputed_and_its_row_ids_left_out_each_in_one_line(table, capsys):
    """Text and boolean columns, missing values and an R-style rownames column, as tables come: accepted, each said
    once, before training; the output in the data's order."""
    frame = pd.read_csv(table)
    rng = np.random.default_rng(3)
    frame.insert(0, "rownames", np.arange(1, len(frame) + 1))
    frame["habitat"] = rng.choice(["forest", "town", "field"], size=len(frame))
    frame["tagged"] = rng.random(len(frame)) < 0.5
    frame.loc[rng.random(len(frame)) < 0.1, "x0"] = np.nan
    frame.to_csv(table, index=False)
    out = table.parent / "issues.csv"
    assert run("--data", table, *TABLE, *FAST, "--epochs", "4", "--out", out) == 0  # enough to keep most
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "warning:" in line]
    assert len(lines) == 3, err
    assert "column ['rownames'] looks like row ids" in lines[0] and "--feature-columns" in lines[0]
    assert "2 columns of text, categories or booleans (habitat, tagged) one-hot encoded into 5 0/1 features" in lines[1]
    assert "missing values in 1 column (x0): imputed inside each fold" in lines[2]
    assert err.index(lines[2]) < err.index("epochs to train")  # said before anything trains
    issues, record = read(out)
    assert issues["id"].equals(frame["id"]) and record["standardized"] is True
    sheet = out.with_name("issues.review.md").read_text()
    assert "rownames" not in sheet and "habitat=forest" in sheet


def write_classifier_module(folder: Path) -> None:
    (folder / "mymodels.py").write_text(
        "from sklearn.linear_model import LogisticRegression\n"
        "FITTED = []\n"
        "FAIL_AFTER = None\n\n\n"
        "class Counted(LogisticRegression):\n"
        "    def fit(self, X, y):\n"
        "        if FAIL_AFTER is not None and len(FITTED) >= FAIL_AFTER:\n"
        "            raise KeyboardInterrupt\n"
        "        FITTED.append(len(X))\n"
        "        return super().fit(X, y)\n\n\n"
        "def make():\n"
        "    return Counted(max_iter=500)\n\n\n"
        "def broken():\n"
        "    return object()\n"
    )


def imported_classifier_module(folder: Path, monkeypatch):
    """``mymodels`` written to ``folder`` and imported afresh, with a cache of this test's own."""
    write_classifier_module(folder)
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(sys.modules, "mymodels", raising=False)
    monkeypatch.setenv("ENKCVS_CACHE_DIR", str(folder / "cache"))
    import mymodels

    return mymodels


def test_your_own_classifier_trains_as_the_fold_models_from_a_factory(table, capsys, monkeypatch):
    mymodels = imported_classifier_module(table.parent, monkeypatch)

    out = table.parent / "issues.csv"
    assert (
        run(
            "--data", table, *TABLE, "--folds", "3", "--repetitions", "2", "--classifier", "mymodels:make", "--out", out
        )
        == 0
    )
    assert len(mymodels.FITTED) == 6 and set(mymodels.FITTED) == {80}  # 2 x 3 fold models on 2/3 of 120 rows each
    issues, record = read(out)
    assert record["classifier"]["factory"] == "mymodels:make" and "recipe" not in record
    assert "Counted(max_iter=500)" in record["classifier"]["estimator"]
    flipped = set(pd.read_csv(table.with_name("animals.flipped.csv"))["id"])
    assert len(set(issues.sort_values("rank")["id"].head(len(flipped))) & flipped) >= len(flipped) / 2
    assert capsys.readouterr().out.startswith("2 x 3 fold models trained (Counted, seed 1); ")
    for spec, message in (
        ("mymodels", r"expected MODULE:FACTORY"),
        ("nowhere:make", r"cannot import nowhere"),
        ("mymodels:absent", r"mymodels has no function absent"),
        ("mymodels:broken", r"what broken\(\) returns \(object\) has no fit or predict_proba"),
    ):
        assert run("--data", table, *TABLE, "--classifier", spec, "--out", table.parent / "bad" / "i.csv") == 2
        assert re.search(message, capsys.readouterr().err)
    assert not (table.parent / "bad").exists()


def test_a_stopped_run_goes_on_from_the_fold_models_it_finished(table, monkeypatch):
    """Killed after four of six fold models, the same command again trains only the two left, and ranks exactly as
    a run never stopped; --no-cache trains all six."""
    mymodels = imported_classifier_module(table.parent, monkeypatch)

    command = ("--data", table, *TABLE, "--folds", "3", "--repetitions", "2", "--classifier", "mymodels:make")
    monkeypatch.setattr(mymodels, "FAIL_AFTER", 4)
    with pytest.raises(KeyboardInterrupt):
        run(*command, "--out", table.parent / "stopped.csv")
    assert len(mymodels.FITTED) == 4 and not (table.parent / "stopped.csv").exists()
    monkeypatch.setattr(mymodels, "FAIL_AFTER", None)
    assert run(*command, "--out", table.parent / "resumed.csv") == 0
    assert len(mymodels.FITTED) == 6
    assert run(*command, "--no-cache", "--out", table.parent / "fresh.csv") == 0
    assert len(mymodels.FITTED) == 12
    assert (table.parent / "resumed.csv").read_bytes() == (table.parent / "fresh.csv").read_bytes()


def test_a_stopped_stacked_run_goes_on_from_its_epoch_checkpoint(table, monkeypatch):
    """The default table recipe trains its fold models together: stopped after an epoch, the same command goes on from
    the stack's checkpoint in the cache and ranks as a run never stopped."""
    import enkcvs.training.stacked
    import enkcvs.training.train

    monkeypatch.setenv("ENKCVS_CACHE_DIR", str(table.parent / "cache"))
    epochs = []
    original = enkcvs.training.train.run_epochs

    def stopping(training, **options):
        def on_epoch(epoch):
            epochs.append(epoch)
            if epoch == 2 and len(epochs) == 2:
                raise KeyboardInterrupt
            if options.get("on_epoch"):
                options["on_epoch"](epoch)

        return original(training, **{**options, "on_epoch": on_epoch})

    monkeypatch.setattr(enkcvs.training.stacked, "run_epochs", stopping)
    command = ("--data", table, *TABLE, *FAST, "--epochs", "3")
    with pytest.raises(KeyboardInterrupt):
        run(*command, "--out", table.parent / "stopped.csv")
    assert run(*command, "--out", table.parent / "resumed.csv") == 0
    assert epochs == [1, 2, 3]  # the checkpoint after epoch 2 was saved before the stop: only epoch 3 again
    monkeypatch.setattr(enkcvs.training.stacked, "run_epochs", original)
    assert run(*command, "--no-cache", "--out", table.parent / "fresh.csv") == 0
    assert (table.parent / "resumed.csv").read_bytes() == (table.parent / "fresh.csv").read_bytes()


def test_the_rows_are_named_by_text_or_whole_float_ids_but_never_by_dates(tmp_path):
    """No --id-column: the first column the id rule picks, fully present and unique, names the rows; a unique date
    column is a time (a feature), and whole floats with a gap are left out of the features, not the rows' names."""
    from enkcvs.labelissues.owndata import with_detected_id

    columns = {"label": "label", "id": None, "image": None, "text": None}
    n = 30
    frame = pd.DataFrame(
        {
            "day": pd.date_range("2020-01-01", periods=n).strftime("%Y-%m-%d"),
            "band": np.arange(n) + 302.0,
            "tag": [f"t{i}" for i in range(n)],
            "x": np.random.default_rng(4).normal(size=n),
            "label": np.arange(n) % 2,
        }
    )
    frame.to_parquet(tmp_path / "data.parquet")
    with pytest.warns(UserWarning, match=r"column 'band' looks like row ids: it names the rows in the output"):
        assert with_detected_id(tmp_path / "data.parquet", columns=columns, feature_columns=None)["id"] == "band"
    frame.loc[3, "band"] = np.nan
    frame.to_parquet(tmp_path / "gap.parquet")
    with pytest.warns(UserWarning, match=r"column 'tag' looks like row ids"):
        assert with_detected_id(tmp_path / "gap.parquet", columns=columns, feature_columns=None)["id"] == "tag"
    frame[["day", "x", "label"]].to_csv(tmp_path / "daily.csv", index=False)
    assert with_detected_id(tmp_path / "daily.csv", columns=columns, feature_columns=None)["id"] is None


def test_a_hawks_like_table_is_ranked_with_its_band_numbers_naming_the_rows(tmp_path, capsys):
    """The report's table through the command: the band numbers (unique integers) name the rows, the times read as
    minutes, the codes one-hot, each said in one line before training: 13 features."""
    from test_own_sources import make_hawks

    frame = make_hawks(seed=5, n=120)
    frame.to_csv(tmp_path / "hawks.csv", index=False)
    out = tmp_path / "issues.csv"
    assert run("--data", tmp_path / "hawks.csv", "--label-column", "Species", *FAST, "--out", out) == 0
    issues, record = read(out)
    assert list(issues.columns) == ["BandNumber", *COLUMNS] and issues["BandNumber"].equals(frame["BandNumber"])
    assert record["columns"]["id"] == "BandNumber"
    lines = [line for line in capsys.readouterr().err.splitlines() if "warning:" in line]
    assert "column 'BandNumber' looks like row ids: it names the rows in the output" in lines[0]
    assert "2 columns read as numbers: CaptureTime (times of day, in minutes since midnight), ReleaseTime" in lines[1]
    assert "(Age, Sex) one-hot encoded into 5 0/1 features" in lines[2] and "(ReleaseTime, Wing, Culmen)" in lines[3]
    sheet = out.with_name("issues.review.md").read_text()
    assert "CaptureTime" in sheet and "Sex=<missing>" in sheet and "BandNumber=" not in sheet
