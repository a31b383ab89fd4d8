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

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> "Recipe":
        """Build from a config mapping (lists become tuples)."""
        values = dict(values)
        values["milestones"] = tuple(values.get("milestones", ()))
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        """Plain mapping for provenance metadata."""
        values = asdict(self)
        values["milestones"] = list(self.milestones)
        return values
