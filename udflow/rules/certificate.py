"""What the rules hand to the search: exchanges with their certificates, and verdicts.

A `Certificate` is a self-contained permission: the rule, the operators (upper
first), every ground fact the rule used (the complete fact sets of the
operators involved, and the position facts: which subtree each side is and
where the touched attributes come from), the Z3 queries as SMT-LIB text with
their answers, and the plan before and after. `udflow.rules.check` re-derives
all of it from the flow and the analysis.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Optional

from udflow.plan import Node


@dataclass(frozen=True)
class Certificate:
    rule: str
    operators: tuple[str, ...]
    facts: tuple[str, ...]
    smt: tuple[tuple[str, str], ...]
    before: str
    after: str
    properties: str = "analysis"  # which properties the facts came from: "analysis" or "manual"

    def to_dict(self) -> dict:
        d = asdict(self)
        d["operators"] = list(self.operators)
        d["facts"] = list(self.facts)
        d["smt"] = [list(p) for p in self.smt]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Certificate":
        return cls(
            rule=d["rule"],
            operators=tuple(d["operators"]),
            facts=tuple(d["facts"]),
            smt=tuple((q, a) for q, a in d["smt"]),
            before=d["before"],
            after=d["after"],
            properties=d.get("properties", "analysis"),
        )

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1)


@dataclass(frozen=True)
class Exchange:
    rule: str
    before: Node
    after: Node
    certificate: Certificate


@dataclass(frozen=True)
class Reason:
    """Why a rule refused: the failed condition, on which attribute, with the source lines."""

    rule: str
    condition: str  # e.g. "roc: write-read", "kgp: card_reads", "impure", "touches other side"
    attribute: Optional[str]
    operators: tuple[str, ...]
    lines: tuple[tuple[str, int], ...] = ()  # (operator label, absolute line)
    detail: str = ""

    def __str__(self) -> str:
        where = ", ".join(f"{op} line {ln}" for op, ln in self.lines)
        attr = f" on {self.attribute}" if self.attribute else ""
        text = f"{self.rule}: {self.condition}{attr}"
        if self.detail:
            text += f" ({self.detail})"
        return text + (f" [{where}]" if where else "")


@dataclass(frozen=True)
class Verdict:
    """The answer of `why_not`: allowed (with certificates) or refused (with reasons)."""

    allowed: bool
    operators: tuple[str, str]
    certificates: tuple[Certificate, ...] = ()
    reasons: tuple[Reason, ...] = field(default=())

    @property
    def certificate(self) -> Optional[Certificate]:
        return self.certificates[0] if self.certificates else None

    def __str__(self) -> str:
        a, b = self.operators
        if self.allowed:
            rules = ", ".join(sorted({c.rule for c in self.certificates}))
            return f"{a} and {b} may be exchanged ({rules})"
        lines = [f"{a} and {b} may not be exchanged:"]
        lines += [f"  - {r}" for r in self.reasons] or ["  - no rule covers this pair of operators"]
        return "\n".join(lines)
