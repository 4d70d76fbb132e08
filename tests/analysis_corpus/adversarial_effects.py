"""Adversarial: effects. Randomness, time, I/O and logging, exceptions on some records."""

import datetime
import logging
import os
import random
import time
from datetime import datetime as dt
from random import choice

from tests.analysis_corpus import Spec

# -- randomness -----------------------------------------------------------------


def jitter(r):
    return {**r, "a": r["a"] + random.random()}


def sample_half(r):
    if random.random() < 0.5:
        yield r


def shuffled(rows):
    rows = list(rows)
    random.shuffle(rows)
    yield from rows


def pick_one(r):
    return {**r, "c": choice([1, 2, 3])}


# -- time -------------------------------------------------------------------------


def stamp(r):
    return {**r, "ts": time.time()}


def today(r):
    return {**r, "d": datetime.date.today()}


def recent(r):
    return r["a"] > time.monotonic() - 5


def this_year(r):
    return {**r, "y": dt.now().year}


# -- I/O and logging ---------------------------------------------------------------


def print_a(r):
    print(r["a"])
    return r


LOG = logging.getLogger("udflow.corpus")


def warn_negative(r):
    if r["a"] < 0:
        LOG.warning("negative a: %s", r["a"])
    return r


def append_to_file(r):
    with open(os.devnull, "a") as fh:
        fh.write(str(r["a"]))
    return r


def home_dir(r):
    return {**r, "home": os.environ.get("HOME")}


# -- exceptions on some records ----------------------------------------------------


def reject_negative(r):
    if r["a"] < 0:
        raise ValueError("negative a")
    return r


def assert_positive(r):
    assert r["b"] > 0
    return r


def strict_ratio(r):
    if r["b"] == 0:
        raise ZeroDivisionError("b is zero")
    return {**r, "q": r["a"] / r["b"]}


def swallow_errors(r):
    try:
        q = 10 // r["a"]
    except ZeroDivisionError:
        return None
    return {**r, "q": q}


EXPECTED = {
    "jitter": Spec("map", "a b", reads="a", writes="a", category="randomness", impure=True),
    "sample_half": Spec("map", "a b", emits=(0, 1), category="randomness", impure=True),
    "shuffled": Spec("reduce", "k a b", emits=(0, None), category="randomness", impure=True),
    "pick_one": Spec("map", "a b", writes="c", category="randomness", impure=True),
    "stamp": Spec("map", "a b", writes="ts", category="time", impure=True),
    "today": Spec("map", "a b", writes="d", category="time", impure=True),
    "recent": Spec("filter", "a b", reads="a", emits=(0, 1), category="time", impure=True),
    "this_year": Spec("map", "a b", writes="y", category="time", impure=True),
    "print_a": Spec("map", "a b", reads="a", category="io-logging", impure=True),
    "warn_negative": Spec("map", "a b", reads="a", category="io-logging", impure=True),
    "append_to_file": Spec("map", "a b", reads="a", category="io-logging", impure=True),
    "home_dir": Spec("map", "a b", writes="home", category="io-logging", impure=True),
    "reject_negative": Spec("map", "a b", reads="a", category="exceptions", impure=True),
    "assert_positive": Spec("map", "a b", reads="b", category="exceptions", impure=True),
    "strict_ratio": Spec("map", "a b", reads="a b", writes="q", category="exceptions", impure=True),
    # pure in truth: the handler's path depends on a; any superset is fine
    "swallow_errors": Spec("map", "a b", reads="a", writes="q", emits=(0, 1), card_reads="a",
                           category="exceptions"),
}
