"""When is one plan estimated better than another? The cost model's resolution, and ties.

Estimated costs are sums and products of floats: the same plan costed through
another order of its operators differs in the last bits, and two plans that put
an operator in places the model cannot tell apart (a filter below or above a
broadcast join's streamed side, a star's dimensions in any order) get costs
equal up to rounding. Such differences are not estimates of anything, nor are
differences within the estimates' own error, so

    better(a, b)   a is estimated cheaper than b by more than RESOLUTION of b

and every search mode ranks and chooses with it:

- a plan's rank is 1 + the number of plans estimated *better* than it, so every plan
  within the resolution of the cheapest ranks #1 (the plan as written among them);
- the chosen plan is, among the plans that rank #1, the one with the fewest rewrites
  from the plan as written (the certificates explain lists), then the cheaper: a tie
  keeps the plan as written, and a plan is never presented as better than the plan as
  written unless it is estimated better.

RESOLUTION = 0.10 (relative): the error the estimates have shown as speed-ups
(`python -m bench.estimates --speedup`, docs/optimizer.md): with every operator's rows
estimated within a few percent, a plan estimated 7 % cheaper (Q15's Reduce below its
join) ran 17 % slower, and one estimated 2.75x faster (clickstream) ran 1.56x faster. A
difference below a tenth is within what the model cannot tell (the fixed cost of a job,
the streamed side of a broadcast join, load), so such plans tie and the plan with fewer
rewrites is kept: Q7 at TPC-H 0.01, whose cheapest plan was estimated 1.001x cheaper
than the plan as written and took 6 rewrites, keeps the plan as written. Rounding
(~1e-15 per operation) is far below it. `optimize(resolution=...)` sets another, e.g.
1e-6 to choose by the estimates alone.
"""

from __future__ import annotations

RESOLUTION = 0.10


def better(a: float, b: float, resolution: float = RESOLUTION) -> bool:
    """Whether cost `a` is estimated cheaper than cost `b` (beyond the resolution)."""
    return a < b - abs(b) * resolution


def threshold(b: float, resolution: float = RESOLUTION) -> float:
    """The costs below this one are estimated better than `b`."""
    return b - abs(b) * resolution
