"""A corpus of user functions with their expected properties, declared next to them.

Each module defines functions and a dict `EXPECTED` from function name to a
`Spec`. Field sets are written as space-separated names; binary kinds write
"left fields | right fields".

Ordinary functions (`category=None`) must come out exactly as declared.
Adversarial functions (`category="..."`) must come out impure, or, when the
truth is pure (`impure=False`), with sets that are supersets of the truth.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Optional

MODULES = (
    "paper",
    "ordinary_map",
    "ordinary_group",
    "ordinary_binary",
    "adversarial_state",
    "adversarial_effects",
    "adversarial_dynamic",
    "adversarial_order",
)

CATEGORIES = (
    "globals",
    "mutable-closure",
    "nonlocal",
    "argument-mutation",
    "randomness",
    "time",
    "io-logging",
    "exceptions",
    "getattr-setattr-dict",
    "eval-exec",
    "dynamic-field-names",
    "all-keys",
    "unknown-calls",
    "order-dependent-reduce",
)


def fs(text: str) -> frozenset:
    return frozenset(text.split())


@dataclass(frozen=True)
class Spec:
    kind: str
    fields: str  # "a b c", or "a b | c d" for binary kinds
    reads: str = ""
    writes: str = ""
    emits: tuple = (1, 1)
    card_reads: Optional[str] = None  # None: not declared
    copy: Optional[bool] = None
    output: Optional[str] = None
    group_copied: Optional[str] = None
    forwards_groups: Optional[bool] = None  # None: not declared
    category: Optional[str] = None  # adversarial category
    impure: bool = False  # the truth: the function is impure

    def input_fields(self):
        if "|" in self.fields:
            left, right = self.fields.split("|")
            return (fs(left), fs(right))
        return fs(self.fields)

    def all_fields(self) -> frozenset:
        return fs(self.fields.replace("|", " "))


@dataclass(frozen=True)
class Entry:
    module: str
    name: str
    fn: object
    spec: Spec

    @property
    def id(self) -> str:
        return f"{self.module}.{self.name}"


def entries() -> list:
    out = []
    for mod_name in MODULES:
        mod = importlib.import_module(f"{__name__}.{mod_name}")
        for name, spec in mod.EXPECTED.items():
            out.append(Entry(mod_name, name, getattr(mod, name), spec))
    return out
