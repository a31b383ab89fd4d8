"""The workflow scripts' job wrapper: the log gets everything, and a failure ends the process with the traceback in
the log and a non-zero status."""

import subprocess
import sys
import textwrap


def run_job(tmp_path, body: str) -> tuple[subprocess.CompletedProcess, str]:
    """Run ``body`` inside ``logged_job`` in a fresh interpreter (as a Snakemake script does); its result and log."""
    log = tmp_path / "job.log"
    script = textwrap.dedent(f"""
        import atexit, logging, sys
        from enkcvs.pipeline.job import logged_job

        atexit.register(lambda: print(" exit handler ran", file=sys.__stdout__))
        with logged_job({str(log)!r}):
            logging.getLogger("enkcvs.pipeline.steps.folds").info("record from the library")
            print("printed to stderr", file=sys.stderr)
            sys.stdout.write("buffered stdout without a newline")
        """) + textwrap.indent(textwrap.dedent(body), "    ")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    return done, log.read_text()


def test_success_logs_everything_and_exits_zero(tmp_path):
    done, log = run_job(tmp_path, "")
    assert done.returncode == 0
    assert "record from the library" in log and "printed to stderr" in log
    assert log.splitlines()[0].endswith(" record from the library")  # timestamped
    assert done.stdout == "buffered stdout without a newline exit handler ran\n"


def test_failure_logs_the_traceback_and_exits_non_zero(tmp_path):
    done, log = run_job(tmp_path, 'raise ValueError("bad input: fix it")')
    assert done.returncode == 1
    assert "ValueError: bad input: fix it" in log and "record from the library" in log
    assert done.stdout.endswith(" exit handler ran\n")
