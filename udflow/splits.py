"""An item of a str's split, and the number of its pieces, as terms.

    r["email"].split("@")[-1]        SplitItem(Field('email'), '@', -1)
    r["title"].split()[0]            SplitItem(Field('title'), None, 0)
    len(r["tags"].split(","))        SplitLen(Field('tags'), ',')
    r["name"].split(" ", 1)[1]       SplitItem(Field('name'), ' ', 1, maxsplit=1)
    r["path"].rsplit("/", 1)[-1]     SplitItem(Field('path'), '/', -1, maxsplit=1, reverse=True)
    " ".join(r["name"].split())      SplitJoin(Field('name'), None, ' ')
    ",".join([r["a"], r["b"]])       JoinItems(',', (Field('a'), Field('b')))

`sep` None is `split()`: runs of whitespace, none at either end. Meaning, Python's: a None
operand raises AttributeError (`'NoneType' object has no attribute 'split'`), an empty `sep`
ValueError, an index past the pieces IndexError (`list index out of range`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional

from udflow.expr import Expr


@dataclass(frozen=True)
class SplitItem(Expr):
    """`operand.split(sep)[index]`: the piece at `index` (negative from the end); with
    `maxsplit` >= 0, `operand.split(sep, maxsplit)[index]` (the rest of the text the last piece);
    `reverse`: `operand.rsplit(sep, maxsplit)[index]` (the rest of the text the first piece)."""

    operand: Expr
    sep: Optional[str]
    index: int
    maxsplit: int = -1
    reverse: bool = False

    def evaluated(self, record: Mapping[str, Any], evaluate: Callable) -> Any:
        text = evaluate(self.operand, record)
        return (text.rsplit if self.reverse else text.split)(self.sep, self.maxsplit)[self.index]

    def __str__(self) -> str:
        method = "rsplit" if self.reverse else "split"
        return f"{self.operand}.{method}({_arguments(self.sep, self.maxsplit)})[{self.index}]"


@dataclass(frozen=True)
class SplitLen(Expr):
    """`len(operand.split(sep))`: the number of pieces (`operand.split(sep, maxsplit)`'s)."""

    operand: Expr
    sep: Optional[str]
    maxsplit: int = -1

    def evaluated(self, record: Mapping[str, Any], evaluate: Callable) -> Any:
        return len(evaluate(self.operand, record).split(self.sep, self.maxsplit))

    def __str__(self) -> str:
        return f"len({self.operand}.split({_arguments(self.sep, self.maxsplit)}))"


def _arguments(sep: Optional[str], maxsplit: int) -> str:
    """A split's arguments as the user wrote them: `','`, `',', 1`, or none."""
    shown = "" if sep is None else repr(sep)
    return shown if maxsplit < 0 else f"{shown}, {maxsplit}"


@dataclass(frozen=True)
class SplitJoin(Expr):
    """`joiner.join(operand.split(sep))`: the pieces joined again (whitespace runs made one
    `joiner` and the ends trimmed, for `sep` None)."""

    operand: Expr
    sep: Optional[str]
    joiner: str

    def evaluated(self, record: Mapping[str, Any], evaluate: Callable) -> Any:
        return self.joiner.join(evaluate(self.operand, record).split(self.sep))

    def __str__(self) -> str:
        return f"{self.joiner!r}.join({self.operand}.split({'' if self.sep is None else repr(self.sep)}))"


@dataclass(frozen=True)
class JoinItems(Expr):
    """`joiner.join([a, b, ...])` of a list or tuple display: its items computed left to
    right, then joined; an item that is not a str (None) raises TypeError naming its index."""

    joiner: str
    items: tuple

    def evaluated(self, record: Mapping[str, Any], evaluate: Callable) -> Any:
        return self.joiner.join([evaluate(item, record) for item in self.items])

    def __str__(self) -> str:
        return f"{self.joiner!r}.join([{', '.join(str(i) for i in self.items)}])"
