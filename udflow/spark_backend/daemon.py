"""The Python workers' daemon of udflow's embedded session: PySpark's own, quiet where a
worker's output is no longer wanted.

A sample (`limit(n)`) stops reading a Python function's output once it has its rows, and
the JVM closes the worker's socket; PySpark's daemon then prints the worker's
`BrokenPipeError` traceback on the terminal, once per worker, though nothing failed. A
socket the JVM opens and closes before its handshake (a task cancelled, the session
stopping) prints an `EOFError` the same way. This module runs `pyspark.daemon` with its
`worker` wrapped: a worker whose peer went away ends quietly, as a worker that finished
does. Any other error is PySpark's to report (a worker's own errors inside a task go to
the JVM, not through here).

Set as `spark.python.daemon.module` by `session.get_session` for the sessions udflow
starts itself. It imports nothing but PySpark's daemon: the daemon forks its workers, and
must not start threads (pyarrow, a JVM gateway) before it does.
"""

import pyspark.daemon as pyspark_daemon

_pyspark_worker = pyspark_daemon.worker
GONE = (BrokenPipeError, ConnectionResetError, EOFError)


def worker(sock, authenticated):
    try:
        return _pyspark_worker(sock, authenticated)
    except GONE:
        return 1  # not 0: the daemon then closes this worker's socket instead of reusing it


if __name__ == "__main__":
    pyspark_daemon.worker = worker
    pyspark_daemon.manager()
