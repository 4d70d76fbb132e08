"""The pieces of `udflow optimize` that need no optimizer: discovery, cache keys, plan drawings, the pool."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET

import pytest

import udflow as uf
from udflow.batch import discovery
from udflow.batch.fingerprint import flow_fingerprint, pipeline_key
from udflow.batch.outcome import plan_tree, rebuild
from udflow.batch.svg import plan_svg


def _module(tmp_path, name: str, text: str):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(text))
    return str(path), discovery.load_module(str(path))


def test_discovery_finds_flows_and_decorated_functions_only(tmp_path):
    _, module = _module(tmp_path, "m_discovery", """
        import udflow as uf
        src = uf.source("t", rows=[{"a": 1, "b": 2}])          # a bare source: not a pipeline
        step = src.filter(lambda r: r["a"] > 0)                 # built on by `final`: intermediate
        final = step.map(lambda r: {**r, "c": 1})
        _private = src.filter(lambda r: r["b"] > 0)
        other = uf.source("u", rows=[{"x": 1}]).filter(lambda r: r["x"] > 0)

        @uf.pipeline
        def made():
            return uf.source("v", rows=[{"y": 1}]).filter(lambda r: r["y"] > 0)

        def helper():                                          # not decorated
            return final
    """)
    assert discovery.pipeline_names(module) == ["final", "other", "made"]


def test_import_error_names_the_file_and_line(tmp_path):
    path, _ = _module(tmp_path, "m_ok", "X = 1\n")
    bad = tmp_path / "m_bad.py"
    bad.write_text("import udflow\n\nraise RuntimeError('no data today')\n")
    found = list(discovery.discover([str(tmp_path)]))
    broken = [b for b in found if isinstance(b, discovery.BrokenFile)]
    assert len(broken) == 1
    assert "RuntimeError: no data today" in broken[0].reason
    assert "m_bad.py:3" in broken[0].reason


def test_a_pipeline_function_must_return_a_flow(tmp_path):
    path, module = _module(tmp_path, "m_return", """
        import udflow as uf

        @uf.pipeline
        def nothing():
            return 42
    """)
    with pytest.raises(discovery.PipelineLoadError, match="returned int, not a Flow"):
        discovery.build(module, discovery.PipelineRef(path, "nothing"))


def test_pipeline_decorator_refuses_a_non_callable():
    with pytest.raises(uf.UdflowError, match="must decorate a function"):
        uf.pipeline(42)


def _flow(limit: int, scale: float = 2.0):
    def big(r):
        return r["a"] > limit

    def scaled(r):
        return {**r, "b": r["a"] * scale}

    return uf.source("t", rows=[{"a": i} for i in range(10)]).map(scaled).filter(big)


def test_fingerprint_follows_code_closures_and_data():
    base = flow_fingerprint(_flow(3).root)
    assert base == flow_fingerprint(_flow(3).root)  # rebuilt: same functions, same key
    assert base != flow_fingerprint(_flow(4).root)  # a closure constant changed
    assert base != flow_fingerprint(_flow(3, 3.0).root)
    other_rows = uf.source("t", rows=[{"a": i} for i in range(11)])
    changed_data = other_rows.map(_flow(3).root.input.fn).filter(_flow(3).root.fn)
    assert base != flow_fingerprint(changed_data.root)


def test_fingerprint_is_stable_across_processes(tmp_path):
    code = (
        "from tests.pipelines import gen_joins as m\n"
        "from udflow.batch.fingerprint import pipeline_key\n"
        "print(pipeline_key('n', m.__file__, m.reduce_above_join().root, 'analysis'))\n"
    )
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    keys = {
        subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True,
                       env={**os.environ, "PYTHONHASHSEED": str(seed)}, check=True).stdout.strip()
        for seed in (1, 2)
    }
    assert len(keys) == 1 and not keys.pop().startswith("unstable")


def test_fingerprint_of_an_indescribable_callable_is_never_reused():
    import threading

    opaque = _Holder(threading.Lock())  # a lock has no value to hash: never a cache hit
    flow = uf.source("t", rows=[{"a": 1}]).filter(_Holder(opaque))
    key = pipeline_key("x", __file__, flow.root, "analysis")
    assert key.startswith("unstable-")
    assert key != pipeline_key("x", __file__, flow.root, "analysis")
    described = uf.source("t", rows=[{"a": 1}]).filter(_Holder(3))  # slots with values: stable
    assert pipeline_key("x", __file__, described.root, "analysis") == pipeline_key(
        "x", __file__, described.root, "analysis")


class _Holder:
    __slots__ = ("inner",)

    def __init__(self, inner):
        self.inner = inner

    def __call__(self, r):
        return r["a"] > 0


def test_plan_tree_round_trips_through_rebuild():
    orders = uf.source("o", rows=[{"o_id": 1, "o_c": 1}], key=["o_id"])
    customers = uf.source("c", rows=[{"c_id": 1, "c_n": "x"}], key=["c_id"])
    flow = orders.match(customers, on=("o_c", "c_id")).filter(lambda r: r["c_n"] == "x")
    tree = plan_tree(flow.root)
    assert rebuild(flow.root, tree) == flow.root
    # the filter moved into the right input: same operators, new shape
    match, flt = flow.root.input, flow.root
    moved = match.with_inputs(match.left, flt.with_inputs(match.right))
    assert rebuild(flow.root, plan_tree(moved)) == moved
    with pytest.raises(ValueError, match="does not have"):
        rebuild(flow.root, {**tree, "label": "Nope"})


def test_plan_svg_is_well_formed_and_draws_every_operator():
    orders = uf.source("o", rows=[{"o_id": 1, "o_c": 1}])
    customers = uf.source("c", rows=[{"c_id": 1, "c_n": "<&>"}])
    flow = orders.match(customers, on=("o_c", "c_id")).filter(lambda r: r["c_n"] == "x")
    svg = plan_svg(plan_tree(flow.root), "t", frozenset({flow.root.label}), uid="u1")
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    labels = [t.text for t in root.iter(f"{ns}text") if t.get("class") != "rows"]
    assert sorted(labels) == sorted(n.label for n in flow.root.walk())
    assert len(list(root.iter(f"{ns}line"))) == 3  # one edge per input
    # parents are drawn above their inputs (data flows up)
    ys = {t.text: float(t.get("y")) for t in root.iter(f"{ns}text") if t.get("class") != "rows"}
    assert ys[flow.root.label] < ys[flow.root.input.label] < ys["Source(o)"]


def test_rich_progress_and_table_on_a_terminal(tmp_path, monkeypatch):
    """On a terminal: a rich bar per pipeline and a rich table (the real optimizer, one worker)."""
    import io

    from rich.console import Console

    from udflow.batch.cache import ResultCache
    from udflow.batch.progress import RichReporter, reporter_for
    from udflow.batch.report import print_summary
    from udflow.batch.runner import Options, optimize_batch

    (tmp_path / "tiny.py").write_text(
        "import udflow as uf\n"
        "def wide(r):\n    return {**r, 'c': r['a'] * 2}\n"
        "def small(r):\n    return r['b'] < 3\n"
        "tiny = uf.source('t', rows=[{'a': i, 'b': i % 5} for i in range(50)]).map(wide).filter(small)\n"
    )
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=160, color_system=None)
    reporter = reporter_for(console)
    assert isinstance(reporter, RichReporter)
    outcomes = optimize_batch(["tiny.py"], Options(jobs=1, cache=ResultCache(str(tmp_path / "c"))), reporter)
    print_summary(outcomes, console)
    text = out.getvalue()
    assert outcomes[0]["status"] == "ok", outcomes[0]
    assert "tiny.py::tiny" in text and "━" in text  # the bar
    assert "udflow optimize" in text and "1 of 1 pipelines optimized" in text  # the table
    assert isinstance(reporter_for(Console(file=io.StringIO())), type(reporter_for(None)))  # not a terminal
