"""A real Spark standalone cluster on 127.0.0.1, for the tests and `bench/cluster.py`.

    with standalone_cluster(tmp_dir, workers=2) as cluster:
        cluster.master_url     spark://127.0.0.1:<free port>
        cluster.python         the workers' interpreter: it has pyarrow, pandas and numpy,
                               and no udflow
        cluster.session_conf   the settings a driver needs to run on it

The master and the workers are started from the installed pyspark
(`bin/spark-class org.apache.spark.deploy.master.Master` / `...worker.Worker`),
each in its own process group, and the whole group is killed when the block
ends, however it ends: the executors and their Python workers go with their
worker. The workers' interpreter is a bare virtualenv made in the temporary
folder whose only packages are links to the driver's pyarrow, pandas and numpy
(no download, nothing installed outside the folder).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Iterator

import pyspark

from tests.jvm import QUICK_JIT

SPARK_HOME = os.path.dirname(os.path.abspath(pyspark.__file__))
# What PySpark's Arrow path needs on an executor, linked from the driver's site-packages.
WORKER_PACKAGES = ("pyarrow", "numpy", "numpy.libs", "pandas", "pandas.libs", "dateutil", "pytz", "tzdata", "six.py")
START_TIMEOUT_S = 90


@dataclass
class Cluster:
    master_url: str
    python: str
    folder: str
    processes: list = field(default_factory=list)

    def session_conf(self, cores: int = 2) -> dict[str, str]:
        return {
            "spark.pyspark.python": self.python,
            "spark.executor.memory": "512m",
            "spark.executor.cores": "1",
            "spark.cores.max": str(cores),
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.sql.session.timeZone": "UTC",
            "spark.python.worker.reuse": "true",
            "spark.sql.shuffle.partitions": "4",
            "spark.default.parallelism": "4",
            "spark.driver.extraJavaOptions": QUICK_JIT,  # tests/jvm.py
            "spark.executor.extraJavaOptions": QUICK_JIT,
        }


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bare_python(folder: str) -> str:
    """A virtualenv without pip and without udflow, with pyarrow, pandas and numpy linked in."""
    env_dir = os.path.join(folder, "worker-python")
    subprocess.run([_base_python(), "-m", "venv", "--without-pip", env_dir], check=True)
    deps = os.path.join(folder, "worker-packages")
    os.makedirs(deps)
    site_packages = os.path.dirname(os.path.dirname(os.path.abspath(__import__("pyarrow").__file__)))
    for name in WORKER_PACKAGES:
        if os.path.exists(os.path.join(site_packages, name)):
            os.symlink(os.path.join(site_packages, name), os.path.join(deps, name))
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    with open(os.path.join(env_dir, "lib", version, "site-packages", "worker_packages.pth"), "w") as fh:
        fh.write(deps + "\n")
    return os.path.join(env_dir, "bin", "python")


def _base_python() -> str:
    """The interpreter the driver's virtualenv was made from (a venv of a venv keeps its packages out)."""
    candidate = os.path.join(sys.base_prefix, "bin", f"python{sys.version_info[0]}.{sys.version_info[1]}")
    return candidate if os.path.exists(candidate) else sys.executable


def _clean_env(folder: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYSPARK_PYTHON", "VIRTUAL_ENV", "PYSPARK_DRIVER_PYTHON")}
    env.update({
        "SPARK_HOME": SPARK_HOME,
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOCAL_DIRS": os.path.join(folder, "local"),
        "SPARK_DAEMON_MEMORY": "512m",
        "SPARK_DAEMON_JAVA_OPTS": QUICK_JIT,  # the master's and workers' JVMs (tests/jvm.py)
    })
    return env


def _start(cluster: Cluster, name: str, args: list[str]) -> subprocess.Popen:
    log = open(os.path.join(cluster.folder, f"{name}.log"), "w")
    proc = subprocess.Popen(
        [os.path.join(SPARK_HOME, "bin", "spark-class"), *args],
        stdout=log, stderr=subprocess.STDOUT, env=_clean_env(cluster.folder),
        start_new_session=True,  # its own process group: executors and Python workers die with it
    )
    log.close()
    cluster.processes.append(proc)
    return proc


def _wait_for(cluster: Cluster, name: str, text: str) -> None:
    path = os.path.join(cluster.folder, f"{name}.log")
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        with open(path) as fh:
            if text in fh.read():
                return
        if any(p.poll() is not None for p in cluster.processes):
            break
        time.sleep(0.5)
    with open(path) as fh:
        tail = fh.read()[-3000:]
    raise RuntimeError(f"the cluster's {name} did not start ({text!r} not seen):\n{tail}")


def start(folder: str, workers: int = 2, cores: int = 1, memory: str = "1g") -> Cluster:
    os.makedirs(os.path.join(folder, "local"), exist_ok=True)
    port = free_port()
    cluster = Cluster(f"spark://127.0.0.1:{port}", bare_python(folder), folder)
    try:
        _start(cluster, "master", ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                   "--port", str(port), "--webui-port", str(free_port())])
        _wait_for(cluster, "master", "I have been elected leader")
        for i in range(workers):
            work = os.path.join(folder, f"work-{i}")
            _start(cluster, f"worker-{i}", [
                "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--port", str(free_port()),
                "--webui-port", str(free_port()), "--cores", str(cores), "--memory", memory,
                "--work-dir", work, cluster.master_url,
            ])
        for i in range(workers):
            _wait_for(cluster, f"worker-{i}", "Successfully registered with master")
    except BaseException:
        stop(cluster)
        raise
    return cluster


def stop(cluster: Cluster) -> None:
    """Kill every process group of the cluster: TERM, then KILL what is left."""
    for proc in cluster.processes:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + 20
    for proc in cluster.processes:
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def leftover_processes(cluster: Cluster) -> list[str]:
    """Command lines of live processes in the cluster's process groups or naming its folder."""
    groups = {proc.pid for proc in cluster.processes}
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                cmdline = fh.read().replace(b"\0", b" ").decode(errors="replace")
            with open(f"/proc/{pid}/stat") as fh:
                state = fh.read().rsplit(")", 1)[1].split()
            if state[0] == "Z":
                continue  # a zombie is no process any more
            if int(state[2]) in groups or cluster.folder in cmdline:
                found.append(f"{pid}: {cmdline[:200]}")
        except (OSError, IndexError, ValueError):
            continue
    return found


@contextlib.contextmanager
def standalone_cluster(folder: str, workers: int = 2, cores: int = 1, memory: str = "1g") -> Iterator[Cluster]:
    cluster = start(folder, workers, cores, memory)
    try:
        yield cluster
    finally:
        stop(cluster)
