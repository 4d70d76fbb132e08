"""A real Spark Connect server on 127.0.0.1, started from the installed pyspark, for the tests.

    with connect_server(tmp_dir) as server:
        server.url        sc://127.0.0.1:<free port>
        server.session()  a remote SparkSession on it

The server is `bin/spark-submit --class org.apache.spark.sql.connect.service.SparkConnectServer`
(what `sbin/start-connect-server.sh` runs, without the daemon wrapper, so that the process
is ours) on master local[2], in its own process group: the group is killed when the block
ends, however it ends, and the Python workers go with it. Its log is `connect.log` in the
folder. Like `standalone.py`, it needs nothing outside the installed pyspark (its jars
hold `spark-connect_2.13-*.jar`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Iterator

from tests.jvm import QUICK_JIT
from tests.standalone import SPARK_HOME, free_port

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
START_TIMEOUT_S = 90


@dataclass
class Server:
    url: str
    port: int
    folder: str
    process: subprocess.Popen

    @property
    def log(self) -> str:
        return os.path.join(self.folder, "connect.log")

    def log_tail(self, chars: int = 3000) -> str:
        with open(self.log, errors="replace") as fh:
            return fh.read()[-chars:]

    def session(self):
        """A remote session on the server. Built with the Connect builder itself: PySpark's
        generic builder refuses a remote session in a process that already has a classic
        SparkContext (the suite's own `spark` fixture)."""
        from pyspark.sql.connect.session import SparkSession as RemoteSparkSession

        return RemoteSparkSession.builder.remote(self.url).getOrCreate()


def _conf(port: int) -> dict[str, str]:
    return {
        "spark.connect.grpc.binding.port": str(port),
        "spark.connect.grpc.binding.address": "127.0.0.1",
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "2",  # one task per core of local[2]: tiny test data
        "spark.default.parallelism": "2",
        "spark.sql.session.timeZone": "UTC",
        "spark.python.worker.reuse": "true",
        "spark.driver.memory": "1g",
        "spark.driver.extraJavaOptions": QUICK_JIT,  # tests/jvm.py
    }


def _env(folder: str, python: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYSPARK_DRIVER_PYTHON", "SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED")}
    env.update({
        "SPARK_HOME": SPARK_HOME,
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOCAL_DIRS": os.path.join(folder, "local"),
        "PYSPARK_PYTHON": python,  # the workers' Python
        "SPARK_CONNECT_MODE": "0",  # as start-connect-server.sh: the server itself is classic Spark
    })
    return env


def start(folder: str, python: str = sys.executable) -> Server:
    """The server, listening; its Python workers run `python` (this venv's: it has pyarrow)."""
    os.makedirs(os.path.join(folder, "local"), exist_ok=True)
    port = free_port()
    args = [os.path.join(SPARK_HOME, "bin", "spark-submit"), "--class", SERVER_CLASS, "--master", "local[2]",
            "--name", "udflow-tests-connect"]
    for key, value in _conf(port).items():
        args += ["--conf", f"{key}={value}"]
    with open(os.path.join(folder, "connect.log"), "w") as log:
        process = subprocess.Popen(
            args, stdout=log, stderr=subprocess.STDOUT, env=_env(folder, python), cwd=folder,
            start_new_session=True,  # its own process group: the JVM and its Python workers die with it
        )
    server = Server(f"sc://127.0.0.1:{port}", port, folder, process)
    try:
        _wait_for(server)
    except BaseException:
        stop(server)
        raise
    return server


def _wait_for(server: Server) -> None:
    """Until the server accepts a TCP connection on its port (the gRPC service is bound last)."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"the Spark Connect server exited with {server.process.returncode}:\n{server.log_tail()}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", server.port), timeout=1):
            return
        time.sleep(0.3)
    raise RuntimeError(f"the Spark Connect server did not listen on port {server.port} within "
                       f"{START_TIMEOUT_S} s:\n{server.log_tail()}")


def stop(server: Server) -> None:
    """Kill the server's process group: TERM, then KILL what is left."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(server.process.pid, signal.SIGTERM)
    try:
        server.process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        pass
    with contextlib.suppress(ProcessLookupError):
        os.killpg(server.process.pid, signal.SIGKILL)
    server.process.wait()


@contextlib.contextmanager
def connect_server(folder: str, python: str = sys.executable) -> Iterator[Server]:
    server = start(folder, python)
    try:
        yield server
    finally:
        stop(server)
