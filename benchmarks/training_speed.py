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

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader
from torch.utils.flop_counter import FlopCounterMode
from torchvision import transforms
from torchvision.datasets import VisionDataset

from enkcvs import machine, precision
from enkcvs.models import create_model
from enkcvs.recipe import Recipe
from enkcvs.train import train_model

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
#: engine's path before enkcvs.optimizer), and the same first step through the engine (``train_model``).
OVERHEAD_CHILDREN = {
    "import torch": """import time, torch
print(time.time())""",
    "torch.optim step": """import time, torch
from enkcvs.models import create_model
torch.set_num_threads({threads})
model = create_model("cnn4", input_shape=(1, 28, 28), num_classes=10)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
schedule = torch.optim.lr_scheduler.MultiStepLR(optimizer, [10], gamma=0.1)
torch.nn.functional.cross_entropy(model(torch.zeros(8, 1, 28, 28)), torch.arange(8)).backward()
optimizer.step()
print(time.time())""",
    "engine step": """import time, numpy as np, torch
from enkcvs.recipe import Recipe
from enkcvs.train import train_model
torch.set_num_threads({threads})
train_model(recipe=Recipe(model="cnn4", optimizer="sgd", lr=0.01, epochs=1, batch_size=8),
            x=np.zeros((8, 1, 28, 28), np.uint8), targets=np.eye(10, dtype=np.float32)[np.arange(8) % 10], seed=0,
            device=torch.device("cpu"))
print(time.time())""",
}


def median_seconds(run, repeats: int = 3) -> float:
    """Median wall-clock seconds of ``repeats`` calls of ``run()``; a float it returns is taken as its own timing."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        measured = run()
        times.append(measured if isinstance(measured, float) else time.perf_counter() - start)
    return statistics.median(times)


def matmul_gflops(dtype: torch.dtype, n: int = 2048) -> float:
    """Peak GFLOP/s of ``torch.mm`` on two (n, n) matrices of ``dtype``: 2 n^3 / median time of one product."""
    a, b = torch.randn(n, n, dtype=dtype), torch.randn(n, n, dtype=dtype)
    torch.mm(a, b)  # warm-up
    return 2 * n**3 / median_seconds(lambda: torch.mm(a, b)) / 1e9


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


def naive_seconds(name: str, steps: int, *, warmup: int = 3) -> float:
    """Seconds of ``steps`` SGD steps of the naive baseline after ``warmup`` steps: PIL dataset, per-sample
    transforms, DataLoader without workers, contiguous fp32 model, mixup of each batch with a shuffled copy."""
    shape, num_classes, augment = SETUPS[name]
    per_sample = [transforms.RandomCrop(32, padding=4), transforms.RandomHorizontalFlip()] if augment else []
    images, labels = synthetic_data(shape, num_classes, (steps + warmup) * BATCH)
    dataset = PilImages(images, labels, transforms.Compose([*per_sample, transforms.ToTensor()]))
    torch.manual_seed(0)
    model = create_model(name, input_shape=shape, num_classes=num_classes)
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


def engine_seconds(name: str, steps: int, *, bf16: bool | str) -> float:
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


def job_overhead_seconds(child: str, threads: int) -> float:
    """Median seconds from starting a fresh Python process running ``child`` (an ``OVERHEAD_CHILDREN`` value) to the
    time it prints (imports included, process exit excluded)."""

    def run() -> float:
        start = time.time()
        command = [sys.executable, "-c", child.format(threads=threads)]
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        return float(done.stdout.split()[-1]) - start

    return median_seconds(run)


CHANNELS_LAST = torch.channels_last  # the engine's layout of image batches and models


def auto_decision(name: str) -> dict:
    """What ``recipe.bf16: auto`` decides for ``name`` on this machine: the probe's fp32 and bf16 step times (the
    very entry of the machine's cache that training jobs with this model and batch size read) and the choice."""
    shape, num_classes, _ = SETUPS[name]
    x, _ = synthetic_data(shape, num_classes, BATCH)
    probe = precision.cached_probe(
        model_name=name,
        build=lambda: create_model(name, input_shape=shape, num_classes=num_classes).to(memory_format=CHANNELS_LAST),
        batch=lambda: torch.as_tensor(x).float().div(255).contiguous(memory_format=CHANNELS_LAST),
    )
    return {**probe, "bf16": probe["speedup"] >= precision.SPEEDUP_NEEDED}


def main() -> None:
    """Parse the command line, measure, print the table and optionally write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30, help="timed optimizer steps per run (default 30)")
    parser.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    parser.add_argument(
        "--models", default="cnn4,cnn8,resnet44", help="comma-separated models; '' measures only the per-job overhead"
    )
    parser.add_argument("--out", help="write all results to this JSON file")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    peak = {"fp32": matmul_gflops(torch.float32), "bf16": matmul_gflops(torch.bfloat16)}
    print(f"matmul peak 2048x2048, {args.threads} threads: fp32 {peak['fp32']:.1f}, bf16 {peak['bf16']:.1f} GFLOP/s")
    rows, auto_decisions, models = [], {}, [name for name in args.models.split(",") if name]
    if models:
        print(f"{'model':<9} {'variant':<12} {'samples/s':>10} {'x naive':>8} {'GFLOP/s':>8} {'of fp32 peak':>13}")
    for name in models:
        shape, num_classes, _ = SETUPS[name]
        flops = forward_flops(create_model(name, input_shape=shape, num_classes=num_classes), shape)
        seconds = {
            "naive": median_seconds(partial(naive_seconds, name, args.steps)),
            "engine fp32": engine_seconds(name, args.steps, bf16=False),
            "engine bf16": engine_seconds(name, args.steps, bf16=True),
            "engine auto": engine_seconds(name, args.steps, bf16="auto"),
        }
        decision = auto_decision(name)
        print(f"{name:<9} bf16 auto: probe fp32 {decision['fp32_seconds']:.4f} s, "
              f"bf16 {decision['bf16_seconds']:.4f} s per step ({decision['speedup']:.2f}x) -> "
              f"{'bf16' if decision['bf16'] else 'fp32'}")
        auto_decisions[name] = decision
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
    overhead = {name: job_overhead_seconds(child, args.threads) for name, child in OVERHEAD_CHILDREN.items()}
    print("per-job overhead, process start to done:")
    for name, seconds in overhead.items():
        print(f"  {name:<17} {seconds:5.2f} s  ({seconds / overhead['torch.optim step']:.2f} x torch.optim step)")
    if args.out:
        results = {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "torch": torch.__version__,
            "threads": args.threads,
            "cpu": machine.cpu_model(),
            "cpu_flags": machine.cpu_flags(),
            "bf16_auto": auto_decisions,
            "steps": args.steps,
            "batch_size": BATCH,
            "matmul_peak_gflops": peak,
            "runs": rows,
            "job_overhead_s": overhead,
        }
        with open(args.out, "w") as out:
            json.dump(results, out, indent=2)


if __name__ == "__main__":
    main()
