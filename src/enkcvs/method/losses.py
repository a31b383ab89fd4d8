"""Training losses on whole batches: cross-entropy and the noise-robust baselines SL and GCE (docs/paper-notes.md, "The baselines").

Every loss takes ``logits`` (B, Q) and ``targets`` (B, Q) and returns the batch mean. Targets are soft: one-hot rows,
mixup's convex combinations of them (rows sum to 1), or, for E-NKCVS, rows scaled by a per-sample loss weight.
"""

import inspect
from collections.abc import Callable
from functools import partial

import torch
import torch.nn.functional as F

#: Loss names accepted by :func:`make_loss`.
LOSSES = ("ce", "sl", "gce")

#: Smallest target probability inside RCE's log: log 0 is clipped to log 1e-4 (Wang et al. 2019: A = -4 ln 10).
RCE_TARGET_FLOOR = 1e-4


def cross_entropy_per_sample(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Per-sample cross-entropy -sum_k t_k log softmax(logits)_k, shape (B,)."""
    return -(targets * F.log_softmax(logits, dim=1)).sum(dim=1)


def soft_cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Batch mean of -sum_k target_k log softmax(logits)_k. ``targets`` (B, Q) may carry per-sample weights."""
    return cross_entropy_per_sample(logits, targets).mean()


def symmetric_cross_entropy(logits: torch.Tensor, targets: torch.Tensor, *, alpha: float, beta: float) -> torch.Tensor:
    """Symmetric cross-entropy SL (Wang et al. 2019, "Symmetric Cross Entropy for Robust Learning with Noisy Labels",
    Eq. 5): batch mean of alpha * CE + beta * RCE with

        CE  = -sum_k t_k log p_k,
        RCE = -sum_k p_k log clamp(t_k, 1e-4, 1),   p = softmax(logits),

    i.e. RCE swaps the roles of prediction and target and clips log 0 to log 1e-4 (so for a one-hot target y,
    RCE = -(1 - p_y) log 1e-4). Paper values: MNIST alpha 0.01, beta 1.0; CIFAR-10 0.1, 1.0; CIFAR-100 6.0, 0.1.
    """
    log_p = F.log_softmax(logits, dim=1)
    ce = -(targets * log_p).sum(dim=1)
    rce = -(log_p.exp() * torch.log(targets.clamp(RCE_TARGET_FLOOR, 1.0))).sum(dim=1)
    return (alpha * ce + beta * rce).mean()


def generalized_cross_entropy(logits: torch.Tensor, targets: torch.Tensor, *, q: float = 0.7) -> torch.Tensor:
    """Generalized cross-entropy L_q (Zhang & Sabuncu 2018, "Generalized Cross Entropy Loss for Training Deep Neural
    Networks with Noisy Labels", Eq. 6), for soft targets: batch mean of sum_k t_k (1 - p_k^q) / q, p = softmax(logits).

    q -> 0 gives cross-entropy (the limit of (1 - p^q) / q is -log p), q = 1 the mean absolute error 1 - p_y; the paper
    recommends q = 0.7. Requires 0 < q <= 1.
    """
    if not 0 < q <= 1:
        raise ValueError(f"generalized cross-entropy needs 0 < q <= 1, got q = {q}")
    p_to_q = torch.exp(q * F.log_softmax(logits, dim=1))  # p^q without underflowing p first
    return (targets * (1.0 - p_to_q) / q).sum(dim=1).mean()


def make_loss(name: str, **params: float) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    """The batch loss ``loss(logits, targets)`` of ``name`` in :data:`LOSSES` with its parameters bound.

    ``ce`` takes none, ``sl`` needs ``alpha`` and ``beta``, ``gce`` takes ``q`` (default 0.7). Unknown names, missing
    and unknown parameters raise ``ValueError``.
    """
    functions = {"ce": soft_cross_entropy, "sl": symmetric_cross_entropy, "gce": generalized_cross_entropy}
    if name not in functions:
        raise ValueError(f"unknown loss {name!r}; known losses: {list(LOSSES)}")
    function = functions[name]
    try:
        inspect.signature(function).bind(None, None, **params)
    except TypeError as error:
        accepted = [p for p in inspect.signature(function).parameters if p not in ("logits", "targets")]
        raise ValueError(f"loss {name!r} takes parameters {accepted}, got {sorted(params)}: {error}") from None
    return partial(function, **params) if params else function
