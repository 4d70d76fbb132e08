"""The analysis never fails with an internal error on ordinary or odd code (issue 28, item 4).

An internal error is a bug in udflow: the function is then run as written, as Python, and
nothing moves across it (`analyzer.INTERNAL_ERROR`, origin "internal"). Every function of
every corpus the tests keep (the analysis corpus, the soundness pools, the shared repros'
copies, the examples) and a few hundred generated ones, each a construct users write or
one they rarely do, is analysed for every kind it fits, without one.
"""

import importlib
import inspect
import itertools
import sys

import pytest

from tests import soundness_families, soundness_pool
from tests.analysis_corpus import entries
from udflow.analysis import analyze
from udflow.analysis.analyzer import INTERNAL_ERROR

FIELDS = ("k", "v", "s")

# bodies of a Map `f(r)`: each a construct, from the everyday to the odd
MAP_BODIES = [
    "return {**r, 'x': r['v'] + 1}",
    "return {**r, 'x': r['v'] if r['v'] is not None else 0}",
    "return {**r, 'x': (r['v'] or 0) // 3 % 2 ** 4}",
    "return {**r, 'x': -r['v'] if r['v'] else ~1}",
    "return {**r, 'x': r['s'].strip().lower()[:3]}",
    "return {**r, 'x': f\"{r['s']}-{r['v']:>4}\"}",
    "return {**r, 'x': '%s/%d' % (r['s'], r['v'])}",
    "return {**r, 'x': [c for c in r['s'] if c.isalpha()]}",
    "return {**r, 'x': {c: i for i, c in enumerate(r['s'])}}",
    "return {**r, 'x': {c for c in r['s']}}",
    "return {**r, 'x': sum(i for i in range(3))}",
    "return {**r, 'x': (lambda y: y * 2)(r['v'])}",
    "return {**r, 'x': (y := r['v']) and y + 1}",
    "return {**r, 'x': 0 < r['v'] <= 10}",
    "return {**r, 'x': r['v'] in (1, 2, 3)}",
    "return {**r, 'x': not r['s']}",
    "return {**r, 'x': max(r['v'], 0, key=abs)}",
    "return {**r, 'x': sorted(r['s'], reverse=True)}",
    "return {**r, 'x': r['s'].split(',', 1)[-1]}",
    "return {**r, 'x': len(r)}",
    "return {**r, 'x': tuple(r.values())}",
    "return {**r, 'x': [*r]}",
    "return {**r, 'x': {**r}}",
    "return {**r, 'x': r.get('missing', r.get('v'))}",
    "return {k: v for k, v in r.items() if v is not None}",
    "return dict(r, x=1)",
    "return dict(**r, x=1)",
    "return {'k': r['k']}",
    "return r",
    "return None",
    "out = dict(r)\n    out['x'] = 1\n    return out",
    "out = r.copy()\n    del out['s']\n    return out",
    "r['x'] = r.pop('v', None)\n    return r",
    "r.update(x=1, y=2)\n    return r",
    "r.update({'x': 1})\n    return r",
    "r.setdefault('x', [])\n    return r",
    "r |= {'x': 1}\n    return r",
    "x = 0\n    for c in r['s']:\n        x += 1\n    else:\n        x -= 1\n    return {**r, 'x': x}",
    "x = 0\n    while x < 3:\n        x += 1\n        if x == 2:\n            break\n    return {**r, 'x': x}",
    "try:\n        x = int(r['s'])\n    except ValueError:\n        x = None\n    return {**r, 'x': x}",
    "try:\n        x = 1 / r['v']\n    except (ZeroDivisionError, TypeError) as e:\n        x = str(e)\n    finally:\n        pass\n    return {**r, 'x': x}",
    "with open('/dev/null') as fh:\n        pass\n    return r",
    "match r['v']:\n        case 1:\n            return {**r, 'x': 'one'}\n        case [a, b]:\n            return {**r, 'x': a}\n        case _:\n            return r",
    "def inner(y):\n        return y + 1\n    return {**r, 'x': inner(r['v'])}",
    "class Box:\n        pass\n    return {**r, 'x': Box}",
    "assert r['v'] is not None, 'no v'\n    return r",
    "if r['v'] is None:\n        raise ValueError('no v')\n    return r",
    "global _COUNTER\n    _COUNTER = 1\n    return r",
    "x, *rest = r['s'] or 'ab'\n    return {**r, 'x': x}",
    "a = b = r['v']\n    return {**r, 'x': a, 'y': b}",
    "yield r\n    yield {**r, 'x': 1}",
    "yield from (dict(r, x=i) for i in range(2))",
    "yield from [r]",
    "if r['v']:\n        yield r",
    "return {**r, 'x': r['s'][::-1]}",
    "return {**r, 'x': r['s'] * 2}",
    "return {**r, 'x': 1 if r['v'] else 2 if r['s'] else 3}",
    "return {**r, 'x': isinstance(r['v'], int)}",
    "return {**r, 'x': type(r['v']).__name__}",
    "return {**r, 'x': __import__('math').sqrt(4)}",
    "return {**r, 'x': eval('1')}",
    "return {**r, 'x': getattr(r, 'get')('v')}",
    "return {**r, 'x': [r[f] for f in ('k', 'v')]}",
    "return {**r, r['s'] or 'x': 1}",
    "return {**r, 'x': print(r)}",
    "return {**r, 'x': b'bytes'}",
    "return {**r, 'x': 1j}",
    "return {**r, 'x': ...}",
    "return {**r, 'x': r['v'] @ r['v']}",
    "return {**r, 'x': r['v'] << 2 | 1 & 3 ^ 4}",
    "return {**r, 'x': await_nothing}",
    "lambda: 0\n    return r",
    "pass",
    "return {**r, 'x': [(yield)]}",
]

# bodies of a Reduce `f(rows)`
REDUCE_BODIES = [
    "yield from rows",
    "yield from list(rows)",
    "rows = list(rows)\n    yield from rows",
    "rows = list(rows)\n    if rows:\n        yield from rows",
    "rows = list(rows)\n    if len(rows) > 1:\n        yield from rows",
    "rows = list(rows)\n    if any(r['v'] for r in rows):\n        yield from rows",
    "for r in rows:\n        yield r",
    "for r in rows:\n        yield {**r, 'n': 1}",
    "rows = list(rows)\n    yield {**rows[0], 'n': len(rows)}",
    "rows = list(rows)\n    yield {**rows[0], 'n': sum(r['v'] or 0 for r in rows)}",
    "rows = list(rows)\n    yield {**rows[-1], 'n': 0}",
    "first = next(iter(rows))\n    yield first",
    "total = 0\n    for r in rows:\n        total += r['v'] or 0\n    yield {'k': r['k'], 'total': total}",
    "yield {'n': len(list(rows))}",
    "rows = sorted(rows, key=lambda r: r['v'] or 0)\n    yield rows[0]",
    "yield max(rows, key=lambda r: r['v'] or 0)",
    "return",
    "yield from ()",
    "rows = list(rows)\n    yield from rows[:1]",
    "rows = list(rows)\n    yield from reversed(rows)",
]


def _generated_module(tmp_path_factory):
    """The generated functions, written to a module so that their source is there to read."""
    lines = ["_COUNTER = 0", ""]
    for i, body in enumerate(MAP_BODIES):
        lines += [f"def m{i}(r):", "    " + body, ""]
    for i, body in enumerate(REDUCE_BODIES):
        lines += [f"def g{i}(rows):", "    " + body, ""]
    path = tmp_path_factory.mktemp("generated") / "generated_functions.py"
    path.write_text("\n".join(lines))
    sys.path.insert(0, str(path.parent))
    try:
        return importlib.import_module("generated_functions")
    finally:
        sys.path.remove(str(path.parent))


def _pool_functions():
    fns = []
    for p, w in itertools.product("ab", "xy"):
        fields = (f"{p}_k", f"{p}_v", f"{p}_s")
        fns += [(f, fields, "map") for f in soundness_pool.maps(p) + soundness_families.unary(p, w)]
        fns += [(f, fields, "filter") for f in soundness_pool.maps(p)]
        fns += [(f, fields, "reduce") for f in soundness_pool.reduces(p) + soundness_families.reducers(p, w)]
    sides = (("a_k", "a_v", "a_s"), ("b_k", "b_v", "b_s"))
    binary = soundness_pool.COGROUPS + soundness_families.COGROUPS
    fns += [(f, sides, "cogroup") for f in binary]
    fns += [(f, sides, kind) for f in soundness_pool.MATCH_FNS + soundness_families.BINARY if f is not None
            for kind in ("match", "cross")]
    return fns


def _case_functions():
    fns = []
    for n in range(1, 21):
        module = importlib.import_module(f"tests.soundness_cases.s{n:03d}")
        for name, f in vars(module).items():
            if inspect.isfunction(f) and f.__module__ == module.__name__ and name not in ("reset", "build"):
                params = len(inspect.signature(f).parameters)
                kinds = ("map", "filter", "reduce") if params == 1 else ("match", "cross", "cogroup")
                spec = FIELDS if params == 1 else (FIELDS, ("l", "m"))
                fns += [(f, spec, kind) for kind in kinds]
    return fns


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    generated = _generated_module(tmp_path_factory)
    fns = [(e.fn, e.spec.input_fields(), e.spec.kind) for e in entries()]
    fns += _pool_functions() + _case_functions()
    for i in range(len(MAP_BODIES)):
        fns += [(getattr(generated, f"m{i}"), FIELDS, kind) for kind in ("map", "filter")]
    for i in range(len(REDUCE_BODIES)):
        fns += [(getattr(generated, f"g{i}"), FIELDS, "reduce")]
    return fns


def test_the_corpus_is_a_few_hundred_functions(corpus):
    assert len({id(f) for f, _, _ in corpus}) >= 300


def test_no_function_of_the_corpus_meets_an_internal_error(corpus):
    failed = []
    for fn, fields, kind in corpus:
        props = analyze(fn, fields, kind=kind)
        if props.origin == "internal" or INTERNAL_ERROR in props.model_reason:
            failed.append(f"{fn.__module__}.{fn.__qualname__} as {kind}: {props.model_reason}")
    assert not failed, "\n".join(failed)


def test_an_internal_error_says_it_is_udflows_fault(monkeypatch):
    from udflow.analysis import analyzer

    def broken(*args, **kwargs):
        raise AttributeError("'Lit' object has no attribute 'test'")

    monkeypatch.setattr(analyzer, "_summarize", broken)
    props = analyzer.run(_plain, (frozenset(FIELDS),), "map")
    assert props.origin == "internal" and not props.pure
    assert "a bug in udflow, not in this function" in props.model_reason
    assert "AttributeError" in props.model_reason


def _plain(r):
    return {**r, "x": r["v"]}


def test_yield_from_rows_is_an_exact_forwarding_reduce():
    """repro 021: the simplest forwarding Reduce crashed the analysis"""
    from udflow.analysis.model import GroupFilterModel

    props = analyze(_forward, FIELDS, kind="reduce")
    assert props.pure and props.forwards_groups and not props.writes
    assert isinstance(props.model, GroupFilterModel) and str(props.model) == "keep group if True"


def _forward(rows):
    yield from rows
