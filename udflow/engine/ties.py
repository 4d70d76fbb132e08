"""When is one plan estimated better than another? The cost model's resolution, and ties.

Estimated costs are sums and products of estimates: the rows each operator gives,
extrapolated from a sample, and the seconds each row costs. Two plans whose costs
differ by less than the estimates' own error are not told apart by them (TPC-H Q7 at
scale 0.01: a plan 6 rewrites away, estimated 0.08 % cheaper), so

    better(a, b)   a is estimated cheaper than b by more than RESOLUTION of b

and every search mode ranks and chooses with it:

- a plan's rank is 1 + the number of plans estimated *better* than it, so every plan
  within the resolution of the cheapest ranks #1 (the plan as written among them);
- the chosen plan is, among the plans that rank #1, the one with the fewest rewrites
  from the plan as written (the certificates explain lists), then the cheaper: a tie
  keeps the plan as written, and a plan is never presented as better than the plan as
  written unless it is estimated better by more than the estimates' error.

RESOLUTION = 0.04 (relative): the error the estimates have shown. Over the 52
operators of the eight pipelines of `bench/estimates.py` (TPC-H Q7 and Q15, clickstream
with and without its URL parsing, text mining, ratings, taxi, documents, each at a
scale where its large sources exceed the sample), the median q-error of the estimated
rows is 1.04 (docs/optimizer.md, "How close the estimates are"). The gains the estimates
do see are far above it (clickstream 2.75x, text mining 9.75x); Q7's 0.08 % and Q15's
0.16 % at scale 0.01 are ties. `optimize(resolution=...)` sets another tolerance
(`resolution=1e-6` takes any difference beyond rounding).
"""

from __future__ import annotations

RESOLUTION = 0.04


def better(a: float, b: float, resolution: float = RESOLUTION) -> bool:
    """Whether cost `a` is estimated cheaper than cost `b` (beyond the resolution)."""
    return a < b - abs(b) * resolution


def threshold(b: float, resolution: float = RESOLUTION) -> float:
    """The costs below this one are estimated better than `b`."""
    return b - abs(b) * resolution
