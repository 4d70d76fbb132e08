"""An isolated pyDatalog program per RuleBook (issue 4, item 6).

pyDatalog keeps one program per thread (`pyDatalog.Logic`), shared by every
caller in that thread. A `Program` owns its own `Logic`: it is built from a
fresh one, and switched in (`Logic(saved)`, which installs a copy) around
every query, under a process-wide lock because pyDatalog's parser and resolver
registry are module globals. So two RuleBooks, in one thread or in two, never
see each other's facts.
"""

from __future__ import annotations

import ast
import builtins
import functools
import re
import threading
from contextlib import contextmanager
from typing import Iterable

from pyDatalog import pyDatalog, pyEngine, pyParser
from pyDatalog.pyDatalog import Logic

_LOCK = threading.RLock()


def _constant(value):
    # what pyParser.Term does with a constant ('True'/'False' strings become booleans)
    return True if value == "True" else False if value == "False" else value


def _assert_fact(predicate: str, args) -> None:
    """`pyDatalog.assert_fact` without the parser's Literal/Term objects: the same engine
    clause, built directly (a few hundred facts per flow: a large part of the load)."""
    terms = [pyEngine.Term_of(_constant(a)) for a in args]
    pyEngine.assert_(pyEngine.Clause(pyEngine.Literal(predicate, terms, len(terms)), []))


@functools.lru_cache(maxsize=256)
def _compiled(text: str):
    """`pyParser.load`'s pure part, once per clause text: dedent, parse, rewrite the builtins
    pyDatalog customizes (`_transform_ast`), compile. Every RuleBook loads the same rule
    texts; this was two thirds of loading them."""
    lines = text.splitlines()
    spaces = ""
    for line in lines:
        spaces = re.match(r"^\s*", line).group()
        if spaces and line != spaces:
            break
    code = "\n".join(re.sub("^" + spaces, "", line) for line in lines)
    tree = pyParser._transform_ast().visit(ast.parse(code, "load", "exec"))
    return compile(tree, "load", "exec")


def _load(text: str) -> None:
    """`pyParser.load(text, newglobals={})` with the compiled code memoized: fresh Datalog
    symbols for the code's free names, then the code run, which asserts its clauses into the
    current program. (pyParser.load directly: pyDatalog.load inspects the caller's stack.)
    On an error, pyParser.load itself runs, for its messages."""
    try:
        code = _compiled(text)
    except Exception:  # noqa: BLE001 - a syntax error: let pyDatalog report it its way
        pyParser.load(text, newglobals={})
        raise
    symbols: dict = {}
    defined = set(dir(builtins)) | {"None"}
    for name in set(code.co_names) - defined:
        pyParser.add_symbols((name,), symbols)
    exec(code, symbols)  # noqa: S102 - the rules' own Datalog text, as pyParser.load runs it


def union_clauses(union: str, predicates: dict[str, int]) -> str:
    """Clauses gathering several derived predicates into one, so that a single query answers
    them all and pyDatalog's tables (ROC, conflicts, ...) are computed once for all of them:

        udflow_derived('theorem1_map_map', V0, V1, 0, 0) <= theorem1_map_map(V0, V1)

    Shorter predicates are padded with 0 (`Program.ask_all` cuts the answers back)."""
    if not predicates:
        return ""
    width = max(predicates.values())
    lines = []
    for name, arity in predicates.items():
        variables = [f"V{i}" for i in range(arity)]
        head = ", ".join([repr(name)] + variables + ["0"] * (width - arity))
        lines.append(f"{union}({head}) <= {name}({', '.join(variables)})")
    return "\n".join(lines)


class Program:
    """Datalog clauses plus ground facts, queried in isolation."""

    def __init__(self, clauses: Iterable[tuple[str, str]], facts: Iterable[tuple]):
        """`clauses`: (name of the rule module, its clause text) pairs."""
        with _LOCK:
            previous = Logic(True) if hasattr(Logic.tl, "logic") else None
            try:
                Logic()  # a fresh, empty program for this thread
                for name, text in clauses:
                    if not text.strip():
                        continue
                    try:
                        _load(text)
                    except Exception as exc:
                        from udflow.errors import OptimizationError

                        raise OptimizationError(
                            f"rule {name}: its Datalog clauses do not load: {type(exc).__name__}: {exc}"
                        ) from None
                for predicate, *args in facts:
                    _assert_fact(predicate, args)
                self._logic = Logic(True)
            finally:
                if previous is not None:
                    Logic(previous)

    @contextmanager
    def active(self):
        """Switch this program in for the current thread; restore the previous one after."""
        with _LOCK:
            previous = Logic(True) if hasattr(Logic.tl, "logic") else None
            Logic(self._logic)
            try:
                yield
            finally:
                if previous is not None:
                    Logic(previous)

    def ask(self, query: str) -> set[tuple]:
        """All answers of `query` (a conjunction of literals), as tuples of variable bindings."""
        with self.active():
            answer = pyDatalog.ask(query)
        if answer is None:
            return set()
        return {tuple(a) for a in answer.answers}

    def ask_many(self, queries: Iterable[str]) -> dict[str, set[tuple]]:
        """Several queries under one switch of the program."""
        out = {}
        with self.active():
            for query in queries:
                try:
                    answer = pyDatalog.ask(query)
                except AttributeError:  # a predicate no clause defines
                    answer = None
                out[query] = set() if answer is None else {tuple(a) for a in answer.answers}
        return out

    def ask_all(self, predicates: dict[str, int], union: str) -> dict[str, set[tuple]]:
        """Every answer of each predicate (name -> arity), through the `union_clauses(union,
        predicates)` loaded with this program: one query instead of one per predicate."""
        if not predicates:
            return {}
        width = max(predicates.values())
        variables = ", ".join(f"V{i}" for i in range(width + 1))
        try:
            answers = self.ask(f"{union}({variables})")
        except AttributeError:  # a predicate no clause defines: ask one by one, as ask_many does
            return {name: found for name, found in zip(predicates, self.ask_many(
                f"{name}({', '.join(f'V{i}' for i in range(arity))})" for name, arity in predicates.items()
            ).values())}
        out: dict[str, set[tuple]] = {name: set() for name in predicates}
        for name, *args in answers:
            out[name].add(tuple(args[: predicates[name]]))
        return out

    def holds(self, query: str) -> bool:
        with self.active():
            return pyDatalog.ask(query) is not None

    def close(self) -> None:
        self._logic = None
