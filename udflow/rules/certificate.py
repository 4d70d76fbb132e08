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
from dataclasses import FrozenInstanceError, asdict, dataclass, field
from typing import Callable, Optional

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


class Exchange:
    """One valid rewrite: `rule` turns the subtree `before` into `after`, proved by `certificate`.

    Immutable. The certificate (every fact, both plans drawn, the SMT text) is
    what costs time, and a search meets thousands of exchanges but reports the
    certificates of a few: `RuleBook` passes `build` instead, and the
    certificate is built on first access (once; it is a pure function of the
    book and the move), so `ex.certificate` always works.
    """

    __slots__ = ("rule", "before", "after", "_certificate", "_build")

    def __init__(self, rule: str, before: Node, after: Node, certificate: Optional[Certificate] = None,
                 *, build: Optional[Callable[[], Certificate]] = None):
        if certificate is None and build is None:
            raise TypeError("Exchange needs a certificate or a way to build it")
        set_ = object.__setattr__
        set_(self, "rule", rule)
        set_(self, "before", before)
        set_(self, "after", after)
        set_(self, "_certificate", certificate)
        set_(self, "_build", build)

    @property
    def certificate(self) -> Certificate:
        cert = self._certificate
        if cert is None:
            cert = self._build()
            object.__setattr__(self, "_certificate", cert)
            object.__setattr__(self, "_build", None)
        return cert

    def __setattr__(self, name, value):
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name):
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def _key(self) -> tuple:
        return (self.rule, self.before, self.after, self.certificate)

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self is other or self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Exchange(rule={self.rule!r}, before={self.before!r}, after={self.after!r})"


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
