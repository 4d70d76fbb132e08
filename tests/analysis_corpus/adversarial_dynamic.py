"""Adversarial: reflection and dynamic code. getattr/setattr/__dict__, eval/exec,
dynamic field names, iteration over all keys, calls to unknown functions."""

import hashlib
import json
import zlib

from tests.analysis_corpus import Spec

# -- getattr / setattr / __dict__ ------------------------------------------------


def attr_by_data(r):
    name = "real" if r["a"] > 0 else "imag"
    return {**r, "v": getattr(r["b"], name)}


class Box:
    pass


def set_attr(r):
    box = Box()
    setattr(box, "a", r["a"])
    return r


def dict_peek(r):
    return {**r, "n": len(r.__dict__)}


def vars_peek(r):
    return {**r, "n": len(vars(r))}


def constant_getattr(r):
    return {**r, "v": getattr(r["a"], "real")}


# -- eval / exec -----------------------------------------------------------------


def eval_expr(r):
    return {**r, "v": eval("r['a'] + 1")}


def exec_stmt(r):
    exec("x = 1")
    return r


def compiled(r):
    code = compile("1 + 1", "<corpus>", "eval")
    return {**r, "v": code}


_namespace: dict = {}
exec("def made_by_exec(r):\n    return {**r, 'x': r['a']}\n", _namespace)
made_by_exec = _namespace["made_by_exec"]

# -- dynamic field names ---------------------------------------------------------


def name_from_value(r):
    return {**r, "v": r["f" + str(r["a"])]}


def dynamic_output_name(r):
    out = dict(r)
    out["x_" + str(r["a"])] = 1
    return out


def chosen_field(r):
    name = "a" if r["c"] > 0 else "b"
    return {**r, "v": r[name]}


def field_named_by_field(r):
    return {**r, "v": r[r["c"]]}


# -- iteration over all keys -------------------------------------------------------


def upper_all(r):
    return {k: str(v).upper() for k, v in r.items()}


def count_fields(r):
    return {**r, "n": len(r)}


def first_key(r):
    keys = list(r)
    return {**r, "first": keys[0]}


def sum_values(r):
    return {**r, "s": sum(r.values())}


def copy_by_loop(r):
    out = {}
    for k in r:
        out[k] = r[k]
    return out


def record_inside(r):
    return {"a": r["a"], "orig": [r]}


# -- calls to unknown functions ----------------------------------------------------


def to_json(r):
    return {**r, "j": json.dumps(r)}


def hashed(r):
    return {**r, "h": hashlib.md5(str(r["a"]).encode()).hexdigest()}


class Scorer:
    def score(self, r):
        return r["a"]


SCORER = Scorer()


def scored(r):
    return {**r, "s": SCORER.score(r)}


def checksum(r):
    return {**r, "crc": zlib.crc32(bytes(r["a"]))}


def _h1(x):
    return _h2(x) + 1


def _h2(x):
    return _h3(x) + 1


def _h3(x):
    return _h4(x) + 1


def _h4(x):
    return _h5(x) + 1


def _h5(x):
    return x["a"]


def too_deep(r):
    return {**r, "depth": _h1(r)}


def _fact(n):
    return 1 if n <= 1 else n * _fact(n - 1)


def recursive_helper(r):
    return {**r, "f": _fact(r["a"])}


EXPECTED = {
    "attr_by_data": Spec("map", "a b c", reads="a b", writes="v", category="getattr-setattr-dict", impure=True),
    "set_attr": Spec("map", "a b", category="getattr-setattr-dict", impure=True),
    "dict_peek": Spec("map", "a b", writes="n", category="getattr-setattr-dict", impure=True),
    "vars_peek": Spec("map", "a b", writes="n", category="getattr-setattr-dict", impure=True),
    # pure in truth: a constant attribute name
    "constant_getattr": Spec("map", "a b", reads="a", writes="v", category="getattr-setattr-dict"),
    "eval_expr": Spec("map", "a b", reads="a", writes="v", category="eval-exec", impure=True),
    "exec_stmt": Spec("map", "a b", category="eval-exec", impure=True),
    "compiled": Spec("map", "a b", writes="v", category="eval-exec", impure=True),
    "made_by_exec": Spec("map", "a b", reads="a", writes="x", category="eval-exec", impure=True),
    "name_from_value": Spec("map", "a b f1 f2", reads="a f1 f2", writes="v", category="dynamic-field-names",
                            impure=True),
    "dynamic_output_name": Spec("map", "a b", reads="a", category="dynamic-field-names", impure=True),
    # pure in truth: the name is one of two constants
    "chosen_field": Spec("map", "a b c", reads="a b c", writes="v", category="dynamic-field-names"),
    "field_named_by_field": Spec("map", "a b c", reads="a b c", writes="v", category="dynamic-field-names",
                                 impure=True),
    "upper_all": Spec("map", "a b", reads="a b", writes="a b", category="all-keys", impure=True),
    "count_fields": Spec("map", "a b", writes="n", category="all-keys", impure=True),
    "first_key": Spec("map", "a b", writes="first", category="all-keys", impure=True),
    "sum_values": Spec("map", "a b", reads="a b", writes="s", category="all-keys", impure=True),
    "copy_by_loop": Spec("map", "a b", category="all-keys", impure=True),
    "record_inside": Spec("map", "a b", writes="b orig", category="all-keys", impure=True),
    "to_json": Spec("map", "a b", reads="a b", writes="j", category="unknown-calls", impure=True),
    # pure in truth, and known so: a digest's constructor makes a new object (`analysis.known`)
    "hashed": Spec("map", "a b", reads="a", writes="h", category="unknown-calls"),
    "scored": Spec("map", "a b", reads="a", writes="s", category="unknown-calls", impure=True),
    "checksum": Spec("map", "a b", reads="a", writes="crc", category="unknown-calls", impure=True),
    "too_deep": Spec("map", "a b", reads="a", writes="depth", category="unknown-calls", impure=True),
    "recursive_helper": Spec("map", "a b", reads="a", writes="f", category="unknown-calls", impure=True),
}
