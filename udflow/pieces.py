"""The list an explosion's loop builds, as one term that Python computes per record.

    for raw in r["text"].split():                  Pieces(Field('text'), sep=None, split=True,
        word = raw.strip(PUNCTUATION).lower()             guard=<word and word not in STOP_WORDS>,
        if word and word not in STOP_WORDS:               item=stem(<word>))
            yield {**r, "token": stem(word)}
                                                    [stem(w) for x in r['text'].split() if ...]

A tokenizer whose pieces need Python (the user's `stem`, `str.lower`, whose case tables
differ between Python and the JVM) would cross to Python once per piece, or run whole
as Python and build one dict per piece. As this term it crosses once per record and
returns the list of the values the pieces give, which Spark explodes natively: what a
user's `F.udf` returning an array does (`engine.pieces_in_python` makes the rewrite).

Python's semantics, exactly those of `ExplodeModel`'s loop: `source` is evaluated once;
with `split`, its `.split(sep)` is called (None or a non-str raises AttributeError),
otherwise its value is iterated as `for` does (None raises TypeError). For each piece in
order, `guard` (None: always) is evaluated with `Elem()` bound to the piece, and where it
is truthy, `item`; the first error raises, and no list is returned.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional

from udflow.expr import ELEM, Expr, evaluate, transform


@dataclass(frozen=True)
class Pieces(Expr):
    """`[item for x in source.split(sep) if guard]` (or `for x in source` without `split`)."""

    source: Expr
    sep: Optional[str]
    split: bool
    guard: Optional[Expr]
    item: Expr
    line: int = field(default=0, compare=False)  # the loop's: where the source raises
    lines: tuple = field(default=(), compare=False)  # ((term, the line computing it), ...)

    def evaluated(self, record: Mapping[str, Any], evaluate: Callable) -> list:
        value = evaluate(self.source, record)
        out = []
        for piece in value.split(self.sep) if self.split else value:
            scope = {**record, ELEM: piece}
            if self.guard is None or evaluate(self.guard, scope):
                out.append(evaluate(self.item, scope))
        return out

    def raising_line(self, record: Mapping[str, Any]) -> int:
        """The line Python names where the list raises on `record`: that of the innermost
        term computed on a line of its own (`word = raw.strip(P).lower()`), else the loop's;
        0 where nothing raises. Only for an error's message: it evaluates the list again."""
        try:
            evaluate(_at_lines(self, dict(self.lines)), record)
        except Exception as exc:  # noqa: BLE001 - whatever raises, its line is the answer
            return getattr(exc, "udflow_line", self.line)
        return 0

    def __str__(self) -> str:
        pieces = f"{self.source}.split({'' if self.sep is None else repr(self.sep)})" if self.split \
            else str(self.source)
        when = "" if self.guard is None else f" if {self.guard}"
        return f"[{self.item} for x in {pieces}{when}]"


@dataclass(frozen=True)
class _AtLine(Expr):
    """`term`, computed on `line`: an error raised inside it is marked with the line, unless
    a term inside it marked it first."""

    term: Expr
    line: int

    def evaluated(self, record: Mapping[str, Any], evaluate: Callable) -> Any:
        try:
            return evaluate(self.term, record)
        except Exception as exc:
            if not hasattr(exc, "udflow_line"):
                try:
                    exc.udflow_line = self.line
                except AttributeError:  # an exception type without attributes: no line
                    pass
            raise


def _at_lines(term: Expr, lines: dict) -> Expr:
    """`term` with each of its subterms that `lines` holds wrapped in `_AtLine`."""
    def line_of(t: Expr) -> Optional[int]:
        try:
            return lines.get(t)
        except TypeError:  # a constant of an unhashable value: no line of its own
            return None

    def rewrite(t: Expr) -> Expr:
        line = line_of(t)
        if line is None:
            return t
        return _AtLine(transform(t, lambda u: u if u is t else rewrite(u)), line)

    return transform(term, rewrite)
