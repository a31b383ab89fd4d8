"""CUDA graphs only where they pay (``recipe.cuda_graphs: auto``): a short probe of the recipe's model decides, once
per GPU, whether replaying its training step from a graph beats launching it kernel by kernel over the whole job.

A small network's training step on a GPU is bound by kernel launches, not arithmetic (an H100 ran cnn4 batches of 128
at about 3 ms a step), and ``torch.compile(mode="reduce-overhead")`` replays the forward and backward passes as CUDA
graphs; but compiling takes seconds to minutes, and a large network or a short job may not win that back. ``auto``
times a fresh model's forward and backward passes on a batch of the job's shape, eager and graphed, in interleaved
rounds (:func:`probe_cuda_graphs`; cached per GPU, torch and CUDA version, model, batch shape and precision, so a
machine probes each model once), and a job uses graphs when they are at least :data:`SPEEDUP_NEEDED` times faster
and the time they save over the job's steps exceeds the compilation the probe measured (:func:`graphs_pay`); where
the graphs fail to compile or run, ``auto`` trains eager (the failure cached with the probes). On a CPU there are no
CUDA graphs: ``auto`` is off there, and ``true`` is refused before anything trains.

A graph replays one batch shape: full batches run graphed and an epoch's last, smaller batch runs eager on the same
weights (:class:`GraphedForward`), so the recipe trains on exactly the batches it would eagerly.
"""

from collections.abc import Callable
from pathlib import Path
from statistics import median

import torch
from torch import nn

from enkcvs.training.precision import cache_path, cached_measurement, steps_seconds
from enkcvs.training.recipe import STATIC_MODELS

#: Graphed steps must be at least this much faster than eager ones for ``auto`` to choose graphs.
SPEEDUP_NEEDED = 1.1
#: Interleaved eager/graphed rounds a probe times, and the steps of each round (:func:`probe_cuda_graphs`).
PROBE_ROUNDS = 5
PROBE_STEPS = 10
#: Where probes are cached, beside bf16's (:func:`enkcvs.training.precision.cache_path`).
CACHE_FILE = "cuda_graphs_probe.json"


def compiled(model: nn.Module) -> nn.Module:
    """``model``'s forward and backward passes compiled to replay as CUDA graphs, sharing its weights."""
    return torch.compile(model, mode="reduce-overhead", dynamic=False)


def begin_step() -> None:
    """Mark a new training step: outputs of the previous step's graphs may be overwritten from here on."""
    torch.compiler.cudagraph_mark_step_begin()


class GraphedForward:
    """A network's forward pass: replayed from a CUDA graph (``graphed``, :func:`compiled` by default) for batches of
    ``batch_size``, eager for any other (an epoch's last batch), both on the same weights."""

    def __init__(self, model: nn.Module, *, batch_size: int, graphed: Callable | None = None):
        self.model, self.batch_size = model, batch_size
        self.graphed = graphed or compiled(model)

    def __call__(self, xb: torch.Tensor) -> torch.Tensor:
        return self.graphed(xb) if len(xb) == self.batch_size else self.model(xb)


def probe_cuda_graphs(build: Callable[[], nn.Module], batch: torch.Tensor, *, bf16: bool,
                      graph: Callable[[nn.Module], Callable] = compiled, rounds: int = PROBE_ROUNDS,
                      steps: int = PROBE_STEPS) -> dict[str, float]:
    """Eager and graphed step times of a fresh model (``build()``) on ``batch``, the graphs' speedup (the median of
    the rounds' ratios, eager and graphed interleaved so that a passing load falls on both alike) and their one-off
    cost (``warmup_seconds``: the first graphed steps, compilation and capture, less as many eager ones). The global
    random state is left as it was, so probing changes no training run."""
    devices = [batch.device] if batch.device.type == "cuda" else []
    with torch.random.fork_rng(devices=devices):
        model = build().train()
        forward = graph(model)
        eager_first = steps_seconds(model, model, batch, bf16=bf16, steps=3)
        graphed_first = steps_seconds(forward, model, batch, bf16=bf16, steps=3, before_step=begin_step)
        timings = [(steps_seconds(model, model, batch, bf16=bf16, steps=steps) / steps,
                    steps_seconds(forward, model, batch, bf16=bf16, steps=steps, before_step=begin_step) / steps)
                   for _ in range(rounds)]
    return {"eager_seconds": median(eager for eager, _ in timings),
            "graphed_seconds": median(graphed for _, graphed in timings),
            "speedup": median(eager / graphed for eager, graphed in timings),
            "warmup_seconds": max(graphed_first - eager_first, 0.0)}


def graphs_pay(probe: dict[str, float | str], *, steps: int) -> bool:
    """Whether a job of ``steps`` full-batch training steps gains by CUDA graphs, by its probe: at least
    :data:`SPEEDUP_NEEDED` times faster a step, and the steps' saving larger than the compilation; never where the
    graphs failed to compile or run (the probe's ``error``)."""
    if "error" in probe:
        return False
    saved = steps * (probe["eager_seconds"] - probe["graphed_seconds"])
    return probe["speedup"] >= SPEEDUP_NEEDED and saved > probe["warmup_seconds"]


def probe_key(*, model_name: str, batch: torch.Tensor, bf16: bool) -> str:
    """What a probe's timing depends on: the GPU, torch and CUDA versions, the model, the batch's shape and the
    precision."""
    return (f"{torch.cuda.get_device_name(batch.device)} | torch {torch.__version__} | CUDA {torch.version.cuda} | "
            f"{model_name} | batch {tuple(batch.shape)} {batch.dtype} | {'bf16' if bf16 else 'fp32'}")


def cached_probe(*, model_name: str, build, batch, bf16: bool, cache: Path | None = None) -> dict[str, float]:
    """The probe's result for this GPU and model, from the cache or measured now (``build()`` -> a fresh model,
    ``batch()`` -> a batch of model inputs) and stored, one job measuring while the others wait
    (:func:`enkcvs.training.precision.cached_measurement`). Where the graphs fail to compile or run, the result is
    that ``error``, cached too, so ``auto`` trains eager there without trying again."""
    batch = batch()

    def measure() -> dict[str, float | str]:
        try:
            return probe_cuda_graphs(build, batch, bf16=bf16)
        except Exception as error:  # any failure to compile or capture the graphs: this model trains eager
            return {"error": f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"[:500]}

    return cached_measurement(cache or cache_path().with_name(CACHE_FILE),
                              key=probe_key(model_name=model_name, batch=batch, bf16=bf16), measure=measure,
                              describe=f"CUDA graphs probe of {model_name}")


def resolve_cuda_graphs(setting: bool | str, *, model_name: str, build, batch, device: torch.device, bf16: bool,
                        steps: int, probe_name: str | None = None) -> bool:
    """Whether a training of ``steps`` full-batch steps replays them as CUDA graphs: ``setting`` False never, True
    on every CUDA device, ``"auto"`` on a CUDA device where the probe (:func:`cached_probe`) shows they pay
    (:func:`graphs_pay`), only for :data:`~enkcvs.training.recipe.STATIC_MODELS` (the recipe refuses
    ``true`` for another). On any other device there are no CUDA graphs: ``auto``
    is off and ``true`` raises ``ValueError`` naming the fix. ``build()`` returns a fresh model on ``device``,
    ``batch()`` a batch of real model inputs; neither is called unless a probe runs. ``probe_name`` names what the
    probe times where it is not ``model_name``'s network alone (models trained stacked)."""
    if setting is False or model_name not in STATIC_MODELS:
        return False
    if device.type != "cuda":
        if setting is True:
            raise ValueError(f"recipe.cuda_graphs: true, but this job trains on {device.type}, which has no CUDA "
                             "graphs: set cuda_graphs: auto (graphs on GPUs where they pay) or false")
        return False
    if setting is True:
        return True
    return graphs_pay(cached_probe(model_name=probe_name or model_name, build=build, batch=batch, bf16=bf16),
                      steps=steps)
