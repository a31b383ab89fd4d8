"""A user's own data through the workflow: a table with planted label errors and an image folder (no test sets), and
a set of the user's own out-of-fold probabilities selected without training."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from PIL import Image

pytestmark = pytest.mark.workflow

CLASSES = np.array(["cat", "dog", "owl"])
#: The label-issue table's columns after the one that names the rows.
SLIM = ["is_label_issue", "label_score", "given_label", "predicted_label", "rank", "votes", "kept"]


@pytest.fixture(scope="module")
def own_run(tmp_path_factory, run_snakemake):
    """One run over a planted-error table, a tiny image folder and an OOF set; returns (workdir, planted rows)."""
    workdir = tmp_path_factory.mktemp("own")
    rng = np.random.default_rng(0)
    true = np.repeat(np.arange(3), 100)
    features = rng.normal(size=(300, 5)) + 3.0 * np.eye(3, 5)[true]
    planted = rng.choice(300, size=30, replace=False)
    given = true.copy()
    given[planted] = (true[planted] + rng.integers(1, 3, size=30)) % 3
    table = pd.DataFrame(features, columns=[f"x{i}" for i in range(5)]).assign(animal=CLASSES[given])
    table.insert(0, "photo", [f"IMG_{row:04d}" for row in range(300)])  # the user's row ids, not a feature
    table.to_csv(workdir / "animals.csv", index=False)
    for name in CLASSES:
        (workdir / "photos" / name).mkdir(parents=True)
        for i in range(6):
            colour = tuple(int(c) for c in rng.integers(0, 255, size=3))
            Image.new("RGB", (10, 9), colour).save(workdir / "photos" / name / f"{i}.png")
    probabilities = np.full((300, 3), 0.1)
    probabilities[np.arange(300), true] = 0.8
    np.save(workdir / "oof.npy", probabilities)
    pd.DataFrame({"label": given, "uid": np.arange(300) * 7}).to_csv(workdir / "labels.csv", index=False)
    np.save(workdir / "true.npy", true)
    recipe = {"model": "mlp", "optimizer": "sgd", "lr": 0.05, "epochs": 8, "batch_size": 32}
    config = {
        "datasets": {
            "animals": {
                "source": "table",
                "source_options": {"path": "animals.csv", "label_column": "animal", "id_column": "photo"},
                "noise": ["real"],
                "find_issues": True,
                "recipe": recipe,
            },
            "photos": {
                "source": "image_folder",
                "source_options": {"root": "photos", "resize": 10, "crop": 8},
                "noise": ["real"],
                "find_issues": True,
                "recipe": {**recipe, "model": "cnn4", "epochs": 1},
            },
        },
        "seeds": [1, 2],
        "selection": {"K": 3, "M": 2, "t": 2},
        "methods": ["ce", "enkcvs"],
        "compare_confident_learning": True,
        "oof": {
            "mine": {
                "probabilities": "oof.npy",
                "labels": "labels.csv",
                "label_column": "label",
                "id_column": "uid",
                "true_labels": "true.npy",
                "threshold": 1,
            }
        },
    }
    (workdir / "own.yaml").write_text(yaml.safe_dump(config))
    # the photos are read in the fold jobs' own process (a profile's resource): no worker start on a small folder
    done = run_snakemake(workdir, "--set-resources", "train_fold:loader_workers=0", config=workdir / "own.yaml")
    assert done.returncode == 0, done.stderr[-4000:]
    return workdir, planted


@pytest.mark.parametrize("where", ["real/seed1", "real/seed2", "real"])
def test_planted_label_errors_rank_first_in_each_seed_and_merged(own_run, where):
    workdir, planted = own_run
    issues = pd.read_parquet(workdir / "results" / "issues" / "animals" / where / "label_issues.parquet")
    needed = 4 if where == "real" else 2  # merged: 2 seeds x M = 2, kept at t = 2 per seed
    assert list(issues.columns) == ["photo", *SLIM]  # one column a fact, the rows named by the file's ids
    assert len(issues) == 300 and list(issues["photo"]) == [f"IMG_{row:04d}" for row in range(300)]  # data order
    assert sorted(issues["rank"]) == list(range(1, 301))
    assert set(issues["given_label"]) == set(CLASSES) and issues["votes"].max() == needed
    assert issues["kept"].equals(issues["votes"] >= needed)
    issues = issues.sort_values("rank")
    assert issues["label_score"].is_monotonic_increasing
    listed = issues["is_label_issue"].to_numpy()
    assert listed.sum() > 0 and not (issues["is_label_issue"] & issues["kept"]).any()
    assert issues.loc[~issues["kept"], "is_label_issue"].head(listed.sum()).all()  # the ranking's first not kept
    rows = issues.index.to_numpy()  # positions in the data
    flagged = set(rows[~issues["kept"].to_numpy()])
    assert len(flagged & set(planted)) >= 0.8 * len(planted)  # most planted errors are found
    assert len(set(rows[:30]) & set(planted)) >= 20  # and ranked first
    summary = (workdir / "results" / "issues" / "animals" / where / "summary.md").read_text()
    assert (
        f"Review list (likely label errors to check: the first not kept of the ranking, as many as confident learning "
        f"finds among them on the calibrated probabilities): {listed.sum()} of 300 samples"
        in summary
        and f"Kept (the paper's selection, to train on): {issues['kept'].sum()} " in summary
    )
    assert "| rank" not in summary.split("\n")[0]


def test_image_folder_issues_come_with_a_review_sheet(own_run):
    workdir, _ = own_run
    merged = workdir / "results" / "issues" / "photos" / "real"
    issues = pd.read_parquet(merged / "label_issues.parquet")
    assert len(issues) == 18 and list(issues.columns) == ["path", *SLIM] and issues["path"].str.endswith(".png").all()
    assert (merged / "review.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (merged / "review.pdf").read_bytes()[:5] == b"%PDF-"
    assert not (merged / "review.md").exists()


def test_table_issues_come_with_a_markdown_review_sheet_of_ids_labels_and_features(own_run):
    workdir, _ = own_run
    merged = workdir / "results" / "issues" / "animals" / "real"
    issues = pd.read_parquet(merged / "label_issues.parquet")
    sheet = (merged / "review.md").read_text()
    assert sheet.startswith(
        "# animals, noise real: E-NKCVS ranking merged over seeds 1, 2 (K = 3; M = 2 iterations "
        "per seed, 4 in all; t = 2 per seed)"
    )
    lines = [line for line in sheet.splitlines() if line.startswith("|")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    assert header == [
        "rank",
        "photo",
        "given",
        "suggested",
        "votes",
        "label score",
        "review list",
        "kept",
        "x0",
        "x1",
        "x2",
        "x3",
        "x4",
    ]
    assert len(lines) - 2 == 36  # report.review_top's default
    for line, row in zip(lines[2:], issues.sort_values("rank").to_dict("records")):
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        assert cells[:6] == [
            str(row["rank"]),
            row["photo"],
            row["given_label"],
            row["predicted_label"],
            str(row["votes"]),
            f"{row['label_score']:.3f}",
        ]
        assert cells[6:8] == ["yes" if row["is_label_issue"] else "no", "yes" if row["kept"] else "no"]
    assert f"{issues['is_label_issue'].sum()} in the review list, {issues['kept'].sum()} kept." in sheet
    assert not (merged / "review.png").exists()


def test_cleanlab_ranks_the_same_labels_beside_e_nkcvs_where_no_true_labels_exist(own_run):
    workdir, planted = own_run
    merged = workdir / "results" / "issues" / "animals" / "real"
    issues = pd.read_parquet(merged / "label_issues.parquet")
    agreement = pd.read_csv(merged / "confident_learning.csv")
    assert agreement["set"].tolist() == ["flagged", "top 36", "top 100"]  # top 1000 > 300 samples: left out
    flagged = agreement.iloc[0]
    assert flagged["E-NKCVS"] == (~issues["kept"]).sum() and 0 < flagged["both"] <= flagged["cleanlab"]
    assert agreement.loc[1, "both"] >= 20  # the planted errors top both rankings
    assert "filter_by=prune_by_noise_rate" in (merged / "confident_learning.md").read_text()


def test_own_data_without_a_test_set_trains_no_final_model(own_run):
    workdir, _ = own_run
    assert not (workdir / "results" / "final").exists()
    assert not (workdir / "results" / "report" / "table2.md").exists()
    assert not (workdir / "results" / "report" / "table3.md").exists()  # no paper table for the user's own data


def test_own_out_of_fold_probabilities_are_selected_without_training(own_run):
    workdir, planted = own_run
    issues = pd.read_parquet(workdir / "results" / "oof" / "mine" / "label_issues.parquet")
    assert set(np.flatnonzero(~issues["kept"])) == set(planted)  # the probabilities point at the truth
    assert list(issues.columns) == ["uid", *SLIM] and (issues["uid"] == np.arange(300) * 7).all()
    metrics = json.loads((workdir / "results" / "oof" / "mine" / "metrics.json").read_text())
    assert metrics["kept_precision"] == 1.0 and metrics["kept_recall"] == 1.0 and metrics["iterations"] == 1
    assert metrics["kept"] == 300 - len(planted) and metrics["in_review_list"] == issues["is_label_issue"].sum()
    assert "precision" not in metrics


def test_a_label_column_that_does_not_exist_is_named(tmp_path, run_snakemake):
    pd.DataFrame({"x": [0.0, 1.0, 2.0, 3.0], "y": [0, 1, 0, 1]}).to_csv(tmp_path / "t.csv", index=False)
    config = {
        "datasets": {
            "t": {
                "source": "table",
                "source_options": {"path": "t.csv", "label_column": "label"},
                "noise": ["real"],
                "find_issues": True,
                "recipe": {"model": "mlp", "optimizer": "sgd", "lr": 0.1, "epochs": 1},
            }
        },
        "seeds": [1],
        "selection": {"K": 2, "M": 1, "t": 1},
        "methods": ["ce"],
    }
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(config))
    done = run_snakemake(tmp_path, config=tmp_path / "c.yaml")
    assert done.returncode != 0
    log = Path(tmp_path / "logs" / "data" / "t.log").read_text()
    assert "has no column 'label'" in log and not (tmp_path / "results" / "data" / "t.npz").exists()


def test_the_docs_own_data_config_plans_each_seed_and_the_merged_ranking(tmp_path, run_snakemake):
    """docs/your-data.md's config, verbatim, on a table with the columns it names: valid, and its dry run plans one
    ranking per seed and the merged one."""
    readme = (Path(__file__).parents[1] / "docs" / "your-data.md").read_text()
    section = readme.split("## With the workflow", 1)[1]
    (tmp_path / "mine.yaml").write_text(section.split("```yaml\n", 1)[1].split("```", 1)[0])
    rng = np.random.default_rng(0)
    table = pd.DataFrame(rng.normal(size=(40, 3)), columns=["x0", "x1", "x2"])
    table.assign(animal=CLASSES[np.arange(40) % 3], photo=[f"p{i}" for i in range(40)]).to_csv(
        tmp_path / "animals.csv", index=False
    )
    done = run_snakemake(tmp_path, "-n", config=tmp_path / "mine.yaml")
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    for planned in (
        "results/issues/animals/real/seed1/label_issues.parquet",
        "results/issues/animals/real/seed2/label_issues.parquet",
        "results/issues/animals/real/label_issues.parquet",
    ):
        assert planned in done.stdout


def test_texts_and_a_table_of_image_paths_need_no_recipe_key_beyond_the_model_and_render_no_paper_table(
    tmp_path, run_snakemake
):
    """A text dataset's recipe trains without mixup when it leaves mixup_alpha out (token ids cannot be mixed), the
    image_table source takes a CSV of path,label, and a run on the user's own data alone renders no paper table."""
    questions = {"question": ["Who wrote Hamlet ?", "Where is Denver ?"] * 4, "topic": ["person", "place"] * 4}
    pd.DataFrame(questions).to_csv(tmp_path / "questions.csv", index=False)
    (tmp_path / "photos").mkdir()
    for i in range(6):
        Image.new("RGB", (10, 9), (40 * i, 0, 0)).save(tmp_path / "photos" / f"{i}.png")
    pd.DataFrame({"path": [f"photos/{i}.png" for i in range(6)], "label": CLASSES[np.arange(6) % 3]}).to_csv(
        tmp_path / "photos.csv", index=False
    )
    recipe = {"optimizer": "sgd", "lr": 0.05, "epochs": 1}
    config = {
        "datasets": {
            "questions": {
                "source": "text_table",
                "noise": ["real"],
                "find_issues": True,
                "source_options": {"path": "questions.csv", "text_column": "question", "label_column": "topic"},
                "recipe": {**recipe, "model": "text_classifier", "optimizer": "adam"},
            },
            "photos": {
                "source": "image_table",
                "noise": ["real"],
                "find_issues": True,
                "source_options": {"path": "photos.csv", "image_column": "path", "label_column": "label"},
                "recipe": {**recipe, "model": "cnn4"},
            },
        },
        "seeds": [1],
        "selection": {"K": 2, "M": 1, "t": 1},
        "methods": ["ce"],
    }
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(config))
    done = run_snakemake(tmp_path, "-n", config=tmp_path / "c.yaml")
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    for planned in (
        "results/issues/questions/real/review.md",
        "results/issues/photos/real/review.png",
        "results/report/datasets.md",
    ):
        assert planned in done.stdout
    assert "results/report/table" not in done.stdout  # no Table 1, 2 or 3
    config["datasets"]["questions"]["recipe"]["mixup_alpha"] = 0.3  # said outright: refused, as before
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(config))
    done = run_snakemake(tmp_path, "-n", config=tmp_path / "c.yaml")
    assert done.returncode != 0 and "datasets.questions.recipe.mixup_alpha must be null" in done.stdout + done.stderr


def test_a_shuffled_file_on_two_fold_threads_gets_the_same_label_issues(tmp_path, run_snakemake):
    """The own-data route on a table, and again on a copy of it with its rows shuffled and the fold jobs on 2
    threads: the same label-issue tables, one seed's and the merged, row by row once the shuffle is undone by the
    ids, to the last bit; and the same review sheet."""
    rng = np.random.default_rng(1)
    true = np.repeat(np.arange(3), 40)
    given = true.copy()
    flipped = rng.choice(120, size=12, replace=False)
    given[flipped] = (true[flipped] + 1) % 3
    table = pd.DataFrame(rng.normal(size=(120, 4)) + 2.0 * np.eye(3, 4)[true], columns=[f"x{i}" for i in range(4)])
    table = table.assign(animal=CLASSES[given])
    table.insert(0, "photo", [f"IMG_{row:03d}" for row in range(120)])
    recipe = {"model": "mlp", "optimizer": "sgd", "lr": 0.05, "epochs": 4, "batch_size": 32}
    options = {"path": "animals.csv", "label_column": "animal", "id_column": "photo"}
    dataset = {"source": "table", "source_options": options, "noise": ["real"], "find_issues": True, "recipe": recipe}
    config = {"datasets": {"animals": dataset}, "seeds": [1], "selection": {"K": 2, "M": 2, "t": 2}, "methods": ["ce"]}
    runs = {}
    for name, rows, threads in (("in order", table, 1), ("shuffled", table.sample(frac=1, random_state=3), 2)):
        workdir = tmp_path / name.replace(" ", "-")
        workdir.mkdir()
        rows.to_csv(workdir / "animals.csv", index=False)
        (workdir / "c.yaml").write_text(yaml.safe_dump(config))
        done = run_snakemake(workdir, "--set-threads", f"train_fold={threads}", config=workdir / "c.yaml")
        assert done.returncode == 0, done.stderr[-4000:]
        assert threads == 1 or f"threads: {threads}" in done.stderr  # Snakemake names threads beyond one
        runs[name] = workdir / "results" / "issues" / "animals" / "real"
    for where in ("seed1", "."):
        first, second = (pd.read_parquet(runs[name] / where / "label_issues.parquet") for name in runs)
        assert not first["photo"].equals(second["photo"]) and first["is_label_issue"].any()  # rows moved; a list
        pd.testing.assert_frame_equal(first, second.set_index("photo").loc[first["photo"]].reset_index())
    assert (runs["in order"] / "review.md").read_text() == (runs["shuffled"] / "review.md").read_text()
