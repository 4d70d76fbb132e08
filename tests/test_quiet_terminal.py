"""A normal run prints nothing on stderr (issue 31, item 2): no worker-daemon tracebacks
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
''')


@pytest.mark.slow
def test_a_flow_with_python_functions_on_spark_prints_nothing_on_stderr(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(PROGRAM)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["50", "50"]
    noise = [line for line in done.stderr.splitlines() if line.strip() and line.strip() != JVM_NOTICE]
    assert not noise, "\n".join(noise[:20])
