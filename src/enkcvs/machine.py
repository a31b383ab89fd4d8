"""The CPU a run or a timing belongs to: its model name and the instruction sets that decide training speed and
fp32/bf16 arithmetic (benchmarks/README.md). Standard library only."""

import os
import platform
import re
import shutil
import subprocess
from pathlib import Path

#: Instruction sets that decide CPU training speed and fp32/bf16 arithmetic.
CPU_FLAGS = ("avx2", "avx512f", "avx512_bf16", "amx_bf16")
#: Environment variables that cap the instruction sets PyTorch's kernels use (ATen, oneDNN, MKL): a run under them
#: computes as an older CPU would, so one machine can measure how results move between CPUs.
ISA_VARIABLES = ("ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "MKL_ENABLE_INSTRUCTIONS")


def _cpuinfo() -> str:
    path = Path("/proc/cpuinfo")
    return path.read_text() if path.exists() else ""


def cpu_model() -> str:
    """The CPU's model name ("unknown" where the system does not say)."""
    found = re.search(r"^model name\s*:\s*(.+)$", _cpuinfo(), re.MULTILINE)
    return found.group(1).strip() if found else platform.processor() or "unknown"


def cpu_flags() -> list[str]:
    """Which of :data:`CPU_FLAGS` the CPU has, in that order."""
    found = re.search(r"^flags\s*:\s*(.+)$", _cpuinfo(), re.MULTILINE)
    present = set(found.group(1).split()) if found else set()
    return [flag for flag in CPU_FLAGS if flag in present]


def instruction_set_limits() -> dict[str, str]:
    """The :data:`ISA_VARIABLES` set in this process's environment, with their values."""
    return {key: os.environ[key] for key in ISA_VARIABLES if key in os.environ}


def gpu_names() -> list[str]:
    """The NVIDIA GPUs ``nvidia-smi`` lists, by model name (none where it is absent or fails)."""
    if shutil.which("nvidia-smi") is None:
        return []
    try:
        listed = subprocess.run(
            ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [line.strip() for line in listed.splitlines() if line.strip()]


def machine_description() -> dict:
    """The machine a run is recorded on: CPU model, logical cores, memory, the instruction sets in
    :data:`CPU_FLAGS` it has, the operating system, and its GPUs (``gpus``, only where it has some: a run's training
    jobs use the first when present)."""
    memory = re.search(
        r"^MemTotal:\s*(\d+) kB",
        Path("/proc/meminfo").read_text() if Path("/proc/meminfo").exists() else "",
        re.MULTILINE,
    )
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "memory_gib": round(int(memory.group(1)) / 2**20, 1) if memory else None,
        "cpu_flags": cpu_flags(),
        "system": platform.platform(),
        **({"gpus": gpus} if (gpus := gpu_names()) else {}),
    }
