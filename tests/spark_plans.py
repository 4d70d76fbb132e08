"""Reading Spark's drawing of a physical plan in tests."""

from __future__ import annotations

import re


def union_sides(plan: str) -> tuple[str, str]:
    """The two inputs of a plan's first Union (whole-stage generated or not), as Spark draws
    them: `:-` the first, `+-` the last."""
    lines = plan.splitlines()
    start = next(k for k, line in enumerate(lines) if re.match(r"\s*(\*\(\d+\) )?Union", line)) + 1
    indent = len(lines[start]) - len(lines[start].lstrip())
    last = next(k for k in range(start + 1, len(lines)) if lines[k][indent:].startswith("+- "))
    return "\n".join(lines[start:last]), "\n".join(lines[last:])
