"""mx.attribute: AttrScope nesting, merging and validation; mx.AttrScope at top level."""
import threading

import pytest

import mxjax as mx
from mxjax.attribute import AttrScope, current


def test_scope_nests_and_merges():
    assert current()._attr == {}
    with AttrScope(ctx_group="dev1", lr_mult="0.1"):
        assert current().get(None) == {"ctx_group": "dev1", "lr_mult": "0.1"}
        with mx.AttrScope(ctx_group="dev2"):
            # MXNet 2.0.0b1: {'ctx_group': 'dev2', 'lr_mult': '0.1'}
            assert current()._attr == {"ctx_group": "dev2", "lr_mult": "0.1"}
            # the symbol's own attributes win over the scope's
            assert current().get({"ctx_group": "mine", "x": "1"}) == {
                "ctx_group": "mine", "lr_mult": "0.1", "x": "1"}
        assert current()._attr == {"ctx_group": "dev1", "lr_mult": "0.1"}
    assert current()._attr == {} and current().get({"q": "1"}) == {"q": "1"}


def test_get_returns_a_new_dict():
    scope = AttrScope(a="1")
    attrs = scope.get({"b": "2"})
    attrs["c"] = "3"
    assert scope.get(None) == {"a": "1"}
    given = {"b": "2"}
    assert AttrScope().get(given) is not given


def test_values_must_be_strings():
    with pytest.raises(ValueError, match="Attributes need to be string"):
        AttrScope(x=1)


def test_scope_is_per_thread():
    seen = []
    with AttrScope(group="main"):
        thread = threading.Thread(target=lambda: seen.append(current()._attr))
        thread.start()
        thread.join()
    assert seen == [{}]


def test_top_level_names():
    assert mx.AttrScope is AttrScope and mx.attribute.current is current
    assert mx.attribute.string_types == (str,)


def test_symbols_created_in_a_scope_carry_its_attributes():
    # MXNet 2.0.0b1 lists these (plus its profiler_scope entries) for the same code
    with AttrScope(ctx_group="dev1", lr_mult="0.1"):
        a = mx.sym.var("a")
        fc = mx.sym.FullyConnected(a, num_hidden=3, name="fc")
        with AttrScope(ctx_group="dev2"):
            c = mx.sym.var("c", attr={"x": "1"})
    assert a.list_attr()["ctx_group"] == "dev1" and a.list_attr()["lr_mult"] == "0.1"
    assert {k: c.list_attr()[k] for k in ("ctx_group", "lr_mult", "x")} == {
        "ctx_group": "dev2", "lr_mult": "0.1", "x": "1"}
    assert fc.attr_dict()["fc_weight"]["ctx_group"] == "dev1"
    assert "ctx_group" not in mx.sym.var("outside").list_attr()
