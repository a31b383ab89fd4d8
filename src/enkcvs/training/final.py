"""Final-training methods: which samples each trains on, with which weighted soft targets, and how (loss or
co-teaching). Torch-free: the workflow imports it to plan jobs."""

from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from enkcvs.method.methods import BASELINE_METHODS, METHODS, MIXUP_METHODS, MIXUP_VARIANTS, ORACLE_METHODS
from enkcvs.method.noise import actual_noise_rate
from enkcvs.method.noise_settings import parse_noise
from enkcvs.method.weights import full_loss_sample_weights, reweighted_targets
from enkcvs.training.recipe import CoTeaching, Recipe

#: Options (method hyperparameters) each method requires.
METHOD_OPTIONS = {
    **{method: () for method in METHODS},
    "sl": ("alpha", "beta"),
    "sl_mixup": ("alpha", "beta"),
    "gce": ("q",),
    "coteaching": ("forget_rate", "warmup_epochs"),
}
#: Options a method may be given, with their defaults: the baselines train without mixup unless told to.
OPTIONAL_OPTIONS = {
    "ce": {"mixup": False},
    "sl": {"mixup": False},
    "gce": {"mixup": False},
    "coteaching": {"ramp": "auto", "mixup": False},
}


@dataclass(frozen=True)
class FinalTraining:
    """How a final model of one method trains: whether with the recipe's mixup, with which loss, or by co-teaching."""

    mixup: bool
    loss: str = "ce"  # name in enkcvs.method.losses.make_loss
    loss_params: dict[str, float] = field(default_factory=dict)
    co_teaching: CoTeaching | None = None

    def train_model_arguments(self) -> dict[str, Any]:
        """The keyword arguments of :func:`enkcvs.training.train.train_model` besides the recipe."""
        return {"loss": self.loss, "loss_params": self.loss_params, "co_teaching": self.co_teaching}

    def record(self, recipe: Recipe) -> dict[str, Any]:
        """What the model trained with, for its provenance: the mixup alpha (None: no mixup), the loss with its
        parameters, and co-teaching's forget rate and warm-up (None for other methods)."""
        return {
            "mixup_alpha": recipe.mixup_alpha,
            "loss": {"name": self.loss, **self.loss_params},
            "co_teaching": asdict(self.co_teaching) | {"per_step": self.co_teaching.per_step}
            if self.co_teaching
            else None,
        }


def final_training(*, method: str, options: dict[str, Any]) -> FinalTraining:
    """How ``method`` trains with its ``options`` (see :data:`METHOD_OPTIONS` and :data:`OPTIONAL_OPTIONS`).

    ``sl`` and ``sl_mixup`` {alpha, beta} and ``gce`` {q} give the loss; ``coteaching`` {forget_rate (a number,
    resolved), warmup_epochs, ramp} gives the co-teaching settings; ``ce``, ``sl``, ``gce`` and ``coteaching`` say
    through ``mixup`` whether they mix (co-teaching cannot); :data:`~enkcvs.method.methods.MIXUP_METHODS` always mix,
    the others never.
    Unknown methods, missing and unknown options, and mixup for co-teaching raise ``ValueError``.
    """
    if method not in METHOD_OPTIONS:
        raise ValueError(f"unknown method {method!r}; known methods: {list(METHODS)}")
    required, optional = METHOD_OPTIONS[method], OPTIONAL_OPTIONS.get(method, {})
    missing = sorted(set(required) - set(options))
    unknown = sorted(set(options) - set(required) - set(optional))
    if missing or unknown:
        raise ValueError(
            f"method {method!r} takes options {list(required)}{f' and optionally {list(optional)}' if optional else ''}"
            ": " + "; ".join(([f"missing {missing}"] if missing else []) + ([f"unknown {unknown}"] if unknown else []))
        )
    options = {**optional, **options}
    mixup = bool(options["mixup"]) if "mixup" in options else method in MIXUP_METHODS
    if method in ("sl", "sl_mixup", "gce"):
        loss = MIXUP_VARIANTS.get(method, method)  # SL + mixup trains SL's loss
        return FinalTraining(mixup=mixup, loss=loss, loss_params={name: float(options[name]) for name in required})
    if method == "coteaching":
        if mixup:
            raise ValueError(
                "co-teaching cannot train with mixup (baselines.coteaching.mixup: its small-loss ranking "
                "needs each sample's own label): set it to false"
            )
        co_teaching = CoTeaching(
            forget_rate=float(options["forget_rate"]), warmup_epochs=options["warmup_epochs"], ramp=options["ramp"]
        )
        return FinalTraining(mixup=False, co_teaching=co_teaching)
    return FinalTraining(mixup=mixup)


def resolve_forget_rate(value: float | str, *, noise: str, given: np.ndarray, true: np.ndarray) -> float:
    """Co-teaching's forget rate as configured (``baselines.coteaching.forget_rate``): ``"nominal"``, the noise
    setting's rate epsilon (``noise``, e.g. ``"asym0.4"``); ``"actual"``, the share of wrong labels (given (N,) !=
    true (N,)), which Han et al. set it to and which an asymmetric map keeps below epsilon; or a number, as it is.
    ``"real"`` noise knows neither: ``ValueError``."""
    if value == "nominal":
        rate = parse_noise(noise).rate
        if np.isnan(rate):
            raise ValueError(f"noise {noise!r} has no nominal rate: set baselines.coteaching.forget_rate to a number")
        return rate
    if value == "actual":
        return actual_noise_rate(given=given, true=true)
    return float(value)


def final_recipe(recipe: Recipe, *, training: FinalTraining) -> Recipe:
    """The dataset's ``recipe`` as ``training`` uses it: without mixup unless the method mixes."""
    return recipe if training.mixup else replace(recipe, mixup_alpha=None)


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
    method : one of :data:`~enkcvs.method.methods.METHODS`.
    given : (N,) given (noisy) labels.
    num_classes : Q.
    selection : for :data:`~enkcvs.method.methods.SELECTION_METHODS`: the selection table (N rows by sample: ``selected``, and ``pseudo``,
        ``beta`` where the method uses them; for ``cl_prune`` ``selected`` = not flagged by confident learning; for
        ``incv`` INCV's selected set, :mod:`enkcvs.method.incv`).
    gamma : weight of the non-selected samples' term in Eq. full-loss (:data:`~enkcvs.method.methods.GAMMA_METHODS`).
    true : (N,) true labels, for :data:`~enkcvs.method.methods.ORACLE_METHODS` only.

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
    if method in ("ss_only", "css_only", "cl_prune", "incv"):
        indices = np.flatnonzero(selected & (given == true) if method == "css_only" else selected)
        return indices, one_hot[given[indices]]
    if method in ("ss_pseudo", "ss_pseudo_weighted"):
        targets = one_hot[np.where(selected, given, selection["pseudo"].to_numpy())]
        if method == "ss_pseudo":
            return np.arange(len(given)), targets
        return np.arange(len(given)), targets * full_loss_sample_weights(selected=selected, gamma=gamma)[:, None]
    targets = reweighted_targets(
        given=given,
        pseudo=selection["pseudo"].to_numpy(),
        beta=selection["beta"].to_numpy(),
        selected=selected,
        num_classes=num_classes,
    )
    weights = full_loss_sample_weights(selected=selected, gamma=gamma)
    return np.arange(len(given)), targets * weights[:, None]
