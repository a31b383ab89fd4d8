"""The user's own data (:mod:`enkcvs.data.sources.own`): tables, image folders and text tables written in
``tmp_path``."""

import os

import numpy as np
import pandas as pd
import pytest

from enkcvs.data.datasets import load_dataset, save_dataset
from enkcvs.data.sources import get_source, load_source, own

IMAGE_CLASSES = ("cat", "dog", "fox")


def make_table(*, seed: int, n: int = 12) -> pd.DataFrame:
    """Two float features, one integer feature and integer labels 0..2 (every class present)."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "a": rng.normal(size=n),
            "label": np.arange(n) % 3,
            "b": rng.normal(size=n) * 100,
            "count": rng.integers(0, 9, size=n),
        }
    )


def write_table(frame: pd.DataFrame, path) -> str:
    if str(path).endswith(".csv"):
        frame.to_csv(path, index=False)
    else:
        frame.to_parquet(path)
    return str(path)


def write_image_folder(root, *, seed: int) -> list[str]:
    """Two tiny images per class folder (JPEG and PNG, one in a nested folder) and a stray text file; returns the image
    paths relative to ``root`` in the order the loader reads them."""
    from PIL import Image

    rng = np.random.default_rng(seed)
    written = []
    for name in IMAGE_CLASSES:
        (root / name / "more").mkdir(parents=True)
        for relative in (f"{name}/a.JPG", f"{name}/more/b.png"):
            Image.fromarray(rng.integers(0, 256, size=(9, 7, 3), dtype=np.uint8)).save(
                root / relative, format="JPEG" if relative.endswith(".JPG") else "PNG"
            )
            written.append(relative)
        (root / name / "notes.txt").write_text("not an image")
    return written


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_table_keeps_integer_labels_and_the_features_as_float32_images(tmp_path, suffix):
    frame = make_table(seed=1)
    path = write_table(frame, tmp_path / f"data{suffix}")
    dataset = load_source("table", path=path, label_column="label")
    assert dataset.modality == "image" and get_source("table").modality == "image"
    assert dataset.x_train.dtype == np.float32 and dataset.x_train.shape == (12, 1, 1, 3)
    np.testing.assert_allclose(dataset.x_train[:, 0, 0], frame[["a", "b", "count"]].to_numpy(np.float32))
    np.testing.assert_array_equal(dataset.y_train, frame["label"].to_numpy())
    assert dataset.y_train.dtype == np.int64 and dataset.class_names == ("0", "1", "2")
    assert dataset.x_test.shape == (0, 1, 1, 3) and dataset.x_test.dtype == np.float32
    assert dataset.y_test.shape == (0,) and dataset.y_test.dtype == np.int64


def test_table_reads_only_the_feature_columns_given(tmp_path):
    frame = make_table(seed=2).assign(name="x")  # a non-numeric column that is not a feature
    path = write_table(frame, tmp_path / "data.csv")
    dataset = own.load_table(path=path, label_column="label", feature_columns=["count", "a"])
    np.testing.assert_allclose(dataset.x_train[:, 0, 0], frame[["count", "a"]].to_numpy(np.float32))
    assert dataset.feature_names == ("count", "a")  # the review sheet's column heads, kept in the prepared file
    save_dataset(dataset, tmp_path / "prepared.npz")
    assert load_dataset(tmp_path / "prepared.npz").feature_names == ("count", "a")


def test_parquet_table_ignores_a_saved_dataframe_index(tmp_path):
    frame = make_table(seed=3).iloc[2:]  # no longer a RangeIndex: pandas stores it as a column
    path = write_table(frame, tmp_path / "data.parquet")
    dataset = own.load_table(path=path, label_column="label")
    assert dataset.x_train.shape == (10, 1, 1, 3) and dataset.feature_names == ("a", "b", "count")


@pytest.mark.parametrize(
    "labels, class_names, expected, mapping",
    [
        (["dog", "cat", "emu", "cat"], ("cat", "dog", "emu"), [1, 0, 2, 0], "'cat' -> 0, 'dog' -> 1, 'emu' -> 2"),
        ([3, 1, 1, 3], ("1", "3"), [1, 0, 0, 1], "1 -> 0, 3 -> 1"),  # integers that are not 0..Q-1
    ],
)
def test_other_labels_are_numbered_in_sorted_order_with_a_warning(tmp_path, labels, class_names, expected, mapping):
    path = write_table(pd.DataFrame({"x": [0.0, 1.0, 2.0, 3.0], "y": labels}), tmp_path / "data.csv")
    with pytest.warns(UserWarning, match="not the integers 0..") as record:
        dataset = own.load_table(path=path, label_column="y")
    assert str(record[0].message).endswith(f"numbered in sorted order and kept as class names: {mapping}")
    assert dataset.class_names == class_names
    np.testing.assert_array_equal(dataset.y_train, expected)


def test_the_label_warning_shows_the_first_ten_classes(tmp_path):
    labels = [f"c{i:02d}" for i in range(12)]
    path = write_table(pd.DataFrame({"x": np.linspace(0, 1, 12), "y": labels}), tmp_path / "data.csv")
    with pytest.warns(UserWarning) as record:
        own.load_table(path=path, label_column="y")
    message = str(record[0].message)
    assert "'c09' -> 9, ... (12 classes)" in message and "c10" not in message


def test_text_table_reads_texts_and_labels(tmp_path):
    frame = pd.DataFrame({"id": [1, 2, 3], "text": ["a b", "c", "d e f"], "topic": ["x", "y", "x"]})
    path = write_table(frame, tmp_path / "texts.csv")
    with pytest.warns(UserWarning, match="'x' -> 0, 'y' -> 1"):
        dataset = load_source("text_table", path=path, text_column="text", label_column="topic")
    assert dataset.modality == "text" and get_source("text_table").modality == "text"
    assert dataset.x_train.dtype.kind == "U" and dataset.x_train.tolist() == ["a b", "c", "d e f"]
    assert dataset.class_names == ("x", "y") and dataset.y_train.tolist() == [0, 1, 0]
    assert dataset.x_test.shape == (0,) and dataset.x_test.dtype.kind == "U" and dataset.y_test.shape == (0,)


def test_image_folder_lists_the_images_of_each_class_folder(tmp_path):
    written = write_image_folder(tmp_path / "images", seed=4)
    (tmp_path / "images" / "cat" / ".DS_Store").write_bytes(b"")  # hidden: not counted
    skipped = r"3 files in the class folders skipped, not images by their extension \(cat/notes\.txt, dog/notes\.txt, "
    with pytest.warns(UserWarning, match=skipped + r"fox/notes\.txt\)\. Fix: convert them .* or move them out"):
        dataset = load_source("image_folder", root=str(tmp_path / "images"), resize=12)
    assert dataset.modality == "image_files" and get_source("image_folder").modality == "image_files"
    assert dataset.class_names == IMAGE_CLASSES
    assert dataset.x_train.tolist() == [os.path.normpath(p) for p in written]  # notes.txt ignored
    assert dataset.y_train.tolist() == [0, 0, 1, 1, 2, 2] and dataset.y_train.dtype == np.int64
    assert dataset.image_root == str(tmp_path / "images") and os.path.isabs(dataset.image_root)
    assert dataset.image_transform == {"resize": 12, "crop": 224, "train_crop": "center"}
    assert dataset.x_test.shape == (0,) and dataset.y_test.shape == (0,)


def test_image_folder_paths_are_read_by_the_training_reader(tmp_path):
    from enkcvs.data.sources.web import image_files_dataset

    write_image_folder(tmp_path / "images", seed=5)
    dataset = own.load_image_folder(root=str(tmp_path / "images"), resize=8, crop=6)
    reader = image_files_dataset(
        root=dataset.image_root, paths=dataset.x_train, transform=dataset.image_transform, train=True
    )
    assert len(reader) == 6
    image, index = reader[3]
    assert tuple(image.shape) == (3, 6, 6) and index == 3


@pytest.mark.parametrize(
    "source, options",
    [
        ("table", {"label_column": "label", "feature_columns": ["a", "b", "count"]}),
        ("text_table", {"text_column": "text", "label_column": "label"}),
        ("image_folder", {}),
    ],
)
def test_datasets_round_trip_with_an_empty_test_split(tmp_path, source, options):
    if source == "image_folder":
        write_image_folder(tmp_path / "images", seed=6)
        options = {"root": str(tmp_path / "images")}
    else:
        frame = make_table(seed=6).assign(text=lambda f: [f"text {i}" for i in range(len(f))])
        options = {**options, "path": write_table(frame, tmp_path / "data.parquet")}
    dataset = load_source(source, **options)
    save_dataset(dataset, tmp_path / "data.npz")
    loaded = load_dataset(tmp_path / "data.npz")
    for name in ("x_train", "y_train", "x_test", "y_test"):
        expected, actual = getattr(dataset, name), getattr(loaded, name)
        assert actual.dtype == expected.dtype and actual.shape == expected.shape
        np.testing.assert_array_equal(actual, expected)
    assert (loaded.class_names, loaded.modality, loaded.image_root, loaded.image_transform) == (
        dataset.class_names,
        dataset.modality,
        dataset.image_root,
        dataset.image_transform,
    )


@pytest.mark.parametrize("ids", [[10 + i for i in range(12)], [f"row-{i}" for i in range(12)]])
@pytest.mark.parametrize(
    "load, options",
    [
        (own.load_table, {"label_column": "label"}),
        (own.load_text_table, {"text_column": "text", "label_column": "label"}),
    ],
)
def test_an_id_column_is_carried_not_learned_and_round_trips(tmp_path, ids, load, options):
    frame = make_table(seed=5).assign(text=lambda f: [f"text {i}" for i in range(len(f))], row=ids)
    if load is own.load_table:
        frame = frame.drop(columns="text")
    dataset = load(path=write_table(frame, tmp_path / "data.parquet"), id_column="row", **options)
    assert dataset.id_column == "row" and dataset.sample_ids.tolist() == ids
    if load is own.load_table:
        assert dataset.x_train.shape == (12, 1, 1, 3)  # a, b, count: the ids are no feature
    save_dataset(dataset, tmp_path / "data.npz")
    loaded = load_dataset(tmp_path / "data.npz")
    assert loaded.id_column == "row" and loaded.sample_ids.tolist() == ids
    assert load_dataset(tmp_path / "data.npz").sample_ids.dtype == dataset.sample_ids.dtype


# --- errors -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "load, options",
    [
        (own.load_table, {"label_column": "label"}),
        (own.load_text_table, {"text_column": "text", "label_column": "label"}),
    ],
)
def test_tables_name_a_missing_file_and_an_unknown_format(tmp_path, load, options):
    with pytest.raises(FileNotFoundError, match=r"missing\.csv not found\. Fix: point source_options\.path"):
        load(path=str(tmp_path / "missing.csv"), **options)
    (tmp_path / "data.xlsx").write_text("")
    with pytest.raises(ValueError, match=r"data\.xlsx: unknown table format; .*\['\.csv', '\.parquet'\]"):
        load(path=str(tmp_path / "data.xlsx"), **options)
    (tmp_path / "broken.parquet").write_text("not parquet")
    with pytest.raises(ValueError, match=r"broken\.parquet is not a readable parquet file"):
        load(path=str(tmp_path / "broken.parquet"), **options)


def test_missing_columns_are_named_with_the_columns_that_exist(tmp_path):
    path = write_table(make_table(seed=7), tmp_path / "data.csv")
    with pytest.raises(ValueError, match=r"no column 'klass'; its columns are \['a', 'label', 'b', 'count'\]"):
        own.load_table(path=path, label_column="klass")
    with pytest.raises(ValueError, match=r"no column 'c', 'd'"):
        own.load_table(path=path, label_column="label", feature_columns=["a", "c", "d"])
    with pytest.raises(ValueError, match=r"no column 'body'"):
        own.load_text_table(path=path, text_column="body", label_column="label")


def test_table_feature_errors(tmp_path):
    frame = make_table(seed=8)
    path = write_table(frame, tmp_path / "data.parquet")
    with pytest.raises(ValueError, match="the label column 'label' is also a feature column"):
        own.load_table(path=path, label_column="label", feature_columns=["a", "label"])
    with pytest.raises(ValueError, match="no feature column besides the label column"):
        own.load_table(path=write_table(frame[["label"]], tmp_path / "labels.csv"), label_column="label")
    frame.loc[[2, 5], "b"] = np.nan
    path = write_table(frame, tmp_path / "gaps.csv")
    with pytest.raises(ValueError, match=r"2 of 12 rows have missing or infinite features \(rows 2, 5; 0-based"):
        own.load_table(path=path, label_column="label", feature_columns=["a", "b"])


def test_text_and_boolean_columns_are_one_hot_encoded_in_place_with_one_line(tmp_path):
    frame = make_table(seed=8)
    frame.insert(1, "colour", ["red", "blue", None] * 4)
    frame["tall"] = [True, False] * 6
    path = write_table(frame, tmp_path / "data.parquet")
    with pytest.warns(
        UserWarning,
        match=r"2 columns of text, categories or booleans \(colour, tall\) one-hot encoded "
        r"into 5 0/1 features",
    ) as said:
        dataset = own.load_table(path=path, label_column="label")
    assert len([w for w in said if "one-hot" in str(w.message)]) == 1
    features = [c for c in frame.columns if c != "label"]
    assert dataset.feature_names[:4] == (features[0], "colour=blue", "colour=red", "colour=<missing>")
    assert dataset.feature_names[-2:] == ("tall=False", "tall=True")
    x = dataset.x_train.reshape(len(frame), -1)
    np.testing.assert_array_equal(x[:, 1:4], np.eye(3)[[1, 0, 2] * 4])  # red, blue, missing
    np.testing.assert_array_equal(x[:, -1], frame["tall"].astype(float))
    np.testing.assert_allclose(x[:, 0], frame[features[0]])


def test_missing_values_are_kept_for_the_folds_to_impute_only_when_asked(tmp_path):
    frame = make_table(seed=8)
    frame.loc[[2, 5], "b"] = np.nan
    path = write_table(frame, tmp_path / "gaps.csv")
    with pytest.raises(ValueError, match=r"2 of 12 rows have missing or infinite features \(rows 2, 5; 0-based"):
        own.load_table(path=path, label_column="label")
    with pytest.warns(UserWarning, match=r"2 missing values in 1 column \(b\): imputed inside each fold"):
        dataset = own.load_table(path=path, label_column="label", missing="keep")
    assert np.isnan(dataset.x_train).sum() == 2
    frame.loc[3, "a"] = np.inf
    with pytest.raises(ValueError, match=r"1 of 12 rows have infinite features \(rows 3;"):
        own.load_table(path=write_table(frame, tmp_path / "inf.csv"), label_column="label", missing="keep")


@pytest.mark.parametrize("name", ["rownames", "Unnamed: 0", "ID", "serial"])
def test_an_id_like_column_is_left_out_with_a_line_unless_named_as_a_feature(tmp_path, name):
    frame = make_table(seed=8)
    frame.insert(0, name, np.arange(100, 112) if name == "serial" else np.arange(12) * 1.5)  # serial: unique integers
    path = write_table(frame, tmp_path / "data.csv")
    with pytest.warns(UserWarning, match=rf"column \['{name}'\] looks like row ids .* left out of the features"):
        dataset = own.load_table(path=path, label_column="label")
    assert name not in dataset.feature_names
    named = own.load_table(path=path, label_column="label", feature_columns=[name, "a"])
    assert named.feature_names == (name, "a")


def test_id_column_errors(tmp_path):
    frame = make_table(seed=9).assign(row=[0, 1, 2, 3, 1, 5, 6, 7, 8, 9, 10, 1])
    path = write_table(frame, tmp_path / "data.csv")
    with pytest.raises(
        ValueError, match=r"ids in column 'row' repeat \(1 on rows 1, 4, 11; rows 0-based, header not counted\)"
    ):
        own.load_table(path=path, label_column="label", id_column="row")
    with pytest.raises(ValueError, match="the id column 'row' is also a feature column"):
        own.load_table(path=path, label_column="label", feature_columns=["a", "row"], id_column="row")
    with pytest.raises(ValueError, match=r"1 of 12 rows have no id in column 'row' \(rows 3;"):
        own.load_table(
            path=write_table(frame.assign(row=frame["row"].where(frame.index != 3)), tmp_path / "gap.csv"),
            label_column="label",
            id_column="row",
        )
    with pytest.raises(ValueError, match="has no column 'id'"):
        own.load_table(path=path, label_column="label", id_column="id")


@pytest.mark.parametrize(
    "load, options",
    [
        (own.load_table, {"label_column": "label"}),
        (own.load_text_table, {"text_column": "text", "label_column": "label"}),
    ],
)
def test_label_errors(tmp_path, load, options):
    frame = pd.DataFrame({"text": [f"t{i}" for i in range(8)], "x": np.arange(8.0), "label": [0, 1] * 4})
    if load is own.load_table:
        frame = frame.drop(columns="text")
    unlabelled = frame.astype({"label": float})
    unlabelled.loc[[1, 2, 3, 4, 5, 6], "label"] = np.nan
    with pytest.raises(ValueError, match=r"6 of 8 rows have no label in column 'label' \(rows 1, 2, 3, 4, 5, \.\.\."):
        load(path=write_table(unlabelled, tmp_path / "unlabelled.csv"), **options)
    with pytest.raises(ValueError, match=r"holds 1 distinct label\(s\) \['a'\]; .* at least 2 classes"):
        load(path=write_table(frame.assign(label="a"), tmp_path / "one.csv"), **options)


def test_text_table_rejects_empty_texts(tmp_path):
    frame = pd.DataFrame({"text": ["ok", "", "  ", "fine"], "label": [0, 1, 0, 1]})
    with pytest.raises(ValueError, match=r"2 of 4 rows have an empty text in column 'text' \(rows 1, 2;"):
        own.load_text_table(path=write_table(frame, tmp_path / "texts.csv"), text_column="text", label_column="label")


def test_image_folder_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"image folder .*nowhere not found\. Fix: point source_options\.root"):
        own.load_image_folder(root=str(tmp_path / "nowhere"))
    (tmp_path / "flat").mkdir()
    (tmp_path / "flat" / "a.jpg").write_bytes(b"")
    with pytest.raises(FileNotFoundError, match=r"flat has no class sub-folders"):
        own.load_image_folder(root=str(tmp_path / "flat"))
    (tmp_path / "flat" / "only").mkdir()
    with pytest.raises(ValueError, match=r"fewer than 2 class sub-folders \(\['only'\]\)"):
        own.load_image_folder(root=str(tmp_path / "flat"))
    (tmp_path / "flat" / "other").mkdir()
    (tmp_path / "flat" / "other" / "b.png").write_bytes(b"")
    (tmp_path / "flat" / "only" / "c.gif").write_bytes(b"")
    with pytest.raises(
        FileNotFoundError,
        match=r"no images in the class folders \['only'\]; images are files ending "
        r"in \.jpg, \.jpeg, \.png",
    ):
        own.load_image_folder(root=str(tmp_path / "flat"))


def test_image_table_reads_paths_relative_to_its_folder_or_absolute(tmp_path):
    from enkcvs.data.sources.web import image_files_dataset

    written = write_image_folder(tmp_path / "images", seed=6)
    paths = [f"images/{path}" for path in written]
    paths[2] = str(tmp_path / paths[2])
    frame = pd.DataFrame(
        {
            "file": paths,
            "animal": [path.split("/")[-2 if "more" not in path else -3] for path in paths],
            "uid": range(10, 16),
        }
    )
    with pytest.warns(UserWarning, match="'cat' -> 0"):
        dataset = load_source(
            "image_table",
            path=write_table(frame, tmp_path / "photos.csv"),
            image_column="file",
            label_column="animal",
            id_column="uid",
            resize=8,
            crop=6,
        )
    assert dataset.modality == "image_files" and get_source("image_table").modality == "image_files"
    assert dataset.x_train.tolist() == paths and dataset.image_root == str(tmp_path)
    assert dataset.class_names == IMAGE_CLASSES and dataset.y_train.tolist() == [0, 0, 1, 1, 2, 2]
    assert dataset.sample_ids.tolist() == list(range(10, 16)) and dataset.x_test.shape == (0,)
    reader = image_files_dataset(
        root=dataset.image_root, paths=dataset.x_train, transform=dataset.image_transform, train=False
    )
    assert tuple(reader[2][0].shape) == (3, 6, 6)  # the absolute path is read as it is


def test_image_table_names_the_rows_without_an_image_file(tmp_path):
    written = write_image_folder(tmp_path / "images", seed=7)
    frame = pd.DataFrame({"path": [f"images/{path}" for path in written], "label": [0, 0, 1, 1, 2, 2]})
    frame.loc[[1, 4], "path"] = ["images/cat/gone.png", None]
    with pytest.raises(
        FileNotFoundError,
        match=r"2 of 6 images in column 'path' are not files \(rows 1, 4; .*; the "
        r"first: \S+images/cat/gone\.png\)\. Fix: give paths relative to the "
        r"table's folder or absolute",
    ):
        own.load_image_table(
            path=write_table(frame, tmp_path / "photos.csv"), image_column="path", label_column="label"
        )


@pytest.mark.parametrize("content", [b"not an image", "half"], ids=["garbage", "truncated"])
def test_a_damaged_image_is_named_with_the_fix_before_anything_reads_it(tmp_path, content):
    written = write_image_folder(tmp_path / "images", seed=8)
    damaged = tmp_path / "images" / written[3]  # dog/more/b.png
    damaged.write_bytes(damaged.read_bytes()[:40] if content == "half" else content)
    fix = r"\. Fix: re-save that file as PNG or JPEG, or remove it"
    with pytest.raises(
        ValueError,
        match=rf"1 of 6 image files are damaged or no images; the first: "
        rf"\S+images/dog/more/b\.png \(\w+Error: .*\){fix}$",
    ):
        own.load_image_folder(root=str(tmp_path / "images"))
    frame = pd.DataFrame({"path": [f"images/{path}" for path in written], "label": [0, 0, 1, 1, 2, 2]})
    with pytest.raises(
        ValueError,
        match=rf"the first: \S+images/dog/more/b\.png \(row 3 of \S+photos\.csv, "
        rf"0-based, header not counted; .*{fix} and its row$",
    ):
        own.load_image_table(
            path=write_table(frame, tmp_path / "photos.csv"), image_column="path", label_column="label"
        )


@pytest.mark.parametrize(
    "text, message",
    [
        ("", r"t\.csv is an empty file\. Fix: give the table itself"),
        ("a,b,label\n", r"t\.csv is an empty table: a header \(a, b, label\) and no rows\. Fix: one row per sample"),
        (
            "a;b;label\n1;2;0\n3;4;1\n",
            r"t\.csv reads as one column 'a;b;label': CSV files here are comma-separated, and "
            r"this one's separator looks like ';'\. Fix: save it comma-separated, e\.g\. "
            r"pandas\.read_csv\(path, sep=';'\)\.to_csv\(path, index=False\)",
        ),
        ("a\tb\tlabel\n1\t2\t0\n", r"separator looks like '\\t'"),
    ],
    ids=["empty file", "header only", "semicolons", "tabs"],
)
def test_an_empty_table_and_a_wrong_separator_are_named(tmp_path, text, message):
    (tmp_path / "t.csv").write_text(text)
    for load, options in ((own.load_table, {}), (own.load_text_table, {"text_column": "a"})):
        with pytest.raises(ValueError, match=message):
            load(path=str(tmp_path / "t.csv"), label_column="label", **options)
