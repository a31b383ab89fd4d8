"""Web-crawled datasets the user supplies in their official layout (access on request, no download).

- ``clothing1m`` (Xiao et al., 2015), 14 classes: the noisy training set (``noisy_train_key_list.txt`` with labels from
  ``noisy_label_kv.txt``) and the clean test set (``clean_test_key_list.txt``, ``clean_label_kv.txt``); images under
  ``images/``.
- ``webvision`` (Li et al., 2017), mini-WebVision: the Google images of the first ``num_classes`` classes
  (``info/train_filelist_google.txt``) and the validation set as test set (``info/val_filelist.txt``,
  ``val_images_256/``).

Samples are image paths relative to the root (modality ``"image_files"``), read while training by :class:`ImageFiles`.
Each loader checks the whole layout first and raises ``FileNotFoundError`` listing every problem.
"""

import os
from dataclasses import dataclass

import numpy as np

from enkcvs.data.datasets import Dataset

#: Clothing-1M's published category list, in label order.
CLOTHING1M_CLASSES = (
    "T-Shirt",
    "Shirt",
    "Knitwear",
    "Chiffon",
    "Sweater",
    "Hoodie",
    "Windbreaker",
    "Jacket",
    "Downcoat",
    "Suit",
    "Shawl",
    "Dress",
    "Vest",
    "Underwear",
)
CLOTHING1M_FILES = {
    "noisy_label_kv.txt": "noisy label of each image, '<image path> <label>' per line",
    "noisy_train_key_list.txt": "the noisy training images, one path per line",
    "clean_label_kv.txt": "clean label of each image, '<image path> <label>' per line",
    "clean_test_key_list.txt": "the clean test images, one path per line",
}
WEBVISION_TRAIN_LIST = os.path.join("info", "train_filelist_google.txt")
WEBVISION_TEST_LIST = os.path.join("info", "val_filelist.txt")
WEBVISION_TEST_FOLDER = "val_images_256"
WEBVISION_NUM_CLASSES = 1000  # labels in the official lists; mini-WebVision keeps the first 50
#: What each layout holds, as the layout errors name it.
CLOTHING1M_LAYOUT = ", ".join(CLOTHING1M_FILES) + ", images/"
WEBVISION_LAYOUT = f"{WEBVISION_TRAIN_LIST}, {WEBVISION_TEST_LIST}, google/, {WEBVISION_TEST_FOLDER}/"
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
SHOWN = 5  # missing images named in a problem message


@dataclass(frozen=True)
class _Split:
    paths: list[str]  # relative to the dataset's root
    labels: list[int]


def clothing1m_layout_problems(*, root: str, **ignored_options) -> list[str]:
    """What is missing from a Clothing-1M folder: one message per problem naming the path (empty when fine)."""
    return _read_clothing1m(root)[0]


def check_clothing1m_layout(*, root: str, **ignored_options) -> None:
    """Raise ``FileNotFoundError`` listing everything missing from a Clothing-1M folder (the loader's error too)."""
    _raise_for(clothing1m_layout_problems(root=root), name="Clothing-1M", root=root, layout=CLOTHING1M_LAYOUT)


def load_clothing1m(*, root: str, resize: int = 256, crop: int = 224) -> Dataset:
    """Clothing-1M: the noisy training set with its noisy labels and the clean test set, as image paths.

    Parameters
    ----------
    root : the official Clothing-1M folder (the four list files and ``images/``).
    resize, crop : shorter side after resizing, then side of the centre crop (pixels), stored in ``image_transform``.

    Returns
    -------
    Dataset of modality ``"image_files"``: x str (N,) paths relative to ``image_root`` (the absolute root), labels
    int64 0..13.
    """
    problems, (train, test) = _read_clothing1m(root)
    _raise_for(problems, name="Clothing-1M", root=root, layout=CLOTHING1M_LAYOUT)
    return _dataset(
        train,
        test,
        root=root,
        class_names=CLOTHING1M_CLASSES,
        image_transform={"resize": resize, "crop": crop, "train_crop": "center"},
    )


def webvision_layout_problems(*, root: str, num_classes: int = 50, **ignored_options) -> list[str]:
    """What is missing from a WebVision folder for its first ``num_classes`` classes (empty when fine)."""
    return _read_webvision(root, num_classes=num_classes)[0]


def check_webvision_layout(*, root: str, num_classes: int = 50, **ignored_options) -> None:
    """Raise ``FileNotFoundError`` listing everything missing from a WebVision folder (the loader's error too)."""
    problems = webvision_layout_problems(root=root, num_classes=num_classes)
    _raise_for(problems, name="WebVision", root=root, layout=WEBVISION_LAYOUT)


def load_webvision(*, root: str, num_classes: int = 50, resize: int = 320, crop: int = 299) -> Dataset:
    """mini-WebVision: the Google training images and the validation images of the first ``num_classes`` classes.

    Parameters
    ----------
    root : the official WebVision folder (``info/``, ``google/``, ``val_images_256/``).
    num_classes : keep the samples with labels below this (50 for mini-WebVision).
    resize, crop : shorter side after resizing, then side of the crop (random while training, centre for testing).

    Returns
    -------
    Dataset of modality ``"image_files"``: x str (N,) paths relative to ``image_root`` (the absolute root), labels
    int64 0..num_classes-1, class names ``class_0``...
    """
    problems, (train, test) = _read_webvision(root, num_classes=num_classes)
    _raise_for(problems, name="WebVision", root=root, layout=WEBVISION_LAYOUT)
    return _dataset(
        train,
        test,
        root=root,
        class_names=tuple(f"class_{c}" for c in range(num_classes)),
        image_transform={"resize": resize, "crop": crop, "train_crop": "random"},
    )


class ImageFiles:
    """Images read from disk: item ``i`` is (float32 tensor (3, crop, crop) normalised with ImageNet's mean and std,
    ``i``).

    A map-style dataset for ``torch.utils.data.DataLoader``, which needs only ``__len__`` and ``__getitem__``. It is a
    plain module-level class rather than a ``torch.utils.data.Dataset`` subclass so that importing this module stays
    free of torch and DataLoader workers can pickle it under any start method.

    Parameters
    ----------
    root : folder the paths are relative to (``Dataset.image_root``).
    paths : (N,) str relative image paths.
    transform : ``Dataset.image_transform``: ``resize`` (shorter side), ``crop`` (side), ``train_crop``
        (``"center"`` or ``"random"``; testing always crops the centre).
    train : random horizontal flips, and random crops where ``train_crop`` is ``"random"``.
    """

    def __init__(self, *, root: str, paths: np.ndarray, transform: dict, train: bool):
        import torch
        from torchvision.transforms import v2

        if transform["train_crop"] not in ("center", "random"):
            raise ValueError(f"train_crop is 'center' or 'random', not {transform['train_crop']!r}")
        self.root = root
        self.paths = np.asarray(paths, dtype=str)  # one array, not a list of str: workers do not copy it on access
        random_crop = train and transform["train_crop"] == "random"
        steps = [
            v2.Resize(transform["resize"]),
            v2.RandomCrop(transform["crop"]) if random_crop else v2.CenterCrop(transform["crop"]),
        ]
        if train:
            steps.append(v2.RandomHorizontalFlip())
        steps += [v2.ToImage(), v2.ToDtype(torch.float32, scale=True), v2.Normalize(IMAGENET_MEAN, IMAGENET_STD)]
        self.transform = v2.Compose(steps)

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, index: int):
        from PIL import Image

        with Image.open(os.path.join(self.root, str(self.paths[index]))) as image:
            return self.transform(image.convert("RGB")), index


def image_files_dataset(*, root: str, paths: np.ndarray, transform: dict, train: bool) -> ImageFiles:
    """The training-time reader of an ``image_files`` dataset's samples (see :class:`ImageFiles`)."""
    return ImageFiles(root=root, paths=paths, transform=transform, train=train)


def _read_clothing1m(root: str) -> tuple[list[str], tuple[_Split | None, _Split | None]]:
    """Every layout problem of a Clothing-1M folder, and its training and test splits (None where unreadable)."""
    if not os.path.isdir(root):
        return [f"missing folder {root} (the Clothing-1M root)"], (None, None)
    problems = [
        f"missing file {os.path.join(root, name)} ({what})"
        for name, what in CLOTHING1M_FILES.items()
        if not os.path.isfile(os.path.join(root, name))
    ]
    images = os.path.join(root, "images")
    if not os.path.isdir(images):
        problems.append(f"missing folder {images} (the images the list files name)")
    splits = []
    for keys_name, labels_name in (
        ("noisy_train_key_list.txt", "noisy_label_kv.txt"),
        ("clean_test_key_list.txt", "clean_label_kv.txt"),
    ):
        keys_file, labels_file = os.path.join(root, keys_name), os.path.join(root, labels_name)
        keys = labels = split = None
        try:
            if os.path.isfile(keys_file):
                keys = _read_keys(keys_file)
            if os.path.isfile(labels_file):
                labels = dict(_read_labels(labels_file, num_classes=len(CLOTHING1M_CLASSES)))
        except ValueError as error:
            problems.append(str(error))
        if keys is not None and not keys:
            problems.append(f"{keys_file} lists no image")
        if keys and os.path.isdir(images):
            problems += _missing_images(root, keys, listed_in=keys_file)
        if keys is not None and labels is not None:
            unlabelled = [key for key in keys if key not in labels]
            if unlabelled:
                problems.append(
                    f"{len(unlabelled)} of {len(keys)} images listed in {keys_file} have no label in "
                    f"{labels_file}, e.g. {', '.join(unlabelled[:SHOWN])}"
                )
            else:
                split = _Split(keys, [labels[key] for key in keys])
        splits.append(split)
    return problems, tuple(splits)


def _read_webvision(root: str, *, num_classes: int) -> tuple[list[str], tuple[_Split | None, _Split | None]]:
    """Every layout problem of a WebVision folder, and its splits of the first ``num_classes`` classes."""
    if not 1 <= num_classes <= WEBVISION_NUM_CLASSES:
        raise ValueError(f"num_classes must be in 1..{WEBVISION_NUM_CLASSES}, not {num_classes}")
    if not os.path.isdir(root):
        return [f"missing folder {root} (the WebVision root)"], (None, None)
    problems, splits = [], []
    for list_name, image_folder, prefix, what in (
        (WEBVISION_TRAIN_LIST, "google", "", "the Google training images, '<image path> <label>' per line"),
        (
            WEBVISION_TEST_LIST,
            WEBVISION_TEST_FOLDER,
            WEBVISION_TEST_FOLDER + "/",
            f"the validation images in {WEBVISION_TEST_FOLDER}/, '<file name> <label>' per line",
        ),
    ):
        list_file, folder = os.path.join(root, list_name), os.path.join(root, image_folder)
        if not os.path.isfile(list_file):
            problems.append(f"missing file {list_file} ({what})")
        if not os.path.isdir(folder):
            problems.append(f"missing folder {folder} (the images {list_name} names)")
        split = None
        if os.path.isfile(list_file):
            try:
                entries = _read_labels(list_file, num_classes=WEBVISION_NUM_CLASSES)
            except ValueError as error:
                problems.append(str(error))
                entries = None
            kept = [(prefix + path, label) for path, label in entries or () if label < num_classes]
            if entries is not None and not kept:
                problems.append(f"{list_file} lists no image with a label below {num_classes}")
            if kept and os.path.isdir(folder):
                problems += _missing_images(root, [path for path, _ in kept], listed_in=list_file)
            split = _Split([path for path, _ in kept], [label for _, label in kept])
        splits.append(split)
    return problems, tuple(splits)


def _read_keys(path: str) -> list[str]:
    """The image paths listed one per line in ``path`` (blank lines skipped)."""
    with open(path, encoding="utf-8") as handle:
        return [line.strip() for line in handle if line.strip()]


def _read_labels(path: str, *, num_classes: int) -> list[tuple[str, int]]:
    """(image path, label) from lines ``<image path> <label>``, blank lines skipped; ``ValueError`` naming the line
    otherwise."""
    entries = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 2 or not fields[1].isdecimal() or int(fields[1]) >= num_classes:
                raise ValueError(
                    f"{path}, line {number}: expected '<image path> <label 0..{num_classes - 1}>', "
                    f"got {line.rstrip()!r}"
                )
            entries.append((fields[0], int(fields[1])))
    return entries


def _missing_images(root: str, paths: list[str], *, listed_in: str) -> list[str]:
    """A problem message for the ``paths`` (relative to ``root``) that are not files, or none."""
    missing = [path for path in paths if not os.path.exists(os.path.join(root, path))]
    if not missing:
        return []
    return [
        (
            f"{len(missing)} of {len(paths)} images listed in {listed_in} are missing under {root}, e.g. "
            f"{', '.join(missing[:SHOWN])}"
        )
    ]


def _raise_for(problems: list[str], *, name: str, root: str, layout: str) -> None:
    if problems:
        raise FileNotFoundError(
            f"{name} under {root} is not in its official layout:\n"
            + "\n".join(f"- {p}" for p in problems)
            + f"\nFix: point source_options.root at the official {name} folder ({layout})"
        )


def _dataset(train: _Split, test: _Split, *, root: str, class_names: tuple[str, ...], image_transform: dict) -> Dataset:
    return Dataset(
        x_train=np.array(train.paths, dtype=str),
        y_train=np.array(train.labels, dtype=np.int64),
        x_test=np.array(test.paths, dtype=str),
        y_test=np.array(test.labels, dtype=np.int64),
        class_names=class_names,
        modality="image_files",
        image_root=os.path.abspath(root),
        image_transform=image_transform,
    )
