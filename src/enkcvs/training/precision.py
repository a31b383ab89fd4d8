"""The arithmetic of a training's forward passes, by a stated rule and never by a timing, so that the same config on
the same device gives the same numbers every run: ``recipe.bf16`` true or false as given, ``auto`` bfloat16 autocast
on a CUDA GPU that supports it and fp32 everywhere else (a CPU trains in fp32 unless the config asks for bf16).
Every output records what its training used (``bf16`` in its provenance)."""

import torch


def uses_bf16(setting: bool | str, *, device: torch.device) -> bool:
    """Whether a training on ``device`` runs its forward passes under bf16 autocast (``recipe.bf16``)."""
    if setting not in (True, False, "auto"):
        raise ValueError(f"recipe.bf16 must be true, false or auto; got {setting!r}")
    if setting == "auto":
        return device.type == "cuda" and torch.cuda.is_bf16_supported()
    return setting


def autocast(device: torch.device, *, enabled: bool):
    """bfloat16 autocast of forward passes (:func:`uses_bf16`): convolutions and matrix products run in bf16,
    weights, gradients, optimizer state and the loss stay fp32; disabled, it changes nothing."""
    return torch.autocast(device.type, dtype=torch.bfloat16, enabled=enabled)
