"""One key semantics on both engines (issue 15, item 1): keys of types the engines compare
differently are refused, when the flow is built if the types are known, when the keys meet
otherwise; the key cases both engines accept give the same bag on both."""

import datetime
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import udflow as uf
from udflow.batch.verify import bag
from udflow.errors import FlowConstructionError, KeyTypeError


ZONES = {"z_id": "string", "z_name": "string"}


@pytest.fixture
def files(tmp_path):
    """An int64 parquet key and a CSV key declared as strings (inferred, it would be an int),
    as in the report: 0..89 on both sides."""
    parquet = tmp_path / "trips.parquet"
    pq.write_table(pa.table({"zone_id": pa.array(range(90), pa.int64()),
                             "fare": pa.array([1.5 * i for i in range(90)], pa.float64())}), parquet)
    csv = tmp_path / "zones.csv"
    csv.write_text("z_id,z_name\n" + "".join(f"{i},zone {i}\n" for i in range(90)))
    return str(parquet), str(csv)


def test_an_int_parquet_key_joined_with_a_csv_key_is_refused_naming_both(files):
    parquet, csv = files
    trips, zones = uf.source("trips", path=parquet), uf.source("zones", path=csv, schema=ZONES)
    with pytest.raises(FlowConstructionError) as info:
        trips.match(zones, on=("zone_id", "z_id"))
    message = str(info.value)
    assert "key field 'zone_id' of Source(trips) is int" in message
    assert "key field 'z_id' of Source(zones) is str" in message


def test_the_type_of_a_key_is_followed_through_operators_that_do_not_write_it(files):
    parquet, csv = files
    trips = uf.source("trips", path=parquet).filter(lambda r: r["fare"] > 3)
    zones = uf.source("zones", path=csv, schema=ZONES).map(lambda r: {**r, "z_upper": r["z_name"].upper()})
    with pytest.raises(FlowConstructionError, match="'zone_id' of Filter.* is int .* 'z_id' of Map.* is str"):
        trips.cogroup(zones, on=("zone_id", "z_id"), f=lambda ls, rs: iter([{"n": len(ls) + len(rs)}]))


@pytest.mark.parametrize("left, right", [
    ([1, 2, 3], ["1", "2", "3"]),
    ([1.0, 2.0], [Decimal("1"), Decimal("2")]),
    ([True, False], [1, 0]),
    ([datetime.date(2024, 1, 1)], [datetime.datetime(2024, 1, 1)]),
])
def test_in_memory_keys_of_incomparable_types_are_refused(left, right):
    a = uf.source("a", rows=[{"ka": v} for v in left])
    b = uf.source("b", rows=[{"kb": v} for v in right])
    with pytest.raises(FlowConstructionError, match="key field 'ka' of Source\\(a\\) is .* key field 'kb'"):
        a.match(b, on=("ka", "kb"))


def test_the_check_reads_each_sources_own_rows():
    """Two sources alike but for their rows (nodes compare without rows): each is judged by its own."""
    right = uf.source("b", rows=[{"kb": 1}])
    uf.source("a", rows=[{"ka": 1}]).match(right, on=("ka", "kb"))
    with pytest.raises(FlowConstructionError, match="'ka' of Source\\(a\\) is str"):
        uf.source("a", rows=[{"ka": "1"}]).match(right, on=("ka", "kb"))


def test_a_source_field_of_values_one_column_cannot_hold_is_refused():
    with pytest.raises(FlowConstructionError, match="field 'k' holds values of different types \\(int, str\\)"):
        uf.source("a", rows=[{"k": 1}, {"k": "1"}])


def _made_key(files):
    """A key created by a function: its type is known only when the keys meet."""
    parquet, csv = files
    trips = uf.source("trips", path=parquet).map(lambda r: {**r, "zone": r["zone_id"] * 1})
    return trips.match(uf.source("zones", path=csv, schema=ZONES), on=("zone", "z_id"))


def test_a_key_created_by_a_function_is_refused_by_the_reference_when_the_keys_meet(files):
    with pytest.raises(KeyTypeError, match="key field 'zone' holds int values and key field 'z_id' holds str"):
        _made_key(files).collect(engine="reference")


@pytest.mark.spark
def test_a_key_created_by_a_function_is_refused_by_spark_too(files, spark):
    """Spark would cast the string and find 90 rows where Python finds none."""
    with pytest.raises(KeyTypeError, match="key field 'zone' holds int values and key field 'z_id' holds str"):
        _made_key(files).collect(spark=spark)


@pytest.mark.spark
def test_converted_keys_give_the_same_bag_on_both_engines(files, spark):
    parquet, csv = files
    zones = uf.source("zones", path=csv, schema=ZONES).map(lambda r: {**r, "z_key": int(r["z_id"])})
    flow = uf.source("trips", path=parquet).match(zones, on=("zone_id", "z_key"))
    reference = flow.collect(engine="reference")
    assert len(reference) == 90
    assert bag(reference) == bag(flow.collect(spark=spark))


@pytest.mark.spark
def test_the_documented_semantics_hold_on_both_engines(spark):
    """int with Decimal compare by value; None matches nothing in a Match and is one group of
    its own in a Reduce and a CoGroup; strings compare exactly."""
    left = uf.source("l", rows=[{"lk": 1, "ls": "a"}, {"lk": 2, "ls": "A"}, {"lk": None, "ls": "a "},
                                {"lk": None, "ls": None}])
    right = uf.source("r", rows=[{"rk": Decimal("1.00"), "rs": "a"}, {"rk": Decimal("2.5"), "rs": "A"},
                                 {"rk": None, "rs": None}])

    def count(ls, rs):
        yield {"left": len(ls), "right": len(rs)}

    def group(rows):
        rows = list(rows)
        yield {"lk": rows[0]["lk"], "n": len(rows)}

    flows = {
        "int = decimal": left.match(right, on=("lk", "rk")),
        "str = str": left.match(right, on=("ls", "rs")),
        "cogroup": left.cogroup(right, on=("lk", "rk"), f=count),
        "reduce": left.reduce(["lk"], group),
    }
    expected = {
        "int = decimal": 1,  # 1 == Decimal("1.00"); 2 != 2.5; None matches nothing
        "str = str": 2,  # "a" and "A" exactly; "a " and None find nothing
        "cogroup": 4,  # groups 1, 2, 2.5 and None (both sides' None keys together)
        "reduce": 3,  # groups 1, 2 and None
    }
    for name, flow in flows.items():
        reference = flow.collect(engine="reference")
        assert len(reference) == expected[name], name
        assert bag(reference) == bag(flow.collect(spark=spark)), name


# ---------------------------------------------------------------------------
# verify: the plan as written on both engines
# ---------------------------------------------------------------------------


def _keep_all(spark_lowering):
    """An operator type with the reference semantics "keep every record" and the given Spark
    lowering: the identity agrees, a lowering that drops records is a planted disagreement."""
    from udflow.analysis.properties import UdfProperties
    from udflow.plan import OperatorType

    def properties(fields, params):
        return UdfProperties(kind="custom", reads=frozenset(), writes=frozenset(), emits=(1, 1),
                             card_reads=frozenset(), copy=True, pure=True, output_fields=frozenset(fields[0]),
                             side_reads=(frozenset(),), origin="annotation", location="KeepAll")

    return OperatorType("KeepAll", 1, reference=lambda bags, params: [dict(r) for r in bags[0]],
                        output_fields=lambda fields, params: fields[0], properties=properties,
                        spark=spark_lowering)


@pytest.mark.spark
def test_compare_engines_catches_a_planted_disagreement_and_passes_an_agreement(files, spark):
    from udflow.batch.verify import compare_engines

    parquet, csv = files
    zones = uf.source("zones", path=csv, schema=ZONES).map(lambda r: {**r, "z_key": int(r["z_id"])})
    joined = uf.source("trips", path=parquet).match(zones, on=("zone_id", "z_key"))
    honest = joined.apply(_keep_all(lambda frames, params: frames[0]))
    planted = joined.apply(_keep_all(lambda frames, params: frames[0].where("zone_id > 0")))
    assert compare_engines(honest.root, 40, spark) is None
    difference = compare_engines(planted.root, 40, spark)
    assert difference is not None
    assert "1 record(s) only on the reference, 0 only on Spark" in difference
    assert "'zone_id': 0" in difference
