"""CUDA graphs, where a job asks for them (its ``cuda_graphs`` resource, set by a GPU profile) and can have them: a
small network's training step on a GPU is bound by kernel launches, not arithmetic (an H100 ran cnn4 batches of 128
at about 3 ms a step), and a graph launches a whole step's kernels at once. Never on a CPU, never for models whose
shapes or control flow change with the batch (:data:`enkcvs.training.recipe.STATIC_MODELS` can), and never decided by
a timing: a job that asks trains graphed where it can and says so in its output (``cuda_graphs``).

One model (:class:`GraphedForward`): ``torch.compile(mode="reduce-overhead")`` replays its forward and backward passes
for full batches, and an epoch's last, smaller batch runs eager on the same weights, so the recipe trains on exactly
the batches it would eagerly. A stack of models (:class:`StepGraph`): the whole step, forward, backward and the
optimizer's update, is captured once as one CUDA graph and replayed, its inputs read from tensors at fixed addresses
(:mod:`enkcvs.training.stacked`).
"""

import logging
from collections.abc import Callable

import torch
from torch import nn

from enkcvs.training.recipe import STATIC_MODELS

log = logging.getLogger(__name__)

#: Steps run eagerly on a side stream before a graph is captured (the allocator and lazy initialisations settle).
WARMUP_STEPS = 3


def graphs_apply(asked: bool, *, model: str, device: torch.device) -> bool:
    """Whether a training asked for CUDA graphs (``asked``) replays them: on a CUDA device, for a model of
    :data:`~enkcvs.training.recipe.STATIC_MODELS`; elsewhere it trains eager and logs why."""
    if not asked:
        return False
    if device.type != "cuda" or model not in STATIC_MODELS:
        reason = f"it trains on {device.type}" if device.type != "cuda" else f"{model} changes shape with its batch"
        log.info("CUDA graphs asked for, but %s: training eager", reason)
        return False
    return True


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


class StepGraph:
    """A step function replayed as one CUDA graph: each call runs one step, the first :data:`WARMUP_STEPS` eagerly on
    a side stream (the allocator and lazy initialisations settle), then the next is captured (capturing runs nothing)
    and replayed, and every later call replays it. ``step()`` must read its inputs from, and write its results into,
    tensors at fixed addresses (it takes no arguments and returns nothing), and wait on nothing on the host: then a
    replay is the step (PyTorch's whole-network capture: forward, backward and the optimizer's update)."""

    def __init__(self, step: Callable[[], None]):
        self.step, self.graph, self.warmed = step, None, 0

    def __call__(self) -> None:
        if self.warmed < WARMUP_STEPS:
            stream = torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                self.step()
            torch.cuda.current_stream().wait_stream(stream)
            self.warmed += 1
            return
        if self.graph is None:
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                self.step()
        self.graph.replay()
