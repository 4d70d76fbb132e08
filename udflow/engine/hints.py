"""User hints about a function's behaviour, which take precedence over sampling.

    @uf.hint(selectivity=0.01, cost=2e-4)
    def is_gene_mention(r): ...

`selectivity` is the average number of records the function emits per call
(for a filter: the fraction of records it keeps; for a Reduce: records per
group); `cost` is its CPU time per call in seconds. Either may be omitted, and
then the sampled figure is used. The paper's Stratosphere optimizer read the
same two figures ("Average Number of Records Emitted per UDF Call", "CPU Cost
per UDF Call") from hand-written hints (section 7.1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

from udflow.errors import UdflowError

_ATTRIBUTE = "__udflow_hint__"


@dataclass(frozen=True)
class Hint:
    selectivity: Optional[float] = None
    cost: Optional[float] = None


def hint(*, selectivity: Optional[float] = None, cost: Optional[float] = None) -> Callable[[Any], Any]:
    """Decorator: attach a selectivity and/or a CPU cost per call (seconds) to a function."""
    for name, value in (("selectivity", selectivity), ("cost", cost)):
        if value is not None and (not isinstance(value, (int, float)) or value < 0):
            raise UdflowError(f"uf.hint: {name} must be a number >= 0, got {value!r}")
    given = Hint(None if selectivity is None else float(selectivity), None if cost is None else float(cost))

    def attach(fn: Any) -> Any:
        if not callable(fn):
            raise UdflowError(f"uf.hint decorates a function, got {type(fn).__name__} {fn!r}")
        try:
            setattr(fn, _ATTRIBUTE, given)
        except (AttributeError, TypeError):
            raise UdflowError(
                f"uf.hint: cannot attach a hint to {fn!r} (no attributes); wrap it in a def"
            ) from None
        return fn

    return attach


def hint_of(fn: Any) -> Hint:
    """The hint attached to `fn` (also through functools.partial), or an empty one."""
    found = getattr(fn, _ATTRIBUTE, None)
    if found is None and hasattr(fn, "func"):
        found = getattr(fn.func, _ATTRIBUTE, None)
    return found if isinstance(found, Hint) else Hint()
