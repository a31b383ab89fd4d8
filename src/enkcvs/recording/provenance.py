"""A recorded run's provenance read back: where recorded runs live, the config it ran with, its wall time."""

import json
from pathlib import Path

import yaml

#: Where recorded runs live, relative to the repository root.
RUN_HOME = "results/recorded"


def duration(seconds: float) -> str:
    """Seconds as the pages print a wall time: ``9.8 s``, ``6 min 40 s``, ``6 h 13 min``."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, seconds = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if hours else f"{minutes} min {seconds} s"


def recorded_config(run: Path) -> dict:
    """The config a recorded run ran with, as its provenance keeps it."""
    return yaml.safe_load(json.loads((run / "provenance.json").read_text())["config"])
