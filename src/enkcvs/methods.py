"""Final-training methods: which samples each trains on, with which weighted soft targets."""

import numpy as np
import pandas as pd

from enkcvs.weights import full_loss_sample_weights, reweighted_targets

#: Final-training methods. ``ce``: every sample with its given label. ``ss_only``: the selected set SS alone, no
#: re-weighting (Figure 1, Table 1). ``enkcvs``: SS plus the re-weighted non-selected samples (Eq. full-loss).
METHODS = ("ce", "ss_only", "enkcvs")
#: Methods that need a selection (K, M, t) before training.
SELECTION_METHODS = ("ss_only", "enkcvs")


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
    if method == "ce":
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
