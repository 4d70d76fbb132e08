"""The field-flow check: every alternative the search keeps, re-derived bottom up.

The rules decide each exchange locally, from facts taken where the plan as written puts
each operator. `fieldflow` checks a whole alternative against the plan as written, sharing
no code with the rules (as `udflow.rules.check` does for certificates): for every place of
both plans, which fields a record may carry, whether surely, and which operator gave each
its value (`state`); the output of each operator follows from its function's analysis at
that place (`operators`); and the alternative is refused where an operator reads a field
from elsewhere, a concatenation meets a field on both inputs, or the output differs
(`check`). An operator the analysis cannot read may carry any field: nothing whose fields
may collide with it passes.
"""

from udflow.fieldflow.check import FieldFlow, FieldFlowVerdict, Problem

__all__ = ["FieldFlow", "FieldFlowVerdict", "Problem"]
