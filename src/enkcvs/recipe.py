"""A dataset's training recipe (Appendix; PAPER-NOTES "Datasets and recipes"), one typed place with units."""

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Recipe:
    """How one model is trained; fold models and final models of a dataset share it."""

    model: str  # name in enkcvs.models.MODELS
    optimizer: str  # "sgd" (with momentum) or "adam"
    lr: float  # initial learning rate
    epochs: int  # training epochs
    batch_size: int = 128  # samples per mini-batch
    momentum: float = 0.9  # SGD momentum (ignored by Adam)
    weight_decay: float = 0.0  # L2 penalty
    milestones: tuple[int, ...] = field(default=())  # epochs at which the lr is multiplied by lr_decay
    lr_decay: float = 0.1  # lr factor at each milestone
    mixup_alpha: float | None = 0.3  # Beta(alpha, alpha) of Eq. mixup; None trains without mixup
    validation_fraction: float = 0.1  # share of a fold's training data held out to pick the best epoch
    augment: str | None = None  # batch augmentation by name in enkcvs.augment.AUGMENTATIONS; None: none
    model_options: dict[str, Any] = field(default_factory=dict)  # passed to the model builder (e.g. pretrained)
    loader_workers: int = 4  # DataLoader worker processes for datasets streamed from disk (image_files)
    # forward passes under bfloat16 autocast (weights, optimizer and loss stay fp32): True, False, or "auto" = where
    # a probe shows it pays on this machine (enkcvs.precision)
    bf16: bool | str = "auto"

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> "Recipe":
        """Build from a config mapping (lists become tuples)."""
        values = dict(values)
        values["milestones"] = tuple(values.get("milestones", ()))
        values["model_options"] = dict(values.get("model_options") or {})
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        """Plain mapping for provenance metadata."""
        values = asdict(self)
        values["milestones"] = list(self.milestones)
        return values


#: Han et al.'s T_k (their code ramps over 10 epochs): a warm-up of at least this many whole epochs ramps per epoch, as
#: theirs does (each epoch adds at most a tenth of the rate); a shorter one ramps per step (see :class:`CoTeaching`).
EPOCH_RAMP_MIN_EPOCHS = 10
#: How co-teaching's forget rate rises over the warm-up: per epoch, per optimizer step, or chosen by its length.
RAMPS = ("auto", "epoch", "step")


@dataclass(frozen=True)
class CoTeaching:
    """Co-teaching's settings (Han et al. 2018; PAPER-NOTES, Baselines): the share of each batch a network forgets
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
        if isinstance(self.warmup_epochs, bool) or not isinstance(self.warmup_epochs, int | float) or not (
            self.warmup_epochs >= 0
        ):
            raise ValueError(f"co-teaching warmup_epochs must be a non-negative number, got {self.warmup_epochs!r}")
        if self.ramp not in RAMPS:
            raise ValueError(f"co-teaching ramp must be one of {list(RAMPS)}, got {self.ramp!r}")
        if self.ramp == "epoch" and not float(self.warmup_epochs).is_integer():
            raise ValueError(f"co-teaching warmup_epochs {self.warmup_epochs} is not a whole number of epochs: "
                             "ramp per step (ramp: step) or give whole epochs")

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
