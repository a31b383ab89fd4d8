"""A time limit for a run: a command run until a deadline, then stopped whole, so that it can be started again.

``python -m enkcvs.runs run --time-limit 2h`` stops the workflow after two hours, as a cluster job whose
time is up or a laptop that must be closed would: Snakemake and every job it started get SIGTERM, each training job
keeping the checkpoint of its last whole epoch (:mod:`enkcvs.training.resume`), and the same command started again
goes on from there.
"""

import contextlib
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence

#: The exit status of a run stopped at its time limit, as ``timeout`` (coreutils) gives it: a job script requeues
#: on it, and fails on anything else.
STOPPED_AT_LIMIT = 124
#: A duration with units, largest first (``2h``, ``1h30m``, ``90m``, ``45s``, ``1d12h``).
UNITS = re.compile(r"(?:(?P<d>\d+(?:\.\d+)?)d)?(?:(?P<h>\d+(?:\.\d+)?)h)?(?:(?P<m>\d+(?:\.\d+)?)m)?"
                   r"(?:(?P<s>\d+(?:\.\d+)?)s)?")
#: SLURM's ``--time`` forms with a colon or a day: ``minutes:seconds``, ``hours:minutes:seconds``,
#: ``days-hours[:minutes[:seconds]]``.
CLOCK = re.compile(r"(?:(?P<days>\d+)-)?(?P<fields>\d+(?::\d+){0,2})")
SECONDS = {"d": 86400, "h": 3600, "m": 60, "s": 1}


def parse_duration(text: str) -> float:
    """Seconds in ``text``: with units (``2h``, ``1h30m``, ``90m``, ``45s``, ``1d``), or as SLURM's ``--time``
    writes a limit with a colon or a day (``1:30:00``, ``90:00`` minutes and seconds, ``2-00:00:00``, ``2-12``). A
    bare number is refused, its unit being ambiguous (seconds here, minutes to SLURM). Raises ``ValueError`` for
    anything else or a duration of 0."""
    text = text.strip().lower()
    units, clock = UNITS.fullmatch(text), CLOCK.fullmatch(text)
    fields = [int(field) for field in clock["fields"].split(":")] if clock else []
    if units and text:
        seconds = sum(float(units[unit]) * SECONDS[unit] for unit in SECONDS if units[unit])
    elif clock and (clock["days"] is not None or len(fields) > 1):
        # SLURM: after a day the fields start at hours; without one, two fields are minutes and seconds
        scales = (3600, 60, 1) if clock["days"] is not None or len(fields) == 3 else (60, 1)
        seconds = int(clock["days"] or 0) * 86400 + sum(field * scale for field, scale in zip(fields, scales))
    else:
        raise ValueError(f"{text!r} is no duration: write e.g. 2h, 1h30m, 90m, 45s or 1:30:00 (a bare number has "
                         "no unit)")
    if seconds <= 0:
        raise ValueError(f"{text!r}: give a time limit above 0")
    return seconds


def run_until(command: Sequence[str], *, env: dict[str, str] | None = None, deadline: float | None = None,
              until: Callable[[], bool] | None = None, poll: float = 60.0, grace: float = 120.0) -> bool:
    """Run ``command`` to its end, or stop it when ``deadline`` (a :func:`time.monotonic` time) passes (a time
    limit: what the run finished can then be carried, :func:`enkcvs.continuing.carry.save_run`), or once ``until()`` holds
    (asked every ``poll`` seconds), so that the next command can take over.

    Stopping sends SIGTERM to the command's whole process group: Snakemake and every job it started, a training job
    keeping the epoch checkpoint of its last whole epoch (:mod:`enkcvs.training.resume`); SIGKILL follows after
    ``grace`` seconds. A SIGTERM or interrupt of this process stops it the same way before it is passed on. Returns
    True when the command ended by itself or was stopped because ``until()`` held, False when it was stopped at the
    deadline; raises ``subprocess.CalledProcessError`` when it failed by itself. Without a deadline or ``until`` it
    is ``subprocess.run``."""
    if deadline is None and until is None:
        subprocess.run(command, env=env, check=True)
        return True
    process = None
    try:
        with _sigterm_raises() as started:
            process = subprocess.Popen(command, env=env, start_new_session=True)  # its own group, to stop it whole
            started()  # a SIGTERM that came before it or while it started stops it now, known and whole
            outcome = _wait(process, deadline=deadline, until=until, poll=poll)
    except BaseException:  # an interrupt or SIGTERM here must not leave the run going on in the background
        if process is not None:
            _stop_group(process, grace=grace)
        raise
    if outcome != "ended":
        _stop_group(process, grace=grace)
        return outcome == "done"
    if process.returncode != 0:
        raise subprocess.CalledProcessError(process.returncode, list(command))
    return True


def _wait(process: subprocess.Popen, *, deadline: float | None, until: Callable[[], bool] | None,
          poll: float) -> str:
    """``"ended"`` when ``process`` ends by itself, ``"deadline"`` when ``deadline`` passes first, ``"done"`` when
    ``until()`` holds first."""
    while True:
        waits = [poll] if until is not None else []
        if deadline is not None:
            waits.append(max(deadline - time.monotonic(), 0.0))
        try:
            process.wait(timeout=min(waits))
            return "ended"
        except subprocess.TimeoutExpired:
            if deadline is not None and time.monotonic() >= deadline:
                return "deadline"
            if until is not None and until():
                return "done"


@contextlib.contextmanager
def _sigterm_raises() -> Iterator[Callable[[], None]]:
    """SIGTERM to this process raises SystemExit while inside (so that a ``kill`` of the caller stops what it
    started in its own process group too), where signals can be handled (the main thread). Until the yielded
    ``started()`` is called, a SIGTERM is held rather than raised: one arriving while ``subprocess.Popen`` has not yet
    returned would leave its process unknown to the caller, and running; ``started()`` raises the held one."""
    if threading.current_thread() is not threading.main_thread():
        yield lambda: None
        return
    held: list[int] = []  # signals that came before started()
    starting = True

    def exit_on(signum: int, _frame) -> None:
        if starting:
            held.append(signum)
            return
        raise SystemExit(128 + signum)

    def started() -> None:
        nonlocal starting
        starting = False
        if held:
            raise SystemExit(128 + held[0])

    previous = signal.signal(signal.SIGTERM, exit_on)
    try:
        yield started
    finally:
        signal.signal(signal.SIGTERM, previous)


def _stop_group(process: subprocess.Popen, *, grace: float) -> None:
    """SIGTERM to the process group of ``process``, SIGKILL to whatever of it is left after ``grace`` seconds."""
    with contextlib.suppress(ProcessLookupError):  # it has ended already
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass
    with contextlib.suppress(ProcessLookupError):  # whatever of the group outlived Snakemake, or ignored SIGTERM
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()

