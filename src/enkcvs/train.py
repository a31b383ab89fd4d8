"""The one training loop shared by fold models and final models, and prediction with class probabilities.

Data live as tensors on the device; batches, mixup and the loss run on whole batches (no per-sample Python).
"""

import copy
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from enkcvs.mixup import mixup, mixup_lambda
from enkcvs.models import create_model
from enkcvs.recipe import Recipe


def default_device() -> torch.device:
    """CUDA when present (the device ``CUDA_VISIBLE_DEVICES`` exposes first), else the CPU."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def soft_cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Batch mean of -sum_k target_k log softmax(logits)_k. ``targets`` (B, Q) may carry per-sample weights."""
    return -(targets * F.log_softmax(logits, dim=1)).sum(dim=1).mean()


@dataclass
class TrainingResult:
    """A trained model and what happened while training it."""

    model: nn.Module
    best_epoch: int  # 1-based epoch whose weights were kept
    train_loss: list[float] = field(default_factory=list)  # mean batch loss per epoch
    validation_accuracy: list[float] = field(default_factory=list)  # against the noisy labels, per epoch


def _optimizer(recipe: Recipe, parameters) -> torch.optim.Optimizer:
    if recipe.optimizer == "sgd":
        return torch.optim.SGD(parameters, lr=recipe.lr, momentum=recipe.momentum, weight_decay=recipe.weight_decay)
    if recipe.optimizer == "adam":
        return torch.optim.Adam(parameters, lr=recipe.lr, weight_decay=recipe.weight_decay)
    raise ValueError(f"unknown optimizer {recipe.optimizer!r}; use 'sgd' or 'adam'")


def train_model(
    *,
    recipe: Recipe,
    x: np.ndarray,
    targets: np.ndarray,
    seed: int,
    validation: tuple[np.ndarray, np.ndarray] | None = None,
    device: torch.device | None = None,
) -> TrainingResult:
    """Train a fresh model of ``recipe.model`` with mixup and a milestone lr schedule.

    Parameters
    ----------
    recipe : the dataset's training recipe.
    x : (N, C, H, W) float32 inputs.
    targets : (N, Q) soft targets, each row scaled by the sample's loss weight (one-hot rows for plain CE).
    seed : seeds initialisation, batch order and mixup.
    validation : optional (x_val (V, C, H, W), labels (V,)); the epoch with the best accuracy on it is kept
        (Appendix, Eq. para_val). Without it the last epoch is kept.
    device : defaults to :func:`default_device`.

    Returns
    -------
    The model (eval mode) with the kept weights, and the per-epoch history.
    """
    device = device or default_device()
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    batch_order = torch.Generator(device="cpu").manual_seed(seed)
    model = create_model(recipe.model, input_shape=x.shape[1:], num_classes=targets.shape[1]).to(device)
    model = model.to(memory_format=torch.channels_last)
    x_all = torch.as_tensor(x, device=device).contiguous(memory_format=torch.channels_last)
    t_all = torch.as_tensor(targets, device=device)
    optimizer = _optimizer(recipe, model.parameters())
    schedule = torch.optim.lr_scheduler.MultiStepLR(optimizer, list(recipe.milestones), gamma=recipe.lr_decay)
    result = TrainingResult(model=model, best_epoch=recipe.epochs)
    best_accuracy, best_state = -1.0, None
    for epoch in range(1, recipe.epochs + 1):
        model.train()
        order = torch.randperm(len(x_all), generator=batch_order).to(device)
        losses = []
        for batch_number, batch in enumerate(order.split(recipe.batch_size), start=1):
            if len(batch) < 2:  # batch norm needs two samples
                continue
            xb, tb = x_all[batch], t_all[batch]
            if recipe.mixup_alpha:
                # Each sample's partner is a random *other* sample of the batch (PAPER-NOTES, Mixup).
                offsets = torch.randint(1, len(batch), (len(batch),), generator=batch_order)
                partner = ((torch.arange(len(batch)) + offsets) % len(batch)).to(device)
                xb, tb = mixup(xb, tb, lam=mixup_lambda(alpha=recipe.mixup_alpha, rng=rng), partner=partner)
            try:
                loss = soft_cross_entropy(model(xb), tb)
                if not torch.isfinite(loss):
                    raise FloatingPointError(
                        f"non-finite loss {loss.item()} at epoch {epoch}, batch {batch_number}: lower recipe.lr "
                        "or check the inputs for NaN/inf"
                    )
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
            except torch.OutOfMemoryError as error:
                raise MemoryError(
                    f"out of {device.type} memory at epoch {epoch}, batch {batch_number} with batch_size "
                    f"{recipe.batch_size}: lower recipe.batch_size (e.g. to {max(recipe.batch_size // 2, 2)})"
                ) from error
            losses.append(loss.detach())
        schedule.step()
        result.train_loss.append(float(torch.stack(losses).mean()) if losses else float("nan"))
        if validation is not None:
            accuracy = float(np.mean(predict_proba(model, validation[0], device=device).argmax(1) == validation[1]))
            result.validation_accuracy.append(accuracy)
            if accuracy > best_accuracy:
                best_accuracy, result.best_epoch = accuracy, epoch
                best_state = copy.deepcopy(model.state_dict())
    if best_state is not None:
        model.load_state_dict(best_state)
    model.eval()
    return result


@torch.no_grad()
def predict_proba(
    model: nn.Module, x: np.ndarray, *, device: torch.device | None = None, batch_size: int = 1024
) -> np.ndarray:
    """Class probabilities of ``model`` (eval mode) for inputs (N, C, H, W). Returns (N, Q) float32."""
    device = device or default_device()
    model.eval()
    inputs = torch.as_tensor(x, device=device).contiguous(memory_format=torch.channels_last)
    probabilities = [F.softmax(model(chunk), dim=1) for chunk in inputs.split(batch_size)]
    return torch.cat(probabilities).float().cpu().numpy()
