"""How long the analysis of one function takes, averaged over the analysis corpus.

Cold cache: the result cache and the per-file parse cache are cleared before
each round, so every function is analysed from its source (each corpus file is
parsed once per round, as in a fresh process). The paper calls the overhead of
its analysis "virtually zero"; the target here is under 5 ms per function.

    python -m bench.analysis_speed [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import time


def measure(rounds: int = 5) -> dict:
    from tests.analysis_corpus import entries
    from udflow.analysis import analyze, clear_cache

    corpus = entries()
    per_round = []
    for _ in range(rounds):
        clear_cache()
        start = time.perf_counter()
        for e in corpus:
            analyze(e.fn, e.spec.input_fields(), e.spec.kind)
        per_round.append((time.perf_counter() - start) / len(corpus) * 1000)
    warm_start = time.perf_counter()  # the cache is full from the last round
    for e in corpus:
        analyze(e.fn, e.spec.input_fields(), e.spec.kind)
    cached = (time.perf_counter() - warm_start) / len(corpus) * 1000
    return {
        "functions": len(corpus),
        "mean_ms": statistics.mean(per_round),
        "best_ms": min(per_round),
        "cached_ms": cached,
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    m = measure(args.rounds)
    print(f"analysis of {m['functions']} corpus functions, cold cache, {args.rounds} rounds")
    print(f"mean {m['mean_ms']:.3f} ms per function (best round {m['best_ms']:.3f} ms); target < 5 ms")
    print(f"cached lookup {m['cached_ms'] * 1000:.1f} us per function "
          f"({m['mean_ms'] / max(m['cached_ms'], 1e-9):.0f}x faster than cold)")


if __name__ == "__main__":
    main()
