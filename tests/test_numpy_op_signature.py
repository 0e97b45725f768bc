"""mx.numpy_op_signature: NumPy-style signatures on generated mx.np/mx.npx functions.

Oracle: tests/fixtures/misc_modules/signatures.json, the signatures real MXNet 2.0 sets
(tools/make_misc_module_fixtures.py).
"""
import inspect
import json
import pathlib

import pytest

import mxjax as mx
from mxjax import numpy_op_signature as nos

REF = json.loads((pathlib.Path(__file__).resolve().parent / "fixtures" / "misc_modules" / "signatures.json").read_text())


@pytest.mark.parametrize("op_name", sorted(REF))
def test_signature_matches_mxnet(op_name):
    op = nos._get_builtin_op(op_name)
    params = list(inspect.signature(op).parameters.values())
    expected = REF[op_name]
    if nos._is_generic(op) or op_name not in nos._SIGNATURES:
        pytest.fail(f"{op_name}: signature not set")
    names = [p.name for p in params]
    if getattr(op, "__signature__", None) is not None:  # set by this module: exactly MXNet's
        assert [[p.name, None if p.default is p.empty else p.default, p.default is p.empty] for p in params] == expected
    else:  # an explicit front-end signature: accepts MXNet's required parameters by name
        for name, _, required in expected:
            if required:
                assert name in names or name == "newshape" and "shape" in names, (op_name, name, names)


def test_builtin_op_lookup():
    assert nos._get_builtin_op("_np_copy") is mx.np.copy
    assert nos._get_builtin_op("_np__random_shuffle") is mx.np.random.shuffle
    assert nos._get_builtin_op("_npx_index_add") is mx.npx.index_add
    assert nos._get_builtin_op("broadcast_add") is None
    with pytest.raises(ValueError, match="Cannot find operator no_such_op in module mxjax.numpy"):
        nos._get_builtin_op("_np_no_such_op")


def test_signature_binds_calls():
    sig = inspect.signature(mx.np.diagonal)
    bound = sig.bind(mx.np.ones((3, 3)), 1, axis2=0)
    assert bound.arguments["offset"] == 1 and bound.arguments["axis2"] == 0
    assert mx.np.diagonal(mx.np.array([[1.0, 2.0], [3.0, 4.0]]), offset=1).asnumpy().tolist() == [2.0]
