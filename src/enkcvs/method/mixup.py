"""Mixup (Zhang et al. 2018) as used by E-NKCVS (Eq. mixup), on whole batches."""

import numpy as np
import torch


def mixup_lambdas(*, alpha: float, rng: np.random.Generator, size: int) -> np.ndarray:
    """Eq. mixup, first two lines, for ``size`` batches: lambda ~ Beta(alpha, alpha), lambda' = max(lambda,
    1 - lambda) >= 0.5. Returns (size,) float32."""
    lam = rng.beta(alpha, alpha, size=size)
    return np.maximum(lam, 1.0 - lam).astype(np.float32)


def partner_index(draws: torch.Tensor, *, size: int) -> torch.Tensor:
    """Each sample's mixup partner: a random *other* sample of its batch of ``size`` (docs/paper-notes.md, mixup's
    partners), from ``draws`` (..., >= size) uniform in [0, 1): sample b's partner is b + 1 + floor(u_b (size - 1))
    modulo size. Returns (..., size) int64 on the draws' device."""
    offsets = 1 + (draws[..., :size] * (size - 1)).long().clamp_(max=size - 2)  # a float32 draw may round up to 1
    return (torch.arange(size, device=draws.device) + offsets) % size


def mixup(
    x: torch.Tensor, targets: torch.Tensor, *, lam: torch.Tensor | float, partner: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Eq. mixup, last two lines: x' = lam x_1 + (1 - lam) x_2 and y' = lam y_1 + (1 - lam) y_2.

    Parameters
    ----------
    x : (B, ...) inputs.
    targets : (B, Q) targets; they may carry per-sample loss weights (w_i * soft target), which mix linearly too.
    lam : lambda' from :func:`mixup_lambdas` (a float, or a 0-d tensor on ``x``'s device).
    partner : (B,) index of each sample's partner within the batch (:func:`partner_index`).
    """
    return lam * x + (1.0 - lam) * x[partner], lam * targets + (1.0 - lam) * targets[partner]
