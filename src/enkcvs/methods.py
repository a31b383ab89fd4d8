"""Final-training methods: which samples each trains on, with which weighted soft targets, and how (loss or
co-teaching). Torch-free: the workflow imports it to plan jobs."""

from typing import Any

import numpy as np
import pandas as pd

from enkcvs.recipe import CoTeaching
from enkcvs.weights import full_loss_sample_weights, reweighted_targets

#: Final-training methods. ``ce``: every sample with its given label. ``sl`` / ``gce``: the same samples under the
#: symmetric (Wang et al. 2019) or generalized (Zhang & Sabuncu 2018) cross-entropy. ``coteaching``: the same samples,
#: two networks exchanging small-loss samples (Han et al. 2018). ``ss_only``: the selected set SS alone, no
#: re-weighting (Figure 1, Table 1). ``enkcvs``: SS plus the re-weighted non-selected samples (Eq. full-loss).
METHODS = ("ce", "sl", "gce", "coteaching", "ss_only", "enkcvs")
#: Baselines (PAPER-NOTES, Baselines): no selection; they train on every sample with its one-hot given label.
BASELINE_METHODS = ("ce", "sl", "gce", "coteaching")
#: Methods that need a selection (K, M, t) before training.
SELECTION_METHODS = ("ss_only", "enkcvs")
#: Options (method hyperparameters) each method requires, all of them and no others.
METHOD_OPTIONS = {
    "ce": (),
    "sl": ("alpha", "beta"),
    "gce": ("q",),
    "coteaching": ("forget_rate", "warmup_epochs"),
    "ss_only": (),
    "enkcvs": (),
}


def training_options(*, method: str, options: dict[str, Any]) -> dict[str, Any]:
    """The extra keyword arguments of :func:`enkcvs.train.train_model` for ``method`` with its ``options``.

    ``sl`` {alpha, beta} and ``gce`` {q} give ``loss`` and ``loss_params``; ``coteaching`` {forget_rate,
    warmup_epochs} gives ``co_teaching``; the other methods take no options and give {}. Unknown methods, missing and
    unknown options raise ``ValueError``.
    """
    if method not in METHOD_OPTIONS:
        raise ValueError(f"unknown method {method!r}; known methods: {list(METHODS)}")
    expected = METHOD_OPTIONS[method]
    missing, unknown = sorted(set(expected) - set(options)), sorted(set(options) - set(expected))
    if missing or unknown:
        raise ValueError(
            f"method {method!r} takes options {list(expected)}: "
            + "; ".join(([f"missing {missing}"] if missing else []) + ([f"unknown {unknown}"] if unknown else []))
        )
    if method in ("sl", "gce"):
        return {"loss": method, "loss_params": {name: float(options[name]) for name in expected}}
    if method == "coteaching":
        co_teaching = CoTeaching(forget_rate=float(options["forget_rate"]), warmup_epochs=options["warmup_epochs"])
        return {"co_teaching": co_teaching}
    return {}


def final_training_set(
    *, method: str, given: np.ndarray, num_classes: int, selection: pd.DataFrame | None = None, gamma: float = 0.2
) -> tuple[np.ndarray, np.ndarray]:
    """Training samples and their targets for a final model.

    Parameters
    ----------
    method : one of :data:`METHODS`.
    given : (N,) given (noisy) labels.
    num_classes : Q.
    selection : for ``ss_only`` / ``enkcvs``: the selection table (N rows by sample: ``selected``, ``pseudo``,
        ``beta``).
    gamma : weight of the non-selected samples' term in Eq. full-loss.

    Returns
    -------
    indices : (n,) samples to train on.
    targets : (n, Q) soft targets scaled by each sample's loss weight.
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; known methods: {list(METHODS)}")
    one_hot = np.eye(num_classes, dtype=np.float32)
    if method in BASELINE_METHODS:
        return np.arange(len(given)), one_hot[given]
    if selection is None:
        raise ValueError(f"method {method!r} needs a selection table")
    selected = selection["selected"].to_numpy(dtype=bool)
    if method == "ss_only":
        indices = np.flatnonzero(selected)
        return indices, one_hot[given[indices]]
    targets = reweighted_targets(
        given=given,
        pseudo=selection["pseudo"].to_numpy(),
        beta=selection["beta"].to_numpy(),
        selected=selected,
        num_classes=num_classes,
    )
    weights = full_loss_sample_weights(selected=selected, gamma=gamma)
    return np.arange(len(given)), targets * weights[:, None]
