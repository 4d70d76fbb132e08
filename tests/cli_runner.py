"""The command line as the tests run it: in a process of its own, as a user runs it, or in
this process on the suite's SparkSession (`in_process`), which spares a Spark command a
JVM of its own, started cold, for each test (PySpark allows one SparkContext per process:
the command's `getOrCreate` finds the suite's)."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys

from tests.conftest import ROOT

# what the command may set on the session it finds, restored after it (the suite's settings)
RESTORED = ("spark.sql.shuffle.partitions", "spark.sql.session.timeZone", "spark.sql.ansi.enabled")


def udflow(*args: str, cwd=ROOT, timeout: float = 300) -> subprocess.CompletedProcess:
    """`python -m udflow ARGS` in the repository, as a user would run it."""
    return subprocess.run([sys.executable, "-m", "udflow", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout)


def in_process(spark, *args: str, cwd=ROOT) -> subprocess.CompletedProcess:
    """`udflow ARGS` through `udflow.cli.main` in this process, on `spark` (the suite's session),
    with what it printed and its exit code as `udflow` returns them."""
    from udflow import cli

    settings = {key: spark.conf.get(key, None) for key in RESTORED}
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    try:
        os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main(list(args))
    finally:
        os.chdir(here)
        for key, value in settings.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)
    return subprocess.CompletedProcess(["udflow", *args], code, out.getvalue(), err.getvalue())
