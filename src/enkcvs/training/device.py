"""Where and how a job trains, as its profile says (Snakemake resources, which are no rerun trigger): the device,
checked against the GPUs the job asked for, its threads, its DataLoader workers, CUDA graphs and how often it saves
its epoch checkpoint."""

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Execution:
    """How a training runs, beside what it computes (its recipe): what a profile sets for a job."""

    device: torch.device
    loader_workers: int = 4  # DataLoader worker processes for datasets streamed from disk (image files)
    cuda_graphs: bool = False  # replay the steps of models that can as CUDA graphs (enkcvs.training.graphs)
    checkpoint_every: int = 1  # epochs between two epoch checkpoints (enkcvs.training.resume)

    def __post_init__(self):
        if self.checkpoint_every < 1:
            raise ValueError(
                f"checkpoint_every must be >= 1 (epochs between two checkpoints), got {self.checkpoint_every}"
            )


def default_device() -> torch.device:
    """CUDA when present (the device ``CUDA_VISIBLE_DEVICES`` exposes first), else the CPU."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def upload(tensor: torch.Tensor, *, device: torch.device) -> torch.Tensor:
    """A CPU tensor (an epoch's random draws) copied to ``device`` without waiting for it: a plain copy to a GPU first
    waits for every kernel queued before it, which would stall the training. From pinned memory the copy is queued
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
        problem = f"this job asked for {gpus} GPU(s) (its gpu resource) but torch {torch.__version__} sees none"
        if not allow_cpu_fallback:
            raise RuntimeError(
                f"{problem}: run it where a GPU is visible, drop the gpu resource from the profile, or "
                "allow training on the CPU with the resource cpu_fallback=1"
            )
        log.warning("%s: training on the CPU (resource cpu_fallback=1)", problem)
    return device


def job_execution(resources: Mapping[str, Any], *, threads: int) -> Execution:
    """A workflow job's :class:`Execution` from its Snakemake ``resources`` (``gpu``, ``cpu_fallback``,
    ``loader_workers``, ``cuda_graphs``, ``checkpoint_every``, each optional) and ``threads``."""
    device = job_device(
        gpus=int(resources.get("gpu", 0)), allow_cpu_fallback=bool(resources.get("cpu_fallback", 0)), threads=threads
    )
    return Execution(
        device=device,
        loader_workers=int(resources.get("loader_workers", 4)),
        cuda_graphs=bool(resources.get("cuda_graphs", 0)),
        checkpoint_every=int(resources.get("checkpoint_every", 1)),
    )
