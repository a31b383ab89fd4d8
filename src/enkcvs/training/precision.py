"""bfloat16 only where it pays (``recipe.bf16: auto``): a short probe of the recipe's model decides, once per machine.

bf16 autocast is ~2.5x faster than fp32 on CPUs with AVX-512 BF16 or AMX, but 6-10x *slower* on CPUs with only AVX2,
where PyTorch emulates it (benchmarks/README.md). ``auto`` times a few training steps of the model in both precisions,
interleaved, and uses bf16 only when it is at least :data:`SPEEDUP_NEEDED` times faster; the decision is cached per CPU
model and instruction sets, torch version, thread count, model and batch shape, so a machine probes each model once
and every later job reads the same answer. On a CUDA GPU ``auto`` is bf16 where the GPU supports it, without a probe.
``true`` is obeyed, with a warning naming both timings when the probe shows bf16 slower. ``$ENKCVS_BF16_AUTO``
(``true`` or ``false``) decides what ``auto`` means on a CPU without a probe: one arithmetic for every job of a run
whatever node it lands on, every config alike (a cluster of mixed CPUs; the test suite, whose outcome must not
depend on the machine's instruction sets).
"""

import fcntl
import json
import logging
import os
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from statistics import median

import torch
from torch import nn

from enkcvs.io import cache_dir
from enkcvs.machine import cpu_flags, cpu_model, instruction_set_limits

log = logging.getLogger(__name__)

#: bf16 must be at least this much faster than fp32 for ``auto`` to choose it.
SPEEDUP_NEEDED = 1.3
#: Interleaved fp32/bf16 step pairs a probe times (:func:`probe_bf16`).
PROBE_ROUNDS = 7
#: Where decisions are cached: ``$ENKCVS_CACHE_DIR`` or ``~/.cache/enkcvs``.
CACHE_FILE = "bf16_probe.json"
#: The environment variable that decides ``auto`` on a CPU instead of the probe (:func:`pinned_auto`).
AUTO_VARIABLE = "ENKCVS_BF16_AUTO"


def cache_path() -> Path:
    return cache_dir() / CACHE_FILE


def probe_key(*, model_name: str, batch: torch.Tensor) -> str:
    """What a probe's timing depends on: CPU model and instruction sets (and any limit put on the kernels' ones), torch
    version, threads, the model and the batch's shape."""
    limits = "".join(f" {key}={value}" for key, value in instruction_set_limits().items())
    return (f"{cpu_model()} ({' '.join(cpu_flags())}{limits}) | torch {torch.__version__} | "
            f"{torch.get_num_threads()} threads | {model_name} | batch {tuple(batch.shape)} {batch.dtype}")


def steps_seconds(forward: Callable, model: nn.Module, batch: torch.Tensor, *, bf16: bool, steps: int = 1,
                  before_step: Callable[[], None] | None = None) -> float:
    """Seconds of ``steps`` forward and backward passes of ``forward`` (``model``'s own, or a graphed replay of it) on
    ``batch``, autocast to bf16 or not, the device's queue drained before and after; ``before_step`` runs before each
    pass (a graph's step mark). Gradients are computed and discarded; the weights do not change."""
    _synchronize(batch.device)
    started = time.perf_counter()
    for _ in range(steps):
        if before_step is not None:
            before_step()
        with autocast(batch.device, enabled=bf16):
            logits = forward(batch)
        logits.float().logsumexp(dim=1).mean().backward()
        model.zero_grad(set_to_none=True)
    _synchronize(batch.device)
    return time.perf_counter() - started


def _synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def probe_bf16(build, batch: torch.Tensor, *, rounds: int = PROBE_ROUNDS) -> dict[str, float]:
    """fp32 and bf16 step times of a fresh model (``build()``) on ``batch`` and bf16's speedup.

    After one warm-up step in each precision, each of ``rounds`` rounds times one fp32 step and then one bf16 step,
    and the speedup is the median of the rounds' ratios (fp32 time / bf16 time): a load that comes and goes (the
    job beside this one on the machine) slows both steps of a round alike, where timing all fp32 steps before all
    bf16 steps let it fall on one precision only (the digits cnn4 measured 1.44x in one run and 1.29x in the next on
    one machine, either side of :data:`SPEEDUP_NEEDED`). The global random state is left as it was, so probing
    changes no training run."""
    with torch.random.fork_rng(devices=[]):
        model = build()
        model.train()
        steps_seconds(model, model, batch, bf16=False)
        steps_seconds(model, model, batch, bf16=True)
        timings = [(steps_seconds(model, model, batch, bf16=False), steps_seconds(model, model, batch, bf16=True))
                   for _ in range(rounds)]
    return {"fp32_seconds": median(fp32 for fp32, _ in timings), "bf16_seconds": median(bf16 for _, bf16 in timings),
            "speedup": median(fp32 / bf16 for fp32, bf16 in timings)}


def cached_measurement(cache: Path, *, key: str, measure: Callable[[], dict], describe: str) -> dict:
    """The measurement ``key`` of the JSON file ``cache``, or ``measure()`` now and stored (logged as ``describe``
    followed by its figures). Concurrent jobs wait on a lock, so one of them measures and the others read its
    answer."""
    cache.parent.mkdir(parents=True, exist_ok=True)
    with open(cache.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        measured = json.loads(cache.read_text()) if cache.exists() else {}
        if key not in measured:
            measured[key] = measure()
            log.info("%s: %s; cached in %s", describe,
                     ", ".join(f"{name} {value:.4g}" if isinstance(value, float) else f"{name} {value}"
                               for name, value in measured[key].items()), cache)
            tmp = cache.with_suffix(".tmp")
            tmp.write_text(json.dumps(measured, indent=1, sort_keys=True) + "\n")
            tmp.replace(cache)
    return measured[key]


def cached_probe(*, model_name: str, build, batch, cache: Path | None = None) -> dict[str, float]:
    """The probe's result for this machine and model (:func:`cached_measurement`), from the cache or measured now
    (``build()`` -> a fresh model, ``batch()`` -> a batch of model inputs)."""
    batch = batch()
    return cached_measurement(cache or cache_path(), key=probe_key(model_name=model_name, batch=batch),
                              measure=lambda: probe_bf16(build, batch), describe=f"bf16 probe of {model_name}")


def resolve_bf16(setting: bool | str, *, model_name: str, build, batch, device: torch.device) -> bool:
    """Whether training uses bf16 autocast: ``setting`` True / False as given (True with a warning where the probe
    shows bf16 slower on this CPU), ``"auto"`` by the probe (:func:`cached_probe`) on a CPU and by
    ``torch.cuda.is_bf16_supported()`` on a GPU. ``build()`` returns a fresh model on ``device``, ``batch()`` a
    batch of real model inputs; neither is called unless a probe runs."""
    if setting is False:
        return False
    if setting not in (True, "auto"):
        raise ValueError(f"recipe.bf16 must be true, false or auto; got {setting!r}")
    if device.type == "cuda":
        return setting is True or torch.cuda.is_bf16_supported()
    if device.type != "cpu":
        return setting is True
    if setting == "auto" and (pinned := pinned_auto()) is not None:
        return pinned
    probe = cached_probe(model_name=model_name, build=build, batch=batch)
    if setting is True:
        if probe["speedup"] < 1.0:
            warnings.warn(
                f"recipe.bf16: true, but bf16 is {1 / probe['speedup']:.1f}x slower than fp32 for {model_name} on this "
                f"CPU ({cpu_model()}: fp32 {probe['fp32_seconds']:.4f} s, bf16 {probe['bf16_seconds']:.4f} s per "
                "step); set bf16: auto or false",
                stacklevel=2,
            )
        return True
    return probe["speedup"] >= SPEEDUP_NEEDED


def pinned_auto() -> bool | None:
    """What ``$ENKCVS_BF16_AUTO`` makes ``auto`` on a CPU: True (bf16), False (fp32), or None where it is unset or
    empty (the probe decides). Any other value is refused, naming the two it may take."""
    value = os.environ.get(AUTO_VARIABLE, "").strip().lower()
    if not value:
        return None
    if value not in ("true", "false"):
        raise ValueError(f"${AUTO_VARIABLE} is {os.environ[AUTO_VARIABLE]!r}: set it to true (bf16) or false (fp32), "
                         "or unset it to let a probe decide")
    return value == "true"


def autocast(device: torch.device, *, enabled: bool):
    """bfloat16 autocast of forward passes (``recipe.bf16``, resolved by :func:`resolve_bf16`):
    convolutions and matrix products run in bf16, weights, gradients, optimizer state and the loss stay fp32; disabled,
    it changes nothing."""
    return torch.autocast(device.type, dtype=torch.bfloat16, enabled=enabled)
