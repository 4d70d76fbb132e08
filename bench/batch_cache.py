"""The results cache of `udflow optimize`: a second run over an unchanged batch, against the first.

Runs `udflow optimize tests/pipelines --jobs 2` twice in fresh processes with
one empty cache folder, and prints both wall-clock times (the whole command,
interpreter start included) and their ratio. Target: the second run takes
under 10% of the first. The pipelines are the test batch (the paper's four
tasks, the custom-operator example, the generated ones and three broken
files). The second run is answered from the batch manifest and the results
cache (udflow.batch.manifest): no pipeline module is imported again.

    python -m bench.batch_cache [--jobs N] [PATH ...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed_run(paths: list[str], jobs: int, cache: str, out: str) -> tuple[float, dict]:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "udflow", "optimize", *paths, "--jobs", str(jobs), "--cache-dir", cache,
         "--json", out],
        cwd=ROOT, capture_output=True, text=True, timeout=1800,
    )
    seconds = time.perf_counter() - started
    with open(out) as fh:
        return seconds, json.load(fh)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", default=["tests/pipelines"])
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="udflow-bench-cache-") as tmp:
        cache = os.path.join(tmp, "cache")
        first, doc1 = timed_run(args.paths, args.jobs, cache, os.path.join(tmp, "first.json"))
        second, doc2 = timed_run(args.paths, args.jobs, cache, os.path.join(tmp, "second.json"))

    ok = [p for p in doc2["pipelines"] if p["status"] == "ok"]
    cached = sum(bool(p.get("cached")) for p in ok)
    optimizer = sum(p["seconds"] for p in doc1["pipelines"] if p["status"] == "ok")
    print(f"batch: {', '.join(args.paths)}: {len(doc1['pipelines'])} pipelines, "
          f"{len(ok)} optimized, {len(doc1['pipelines']) - len(ok)} failed")
    print(f"first run  (empty cache): {first:7.2f} s   (optimizer time summed over pipelines: {optimizer:.2f} s)")
    print(f"second run (cached)     : {second:7.2f} s   ({cached} of {len(ok)} results from the cache)")
    print(f"ratio second/first      : {second / first:7.1%}   (target < 10%)")


if __name__ == "__main__":
    main()
