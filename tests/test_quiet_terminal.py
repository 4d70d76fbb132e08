"""A normal run prints nothing on stderr (issue 31, item 2), and a failing one only its error: no worker-daemon tracebacks
(`BrokenPipeError` when a sample stops reading a Python function's output), no executor
ERROR lines, no Spark start-up chatter, no progress bars.

The program runs in a fresh interpreter with udflow's embedded session, as a user's would.
The one line left is the JVM's own notice that Spark's launcher adds an incubator module
(`--add-modules=jdk.incubator.vector`, hard-wired in Spark's launcher), which no setting of
Spark's or udflow's reaches.
"""

import subprocess
import sys
import textwrap

import pytest

JVM_NOTICE = "WARNING: Using incubator modules: jdk.incubator.vector"

PROGRAM = textwrap.dedent('''
    import udflow as uf

    rows = [{"k": i % 50, "v": i, "s": f"x{i}" if i % 3 else None} for i in range(60000)]

    def parse(r):
        try:
            n = int(r["s"][1:])
        except (TypeError, ValueError):
            n = -1
        return {**r, "n": n, "tag": f"{r['k']}-{n}"}

    def keep(r):
        return r["n"] > 10

    def total(rows):
        rows = list(rows)
        yield {"k": rows[0]["k"], "n": len(rows), "m": sum(r["v"] for r in rows) / len(rows)}

    flow = uf.source("t", rows=rows).map(parse).filter(keep).reduce(["k"], total)
    print(len(flow.collect()))
    print(uf.optimize(flow).best.to_spark().count())

    def bad(r):
        return {**r, "b": 1 / (r["a"] - 3)}

    try:
        uf.source("t", rows=[{"a": i} for i in range(5)]).map(bad).collect()
    except uf.UdflowError as exc:
        print("CAUGHT", type(exc).__name__, exc)
''')


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    """The program run once, in a fresh process, so that its JVM's stderr is the one observed
    (the shared session's JVM writes to the stderr the test run started with)."""
    script = tmp_path_factory.mktemp("quiet") / "job.py"
    script.write_text(PROGRAM)
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600,
                          cwd=script.parent)


@pytest.mark.slow
def test_a_flow_with_python_functions_on_spark_prints_nothing_on_stderr(job):
    assert job.returncode == 0, job.stderr
    assert job.stdout.split()[:2] == ["50", "50"]
    noise = [line for line in job.stderr.splitlines() if line.strip() and line.strip() != JVM_NOTICE]
    assert not noise, "\n".join(noise[:20])


@pytest.mark.slow
def test_spark_prints_no_executor_error_lines_before_the_udf_runtime_error(job):
    caught = next((line for line in job.stdout.splitlines() if line.startswith("CAUGHT")), "")
    assert caught.startswith("CAUGHT UdfRuntimeError Map(bad): bad"), job.stdout + job.stderr[-3000:]
    line = next(n for n, text in enumerate(PROGRAM.splitlines(), 1) if "1 / (r" in text)
    assert "ZeroDivisionError" in caught and f"(line {line})" in caught, caught
    assert " ERROR " not in job.stderr, job.stderr[-3000:]
    assert "<<udflow:" not in job.stderr and "MarkedFailure" not in job.stderr
    assert "Traceback" not in job.stderr


def test_a_worker_whose_socket_closes_before_its_handshake_ends_quietly(capsys, monkeypatch):
    """The JVM may open a worker's socket and close it before sending the secret (a task
    cancelled, the session stopping): PySpark's worker raises EOFError reading it, which the
    daemon would print. udflow's daemon ends that worker quietly, not as a finished one."""
    import socket

    from udflow.spark_backend import daemon

    monkeypatch.setenv("PYTHON_WORKER_FACTORY_SECRET", "s3cret")
    ours, theirs = socket.socketpair()
    theirs.close()  # the JVM went away before its handshake
    try:
        assert daemon.worker(ours, False) == 1
    finally:
        ours.close()
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""
