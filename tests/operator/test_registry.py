"""The registry itself: every op is well-formed, exposed by a front-end, and covered by a numeric test."""
import importlib.util
import inspect
import pathlib
import re
import types

import jax
import numpy as onp
import pytest

import mxjax as mx
from mxjax.base import MXNetError
from mxjax.operator import OPS, OpDef, defop, get_op, list_ops

TESTS = pathlib.Path(__file__).resolve().parents[1]
NAMESPACES = ("np", "np.linalg", "np.random", "npx", "npx.random", "nd", "nd.linalg", "nd.contrib", "nd.image",
              "npx.image", "random")


def _frontend_functions():
    """(namespace, public name, op) for every function made from a registered op."""
    found = []
    for path in NAMESPACES:
        module = mx
        for part in path.split("."):
            module = getattr(module, part, None)
        if not isinstance(module, types.ModuleType):
            continue
        for name in dir(module):
            fn = getattr(module, name)
            op = getattr(fn, "op", None)
            if isinstance(op, OpDef):
                found.append((path, name, op))
    return found


def test_registry_is_populated_and_names_unique():
    ops = list_ops()
    assert len(ops) > 300
    for op in ops:
        for name in (op.name, *op.aliases):
            assert OPS[name] is op


@pytest.mark.parametrize("op", list_ops(), ids=lambda op: op.name)
def test_op_is_well_formed(op):
    assert op.doc.strip(), f"{op.name} has no docstring"
    for param in op.params.values():
        if param.default is not None and param.kind != "any" and not callable(param.default):
            # defaults survive MXNet's attribute-string encoding
            assert param.decode(op.encode_params({param.name: param.default})[param.name]) == \
                param.decode(param.default), param


def test_every_public_op_is_exposed_by_a_front_end():
    exposed = {op.name for _, _, op in _frontend_functions()}
    internal = {"_getitem", "_getitem_mask", "_setitem", "_setitem_mask"}
    missing = [op.name for op in list_ops() if op.name not in exposed and op.name not in internal
               and not op.name.startswith("_")]
    assert not missing, f"ops with no front-end function: {missing}"


def _table_driven_names():
    """Op names that test_elemwise.py parametrizes over (its tables are built, not spelled out)."""
    spec = importlib.util.spec_from_file_location("_elemwise_tests", TESTS / "operator" / "test_elemwise.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return set(module.UNARY_OPS) | set(module.BINARY_OPS)


def test_every_op_has_a_numeric_test():
    """Each op is named (by op name, alias or front-end name) in some test module other than this one."""
    text = "\n".join(p.read_text() for p in TESTS.rglob("test_*.py") if p.name != "test_registry.py")
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)) | _table_driven_names()
    names = {}
    for _, public, op in _frontend_functions():
        names.setdefault(op.name, set()).add(public)
    untested = [op.name for op in list_ops() if not op.name.startswith("_jax_")  # mx.sym.from_jax's
                and not ({op.name, *op.aliases, *names.get(op.name, ())} & words)]
    assert not untested, f"ops no test mentions: {untested}"


def test_unknown_and_duplicate_names():
    with pytest.raises(MXNetError, match="not registered"):
        get_op("no_such_op")
    with pytest.raises(MXNetError, match="already registered"):
        defop("add")(lambda x: x)
    with pytest.raises(ValueError, match="unknown parameter"):
        get_op("transpose").decode_params({"axez": "(1, 0)"})


def test_params_decode_from_mxnet_strings():
    op = get_op("transpose")
    assert op.decode_params({"axes": "(1, 0)"}) == {"axes": (1, 0)}
    assert op.encode_params({"axes": (1, 0)}) == {"axes": "(1, 0)"}
    with pytest.raises(ValueError, match="cannot read"):
        get_op("round").decode_params({"decimals": "two"})


def test_signature_conventions():
    op = get_op("clip")
    assert op.inputs == ("a",) and set(op.params) == {"a_min", "a_max"}
    assert inspect.signature(mx.np.add).parameters  # front-ends are ordinary functions
    assert mx.np.add.op is get_op("_npi_add") and mx.np.add.__doc__


def test_unknown_keyword_is_a_type_error():
    with pytest.raises(TypeError, match="unexpected keyword argument 'axes'"):
        mx.np.sqrt(mx.np.ones(2), axes=1)
    with pytest.raises(TypeError, match="at most"):
        mx.np.sqrt(mx.np.ones(2), 1, 2, 3)


def test_default_inference_comes_from_jax():
    import jax
    import numpy as onp

    op = get_op("FullyConnected")
    x, w = jax.ShapeDtypeStruct((4, 3), onp.float32), jax.ShapeDtypeStruct((5, 3), onp.float32)
    out = op.eval_shape(x, w, None, num_hidden=5, no_bias=True)
    assert out.shape == (4, 5) and out.dtype == onp.float32


def test_param_shapes_rule_gives_mxnet_parameter_shapes():
    """An op's ``param_shapes`` rule: the parameter inputs' shapes from the data's, as MXNet infers."""
    fc = get_op("FullyConnected").param_shapes
    assert fc([(2, 3, 4)], {"num_hidden": 5}) == {1: (5, 12), 2: (5,)}
    assert fc([(2, 3, 4)], {"num_hidden": 5, "flatten": False}) == {1: (5, 4), 2: (5,)}
    conv = get_op("Convolution").param_shapes
    assert conv([(1, 4, 9, 9)], {"kernel": (3, 3), "num_filter": 8, "num_group": 2}) == {1: (8, 2, 3, 3), 2: (8,)}
    assert conv([(1, 9, 9, 4)], {"kernel": (3, 3), "num_filter": 8, "layout": "NHWC"})[1] == (8, 3, 3, 4)
    deconv = get_op("Deconvolution").param_shapes
    assert deconv([(1, 6, 5, 5)], {"kernel": (3, 3), "num_filter": 4, "num_group": 2})[1] == (6, 2, 3, 3)
    assert get_op("BatchNorm").param_shapes([(2, 7, 3)], {})[3] == (7,)
    assert get_op("LayerNorm").param_shapes([(2, 7, 3)], {})[1] == (3,)
    assert get_op("multiply").param_shapes is None  # no parameters to infer


def test_json_names_read_back_as_the_same_op():
    """Graphs store the op name MXNet writes; reading that name must give the same op back."""
    from mxjax.operator.naming import json_name, op_for_json_name

    confused = [op.name for op in list_ops() if op_for_json_name(json_name(op)) is not op]  # noqa: E501
    assert not confused, f"ops whose written name reads back as another op: {confused}"
    assert json_name(get_op("FullyConnected")) == "FullyConnected"
    assert json_name(get_op("sum")) == "_np_sum" and json_name(get_op("sum_axis")) == "sum"


def test_eval_shape_keeps_64_bit_types():
    # mxjax's calls run with JAX's 64-bit types on: an int64 input gives the int64 sum MXNet gives
    out = get_op("sum").eval_shape(jax.ShapeDtypeStruct((2, 3), "int64"), axis=1)
    assert out.shape == (2,) and out.dtype == onp.int64
    out = get_op("elemwise_add").eval_shape(*[jax.ShapeDtypeStruct((4,), "float64")] * 2)
    assert out.dtype == onp.float64
