"""A dataset's training recipe (Appendix; docs/paper-notes.md, "Datasets, recipes and batch sizes"), one typed place with units."""

from dataclasses import asdict, dataclass, field
from typing import Any

#: Recipe fields added after runs were recorded, each with the value that trains as before it existed: a training
#: job's params carry one only where it is set otherwise (:func:`recipe_params`), so that adding a field reruns no
#: finished job (Snakemake's params trigger) and records keep their form (:meth:`Recipe.to_dict`).
ADDED_FIELDS: dict[str, Any] = {
    "lr_step_decay": 0.0,
    "steps_per_epoch": 0,
    "lr_linear_decay_from": 0,
    "beta1_after_decay": None,
}
#: Models without dropout whose forward pass has one shape and one control flow per batch shape: their fold models
#: can train stacked (:mod:`enkcvs.training.stacked`) and their steps replay as CUDA graphs
#: (:mod:`enkcvs.training.graphs`); the others (the text classifier, co-teaching's CNN with dropout, torchvision and
#: timm backbones) train one model per job, eager.
STATIC_MODELS = ("cnn4", "mlp", "cnn8", "resnet44", "resnet50")


def recipe_params(recipe: dict[str, Any]) -> dict[str, Any]:
    """A recipe mapping as a training job's params: without the :data:`ADDED_FIELDS` at their neutral values."""
    return {key: value for key, value in recipe.items() if not (key in ADDED_FIELDS and value == ADDED_FIELDS[key])}


@dataclass(frozen=True)
class Recipe:
    """How one model is trained; fold models and final models of a dataset share it."""

    model: str  # name in enkcvs.training.models.MODELS
    optimizer: str  # "sgd" (with momentum) or "adam"
    lr: float  # initial learning rate
    epochs: int  # training epochs
    batch_size: int = 128  # samples per mini-batch
    momentum: float = 0.9  # SGD momentum (ignored by Adam)
    weight_decay: float = 0.0  # L2 penalty
    milestones: tuple[int, ...] = field(default=())  # epochs at which the lr is multiplied by lr_decay
    lr_decay: float = 0.1  # lr factor at each milestone
    # Keras' time-based decay (SGD's ``decay``), which SL's authors train with: each step's lr is the epoch's lr
    # / (1 + lr_step_decay * optimizer steps taken so far); 0 = none. SGD only.
    lr_step_decay: float = 0.0
    # Co-teaching's authors' plan for Adam: from this 1-based epoch on the lr falls linearly to lr / (epochs + 1 -
    # start) at the last epoch (lr * (epochs + 1 - epoch) / (epochs + 1 - start)) and Adam's beta1 is
    # beta1_after_decay (None: unchanged); 0 = none. Adam only, without milestones.
    lr_linear_decay_from: int = 0
    beta1_after_decay: float | None = None
    # optimizer steps per epoch, each epoch a fresh shuffle cut after this many batches (co-teaching's authors' 401
    # batches of 128); 0 = every batch of one pass over the data
    steps_per_epoch: int = 0
    mixup_alpha: float | None = 0.3  # Beta(alpha, alpha) of Eq. mixup; None trains without mixup
    validation_fraction: float = 0.1  # share of a fold's training data held out to pick the best epoch
    augment: str | None = None  # batch augmentation by name in enkcvs.training.augment.AUGMENTATIONS; None: none
    model_options: dict[str, Any] = field(default_factory=dict)  # passed to the model builder (e.g. pretrained)
    # forward passes under bfloat16 autocast (weights, optimizer and loss stay fp32): True, False, or "auto" = on a
    # CUDA GPU that supports it, fp32 elsewhere (enkcvs.training.precision)
    bf16: bool | str = "auto"

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> "Recipe":
        """Build from a config mapping (lists become tuples)."""
        values = dict(values)
        values["milestones"] = tuple(values.get("milestones", ()))
        values["model_options"] = dict(values.get("model_options") or {})
        return cls(**values)

    def __post_init__(self):
        if self.lr_step_decay < 0 or (self.lr_step_decay and self.optimizer != "sgd"):
            raise ValueError(
                f"recipe lr_step_decay {self.lr_step_decay} must be >= 0 and applies to optimizer sgd "
                f"only, not {self.optimizer!r}: set it to 0 or train with sgd"
            )
        if not 0 <= self.lr_linear_decay_from <= self.epochs or (
            self.lr_linear_decay_from and (self.optimizer != "adam" or self.milestones)
        ):
            raise ValueError(
                f"recipe lr_linear_decay_from {self.lr_linear_decay_from} must be an epoch in 0.."
                f"{self.epochs} and applies to optimizer adam without milestones (here "
                f"{self.optimizer!r}, milestones {list(self.milestones)}): set it to 0, or train with "
                "adam and no milestones"
            )
        if self.beta1_after_decay is not None and not (self.lr_linear_decay_from and 0 <= self.beta1_after_decay < 1):
            raise ValueError(
                f"recipe beta1_after_decay {self.beta1_after_decay} must lie in [0, 1) and comes with "
                "lr_linear_decay_from: set both, or leave it null"
            )
        if self.bf16 not in (True, False, "auto"):
            raise ValueError(f"recipe bf16 must be true, false or auto; got {self.bf16!r}")
        if self.steps_per_epoch < 0:
            raise ValueError(
                f"recipe steps_per_epoch must be >= 0 (0: one pass over the data), got {self.steps_per_epoch}"
            )

    def to_dict(self) -> dict[str, Any]:
        """Plain mapping for provenance metadata, without the :data:`ADDED_FIELDS` where they are not used."""
        values = asdict(self)
        values["milestones"] = list(self.milestones)
        return recipe_params(values)


#: The schedules baselines' authors train with in their own code, by baseline and the paper's dataset: the recipe
#: fields they replace in the dataset's recipe (``baselines.<method>.schedule: authors``; docs/paper-notes.md, "The baselines").
#: SL (Wang et al. 2019, YisenWang/symmetric_cross_entropy_for_noisy_labels, train_models.py and util.py) on MNIST:
#: Keras SGD(lr=0.1, decay=5e-3, momentum=0.9), batch 128, 50 epochs, no augmentation, no weight penalty, and a
#: LearningRateScheduler giving 0.1 while the 0-based epoch is <= 10, 0.01 to 30, 0.001 after: the lr falls after the
#: 11th and the 31st epoch. Not reproduced: Keras applies the momentum to lr-scaled steps (PyTorch scales the
#: accumulated ones by the current lr) and its batch norm averages with momentum 0.99 (PyTorch 0.9); the model is
#: the dataset's (their MNIST model is the paper's cnn4 with he-normal initialisation).
#: Co-teaching (Han et al. 2018, bhanML/Co-teaching, main.py and model.py) on MNIST: their 9-layer CNN, Adam(lr=0.001),
#: batch 128, epochs of 401 batches of a fresh shuffle, 200 epochs of which the first only evaluates (199 trained),
#: the lr falling linearly to zero from epoch 80 while beta1 drops from 0.9 to 0.1, no augmentation, no weight
#: penalty. Their forget rate rises as ``np.linspace(0, tau, 10)`` indexed by the epoch, tau at epoch 9: the config's
#: ``warmup_epochs: 9`` with ``ramp: epoch`` (config/experiments/mnist-full-coteaching-authors.yaml). Not
#: reproduced: their dropout stays on when they evaluate.
AUTHORS_SCHEDULES: dict[str, dict[str, dict[str, Any]]] = {
    "sl": {
        "MNIST": {
            "optimizer": "sgd",
            "lr": 0.1,
            "momentum": 0.9,
            "weight_decay": 0.0,
            "lr_step_decay": 5e-3,
            "milestones": [11, 31],
            "lr_decay": 0.1,
            "epochs": 50,
            "batch_size": 128,
            "mixup_alpha": None,
            "augment": None,
        },
    },
    "coteaching": {
        "MNIST": {
            "model": "coteaching_cnn9",
            "optimizer": "adam",
            "lr": 0.001,
            "weight_decay": 0.0,
            "milestones": [],
            "epochs": 199,
            "batch_size": 128,
            "steps_per_epoch": 401,
            "lr_linear_decay_from": 80,
            "beta1_after_decay": 0.1,
            "mixup_alpha": None,
            "augment": None,
        },
    },
}
#: The baselines whose schedule is their authors' by default where :data:`AUTHORS_SCHEDULES` has one, each decided on
#: recorded cells (config/README.md); Co-teaching's authors' schedule is recorded only where a config asks for it.
AUTHORS_BY_DEFAULT = ("sl",)
#: How a baseline's schedule is chosen (``baselines.<method>.schedule``): the dataset's recipe, or its authors'.
SCHEDULES = ("dataset", "authors")


def default_schedule(*, baseline: str, paper_name: str | None) -> str:
    """The schedule of a baseline whose config names none: its authors' where :data:`AUTHORS_SCHEDULES` has one for
    the paper's dataset ``paper_name`` and the baseline is one of :data:`AUTHORS_BY_DEFAULT`, the dataset's recipe
    otherwise. A baseline trains as its authors train it (docs/paper-notes.md, "The baselines"); the recorded cells that decided
    it are in config/README.md."""
    return (
        "authors" if baseline in AUTHORS_BY_DEFAULT and paper_name in AUTHORS_SCHEDULES.get(baseline, {}) else "dataset"
    )


def baseline_recipe(
    recipe: dict[str, Any], *, baseline: str, schedule: str | None, paper_name: str | None
) -> dict[str, Any]:
    """The recipe mapping a final model of ``baseline`` trains with: the dataset's ``recipe``, or, with ``schedule``
    "authors", the dataset's recipe with the fields of :data:`AUTHORS_SCHEDULES` for ``baseline`` on the paper's
    dataset ``paper_name`` replaced; None: :func:`default_schedule`. ``ValueError`` naming the fix where the
    authors give no schedule for it."""
    if schedule is None:
        schedule = default_schedule(baseline=baseline, paper_name=paper_name)
    if schedule not in SCHEDULES:
        raise ValueError(f"unknown schedule {schedule!r} for baseline {baseline!r}; use one of {list(SCHEDULES)}")
    if schedule == "dataset":
        return recipe
    given = AUTHORS_SCHEDULES.get(baseline, {})
    if paper_name not in given:
        raise ValueError(
            f"baseline {baseline!r} has no authors' schedule for paper dataset {paper_name!r} (known: "
            f"{sorted(given) or 'none'}): set baselines.{baseline}.schedule: dataset, or paper_name to one of those"
        )
    return {**recipe, **given[paper_name]}


#: Han et al.'s T_k (their code ramps over 10 epochs): a warm-up of at least this many whole epochs ramps per epoch, as
#: theirs does (each epoch adds at most a tenth of the rate); a shorter one ramps per step (see :class:`CoTeaching`).
EPOCH_RAMP_MIN_EPOCHS = 10
#: How co-teaching's forget rate rises over the warm-up: per epoch, per optimizer step, or chosen by its length.
RAMPS = ("auto", "epoch", "step")


@dataclass(frozen=True)
class CoTeaching:
    """Co-teaching's settings (Han et al. 2018; docs/paper-notes.md, "The baselines"): the share of each batch a network forgets
    (drops as likely noisy) once warmed up, reached linearly over the first ``warmup_epochs`` epochs.

    The ramp ``"epoch"`` raises the rate at each epoch's start (r = tau * min(epoch / T_k, 1), epoch 1-based), as the
    authors' code does (theirs forgets tau / 9 already in its first trained epoch: ``np.linspace(0, tau, 10)`` indexed
    from epoch 1, its epoch 0 only evaluates; ours tau / 10). On a short warm-up that jumps: with 1 warm-up epoch the
    full rate applies from the first batch, before the networks can tell clean from noisy. The ramp ``"step"`` raises
    it every optimizer step instead (r = tau * min(s / (T_k * steps per epoch), 1), s 1-based), so ``warmup_epochs``
    may be a fraction of an epoch. ``"auto"`` ramps per epoch when the warm-up is at least
    :data:`EPOCH_RAMP_MIN_EPOCHS` whole epochs (long schedules keep the authors' per-epoch result), per step otherwise.
    """

    forget_rate: float  # tau in [0, 1); the paper sets it to the noise rate
    warmup_epochs: float = 10  # T_k: epochs over which the forget rate rises linearly from 0 to tau (0: no warm-up)
    ramp: str = "auto"  # one of RAMPS

    def __post_init__(self):
        if not 0 <= self.forget_rate < 1:
            raise ValueError(f"co-teaching forget_rate must lie in [0, 1), got {self.forget_rate}")
        if (
            isinstance(self.warmup_epochs, bool)
            or not isinstance(self.warmup_epochs, int | float)
            or not (self.warmup_epochs >= 0)
        ):
            raise ValueError(f"co-teaching warmup_epochs must be a non-negative number, got {self.warmup_epochs!r}")
        if self.ramp not in RAMPS:
            raise ValueError(f"co-teaching ramp must be one of {list(RAMPS)}, got {self.ramp!r}")
        if self.ramp == "epoch" and not float(self.warmup_epochs).is_integer():
            raise ValueError(
                f"co-teaching warmup_epochs {self.warmup_epochs} is not a whole number of epochs: "
                "ramp per step (ramp: step) or give whole epochs"
            )

    @property
    def per_step(self) -> bool:
        """Whether the forget rate rises every step (else at each epoch's start)."""
        if self.ramp == "auto":
            return not (float(self.warmup_epochs).is_integer() and self.warmup_epochs >= EPOCH_RAMP_MIN_EPOCHS)
        return self.ramp == "step"

    def rate(self, *, epoch: int, step: int, steps_per_epoch: int) -> float:
        """The share of a batch to forget (Han et al. 2018, Algorithm 1, R(T) = 1 - r) at 1-based ``epoch`` and
        1-based optimizer ``step`` (counted over all epochs), with ``steps_per_epoch`` steps in an epoch."""
        if not self.warmup_epochs:
            return self.forget_rate
        progress = step / (self.warmup_epochs * steps_per_epoch) if self.per_step else epoch / self.warmup_epochs
        return self.forget_rate * min(progress, 1.0)
