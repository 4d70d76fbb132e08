"""The coverage table of issue 29 ("What must be shown"): how the functions of a corpus
written the way data engineers write them run on Spark, and whether they give Python's
records there.

    python -m bench.coverage                       # classify only (Spark lowers, runs nothing): the table
    python -m bench.coverage --before 84bc8b8      # ... beside the classification at that commit
    python -m bench.coverage --check               # ... and run every flow on Spark and on the
                                                   #     reference interpreter, comparing records
    python -m bench.coverage --out bench/results/coverage.md
    python -m bench.coverage --check --resume RUN.json   # ... keeping what an earlier run's --json found
    python -m bench.coverage --from-json RUN.json --out bench/results/coverage.md

Every function of `bench/coverage_corpus` (`FUNCTIONS = [(fn, kind, fields)]`) becomes
`uf.source("t", rows=ROWS).map(fn)` (or `.filter(fn)`) over generated rows for its fields,
and is classified by its physical plan (`flow.physical().root`, udflow/physical.py):
`native` with no Python terms is *fully native*, `native` with Python terms *partly
native*, anything else *Python*, with `Step.reason` naming the construct. The physical
plan reads the model before the input's types, so a native step is then lowered over its
clean rows (`to_spark`, no job run): one whose whole function runs in Python on those
types is *Python* too, "planned native" (`lowered_as_python`).

`--check` runs each flow on a local Spark session and on the reference interpreter and
compares the records as bags, values and types (1 vs 1.0, True vs 1, naive vs aware
datetimes, -0.0 vs 0.0 told apart, NaN equal to NaN, Decimals by value). Rows come in
three sets per function, from a fixed seed (`rows_for`): `edge` (None, NaN, -0.0, inf,
1e308, 0, -1, 2**31, 2**62, -2**63, "", padded and non-ASCII strings, extreme dates...),
`clean` (the same values without None) and `plain` (ordinary values of the field's kind).
Each row is first run alone on the reference interpreter; then Spark runs

- every row (of the three sets) on which Python does not raise, in one flow: the bags
  must be equal;
- per exception type Python raises, up to 12 rows raising it, in one flow: Spark must raise
  that type (udflow wraps it: the type named in `raised X`). These run after every
  function's values, round-robin, the most telling types first, while `--budget` lasts.

An error udflow raises that is not a function's own (a `UdflowError` refusing a value, e.g.
an output field holding a list) counts as *refused*, not as a difference.
"""

from __future__ import annotations

import argparse
import collections
import datetime as dt
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from decimal import Decimal
from typing import Any, Optional

SEED = 2911
N_ROWS = 40
P_NONE = 0.15  # edge set: a field is None this often
P_EDGE = 0.6  # edge and clean sets: a value is an edge value this often, else a plain one
UTC = dt.timezone.utc

# ---------------------------------------------------------------------------
# Values per family
# ---------------------------------------------------------------------------

EDGE = {
    "int": [0, -1, 1, 2**31, 2**62, -2**63, 2**63 - 1, 2**53 + 1, 42],
    "float": [0.0, -0.0, float("nan"), float("inf"), float("-inf"), 1e308, -1e308, 5e-324, 2.675, 0.5, 2.5,
              -3.75, 1e16, 0.1],
    "str": ["", "  padded ", "Zürich", "İstanbul", "ß", "straße", "🎉 party", "ΣΑΣ", "ǅemal", "a\tb\n", "x",
            "\u00a0nbsp\u2028"],
    "date": [dt.date(1970, 1, 1), dt.date(2000, 2, 29), dt.date(1, 1, 1), dt.date(9999, 12, 31),
             dt.date(1969, 12, 31), dt.date(2024, 12, 25)],
    "datetime": [dt.datetime(1970, 1, 1), dt.datetime(1969, 12, 31, 23, 59, 59, 999999),
                 dt.datetime(2024, 2, 29, 12, 0, 0, 123456), dt.datetime(1, 1, 1),
                 dt.datetime(9999, 12, 31, 23, 59, 59, 999999), dt.datetime(2038, 1, 19, 3, 14, 8)],
    "bool": [True, False],
    "decimal": [Decimal("0.00"), Decimal("-0.01"), Decimal("99999999.99"), Decimal("0.10"), Decimal("19.99"),
                Decimal("-1234.50"), Decimal("-0.00")],
}

# str variants: the values a realistic column of that kind holds (plain), and its own edge values
STR_PLAIN = {
    "email": ["alice@gmail.com", " Bob.Smith@GMAIL.com ", "carol@yahoo.fr", "dave@example.com", "eve@mailinator.com",
              "zoë@gmx.de", "İpek@posta.com.tr", "frank@company.co.uk"],
    "name": ["Alice Smith", "bob jones", "  Carol  Ann ", "Dmitri Ivanov", "Zoë Müller", "İpek Yılmaz",
             "José Álvarez",
             "O'Brien", "Li Wei", "STRASSE Groß"],
    "first": ["Alice", "bob", "Zoë", "İpek", "josé", "Jürgen", "ǆenan"],
    "last": ["Smith", "müller", "Yılmaz", "O'Neil", "Groß"],
    "city": ["Paris", "Zürich", "São Paulo", "İstanbul", "New York", "NYC", "SF", "München", "  Lyon ", "zürich"],
    "country": ["FR", "DE", "US", "GB", "CH", "TR", "BR", "JP", "fr", "IT"],
    "currency": ["EUR", "USD", "GBP", "CHF", "JPY"],
    "status": ["paid", "shipped", "pending", "cancelled", "refunded", "delivered", "PAID", " shipped "],
    "digits": ["00123", "98765", "42", "7", "0001", "75001", "10115"],
    "card": ["4111111111111111", "5500005555555559", "340000000000009"],
    "text": ["great product", "Bad service, want a refund", "ok", "Excellent!! great", "délicieux",
             "terrible awful REFUND", "Straße gesperrt", "İyi"],
    "sku": ["SKU-00123", "sku-77", "BOO-1", "MUS-22", "GAM 9/x", "SKU_ß1"],
    "url": ["https://www.example.com/a/b", "http://shop.fr/", "https://zürich.ch/path/", "https://x.io"],
    "phone": ["+33 6 12 34 56 78", "+1-555-0100", "06-12-34-56-78", "+41 79 123 45 67", "+33 7 00 00 00 00"],
    "csv": ["a,b,c", "red, green,red", "solo", "x,,y"],
    "ref": ["123-abc", "ORD-9981", "--77--", "0042", "A1"],
    "category": ["books", "music", "games", "garden", "toys"],
    "brand": ["Acme", "Zürcher", "Bosch"],
    "isodate": ["2024-03-01", "2023-12-31", "2024-02-29", "2019-07-14"],
    "isots": ["2024-03-01 12:30:00", "2023-12-31 23:59:59", "2024-02-29 00:00:01"],
    "tier": ["gold", "silver", "bronze", "platinum"],
    "feature": ["beta", "legacy", "new"],
    "coupon": ["WELCOME10", "SPRING20", "VIP", "EXPIRED"],
    "unit": ["g", "kg", "lb", "oz"],
    "size": ["S", "M", "L", "XL"],
    "txtype": ["sale", "refund"],
    "number": ["19.99", "-3.5", "1e3", "0", "42"],
    "money": ["$1,234.50", "$0.99", " $12 "],
    "percent": ["12.5%", "0%", "100%"],
    "booltext": ["true", "False", "yes", "0", "1", " Y "],
    "json": ['{"type": "click", "id": 1}', '{"type": "view"}', '{}'],
}
STR_EDGE = {
    "digits": ["", " 12 ", "١٢٣", "-5", "+7", "1_000", "12a", "²", "0" * 30],
    "isodate": ["2024-02-30", "20240301", "2024-3-1"],
    "isots": ["2024-03-01T12:30:00", "2024-13-01 00:00:00"],
    "number": ["nan", "-0", "1_0", "inf", "١٢", "abc", "1e400"],
    "email": ["no-at-sign", "@", "a@b@c"],
    "json": ["[]", "null", "{"],
    "money": ["$", "$1.2.3"],
    "percent": ["%", "-0%"],
    "country": ["ZZ", "fr "],
    "currency": ["XXX", "eur"],
    "status": ["PAID ", "Cancelled"],
    "url": ["https:/", "no-scheme"],
}
INT_PLAIN = {"qty": (1, 20), "count": (1, 5000), "seconds": (1, 86400), "id": (1, 10**7), "small": (1, 10),
             "flags": (0, 15), "age": (5, 90), "pct": (0, 100), "hour": (0, 23), "bit": (0, 1)}
INT_CHOICES = {"status": [0, 1, 2, 3, 9], "zone": [1, 2, 3]}
FLOAT_PLAIN = {"rate": (0.0, 0.5), "pos": (0.5, 1e4), "lat": (-80.0, 80.0), "lon": (-179.0, 179.0),
               "logit": (-6.0, 6.0), "height": (1.4, 2.1), "rating": (1.0, 5.0)}


def plain_value(family: str, rng: random.Random) -> Any:
    base, _, variant = family.partition(":")
    if base == "int":
        if variant in INT_CHOICES:
            return rng.choice(INT_CHOICES[variant])
        lo, hi = INT_PLAIN.get(variant, (1, 1000))
        return rng.randint(lo, hi)
    if base == "float":
        if variant in FLOAT_PLAIN:
            lo, hi = FLOAT_PLAIN[variant]
            return round(rng.uniform(lo, hi), 4)
        return round(rng.uniform(1.0, 500.0), 2)
    if base == "str":
        pool = STR_PLAIN.get(variant)
        return rng.choice(pool) if pool else rng.choice(["alpha", "Beta", "gamma delta", "Zürich", "ok"])
    if base == "date":
        if variant == "maybe" and rng.random() < 0.5:
            return None  # a column whose None means something (not paid yet)
        start = dt.date(1940, 1, 1) if variant == "birth" else dt.date(2018, 1, 1)
        span = 25000 if variant == "birth" else 3000
        return start + dt.timedelta(days=rng.randint(0, span))
    if base == "datetime":
        value = dt.datetime(2023, 1, 1) + dt.timedelta(seconds=rng.randint(0, 2 * 365 * 86400),
                                                       microseconds=rng.choice([0, 0, 500000, 123456]))
        return value.replace(tzinfo=UTC) if variant == "utc" else value
    if base == "bool":
        return rng.random() < 0.5
    if base == "decimal":
        if variant == "fee":
            return Decimal(rng.choice(["0.30", "1.50", "0.00", "2.25"]))
        return Decimal(rng.randint(100, 100000)) / 100
    raise ValueError(f"unknown family {family!r}")


def edge_value(family: str, rng: random.Random) -> Any:
    base, _, variant = family.partition(":")
    if base == "str":
        return rng.choice(EDGE["str"] + STR_EDGE.get(variant, []) + STR_PLAIN.get(variant, []))
    if base == "datetime" and variant == "utc":
        return rng.choice(EDGE["datetime"]).replace(tzinfo=UTC)
    return rng.choice(EDGE[base])


def rows_for(name: str, fields: dict[str, str]) -> dict[str, list[dict]]:
    """The three row sets of one function (seeded by its name): edge, clean, plain."""
    sets = {}
    for which in ("edge", "clean", "plain"):
        rng = random.Random(f"{SEED}:{name}:{which}")
        rows = []
        for _ in range(N_ROWS):
            row = {}
            for f, family in fields.items():
                if which == "plain":
                    row[f] = plain_value(family, rng)
                elif which == "edge" and rng.random() < P_NONE:
                    row[f] = None
                elif rng.random() < P_EDGE:
                    row[f] = edge_value(family, rng)
                else:
                    row[f] = plain_value(family, rng)
            rows.append(row)
        sets[which] = rows
    return sets


# ---------------------------------------------------------------------------
# Classification
# ---------------------------------------------------------------------------


def build(fn, kind: str, rows: list[dict]):
    import udflow as uf

    src = uf.source("t", rows=rows)
    return src.filter(fn) if kind == "filter" else src.map(fn)


def classify(flow) -> tuple[str, str]:
    """(fully native | partly native | python, detail): by `flow.physical().root`, or, on a
    commit before the physical plan, by `udflow.execution.how_it_runs`."""
    if hasattr(flow, "physical"):
        step = flow.physical().root
        if step.how == "native":
            if step.python_terms:
                return "partly native", "; ".join(step.python_terms)
            return "fully native", ""
        return "python", f"({step.how}) {step.reason}"
    from udflow.execution import how_it_runs  # before 542f5af

    text = how_it_runs(flow.root)
    if text == "native":
        return "fully native", ""
    if text.startswith("native, with Python for "):
        return "partly native", text[len("native, with Python for "):]
    m = re.match(r"Python \(([^)]*)\)(?::\s*(.*))?$", text, re.S)
    how = {"scalar UDF": "scalar"}.get(m.group(1), m.group(1)) if m else "?"
    return "python", f"({how}) {m.group(2) or '' if m else text}"


def construct(detail: str) -> str:
    """A Python step's reason as the construct alone: no field names, lines, advice or how."""
    text = re.sub(r"^\([a-z ]+\)\s*", "", detail)
    text = text.split("; native-friendly:")[0]
    text = re.sub(r"\s*\(line \d+\)", "", text)
    text = re.sub(r"^(computes|tests) fields? \S+ (with )?", "", text)
    text = re.sub(r"^(computes|returns|tests)( a value| with)? ", "", text)
    text = re.sub(r"^the expression IR", "an expression the IR", text)
    text = re.sub(r"^value the expression IR", "an expression the IR", text)
    text = re.sub(r"^calls r\[[^]]*\]\.", "calls .", text)
    return text.strip() or "(no reason given)"


CATEGORIES = (  # (category, pattern on the construct), first match wins
    ("a numpy call (the analysis does not see into numpy)", r"numpy\."),
    ("a regular expression", r"\bre\.|Pattern\."),
    ("a loop", r"^a loop"),
    ("a try statement", r"^a try"),
    ("a helper given the whole record", r"your helper"),
    ("a math function without a model", r"math\."),
    ("a date/datetime method, attribute or constructor without a model",
     r"\.(weekday|isoformat|strftime|total_seconds|date|timetuple|isocalendar|astimezone)\(|"
     r"timedelta\(|date\(\)|datetime\(\)|fromisoformat|strptime|\.replace\(\), which has no model yet$"),
    ("a str method without a model", r"the method \.[a-z]+\(\)|a form of str\.|\.isascii"),
    ("an f-string with a format spec or !r", r"f-string"),
    ("Decimal() or .quantize()", r"Decimal\(|quantize"),
    ("a look-up in a list, tuple or nested dict", r"look-up in|dict\.get on"),
    ("a library call the analysis cannot see into", r"impure"),
    ("a tuple, list or dict value", r"tuple"),
    ("planned native, Python on its input's types", r"^planned native"),
    ("an expression the IR cannot express (no construct named)", r"the IR cannot express"),
)


# What the functions whose reason names no construct ("... the expression IR cannot express")
# actually use, read off their source by hand: the table breaks that bucket down with it.
BY_HAND = {
    "a local assigned in if/elif branches, or reassigned under an if": (
        "conditionals.price_band", "conditionals.tier_from_spend", "conditionals.late_fee",
        "conditionals.capped_fee", "conditionals.refund_sign"),
    "the datetime attribute .hour": ("dates.created_hour", "dates.business_hours", "dates.utc_hour",
                                     "dates.late_night"),
    "the timedelta attribute .days": ("dates.days_to_ship", "dates.age_years", "mixed.days_active"),
    "an item of str.split()'s list (s.split(sep)[i], x in s.split(...)[-1])": (
        "strings.email_domain", "strings.url_host", "strings.first_word", "cleaning.first_tag",
        "lookups.blocked_email", "cleaning.email_has_dot_domain", "cleaning.split_name"),
    "len() of str.split() or of a list comprehension": ("strings.word_count", "cleaning.tags_count"),
    "`in` a set literal written in the function": ("lookups.paid_or_shipped", "cleaning.valid_status"),
    "a dict literal written in the function, looked up": ("lookups.local_lookup", "mixed.sku_category"),
    "a list or dict as a field's value": ("mixed.list_field", "mixed.dict_field"),
    "a loop building a list": ("mixed.running_text",),
    "a lambda called in place": ("helpers.total_with_lambda",),
    "str.zfill() inside a concatenation": ("mixed.label_amount",),
}
HAND = {name: what for what, names in BY_HAND.items() for name in names}


def category(detail: str) -> str:
    text = construct(detail)
    for name, pattern in CATEGORIES:
        if re.search(pattern, text):
            return name
    return "other: " + text


def python_how(detail: str) -> str:
    m = re.match(r"^\(([a-z ]+)\)", detail)
    return m.group(1) if m else "?"


def classify_all(only: Optional[str] = None, lowered: bool = True) -> list[dict]:
    """Every corpus function's class (`only`: those whose name holds it); `lowered=False`
    reads the physical plan alone, without lowering each native step (`lowered_as_python`)."""
    from bench import coverage_corpus

    out = []
    for module, fn, kind, fields in coverage_corpus.functions():
        name = f"{module}.{fn.__name__}"
        if only and only not in name:
            continue
        rows = rows_for(name, fields)["edge"]
        try:
            cls, detail = classify(build(fn, kind, rows))
            if cls != "python" and lowered:
                fallback = lowered_as_python(build(fn, kind, rows_for(name, fields)["clean"]))
                if fallback is not None:
                    cls, detail = "python", fallback
        except Exception as exc:  # noqa: BLE001 - a classification failure is a result too
            cls, detail = "error", f"{type(exc).__name__}: {exc}"[:300]
        out.append({"name": name, "module": module, "kind": kind, "class": cls, "detail": detail})
    return out


_WHOLE_FUNCTION = re.compile(r"(ArrowEvalPython|BatchEvalPython|MapInArrow|PythonMapInArrow)[^\n]*\brun\(")


def lowered_as_python(flow) -> Optional[str]:
    """Where a step the physical plan calls native runs its whole function in Python once
    lowered over its input's types (Spark's optimized plan evaluates the function `run`,
    and no Union of a general case holds it): the lowering's reason, as its
    `NativeFallbackWarning` gives it, or a plain one on a commit without that warning.
    None where the step runs as planned, or where lowering raises (a sampled row fails)."""
    import warnings

    import udflow as uf

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            plan = uf.optimize(flow).best.to_spark()._jdf.queryExecution().optimizedPlan().toString()
        except Exception:  # noqa: BLE001 - a function failing on its sample: keep the plan's class
            return None
    if not _WHOLE_FUNCTION.search(plan) or "Union" in plan:
        return None
    said = [str(w.message) for w in caught if w.category.__name__ == "NativeFallbackWarning"]
    why = said[0].split("on its input's types: ", 1)[-1] if said else "the lowering took its Python fallback"
    return f"(scalar) planned native, runs as Python on its input's types: {why}"


# ---------------------------------------------------------------------------
# The classification at an older commit (a git worktree, classification only)
# ---------------------------------------------------------------------------


def classify_at(commit: str) -> list[dict]:
    """Classify the corpus with udflow as it was at `commit`: a temporary worktree holding that
    commit, with this script and the corpus copied in, run in a subprocess; removed after."""
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(here)
    tree = os.path.join(tempfile.gettempdir(), "cov_base")
    subprocess.run(["git", "-C", repo, "worktree", "add", "--detach", tree, commit], check=True,
                   capture_output=True)
    try:
        shutil.copy(os.path.join(here, "coverage.py"), os.path.join(tree, "bench", "coverage.py"))
        shutil.copytree(os.path.join(here, "coverage_corpus"), os.path.join(tree, "bench", "coverage_corpus"),
                        ignore=shutil.ignore_patterns("__pycache__"), dirs_exist_ok=True)
        env = dict(os.environ, PYTHONPATH=tree)
        done = subprocess.run([sys.executable, "-m", "bench.coverage", "--json-only"], cwd=tree, env=env,
                              check=True, capture_output=True, text=True)
        return json.loads(done.stdout)
    finally:
        subprocess.run(["git", "-C", repo, "worktree", "remove", "--force", tree], check=True, capture_output=True)


# ---------------------------------------------------------------------------
# Comparing records
# ---------------------------------------------------------------------------


def canon(v: Any) -> Any:
    """A hashable form of a value that tells apart what Python tells apart: its exact type,
    -0.0 from 0.0, naive from aware; NaN equal to NaN; Decimals by value (1.50 == 1.5). A
    numpy float64 is the float it subclasses, and numpy's bool_ a bool: the documented
    contract (docs/native.md) that Spark gives them back as those, on every path."""
    if type(v).__module__ == "numpy" and getattr(getattr(v, "dtype", None), "kind", "") in ("f", "b"):
        v = v.item()
    t = type(v).__name__
    if isinstance(v, float):
        return (t, "nan" if math.isnan(v) else repr(v))
    if isinstance(v, Decimal):
        if not v.is_finite():
            return (t, str(v))
        return (t, "0" if v == 0 else format(v.normalize(), "f"))
    if isinstance(v, dt.datetime):
        return (t, v.isoformat(), v.tzinfo is None)
    if isinstance(v, dt.date):
        return (t, v.isoformat())
    if isinstance(v, dict):
        return (t, tuple(sorted((k, canon(x)) for k, x in v.items())))
    if isinstance(v, (list, tuple)):
        return (t, tuple(canon(x) for x in v))
    try:
        hash(v)
        return (t, v)
    except TypeError:
        return (t, repr(v))


def canon_record(r: dict) -> tuple:
    return tuple(sorted((k, canon(v)) for k, v in r.items()))


RAISED = re.compile(r"raised ([A-Za-z_][\w.]*)")


def message_of(exc: BaseException) -> str:
    """The first line of an error and its record line: what a report needs."""
    lines = str(exc).splitlines()
    record = next((ln.strip() for ln in lines if ln.strip().startswith("record:")), "")
    return (f"{type(exc).__name__}: {lines[0] if lines else ''}" + (f" | {record}" if record else ""))[:1200]


def outcome_of(call) -> tuple[str, Any, str]:
    """(status, value, message): ("ok", records, ""), ("raised", the Python exception type the
    message names, message), ("guard", the text, message) where udflow's native form raises an
    error of its own (`raised int overflow past 64 bits`), ("refused", "", message) for another
    UdflowError, ("crash", "", message) for anything else."""
    from udflow.errors import UdflowError

    try:
        return "ok", call(), ""
    except Exception as exc:  # noqa: BLE001 - every outcome is a result
        m = RAISED.search(str(exc))
        if m and m.group(1)[:1].isupper():
            return "raised", m.group(1).rsplit(".", 1)[-1], message_of(exc)
        if m:
            return "guard", str(exc).split("raised ", 1)[1].splitlines()[0][:200], message_of(exc)
        if isinstance(exc, UdflowError):
            return "refused", "", message_of(exc)
        return "crash", "", message_of(exc)


def show(v: Any) -> str:
    return repr(v)[:400]


def contract_fields(flow) -> frozenset:
    """The fields the last-bit contract computes (`native_math.contract_calls`: a log, exp or
    sine that is a field's whole value): equal to Python's within CONTRACT_ULPS, not exactly."""
    from udflow.analysis.model import RecordModel
    from udflow.fields import properties_of
    from udflow.spark_backend.native_math import field_contracts

    try:
        model = properties_of(flow.root).model
    except Exception:  # noqa: BLE001 - no model: nothing runs by the contract
        return frozenset()
    if not isinstance(model, RecordModel):
        return frozenset()
    return frozenset(name for c in model.cases for name, _, calls in field_contracts(c) if calls)


def _within_contract(a, b) -> bool:
    from udflow.spark_backend.native_math import CONTRACT_ULPS, ulps_apart

    if not (isinstance(a, float) and isinstance(b, float)) or not (math.isfinite(a) and math.isfinite(b)) \
            or a == 0.0 or b == 0.0:
        return canon(a) == canon(b)
    return ulps_apart(a, b) <= CONTRACT_ULPS


def bag_diff(py: list[dict], sp: list[dict], loose: frozenset = frozenset()) -> Optional[dict]:
    """None where the bags are equal: exactly, but for the `loose` fields (`contract_fields`),
    compared within the contract's ulps between records equal in every other field."""
    def rest(r):
        return canon_record({k: v for k, v in r.items() if k not in loose})

    a = collections.Counter(rest(r) for r in py)
    b = collections.Counter(rest(r) for r in sp)
    if a == b and loose:
        groups = collections.defaultdict(lambda: ([], []))
        for side, records in enumerate((py, sp)):
            for r in records:
                groups[rest(r)][side].append(tuple(r.get(k) for k in sorted(loose)))
        if all(all(_within_contract(x, y) for u, v in zip(sorted(p, key=repr), sorted(q, key=repr)) for x, y in zip(u, v))
               for p, q in groups.values()):
            return None
        a, b = (collections.Counter(canon_record(r) for r in records) for records in (py, sp))
    if a == b:
        return None
    only_py = [r for r in py if (a - b)[canon_record(r)] > 0][:3]
    only_sp = [r for r in sp if (b - a)[canon_record(r)] > 0][:3]
    return {"python_only": [show(r) for r in only_py], "spark_only": [show(r) for r in only_sp],
            "python_records": len(py), "spark_records": len(sp)}


INTERESTING_FIRST = ("ZeroDivisionError", "OverflowError", "ValueError", "KeyError", "IndexError")


def prepare(fn, kind: str, name: str, fields: dict) -> dict:
    """Each row of the three sets run alone on the reference interpreter: the rows on which
    Python returns, and per exception type the rows on which it raises that."""
    ok_rows, raising = [], collections.defaultdict(list)
    ok_plain = []
    for which, rows in rows_for(name, fields).items():
        for row in rows:
            status, value, _ = outcome_of(lambda row=row: build(fn, kind, [row]).collect(engine="reference"))
            if status == "ok":
                ok_rows.append(row)
                if which == "plain":
                    ok_plain.append(row)
            elif status == "raised":
                raising[value].append(row)
            else:  # the reference interpreter refuses the value itself: nothing to compare
                raising["(refused)"].append(row)
    types = sorted((t for t in raising if t != "(refused)"),
                   key=lambda t: (t not in INTERESTING_FIRST, -len(raising[t]), t))
    return {"name": name, "fn": fn, "kind": kind, "ok_rows": ok_rows, "ok_plain": ok_plain, "raising": raising,
            "error_types": types,
            "result": {"name": name, "rows_ok": len(ok_rows), "rows_raising": {k: len(v) for k, v in raising.items()},
                       "differences": [], "refused": [], "compared_values": 0, "compared_errors": 0,
                       "error_types_checked": [], "error_types_skipped": list(types)}}


def check_values(spark, job: dict) -> None:
    """Every row on which Python returns, in one flow: the bags must be equal."""
    result, rows = job["result"], job["ok_rows"]
    if not rows:
        return
    flow = build(job["fn"], job["kind"], rows)
    ref = outcome_of(lambda: flow.collect(engine="reference"))
    got = outcome_of(lambda: flow.collect(spark=spark))
    if ref[0] != "ok":
        result["refused"].append(f"reference on rows that ran alone: {ref[2]}")
    elif got[0] != "ok":
        if got[0] == "refused":
            result["refused"].append(f"values: {got[2]}")
        else:
            kind = "guard" if got[0] == "guard" or "64 bits" in got[2] else got[0]
            result["differences"].append({"kind": kind, "what": "Spark raised where Python returns records",
                                          "spark": got[2], "rows": len(rows)})
        plain = job["ok_plain"]
        if plain and len(plain) < len(rows):  # the values of ordinary rows are still compared
            flow = build(job["fn"], job["kind"], plain)
            ref = outcome_of(lambda: flow.collect(engine="reference"))
            got = outcome_of(lambda: flow.collect(spark=spark))
            if ref[0] == "ok" and got[0] == "ok":
                result["compared_values"] = len(plain)
                diff = bag_diff(ref[1], got[1], contract_fields(flow))
                if diff:
                    result["differences"].append({"kind": "values", "what": "different records (plain rows)", **diff})
            elif ref[0] == "ok" and got[0] == "refused":
                result["refused"].append(f"values of plain rows: {got[2]}")
            elif ref[0] == "ok":
                result["differences"].append({"kind": got[0], "what": "Spark raised on plain rows too",
                                              "spark": got[2], "rows": len(plain)})
    else:
        diff = bag_diff(ref[1], got[1], contract_fields(flow))
        result["compared_values"] = len(rows)
        if diff:
            result["differences"].append({"kind": "values", "what": "different records", **diff})


def check_error(spark, job: dict, exc_type: str) -> None:
    """The rows on which Python raises `exc_type` (at most 12), in one flow: Spark must raise it."""
    result = job["result"]
    rows = job["raising"][exc_type][:12]
    got = outcome_of(lambda: build(job["fn"], job["kind"], rows).collect(spark=spark))
    result["error_types_checked"].append(exc_type)
    result["error_types_skipped"].remove(exc_type)
    if got[0] == "raised" and got[1] == exc_type:
        result["compared_errors"] += len(rows)
    elif got[0] == "refused":
        result["refused"].append(f"errors ({exc_type}): {got[2]}")
    else:
        result["differences"].append({
            "kind": "error type", "what": f"Python raises {exc_type} on each of {len(rows)} rows",
            "rows": [show(r) for r in rows[:3]],
            "spark": got[2] if got[0] != "ok" else f"returned {show(got[1][:3])}"})


def check_all(spark, todo: list, budget_s: float, log=print, previous: Optional[dict] = None) -> list[dict]:
    """Values first for every function, then error types round-robin (the most telling first:
    ZeroDivisionError, OverflowError, ValueError, KeyError, IndexError, then the rest) while
    `budget_s` lasts. `previous`: results of an earlier run by name (`--resume`): what they
    found (the same, or a difference of a named kind) is taken as it is, the rest runs again."""
    started = time.perf_counter()
    jobs = [prepare(fn, kind, f"{m}.{fn.__name__}", fields) for m, fn, kind, fields in todo]
    log(f"reference interpreter, row by row: {time.perf_counter() - started:.0f} s")
    values_done = set()
    for job in jobs:
        old = (previous or {}).get(job["name"])
        # taken as it is: what an earlier run found the same, or different with the kind of difference named
        if old and not old["refused"] and all("kind" in d for d in old["differences"]):
            r = job["result"]
            r["compared_values"], r["compared_errors"] = old["compared_values"], old["compared_errors"]
            r["differences"] = list(old["differences"])
            values_done.add(job["name"])
            for t in old["error_types_checked"]:
                if t in job["error_types"]:
                    job["error_types"].remove(t)
                    r["error_types_skipped"].remove(t)
                    r["error_types_checked"].append(t)
    for i, job in enumerate(jobs, 1):
        if job["name"] in values_done:
            continue
        t = time.perf_counter()
        check_values(spark, job)
        r = job["result"]
        mark = "DIFFERENT" if r["differences"] else "refused" if r["refused"] else "same"
        log(f"[values {i}/{len(jobs)}] {job['name']}: {mark} ({r['compared_values']} rows, "
            f"{time.perf_counter() - t:.1f} s)")
        for d in r["differences"]:
            log("    " + json.dumps(d, ensure_ascii=False, default=str)[:1500])
    for rank in range(max((len(j["error_types"]) for j in jobs), default=0)):
        for job in jobs:
            if rank >= len(job["error_types"]):
                continue
            if time.perf_counter() - started > budget_s:
                log(f"time budget of {budget_s:.0f} s spent: the remaining error types are not checked")
                return [j["result"] for j in jobs]
            exc_type = job["error_types"][rank]
            before = len(job["result"]["differences"])
            check_error(spark, job, exc_type)
            new = job["result"]["differences"][before:]
            log(f"[errors {rank + 1}] {job['name']} {exc_type}: {'DIFFERENT' if new else 'same'}")
            for d in new:
                log("    " + json.dumps(d, ensure_ascii=False, default=str)[:1500])
    return [j["result"] for j in jobs]


# ---------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------

CLASSES = ("fully native", "partly native", "python", "error")


def counts(rows: list[dict]) -> dict[str, collections.Counter]:
    per = collections.defaultdict(collections.Counter)
    for r in rows:
        per[r["module"]][r["class"]] += 1
        per["total"][r["class"]] += 1
    return per


def markdown(after: list[dict], before: Optional[list[dict]], before_commit: str, checks: Optional[list[dict]],
             seconds: float, resumed: str = "", after_state: str = "") -> str:
    from bench import coverage_corpus

    lines = ["# Coverage of a corpus of pipeline functions (issue 29)", "",
             f"Generated by `python -m bench.coverage{' --check' if checks else ''}"
             f"{' --before ' + before_commit if before else ''}` ({dt.date.today().isoformat()}, "
             f"{seconds:.0f} s). {len(after)} one-record functions in `bench/coverage_corpus/` "
             f"({', '.join(coverage_corpus.MODULES)}), each run as `uf.source('t', rows=ROWS).map(fn)` or "
             "`.filter(fn)` and classified by `flow.physical().root`: *fully native* (a native step, no Python "
             "terms), *partly native* (native, with Python terms inside), *Python* (a scalar UDF or batches, "
             "`Step.reason` naming the construct). A step the physical plan calls native is also lowered "
             "over its clean rows (`to_spark`, no job): one that runs its whole function in Python on its "
             "input's types counts as *Python*, \"planned native\" (`lowered_as_python`; before session 37 the "
             "table read the physical plan alone, which counted 11 such functions native).", ""]
    if resumed:
        lines += [f"The Spark check resumed the results of earlier runs (`--resume`, {resumed}): comparisons they "
                  "found equal, or different with the kind of difference named, were kept; the rest ran in this "
                  "one.", ""]
    a = counts(after)
    b = counts(before) if before else None
    modules = list(coverage_corpus.MODULES) + ["total"]
    if b:
        lines += [f"Before: udflow at commit {before_commit} (`udflow.execution.how_it_runs`); after: "
                  f"{after_state or 'the working tree'}.", "",
                  "| module | functions | fully native (before → after) | partly native | Python | "
                  "native at all |", "|---|---:|---:|---:|---:|---:|"]
        for m in modules:
            x, y = b.get(m, collections.Counter()), a[m]
            n = sum(y.values())
            cell = lambda c: f"{x[c]} → {y[c]}"  # noqa: E731
            nat = f"{x['fully native'] + x['partly native']} → {y['fully native'] + y['partly native']} " \
                  f"({(y['fully native'] + y['partly native']) / n:.0%})"
            name = f"**{m}**" if m == "total" else m
            lines.append(f"| {name} | {n} | {cell('fully native')} | {cell('partly native')} | "
                         f"{cell('python')}{' (+' + str(y['error']) + ' errors)' if y['error'] else ''} | {nat} |")
    else:
        lines += ["| module | functions | fully native | partly native | Python |", "|---|---:|---:|---:|---:|"]
        for m in modules:
            y = a[m]
            lines.append(f"| {m} | {sum(y.values())} | {y['fully native']} | {y['partly native']} | {y['python']} |")
    lines.append("")

    if b:
        moved = collections.Counter()
        byname = {r["name"]: r for r in before}
        for r in after:
            old = byname.get(r["name"], {}).get("class")
            if old and old != r["class"]:
                moved[(old, r["class"])] += 1
        if moved:
            lines += ["Functions whose class changed: " + ", ".join(
                f"{n} {o} → {c}" for (o, c), n in moved.most_common()) + ".", ""]

    reasons = collections.Counter(construct(r["detail"]) for r in after if r["class"] == "python")
    hows = collections.Counter(python_how(r["detail"]) for r in after if r["class"] == "python")
    cats = collections.Counter(category(r["detail"]) for r in after if r["class"] == "python")
    lines += ["## Why functions stay in Python (after)", "",
              "Python steps: " + ", ".join(f"{n} {h}" for h, n in hows.most_common()) + ". By kind of construct "
              "(`CATEGORIES` over `Step.reason`):", "", "| kind | functions |", "|---|---:|"]
    lines += [f"| {k} | {n} |" for k, n in cats.most_common()]
    lines.append("")
    unnamed = [r["name"] for r in after if r["class"] == "python" and "IR cannot express" in r["detail"]]
    if unnamed:
        hand = collections.Counter(HAND.get(n, "(not diagnosed)") for n in unnamed)
        lines += [f"The {len(unnamed)} functions whose reason names no construct (\"the expression IR cannot "
                  "express\", `Step.reason` pointing at the line of the `return`) use, read off their source by "
                  "hand (`BY_HAND`):", "", "| construct | functions |", "|---|---:|"]
        lines += [f"| {k} | {n} |" for k, n in hand.most_common()]
        lines.append("")
    lines += ["Every reason, as `Step.reason` words it (field names, lines and advice left out):", "",
              "| reason | functions |", "|---|---:|"]
    lines += [f"| {k} | {n} |" for k, n in reasons.most_common()]
    lines.append("")
    terms = collections.Counter(re.sub(r"\s*\(line \d+\)", "", t).strip()
                                for r in after if r["class"] == "partly native" for t in r["detail"].split("; "))
    lines += ["## The Python terms inside partly native functions (after)", "",
              "| term | functions |", "|---|---:|"]
    lines += [f"| {k} | {n} |" for k, n in terms.most_common()]
    lines.append("")

    if checks is not None:
        diffs = [c for c in checks if c["differences"]]
        refused = [c for c in checks if c["refused"] and not c["differences"]]
        lines += ["## Spark against Python (`--check`)", "",
                  f"Rows per function: {N_ROWS} edge (with None), {N_ROWS} clean (edge values, no None), {N_ROWS} "
                  f"plain (seed {SEED}). Records compared as bags, values and types.", "",
                  "| module | functions | checked | values compared (rows) | error types compared (rows) | "
                  "error types not run (budget) | refused | with differences |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|"]
        per = collections.defaultdict(lambda: collections.Counter())
        for c in checks:
            m = c["name"].split(".")[0]
            for key in (m, "total"):
                per[key]["checked"] += 1
                per[key]["values"] += c["compared_values"]
                per[key]["errors"] += c["compared_errors"]
                per[key]["types"] += len(c["error_types_checked"])
                per[key]["skipped"] += len(c["error_types_skipped"])
                per[key]["refused"] += bool(c["refused"]) and not c["differences"]
                per[key]["diff"] += bool(c["differences"])
        for m in modules:
            p = per[m]
            name = f"**{m}**" if m == "total" else m
            lines.append(f"| {name} | {a[m].total()} | {p['checked']} | {p['values']} | {p['types']} ({p['errors']}) | "
                         f"{p['skipped']} | {p['refused']} | {p['diff']} |")
        lines.append("")
        cls_of = {r["name"]: r["class"] for r in after}
        lines += ["By how they run:", "", "| class | functions | no difference (refused ones included) | different records | native guard "
                  "fired | other difference | refused (no difference) |", "|---|---:|---:|---:|---:|---:|---:|"]
        for cls in CLASSES:
            mine = [c for c in checks if cls_of.get(c["name"]) == cls]
            if not mine:
                continue
            has = lambda c, k: any(d.get("kind") == k for d in c["differences"])  # noqa: E731
            lines.append(f"| {cls} | {len(mine)} | {sum(not c['differences'] for c in mine)} | "
                         f"{sum(has(c, 'values') for c in mine)} | {sum(has(c, 'guard') for c in mine)} | "
                         f"{sum(any(d.get('kind') not in ('values', 'guard') for d in c['differences']) for c in mine)}"
                         f" | {sum(bool(c['refused']) and not c['differences'] for c in mine)} |")
        lines.append("")
        kinds = collections.Counter(d.get("kind", "?") for c in diffs for d in c["differences"])
        lines += [f"Functions with a difference: {len(diffs)}"
                  + (f" ({', '.join(f'{n} {k}' for k, n in kinds.most_common())})" if diffs else "") + ".", ""]
        titles = {"values": "Different records (Spark returns other values than Python, silently)",
                  "error type": "Errors: Python raises, Spark raises another error or returns records",
                  "raised": "Spark raises a Python error where Python returns records",
                  "guard": "Native guards: Spark raises where Python returns a value (ints past 64 bits, "
                           "int / int past 2**53, Decimals past 28 digits: documented limits of the native forms)",
                  "crash": "Spark fails with an error udflow does not name"}
        for kind, title in titles.items():
            these = [(c, d) for c in diffs for d in c["differences"] if d.get("kind") == kind]
            if not these:
                continue
            lines += [f"### {title}", ""]
            for c, d in these:
                lines.append(f"- `{c['name']}` ({cls_of.get(c['name'])}): {d['what']}")
                lines.append("  ```")
                body = {k: v for k, v in d.items() if k not in ("kind", "what")}
                for line in json.dumps(body, indent=1, ensure_ascii=False).splitlines()[:40]:
                    lines.append("  " + line[:600])
                lines.append("  ```")
            lines.append("")
        if refused:
            lines += ["### Refused by udflow (not counted as differences)", ""]
            for c in refused:
                lines.append(f"- `{c['name']}`: {c['refused'][0].splitlines()[0][:300]}")
            lines.append("")

    lines += ["## Every function", "", "| function | kind | class | detail |", "|---|---|---|---|"]
    byname = {r["name"]: r for r in (before or [])}
    for r in after:
        old = byname.get(r["name"])
        was = f" (was {old['class']})" if old and old["class"] != r["class"] else ""
        detail = r["detail"].replace("|", "\\|").replace("\n", " ")[:160]
        lines.append(f"| `{r['name']}` | {r['kind']} | {r['class']}{was} | {detail} |")
    lines.append("")
    return "\n".join(lines)


def after_state() -> str:
    """The commit the working tree is at, and whether udflow/ holds uncommitted changes."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        head = subprocess.run(["git", "-C", here, "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", here, "status", "--porcelain", "--", "udflow"], capture_output=True,
                               text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""
    return f"the working tree at {head}" + (" with uncommitted changes to udflow/" if dirty else "")


def print_table(after: list[dict], before: Optional[list[dict]]) -> None:
    from bench import coverage_corpus

    a = counts(after)
    b = counts(before) if before else None
    print(f"{'module':<14}{'functions':>10}{'fully native':>18}{'partly native':>18}{'python':>14}")
    for m in list(coverage_corpus.MODULES) + ["total"]:
        y = a[m]
        x = b.get(m, collections.Counter()) if b else None
        cell = (lambda c: f"{x[c]:>4} -> {y[c]:<4}") if b else (lambda c: f"{y[c]}")  # noqa: E731
        print(f"{m:<14}{sum(y.values()):>10}{cell('fully native'):>18}{cell('partly native'):>18}"
              f"{cell('python'):>14}")
    reasons = collections.Counter(construct(r["detail"]) for r in after if r["class"] == "python")
    print("\nwhy functions stay in Python:")
    for k, n in reasons.most_common(25):
        print(f"  {n:>4}  {k}")


def main(argv=None) -> int:
    import warnings

    warnings.filterwarnings("ignore", category=RuntimeWarning)  # numpy's on NaN and overflow: Python's values
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="run every flow on Spark and the reference interpreter")
    ap.add_argument("--before", default="", help="a commit to classify beside the working tree (git worktree)")
    ap.add_argument("--out", default="", help="write the markdown table here (bench/results/coverage.md)")
    ap.add_argument("--json", default="", help="write everything as JSON here")
    ap.add_argument("--budget", type=float, default=480.0,
                    help="--check: seconds after which no further error types are run (values always are)")
    ap.add_argument("--resume", default="", help="--check: the --json of an earlier run; run only what it "
                    "did not find the same (differences, refusals, error types its budget left out)")
    ap.add_argument("--from-json", default="", help="write --out from a run's --json (no classification, no Spark)")
    ap.add_argument("--only", default="", help="only functions whose module.name contains this")
    ap.add_argument("--json-only", action="store_true", help=argparse.SUPPRESS)  # classify_at's subprocess
    args = ap.parse_args(argv)

    if args.from_json:  # the table again from a run's --json, without classifying or Spark
        with open(args.from_json) as fh:
            saved = json.load(fh)
        if args.out:
            with open(args.out, "w") as fh:
                fh.write(markdown(saved["after"], saved["before"], saved.get("before_commit") or args.before,
                                  saved["checks"], saved.get("seconds", 0.0), saved.get("resumed", ""),
                                  saved.get("after_state", "")))
            print(f"written to {args.out}")
        return 0

    started = time.perf_counter()
    after = classify_all(args.only or None)
    if args.json_only:
        json.dump(after, sys.stdout)
        return 0
    before = classify_at(args.before) if args.before else None
    print_table(after, before)

    checks, resumed = None, ""
    if args.check:
        from udflow.spark_backend.session import get_session

        spark = get_session()
        from bench import coverage_corpus

        todo = [(m, fn, kind, fields) for m, fn, kind, fields in coverage_corpus.functions()
                if not args.only or args.only in f"{m}.{fn.__name__}"]
        previous = None
        if args.resume:
            with open(args.resume) as fh:
                saved = json.load(fh)
            previous = {c["name"]: c for c in saved["checks"] or []}
            resumed = ", ".join(x for x in (saved.get("resumed", ""), f"{saved.get('seconds', 0):.0f} s") if x)
        checks = check_all(spark, todo, args.budget, log=lambda line: print(line, flush=True), previous=previous)
        n_diff = sum(bool(c["differences"]) for c in checks)
        print(f"\n{len(checks)} functions checked: {n_diff} with differences, "
              f"{sum(bool(c['refused']) and not c['differences'] for c in checks)} refused")

    seconds = time.perf_counter() - started
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(markdown(after, before, args.before, checks, seconds, resumed, after_state()))
        print(f"written to {args.out}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"after": after, "before": before, "before_commit": args.before, "checks": checks,
                       "seconds": seconds, "resumed": resumed, "after_state": after_state()}, fh, indent=1,
                      default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
