"""Where and how a job trains, as its profile says (Snakemake resources, which are no rerun trigger): the device,
checked against the GPUs the job asked for and claimed among the node's, its threads, its DataLoader workers, CUDA
graphs and how often it saves its epoch checkpoint."""

import fcntl
import logging
import os
import re
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from enkcvs.machine import gpu_names

log = logging.getLogger(__name__)

#: Seconds between two looks for a free GPU while every one a job may take is taken.
CLAIM_POLL_SECONDS = 1.0


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


@dataclass(frozen=True)
class GpuClaim:
    """GPUs a process holds, each by an exclusive lock (``flock``) on a file of one of its slots: the lock lasts until
    :meth:`release` or until the process ends, when the OS releases it, whether the process finished or crashed."""

    devices: tuple[str, ...]  # as CUDA_VISIBLE_DEVICES names them
    locks: tuple[int, ...]  # the open lock files' descriptors

    def release(self) -> None:
        """Hand the GPUs back to the other claimants."""
        for lock in self.locks:
            os.close(lock)


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


def node_gpus() -> list[str]:
    """The GPUs the node offers this process, as ``CUDA_VISIBLE_DEVICES`` names them: that variable's entries where it
    is set (by a scheduler, or by whoever started the run), else an index for each GPU ``nvidia-smi`` lists."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return [entry.strip() for entry in visible.split(",") if entry.strip()]
    return [str(index) for index in range(len(gpu_names()))]


def claim_gpus(
    *, count: int, devices: Sequence[str], jobs_per_gpu: int = 1, lock_dir: str | Path | None = None
) -> GpuClaim:
    """Claim ``count`` of ``devices`` among the processes of this machine that claim from the same ``lock_dir``.

    Parameters
    ----------
    count : how many GPUs to claim, each a different one of ``devices``.
    devices : the GPUs to claim from, as ``CUDA_VISIBLE_DEVICES`` names them (:func:`node_gpus`).
    jobs_per_gpu : how many claimants may hold one GPU at once; the least used GPUs are claimed first.
    lock_dir : the folder of the lock files (one for each slot of a GPU, named by the GPU and the slot); default the
        system's temporary folder, which every job of a node shares.

    Returns
    -------
    The claim, held until :meth:`GpuClaim.release` or the end of the process. While fewer than ``count`` GPUs have a
    free slot, it waits (logging that once) and looks again every :data:`CLAIM_POLL_SECONDS`.
    """
    if not 0 < count <= len(devices):
        raise ValueError(f"cannot claim {count} GPU(s) from the {len(devices)} the node offers ({', '.join(devices)})")
    if jobs_per_gpu < 1:
        raise ValueError(f"jobs_per_gpu must be >= 1, got {jobs_per_gpu}")
    folder = Path(lock_dir or tempfile.gettempdir())
    waiting = False
    while (claim := _try_claim(count=count, devices=devices, jobs_per_gpu=jobs_per_gpu, folder=folder)) is None:
        if not waiting:
            log.warning(
                "waiting for %d GPU(s) with a free slot among %s (%d job(s) a GPU; locks in %s)",
                count,
                ",".join(devices),
                jobs_per_gpu,
                folder,
            )
            waiting = True
        time.sleep(CLAIM_POLL_SECONDS)
    return claim


def _try_claim(*, count: int, devices: Sequence[str], jobs_per_gpu: int, folder: Path) -> GpuClaim | None:
    """:func:`claim_gpus`'s one look: the claim, or None where fewer than ``count`` GPUs have a free slot."""
    chooser = _open_lock_file(folder / "enkcvs-gpus.lock")
    try:
        fcntl.flock(chooser, fcntl.LOCK_EX)  # one claimant counts at a time: two never both take the least used GPU
        free = {device: _free_slots(device, jobs_per_gpu=jobs_per_gpu, folder=folder) for device in devices}
        chosen = sorted((device for device in devices if free[device]), key=lambda device: -len(free[device]))[:count]
        kept = {device: free[device].pop(0) for device in chosen} if len(chosen) == count else {}
        for lock in (lock for slots in free.values() for lock in slots):
            os.close(lock)
    finally:
        os.close(chooser)
    return GpuClaim(devices=tuple(kept), locks=tuple(kept.values())) if kept else None


def _free_slots(device: str, *, jobs_per_gpu: int, folder: Path) -> list[int]:
    """The descriptors of the slot files of ``device`` that no one held, each now locked by this process."""
    free, name = [], re.sub(r"[^\w.-]", "_", device)  # a GPU's UUID or MIG name may hold a '/'
    for slot in range(jobs_per_gpu):
        lock = _open_lock_file(folder / f"enkcvs-gpu-{name}-slot{slot}.lock")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(lock)
        else:
            free.append(lock)
    return free


def _open_lock_file(path: Path) -> int:
    """A read-only descriptor of ``path`` (enough to lock it), created where missing (mode 644 as the umask allows,
    so that the jobs of the node's other users can lock it too)."""
    try:
        return os.open(path, os.O_RDONLY)  # O_CREAT on another user's file in a sticky folder (/tmp) is refused
    except FileNotFoundError:
        return os.open(path, os.O_RDONLY | os.O_CREAT, 0o644)


def see_only_claimed_gpus(*, gpus: int, jobs_per_gpu: int = 1) -> None:
    """Where the node offers this process more GPUs than the ``gpus`` it asked for (:func:`node_gpus`), claim that
    many (:func:`claim_gpus`, in the system's temporary folder) and set ``CUDA_VISIBLE_DEVICES`` to them; call it
    before anything asks torch about CUDA, which reads the variable once. Where it offers no more, such as a
    scheduler's share of a node (SLURM sets ``CUDA_VISIBLE_DEVICES`` for a job's ``--gpus``), it leaves them as
    they are."""
    devices = node_gpus()
    if len(devices) <= gpus:
        return
    claim = claim_gpus(count=gpus, devices=devices, jobs_per_gpu=jobs_per_gpu)  # never released: held until exit
    os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(claim.devices)
    log.info("claimed GPU %s of %s (CUDA_VISIBLE_DEVICES)", os.environ["CUDA_VISIBLE_DEVICES"], ",".join(devices))


def job_device(
    *, gpus: int, allow_cpu_fallback: bool = False, threads: int | None = None, jobs_per_gpu: int = 1
) -> torch.device:
    """The device a job trains on, checked against the GPUs it asked for (its ``gpu`` resource); with ``threads``
    (its Snakemake threads), torch's CPU threads set to them.

    A job that asked for fewer GPUs than the node offers first claims that many, at most ``jobs_per_gpu`` jobs a GPU,
    and sees only them (:func:`see_only_claimed_gpus`), so that jobs side by side use all of a node's GPUs. A job
    that asked for GPUs and sees none raises ``RuntimeError`` naming the fix, rather than training for hours on the
    CPU unnoticed; with ``allow_cpu_fallback`` it logs a warning and trains on the CPU.
    """
    if threads is not None:
        torch.set_num_threads(threads)
    if gpus > 0:
        see_only_claimed_gpus(gpus=gpus, jobs_per_gpu=jobs_per_gpu)
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
    """A workflow job's :class:`Execution` from its Snakemake ``resources`` (``gpu``, ``jobs_per_gpu``,
    ``cpu_fallback``, ``loader_workers``, ``cuda_graphs``, ``checkpoint_every``, each optional) and ``threads``."""
    device = job_device(
        gpus=int(resources.get("gpu", 0)),
        allow_cpu_fallback=bool(resources.get("cpu_fallback", 0)),
        threads=threads,
        jobs_per_gpu=int(resources.get("jobs_per_gpu", 1)),
    )
    return Execution(
        device=device,
        loader_workers=int(resources.get("loader_workers", 4)),
        cuda_graphs=bool(resources.get("cuda_graphs", 0)),
        checkpoint_every=int(resources.get("checkpoint_every", 1)),
    )
