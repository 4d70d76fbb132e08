"""An explosion whose pieces need Python: the loop's list, built by Python once per record, exploded natively.

    for raw in r["text"].split():                 for x in [stem(raw.strip(P).lower())
        word = raw.strip(P).lower()                         for raw in r["text"].split()
        if word and word not in STOP:       ->              if <word> and <word> not in STOP]:
            yield {**r, "token": stem(word)}          yield {**r, "token": x}

Before, a call with no exact native form on a piece (the user's `stem`, `str.lower`)
kept the whole Map in Python, one dict built per piece; a call per piece, each crossing
to Python and back, measured slower still (`steps.python_only_calls`). After, the list
is one term (`udflow.pieces.Pieces`) that a Python UDF computes per record, the way a
user's `F.udf` returning an array runs, and Spark explodes it and projects the record's
other fields natively (`ExplodeModel` with `split` False).

Law: both models emit the same records in the same order and raise the same first error.
The loop evaluates, per piece, the guard and then the emitted fields in order; the
rewrite evaluates every piece's guard and item first, then the other fields per kept
piece. The two orders raise alike because the other fields are reads of the input's
fields or constants, which never raise; so the rewrite applies only where every emitted
field but at most one (the item) reads no piece and is a `Field` or a `Lit`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from udflow.analysis.model import Emit, ExplodeModel
from udflow.expr import Elem, Expr, Field, Lit
from udflow.pieces import Pieces


def pieces_in_python(model: ExplodeModel) -> Optional[ExplodeModel]:
    """The model with its pieces' list built by Python (module docstring); None where the
    law does not hold: two fields read the piece, or a field not reading it may raise."""
    reading = [(name, term) for name, term in model.emit.fields if _reads_piece(term)]
    others = [term for _, term in model.emit.fields if not _reads_piece(term)]
    if len(reading) > 1 or not all(isinstance(t, (Field, Lit)) for t in others):
        return None
    # with no field reading the piece, only the count of kept pieces matters: any item will do
    item = reading[0][1] if reading else Lit(True)
    source = Pieces(model.source, model.sep, model.split, model.guard, item, model.line, model.computed_at)
    fields = tuple((name, Elem(split=False) if _reads_piece(term) else term) for name, term in model.emit.fields)
    return replace(model, source=source, sep=None, split=False, guard=None,
                   emit=Emit(fields, model.emit.copies_input))


def _reads_piece(term: Expr) -> bool:
    return any(isinstance(t, Elem) for t in term.walk())
