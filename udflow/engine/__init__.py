"""The optimizer: Algorithm 1's search with a memo table (full, pruned or greedy by the size of the
plan space), a sampled cost model, and `Optimized`.

    optimize(flow, properties="analysis", budget_s=None) -> Optimized   (see udflow.engine.optimize)
    hint(selectivity=, cost=)                               (see udflow.engine.hints)
"""

from udflow.engine.budget import Progress
from udflow.engine.hints import Hint, hint
from udflow.engine.optimize import optimize
from udflow.engine.optimized import Alternative, Alternatives, Optimized

__all__ = ["optimize", "hint", "Hint", "Optimized", "Alternative", "Alternatives", "Progress"]
