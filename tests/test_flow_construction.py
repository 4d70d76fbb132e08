"""Construction-time checks of `udflow.flow`: each malformed tree is refused, naming operator and field."""

import pytest

import udflow as uf
from udflow.errors import FlowConstructionError


def orders():
    return uf.source("orders", rows=[{"o_key": 1, "o_cust": 7}])


def customers():
    return uf.source("customers", rows=[{"c_key": 7, "c_name": "ann"}])


def collect_rows(rows):
    yield from rows


def test_reduce_with_an_empty_key_is_refused():
    with pytest.raises(FlowConstructionError) as err:
        orders().reduce([], collect_rows)
    message = str(err.value)
    assert "Reduce[](collect_rows)" in message
    assert "empty key" in message


def test_reduce_key_that_no_input_carries_is_refused():
    with pytest.raises(FlowConstructionError) as err:
        orders().reduce(["o_nope"], collect_rows)
    message = str(err.value)
    assert "Reduce[o_nope](collect_rows)" in message
    assert "'o_nope'" in message
    assert "Source(orders)" in message


def test_match_key_that_its_right_input_lacks_is_refused():
    with pytest.raises(FlowConstructionError) as err:
        orders().match(customers(), on=("o_cust", "c_missing"))
    message = str(err.value)
    assert "Match(o_cust=c_missing)" in message
    assert "'c_missing'" in message
    assert "right input Source(customers)" in message


def test_cogroup_key_that_its_left_input_lacks_is_refused():
    with pytest.raises(FlowConstructionError) as err:
        orders().cogroup(customers(), on=("o_missing", "c_key"), f=lambda ls, rs: iter(()))
    message = str(err.value)
    assert "CoGroup(" in message and "'o_missing'" in message and "left input" in message


def test_a_field_on_both_sides_of_a_match_is_refused():
    left = uf.source("a", rows=[{"id": 1, "name": "x"}])
    right = uf.source("b", rows=[{"ref": 1, "name": "y"}])
    with pytest.raises(FlowConstructionError) as err:
        left.match(right, on=("id", "ref"))
    message = str(err.value)
    assert "Match(id=ref)" in message
    assert "'name'" in message
    assert "Source(a)" in message and "Source(b)" in message


def test_a_field_on_both_sides_of_a_cross_is_refused():
    left = uf.source("a", rows=[{"id": 1}])
    right = uf.source("b", rows=[{"id": 2}])
    with pytest.raises(FlowConstructionError) as err:
        left.cross(right)
    message = str(err.value)
    assert "Cross(concat)" in message and "'id'" in message


def test_a_prefix_keeps_two_uses_of_one_table_apart():
    rows = [{"n_key": 1, "n_name": "FRANCE"}]
    one = uf.source("nation", rows=rows, prefix="a_")
    two = uf.source("nation", rows=rows, prefix="b_")
    flow = one.match(two, on=("a_n_key", "b_n_key"))
    assert flow.fields == frozenset({"a_n_key", "a_n_name", "b_n_key", "b_n_name"})


@pytest.mark.parametrize(
    "build, label",
    [
        (lambda f: f.map(42), "Map("),
        (lambda f: f.filter("not a function"), "Filter("),
        (lambda f: f.reduce("o_key", None), "Reduce[o_key]("),
        (lambda f: f.match(customers(), on=("o_cust", "c_key"), f=3.5), "Match("),
        (lambda f: f.cross(customers(), f="concat"), "Cross("),
        (lambda f: f.cogroup(customers(), on=("o_cust", "c_key"), f=[1]), "CoGroup("),
    ],
)
def test_a_function_that_is_not_callable_is_refused(build, label):
    with pytest.raises(FlowConstructionError) as err:
        build(orders())
    message = str(err.value)
    assert message.startswith(label)
    assert "must be callable" in message


def test_one_source_used_on_both_sides_is_refused():
    nation = uf.source("nation", rows=[{"n_key": 1}])
    with pytest.raises(FlowConstructionError) as err:
        nation.cross(nation)
    message = str(err.value)
    assert "Cross(concat)" in message
    assert "Source(nation)" in message and "both sides" in message


# -- issue 31, item 5: sources say no to what cannot be right ---------------------------------


def _shop(foreign_keys):
    orders = uf.source("orders", rows=[{"sku": 1, "qty": 2}], foreign_keys=foreign_keys)
    products = uf.source("products", rows=[{"p_sku": 1, "p_name": "x"}], key=["p_sku"])
    return orders.match(products, on=("sku", "p_sku"))


def test_a_foreign_key_to_a_misspelt_table_is_refused_with_the_closest_name():
    with pytest.raises(FlowConstructionError) as err:
        uf.optimize(_shop({("sku",): ("prodcts", ("p_sku",))}))
    assert "the flow reads no table 'prodcts'; did you mean 'products'?" in str(err.value)


def test_a_foreign_key_to_a_misspelt_column_is_refused_with_the_closest_name():
    with pytest.raises(FlowConstructionError) as err:
        uf.optimize(_shop({("sku",): ("products", ("p_skuu",))}))
    assert "table 'products' has no column 'p_skuu'; did you mean 'p_sku'?" in str(err.value)


def test_a_foreign_key_to_a_table_the_flow_does_not_read_is_kept_unused():
    """a schema's foreign keys name every table (TPC-H's lineitem -> part); a flow reads some"""
    assert len(uf.optimize(_shop({("sku",): ("warehouse", ("w_sku",))})).alternatives) >= 1


@pytest.mark.parametrize("build, wrong, right", [
    (lambda: _shop(None).reduce(["p_skuu"], lambda rows: rows), "p_skuu", "p_sku"),
    (lambda: uf.source("orders", rows=[{"sku": 1}], key=["skuu"]), "skuu", "sku"),
    (lambda: uf.source("o", rows=[{"sku": 1}]).match(uf.source("p", rows=[{"p_sku": 1}]), on=("sku", "psku")),
     "psku", "p_sku"),
])
def test_a_misspelt_key_gets_a_did_you_mean(build, wrong, right):
    with pytest.raises(FlowConstructionError) as err:
        build()
    assert f"{wrong!r}" in str(err.value) and f"did you mean {right!r}?" in str(err.value)
