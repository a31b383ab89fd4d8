"""The device a training or a prediction runs on: CUDA where present, checked against the GPUs a job asked for."""

import logging

import torch

from enkcvs.training.allocator import keep_freed_memory

log = logging.getLogger(__name__)


def default_device() -> torch.device:
    """CUDA when present (the device ``CUDA_VISIBLE_DEVICES`` exposes first), else the CPU."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def training_device(device: torch.device | None) -> torch.device:
    """The device a training runs on, :func:`default_device` where None; on the CPU, with freed memory kept for the
    next step (:func:`enkcvs.training.allocator.keep_freed_memory`)."""
    device = device or default_device()
    if device.type == "cpu":
        keep_freed_memory()
    return device


def upload(tensor: torch.Tensor, *, device: torch.device) -> torch.Tensor:
    """A CPU tensor (a training step's random draws) copied to ``device`` without waiting for it: a plain copy to a GPU
    first waits for every kernel queued before it, which would stall every step. From pinned memory the copy is queued
    behind them instead."""
    if device.type != "cuda":
        return tensor.to(device)
    return tensor.pin_memory().to(device, non_blocking=True)


def job_device(*, gpus: int, allow_cpu_fallback: bool = False, threads: int | None = None) -> torch.device:
    """The device a job trains on, checked against the GPUs it asked for (its ``gpu`` resource); with ``threads``
    (its Snakemake threads), torch's CPU threads set to them.

    A job that asked for GPUs and sees none raises ``RuntimeError`` naming the fix, rather than training for hours
    on the CPU unnoticed; with ``allow_cpu_fallback`` it logs a warning and trains on the CPU.
    """
    if threads is not None:
        torch.set_num_threads(threads)
    device = default_device()
    if gpus > 0 and device.type != "cuda":
        problem = (f"this job asked for {gpus} GPU(s) (config gpu.per_training_job) but torch {torch.__version__} "
                   f"sees none")
        if not allow_cpu_fallback:
            raise RuntimeError(f"{problem}: run it where a GPU is visible, set gpu.per_training_job: 0, or allow "
                               "training on the CPU with gpu.allow_cpu_fallback: true")
        log.warning("%s: training on the CPU (gpu.allow_cpu_fallback: true)", problem)
    return device
