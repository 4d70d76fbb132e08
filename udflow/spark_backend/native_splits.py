"""A str's split natively: the pieces an explosion takes, an item of them, their number.

    Python                             native form
    ---------------------------------  --------------------------------------------------
    s.split(sep), sep a constant       split(s, <sep as a literal Java regex>, -1): Java's
                                       split with a negative limit keeps empty pieces at
                                       both ends, as Python does ("".split(",") == [""])
    s.split()                          split on runs of Python's whitespace, empty pieces
                                       dropped (`whitespace_split`)
    s.rsplit(sep, 1)[i]                the same over `last_cut`: before and after the last sep
    s.split(sep)[i]                    coalesce(try_element_at(<pieces>, i), <IndexError>):
                                       no piece is None, so null means past the end; the
                                       pieces are computed once (Spark shares nothing of an
                                       expression that holds a raising branch)
    len(s.split(sep))                  size(<pieces>)
    s None                             AttributeError, in Python's words
    sep ""                             ValueError: empty separator (not native)
"""

from __future__ import annotations

from udflow.spark_backend.native_strings import PY_WHITESPACE, WHITESPACE, none_receiver_guards
from udflow.spark_backend.native_types import NotNative, Typed
from udflow.spark_backend.sql import call, literal

ASCII_WHITESPACE = "[\\t-\\r\\x1c- ]+"  # Python's whitespace among ASCII: 9-13 and 28-32
NONE_SPLIT = "AttributeError: 'NoneType' object has no attribute 'split'"


def pieces(text: str, sep, plain: bool, maxsplit: int = -1) -> str:
    """The array of `text`'s pieces as Python's `split(sep)` gives them (`text` not null); with
    `maxsplit` >= 0 (a separator's only), at most maxsplit + 1 pieces, the last one the rest
    of the text: Java's `String.split` with that limit, which keeps empty pieces as Python."""
    if sep is None:
        if maxsplit >= 0:
            raise NotNative("split() on whitespace with a maxsplit")
        return f"filter({whitespace_split(text, plain)}, p -> p != '')"
    if not sep:
        raise NotNative("split with an empty separator (Python raises ValueError)")
    return call("split", text, literal(quoted(sep)), str(maxsplit + 1 if maxsplit >= 0 else -1))


def whitespace_split(text: str, plain: bool) -> str:
    """`split` on runs of Python's whitespace. Spark's split compiles its pattern on every row
    (Java's String.split), and Python's whole whitespace class (Unicode ranges) takes some
    8 us to compile: on a text that is all ASCII, its ASCII part says the same, and compiles
    as fast as `\\s+` (documents: 0.8 s against 1.3 s for 100,000 texts). A text computed
    by an expression (not `plain`, a column) is split on the whole class: it is computed once."""
    whole = call("split", text, literal(f"[{PY_WHITESPACE}]+"), "-1")
    if not plain:
        return whole
    ascii_only = call("split", text, literal(ASCII_WHITESPACE), "-1")
    return f"CASE WHEN length({text}) = octet_length({text}) THEN {ascii_only} ELSE {whole} END"


def quoted(sep: str) -> str:
    """`sep` as a Java regular expression matching exactly that text."""
    return "".join(c if c.isalnum() and c.isascii() else "\\" + c if c.isascii() else c for c in sep)


def _operand(low, t):
    x = low.lower(t.operand)
    if x.family != "str":
        raise NotNative(f"split of a {x.family} value")
    return x


def split_item(low, t) -> Typed:
    """`SplitItem`: the piece, or Python's IndexError past the pieces (AttributeError on None)."""
    x = _operand(low, t)
    index = t.index + 1 if t.index >= 0 else t.index  # element_at counts from 1, or back from -1
    past = low.error("IndexError: list index out of range")
    if x.nullable:
        none = NONE_SPLIT.replace("'split'", "'rsplit'") if t.reverse else NONE_SPLIT
        past = f"CASE WHEN {x.sql} IS NULL THEN {low.error(none)} ELSE {past} END"
    cut = last_cut(x.sql, t.sep) if t.reverse else pieces(x.sql, t.sep, x.leaf, t.maxsplit)
    return Typed(f"coalesce(try_element_at({cut}, {index}), {past})", "str", False)


def last_cut(text: str, sep: str) -> str:
    """`text.rsplit(sep, 1)` (`text` not null, `sep` not empty): the text before its last `sep`
    and the text after it, or the text alone where it holds none. `substring_index` with -1
    finds the last occurrence as Python's `rfind` does (searching back from the end, so that
    "aaa".rsplit("aa", 1) is ["a", ""]); lengths count code points in both."""
    after = call("substring_index", text, literal(sep), "-1")
    before = call("substring", text, "1", f"char_length({text}) - char_length({after}) - {len(sep)}")
    return f"IF(instr({text}, {literal(sep)}) > 0, array({before}, {after}), array({text}))"


def split_len(low, t) -> Typed:
    """`SplitLen`: the number of pieces (AttributeError on None)."""
    x = _operand(low, t)
    guards = none_receiver_guards(low, x, "split")
    return Typed(low.guarded(guards, f"CAST(size({pieces(x.sql, t.sep, x.leaf, t.maxsplit)}) AS BIGINT)"), "int",
                 False)


def split_join(low, t) -> Typed:
    """`SplitJoin`: over whitespace, the text trimmed of Python's whitespace and each run of it
    made one joiner; over a separator, each separator replaced by the joiner (the pieces keep
    their empty ones, and joining puts them back)."""
    x = _operand(low, t)
    guards = none_receiver_guards(low, x, "split")
    if t.sep == "":
        raise NotNative("split('') raises ValueError in Python")
    if t.sep is None:
        replacement = t.joiner.replace("\\", "\\\\").replace("$", "\\$")  # Java's replacement syntax
        trimmed = f"TRIM(BOTH {literal(WHITESPACE)} FROM {x.sql})"
        value = call("regexp_replace", trimmed, literal(f"[{PY_WHITESPACE}]+"), literal(replacement))
    else:
        value = call("replace", x.sql, literal(t.sep), literal(t.joiner))
    return Typed(low.guarded(guards, value), "str", False)


def join_items(low, t) -> Typed:
    """`JoinItems`: the items concatenated with the joiner between them; Python computes every
    item before joining, then raises TypeError at the first that is None."""
    items = [low.lower(i) for i in t.items]
    if any(i.family != "str" for i in items):
        raise NotNative("a join of items not all str (Python raises TypeError)")
    nullable = [(k, i) for k, i in enumerate(items) if i.nullable]
    guards = []
    if nullable:
        condition = " + ".join(f"CAST({i.sql} IS NULL AS INT)" for i in items) + " > 0"
        message = [(f"({i.sql} IS NULL)", f"TypeError: sequence item {k}: expected str instance, NoneType found")
                   for k, i in nullable]
        guards.append((f"({condition})", low.error(message)))
    parts = [items[0].sql]
    for item in items[1:]:
        parts += [literal(t.joiner), item.sql] if t.joiner else [item.sql]
    return Typed(low.guarded(guards, call("concat", *parts)), "str", False)
