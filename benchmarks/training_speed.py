"""Training throughput of the enkcvs engine against a naive per-sample DataLoader baseline, on this machine.

Run ``python benchmarks/training_speed.py --help``; see benchmarks/README.md. Reports numbers, asserts nothing.
"""

import argparse
import json
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from fold_speed import synchronize
from PIL import Image
from torch.utils.data import DataLoader
from torch.utils.flop_counter import FlopCounterMode
from torchvision import transforms
from torchvision.datasets import VisionDataset

from enkcvs import machine
from enkcvs.method.losses import soft_cross_entropy
from enkcvs.method.mixup import mixup
from enkcvs.training.models import create_model
from enkcvs.training.optimizer import MomentumSGD
from enkcvs.training.recipe import Recipe
from enkcvs.training.train import train_model

BATCH = 128
#: model -> (input shape (C, H, W), Q, engine augmentation): MNIST-shaped for cnn4, CIFAR-shaped for the others.
SETUPS = {
    "cnn4": ((1, 28, 28), 10, None),
    "cnn8": ((3, 32, 32), 10, "shift_flip"),
    "resnet44": ((3, 32, 32), 100, "shift_flip"),
}
LR, MOMENTUM, WEIGHT_DECAY, MIXUP_ALPHA = 0.01, 0.9, 5e-4, 0.3
#: Per-job overhead children, each printing the time.time() at which it is done: ``import torch`` alone (the floor),
#: one SGD step of cnn4 on 8 images through ``torch.optim.SGD`` + ``MultiStepLR`` (which import ``torch._dynamo``, the
#: engine's path before enkcvs.training.optimizer), the same first step through the engine (``train_model``), and that
#: step inside ``enkcvs.pipeline.job.logged_job`` as a workflow script runs it (its log set up).
OVERHEAD_CHILDREN = {
    "import torch": """import time, torch
print(time.time())""",
    "torch.optim step": """import time, torch
from enkcvs.training.models import create_model
torch.set_num_threads({threads})
model = create_model("cnn4", input_shape=(1, 28, 28), num_classes=10)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
schedule = torch.optim.lr_scheduler.MultiStepLR(optimizer, [10], gamma=0.1)
torch.nn.functional.cross_entropy(model(torch.zeros(8, 1, 28, 28)), torch.arange(8)).backward()
optimizer.step()
print(time.time())""",
    "engine step": """import time, numpy as np, torch
from enkcvs.training.recipe import Recipe
from enkcvs.training.train import train_model
torch.set_num_threads({threads})
train_model(recipe=Recipe(model="cnn4", optimizer="sgd", lr=0.01, epochs=1, batch_size=8),
            x=np.zeros((8, 1, 28, 28), np.uint8), targets=np.eye(10, dtype=np.float32)[np.arange(8) % 10], seed=0,
            device=torch.device("cpu"))
print(time.time())""",
    "engine step, job": """import time, numpy as np, torch
from enkcvs.pipeline.job import logged_job
from enkcvs.training.recipe import Recipe
from enkcvs.training.train import train_model
torch.set_num_threads({threads})
with logged_job("/dev/null"):
    train_model(recipe=Recipe(model="cnn4", optimizer="sgd", lr=0.01, epochs=1, batch_size=8),
                x=np.zeros((8, 1, 28, 28), np.uint8), targets=np.eye(10, dtype=np.float32)[np.arange(8) % 10],
                seed=0, device=torch.device("cpu"))
    print(time.time())""",
}
#: torch.profiler operator names by the part of a training step they do (self CPU time is summed per part).
OPERATOR_PARTS = {
    "convolution": (
        "aten::mkldnn_convolution",
        "aten::convolution_backward",
        "aten::_slow_conv2d_forward",
        "aten::_slow_conv2d_backward",
    ),
    "matmul": ("aten::mm", "aten::addmm", "aten::bmm"),
    "batch norm": ("aten::native_batch_norm", "aten::native_batch_norm_backward"),
    "relu": ("aten::relu", "aten::relu_", "aten::clamp_min", "aten::clamp_min_", "aten::threshold_backward"),
    "pooling": ("aten::max_pool2d_with_indices", "aten::max_pool2d_with_indices_backward"),
}


def median_seconds(run, repeats: int = 3) -> float:
    """Median wall-clock seconds of ``repeats`` calls of ``run()``; a float it returns is taken as its own timing."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        measured = run()
        times.append(measured if isinstance(measured, float) else time.perf_counter() - start)
    return statistics.median(times)


def matmul_gflops(
    dtype: torch.dtype, sizes: tuple[int, ...] = (1024, 2048, 4096), *, device: torch.device = torch.device("cpu")
) -> float:
    """Peak GFLOP/s of ``torch.mm`` of ``dtype`` on ``device``: the best over square sizes n of 2 n^3 / median time
    of one product (one size alone can sit below what the convolution kernels reach: at 2048 alone the AVX-512
    EPYC's cnn8 ran at 114 % of it)."""
    best = 0.0
    for n in sizes:
        a, b = torch.randn(n, n, dtype=dtype, device=device), torch.randn(n, n, dtype=dtype, device=device)
        torch.mm(a, b)  # warm-up
        best = max(best, 2 * n**3 / median_seconds(lambda: (torch.mm(a, b), synchronize(device))) / 1e9)
    return best


def forward_flops(model: torch.nn.Module, shape: tuple[int, ...]) -> float:
    """Forward FLOPs per sample, counted on one batch of ``BATCH``. FlopCounterMode counts 2 FLOPs per
    multiply-accumulate of convolutions and matrix products (its conv/mm formulas are 2 * MACs) and nothing for
    batch norm, ReLU or pooling, so this is the matmul work the peak is measured for. Checked on cnn4 (1x28x28,
    Q = 10): 8,482,304 = 2 x 4,241,152 MACs counted by hand."""
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        model(torch.rand(BATCH, *shape))
    return counter.get_total_flops() / BATCH


def synthetic_data(shape: tuple[int, ...], num_classes: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Seeded random uint8 images (n, C, H, W) and labels (n,) in 0..Q-1."""
    rng = np.random.default_rng(0)
    return rng.integers(0, 256, (n, *shape), dtype=np.uint8), rng.integers(0, num_classes, n)


class PilImages(VisionDataset):
    """The usual torchvision dataset: images held as PIL images, transformed one sample at a time."""

    def __init__(self, images: np.ndarray, labels: np.ndarray, transform):
        super().__init__(root=None, transform=transform)
        hwc = images.transpose(0, 2, 3, 1)  # (N, H, W, C): PIL's layout; grey images as (H, W)
        self.images = [Image.fromarray(image[..., 0] if image.shape[-1] == 1 else image) for image in hwc]
        self.labels = labels.tolist()

    def __len__(self) -> int:
        return len(self.images)

    def __getitem__(self, index: int):
        return self.transform(self.images[index]), self.labels[index]


def paper_layers(model: torch.nn.Module) -> torch.nn.Module:
    """``model`` as the paper draws it and PyTorch writes it by default, for the naive baseline: each ReLU right
    after its batch norm (the engine's models max-pool first) and out of place (the engine's work in place). The
    same parameters, so the same initialisation; the engine's exact model-level speed-ups are not the baseline's."""
    for module in model.modules():
        if isinstance(module, torch.nn.ReLU):
            module.inplace = False
    if not isinstance(model, torch.nn.Sequential):
        return model
    layers = list(model)
    for i in range(len(layers) - 2):
        if isinstance(layers[i], torch.nn.BatchNorm2d) and isinstance(layers[i + 1], torch.nn.MaxPool2d):
            layers[i + 1], layers[i + 2] = layers[i + 2], layers[i + 1]
    return torch.nn.Sequential(*layers)


def naive_seconds(name: str, steps: int, *, warmup: int = 3) -> float:
    """Seconds of ``steps`` SGD steps of the naive baseline after ``warmup`` steps: PIL dataset, per-sample
    transforms, DataLoader without workers, contiguous fp32 model, mixup of each batch with a shuffled copy."""
    shape, num_classes, augment = SETUPS[name]
    per_sample = [transforms.RandomCrop(32, padding=4), transforms.RandomHorizontalFlip()] if augment else []
    images, labels = synthetic_data(shape, num_classes, (steps + warmup) * BATCH)
    dataset = PilImages(images, labels, transforms.Compose([*per_sample, transforms.ToTensor()]))
    torch.manual_seed(0)
    model = paper_layers(create_model(name, input_shape=shape, num_classes=num_classes))
    optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM, weight_decay=WEIGHT_DECAY)
    rng = np.random.default_rng(0)
    model.train()
    for step, (x, y) in enumerate(DataLoader(dataset, batch_size=BATCH, shuffle=True, num_workers=0)):
        if step == warmup:
            start = time.perf_counter()
        lam = rng.beta(MIXUP_ALPHA, MIXUP_ALPHA)
        partner = torch.randperm(len(y))
        logits = model(lam * x + (1 - lam) * x[partner])
        loss = lam * F.cross_entropy(logits, y) + (1 - lam) * F.cross_entropy(logits, y[partner])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return time.perf_counter() - start


# A naive baseline in a fresh process, as a user's training script runs: glibc's malloc adapts its thresholds to what
# a process has freed so far, so a loop timed after other work in the same process would inherit that work's.
NAIVE_CHILD = """import sys, torch
from functools import partial
sys.path.insert(0, {folder!r})
import training_speed
torch.set_num_threads({threads})
print(training_speed.median_seconds(partial(training_speed.naive_seconds, {name!r}, {steps})))"""


def naive_seconds_in_fresh_process(name: str, steps: int, *, threads: int) -> float:
    """:func:`naive_seconds` (median of 3) in a fresh Python process."""
    child = NAIVE_CHILD.format(folder=str(Path(__file__).parent), threads=threads, name=name, steps=steps)
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, check=True)
    return float(done.stdout.split()[-1])


def engine_seconds(name: str, steps: int, *, bf16: bool) -> float:
    """Median seconds of ``train_model`` over steps * ``BATCH`` samples for one epoch (``steps`` SGD steps), after a
    warm-up call on two batches that pays the one-off costs (lazy imports, first-step setup)."""
    shape, num_classes, augment = SETUPS[name]
    recipe = Recipe(
        model=name,
        optimizer="sgd",
        lr=LR,
        momentum=MOMENTUM,
        weight_decay=WEIGHT_DECAY,
        epochs=1,
        batch_size=BATCH,
        mixup_alpha=MIXUP_ALPHA,
        augment=augment,
        bf16=bf16,
    )
    x, labels = synthetic_data(shape, num_classes, steps * BATCH)
    targets = np.eye(num_classes, dtype=np.float32)[labels]

    def train(n: int) -> None:
        train_model(recipe=recipe, x=x[:n], targets=targets[:n], seed=0, device=torch.device("cpu"))

    train(2 * BATCH)
    return median_seconds(lambda: train(len(x)))


def engine_parts(name: str, steps: int) -> dict[str, float]:
    """Share of the engine's fp32 training time (self CPU time under ``torch.profiler``, one epoch of ``steps``
    steps after a warm-up) spent in each of :data:`OPERATOR_PARTS`, the rest as "other"."""
    shape, num_classes, augment = SETUPS[name]
    recipe = Recipe(
        model=name,
        optimizer="sgd",
        lr=LR,
        momentum=MOMENTUM,
        weight_decay=WEIGHT_DECAY,
        epochs=1,
        batch_size=BATCH,
        mixup_alpha=MIXUP_ALPHA,
        augment=augment,
        bf16=False,
    )
    x, labels = synthetic_data(shape, num_classes, steps * BATCH)
    targets = np.eye(num_classes, dtype=np.float32)[labels]
    train_model(recipe=recipe, x=x[: 2 * BATCH], targets=targets[: 2 * BATCH], seed=0, device=torch.device("cpu"))
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profiler:
        train_model(recipe=recipe, x=x, targets=targets, seed=0, device=torch.device("cpu"))
    self_times = {event.key: event.self_cpu_time_total for event in profiler.key_averages()}
    total = sum(self_times.values())
    parts = {part: sum(self_times.get(op, 0.0) for op in ops) / total for part, ops in OPERATOR_PARTS.items()}
    return {**parts, "other": 1.0 - sum(parts.values())}


def compiled_step_loop(name: str, steps: int) -> dict[str, float]:
    """The engine's fp32 training step (channels_last model, mixup, soft cross-entropy, MomentumSGD) as a plain loop,
    eager and under ``torch.compile`` (inductor on the CPU): samples/s of each over ``steps`` steps after warm-up,
    and the compiled model's first two steps (the compilation) in seconds."""
    shape, num_classes, _ = SETUPS[name]
    x = torch.rand(BATCH, *shape).contiguous(memory_format=CHANNELS_LAST)
    targets = torch.eye(num_classes)[torch.arange(BATCH) % num_classes]
    partner = torch.randperm(BATCH)
    result = {}
    for variant in ("eager", "compiled"):
        torch.manual_seed(0)
        model = create_model(name, input_shape=shape, num_classes=num_classes).to(memory_format=CHANNELS_LAST)
        optimizer = MomentumSGD(
            model.parameters(), lr=LR, momentum=MOMENTUM, weight_decay=WEIGHT_DECAY, milestones=(), gamma=0.1
        )
        forward = torch.compile(model) if variant == "compiled" else model

        def step() -> None:
            xb, tb = mixup(x, targets, lam=0.7, partner=partner)
            loss = soft_cross_entropy(forward(xb), tb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

        started = time.perf_counter()
        step()
        step()
        if variant == "compiled":
            result["compile_s"] = time.perf_counter() - started
        result[variant] = steps * BATCH / median_seconds(lambda: [step() for _ in range(steps)])
    return result


def job_overhead_seconds(child: str, threads: int) -> dict[str, float]:
    """Median seconds from starting a fresh Python process running ``child`` (an ``OVERHEAD_CHILDREN`` value) to the
    time it prints ("done": imports and first step), and to the process's end ("exit": its teardown too)."""

    runs = []
    for _ in range(3):
        start = time.time()
        done = subprocess.run(
            [sys.executable, "-c", child.format(threads=threads)], capture_output=True, text=True, check=True
        )
        runs.append({"exit": time.time() - start, "done": float(done.stdout.split()[-1]) - start})
    return {until: statistics.median(run[until] for run in runs) for until in ("done", "exit")}


CHANNELS_LAST = torch.channels_last  # the engine's layout of image batches and models


def main() -> None:
    """Parse the command line, measure, print the table and optionally write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30, help="timed optimizer steps per run (default 30)")
    parser.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    parser.add_argument(
        "--models", default="cnn4,cnn8,resnet44", help="comma-separated models; '' measures only the per-job overhead"
    )
    parser.add_argument("--compile", action="store_true", help="also time the step loop under torch.compile")
    parser.add_argument("--out", help="write all results to this JSON file")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    peak = {"fp32": matmul_gflops(torch.float32), "bf16": matmul_gflops(torch.bfloat16)}
    print(
        f"matmul peak (best of n = 1024, 2048, 4096), {args.threads} threads: fp32 {peak['fp32']:.1f}, "
        f"bf16 {peak['bf16']:.1f} GFLOP/s"
    )
    rows, models = [], [name for name in args.models.split(",") if name]
    parts, compiled = {}, {}
    if models:
        print(f"{'model':<9} {'variant':<12} {'samples/s':>10} {'x naive':>8} {'GFLOP/s':>8} {'of fp32 peak':>13}")
    for name in models:
        shape, num_classes, _ = SETUPS[name]
        flops = forward_flops(create_model(name, input_shape=shape, num_classes=num_classes), shape)
        naive = partial(naive_seconds_in_fresh_process, name, args.steps, threads=args.threads)
        seconds = {
            "naive": naive(),
            "engine fp32": engine_seconds(name, args.steps, bf16=False),
            "engine bf16": engine_seconds(name, args.steps, bf16=True),
        }
        for variant, duration in seconds.items():
            rate = args.steps * BATCH / duration
            gflops = 3 * flops * rate / 1e9  # training = forward + backward (about 2x forward)
            ratio, fraction = seconds["naive"] / duration, gflops / peak["fp32"]
            rows.append(
                {
                    "model": name,
                    "variant": variant,
                    "forward_flops_per_sample": flops,
                    "seconds": duration,
                    "samples_per_s": rate,
                    "ratio_to_naive": ratio,
                    "gflops": gflops,
                    "fraction_of_fp32_peak": fraction,
                }
            )
            print(f"{name:<9} {variant:<12} {rate:>10.0f} {ratio:>8.2f} {gflops:>8.1f} {fraction:>13.1%}")
        parts[name] = engine_parts(name, args.steps)
        print(
            f"{name:<9} engine fp32 time by part: "
            + ", ".join(f"{part} {share:.1%}" for part, share in parts[name].items())
        )
        if args.compile:
            compiled[name] = loop = compiled_step_loop(name, args.steps)
            print(
                f"{name:<9} fp32 step loop: eager {loop['eager']:.0f}, torch.compile {loop['compiled']:.0f} "
                f"samples/s ({loop['compiled'] / loop['eager']:.2f}x) after {loop['compile_s']:.1f} s compiling"
            )
    overhead = {name: job_overhead_seconds(child, args.threads) for name, child in OVERHEAD_CHILDREN.items()}
    baseline = overhead["torch.optim step"]
    print("per-job overhead: process start to done (imports, first step) and to exit (teardown too):")
    for name, seconds in overhead.items():
        print(
            f"  {name:<17} done {seconds['done']:5.2f} s ({seconds['done'] / baseline['done']:.2f}x)  "
            f"exit {seconds['exit']:5.2f} s ({seconds['exit'] / baseline['exit']:.2f}x)  of torch.optim step"
        )
    if args.out:
        results = {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "torch": torch.__version__,
            "threads": args.threads,
            "cpu": machine.cpu_model(),
            "cpu_flags": machine.cpu_flags(),
            "steps": args.steps,
            "batch_size": BATCH,
            "matmul_peak_gflops": peak,
            "runs": rows,
            "engine_fp32_time_by_part": parts,
            "compiled_step_loop": compiled,
            "job_overhead_s": overhead,
        }
        with open(args.out, "w") as out:
            json.dump(results, out, indent=2)


if __name__ == "__main__":
    main()
