"""CPU training keeps freed memory for reuse (glibc's malloc): a step's buffers stop costing fresh pages, training
asks for it, ENKCVS_MALLOC=default opts out, and the results are the same bit for bit either way."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from enkcvs.training import allocator, train
from enkcvs.training.recipe import Recipe

# A fresh process (malloc settings are per process and cannot be undone): page faults of six "steps" that each
# write and free three 40 MB buffers, then the predictions of a small seeded cnn4 training.
CHILD = """
import json, resource
import numpy as np, torch
from enkcvs.training.allocator import keep_freed_memory
from enkcvs.training.recipe import Recipe
from enkcvs.training.evaluate import predict_proba
from enkcvs.training.train import train_model

applied = keep_freed_memory()

def faults_of_a_step():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    buffers = [torch.ones(10 << 20) for _ in range(3)]
    del buffers
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

faults = [faults_of_a_step() for _ in range(6)]
rng = np.random.default_rng(0)
x = rng.integers(0, 256, size=(96, 1, 12, 12), dtype=np.uint8)
targets = np.eye(3, dtype=np.float32)[rng.integers(0, 3, size=96)]
recipe = Recipe(model="cnn4", optimizer="sgd", lr=0.05, epochs=2, batch_size=32, mixup_alpha=0.3, bf16=False)
model = train_model(recipe=recipe, x=x, targets=targets, seed=3, device=torch.device("cpu")).model
probabilities = predict_proba(model, x, batch_size=32, device=torch.device("cpu"))
print(json.dumps({"applied": applied, "faults": faults, "probabilities": probabilities.tolist()}))
"""


def run_child(**environment) -> dict:
    env = {key: value for key, value in os.environ.items() if key != "ENKCVS_MALLOC"}
    env.update(OMP_NUM_THREADS="1", **environment)
    completed = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env, check=True)
    return json.loads(completed.stdout.splitlines()[-1])


@pytest.mark.skipif(not allocator._glibc(), reason="mallopt is glibc's")
def test_kept_memory_stops_fresh_pages_and_changes_no_result():
    kept, default = run_child(), run_child(ENKCVS_MALLOC="default")
    assert kept["applied"] and not default["applied"]
    pages_per_step = 3 * (40 << 20) // 4096
    # glibc's defaults map three fresh buffers every step; kept, the heap settles and a step touches no new page.
    assert all(faults > pages_per_step // 2 for faults in default["faults"])
    assert kept["faults"][-1] < pages_per_step // 100
    assert np.array_equal(np.array(kept["probabilities"]), np.array(default["probabilities"]))


def test_cpu_training_keeps_freed_memory(monkeypatch):
    calls = []
    monkeypatch.setattr("enkcvs.training.device.keep_freed_memory", lambda: calls.append(True))
    recipe = Recipe(model="mlp", optimizer="sgd", lr=0.05, epochs=1, batch_size=8, bf16=False)
    x = np.zeros((8, 1, 4, 4), dtype=np.float32)
    train.train_model(recipe=recipe, x=x, targets=np.eye(2, dtype=np.float32)[[0, 1] * 4], seed=0,
                      device=torch.device("cpu"))
    assert calls == [True]


def test_opting_out_or_another_libc_leaves_malloc_alone(monkeypatch):
    allocator.keep_freed_memory.cache_clear()
    monkeypatch.setattr(allocator.ctypes, "CDLL", lambda name: pytest.fail("mallopt must not be called"))
    monkeypatch.setenv("ENKCVS_MALLOC", "default")
    assert allocator.keep_freed_memory() is False
    allocator.keep_freed_memory.cache_clear()
    monkeypatch.delenv("ENKCVS_MALLOC")
    monkeypatch.setattr(allocator.os, "confstr", lambda name: None)  # e.g. musl: no such name
    assert allocator.keep_freed_memory() is False
    allocator.keep_freed_memory.cache_clear()
