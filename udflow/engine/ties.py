"""When is one plan estimated better than another? The cost model's resolution, and ties.

Estimated costs are sums and products of floats: the same plan costed through
another order of its operators differs in the last bits, and two plans that put
an operator in places the model cannot tell apart (a filter below or above a
broadcast join's streamed side, a star's dimensions in any order) get costs
equal up to rounding. Such differences are not estimates of anything, so

    better(a, b)   a is estimated cheaper than b by more than RESOLUTION of b

and every search mode ranks and chooses with it:

- a plan's rank is 1 + the number of plans estimated *better* than it, so every plan
  within the resolution of the cheapest ranks #1 (the plan as written among them);
- the chosen plan is, among the plans that rank #1, the one with the fewest rewrites
  from the plan as written (the certificates explain lists), then the cheaper: a tie
  keeps the plan as written, and a plan is never presented as better than the plan as
  written unless it is estimated better.

RESOLUTION = 1e-6 (relative). Rounding is ~1e-15 per operation; the smallest real
difference between two plans on the flows we measured (Q7, Q15, the generated 4- to
8-join flows, the flows with a Cross and a CoGroup) was 2.6e-4 (a filter one join lower
in a chain) before every exchange cost a fixed `physical.STAGE`; on the generated flows,
whose records are few, the stages now dominate and such a difference can fall to 1e-7,
below the resolution: those plans tie. `optimize(resolution=...)` widens it, e.g. to
the error one trusts the estimates to.
"""

from __future__ import annotations

RESOLUTION = 1e-6


def better(a: float, b: float, resolution: float = RESOLUTION) -> bool:
    """Whether cost `a` is estimated cheaper than cost `b` (beyond the resolution)."""
    return a < b - abs(b) * resolution


def threshold(b: float, resolution: float = RESOLUTION) -> float:
    """The costs below this one are estimated better than `b`."""
    return b - abs(b) * resolution
