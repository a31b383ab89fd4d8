"""Mixup (Zhang et al. 2018) as used by E-NKCVS (Eq. mixup), on whole batches."""

import numpy as np
import torch


def mixup_lambda(*, alpha: float, rng: np.random.Generator) -> float:
    """Eq. mixup, first two lines: lambda ~ Beta(alpha, alpha), lambda' = max(lambda, 1 - lambda) >= 0.5."""
    lam = float(rng.beta(alpha, alpha))
    return max(lam, 1.0 - lam)


def mixup(
    x: torch.Tensor, targets: torch.Tensor, *, lam: float, partner: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Eq. mixup, last two lines: x' = lam x_1 + (1 - lam) x_2 and y' = lam y_1 + (1 - lam) y_2.

    Parameters
    ----------
    x : (B, ...) inputs.
    targets : (B, Q) targets; they may carry per-sample loss weights (w_i * soft target), which mix linearly too.
    lam : lambda' from :func:`mixup_lambda`.
    partner : (B,) index of each sample's partner within the batch.
    """
    return lam * x + (1.0 - lam) * x[partner], lam * targets + (1.0 - lam) * targets[partner]
