"""What every workflow script does around its one library call (standard library only, so it costs no import time).

A Snakemake job is one Python process. Its stderr and log records go to the job's log file, line-buffered so that
``tail -f`` follows a running job. A call that raises leaves the traceback in the log and a non-zero exit status.
"""

import contextlib
import logging
import sys
from collections.abc import Iterator


@contextlib.contextmanager
def logged_job(log: str) -> Iterator[None]:
    """Send stderr and ``logging`` (INFO, timestamped) to the file ``log`` for the block."""
    sys.stderr = open(log, "w", buffering=1)
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(message)s", force=True)
    yield
