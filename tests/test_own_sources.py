"""The user's own data (:mod:`enkcvs.data.sources.own`): tables, image folders and text tables written in
``tmp_path``."""

import os

import numpy as np
import pandas as pd
import pytest

from enkcvs.data.datasets import load_dataset, save_dataset
from enkcvs.data.sources import columns, get_source, load_source, own

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


# --- tables as packaged: numbers, times and dates as text; ids and codes of many values left out ----------------


def said_lines(record) -> list[str]:
    return [str(warning.message) for warning in record]


def load_saying(path: str, **options):
    """``own.load_table`` and the lines it said, every warning recorded."""
    import warnings

    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        dataset = own.load_table(path=path, **options)
    return dataset, said_lines(record)


def make_hawks(*, seed: int, n: int = 300) -> pd.DataFrame:
    """A table shaped like R's Stat2Data Hawks: dates as three integer columns, capture and release times as "H:MM"
    text (release mostly missing), a band number unique per bird, age and sex codes (sex mostly missing), three
    measurements with gaps, and the species as the label."""
    rng = np.random.default_rng(seed)
    species = rng.choice(["CH", "RT", "SS"], size=n, p=[0.1, 0.6, 0.3])
    size = pd.Series(species).map({"CH": 1.5, "RT": 3.0, "SS": 1.0}).to_numpy()
    hours, minutes = rng.integers(9, 16, size=n), rng.integers(0, 60, size=n)
    frame = pd.DataFrame(
        {
            "Month": rng.integers(9, 12, size=n),
            "Day": rng.integers(1, 31, size=n),
            "Year": rng.integers(1992, 2004, size=n),
            "CaptureTime": [f"{h}:{m:02d}" for h, m in zip(hours, minutes)],
            "ReleaseTime": [f"{h + 1}:{m:02d}" if rng.random() < 0.3 else None for h, m in zip(hours, minutes)],
            "BandNumber": rng.choice(np.arange(800, 20000), size=n, replace=False),
            "Species": species,
            "Age": rng.choice(["A", "I"], size=n),
            "Sex": rng.choice(["F", "M", None], size=n, p=[0.2, 0.2, 0.6]),
            "Wing": (130 * size + rng.normal(0, 10, size=n)).round(1),
            "Weight": (150 * size**2 + rng.normal(0, 30, size=n)).round(),
            "Culmen": (9 * size + rng.normal(0, 1, size=n)).round(1),
        }
    )
    frame.loc[rng.random(n) < 0.03, ["Wing", "Culmen"]] = np.nan
    return frame


def test_text_of_numbers_is_read_as_numbers_and_other_text_stays_a_code(tmp_path):
    frame = make_table(seed=10).assign(
        price=[" 12 ", "-1e3", "3.5", None, "0.25", "3.5"] * 2,  # padded, exponent, a gap: numbers
        grouped=["1,234", "2,500", "1,234", "7", "7", "7"] * 2,  # thousands or a decimal comma: ambiguous, a code
        grade=["3", "3", "b", "4", "4", "3"] * 2,  # one value no number: a code
    )
    dataset, said = load_saying(write_table(frame, tmp_path / "data.parquet"), label_column="label", missing="keep")
    assert dataset.feature_names[3] == "price" and dataset.feature_names[4].startswith("grouped=")
    x = dataset.x_train.reshape(12, -1)
    np.testing.assert_array_equal(x[:6, 3], [12, -1000, 3.5, np.nan, 0.25, 3.5])
    assert any(line.endswith(": 1 column read as numbers: price (text of numbers)") for line in said)
    assert any("(grouped, grade) one-hot encoded into 6 0/1 features" in line for line in said)


def test_times_of_day_as_text_become_minutes_since_midnight_but_plain_integers_stay_numbers(tmp_path):
    frame = make_table(seed=11).assign(
        capture=["10:30", "9:05", "10:30:15", None, "23:59", "0:00"] * 2,
        hhmm=["1030", "905", "1030", "1200", "905", "1030"] * 2,  # integers, not times
        odd=["10:30", "9:75", "1:00", "1:00", "2:00", "2:00"] * 2,  # 9:75 is no time: a code
    )
    dataset, said = load_saying(write_table(frame, tmp_path / "data.csv"), label_column="label", missing="keep")
    x = dataset.x_train.reshape(12, -1)
    names = list(dataset.feature_names)
    np.testing.assert_allclose(x[:6, names.index("capture")], [630, 545, 630.25, np.nan, 1439, 0])
    np.testing.assert_array_equal(x[:3, names.index("hhmm")], [1030, 905, 1030])
    assert "odd=9:75" in names
    assert any(
        line.endswith("1 column read as numbers: capture (times of day, in minutes since midnight)") for line in said
    )


@pytest.mark.parametrize(
    "dates, days",
    [
        (["2016-09-05", "2016-09-06", None], [17049, 17050, np.nan]),  # ISO
        (["9/5/2016", "9/6/2016", "12/31/2016"], [17049, 17050, 17166]),  # month first
        (["13/5/2016", "9/5/2016", "1/1/2017"], [16934, 16930, 17167]),  # a first field above 12: day first
        (["2016-09-05 10:30", "2016-09-05", "9/6/2016"], [17049 + 630 / 1440, 17049, 17050]),  # formats mixed
    ],
    ids=["iso", "month first", "day first", "mixed"],
)
def test_dates_as_text_become_days_since_1970(tmp_path, dates, days):
    frame = make_table(seed=12).assign(date=dates * 4, age=["A", "I", "A"] * 4)  # short codes: no dates
    dataset, said = load_saying(write_table(frame, tmp_path / "data.csv"), label_column="label", missing="keep")
    assert dataset.feature_names == ("a", "b", "count", "date", "age=A", "age=I")
    np.testing.assert_allclose(dataset.x_train.reshape(12, -1)[:3, 3], days, rtol=1e-7)
    assert any(line.endswith("read as numbers: date (dates, in days since 1970-01-01)") for line in said)


def test_stored_dates_and_durations_of_a_parquet_file_become_numbers(tmp_path):
    frame = make_table(seed=13).assign(
        when=pd.date_range("2016-09-05", periods=12, freq="D"),
        took=pd.to_timedelta(np.arange(12) % 4 * 90, unit="s"),
    )
    dataset, said = load_saying(write_table(frame, tmp_path / "data.parquet"), label_column="label")
    x = dataset.x_train.reshape(12, -1)
    np.testing.assert_array_equal(x[:, 3], 17049 + np.arange(12))  # unique, yet a time: no id
    np.testing.assert_allclose(x[:4, 4], [0, 1.5, 3, 4.5])
    assert not any("row ids" in line for line in said)
    assert any(
        "read as numbers: when (dates, in days since 1970-01-01), took (durations, in minutes)" in line for line in said
    )


def test_a_unique_date_column_is_a_time_not_an_id(tmp_path):
    """A daily table's dates are unique per row: read as dates (a feature), never as row ids."""
    frame = make_table(seed=14, n=30).assign(day=pd.date_range("2020-01-01", periods=30).strftime("%Y-%m-%d"))
    dataset, said = load_saying(write_table(frame, tmp_path / "data.csv"), label_column="label")
    assert dataset.feature_names == ("a", "b", "count", "day") and not any("row ids" in line for line in said)
    assert columns.id_like_columns(columns.read_values(frame[["day"]])[0]) == {}
    assert list(columns.id_like_columns(frame[["day"]])) == ["day"]  # the same text, not read as dates, is unique


def test_nearly_unique_text_and_whole_floats_are_left_out_as_ids_but_not_measurements(tmp_path):
    n = 40
    frame = make_table(seed=15, n=n).assign(
        name=[f"bird {i}" for i in range(n - 1)] + ["bird 0"],  # 39 values in 40 rows
        band=[302.0, np.nan, *np.arange(400, 400 + n - 2)],  # integers with a gap read as floats
        weight=np.random.default_rng(15).normal(size=n),  # unique, yet a measurement
        grams=np.arange(n) // 2,  # integers with repeats: a measurement
        unique=np.arange(n) * 2,  # unique integers: ids
    )
    dataset, said = load_saying(write_table(frame, tmp_path / "data.csv"), label_column="label")
    assert dataset.feature_names == ("a", "b", "count", "weight", "grams")
    (line,) = [line for line in said if "row ids" in line]
    assert line.endswith(
        "data.csv: columns ['name', 'band'] look like row ids (nearly unique per row: 39 values in 40 rows); "
        "column ['unique'] looks like row ids (unique per row): left out of the features. Fix: name them in "
        "source_options.feature_columns to use them"
    )
    assert columns.id_like_columns(frame.head(columns.ID_ROWS - 1)[["unique", "weight"]]) == {}  # too few rows to say


def test_a_code_of_too_many_values_is_left_out_naming_its_size(tmp_path):
    n = 600
    rng = np.random.default_rng(16)
    frame = make_table(seed=16, n=n).assign(
        city=[f"city {i % 300}" for i in range(n)],  # 300 values, each twice: a code that swamps
        street=[f"street {i % columns.CODES_AT_MOST}" for i in range(n)],  # as many values as a code may hold
        colour=rng.choice(["red", "green", "blue"], size=n),
    )
    dataset, said = load_saying(write_table(frame, tmp_path / "data.parquet"), label_column="label")
    assert "city" not in {name.split("=")[0] for name in dataset.feature_names}
    assert dataset.x_train.shape[-1] == 3 + columns.CODES_AT_MOST + 3
    (line,) = [line for line in said if "left out" in line]
    assert line.endswith(
        "column ['city'] is a code of 300 values: its one-hot columns would swamp the 56 other features: left out "
        "of the features. Fix: name it in source_options.feature_columns to use it"
    )


def test_ids_and_codes_are_said_in_one_line_which_the_command_rewords(tmp_path):
    from enkcvs.labelissues.owndata import _in_command_words

    n = 120
    frame = make_table(seed=17, n=n).assign(tag=[f"t{i}" for i in range(n)], city=[f"c{i % 60}" for i in range(n)])
    _, said = load_saying(write_table(frame, tmp_path / "data.csv"), label_column="label")
    (line,) = [line for line in said if "left out" in line]
    assert "column ['tag'] looks like row ids (unique per row); column ['city'] is a code of 60 values: its " in line
    assert _in_command_words(line).endswith("Fix: name them in --feature-columns to use them")


def test_named_feature_columns_are_used_as_given_read_as_numbers_where_they_hold_them(tmp_path):
    n = 40
    frame = make_table(seed=18, n=n).assign(
        tag=[f"t{i}" for i in range(n)], serial=np.arange(n) + 100, at=["10:30", "11:00"] * (n // 2)
    )
    dataset, said = load_saying(
        write_table(frame, tmp_path / "data.csv"), label_column="label", feature_columns=["serial", "at", "tag"]
    )
    assert dataset.feature_names[:2] == ("serial", "at") and dataset.feature_names[2:4] == ("tag=t0", "tag=t1")
    assert dataset.x_train.shape[-1] == 2 + n and not any("left out" in line for line in said)  # the ids one-hot
    np.testing.assert_array_equal(dataset.x_train.reshape(n, -1)[:2, :2], [[100, 630], [101, 660]])


def test_whole_float_ids_are_carried_as_integers(tmp_path):
    frame = make_table(seed=19).assign(band=np.arange(12) + 302.0)
    dataset = own.load_table(path=write_table(frame, tmp_path / "data.parquet"), label_column="label", id_column="band")
    assert dataset.sample_ids.dtype == np.int64 and dataset.sample_ids.tolist()[:2] == [302, 303]


@pytest.mark.parametrize("gap", [False, True], ids=["band numbers", "band numbers with a gap"])
def test_a_hawks_like_table_reads_as_a_careful_analyst_would(tmp_path, gap):
    """Stat2Data's Hawks, as the report gave it: the band numbers left out (a gap makes them floats), the times read
    as minutes, the two codes one-hot, the gaps imputed: 13 features, not 1,280."""
    frame = make_hawks(seed=20)
    if gap:
        frame.loc[7, "BandNumber"] = np.nan
    dataset, said = load_saying(write_table(frame, tmp_path / "hawks.csv"), label_column="Species", missing="keep")
    assert dataset.feature_names == (
        *("Month", "Day", "Year", "CaptureTime", "ReleaseTime"),
        *("Age=A", "Age=I", "Sex=F", "Sex=M", "Sex=<missing>", "Wing", "Weight", "Culmen"),
    )
    assert dataset.class_names == ("CH", "RT", "SS") and dataset.x_train.shape == (300, 1, 1, 13)
    why = "nearly unique per row: 299 values in 300 rows" if gap else "unique per row"
    path = str(tmp_path / "hawks.csv")
    assert said[:4] == [
        f"{path}: column ['BandNumber'] looks like row ids ({why}): left out of the features. Fix: name it in "
        "source_options.feature_columns to use it",
        f"{path}: 2 columns read as numbers: CaptureTime (times of day, in minutes since midnight), ReleaseTime "
        "(times of day, in minutes since midnight)",
        f"{path}: 2 columns of text, categories or booleans (Age, Sex) one-hot encoded into 5 0/1 features, one per "
        "value (and one for a missing value where there is one)",
        said[3],
    ]
    assert "missing values in 3 columns (ReleaseTime, Wing, Culmen): imputed" in said[3]
    x = dataset.x_train.reshape(300, -1)
    hours, minutes = frame["CaptureTime"][0].split(":")
    assert x[0, 3] == int(hours) * 60 + int(minutes)
