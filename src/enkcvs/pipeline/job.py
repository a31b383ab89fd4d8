"""What every workflow script does around its one library call (standard library only, so it costs no import time).

A Snakemake job is one Python process. Its stderr and log records go to the job's log file, line-buffered so that
``tail -f`` follows a running job. Once the call has returned, every output is written and closed (atomically, see
:func:`enkcvs.io.atomic_path`), so the process runs its exit handlers (``atexit``: logging's flush, a coverage or
import probe) and ends without the interpreter's teardown: clearing every module after ``import torch`` costs
~0.4 s, about a third of ``import torch`` itself, in each of the hundreds of training jobs of a run
(benchmarks/README.md, per-job overhead). A call that raises leaves through the usual path: the traceback goes to
the log and the exit status is non-zero.
"""

import atexit
import contextlib
import logging
import os
import sys
from collections.abc import Iterator


@contextlib.contextmanager
def logged_job(log: str) -> Iterator[None]:
    """Send stderr and ``logging`` (INFO, timestamped) to the file ``log``; when the block succeeds, run the exit
    handlers, flush and end the process with status 0 without the interpreter's teardown."""
    sys.stderr = open(log, "w", buffering=1)
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(message)s", force=True)
    yield
    atexit._run_exitfuncs()  # what a normal exit runs first (CPython's own call); os._exit skips it
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
