"""mx.container: String is a str, ADT a tagged indexable tuple, Map a read-only mapping."""
import pickle

import pytest

import mxjax as mx
from mxjax.container import ADT, Map, String, getitem_helper, register_object


def test_string_is_a_str_as_in_mxnet():
    s = String("abc")
    assert isinstance(s, str) and isinstance(s, mx.container.PyNativeObject)
    assert s + "d" == "abcd" and s.upper() == "ABC"
    assert pickle.loads(pickle.dumps(s)) == "abc"


def test_adt_tag_fields_and_indexing():
    a = ADT(3, [String("x"), String("y"), String("z")])
    assert a.tag == 3 and len(a) == 3
    assert (a[0], a[-1]) == ("x", "z")
    assert a[0:2] == ["x", "y"] and a[::-1] == ["z", "y", "x"]
    assert a == ADT(3, ["x", "y", "z"]) and a != ADT(2, ["x", "y", "z"])
    with pytest.raises(IndexError, match="index 3 out of range for size 3"):
        a[3]
    with pytest.raises(IndexError):
        a[-4]
    with pytest.raises(TypeError, match="integers or slices"):
        a["0"]


def test_map_reads_like_a_dict_and_cannot_be_written():
    m = Map({"a": 1, "b": 2})
    assert m["a"] == 1 and "b" in m and "c" not in m and len(m) == 2
    assert m.items() == [("a", 1), ("b", 2)] and m.get("c", 7) == 7 and dict(m) == {"a": 1, "b": 2}
    with pytest.raises(KeyError):
        m["c"]
    with pytest.raises(TypeError):
        m["c"] = 3


def test_getitem_helper_and_register_object():
    data = [10, 20, 30]
    assert getitem_helper(data, lambda o, i: o[i] * 2, 3, -1) == 60
    assert getitem_helper(data, lambda o, i: o[i], 3, slice(1, None)) == [20, 30]

    @register_object("test.Thing")
    class Thing(mx.container.Object):
        pass

    assert Thing.type_key == "test.Thing"
    assert register_object(type("Other", (mx.container.Object,), {})).type_key == "Other"


def test_tvmop_reports_no_tvm_library():
    from mxjax import tvmop
    assert tvmop.Features is mx.runtime.Features
    assert not tvmop.Features().is_enabled("TVM_OP")
