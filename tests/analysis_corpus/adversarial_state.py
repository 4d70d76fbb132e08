"""Adversarial: shared state. Globals read and written, closures over mutable
cells, `nonlocal`, argument mutation. All of these must come out impure."""

from tests.analysis_corpus import Spec

# -- globals read and written -------------------------------------------------

COUNTER = 0


def count_calls(r):
    global COUNTER
    COUNTER += 1
    return {**r, "n": COUNTER}


SEEN = set()


def dedup_global(r):
    if r["a"] in SEEN:
        return None
    SEEN.add(r["a"])
    return r


LIMIT = 3


def set_limit(value):
    global LIMIT
    LIMIT = value


def under_limit(r):
    return r["a"] < LIMIT


CACHE = {}


def memo_global(r):
    CACHE[r["a"]] = r["b"]
    return r


# -- closures over mutable cells ----------------------------------------------


def make_counter():
    seen = [0]

    def tag(r):
        seen[0] += 1
        return {**r, "seq": seen[0]}

    return tag


tag_with_counter = make_counter()


def make_collector():
    bucket = []

    def collect(r):
        bucket.append(r["a"])
        return r

    return collect


collect_a = make_collector()


def make_cache():
    cache = {}

    def lookup(r):
        if r["a"] not in cache:
            cache[r["a"]] = r["b"]
        return {**r, "first_b": cache[r["a"]]}

    return lookup


first_b_seen = make_cache()

# -- nonlocal -------------------------------------------------------------------


def make_running():
    total = 0

    def running(r):
        nonlocal total
        total += r["a"]
        return {**r, "running": total}

    return running


running_total_map = make_running()


def make_previous():
    last = None

    def remember(r):
        nonlocal last
        prev, last = last, r["a"]
        return {**r, "prev": prev}

    return remember


previous_a = make_previous()


def make_toggle():
    state = False

    def flip(r):
        nonlocal state
        state = not state
        if state:
            yield r

    return flip


every_other = make_toggle()


def make_reader():
    n = 1

    def bump():
        nonlocal n
        n += 1

    def read_n(r):
        return {**r, "n": n}

    return read_n, bump


read_rebound, _bump = make_reader()

# -- argument mutation ----------------------------------------------------------


def mutate_then_project(r):
    r["a"] = 0
    return {"b": r["b"]}


def append_to_field(r):
    r["a"].append(1)
    return r


def match_mutates_left(left, right):
    left["seen_c"] = right["c"]
    return left


def filter_mutates(r):
    r["a"] = r["a"] + 1
    return True


def reduce_mutates_rows(rows):
    rows = list(rows)
    for r in rows:
        r["a"] = 0
    yield {"k": rows[0]["k"]}


EXPECTED = {
    "count_calls": Spec("map", "a b", writes="n", category="globals", impure=True),
    "dedup_global": Spec("map", "a b", reads="a", emits=(0, 1), category="globals", impure=True),
    "under_limit": Spec("filter", "a b", reads="a", emits=(0, 1), category="globals", impure=True),
    "memo_global": Spec("map", "a b", reads="a b", category="globals", impure=True),
    "tag_with_counter": Spec("map", "a b", writes="seq", category="mutable-closure", impure=True),
    "collect_a": Spec("map", "a b", reads="a", category="mutable-closure", impure=True),
    "first_b_seen": Spec("map", "a b", reads="a b", writes="first_b", category="mutable-closure", impure=True),
    "running_total_map": Spec("map", "a b", reads="a", writes="running", category="nonlocal", impure=True),
    "previous_a": Spec("map", "a b", reads="a", writes="prev", category="nonlocal", impure=True),
    "every_other": Spec("map", "a b", emits=(0, 1), category="nonlocal", impure=True),
    "read_rebound": Spec("map", "a b", writes="n", category="nonlocal", impure=True),
    "mutate_then_project": Spec("map", "a b", writes="a", category="argument-mutation", impure=True),
    "append_to_field": Spec("map", "a b", writes="a", category="argument-mutation", impure=True),
    "match_mutates_left": Spec("match", "a b | c d", reads="c", writes="seen_c c d",
                               category="argument-mutation", impure=True),
    "filter_mutates": Spec("filter", "a b", reads="a", emits=(1, 1), category="argument-mutation", impure=True),
    "reduce_mutates_rows": Spec("reduce", "k a b", writes="a b", category="argument-mutation", impure=True),
}
