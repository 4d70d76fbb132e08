"""explain() says why nothing moved (issue 15, item 5): functions without source (exec, stdin),
impure functions and refused exchanges are listed with their reasons; lambdas written on one
line get labels that tell them apart."""

import pathlib
import random
import subprocess
import sys
import textwrap

import udflow as uf

ROOT = pathlib.Path(__file__).resolve().parent.parent
ROWS = [{"a": i, "b": i % 3, "c": i * 1.5} for i in range(60)]


def table():
    return uf.source("t", rows=ROWS)


def noisy(r):
    return {**r, "noise": random.random()}


def doubled(r):
    return {**r, "a": r["a"] * 2}


def _barrier_lines(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Barriers ("))
    out = []
    for line in lines[start + 1:]:
        if not line.strip():
            break
        out.append(line.strip())
    return out


def test_a_function_made_by_exec_is_listed_as_a_barrier_with_its_reason():
    namespace: dict = {}
    exec("def tag(r):\n    return {**r, 'd': 1}\n", namespace)  # no source file to read
    text = uf.optimize(table().map(namespace["tag"]).filter(lambda r: r["a"] > 40)).explain()
    assert "the plan as written is the cheapest" not in text
    assert "no operator may move" in text
    barriers = _barrier_lines(text)
    assert any(line.startswith("Map(tag): tag (<string>:1) has no source to analyse (no source available")
               for line in barriers), barriers
    assert any(line.startswith("Filter(lambda@") and "stays above Map(tag)" in line for line in barriers)


def test_an_impure_function_is_listed_with_the_line_that_makes_it_impure():
    line = noisy.__code__.co_firstlineno + 1  # `random.random()`
    text = uf.optimize(table().map(noisy).filter(lambda r: r["b"] == 1)).explain()
    barriers = _barrier_lines(text)
    assert f"Map(noisy): {__name__}.noisy ({__file__}:{noisy.__code__.co_firstlineno}) is impure " \
           f"(uses randomness, line {line}), so no operator moves across it" in barriers


def test_an_exchange_refused_on_a_field_names_the_field_and_the_line():
    """Not impure, no missing source: the filter reads the field the map writes."""
    text = uf.optimize(table().map(doubled).filter(lambda r: r["a"] > 10)).explain()
    barriers = _barrier_lines(text)
    (line,) = [b for b in barriers if "stays above Map(doubled)" in b]
    assert "on a" in line and "line" in line


def test_a_function_read_from_stdin_is_a_barrier_with_its_reason():
    script = textwrap.dedent("""
        import udflow as uf
        def tag(r):
            return {**r, "d": 1}
        flow = uf.source("t", rows=[{"a": i} for i in range(30)]).map(tag).filter(lambda r: r["a"] > 20)
        print(uf.optimize(flow).explain())
    """)
    done = subprocess.run([sys.executable, "-"], input=script, capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    barriers = _barrier_lines(done.stdout)
    assert any(b.startswith("Map(tag): tag (<stdin>:") and "has no source to analyse" in b for b in barriers), \
        done.stdout


def test_a_plan_that_could_move_but_is_cheapest_as_written_says_so():
    """The filter may move above the map (it reads b, the map writes a): two valid plans."""
    text = uf.optimize(table().filter(lambda r: r["b"] == 1).map(doubled)).explain()
    assert "No rewrite applied: the plan as written is the cheapest of 2 valid plans." in text
    assert "Barriers (" not in text


def test_lambdas_on_one_line_get_distinct_labels_with_their_columns():
    flow = table().filter(lambda r: r["a"] > 3).filter(lambda r: r["b"] == 1)
    line = sys._getframe().f_lineno - 1
    source = pathlib.Path(__file__).read_text().splitlines()[line - 1]
    first = source.index("lambda") + 1
    second = source.index("lambda", first) + 1
    labels = [n.label for n in flow.operators]
    assert labels == [f"Filter(lambda@{line}:{second})", f"Filter(lambda@{line}:{first})"]


def test_a_lambda_alone_on_its_line_keeps_its_short_label():
    flow = table().filter(lambda r: r["a"] > 3)
    assert flow.operators[0].label == f"Filter(lambda@{sys._getframe().f_lineno - 1})"
