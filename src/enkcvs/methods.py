"""Final-training methods: which samples each trains on, with which weighted soft targets, and how (loss or
co-teaching). Torch-free: the workflow imports it to plan jobs."""

from typing import Any

import numpy as np
import pandas as pd

from enkcvs.paper import METHOD_NAMES
from enkcvs.recipe import CoTeaching
from enkcvs.weights import full_loss_sample_weights, reweighted_targets

#: Final-training methods. ``ce``: every sample with its given label. ``ce_true``: every sample with its *true*
#: label (the clean ceiling of the ablation ladder; needs injected noise). ``sl`` / ``gce``: the given labels under the
#: symmetric (Wang et al. 2019) or generalized (Zhang & Sabuncu 2018) cross-entropy. ``coteaching``: the given labels,
#: two networks exchanging small-loss samples (Han et al. 2018). ``ss_only``: the selected set SS alone, no
#: re-weighting (Figure 1, Table 1). ``ss_pseudo``: SS with its given labels plus every other sample with its pseudo
#: label, all weighted alike (plain CE: no beta, no gamma). ``enkcvs``: SS plus the re-weighted non-selected samples
#: (Eq. full-loss). Two oracle rungs use the true labels to locate losses (injected noise only): ``cs_only`` trains on
#: the clean samples CS (a perfect selection), ``css_only`` on the clean selected ones CSS (SS minus its wrong labels).
METHODS = ("ce", "ce_true", "sl", "gce", "coteaching", "cs_only", "ss_only", "css_only", "ss_pseudo", "enkcvs")
#: Methods without a selection (PAPER-NOTES, Baselines): they train on every sample with a one-hot label.
BASELINE_METHODS = ("ce", "ce_true", "sl", "gce", "coteaching", "cs_only")
#: Methods that need a selection (K, M, t) before training.
SELECTION_METHODS = ("ss_only", "css_only", "ss_pseudo", "enkcvs")
#: The ablation ladder (``results/report/ablation.*``), all with the same recipe, seeds and selection: the clean
#: ceiling, CE on the noisy labels, then the selection with and without its wrong labels and a perfect selection (the
#: oracles show what the selection's precision and recall cost), then the ingredients of E-NKCVS one by one.
ABLATION_LADDER = ("ce_true", "ce", "cs_only", "css_only", "ss_only", "ss_pseudo", "enkcvs")
#: Methods that train on the true labels (the ceiling and the oracles): injected noise only.
ORACLE_METHODS = ("ce_true", "cs_only", "css_only")
#: How tables and figures title each method: the paper's names where it prints the method, else a short description.
METHOD_TITLES = {
    **{method: METHOD_NAMES[method] for method in METHODS if method in METHOD_NAMES},
    "ce_true": "CE, true labels",
    "gce": "GCE",
    "cs_only": "CS only (oracle)",
    "ss_only": "SS only",
    "css_only": "CSS only (oracle)",
    "ss_pseudo": "SS + pseudo rest",
}
#: Options (method hyperparameters) each method requires, all of them and no others.
METHOD_OPTIONS = {
    "ce": (),
    "ce_true": (),
    "cs_only": (),
    "css_only": (),
    "sl": ("alpha", "beta"),
    "gce": ("q",),
    "coteaching": ("forget_rate", "warmup_epochs"),
    "ss_only": (),
    "ss_pseudo": (),
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
    *,
    method: str,
    given: np.ndarray,
    num_classes: int,
    selection: pd.DataFrame | None = None,
    gamma: float = 0.2,
    true: np.ndarray | None = None,
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
    true : (N,) true labels, for :data:`ORACLE_METHODS` only.

    Returns
    -------
    indices : (n,) samples to train on.
    targets : (n, Q) soft targets scaled by each sample's loss weight.
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; known methods: {list(METHODS)}")
    one_hot = np.eye(num_classes, dtype=np.float32)
    if method in ORACLE_METHODS and (true is None or (np.asarray(true) < 0).any()):
        raise ValueError(f"method {method!r} needs the true labels, which only injected noise knows")
    if method == "ce_true":
        return np.arange(len(given)), one_hot[true]
    if method == "cs_only":
        indices = np.flatnonzero(given == true)
        return indices, one_hot[given[indices]]
    if method in BASELINE_METHODS:
        return np.arange(len(given)), one_hot[given]
    if selection is None:
        raise ValueError(f"method {method!r} needs a selection table")
    selected = selection["selected"].to_numpy(dtype=bool)
    if method in ("ss_only", "css_only"):
        indices = np.flatnonzero(selected & (given == true) if method == "css_only" else selected)
        return indices, one_hot[given[indices]]
    if method == "ss_pseudo":
        return np.arange(len(given)), one_hot[np.where(selected, given, selection["pseudo"].to_numpy())]
    targets = reweighted_targets(
        given=given,
        pseudo=selection["pseudo"].to_numpy(),
        beta=selection["beta"].to_numpy(),
        selected=selected,
        num_classes=num_classes,
    )
    weights = full_loss_sample_weights(selected=selected, gamma=gamma)
    return np.arange(len(given)), targets * weights[:, None]
