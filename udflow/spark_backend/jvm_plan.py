"""Reading a Catalyst tree over py4j in few round trips.

Every py4j call is a round trip to the JVM, and every JVM object it hands back costs one
more when Python frees it (py4j tells the JVM to drop its reference). These helpers ask
for strings where they can: a node's class is its `nodeName`; a node's output attributes
are one text of their `name#id` prints and one JSON of the node's schema.

    output(plan)          ((name, id, simple type), ...)      two round trips
    attribute_id("x#12L") 12
    prints_as("x#12L", "x", 12)   True: the attribute itself, not `... AS x#12`
"""

from __future__ import annotations

import re
from typing import Optional


def seq(jseq) -> list:
    """A Scala Seq as a Python list (one round trip per element, and one for the size)."""
    return [jseq.apply(i) for i in range(jseq.size())]


def node_name(j) -> str:
    """The node's class name: Catalyst's `nodeName`, one round trip where `getClass` and its
    name take two and a freed Class object."""
    return str(j.nodeName())


def output(j) -> Optional[tuple]:
    """The plan node's output attributes as ((name, id, simple type), ...), or None where
    their texts do not read as the schema's names (then ask attribute by attribute)."""
    from pyspark.sql.types import _parse_datatype_json_string

    joined = str(j.output().mkString("\u0000"))
    texts = joined.split("\u0000") if joined else []
    fields = _parse_datatype_json_string(str(j.schema().json())).fields
    ids = [attribute_id(t) for t in texts]
    if len(ids) != len(fields) or None in ids or any(not t.startswith(f.name + "#") for t, f in zip(texts, fields)):
        return None
    return tuple((f.name, i, f.dataType.simpleString()) for f, i in zip(fields, ids))


def attribute_id(text: str) -> Optional[int]:
    """The id of `name#12L` (an attribute's text: its type's suffix after the id), or None."""
    found = re.fullmatch(r".*#(\d+)[A-Za-z]*", text, re.S)
    return int(found.group(1)) if found else None


def prints_as(text: str, name: str, attribute: int) -> bool:
    """Whether `text` is how the attribute `name#attribute` prints: `name#id`, then its
    type's letter. An alias of it prints `child AS name#id`, so it never matches."""
    head = f"{name}#{attribute}"
    return text.startswith(head) and text[len(head):].isalpha() or text == head


def texts(jseq) -> list[str]:
    """The prints of a Seq's elements, in one round trip (`mkString`)."""
    joined = str(jseq.mkString("\u0000"))
    return joined.split("\u0000") if joined else []
