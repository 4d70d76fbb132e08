"""The Java options of every JVM the tests start (the shared session, the standalone cluster's
master, workers and executors, the Spark Connect server).

Only the quick JIT compiler (C1): the tests' queries are tiny and each is planned and
compiled once, so the optimizing compiler's (C2) work is rarely paid back, and on two cores
its threads compete with the queries themselves (test_native_bits and test_native_timedeltas
on a fresh JVM: 193 s with both compilers, 150 s with C1 alone). It changes how fast the
JVM's code runs, never what it computes; the embedded session of a user keeps both."""

QUICK_JIT = "-XX:TieredStopAtLevel=1"
