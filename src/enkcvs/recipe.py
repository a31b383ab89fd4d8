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


@dataclass(frozen=True)
class CoTeaching:
    """Co-teaching's settings (Han et al. 2018; PAPER-NOTES, Baselines): the share of each batch a network forgets
    (drops as likely noisy) once warmed up, reached linearly over the first ``warmup_epochs`` epochs."""

    forget_rate: float  # tau in [0, 1); the paper sets it to the noise rate
    warmup_epochs: int = 10  # T_k: epochs over which the forget rate rises linearly from 0 to tau

    def __post_init__(self):
        if not 0 <= self.forget_rate < 1:
            raise ValueError(f"co-teaching forget_rate must lie in [0, 1), got {self.forget_rate}")
        if isinstance(self.warmup_epochs, bool) or not isinstance(self.warmup_epochs, int) or self.warmup_epochs < 0:
            raise ValueError(f"co-teaching warmup_epochs must be a non-negative integer, got {self.warmup_epochs!r}")
