"""The Java options of the short-lived JVMs the tests start: the standalone cluster's master,
workers, driver and executors, and the Spark Connect server.

Only the quick JIT compiler (C1): each of these JVMs runs a few tiny queries, each planned
and compiled once, so the optimizing compiler's (C2) work is rarely paid back, and on two
cores its threads compete with the queries themselves (tests/test_cluster.py: 186 s with
both compilers, 88 s with C1 alone). The shared session of the whole run keeps both: over
half an hour of queries C2 pays for itself (with C1 alone the native tests took 10-20%
longer). It changes how fast the JVM's code runs, never what it computes."""

QUICK_JIT = "-XX:TieredStopAtLevel=1"
